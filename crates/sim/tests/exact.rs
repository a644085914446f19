//! Analytic tests: the seed papers' toy examples and hand-computed cases,
//! exact to the nanosecond.

use coflowkit_model::{
    compute, flow, BitsPerSec, CoflowSpec, DepKind, Dur, Fabric, JobStage, Time, Workload,
};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{SimOptions, SimResult, Simulation};

mod common;
use common::*;

/// One unit of data: what 1 Gbit/s sends in one second.
const UNIT: u64 = 125_000_000;

fn run(sched: &str, n_hosts: u32, coflows: Vec<CoflowSpec>) -> Vec<f64> {
    ccts(&common::run(n_hosts, sched, coflows))
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
        // D-CAS: one subcoflow each, A's 4 units left ahead of B's 6 (with
        // T = 100 s, B is not lifted by the starvation guard).
        "dcas:t=100s",
    ] {
        assert_eq!(run(s, 2, dcas_fig1()), vec![4.0, 10.0], "{s}");
    }
    // A heavy threshold of 0 makes FIFO-LM per-flow fair sharing.
    assert_eq!(run("fifo-lm:threshold=0", 2, dcas_fig1()), vec![9.0, 10.0]);
}

#[test]
fn uncontended_flow_finishes_at_size_over_rate() {
    // 1 MiB at 1 Gbit/s: 8,388,608 ns, for every scheduler but `baraat`,
    // whose rates change once per RTT (100 us): the flow's first request
    // goes at the round after its start (100 us), and its last bytes are
    // spread over their round (Algorithm 2: demand = what is left per RTT),
    // so it ends with round 85: 8.5 ms.
    let cct = run(
        "baraat",
        2,
        vec![CoflowSpec::new(1, Time(5), vec![flow(0, 1, 1 << 20)])],
    );
    assert_eq!(cct, vec![(8_500_000 - 5) as f64 * 1e-9]);
    for (s, _) in coflowkit_sched::NAMES
        .iter()
        .filter(|(s, _)| *s != "baraat")
    {
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
fn fair_ends_leaves_the_remainder_idle() {
    // A = {a: 0->1}, B = {b: 0->2, c: 3->2, d: 4->2}, 1 unit each. Port 2
    // down holds b, c, d at 1/3 each. Max-min hands a the rest of port 0
    // up, 2/3: A done at 1.5. CoflowSim's FAIR gives a its equal share of
    // port 0 up, 1/2 (two flows there), and leaves 1/6 idle: A done at 2;
    // then b alone at port 0 is still held to 1/3 by port 2: B done at 3
    // under both.
    let coflows = || {
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, UNIT)]),
            CoflowSpec::new(
                2,
                Time(0),
                vec![flow(0, 2, UNIT), flow(3, 2, UNIT), flow(4, 2, UNIT)],
            ),
        ]
    };
    assert_eq!(run("fair", 5, coflows()), vec![1.5, 3.0]);
    assert_eq!(run("fair-ends", 5, coflows()), vec![2.0, 3.0]);
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

/// A heavy coflow A with a flow on ports 0->1 and one on 2->3; B (task 2)
/// only on 0->1, C (task 3) only on 2->3; threshold 2 units, which A
/// reaches at t=1 sending on both.
fn partners_per_link() -> Vec<CoflowSpec> {
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 4 * UNIT), flow(2, 3, 4 * UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 1, UNIT)]),
        CoflowSpec::new(3, Time(0), vec![flow(2, 3, UNIT)]),
    ]
}

#[test]
fn fifo_lm_mux_next_pairs_a_heavy_coflow_with_the_next_one_everywhere() {
    // From t=1 A's class is {A, B}: A and B share 0->1 (B done at 3), A
    // has 2->3 alone (3 units left); at 3 the class is {A, C}: A's 2->3
    // (1 unit left) and C share, both done at 5; A's 0->1 (2 left) alone: 5.
    let t = format!("fifo-lm:threshold={}", 2 * UNIT);
    assert_eq!(run(&t, 4, partners_per_link()), vec![5.0, 3.0, 5.0]);
}

#[test]
fn fifo_lm_mux_link_pairs_a_heavy_coflow_with_the_next_one_at_each_link() {
    // From t=1, at 0->1 A's partner is B, at 2->3 it is C (B has no flow
    // there): both share half and half, B and C done at 3, A's flows (2
    // units left each) alone from 3: done at 5.
    let t = format!("fifo-lm:threshold={};mux=link", 2 * UNIT);
    assert_eq!(run(&t, 4, partners_per_link()), vec![5.0, 3.0, 3.0]);
}

#[test]
fn fifo_lm_mux_link_two_heavy_coflows_with_different_partners() {
    // A (task 1) on 0->1 and 2->3, D (task 2) on 0->1 and 4->5, B (task 3)
    // on 2->3, C (task 4) on 4->5, E (task 5, 1/3 unit) on 0->1; threshold
    // 1 unit. Until 0.5 A has both its ports (1 each), D's 4->5 has 1.
    // At 0.5 A is heavy: at 0->1 {A, D} then {E}, at 2->3 {A, B}: A and D
    // split 0->1, A and B 2->3, E waits; D's 4->5 (C behind light D) stays
    // at 1, so D reaches 1 unit at 0.5 + 0.5/1.5 = 5/6. Then at 0->1
    // {A, D, E} fills at 1/3 each; at 2->3 A's other flow and B split, at
    // 4->5 D's other flow and C: 1/2 each. E done at 5/6 + 1 = 11/6; B
    // (1/6 sent) at 5/6 + 5/3 = 5/2; C at 5/6 + 2 = 17/6.
    let t = format!("fifo-lm:threshold={};mux=link", UNIT);
    let coflows = vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 3 * UNIT), flow(2, 3, 3 * UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 1, 3 * UNIT), flow(4, 5, 3 * UNIT)]),
        CoflowSpec::new(3, Time(0), vec![flow(2, 3, UNIT)]),
        CoflowSpec::new(4, Time(0), vec![flow(4, 5, UNIT)]),
        CoflowSpec::new(5, Time(0), vec![flow(0, 1, UNIT / 3)]),
    ];
    let cct = run(&t, 6, coflows);
    for (got, want) in cct[2..].iter().zip([5.0 / 2.0, 17.0 / 6.0, 11.0 / 6.0]) {
        // E has UNIT / 3 bytes, rounded down: 17 ns early.
        assert!((got - want).abs() < 1e-7, "{cct:?}");
    }
}

#[test]
fn fifo_lm_mux_link_is_mux_next_when_every_coflow_shares_one_aggregator() {
    // Every flow ends at host 0 (one aggregator's downlink sees every
    // coflow): the classes there are the global ones and rule every flow.
    let coflows: Vec<CoflowSpec> = (0..8u64)
        .map(|i| {
            let flows = (1..4u32)
                .map(|w| flow(1 + ((i as u32 + w) % 5), 0, (i % 3 + 1) * UNIT / w as u64))
                .collect();
            CoflowSpec::new(i + 1, Time(i * 300_000_000), flows)
        })
        .collect();
    for threshold in [UNIT / 2, UNIT, 3 * UNIT] {
        let next = run(
            &format!("fifo-lm:threshold={threshold}"),
            6,
            coflows.clone(),
        );
        let link = run(
            &format!("fifo-lm:threshold={threshold};mux=link"),
            6,
            coflows.clone(),
        );
        for (a, b) in next.iter().zip(&link) {
            assert!(
                (a - b).abs() <= 1e-6 * a,
                "threshold {threshold}: {next:?} vs {link:?}"
            );
        }
    }
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

// ---------------------------------------------------------------------------
// Release rules, computed by hand (1 unit = 1 s at 1 Gbit/s).
// ---------------------------------------------------------------------------

const S: u64 = 1_000_000_000;

/// The whole result of `sched` on a big switch of 1 Gbit/s ports (with CPUs
/// of `cpu` bit/s if given), with per-flow rows.
fn run_full(
    sched: &str,
    n_hosts: u32,
    cpu: Option<f64>,
    coflows: Vec<CoflowSpec>,
    options: SimOptions,
) -> SimResult {
    let mut fabric = Fabric::big_switch(n_hosts, BitsPerSec::GBPS).unwrap();
    if let Some(c) = cpu {
        fabric = fabric.with_cpus(BitsPerSec(c)).unwrap();
    }
    let w = Workload { n_hosts, coflows }.validate(&fabric).unwrap();
    let hints = WorkloadHints::of(&w);
    let s = build(&SchedulerSpec::parse(sched).unwrap(), &hints).unwrap();
    Simulation::new(
        fabric,
        &w,
        s,
        SimOptions {
            per_flow: true,
            ..options
        },
    )
    .run(&mut |_| {})
    .unwrap()
}

/// (start, finish) of every flow, in seconds.
fn flow_times(r: &SimResult) -> Vec<(f64, f64)> {
    r.flows
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| (f.start.as_secs_f64(), f.finish.as_secs_f64()))
        .collect()
}

#[test]
fn a_flow_after_a_group_starts_when_the_group_is_done() {
    // Group 1: 0->1 (1 unit) and 2->3 (2 units), disjoint ports, done at 2.
    // The flow 0->3 after group 1 starts then, alone: done at 3.
    for s in ["fair", "fifo", "srpt", "varys"] {
        let r = run_full(
            s,
            4,
            None,
            vec![CoflowSpec::new(
                1,
                Time(0),
                vec![
                    flow(0, 1, UNIT).in_group(1),
                    flow(2, 3, 2 * UNIT).in_group(1),
                    flow(0, 3, UNIT).after(1),
                ],
            )],
            SimOptions::default(),
        );
        assert_eq!(
            flow_times(&r),
            vec![(0.0, 1.0), (0.0, 2.0), (2.0, 3.0)],
            "{s}"
        );
        assert_eq!(r.coflows[0].cct(), Dur(3 * S), "{s}");
    }
}

#[test]
fn a_delayed_flow_starts_its_delay_after_its_release() {
    // A: 0->1 (1 unit) at t=0; B: 0->1 (1 unit) at t=0, delayed 0.5 s; C:
    // 2->3 in group 1 (1 unit), then D: 2->3 (1 unit) 0.25 s after C.
    // fair: A alone until 0.5, then A and B share port 0: A has 0.5 left,
    // done at 1.5; B has 0.5 left then, done at 2. C done at 1, D starts at
    // 1.25, done at 2.25.
    let r = run_full(
        "fair",
        4,
        None,
        vec![CoflowSpec::new(
            1,
            Time(0),
            vec![
                flow(0, 1, UNIT),
                flow(0, 1, UNIT).delayed(Dur(S / 2)),
                flow(2, 3, UNIT).in_group(1),
                flow(2, 3, UNIT).after(1).delayed(Dur(S / 4)),
            ],
        )],
        SimOptions::default(),
    );
    assert_eq!(
        flow_times(&r),
        vec![(0.0, 1.5), (0.5, 2.0), (0.0, 1.0), (1.25, 2.25)]
    );
    assert_eq!(r.coflows[0].finish, Time(2_250_000_000));
}

#[test]
fn starts_after_holds_a_coflow_until_its_parent_completes() {
    // A (t=0): 0->1, 2 units. B (t=1): 2->3, 1 unit, Starts-After A: released
    // at 2, done at 3, CCT 1 (from release). C (t=5): Starts-After A, which
    // completed before it arrived: released at its arrival.
    for s in ["fair", "fifo", "scf", "varys", "fifo-lm:threshold=0"] {
        let r = run_full(
            s,
            4,
            None,
            vec![
                CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2 * UNIT)]),
                with_parents(
                    CoflowSpec::new(2, Time(S), vec![flow(2, 3, UNIT)]),
                    &[(1, DepKind::StartsAfter)],
                ),
                with_parents(
                    CoflowSpec::new(3, Time(5 * S), vec![flow(0, 1, UNIT)]),
                    &[(1, DepKind::StartsAfter)],
                ),
            ],
            SimOptions::default(),
        );
        let b = &r.coflows[1];
        assert_eq!(
            (b.arrival, b.release, b.finish),
            (Time(S), Time(2 * S), Time(3 * S)),
            "{s}"
        );
        assert_eq!(b.cct(), Dur(S), "{s}");
        let c = &r.coflows[2];
        assert_eq!((c.release, c.finish), (Time(5 * S), Time(6 * S)), "{s}");
    }
}

#[test]
fn finishes_before_runs_alongside_but_completes_after_the_parent() {
    // A (t=0): 0->1, 3 units. B (t=0): 2->3, 1 unit, Finishes-Before A: its
    // flow is done at 1 but it completes with A at 3. C (t=0): 2->3 after
    // B's flow, 4 units (done at 5), Finishes-Before A: its own last flow
    // is later, so it completes at 5.
    for s in ["fair", "fifo", "srpt", "varys"] {
        let r = run_full(
            s,
            4,
            None,
            vec![
                CoflowSpec::new(1, Time(0), vec![flow(0, 1, 3 * UNIT)]),
                with_parents(
                    CoflowSpec::new(2, Time(0), vec![flow(2, 3, UNIT)]),
                    &[(1, DepKind::FinishesBefore)],
                ),
                with_parents(
                    CoflowSpec::new(3, Time(S), vec![flow(2, 3, 4 * UNIT)]),
                    &[(1, DepKind::FinishesBefore)],
                ),
            ],
            SimOptions::default(),
        );
        let f = flow_times(&r);
        assert_eq!(f[1], (0.0, 1.0), "{s}");
        let fin: Vec<Time> = r.coflows.iter().map(|c| c.finish).collect();
        assert_eq!(fin, vec![Time(3 * S), Time(3 * S), Time(5 * S)], "{s}");
        assert_eq!(r.coflows[1].cct(), Dur(3 * S), "{s}");
        assert_eq!(r.coflows[2].cct(), Dur(4 * S), "{s}");
    }
}

#[test]
fn a_pipelined_child_behind_a_barrier_waits_for_its_parent() {
    // A (t=0): 0->1, 2 units. B (t=0, job 1 stage 1): 2->3, 3 units,
    // Finishes-Before A: pipelined, it runs alongside and is done at 3 (A
    // at 2), the job at 3. With barriers (Aalo 7.4, as Varys must run it)
    // B is Starts-After A: released at 2, done at 5, the job at 5.
    let dag = || {
        let mut a = CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2 * UNIT)]);
        a.job = Some(JobStage { job: 1, stage: 0 });
        let mut b = with_parents(
            CoflowSpec::new(2, Time(0), vec![flow(2, 3, 3 * UNIT)]),
            &[(1, DepKind::FinishesBefore)],
        );
        b.job = Some(JobStage { job: 1, stage: 1 });
        Workload {
            n_hosts: 4,
            coflows: vec![a, b],
        }
    };
    let mut held = dag();
    coflowkit_workload::transform::pipelines_as_barriers(&mut held);
    assert_eq!(held.coflows[1].parents[0].kind, DepKind::StartsAfter);
    for s in ["fair", "varys", "aalo"] {
        let times = |w: Workload| {
            let r = run_full(s, 4, None, w.coflows, SimOptions::default());
            let b = &r.coflows[1];
            (b.release, b.finish, r.coflows[0].finish)
        };
        assert_eq!(times(dag()), (Time(0), Time(3 * S), Time(2 * S)), "{s}");
        assert_eq!(
            times(held.clone()),
            (Time(2 * S), Time(5 * S), Time(2 * S)),
            "{s}"
        );
    }
}

#[test]
fn a_multi_wave_stage_behind_a_barrier_starts_when_its_last_wave_exists() {
    // Wave 0: 0->2, 1 unit; wave 1 (after wave 0): 1->2, 1 unit. As one
    // coflow the waves run back to back: the stage is done at 2. Behind a
    // barrier (Aalo 7.3, approach (ii)) wave 1 exists at 1 (wave 0's
    // bottleneck alone), nothing is sent before, and then both flows share
    // host 2: done at 1 + 2 = 3.
    let stage = CoflowSpec::new(
        1,
        Time(0),
        vec![flow(0, 2, UNIT), flow(1, 2, UNIT).in_group(1).after(0)],
    );
    let mut held = stage.clone();
    let barrier = coflowkit_workload::waves::hold_until_every_wave(&mut held, BitsPerSec::GBPS);
    assert_eq!(barrier, Dur(S));
    for s in ["fair", "varys", "aalo"] {
        let r = run_full(s, 3, None, vec![stage.clone()], SimOptions::default());
        assert_eq!(flow_times(&r), vec![(0.0, 1.0), (1.0, 2.0)], "{s}");
        assert_eq!(r.coflows[0].cct(), Dur(2 * S), "{s}");
        let r = run_full(s, 3, None, vec![held.clone()], SimOptions::default());
        assert_eq!(flow_times(&r), vec![(1.0, 3.0), (1.0, 3.0)], "{s}");
        assert_eq!(r.coflows[0].cct(), Dur(3 * S), "{s}");
    }
}

#[test]
fn zero_byte_flows_finish_at_their_start_and_cascade_at_once() {
    // A (t=1): one zero-byte flow, done at its release: CCT 0. B (t=1):
    // Starts-After A: released at 1 too. Its zero-byte flow in group 1 lets
    // the flow after group 1 start at once; a zero-byte flow delayed 2 s
    // finishes at 3. B: 0->1 (1 unit) from 1 to 2, complete at 3.
    let r = run_full(
        "fair",
        2,
        None,
        vec![
            CoflowSpec::new(1, Time(S), vec![flow(0, 1, 0)]),
            with_parents(
                CoflowSpec::new(
                    2,
                    Time(S),
                    vec![
                        flow(0, 1, 0).in_group(1),
                        flow(0, 1, UNIT).after(1),
                        flow(0, 1, 0).delayed(Dur(2 * S)),
                    ],
                ),
                &[(1, DepKind::StartsAfter)],
            ),
        ],
        SimOptions::default(),
    );
    let a = &r.coflows[0];
    assert_eq!(
        (a.release, a.finish, a.cct()),
        (Time(S), Time(S), Dur::ZERO)
    );
    let b = &r.coflows[1];
    assert_eq!((b.release, b.finish), (Time(S), Time(3 * S)));
    assert_eq!(
        flow_times(&r),
        vec![(1.0, 1.0), (1.0, 1.0), (1.0, 2.0), (3.0, 3.0)]
    );
    let slow: Vec<f64> = r
        .flows
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| f.slowdown)
        .collect();
    assert_eq!(slow, vec![1.0, 1.0, 1.0, 1.0]);
}

// ---------------------------------------------------------------------------
// TAFE (seed 003), section III: two tasks, each of two flows "2 units of
// CPU, then 2 units of network", one CPU and one link, each serving 2 units
// per t. Here: host 0's CPU and its uplink to host 1 at 16 Mbit/s (2 MB/s),
// 1 unit = 1 MB, t = 1 s.
// ---------------------------------------------------------------------------

#[test]
fn tafe_fig2_fair_sharing_finishes_both_tasks_at_8t() {
    // Four CPU stages share the CPU (8 units at 2/t: done at 4t), then four
    // network stages share the link (4t more).
    assert_eq!(tafe_fig2("fair"), vec![8.0, 8.0]);
}

#[test]
fn tafe_fig2_task_fifo_finishes_at_4t_and_6t() {
    // FIFO-LM's answer in the paper (heavy threshold never reached: plain
    // FIFO). Task 1's CPU stages take the CPU until 2t; then its network
    // stages (until 4t) and task 2's CPU stages (until 4t); then task 2's
    // network stages, until 6t.
    assert_eq!(tafe_fig2("fifo"), vec![4.0, 6.0]);
    assert_eq!(tafe_fig2("fifo-lm:threshold=inf"), vec![4.0, 6.0]);
}

#[test]
fn tafe_fig2_one_by_one_finishes_at_3t_and_5t() {
    // Serving stages one at a time (TAFE's lower schedule): per-flow SRPT
    // with ties by flow index does exactly that here.
    assert_eq!(tafe_fig2("srpt"), vec![3.0, 5.0]);
}

// ---------------------------------------------------------------------------
// Metrics.
// ---------------------------------------------------------------------------

#[test]
fn a_lone_flow_has_slowdown_1_and_fct_size_over_rate() {
    // Not `baraat`, which works in rounds of one RTT (see above).
    for (s, _) in coflowkit_sched::NAMES
        .iter()
        .filter(|(s, _)| *s != "baraat")
    {
        let r = run_full(
            s,
            2,
            None,
            vec![CoflowSpec::new(1, Time(7), vec![flow(0, 1, 1 << 20)])],
            SimOptions::default(),
        );
        let f = &r.flows.as_ref().unwrap()[0];
        assert_eq!(f.fct(), Dur(8_388_608), "{s}");
        assert_eq!(f.slowdown, 1.0, "{s}");
        assert_eq!(r.flow_metrics.slowdown.mean, 1.0, "{s}");
        assert_eq!(r.flow_metrics.fct.p99, 8_388_608e-9, "{s}");
    }
}

#[test]
fn deadlines_met_and_missed_are_counted() {
    // fifo on one link: coflow 1 (1 unit) done at 1, coflow 2 (1 unit) at 2.
    // Coflow deadlines 1.5 s after arrival: 1 met, 2 missed. Flow deadlines
    // 1.5 s after start: same outcome. Coflow 3 (no deadline, 2->3) counts
    // in neither.
    let dl = Dur(3 * S / 2);
    let mut c1 = CoflowSpec::new(1, Time(0), vec![flow(0, 1, UNIT).with_deadline(dl)]);
    let mut c2 = CoflowSpec::new(2, Time(0), vec![flow(0, 1, UNIT).with_deadline(dl)]);
    c1.deadline = Some(dl);
    c2.deadline = Some(dl);
    let c3 = CoflowSpec::new(3, Time(0), vec![flow(2, 3, UNIT)]);
    let r = run_full("fifo", 4, None, vec![c1, c2, c3], SimOptions::default());
    let met: Vec<Option<bool>> = r.coflows.iter().map(|c| c.deadline_met()).collect();
    assert_eq!(met, vec![Some(true), Some(false), None]);
    let flows = r.flows.as_ref().unwrap();
    assert_eq!(flows[0].karuna_type, 1);
    assert_eq!(flows[2].karuna_type, 2);
    let m = r.metrics();
    assert_eq!(
        (m.coflow_deadlines.with_deadline, m.coflow_deadlines.missed),
        (2, 1)
    );
    assert_eq!(m.coflow_deadlines.miss_rate(), 0.5);
    assert_eq!(
        (m.flows.deadlines.with_deadline, m.flows.deadlines.missed),
        (2, 1)
    );
    // The flow that waited 1 s behind the other took 2 s for 1 s of work.
    assert_eq!(flows[1].slowdown, 2.0);
}

#[test]
fn link_utilization_of_a_lone_flow() {
    // 1.5 units from host 0 to host 1, 1 s bins: its uplink and downlink are
    // full in bin 0 and half used in bin 1; every other link is idle. The
    // same under every way a scheduler gives rates (solo: srpt, fifo; shared
    // group: fair; proportional group: varys).
    for s in ["srpt", "fifo", "fair", "varys"] {
        let r = run_full(
            s,
            2,
            None,
            vec![CoflowSpec::new(1, Time(0), vec![flow(0, 1, 3 * UNIT / 2)])],
            SimOptions {
                link_util_bin: Some(Dur(S)),
                ..SimOptions::default()
            },
        );
        let u = r.link_util.as_ref().unwrap();
        assert_eq!(u.n_bins, 2, "{s}");
        assert_eq!(u.link_names[0], "Uplink(HostId(0))");
        let got: Vec<f64> = (0..4)
            .flat_map(|l| (0..2).map(move |b| (l, b)))
            .map(|(l, b)| u.get(l, b))
            .collect();
        assert_eq!(got, vec![1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0, 0.5], "{s}");
    }
}

#[test]
fn link_utilization_of_shared_and_staged_links() {
    // Two flows share uplink 0 under fair (1 unit each, done at 2), then a
    // flow after them runs from 2 to 3 on the CPU of host 0 (CPU of 1 Gbit/s).
    let r = run_full(
        "fair",
        3,
        Some(1e9),
        vec![CoflowSpec::new(
            1,
            Time(0),
            vec![
                flow(0, 1, UNIT).in_group(1),
                flow(0, 2, UNIT).in_group(1),
                compute(0, UNIT).after(1),
            ],
        )],
        SimOptions {
            link_util_bin: Some(Dur(S)),
            ..SimOptions::default()
        },
    );
    let u = r.link_util.as_ref().unwrap();
    assert_eq!(u.n_bins, 3);
    let up0: Vec<f64> = (0..3).map(|b| u.get(0, b)).collect();
    let down1: Vec<f64> = (0..3).map(|b| u.get(3, b)).collect();
    let cpu0: Vec<f64> = (0..3).map(|b| u.get(6, b)).collect();
    assert_eq!(up0, vec![1.0, 1.0, 0.0]);
    assert_eq!(down1, vec![0.5, 0.5, 0.0]);
    assert_eq!(cpu0, vec![0.0, 0.0, 1.0]);
    assert_eq!(u.link_names[6], "Cpu(HostId(0))");
}

#[test]
fn job_completion_of_a_two_stage_dag() {
    // Job 7: stage 0 (coflow 1, t=0, 1 unit) then stage 1 (coflow 2, t=0,
    // Starts-After coflow 1, 2 units on other ports): done at 3, so the
    // job's completion time is 3 s. Coflow 3 (t=1 s, no job, 1 unit) is its
    // own job: 1 s.
    let stage = |id: u64, s: u32, fl| {
        let mut c = CoflowSpec::new(id, Time(0), vec![fl]);
        c.job = Some(JobStage { job: 7, stage: s });
        c
    };
    let c2 = with_parents(
        stage(2, 1, flow(2, 3, 2 * UNIT)),
        &[(1, DepKind::StartsAfter)],
    );
    let r = run_full(
        "fair",
        4,
        None,
        vec![
            stage(1, 0, flow(0, 1, UNIT)),
            c2,
            CoflowSpec::new(3, Time(S), vec![flow(1, 0, UNIT)]),
        ],
        SimOptions::default(),
    );
    let jobs = r.jobs();
    assert_eq!(jobs.len(), 2);
    assert_eq!(
        (jobs[0].job, jobs[0].n_coflows, jobs[0].jct()),
        (Some(7), 2, Dur(3 * S))
    );
    assert_eq!(
        (jobs[1].job, jobs[1].first_coflow, jobs[1].jct()),
        (None, 3, Dur(S))
    );
    let m = r.metrics();
    assert_eq!((m.jct.count, m.jct.mean, m.jct.max), (2, 2.0, 3.0));
}
