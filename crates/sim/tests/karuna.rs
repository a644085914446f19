//! Karuna (`karuna`) and its baselines (`pias`, `pfabric-edf`, `edf-sjf`)
//! on hand-computed cases, exact to the nanosecond (1 µs where a rate is
//! re-evaluated every RTT): a lone deadline flow takes the minimal rate and
//! finishes at its deadline, feasible deadline flows all meet theirs while a
//! flow without a deadline takes the rest, split placement and sieve
//! demotion at the thresholds, promotion and reset after starvation. The
//! differential tests against a slow reference are in `reference/`.

mod common;

use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Dur, Fabric, FlowSpec, Time};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{Missed, SimResult};

use common::{run, run_with};

/// One millisecond, in ns.
const MS: u64 = 1_000_000;
/// One microsecond, in ns.
const US: u64 = 1_000;

/// Six split or sieve thresholds: 100 kB, 200 kB, .., 600 kB.
const T6: &str = "100000/200000/300000/400000/500000/600000";

/// One coflow per flow, coflow id `i`, arriving at `at` ns.
fn one(i: u64, at: u64, f: FlowSpec) -> CoflowSpec {
    CoflowSpec::new(i, Time(at), vec![f])
}

/// Finish instants (ns) by coflow id.
fn finishes(r: &SimResult) -> Vec<u64> {
    let mut v: Vec<(u64, u64)> = r.coflows.iter().map(|c| (c.id, c.finish.0)).collect();
    v.sort_unstable();
    v.into_iter().map(|x| x.1).collect()
}

fn near(got: u64, want: u64, tol: u64) -> bool {
    got.abs_diff(want) <= tol
}

#[test]
fn a_lone_deadline_flow_finishes_at_its_deadline_not_earlier() {
    // 1.25 MB with 20 ms to go: 500 Mbit/s (above the floor of 2 x 1460 B
    // per 100 us = 233.6 Mbit/s), not the line rate (which would end at 10 ms).
    let r = run(
        4,
        "karuna",
        vec![one(0, 0, flow(0, 1, 1_250_000).with_deadline(Dur(20 * MS)))],
    );
    let f = finishes(&r)[0];
    assert!(f <= 20 * MS && f + US >= 20 * MS, "finished at {f} ns");
    assert_eq!(r.flow_metrics.deadlines.missed, 0);
}

#[test]
fn a_loose_deadline_flow_sends_at_the_floor() {
    // 292,000 B with 1 s to go: MCP 2.336 Mbit/s, below the floor of two
    // segments per RTT: 2 x 1460 B per 100 us, so it ends at 10 ms.
    let r = run(
        4,
        "karuna",
        vec![one(0, 0, flow(0, 1, 292_000).with_deadline(Dur(1000 * MS)))],
    );
    assert!(near(finishes(&r)[0], 10 * MS, 1));
}

#[test]
fn a_flow_past_its_deadline_drops_to_the_floor() {
    // 1.25 MB by 5 ms needs 2 Gbit/s: it gets the line (1 Gbit/s) until
    // its deadline (625 kB sent), then the floor, 233.6 Mbit/s, for the
    // other 625 kB: 21.404110 ms more. A missed deadline.
    let r = run(
        4,
        "karuna",
        vec![one(0, 0, flow(0, 1, 1_250_000).with_deadline(Dur(5 * MS)))],
    );
    assert!(near(finishes(&r)[0], 26_404_110, 1), "{:?}", finishes(&r));
    assert_eq!(r.flow_metrics.deadlines.missed, 1);
}

/// A: 1.25 MB by 5 ms (infeasible: 2 Gbit/s), B: 2.5 MB without a
/// deadline, on one link. Finish instants of A and B, and the run.
fn missed_case(sched: &str, missed: Missed) -> (Vec<u64>, SimResult) {
    let r = run_with(
        Fabric::big_switch(4, BitsPerSec::GBPS).unwrap(),
        sched,
        vec![
            one(0, 0, flow(0, 1, 1_250_000).with_deadline(Dur(5 * MS))),
            one(1, 0, flow(0, 1, 2_500_000)),
        ],
        missed,
    );
    (finishes(&r), r)
}

#[test]
fn a_missed_flow_finishes_at_the_floor_or_is_dropped_at_its_deadline() {
    // Finished: A has the line to 5 ms (625 kB sent), then the floor (233.6
    // Mbit/s) for 625 kB more, to 26.404110 ms, while B takes the rest; the
    // link never idles, so B ends with the 3.75 MB at 30 ms.
    let (f, r) = missed_case("karuna", Missed::Finish);
    assert!(near(f[0], 26_404_110, 1) && near(f[1], 30 * MS, 1), "{f:?}");
    let m = r.flow_metrics;
    assert_eq!((m.deadlines.missed, m.dropped), (1, 0));
    let rows = r.flows.as_ref().unwrap();
    assert_eq!(
        (rows[0].dropped, rows[0].deadline_met()),
        (false, Some(false))
    );
    // Dropped: A leaves at 5 ms with 625 kB never sent; B then has the
    // line for its 2.5 MB: 25 ms. A still missed.
    let (f, r) = missed_case("karuna", Missed::Drop);
    assert_eq!(f, vec![5 * MS, 25 * MS]);
    let m = r.flow_metrics;
    assert_eq!((m.deadlines.missed, m.dropped), (1, 1));
    let rows = r.flows.as_ref().unwrap();
    assert_eq!(
        (rows[0].dropped, rows[0].deadline_met()),
        (true, Some(false))
    );
    assert_eq!((rows[1].dropped, rows[1].deadline_met()), (false, None));
    // The metrics of flows without a deadline: B alone, not short.
    assert_eq!(m.fct_no_deadline.count, 1);
    assert!((m.fct_no_deadline.p95 - 0.025).abs() < 1e-9);
    assert_eq!(m.fct_no_deadline_short.count, 0);
}

#[test]
fn dropping_is_the_engines_rule_for_every_scheduler() {
    // Fair: 500 Mbit/s each; A has sent 312.5 kB at 5 ms and is dropped;
    // B sends its other 2.1875 MB at the line: 22.5 ms.
    let (f, r) = missed_case("fair", Missed::Drop);
    assert_eq!(f, vec![5 * MS, 22_500_000]);
    assert_eq!(r.flow_metrics.dropped, 1);
    // A flow that finishes by its deadline is not dropped: karuna's MCP ends
    // a lone flow just before it.
    let r = run_with(
        Fabric::big_switch(4, BitsPerSec::GBPS).unwrap(),
        "karuna",
        vec![one(0, 0, flow(0, 1, 1_250_000).with_deadline(Dur(20 * MS)))],
        Missed::Drop,
    );
    let m = r.flow_metrics;
    assert_eq!((m.deadlines.missed, m.dropped), (0, 0));
    let f = finishes(&r)[0];
    assert!(f <= 20 * MS && f + US >= 20 * MS, "finished at {f} ns");
}

#[test]
fn feasible_deadline_flows_meet_deadlines_and_the_rest_takes_what_is_left() {
    // A: 1.25 MB by 20 ms (500 Mbit/s); C: 1 MB by 25 ms (320 Mbit/s);
    // B: 2.5 MB, no deadline: 180 Mbit/s to 20 ms (450 kB), 680 Mbit/s to
    // 25 ms (425 kB), then the line rate for 1,625 kB (13 ms): 38 ms.
    let r = run(
        4,
        "karuna",
        vec![
            one(0, 0, flow(0, 1, 1_250_000).with_deadline(Dur(20 * MS))),
            one(1, 0, flow(0, 1, 2_500_000)),
            one(2, 0, flow(0, 1, 1_000_000).with_deadline(Dur(25 * MS))),
        ],
    );
    let f = finishes(&r);
    assert!(f[0] <= 20 * MS && f[0] + US >= 20 * MS, "{f:?}");
    assert!(f[2] <= 25 * MS && f[2] + US >= 25 * MS, "{f:?}");
    assert!(near(f[1], 38 * MS, US), "{f:?}");
    assert_eq!(r.flow_metrics.deadlines.missed, 0);
    // Under EDF first the deadline flows take the line: A by 10 ms, C by 18 ms.
    for sched in ["pfabric-edf", "edf-sjf"] {
        let f = finishes(&run(
            4,
            sched,
            vec![
                one(0, 0, flow(0, 1, 1_250_000).with_deadline(Dur(20 * MS))),
                one(1, 0, flow(0, 1, 2_500_000)),
                one(2, 0, flow(0, 1, 1_000_000).with_deadline(Dur(25 * MS))),
            ],
        ));
        assert_eq!(f, vec![10 * MS, 38 * MS, 18 * MS], "{sched}");
    }
}

#[test]
fn split_places_known_sizes_by_total_size() {
    // 150 kB and 250 kB: queues 3 and 4, strict: 1.2 ms then 3.2 ms.
    let spec = format!("karuna:split={T6}");
    let f = finishes(&run(
        4,
        &spec,
        vec![
            one(0, 0, flow(0, 1, 250_000)),
            one(1, 0, flow(0, 1, 150_000)),
        ],
    ));
    assert_eq!(f, vec![3_200_000, 1_200_000]);
    // 150 kB and exactly 200 kB: both above one threshold only (a size
    // goes past a threshold when it exceeds it), so they share: the first
    // ends at 2.4 ms, the second 0.4 ms later.
    let f = finishes(&run(
        4,
        &spec,
        vec![
            one(0, 0, flow(0, 1, 200_000)),
            one(1, 0, flow(0, 1, 150_000)),
        ],
    ));
    assert_eq!(f, vec![2_800_000, 2_400_000]);
}

/// P: 300 kB, size unknown, from 0; Q: 50 kB, size unknown, from 0.5 ms.
/// They share until P has sent 100 kB: 62.5 kB by 0.5 ms, then 37.5 kB at
/// 500 Mbit/s, at 1.1 ms; P drops a queue, Q (37.5 kB sent) ends 0.1 ms
/// later at 1.2 ms, P 1.6 ms after that (200 kB) at 2.8 ms.
fn sieve_case() -> Vec<CoflowSpec> {
    vec![
        one(0, 0, flow(0, 1, 300_000).size_unknown()),
        one(1, 500 * US, flow(0, 1, 50_000).size_unknown()),
    ]
}

#[test]
fn sieve_demotes_at_the_instant_bytes_sent_reach_a_threshold() {
    let f = finishes(&run(4, &format!("karuna:sieve={T6}"), sieve_case()));
    assert_eq!(f, vec![2_800_000, 1_200_000]);
    let f = finishes(&run(
        4,
        &format!("pias:thresholds={T6}/700000"),
        sieve_case(),
    ));
    assert_eq!(f, vec![2_800_000, 1_200_000]);
    // Known sizes do not matter to PIAS: the same with sizes known.
    let known = vec![
        one(0, 0, flow(0, 1, 300_000)),
        one(1, 500 * US, flow(0, 1, 50_000)),
    ];
    let f = finishes(&run(4, &format!("pias:thresholds={T6}/700000"), known));
    assert_eq!(f, vec![2_800_000, 1_200_000]);
    // Fair sharing would end Q at 1.3 ms.
    assert_eq!(
        finishes(&run(4, "fair", sieve_case())),
        vec![2_800_000, 1_300_000]
    );
}

#[test]
fn a_starved_type_2_flow_is_promoted_one_queue() {
    // S: 600 kB (queue 7), L: 700 kB (queue 8). Without starvation
    // handling S ends at 4.8 ms, L at 10.4 ms. With 1 ms: at 1 ms L joins
    // S's queue; S (475 kB left) ends at 8.6 ms, L at 10.4 ms.
    let case = || {
        vec![
            one(0, 0, flow(0, 1, 600_000)),
            one(1, 0, flow(0, 1, 700_000)),
        ]
    };
    let f = finishes(&run(4, &format!("karuna:split={T6}"), case()));
    assert_eq!(f, vec![4_800_000, 10_400_000]);
    let f = finishes(&run(
        4,
        &format!("karuna:split={T6};starvation=1ms"),
        case(),
    ));
    assert_eq!(f, vec![8_600_000, 10_400_000]);
}

#[test]
fn a_starved_type_3_flow_has_its_count_reset() {
    // P: 300 kB, size unknown, demoted at 0.8 ms; W: 100 kB, known, from
    // 0.8 ms in queue 2, blocks P. After 0.5 ms without progress (1.3 ms)
    // P's count is reset and it shares queue 2 with W: W (37.5 kB left)
    // ends at 1.9 ms, P (162.5 kB left) at 3.2 ms. Without: W at 1.6 ms,
    // P at 3.2 ms.
    let case = || {
        vec![
            one(0, 0, flow(0, 1, 300_000).size_unknown()),
            one(1, 800 * US, flow(0, 1, 100_000)),
        ]
    };
    let spec = format!("karuna:split={T6};sieve={T6}");
    assert_eq!(finishes(&run(4, &spec, case())), vec![3_200_000, 1_600_000]);
    let spec = format!("karuna:split={T6};sieve={T6};starvation=500us");
    assert_eq!(finishes(&run(4, &spec, case())), vec![3_200_000, 1_900_000]);
}

#[test]
fn bad_specs_name_the_key() {
    let hints = WorkloadHints::default();
    let err = |s: &str| {
        build(&SchedulerSpec::parse(s).unwrap(), &hints)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert_eq!(
        err("karuna:split=1/2/3"),
        "scheduler 'karuna': parameter 'split': '1/2/3': 3 thresholds, expected 6 (or web, mining, auto@LOAD)"
    );
    assert_eq!(
        err("karuna:sieve=6/5/4/3/2/1"),
        "scheduler 'karuna': parameter 'sieve': thresholds must be strictly ascending"
    );
    assert_eq!(
        err("pias:thresholds=1/2/x/4/5/6/7"),
        "scheduler 'pias': parameter 'thresholds': 'x' is not a size"
    );
    assert_eq!(
        err("karuna:rtt=0"),
        "scheduler 'karuna': parameter 'rtt': an RTT must be above 0"
    );
    assert_eq!(
        err("pias:starvation=0"),
        "scheduler 'pias': parameter 'starvation': must be above 0 (or none)"
    );
    assert_eq!(err("karuna:split=mining;sieve=web;starvation=none"), "");
    assert_eq!(err("pias:thresholds=mining;starvation=30ms"), "");
    assert_eq!(
        err("karuna:split=auto@1.5"),
        "scheduler 'karuna': parameter 'split': 'auto@1.5': auto@LOAD takes a load in (0, 1), e.g. auto@0.8"
    );
    assert_eq!(
        err("karuna:split=auto@0.8"),
        "scheduler 'karuna': parameter 'split': 'auto@0.8': the workload has no flow sizes to derive from"
    );
    let sizes = WorkloadHints {
        flow_sizes: (1..=200).map(|i| f64::from(i * i) * 1000.0).collect(),
        ..WorkloadHints::default()
    };
    let built = |s: &str| build(&SchedulerSpec::parse(s).unwrap(), &sizes).map(|_| ());
    assert!(built("karuna:split=auto@0.8;sieve=auto@0.5").is_ok());
    assert!(built("pias:thresholds=auto@0.9").is_ok());
}

/// The web-search and data-mining CDFs in bytes.
fn cdf_bytes(cdf: &coflowkit_workload::dist::EmpiricalCdf) -> Vec<(f64, f64)> {
    cdf.points
        .iter()
        .map(|&(u, f)| (u * cdf.unit_bytes, f))
        .collect()
}

#[test]
fn derived_thresholds_beside_pias_presets() {
    use coflowkit_sched::karuna::preset;
    use coflowkit_sched::karuna_thresholds::{derive_thresholds, model_mean_fct, ThresholdKind};
    use coflowkit_workload::dist::{DATA_MINING, WEB_SEARCH};
    for (cdf, name) in [(&WEB_SEARCH, "web"), (&DATA_MINING, "mining")] {
        let p = cdf_bytes(cdf);
        let max = p.last().unwrap().0;
        for kind in [ThresholdKind::Sieve, ThresholdKind::Split] {
            let mut prev: Option<Vec<f64>> = None;
            for load in [0.5, 0.7, 0.9] {
                let t = derive_thresholds(&p, load, 7, kind).unwrap();
                eprintln!(
                    "{name} {kind:?} load {load}: {:?}",
                    t.iter().map(|x| (x / 1460.0).round()).collect::<Vec<_>>()
                );
                // Ascending, inside the support.
                assert_eq!(t.len(), 7);
                assert!(t.windows(2).all(|w| w[0] < w[1]) && t[6] < max, "{t:?}");
                // Under its own model, no worse than the published preset.
                let ours = model_mean_fct(&p, load, &t, kind, 1e9);
                let theirs = model_mean_fct(&p, load, &preset(name).unwrap(), kind, 1e9);
                eprintln!("   model mean FCT ours {ours:.6} s, preset {theirs:.6} s");
                assert!(ours <= theirs * (1.0 + 1e-9), "{ours} > {theirs}");
                prev = Some(t);
            }
            assert!(prev.is_some());
        }
    }
}
