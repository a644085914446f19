//! D-CLAS (`aalo`, `aalo-local`) on hand-computed cases, exact to the
//! nanosecond: demotion at the instant the bytes cross a threshold, weighted
//! sharing between queues and the redistribution of a queue's unused share,
//! coordination delay, `local=first`, DAG order with both kinds of
//! dependency, and waves that keep adding to one coflow's size. The differential tests against a
//! slow reference are in `reference/`.

use coflowkit_model::{flow, BitsPerSec, CoflowSpec, DepKind, Fabric, JobStage, Time};
use coflowkit_sim::SimResult;
use coflowkit_workload::synth::{generate, SynthConfig};

mod common;
use common::*;

/// What 1 Gbit/s sends in one second.
const UNIT: u64 = 125_000_000;
/// One second, in ns.
const S: u64 = 1_000_000_000;

/// Completion instant (ns) of each coflow, by id.
fn finish(r: &SimResult, id: u64) -> u64 {
    r.coflows.iter().find(|c| c.id == id).unwrap().finish.0
}

/// CCT (ns, from release) of each coflow, by id.
fn cct(r: &SimResult, id: u64) -> u64 {
    let c = r.coflows.iter().find(|c| c.id == id).unwrap();
    c.finish.0 - c.release.0
}

#[test]
fn demotion_happens_exactly_when_the_bytes_cross_the_threshold() {
    // Q1's upper threshold is 62,500,001 bytes, which A (0->1, 2 units, t=0)
    // has sent at 1 Gbit/s at exactly 500,000,008 ns. B (0->1, 0.4 units,
    // below the threshold) arrives at 0.2 s behind A in Q1 and waits; when A
    // is demoted B is ahead of it. Strict queues: B runs alone from
    // 0.500000008 s and is done at 0.900000008 s. Weighted (K = 2: weights 2
    // and 1): B gets 2/3 of the path, done at 1.100000008 s. A is done at
    // 2.4 s either way (the link never idles).
    let coflows = vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2 * UNIT)]),
        CoflowSpec::new(2, Time(S / 5), vec![flow(0, 1, 2 * UNIT / 5)]),
    ];
    for delta in ["0", "10ms"] {
        let r = run(
            2,
            &format!("aalo:k=2;q1=62500001;queues=strict;delta={delta}"),
            coflows.clone(),
        );
        assert_eq!(finish(&r, 2), 900_000_008, "delta={delta}");
        assert_eq!(finish(&r, 1), 12 * S / 5, "delta={delta}");
        let r = run(
            2,
            &format!("aalo:k=2;q1=62500001;delta={delta}"),
            coflows.clone(),
        );
        assert_eq!(finish(&r, 2), 1_100_000_008, "delta={delta}");
        assert_eq!(finish(&r, 1), 12 * S / 5, "delta={delta}");
    }
    // One byte more and the crossing is 8 ns later.
    let r = run(2, "aalo:k=2;q1=62500002;queues=strict", coflows);
    assert_eq!(finish(&r, 2), 900_000_016);
}

#[test]
fn queue_weights_and_redistribution_of_an_unused_share() {
    // K = 3 (weights 3, 2, 1), thresholds 0.1 and 0.2 units; hosts' links
    // at 1 Gbit/s except host 3's downlink, 0.2 Gbit/s. All flows leave
    // host 0.
    // t=0: A (0->1, 0.61 units) alone at 1; it reaches Q3 at 0.2 s.
    // t=0.3: A2 (0->2, 0.19 units) in Q1: uplink 0 split 3:1, A2 3/4, A 1/4.
    //   A2 reaches 0.1 units at 13/30 s: Q2; now 2:1, A2 2/3, A 1/3.
    // t=0.5: B (0->3, 0.05 units) in Q1: uplink 0 granted 1/2, 1/3, 1/6 to
    //   Q1, Q2, Q3. B can use only 0.2 (its downlink): A2 gets 1/3, A 1/6,
    //   and the 0.3 that Q1 left goes to A2 and A by weight, 2:1: A2 8/15,
    //   A 4/15.
    // A2 is done at 281/480 s (0.144.. units sent at 0.5 s, 0.19 in all).
    // Then Q1 3/4, Q3 1/4: B keeps 0.2, A gets 1/4 + the 0.55 left: 4/5.
    // B is done at 0.75 s, A (0.51 units sent then) at 0.85 s.
    let fabric = Fabric::with_capacities(
        &[BitsPerSec::GBPS; 4],
        &[
            BitsPerSec::GBPS,
            BitsPerSec::GBPS,
            BitsPerSec::GBPS,
            BitsPerSec(2e8),
        ],
    )
    .unwrap();
    let coflows = vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 61 * UNIT / 100)]),
        CoflowSpec::new(2, Time(3 * S / 10), vec![flow(0, 2, 19 * UNIT / 100)]),
        CoflowSpec::new(3, Time(S / 2), vec![flow(0, 3, UNIT / 20)]),
    ];
    let r = run_on(
        fabric,
        &format!("aalo:k=3;e=2;q1={};delta=0", UNIT / 10),
        coflows,
    );
    // 1,756,250,000 / 3 ns, rounded up.
    assert_eq!(finish(&r, 2), 585_416_667);
    assert_eq!(finish(&r, 3), 750_000_000);
    // A's rate changed four times, each completion instant rounded up.
    assert!((850_000_000..=850_000_002).contains(&finish(&r, 1)));
}

#[test]
fn coordination_delay_and_local_views_demote_later() {
    // A (t=0): 0->2 and 1->3, 1 unit each, at 1 Gbit/s each: its size grows
    // at 2 Gbit/s. B (t=0, behind A in Q1): 0->4, 0.2 units, waits for A's
    // flow out of host 0 to leave Q1 (strict queues, Q1 up to 0.25 units).
    // * delta=0: A reaches 0.25 units at 0.125 s; B done at 0.325 s.
    // * delta=100ms: at the refresh at 0.1 s host 0 learns A's size, 0.2
    //   units, then counts its own 1 Gbit/s: 0.25 units at 0.15 s; B done at
    //   0.35 s.
    // * aalo-local: host 0 counts only its own bytes: 0.25 units at 0.25 s;
    //   B done at 0.45 s.
    // Host 0 sends 1.2 units in all: A is done at 1.2 s.
    let coflows = vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 2, UNIT), flow(1, 3, UNIT)]),
        CoflowSpec::new(2, Time(0), vec![flow(0, 4, UNIT / 5)]),
    ];
    let params = format!("k=2;q1={};queues=strict", UNIT / 4);
    for (spec, b_done) in [
        (format!("aalo:{params};delta=0"), 325_000_000),
        (format!("aalo:{params};delta=100ms"), 350_000_000),
        (format!("aalo-local:{params}"), 450_000_000),
    ] {
        let r = run(5, &spec, coflows.clone());
        assert_eq!(finish(&r, 2), b_done, "{spec}");
        assert_eq!(finish(&r, 1), 6 * S / 5, "{spec}");
    }
}

#[test]
fn with_delta_0_a_refresh_interval_never_delays_a_demotion() {
    // As above, for thresholds off any refresh grid: delta=0 demotes A when
    // its true size (both senders) reaches the threshold.
    for q1 in [UNIT / 4, UNIT / 3 + 1, 7 * UNIT / 10 - 3] {
        let coflows = vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 2, UNIT), flow(1, 3, UNIT)]),
            CoflowSpec::new(2, Time(0), vec![flow(0, 4, UNIT / 5)]),
        ];
        let r = run(
            5,
            &format!("aalo:k=2;q1={q1};queues=strict;delta=0"),
            coflows,
        );
        // Crossing at q1 bytes / 0.25 bytes per ns, rounded up to the ns.
        assert_eq!(finish(&r, 2), q1 * 4 + S / 5, "q1={q1}");
    }
}

#[test]
fn local_first_serves_an_uncounted_coflow_ahead_of_the_queues_until_a_refresh() {
    // K = 2 (weights 2 and 1), Q1 up to 0.1 units, refreshes every 100 ms.
    // A (0->1, 2 units, t=0) is in Q2 from 0.1 s. B (0->1, 0.06 units) is
    // released at 0.25 s, between the refreshes at 0.2 and 0.3 s.
    // * local=q1 (the default): B in Q1 gets 2/3 of the link; done 0.09 s
    //   later, at 0.34 s.
    // * local=first: B alone until the refresh at 0.3 s counts it (0.05
    //   units sent), then 2/3 for the last 0.01: done at 0.315 s.
    // * delta=0: every coflow is counted at once, so local=first is local=q1.
    // The link never idles: A is done at 2.06 s.
    let coflows = vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2 * UNIT)]),
        CoflowSpec::new(2, Time(S / 4), vec![flow(0, 1, 6 * UNIT / 100)]),
    ];
    let params = format!("k=2;q1={}", UNIT / 10);
    for (spec, b_done) in [
        (format!("aalo:{params};delta=100ms"), 340_000_000),
        (format!("aalo:{params};delta=100ms;local=q1"), 340_000_000),
        (
            format!("aalo:{params};delta=100ms;local=first"),
            315_000_000,
        ),
        (format!("aalo:{params};delta=0;local=first"), 340_000_000),
    ] {
        let r = run(2, &spec, coflows.clone());
        assert!(
            (b_done..=b_done + 1).contains(&finish(&r, 2)),
            "{spec}: {}",
            finish(&r, 2)
        );
        assert!(
            (2_060_000_000..=2_060_000_002).contains(&finish(&r, 1)),
            "{spec}"
        );
    }
}

/// `c` as stage `stage` of job `job`.
fn in_job(mut c: CoflowSpec, job: u64, stage: u32) -> CoflowSpec {
    c.job = Some(JobStage { job, stage });
    c
}

#[test]
fn finishes_before_child_goes_after_its_parent() {
    // C (id 1) Finishes-Before-depends on P (id 2); both 0->1, 1 unit, t=0.
    // fifo serves C first (lower id), but C cannot complete before P: both
    // complete at 2 s. Aalo serves the parent first (internal id 0 < 1):
    // P at 1 s, C at 2 s. The same with the ids from a job or from the
    // parents alone.
    let c = with_parents(
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, UNIT)]),
        &[(2, DepKind::FinishesBefore)],
    );
    let p = CoflowSpec::new(2, Time(0), vec![flow(0, 1, UNIT)]);
    let by_parents = vec![c.clone(), p.clone()];
    let by_job = vec![in_job(c, 7, 1), in_job(p, 7, 0)];
    let r = run(2, "fifo", by_parents.clone());
    assert_eq!((finish(&r, 1), finish(&r, 2)), (2 * S, 2 * S));
    for coflows in [by_parents, by_job] {
        // (Thresholds above the coflows' sizes: no demotion interferes.)
        for spec in [
            "aalo:q1=1GB",
            "aalo:k=1",
            "aalo-local:q1=1GB",
            "aalo:q1=1GB;queues=strict",
        ] {
            let r = run(2, spec, coflows.clone());
            assert_eq!((finish(&r, 1), finish(&r, 2)), (2 * S, S), "{spec}");
        }
    }
}

#[test]
fn a_dags_later_stage_keeps_its_dags_place() {
    // Job 1: P1 (id 10, t=0) then C1 (id 11, t=0, Starts-After P1), each
    // 0->1, 1 unit. Job 2: X (id 5, t=0.5 s), 0->1, 1 unit. At 1 s P1 is done
    // and C1 released. fifo goes by release: X (0.5 s) before C1 (1 s): X
    // done at 2 s, C1 at 3 s. Aalo orders by DAG: job 1 registered first, so
    // C1 goes before X: C1 done at 2 s, X at 3 s.
    let p1 = CoflowSpec::new(10, Time(0), vec![flow(0, 1, UNIT)]);
    let c1 = with_parents(
        CoflowSpec::new(11, Time(0), vec![flow(0, 1, UNIT)]),
        &[(10, DepKind::StartsAfter)],
    );
    let x = CoflowSpec::new(5, Time(S / 2), vec![flow(0, 1, UNIT)]);
    let by_parents = vec![p1.clone(), c1.clone(), x.clone()];
    let by_job = vec![in_job(p1, 1, 0), in_job(c1, 1, 1), in_job(x, 2, 0)];
    let r = run(2, "fifo", by_parents.clone());
    assert_eq!((finish(&r, 5), finish(&r, 11)), (2 * S, 3 * S));
    for coflows in [by_parents, by_job] {
        for spec in ["aalo:q1=1GB", "aalo:k=1", "aalo:q1=1GB;queues=strict"] {
            let r = run(2, spec, coflows.clone());
            assert_eq!(finish(&r, 10), S, "{spec}");
            assert_eq!((finish(&r, 11), finish(&r, 5)), (2 * S, 3 * S), "{spec}");
            assert_eq!(cct(&r, 11), S, "{spec}: released when P1 completes");
        }
    }
}

#[test]
fn later_waves_add_to_the_coflows_size() {
    // A (t=0): wave 0 is 0->1 (1 unit); wave 1, 2->1 (1 unit), starts when
    // wave 0 is done, at 1 s. Q1 holds up to 0.5 units (strict queues), so A
    // is in Q2 from 0.5 s and its second wave starts there: B (t=1 s, 2->3,
    // 0.4 units, in Q1) goes first, done at 1.4 s; A at 2.4 s. Without
    // coordination, host 2 has sent nothing of A when wave 1 starts, so it
    // holds A in Q1, ahead of B, until it has sent 0.5 units itself (1.5 s):
    // B is done at 1.9 s.
    let coflows = vec![
        CoflowSpec::new(
            1,
            Time(0),
            vec![flow(0, 1, UNIT), flow(2, 1, UNIT).in_group(1).after(0)],
        ),
        CoflowSpec::new(2, Time(S), vec![flow(2, 3, 2 * UNIT / 5)]),
    ];
    let params = format!("k=2;q1={};queues=strict", UNIT / 2);
    for spec in [format!("aalo:{params}"), format!("aalo:{params};delta=0")] {
        let r = run(4, &spec, coflows.clone());
        assert_eq!(cct(&r, 2), 2 * S / 5, "{spec}");
        assert_eq!(finish(&r, 1), 12 * S / 5, "{spec}");
    }
    let r = run(4, &format!("aalo-local:{params}"), coflows);
    assert_eq!(cct(&r, 2), 9 * S / 10);
    assert_eq!(finish(&r, 1), 12 * S / 5);
}

#[test]
fn one_queue_is_fifo() {
    // K = 1: one queue, FIFO with max-min inside a coflow: `fifo`'s rule
    // (random cases against the engine's `fifo` are in reference/main.rs).
    let coflows = vec![
        CoflowSpec::new(3, Time(0), vec![flow(0, 1, UNIT), flow(0, 2, UNIT)]),
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2 * UNIT)]),
        CoflowSpec::new(2, Time(S / 2), vec![flow(2, 1, UNIT)]),
    ];
    let fifo = run(3, "fifo", coflows.clone());
    for spec in ["aalo:k=1", "aalo:k=1;delta=0", "aalo-local:k=1"] {
        let r = run(3, spec, coflows.clone());
        for c in [1, 2, 3] {
            assert_eq!(finish(&r, c), finish(&fifo, c), "{spec}: coflow {c}");
        }
    }
}

#[test]
fn a_relabelled_level_group_leaves_cells_without_flows_alone() {
    // Issue 35's README run: the embedded default workload's generator
    // (same load and seed, 70 coflows instead of 200, where it already
    // failed) under `aalo`. A level group whose slots move to a new row
    // level takes it in place, and its slots that stay move to a group of
    // the old level; a cell whose last flow finished while in the group
    // still names it in `cell_group`, but its slot left the group then.
    // Moving that empty slot too counted it into the new group, and the
    // debug check of the groups' slot counts failed (2 against 1 here, 1
    // against 0 on the 200 coflows). The check runs after each coflow's
    // rates are applied, in debug builds (as `cargo test`'s).
    let config = SynthConfig {
        n_coflows: 70,
        ..SynthConfig::aalo()
    };
    let w = generate(&config);
    assert_eq!((w.n_hosts, w.coflows.len()), (50, 70));
    let r = run(w.n_hosts, "aalo", w.coflows);
    assert_eq!(r.coflows.len(), 70);
    assert!(r.coflows.iter().all(|c| c.finish.0 > c.release.0));
}
