//! The greedy fill of `srpt`, `pfabric-edf`, `edf-sjf` and `tafe` kept as a
//! matching (`coflowkit_sched`'s `greedy/matching.rs`: a chain from the
//! links freed, with a fall-back to the walk of the whole order) on random
//! big switches of one link rate, with sizes that tie exactly, nearly
//! (1 or 2 bytes apart: one run, by flow index) and not (3 bytes apart),
//! and arrivals spread out. Debug builds check every fill's rates and
//! classes against `greedy_fill` on the order sorted from scratch (`tafe`:
//! each task's flows sorted from scratch and served in turn), and the
//! matching's lists and holders, so a run that finishes is exact. `tafe`
//! runs with its default thresholds, with low ones (tasks demoted while
//! they send, and new tasks, in the first queue, ahead of the holders of
//! demoted ones) and with one queue (FIFO between tasks, near-ties inside).

use coflowkit_model::{flow, CoflowSpec, Time};
use proptest::prelude::*;

mod common;
use common::*;

/// `tafe` with thresholds a task of two or three flows passes.
const TAFE_LOW: &str = "tafe:thresholds=200000/600000";

/// Bytes that 1 Gbit/s sends in 1 ms.
const MS_BYTES: u64 = 125_000;

/// A generated flow: (source, destination offset, size step, tie bytes).
type RawFlow = (u32, u32, u64, u64);

fn coflows(n: u32) -> impl Strategy<Value = Vec<(u64, Vec<RawFlow>)>> {
    let flow = (0..n, 1..n, 1u64..=6, 0u64..=3);
    let coflow = (0u64..=20, prop::collection::vec(flow, 1..=6));
    prop::collection::vec(coflow, 2..=24)
}

fn build(n: u32, raw: &[(u64, Vec<RawFlow>)]) -> Vec<CoflowSpec> {
    raw.iter()
        .enumerate()
        .map(|(i, (at_ms, flows))| {
            let flows = flows
                .iter()
                .map(|&(src, off, step, tie)| flow(src, (src + off) % n, step * MS_BYTES / 2 + tie))
                .collect();
            CoflowSpec::new(i as u64 + 1, Time(at_ms * 1_000_000), flows)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_kept_matching_fills_as_the_walk(n in 3u32..=9, raw in coflows(9)) {
        let raw: Vec<_> = raw
            .into_iter()
            .map(|(at, fl)| (at, fl.into_iter().map(|(s, o, b, t)| (s % n, 1 + o % (n - 1), b, t)).collect()))
            .collect();
        let specs = build(n, &raw);
        for sched in ["srpt", "pfabric-edf", "edf-sjf", "tafe", TAFE_LOW, "tafe:queues=1"] {
            let r = run(n, sched, specs.clone());
            prop_assert_eq!(r.coflows.len(), specs.len());
        }
    }
}

/// The reference suite's case that caught a holder's departure at the
/// fill where a flow starts on its links.
#[test]
fn a_reference_case_with_flows_to_the_same_host() {
    let specs = vec![
        CoflowSpec::new(0, Time(0), vec![flow(0, 0, 250000), flow(0, 1, 375000)]),
        CoflowSpec::new(
            1,
            Time(6000000),
            vec![flow(1, 0, 250000), flow(1, 0, 125000), flow(1, 0, 250000)],
        ),
        CoflowSpec::new(2, Time(4000000), vec![flow(1, 1, 375000)]),
        CoflowSpec::new(3, Time(11000000), vec![flow(0, 0, 250000)]),
    ];
    for sched in ["srpt", "pfabric-edf", "edf-sjf", "tafe", TAFE_LOW] {
        let r = run(2, sched, specs.clone());
        assert_eq!(r.coflows.len(), specs.len());
    }
}
