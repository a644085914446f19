//! `srpt:ties=share` against the default on hand-computed cases: flows
//! whose bytes left tie (within `BYTES_TIE`) share max-min instead of going
//! one after another in flow index order. One link (host 0 to host 1) at
//! 1 Gbit/s; exact to the nanosecond.

use coflowkit_model::{flow, CoflowSpec, Time};

mod common;
use common::*;

/// One unit of data: what 1 Gbit/s sends in one second.
const UNIT: u64 = 125_000_000;

/// Coflows of one flow each from host 0 to host 1, all at time 0.
fn one_link(sizes: &[u64]) -> Vec<CoflowSpec> {
    let one = |i: usize, b: u64| CoflowSpec::new(i as u64 + 1, Time(0), vec![flow(0, 1, b)]);
    sizes.iter().enumerate().map(|(i, &b)| one(i, b)).collect()
}

fn finish_ns(sched: &str, sizes: &[u64]) -> Vec<u64> {
    let r = run(2, sched, one_link(sizes));
    r.coflows.iter().map(|c| c.finish.0).collect()
}

#[test]
fn two_equal_flows_go_one_after_another_by_default_and_share_with_ties_share() {
    // Default: flow 0 first (1 s), then flow 1 (2 s).
    assert_eq!(
        finish_ns("srpt", &[UNIT, UNIT]),
        vec![1_000_000_000, 2_000_000_000]
    );
    assert_eq!(
        finish_ns("srpt:ties=index", &[UNIT, UNIT]),
        vec![1_000_000_000, 2_000_000_000]
    );
    // Shared: each at 0.5 Gbit/s, both done at 2 s.
    assert_eq!(
        finish_ns("srpt:ties=share", &[UNIT, UNIT]),
        vec![2_000_000_000, 2_000_000_000]
    );
}

#[test]
fn a_shorter_flow_still_goes_first_and_the_tied_ones_share_after_it() {
    // Half a unit first (0.5 s), then two tied units: default 1.5 s and
    // 2.5 s, shared both at 2.5 s.
    let sizes = [UNIT, UNIT / 2, UNIT];
    assert_eq!(
        finish_ns("srpt", &sizes),
        vec![1_500_000_000, 500_000_000, 2_500_000_000]
    );
    assert_eq!(
        finish_ns("srpt:ties=share", &sizes),
        vec![2_500_000_000, 500_000_000, 2_500_000_000]
    );
}

#[test]
fn keys_two_bytes_apart_tie_and_three_bytes_apart_do_not() {
    // 2 bytes more: tied, shared until the smaller is done (2 units, 2 s),
    // then the 2 bytes alone (16 ns).
    assert_eq!(
        finish_ns("srpt:ties=share", &[UNIT, UNIT + 2]),
        vec![2_000_000_000, 2_000_000_016]
    );
    // 3 bytes more: not tied, one after the other as by default.
    assert_eq!(
        finish_ns("srpt:ties=share", &[UNIT + 3, UNIT]),
        finish_ns("srpt", &[UNIT + 3, UNIT])
    );
    assert_eq!(
        finish_ns("srpt", &[UNIT + 3, UNIT]),
        vec![2_000_000_024, 1_000_000_000]
    );
}
