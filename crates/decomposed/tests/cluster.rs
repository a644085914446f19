//! Clustering alike links: with every link of every cluster simulated it
//! is the unclustered run exactly; with fewer, fewer links run and every
//! flow still gets an estimate; the options parse or are refused by name;
//! link simulations run apart (as on other processes) give the same run.

mod common;

use coflowkit_decomposed::job::run_encoded;
use coflowkit_decomposed::{finish, prepare, DecomposedResult, Options, Run};
use coflowkit_model::{Fabric, ValidWorkload};
use coflowkit_packet::PacketConfig;
use common::run;

fn setup() -> (Fabric, ValidWorkload) {
    common::leaf_spine(4, 4, 300, 0.4)
}

/// Every flow's estimated finish time, in flow order.
fn finish_times(r: &DecomposedResult) -> Vec<u64> {
    let rows = r.sim.flows.as_ref().expect("per-flow rows");
    rows.iter().map(|f| f.finish.0).collect()
}

#[test]
fn clusters_simulating_every_link_give_the_unclustered_run() {
    let (fabric, w) = setup();
    let all = run(&fabric, &w, "", 2);
    let every = run(&fabric, &w, &format!("cluster={}", usize::MAX), 2);
    assert_eq!(all.link_sims, all.links_used);
    assert_eq!(every.link_sims, every.links_used);
    assert!(
        every.clusters < every.links_used,
        "alike links cluster: {} clusters",
        every.clusters
    );
    assert_eq!(finish_times(&all), finish_times(&every));
    assert_eq!(all.packets, every.packets);
}

#[test]
fn clusters_simulate_fewer_links_and_estimate_every_flow() {
    let (fabric, w) = setup();
    let some = run(&fabric, &w, "cluster=40", 2);
    assert!(
        some.link_sims < some.links_used,
        "{} of {}",
        some.link_sims,
        some.links_used
    );
    let rows = some.sim.flows.as_ref().unwrap();
    assert_eq!(rows.len(), 300);
    assert!(rows
        .iter()
        .all(|f| f.finish >= f.start && f.slowdown.is_finite()));
    // Deterministic: the draws depend on the flow and link only.
    let again = run(&fabric, &w, "cluster=40", 2);
    assert_eq!(finish_times(&some), finish_times(&again));
}

#[test]
fn options_parse_or_are_refused_naming_the_item() {
    let mut o = Options::default();
    o.set("combine=max, cluster=500 ,sources=fat").unwrap();
    assert_eq!(o.cluster, Some(500));
    o.set("cluster=off").unwrap();
    assert_eq!(o.cluster, None);
    assert!(o.direct);
    o.set("direct=off").unwrap();
    assert!(!o.direct);
    for (bad, says) in [
        ("combine=mean", "\"combine=mean\": not one of its values"),
        (
            "cluster=0",
            "\"cluster=0\": cluster takes off or a whole number",
        ),
        ("speed=3", "\"speed=3\": no such option"),
        ("direct=yes", "\"direct=yes\": not one of its values"),
        ("cluster", "\"cluster\": expected key=value"),
    ] {
        let e = o.set(bad).unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn link_simulations_run_apart_and_finished_give_the_same_run() {
    let (fabric, w) = setup();
    for opts in ["", "cluster=40"] {
        let whole = run(&fabric, &w, opts, 2);
        let mut o = Options::default();
        o.set(opts).unwrap();
        let cfg = PacketConfig::default();
        // As on two workers: each is sent every other job (a link's
        // simulation or a path alone) as bytes and runs what it decodes;
        // the results are put back in order.
        let plan = prepare(&fabric, &w, &[], &cfg, o).unwrap();
        let sent: Vec<Vec<u8>> = (0..plan.n_jobs()).map(|i| plan.job(i).encode()).collect();
        assert!(plan.n_jobs() > plan.sims.len(), "paths alone are jobs too");
        let shard = |k: usize| {
            (0..sent.len())
                .filter(|i| i % 2 == k)
                .map(|i| (i, run_encoded(&sent[i], &Run::Transport, &cfg)))
                .collect::<Vec<_>>()
        };
        let mut ran: Vec<_> = shard(0).into_iter().chain(shard(1)).collect();
        ran.sort_by_key(|(i, _)| *i);
        let apart = finish(
            plan,
            &Run::Transport,
            ran.into_iter().map(|(_, r)| r).collect(),
        )
        .unwrap();
        assert_eq!(
            finish_times(&whole),
            finish_times(&apart),
            "options {opts:?}"
        );
        assert_eq!(whole.packets, apart.packets);
        // A result missing is refused, naming the counts.
        let plan = prepare(&fabric, &w, &[], &cfg, o).unwrap();
        let err = finish(plan, &Run::Transport, vec![])
            .unwrap_err()
            .to_string();
        assert!(err.contains("0 results for"), "{err}");
    }
    // Bytes that are not a job are refused, saying so.
    let cfg = PacketConfig::default();
    for bad in [&b""[..], &[0xff; 7][..]] {
        let e = run_encoded(bad, &Run::Transport, &cfg)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("not one this coflowkit encodes"), "{e}");
    }
    // Results that cannot be the jobs' are refused, naming what is wrong.
    let plan = prepare(&fabric, &w, &[], &cfg, Options::default()).unwrap();
    let mut ran: Vec<_> = (0..plan.n_jobs())
        .map(|i| plan.job(i).run(&Run::Transport, &cfg))
        .collect();
    let short = ran[0].as_ref().unwrap().0[1..].to_vec();
    ran[0] = Ok((short, 0));
    let e = finish(plan, &Run::Transport, ran).unwrap_err().to_string();
    assert!(e.contains("completion times for its"), "{e}");
}

#[test]
fn ports_that_never_queue_crossed_directly_keep_the_estimates() {
    // `direct=on` (the default) takes ACKs and the destinations' fat links
    // past their ports. ACKs of several destinations can still meet at the
    // link's reverse port for an ACK's serialization, so the estimates are
    // close, not all equal, for under half the per-hop packets.
    let (fabric, w) = setup();
    let on = run(&fabric, &w, "", 2);
    let off = run(&fabric, &w, "direct=off", 2);
    let (a, b) = (finish_times(&on), finish_times(&off));
    let starts: Vec<u64> = on
        .sim
        .flows
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| f.start.0)
        .collect();
    let rel: Vec<f64> = (0..a.len())
        .map(|i| (a[i] as f64 - b[i] as f64).abs() / (b[i] - starts[i]).max(1) as f64)
        .collect();
    // Most are the same; where an ACK's few nanoseconds move a mark, a
    // flow's window goes another way (a few flows by up to a third).
    let close = rel.iter().filter(|&&r| r < 0.02).count();
    assert!(
        close * 10 >= rel.len() * 9,
        "{close} of {} within 2%",
        rel.len()
    );
    let total = |t: &[u64]| {
        t.iter()
            .zip(&starts)
            .map(|(f, s)| (f - s) as f64)
            .sum::<f64>()
    };
    let mean = total(&a) / total(&b);
    assert!((mean - 1.0).abs() < 0.01, "mean FCT x{mean}");
    assert!(
        on.packets * 2 < off.packets,
        "{} against {} per-hop packets",
        on.packets,
        off.packets
    );
}
