//! A job's bytes (`job.rs`): what another process decodes is the job that
//! was encoded, and no byte string, however mangled or cut, makes the
//! decoder panic: it is a job whose fabric and workload check, or an error
//! that says the bytes are not one.

mod common;

use coflowkit_decomposed::job::{decode, Decoded};
use coflowkit_decomposed::{prepare, Options, Run};
use coflowkit_model::{Fabric, ValidWorkload};
use coflowkit_packet::PacketConfig;
use proptest::prelude::*;
use proptest::sample::Index;

/// A small run's fabric and workload.
fn small() -> (Fabric, ValidWorkload) {
    common::leaf_spine(2, 3, 30, 0.5)
}

/// Every job of the small run, encoded.
fn encoded() -> Vec<Vec<u8>> {
    let (fabric, w) = small();
    let cfg = PacketConfig::default();
    let plan = prepare(&fabric, &w, &[], &cfg, Options::default()).unwrap();
    (0..plan.n_jobs()).map(|i| plan.job(i).encode()).collect()
}

#[test]
fn a_decoded_job_runs_as_the_one_encoded() {
    let (fabric, w) = small();
    let cfg = PacketConfig::default();
    let plan = prepare(&fabric, &w, &[], &cfg, Options::default()).unwrap();
    let (mut links, mut paths) = (0, 0);
    for i in 0..plan.n_jobs() {
        let job = plan.job(i);
        let back = decode(&job.encode()).unwrap();
        match &back {
            Decoded::Link(_) => links += 1,
            Decoded::Alone(_) => paths += 1,
        }
        assert_eq!(
            back.run(&Run::Transport, &cfg).unwrap(),
            job.run(&Run::Transport, &cfg).unwrap(),
            "job {i}"
        );
    }
    assert_eq!((links, paths), (plan.sims.len(), plan.alone.len()));
    // Bytes left over after a job are refused too.
    let mut long = plan.job(0).encode();
    long.push(0);
    let e = decode(&long).err().expect("refused").to_string();
    assert!(e.contains("1 B left over"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A job's bytes with some changed, and perhaps cut short, decode to a
    /// job that checks or are refused as not one; never a panic.
    #[test]
    fn mangled_bytes_are_a_job_or_refused(
        which in any::<Index>(),
        edits in proptest::collection::vec((any::<Index>(), any::<u8>()), 1..4),
        cut in proptest::option::of(any::<Index>()),
    ) {
        let sent = encoded();
        let mut b = sent[which.index(sent.len())].clone();
        for (at, v) in edits {
            let i = at.index(b.len());
            b[i] = v;
        }
        if let Some(c) = cut {
            b.truncate(c.index(b.len()));
        }
        if let Err(e) = decode(&b) {
            let e = e.to_string();
            prop_assert!(e.contains("is not one this coflowkit encodes") || e.starts_with("link "), "{}", e);
        }
    }
}
