//! Baraat (SIGCOMM 2014) end to end, computed by hand: the toy examples of
//! Figs. 4 and 5, FIFO-LM's multiplexing level as heavy tasks appear and
//! finish, task ids from several counters and a background range, a task
//! heavy on one link and light on another (footnote 3), and work
//! conservation on a multi-hop path (4.3.2-4.3.3).
//!
//! `baraat` decides once per RTT (100 us here), so a flow that has to wait
//! for a lower-priority one to give way, or a starved flow ramping its
//! demand back up, loses a round or two: its times are checked to within
//! three RTTs of the idealized answer; everything else is exact.

use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Dur, Fabric, Time, TreeSpec};

mod common;
use common::*;

/// One unit: what 1 Gbit/s sends in 10 ms.
const UNIT: u64 = 1_250_000;
/// One unit of time, s.
const T: f64 = 0.01;
/// One RTT of `baraat`'s default, s.
const RTT: f64 = 100e-6;

fn ms(x: u64) -> Time {
    Time(x * 1_000_000)
}

fn ccts_on(sched: &str, fabric: Fabric, coflows: Vec<CoflowSpec>) -> Vec<f64> {
    let r = run_on(fabric, sched, coflows);
    // In coflow id order.
    let mut v: Vec<(u64, f64)> = r.coflows.iter().map(|c| (c.id, c.cct_s())).collect();
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

fn run(sched: &str, n_hosts: u32, coflows: Vec<CoflowSpec>) -> Vec<f64> {
    ccts_on(
        sched,
        Fabric::big_switch(n_hosts, BitsPerSec::GBPS).unwrap(),
        coflows,
    )
}

fn assert_within(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol,
            "{got:?} vs {want:?} (tolerance {tol})"
        );
    }
}

/// Idealized schedulers are exact to 1 us; `baraat` to three RTTs.
fn check(sched: &str, n_hosts: u32, coflows: Vec<CoflowSpec>, want_units: &[f64]) {
    let want: Vec<f64> = want_units.iter().map(|u| u * T).collect();
    let tol = if sched.starts_with("baraat") {
        3.0 * RTT
    } else {
        1e-6
    };
    assert_within(&run(sched, n_hosts, coflows), &want, tol);
}

/// Fig. 4a: tasks A and B arrive at 0 and share one bottleneck.
fn fig4a() -> Vec<CoflowSpec> {
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 1, UNIT)]),
    ]
}

#[test]
fn fig4a_serialization_halves_a_and_keeps_b() {
    check("fair", 2, fig4a(), &[2.0, 2.0]);
    for s in ["fifo", "fifo-lm:threshold=inf", "baraat:threshold=inf"] {
        check(s, 2, fig4a(), &[1.0, 2.0]);
    }
}

/// Fig. 4b: two tasks of two stages each; stage 1 is bottlenecked at the
/// mid-level aggregator's downlink (host 2), stage 2 at the top-level
/// aggregator's downlink (host 3).
fn fig4b() -> Vec<CoflowSpec> {
    let task = |id, worker| {
        CoflowSpec::new(
            id,
            Time(0),
            vec![flow(worker, 2, UNIT), flow(2, 3, UNIT).in_group(1).after(0)],
        )
    };
    vec![task(1, 0), task(2, 1)]
}

#[test]
fn fig4b_serialization_pipelines_the_stages() {
    // Fair sharing: both stages shared, both tasks done at 4.
    check("fair", 4, fig4b(), &[4.0, 4.0]);
    // Serialized: A's stage 2 runs while B's stage 1 does.
    for s in ["fifo", "fifo-lm:threshold=inf", "baraat:threshold=inf"] {
        check(s, 4, fig4b(), &[2.0, 3.0]);
    }
}

/// Fig. 5: A and B arrive at 0, C at 4; each needs 4 units of one link.
fn fig5() -> Vec<CoflowSpec> {
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 4 * UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 1, 4 * UNIT)]),
        CoflowSpec::new(3, ms(40), vec![flow(0, 1, 4 * UNIT)]),
    ]
}

#[test]
fn fig5_fair_sharing_finishes_a_and_b_at_10() {
    check("fair", 2, fig5(), &[10.0, 10.0, 8.0]);
}

#[test]
fn fig5_fifo_finishes_none_later_than_8() {
    for s in ["fifo", "fifo-lm:threshold=inf", "baraat:threshold=inf"] {
        check(s, 2, fig5(), &[4.0, 8.0, 8.0]);
        assert!(run(s, 2, fig5()).iter().all(|&c| c <= 8.0 * T + 3.0 * RTT));
    }
}

#[test]
fn with_threshold_0_baraat_shares_like_fair() {
    // Every task heavy from the first round: one class, equal shares. A
    // gets the first round alone (B's first request is handled after A's).
    check("baraat:threshold=0", 2, fig5(), &[10.0, 10.0, 8.0]);
    check("fifo-lm:threshold=0", 2, fig5(), &[10.0, 10.0, 8.0]);
}

/// Three tasks on one link: T1 of 10 units, T2 of 3, T3 of 1; heavy at 2
/// units. T1 alone until it turns heavy at 2 (multiplexing 1); T1 and T2 at
/// 1/2 until T2 turns heavy at 6 (2); all three at 1/3 until T2 and T3
/// finish at 9 (3); T1 alone again (1), done at 14.
fn multiplexing() -> Vec<CoflowSpec> {
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 10 * UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 1, 3 * UNIT)]),
        CoflowSpec::new(3, Time(0), vec![flow(0, 1, UNIT)]),
    ]
}

#[test]
fn multiplexing_rises_with_heavy_tasks_and_falls_as_they_finish() {
    let spec = format!("threshold={}", 2 * UNIT);
    check(
        &format!("fifo-lm:{spec}"),
        2,
        multiplexing(),
        &[14.0, 9.0, 9.0],
    );
    check(
        &format!("baraat:{spec}"),
        2,
        multiplexing(),
        &[14.0, 9.0, 9.0],
    );
    // The class changes fall on round boundaries here, so T2 and T3 finish
    // exactly; only T1 loses part of a round ramping up alone at 9.
    let got = run(&format!("baraat:{spec}"), 2, multiplexing());
    assert_within(&got[1..], &[9.0 * T, 9.0 * T], 1e-6);
}

#[test]
fn task_ids_from_two_counters_and_a_background_range() {
    // Coflows 1, 3, 5 enter through counter 1 (ids 2, 4, 6) at 0, 1, 2 ms;
    // coflow 2 through counter 0 at 3 ms gets id 1 and preempts them all.
    let c = |id, at| CoflowSpec::new(id, ms(at), vec![flow(0, 1, UNIT)]);
    let coflows = || vec![c(1, 0), c(3, 1), c(5, 2), c(2, 3)];
    // (CCTs listed by coflow id: 1, 2, 3, 5.)
    // One counter: release order; 1, 3, 5, 2 run one after another.
    check("fifo-lm:threshold=inf", 2, coflows(), &[1.0, 3.7, 1.9, 2.8]);
    // Two counters: coflow 2 (id 1) preempts coflow 1 at 3 ms and runs to
    // 13; coflow 1 resumes until 20, then 3 and 5.
    check(
        "fifo-lm:threshold=inf;counters=2",
        2,
        coflows(),
        &[2.0, 1.0, 2.9, 3.8],
    );
    // Background from coflow id 3: coflows 3 and 5 sit below every online
    // task, so coflow 2, arriving last, runs right after coflow 1.
    let bg = [1.0, 1.7, 2.9, 3.8];
    check("fifo-lm:threshold=inf;background=3", 2, coflows(), &bg);
    check("baraat:threshold=inf;background=3", 2, coflows(), &bg);
}

#[test]
fn a_task_heavy_on_one_link_is_light_on_another() {
    // Task A: a1 from host 0 (4 units) and a2 from host 2 (2 units), which
    // starts 10 ms late; task B (1 unit from host 2) arrives then too.
    // Heavy threshold: 1 unit. At 10 ms A has reserved 1 unit on host 0's
    // uplink (heavy there) but nothing on host 2's: B waits behind a2
    // until A has reserved 1 unit there too, at 20 ms, then shares: B done
    // at 40 ms (CCT 3). fifo-lm judges A by all it sent (1 unit at 10 ms,
    // heavy at once): B shares from 10 ms, done at 30 ms (CCT 2).
    let coflows = || {
        vec![
            CoflowSpec::new(
                1,
                Time(0),
                vec![
                    flow(0, 1, 4 * UNIT),
                    flow(2, 3, 2 * UNIT).delayed(Dur(10_000_000)),
                ],
            ),
            CoflowSpec::new(2, ms(10), vec![flow(2, 3, UNIT)]),
        ]
    };
    let spec = format!("threshold={UNIT}");
    check(&format!("fifo-lm:{spec}"), 4, coflows(), &[4.0, 2.0]);
    check(&format!("baraat:{spec}"), 4, coflows(), &[4.0, 3.0]);
}

#[test]
fn work_conservation_when_a_high_priority_flow_is_bottlenecked_downstream() {
    // Two racks of 4 hosts. X (task 1, host 5 -> 4, 2 units) holds host 4's
    // downlink. H (task 2, host 0 -> 4, 1 unit) is blocked there, below X.
    // L (task 3, host 0 -> 1, 1.5 units) shares host 0's uplink with H, below
    // H. H's demand falls to its downstream NR + delta, so L takes the
    // uplink's rest, 1 Gbit/s - delta (after two rounds: the first request
    // of each, then L's demand back up): 1.5 units would be sent by
    // 2 rounds + 15 ms / 0.99 = 15.35 ms; the last round's demand is what is
    // left per RTT (Algorithm 2, line 2), so L ends with that round, 15.4 ms.
    let fabric = || {
        Fabric::tree(&TreeSpec {
            pods: 1,
            racks_per_pod: 2,
            hosts_per_rack: 4,
            host_rate: BitsPerSec::GBPS,
            tor_oversub: 2.0,
            agg_oversub: 1.0,
        })
        .unwrap()
    };
    let coflows = || {
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(5, 4, 2 * UNIT)]),
            CoflowSpec::new(2, Time(0), vec![flow(0, 4, UNIT)]),
            CoflowSpec::new(3, Time(0), vec![flow(0, 1, 3 * UNIT / 2)]),
        ]
    };
    let got = ccts_on("baraat:threshold=inf", fabric(), coflows());
    assert!((got[0] - 2.0 * T).abs() < 1e-6, "{got:?}");
    let l = 154.0 * RTT;
    assert!((got[2] - l).abs() < 1e-6, "L: {got:?}, want {l}");
    // H runs after X, ramping up in two rounds: about 3 units.
    assert!((got[1] - 3.0 * T).abs() < 3.0 * RTT, "{got:?}");
    // The idealized work-conserving priority (fifo) gives L the whole uplink.
    let fifo = ccts_on("fifo", fabric(), coflows());
    assert_within(&fifo, &[2.0 * T, 3.0 * T, 1.5 * T], 1e-6);
}

#[test]
fn share_fill_gives_a_class_what_its_blocked_flows_leave() {
    // Task 1: X (host 5 -> 4, 2 units) holds host 4's downlink. Task 2: a
    // (host 0 -> 4) is blocked behind X; b (host 0 -> 1, 1 unit) shares
    // host 0's uplink with a, in the same class. a's demand falls to delta.
    // Algorithm 1 as written offers b the equal share C / 2 (then its
    // demand, NR + delta, fits and it probes back up): b runs at about
    // half the link. `share=fill` offers b what a leaves, 1 Gbit/s - delta.
    let fabric = Fabric::big_switch(6, BitsPerSec::GBPS).unwrap();
    let coflows = vec![
        CoflowSpec::new(1, Time(0), vec![flow(5, 4, 2 * UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 4, UNIT), flow(0, 1, UNIT)]),
    ];
    let b_finish = |spec: &str| {
        let r = run_on(fabric.clone(), spec, coflows.clone());
        let flows = r.flows.unwrap();
        let b = flows.iter().find(|f| f.src == 0 && f.dst == 1).unwrap();
        b.finish.0 as f64 * 1e-9
    };
    let equal = b_finish("baraat:threshold=inf");
    let fill = b_finish("baraat:threshold=inf;share=fill");
    // Equal: between 1 / 0.51 and 1 / 0.5 units.
    assert!(equal > T / 0.51 && equal < T / 0.5 + 3.0 * RTT, "{equal}");
    // Fill: 1 / 0.99 units after the first rounds.
    assert!((fill - T / 0.99).abs() < 3.0 * RTT, "{fill}");
}

/// Virtual capacity (footnote 5) gives a lower class what a higher one's
/// demand withholds but does not use. Task 1 is an incast of two 1-unit
/// flows into host 2 (hosts 0 and 1): each gets 1/2 at host 2's downlink,
/// so host 0's flow asks NR + delta = 0.6 Gbit/s at host 0's uplink
/// (delta 100 Mbit/s). Task 2 sends 1/2 unit from host 0 to host 3: at
/// host 0's uplink its class gets C - 0.6 = 0.4, so it takes 1.25 units
/// without virtual capacity, while the uplink idles at 0.9 of C. With it,
/// the uplink's capacity grows (vc = 0.5 per round) until the offered load
/// is C: task 2 gets the 0.5 that task 1 leaves and takes 1 unit.
/// Task 1 takes 2 units either way.
#[test]
fn virtual_capacity_gives_a_lower_class_what_higher_demands_withhold() {
    let tasks = || {
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 2, UNIT), flow(1, 2, UNIT)]),
            CoflowSpec::new(2, Time(0), vec![flow(0, 3, UNIT / 2)]),
        ]
    };
    check(
        "baraat:threshold=inf;delta=100Mbps",
        4,
        tasks(),
        &[2.0, 1.25],
    );
    check(
        "baraat:threshold=inf;delta=100Mbps;vc=0.5",
        4,
        tasks(),
        &[2.0, 1.0],
    );
}

/// A task's size at a link (4.3.1: the bytes reserved by its flows, "as
/// proxy for the task's size") counts what its flows send through it
/// (`task_size=sent`, the default), not the ARs the link grants them. Task 1
/// is an incast of four 1-unit flows into host 4: each gets 1/4 at host 4's
/// downlink, so host 0's flow asks NR + delta = 0.35 Gbit/s at host 0's
/// uplink (delta 100 Mbit/s) and is granted that there, but sends 0.25.
/// Task 2 sends 4 units from host 0 to host 5, below task 1 at host 0's
/// uplink. Heavy at 1.2 units: task 1 sends 1 unit through host 0's
/// uplink, so with `sent` it never turns heavy there and task 2 finishes as
/// with no threshold at all; with `granted` its grants reach 1.2 units
/// about 34 ms in, task 1 turns heavy at the uplink and takes half of it
/// from task 2 (Algorithm 1's equal share of the class they then form)
/// until it ends at 40 ms: task 2 finishes later.
#[test]
fn a_tasks_size_counts_what_it_sent_not_what_it_was_granted() {
    let tasks = || {
        vec![
            CoflowSpec::new(1, Time(0), (0..4).map(|h| flow(h, 4, UNIT)).collect()),
            CoflowSpec::new(2, Time(0), vec![flow(0, 5, 4 * UNIT)]),
        ]
    };
    let spec = "baraat:delta=100Mbps;threshold";
    let heavy = 6 * UNIT / 5;
    let never = run(&format!("{spec}=inf"), 6, tasks());
    let sent = run(&format!("{spec}={heavy}"), 6, tasks());
    let granted = run(&format!("{spec}={heavy};task_size=granted"), 6, tasks());
    assert_eq!(sent, never);
    assert_eq!(
        sent,
        run(&format!("{spec}={heavy};task_size=sent"), 6, tasks())
    );
    assert!(
        (granted[0] - sent[0]).abs() < 3.0 * RTT,
        "{granted:?} {sent:?}"
    );
    assert!(granted[1] > sent[1] + 3.0 * RTT, "{granted:?} {sent:?}");
}
