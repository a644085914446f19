//! D-CAS, rule by rule: hand-computed cases run by the exact engine, checked
//! on coflow completion times (to the nanosecond) and on the decision log of
//! the scheduler (which rule of Pseudocode 1 set which priority, when, and
//! from which feedback). The paper is Luo et al., ICC 2015; its Fig. 2
//! negotiation is worked through by hand below.

use coflowkit_model::{
    flow, BitsPerSec, CoflowId, CoflowSpec, Dur, Fabric, HostId, Time, Workload,
};
use coflowkit_sched::dcas::host::{DcasHost, DcasHostConfig};
use coflowkit_sched::dcas::{
    loss_draw, Dcas, DcasConfig, Decision, DecisionLog, MessageKind, Priority, Rule,
};
use coflowkit_sched::host::{Effects, HostFlow, HostPolicy, NoView};
use coflowkit_sched::AnyScheduler;
use coflowkit_sim::{SimOptions, Simulation};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// The config from spec keys (the registry's grammar, without the name).
fn config(keys: &str) -> DcasConfig {
    let mut c = DcasConfig::default();
    for kv in keys.split(';').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap();
        c.set(k, v).unwrap();
    }
    c.validate().unwrap();
    c
}

/// Runs D-CAS on a 1 Gbit/s big switch; CCTs in ns by coflow id order of
/// the workload, and the decision log.
fn run(n_hosts: u32, coflows: Vec<CoflowSpec>, keys: &str) -> (Vec<u64>, Vec<Decision>) {
    let fabric = Fabric::big_switch(n_hosts, BitsPerSec::GBPS).unwrap();
    let w = Workload { n_hosts, coflows }.validate(&fabric).unwrap();
    let log = DecisionLog::default();
    let s = AnyScheduler::Clairvoyant(Box::new(Dcas::new(config(keys)).with_log(log.clone())));
    let r = Simulation::new(fabric, &w, s, SimOptions::default())
        .run(&mut |_| {})
        .unwrap();
    let ccts = r.coflows.iter().map(|c| c.finish.0 - c.release.0).collect();
    let log = log.lock().unwrap().clone();
    (ccts, log)
}

/// When each coflow was decided starving, as (instant in ns, coflow id).
fn starving(log: &[Decision]) -> Vec<(u64, u64)> {
    log.iter()
        .filter(|d| d.rule == Rule::Starving)
        .map(|d| (d.at.0, d.coflow.0))
        .collect()
}

/// The priorities decided at instant `at` (ns), as (coflow id, priority).
fn priorities_at(log: &[Decision], at: u64) -> Vec<(u64, Priority)> {
    log.iter()
        .filter(|d| d.at == Time(at))
        .map(|d| (d.coflow.0, d.priority))
        .collect()
}

/// The decisions of one rule at one instant, as (host, priority, feedback
/// sorted), by host.
fn decided(log: &[Decision], at: u64, rule: Rule) -> Vec<(u32, Priority, Vec<u64>)> {
    let mut v: Vec<_> = log
        .iter()
        .filter(|d| d.at == Time(at) && d.rule == rule)
        .map(|d| {
            let mut fb = d.feedback.clone();
            fb.sort_unstable();
            (d.host.0, d.priority, fb)
        })
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

/// The paper's Fig. 2: one coflow, senders S1-S3 (hosts 0-2) with desired
/// priorities 4, 2 and 1, receivers R1 (host 3, from S1 and S2) and R2 (host
/// 4, from all three). Sizes make the desired priorities exact in 1 ms
/// quanta: S1 has 500,000 bytes left (4 ms at 1 Gbit/s), S2 250,000, S3
/// 125,000.
fn fig2() -> Vec<CoflowSpec> {
    vec![CoflowSpec::new(
        1,
        Time(0),
        vec![
            flow(0, 3, 250_000),
            flow(0, 4, 250_000),
            flow(1, 3, 125_000),
            flow(1, 4, 125_000),
            flow(2, 4, 125_000),
        ],
    )]
}

const FIG2_KEYS: &str = "threshold=0;quantum=1ms";

#[test]
fn fig2_negotiation_with_max() {
    // At 0 each sender announces and takes <1, d> meanwhile. At 100 us the
    // announcements arrive together: R1 caches {4, 2} and replies x =
    // max(4, 2) = 4 to S1 and S2; R2 caches {4, 2, 1} and replies y = 4 to
    // all three. At 200 us: S1 = max(x, y) = 4, S2 = max(x, y) = 4, S3 =
    // max(y) = 4: the whole coflow runs at its slowest sender's priority.
    let (_, log) = run(5, fig2(), FIG2_KEYS);
    let p = |x| Priority::large(x);
    assert_eq!(
        decided(&log, 0, Rule::Interim),
        vec![(0, p(4), vec![]), (1, p(2), vec![]), (2, p(1), vec![])]
    );
    assert_eq!(
        decided(&log, 200 * US, Rule::Negotiated),
        vec![
            (0, p(4), vec![4, 4]),
            (1, p(4), vec![4, 4]),
            (2, p(4), vec![4])
        ]
    );
}

#[test]
fn fig2_negotiation_with_min_and_mean() {
    // min: x = min(4, 2) = 2, y = min(4, 2, 1) = 1; S1 = S2 = min(2, 1) = 1,
    // S3 = 1.
    let (_, log) = run(5, fig2(), &format!("{FIG2_KEYS};psi=min;phi=min"));
    let p = |x| Priority::large(x);
    assert_eq!(
        decided(&log, 200 * US, Rule::Negotiated),
        vec![
            (0, p(1), vec![1, 2]),
            (1, p(1), vec![1, 2]),
            (2, p(1), vec![1])
        ]
    );
    // mean (rounded, halves up): x = 3, y = 7/3 -> 2; S1 = S2 = 5/2 -> 3,
    // S3 = 2.
    let (_, log) = run(5, fig2(), &format!("{FIG2_KEYS};psi=mean;phi=mean"));
    assert_eq!(
        decided(&log, 200 * US, Rule::Negotiated),
        vec![
            (0, p(3), vec![2, 3]),
            (1, p(3), vec![2, 3]),
            (2, p(2), vec![2])
        ]
    );
}

/// One link: a large coflow, then two small ones (see the test).
fn fifo_case() -> Vec<CoflowSpec> {
    vec![
        CoflowSpec::new(1, Time(0), vec![flow(0, 1, 2_500_000)]),
        CoflowSpec::new(2, Time(MS), vec![flow(0, 1, 500_000)]),
        CoflowSpec::new(3, Time(2 * MS), vec![flow(0, 1, 250_000)]),
    ]
}

#[test]
fn fifo_class_below_the_threshold() {
    // One link. A (2.5 MB, 20 ms alone) arrives at 0, B (500 kB, 4 ms) at
    // 1 ms, C (250 kB, 2 ms) at 2 ms. With the default threshold (1 MiB) B
    // and C are small: <0, 1> and <0, 2> by arrival order, above A's
    // <1, 20000 us>. B preempts A at 1 ms and keeps the link although C is
    // smaller: B done at 5 ms (CCT 4 ms), C at 7 ms (CCT 5 ms), A resumes
    // with 19 ms left: done at 26 ms.
    let (cct, log) = run(2, fifo_case(), "");
    assert_eq!(cct, vec![26 * MS, 4 * MS, 5 * MS]);
    assert_eq!(
        decided(&log, MS, Rule::Fifo),
        vec![(0, Priority::fifo(1), vec![])]
    );
    assert_eq!(
        decided(&log, 2 * MS, Rule::Fifo),
        vec![(0, Priority::fifo(2), vec![])]
    );
    assert_eq!(
        decided(&log, 200 * US, Rule::Negotiated),
        vec![(0, Priority::large(20_000), vec![20_000])]
    );
    // Without the FIFO class (threshold 0) C, remaining 2 ms, preempts B,
    // remaining 3 ms: C done at 4 ms (CCT 2 ms), B at 7 ms (CCT 6 ms).
    let (cct, _) = run(2, fifo_case(), "threshold=0");
    assert_eq!(cct, vec![26 * MS, 6 * MS, 2 * MS]);
}

#[test]
fn starvation_guard_after_t() {
    // One link, both at 0: A 12.5 MB (100 ms alone), B 6.25 MB (50 ms). B
    // has the higher priority and A gets nothing. Ticks every 10 ms, T =
    // 30 ms: at 30 ms A has waited exactly T (not more); at 40 ms it has
    // waited 40 ms and gets <1, 0>, above B, and takes the link. At 50 ms
    // both negotiate (A was served: it waited 0; B waited 10 ms < T): A
    // 11.25 MB left -> 90,000 us, B 1.25 MB -> 10,000 us, decided at
    // 50.2 ms. B takes the link back with 1.25 MB left: done at 60.2 ms. A
    // sent 10.2 ms worth while B starved: done at 150 ms, when it would have
    // been anyway (the link never idles).
    let keys = "delta=10ms;t=30ms;threshold=0";
    let two = || {
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, 12_500_000)]),
            CoflowSpec::new(2, Time(0), vec![flow(0, 1, 6_250_000)]),
        ]
    };
    let (cct, log) = run(2, two(), keys);
    assert_eq!(cct, vec![150 * MS, 60 * MS + 200 * US]);
    assert_eq!(starving(&log), vec![(40 * MS, 1)]);
    assert_eq!(
        priorities_at(&log, 50 * MS + 200 * US),
        vec![(1, Priority::large(90_000)), (2, Priority::large(10_000))]
    );
    // With T = 1 s nobody starves long enough: B done at 50 ms.
    let (cct, log) = run(2, two(), "delta=10ms;threshold=0");
    assert_eq!(cct, vec![150 * MS, 50 * MS]);
    assert!(log.iter().all(|d| d.rule != Rule::Starving));
}

#[test]
fn starvation_clock_sees_service_at_ticks() {
    // One link, ticks every 10 ms, T = 30 ms. A (12.5 MB, 100 ms alone)
    // from 0; B (7.5 MB, 60 ms alone) from 11 ms, whose <1, 60,000 us> is
    // above A's <1, 90,000 us> of the tick at 10 ms: B takes the link, A
    // was served until 1 ms past that tick and waits from then. The host
    // policy reads service at its ticks (acknowledged bytes grew since the
    // last one): the tick at 20 ms finds A served, and A starves when it
    // has waited more than T from there, at 60 ms (40 ms; at 50 ms it has
    // waited exactly T). Measured from the instant its service stopped (11
    // ms) it would starve a tick earlier, at 50 ms (39 ms). The flow level
    // reads it by the same clock: A gets <1, 0> at 60 ms and takes the
    // link from B, which has 11 ms left; at 70 ms both negotiate (A was
    // served: it waited 0; B was not since the tick at 60 ms, which found
    // it served: it waited 10 ms): A 79,000 us, B 11,000 us, decided at
    // 70.2 ms. B ends at 81.2 ms (CCT 70.2 ms), A at 160 ms (the link
    // never idles).
    let keys = "delta=10ms;t=30ms;threshold=0";
    let (cct, log) = run(
        2,
        vec![
            CoflowSpec::new(1, Time(0), vec![flow(0, 1, 12_500_000)]),
            CoflowSpec::new(2, Time(11 * MS), vec![flow(0, 1, 7_500_000)]),
        ],
        keys,
    );
    assert_eq!(cct, vec![160 * MS, 70 * MS + 200 * US]);
    assert_eq!(starving(&log), vec![(60 * MS, 1)]);
    assert_eq!(
        priorities_at(&log, 70 * MS + 200 * US),
        vec![(1, Priority::large(79_000)), (2, Priority::large(11_000))]
    );
    // The host policy, given A's service as the flow level has it (its
    // bytes acknowledged each millisecond until 11 ms, none after), finds
    // it starving first at the same tick.
    let mut host = DcasHost::new(
        &config(keys),
        &DcasHostConfig {
            wait: Dur(200 * US),
            quantum: Dur(US),
            bands: [1 << 20, 1 << 22, 1 << 24],
            negotiate: false,
            keep_own: false,
            wire: true,
        },
    );
    let mut out = Effects::default();
    let a = HostFlow {
        id: 0,
        coflow: 1,
        coflow_arrival: Time(0),
        dst: 1,
        size: 12_500_000,
        size_known: true,
        deadline: None,
    };
    host.start(Time(0), &a, &mut out);
    let mut first_starving = None;
    for ms in 1..=70 {
        if ms <= 11 {
            host.sent(Time(ms * MS), 0, 125_000, &mut out);
        }
        if ms % 10 == 0 {
            host.wake(Time(ms * MS), &NoView, &mut out);
            if host.runs()[&1][1] > 0 && first_starving.is_none() {
                first_starving = Some(ms * MS);
            }
        }
    }
    assert_eq!(first_starving, Some(starving(&log)[0].0));
}

/// One coflow: S1 (host 0, 1.25 MB) and S2 (host 1, 5 MB) both to host 2.
fn expiry_case() -> Vec<CoflowSpec> {
    vec![CoflowSpec::new(
        1,
        Time(0),
        vec![flow(0, 2, 1_250_000), flow(1, 2, 5_000_000)],
    )]
}

/// S2's negotiated priorities, as (instant, P).
fn s2_negotiated(log: &[Decision]) -> Vec<(u64, u64)> {
    log.iter()
        .filter(|d| d.host == HostId(1) && d.rule == Rule::Negotiated)
        .map(|d| (d.at.0, d.priority.secondary))
        .collect()
}

#[test]
fn feedback_expires_after_expiry() {
    // Ψ = Φ = min, so a stale small entry shows. At 0: S1 desires 10,000 us,
    // S2 40,000; both get min = 10,000 at 0.2 ms (S1 alone on the receiver
    // until then, 25 kB), then share it at 0.5 Gbit/s. Tick 10 ms: S1 has
    // 612.5 kB left (4,900 us), S2 4,387.5 kB: both 4,900. S1 finishes at
    // 19.8 ms and announces no more; its entry (4,900, cached at 10.1 ms)
    // stays at the receiver. S2 alone: ticks at 20, 30, 40 ms desire 30,000,
    // 20,000, 10,000 us. With expiry 30 ms the entry is live at 20.1 and
    // 30.1 ms and gone at 40.1 ms (30 ms old): S2 gets 4,900 until then, its
    // own 10,000 after.
    let keys = "delta=10ms;threshold=0;psi=min;phi=min";
    let (cct, log) = run(3, expiry_case(), &format!("{keys};expiry=30ms"));
    assert_eq!(cct, vec![50 * MS]);
    let t = |ms: u64| ms * MS + 200 * US;
    assert_eq!(
        s2_negotiated(&log),
        vec![
            (t(0), 10_000),
            (t(10), 4_900),
            (t(20), 4_900),
            (t(30), 4_900),
            (t(40), 10_000)
        ]
    );
    // One more millisecond of life and the entry still counts at 40.1 ms.
    let (_, log) = run(3, expiry_case(), &format!("{keys};expiry=31ms"));
    assert_eq!(s2_negotiated(&log).last(), Some(&(t(40), 4_900)));
}

#[test]
fn lost_messages_fall_back_to_the_desired_priority() {
    // Every message lost: each sender decides alone, <1, d>.
    let (_, log) = run(5, fig2(), &format!("{FIG2_KEYS};loss=1"));
    let p = |x| Priority::large(x);
    assert_eq!(
        decided(&log, 200 * US, Rule::Fallback),
        vec![(0, p(4), vec![]), (1, p(2), vec![]), (2, p(1), vec![])]
    );
    assert!(log.iter().all(|d| d.rule != Rule::Negotiated));
    // With loss 0.2, a seed whose draws lose exactly S3's announcement to R2
    // (every other message of the first round arrives): S3 hears nothing
    // and keeps <1, 1>; S1 and S2 negotiate 4 as before (R2's cache holds
    // only 4 and 2).
    let lost = |seed: u64, kind, from: u32, to: u32| {
        loss_draw(seed, kind, CoflowId(1), HostId(from), HostId(to), 1) < 0.2
    };
    let (s, r) = (MessageKind::Announce, MessageKind::Feedback);
    let others = [(s, 0, 3), (s, 0, 4), (s, 1, 3), (s, 1, 4)]
        .into_iter()
        .chain([(r, 3, 0), (r, 4, 0), (r, 3, 1), (r, 4, 1)]);
    let seed = (0..10_000u64)
        .find(|&seed| lost(seed, s, 2, 4) && others.clone().all(|(k, a, b)| !lost(seed, k, a, b)))
        .expect("such a seed");
    let (_, log) = run(5, fig2(), &format!("{FIG2_KEYS};loss=0.2;seed={seed}"));
    assert_eq!(
        decided(&log, 200 * US, Rule::Fallback),
        vec![(2, p(1), vec![])]
    );
    assert_eq!(
        decided(&log, 200 * US, Rule::Negotiated),
        vec![(0, p(4), vec![4, 4]), (1, p(4), vec![4, 4])]
    );
}

#[test]
fn runs_are_deterministic_and_seeds_matter() {
    let (a, la) = run(5, fig2(), &format!("{FIG2_KEYS};loss=0.5;seed=3"));
    let (b, lb) = run(5, fig2(), &format!("{FIG2_KEYS};loss=0.5;seed=3"));
    assert_eq!((a, la.clone()), (b, lb));
    let differs =
        (4..40u64).any(|seed| run(5, fig2(), &format!("{FIG2_KEYS};loss=0.5;seed={seed}")).1 != la);
    assert!(differs, "the seed changes which messages are lost");
}
