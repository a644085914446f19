//! Analytic tests: the seed papers' toy examples and hand-computed cases,
//! exact to the nanosecond.

use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Fabric, Time, Workload};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{SimOptions, Simulation};

/// One unit of data: what 1 Gbit/s sends in one second.
const UNIT: u64 = 125_000_000;

fn run(sched: &str, n_hosts: u32, coflows: Vec<CoflowSpec>) -> Vec<f64> {
    let fabric = Fabric::big_switch(n_hosts, BitsPerSec::GBPS).unwrap();
    let w = Workload { n_hosts, coflows }.validate(&fabric).unwrap();
    let hints = WorkloadHints::of(&w);
    let s = build(&SchedulerSpec::parse(sched).unwrap(), &hints).unwrap();
    let r = Simulation::new(fabric, &w, s, SimOptions::default())
        .run(&mut |_| {})
        .unwrap();
    r.coflows.iter().map(|c| c.cct_s()).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// D-CAS Fig. 1: coflow A = {1, 3} units, B = {2, 4} units, one bottleneck.
fn dcas_fig1() -> Vec<CoflowSpec> {
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, UNIT), flow(0, 1, 3 * UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 1, 2 * UNIT), flow(0, 1, 4 * UNIT)]),
    ]
}

#[test]
fn dcas_fig1_fair_is_9_5() {
    let cct = run("fair", 2, dcas_fig1());
    assert_eq!(cct, vec![9.0, 10.0]);
    assert_eq!(mean(&cct), 9.5);
}

#[test]
fn dcas_fig1_smallest_flow_first_is_8() {
    assert_eq!(run("srpt", 2, dcas_fig1()), vec![6.0, 10.0]);
}

#[test]
fn dcas_fig1_smallest_coflow_first_is_7() {
    for s in [
        "scf",
        "lcf",
        "stf",
        "varys",
        "fifo",
        "fifo-lm:threshold=inf",
    ] {
        assert_eq!(run(s, 2, dcas_fig1()), vec![4.0, 10.0], "{s}");
    }
    // A heavy threshold of 0 makes FIFO-LM per-flow fair sharing.
    assert_eq!(run("fifo-lm:threshold=0", 2, dcas_fig1()), vec![9.0, 10.0]);
}

#[test]
fn uncontended_flow_finishes_at_size_over_rate() {
    // 1 MiB at 1 Gbit/s: 8,388,608 ns, for every scheduler.
    for (s, _) in coflowkit_sched::NAMES {
        let cct = run(
            s,
            2,
            vec![CoflowSpec::new(1, Time(5), vec![flow(0, 1, 1 << 20)])],
        );
        assert_eq!(cct, vec![8_388_608e-9], "{s}");
    }
}

#[test]
fn fair_two_ports_hand_computed() {
    // Flows a: 0->1 (2 units), b: 0->2 (2 units), c: 3->2 (3 units).
    // Port 0 up carries a, b; port 2 down carries b, c: all get 1/2 until
    // t=4 (a and b done), then c alone: 3 - 2 = 1 unit more, done at t=5.
    let cct = run(
        "fair",
        4,
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2 * UNIT), flow(0, 2, 2 * UNIT)]),
            CoflowSpec::new(2, Time(0), vec![flow(3, 2, 3 * UNIT)]),
        ],
    );
    assert_eq!(cct, vec![4.0, 5.0]);
}

#[test]
fn fifo_lm_multiplexes_after_the_threshold() {
    // Coflow 1: 4 units, coflow 2: 1 unit, same link, threshold 2 units.
    // FIFO until coflow 1 has sent 2 units (t=2), then both share: coflow 2
    // done at t=4, coflow 1 has 1 unit left: done at t=5.
    let t = format!("fifo-lm:threshold={}", 2 * UNIT);
    let cct = run(
        &t,
        2,
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, 4 * UNIT)]),
            CoflowSpec::new(2, Time(0), vec![flow(0, 1, UNIT)]),
        ],
    );
    assert_eq!(cct, vec![5.0, 4.0]);
}

#[test]
fn varys_backfills_unused_capacity() {
    // Coflow 1: 0->1 (1 unit). Coflow 2: 0->1 (2 units) and 2->3 (1 unit).
    // SEBF: coflow 1 first (Γ=1), gets port 0 fully. Coflow 2: its Γ' is
    // infinite (port 0 is full), so MADD gives it nothing, but backfill
    // gives 2->3 the full link: it finishes at 1. Then coflow 2's 0->1 runs
    // alone from t=1: done at 3.
    let cct = run(
        "varys",
        4,
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, UNIT)]),
            CoflowSpec::new(2, Time(0), vec![flow(0, 1, 2 * UNIT), flow(2, 3, UNIT)]),
        ],
    );
    assert_eq!(cct, vec![1.0, 3.0]);
}
