//! TAFE (`tafe`) and its flow-aware baseline (`d2tcp`) on hand-computed
//! cases, exact to the nanosecond: the paper's motivating example (III,
//! Fig. 2), demotion at the instant a task's bytes reach each threshold of
//! the vector, one queue as per-task FIFO, the flow rule inside a task, and
//! D2TCP's deadline weights. The differential tests against a slow
//! reference are in `reference/`.

use coflowkit_model::{flow, CoflowSpec, Dur, Time};
use coflowkit_sim::SimResult;

mod common;
use common::*;

/// What 1 Gbit/s sends in one second.
const UNIT: u64 = 125_000_000;
/// One second, in ns.
const S: u64 = 1_000_000_000;

/// Completion instants (s) of the coflows, by id.
fn finishes(r: &SimResult) -> Vec<f64> {
    let mut v: Vec<(u64, f64)> = r
        .coflows
        .iter()
        .map(|c| (c.id, c.finish.0 as f64 / S as f64))
        .collect();
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

/// Flow finish instants (s), in the order of the workload.
fn flow_finishes(r: &SimResult) -> Vec<f64> {
    r.flows
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| f.finish.0 as f64 / S as f64)
        .collect()
}

// ---------------------------------------------------------------------------
// TAFE III, Fig. 2: two tasks, each two flows of "2 units of CPU, then 2 units
// of network", one CPU and one link serving 2 units per t. Host 0's CPU and
// its uplink at 16 Mbit/s (2 MB/s), 1 unit = 1 MB, so t = 1 s.
// ---------------------------------------------------------------------------

#[test]
fn fig2_fair_sharing_finishes_both_at_8_fifo_lm_at_4_and_6() {
    assert_eq!(tafe_fig2("fair"), vec![8.0, 8.0]);
    assert_eq!(tafe_fig2("d2tcp"), vec![8.0, 8.0]);
    // FIFO-LM with the default threshold (the 80th percentile of task
    // sizes: a whole task) never multiplexes here.
    assert_eq!(tafe_fig2("fifo-lm"), vec![4.0, 6.0]);
    // TAFE without flow-awareness is FIFO-LM's schedule.
    assert_eq!(tafe_fig2("tafe:queues=1;flows=fair"), vec![4.0, 6.0]);
}

#[test]
fn fig2_tafe_finishes_at_3_and_5() {
    // Task 1's CPU stages one by one (0-1, 1-2), each followed by its
    // transfer (1-2, 2-3); task 2's CPU stages 2-3, 3-4, transfers 3-4,
    // 4-5. No task reaches a threshold of 100 MB, so both stay in Q1.
    assert_eq!(tafe_fig2("tafe:queues=1"), vec![3.0, 5.0]);
    assert_eq!(tafe_fig2("tafe:thresholds=100MB/200MB"), vec![3.0, 5.0]);
}

#[test]
fn fig2_with_the_papers_default_thresholds_task_1_is_demoted_midway() {
    // Thresholds 0.5 and 0.75 of the largest task (8 units with its CPU
    // work): 4 and 6 units. Task 1: CPU stage 1 (0-1), then its CPU stage 2
    // and transfer 1 together at 4 units per t: it reaches 4 units at 1.5
    // and drops to Q2. Task 2 (Q1) takes the CPU (1.5-2.5) while task 1's
    // transfer ends (2); then task 2's CPU stage 2 and transfer 1 (2.5-3):
    // 4 units at 3, Q2 behind task 1. Task 1's CPU stage 2 resumes (3-3.5,
    // 6 units: Q3) while task 2's transfer ends (3.5); task 2's CPU stage 2
    // (3.5-4, 6 units: Q3 behind task 1) while task 1's last transfer runs
    // (3.5-4.5); task 2's last transfer 4.5-5.5. Demotion costs task 1
    // 1.5 t here: the fixed fractions suit many tasks, not two equal ones.
    assert_eq!(tafe_fig2("tafe"), vec![4.5, 5.5]);
}

// ---------------------------------------------------------------------------
// Demotion at each threshold. Task A: one flow of 10 units at 0. Task B: ten
// flows of 0.5 unit in sequence (barrier groups), released at 0 behind A.
// One link, 1 unit per second.
// ---------------------------------------------------------------------------

fn a_and_b() -> Vec<CoflowSpec> {
    let half = UNIT / 2;
    let b = (1..=10u32)
        .map(|k| {
            let f = flow(0, 1, half).in_group(k);
            if k == 1 {
                f
            } else {
                f.after(k - 1)
            }
        })
        .collect();
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 10 * UNIT)]),
        CoflowSpec::new(2, Time(0), b),
    ]
}

#[test]
fn a_task_is_demoted_exactly_at_each_threshold_of_the_vector() {
    // Thresholds 1, 2.5, 4 units (4 queues). A sends to 1 (0-1) and drops
    // to Q2; B, alone in Q1, sends to 1 (1-2) and joins Q2 behind A; A to
    // 2.5 (2-3.5), Q3; B to 2.5 (3.5-5), Q3 behind A; A to 4 (5-6.5), Q4;
    // B to 4 (6.5-8), Q4 behind A; A's last 6 units (8-14), B's last unit
    // (14-15). B's flows, 0.5 unit each, finish every half second it is
    // served, so each interval shows.
    let spec = "tafe:thresholds=125000000/312500000/500000000";
    let r = run(2, spec, a_and_b());
    assert_eq!(finishes(&r), vec![14.0, 15.0]);
    assert_eq!(
        flow_finishes(&r),
        vec![14.0, 1.5, 2.0, 4.0, 4.5, 5.0, 7.0, 7.5, 8.0, 14.5, 15.0]
    );
    // The same vector as fractions of the largest task (10 units).
    let r2 = run(
        2,
        "tafe:queues=4;thresholds=0.1max/0.25max/0.4max",
        a_and_b(),
    );
    assert_eq!(flow_finishes(&r2), flow_finishes(&r));
    // And U1 alone moves B's first service: B waits for A to send U1.
    for (u1, first) in [(0.5, 1.0), (1.5, 2.0), (3.0, 3.5)] {
        let spec = format!("tafe:queues=2;thresholds={}", (u1 * UNIT as f64) as u64);
        let r = run(2, &spec, a_and_b());
        assert_eq!(flow_finishes(&r)[1], first, "{spec}");
    }
}

#[test]
fn one_queue_is_per_task_fifo() {
    // A (10 units) first, B after it, whatever their sizes: no demotion.
    let r = run(2, "tafe:queues=1", a_and_b());
    assert_eq!(finishes(&r), vec![10.0, 15.0]);
    let fifo = run(2, "fifo", a_and_b());
    assert_eq!(flow_finishes(&r), flow_finishes(&fifo));
    // Thresholds beyond every task's size are the same.
    let r = run(2, "tafe:thresholds=20GB/30GB", a_and_b());
    assert_eq!(finishes(&r), vec![10.0, 15.0]);
}

#[test]
fn inside_a_task_the_shortest_remaining_flow_goes_first() {
    // One task of 3, 1 and 2 units on one link: 1 (0-1), 2 (1-3), 3 (3-6);
    // with flows=fair all share: 1 at 3, 2 at 5, 3 at 6.
    let task = vec![CoflowSpec::new(
        1,
        Time(0),
        vec![flow(0, 1, 3 * UNIT), flow(0, 1, UNIT), flow(0, 1, 2 * UNIT)],
    )];
    let r = run(2, "tafe", task.clone());
    assert_eq!(flow_finishes(&r), vec![6.0, 1.0, 3.0]);
    let r = run(2, "tafe:flows=fair", task);
    assert_eq!(flow_finishes(&r), vec![6.0, 3.0, 5.0]);
}

#[test]
fn flows_weighted_shares_a_task_by_one_over_remaining_bytes() {
    // One task of 1 and 3 units on one link: weights 1 and 1/3, rates 3/4
    // and 1/4 until the short flow ends at 4/3 s; the long one, with 8/3
    // left, alone until 4 s.
    let r = run(
        2,
        "tafe:flows=weighted",
        vec![CoflowSpec::new(
            1,
            Time(0),
            vec![flow(0, 1, UNIT), flow(0, 1, 3 * UNIT)],
        )],
    );
    let f = flow_finishes(&r);
    assert!((f[0] - 4.0 / 3.0).abs() < 2e-9, "{f:?}");
    assert!((f[1] - 4.0).abs() < 2e-9, "{f:?}");
}

#[test]
fn tasks_in_one_queue_are_served_first_in_first_out() {
    // Two tasks in Q1 (thresholds far above): the earlier one first, even
    // when the later one's flow is shorter.
    let r = run(
        2,
        "tafe:thresholds=100GB/200GB",
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, 3 * UNIT)]),
            CoflowSpec::new(2, Time(S / 2), vec![flow(0, 1, UNIT)]),
        ],
    );
    assert_eq!(finishes(&r), vec![3.0, 4.0]);
}

// ---------------------------------------------------------------------------
// d2tcp: weights alpha^(1 - d).
// ---------------------------------------------------------------------------

#[test]
fn d2tcp_favours_the_flow_near_its_deadline() {
    // Two flows of 2 units on one link. Flow 1: deadline 2 s: Tc at the
    // equal share (0.5 unit/s) is 4 s, d = 2, weight 0.5^-1 = 2. Flow 2: no
    // deadline, weight 1. Flow 1 gets 2/3: done at 3 s; flow 2 has sent 1
    // and finishes alone at 4 s.
    let r = run(
        2,
        "d2tcp",
        vec![
            CoflowSpec::new(
                1,
                Time(0),
                vec![flow(0, 1, 2 * UNIT).with_deadline(Dur(2 * S))],
            ),
            CoflowSpec::new(2, Time(0), vec![flow(0, 1, 2 * UNIT)]),
        ],
    );
    assert_eq!(flow_finishes(&r), vec![3.0, 4.0]);
    // A far deadline (16 s: d = 0.5, weight 0.5^0.5): flow 1 gets
    // 0.7071/1.7071 of the link. Flow 2 finishes first, at
    // 2 / (1/1.7071) = 3.4142 s; flow 1 has 2 - 3.4142 * 0.4142 = 0.5858
    // units left, alone: 4 s. Rounded to the nanosecond.
    let r = run(
        2,
        "d2tcp",
        vec![
            CoflowSpec::new(
                1,
                Time(0),
                vec![flow(0, 1, 2 * UNIT).with_deadline(Dur(16 * S))],
            ),
            CoflowSpec::new(2, Time(0), vec![flow(0, 1, 2 * UNIT)]),
        ],
    );
    let f = flow_finishes(&r);
    assert!((f[1] - (2.0 + 2f64.sqrt())).abs() < 2e-9, "{f:?}");
    assert!((f[0] - 4.0).abs() < 2e-9, "{f:?}");
}
