use super::*;
use coflowkit_model::{percentile, BitsPerSec, Fabric, FlowKind};
use std::collections::{HashMap, HashSet};

fn small(workflow: Workflow, n_tasks: usize) -> BaraatConfig {
    BaraatConfig {
        workflow,
        n_tasks,
        ..BaraatConfig::default()
    }
}

#[test]
fn golden_first_flows_for_seed_1() {
    // Pins the generator: a dependency bump that changes any draw fails
    // here. Regenerate only on purpose.
    let two = generate(&small(Workflow::TwoStage, 3));
    let c = &two.coflows[0];
    let got: Vec<_> = c.flows[..2]
        .iter()
        .chain(&c.flows[39..42])
        .map(|f| (f.src.0, f.dst.0, f.bytes.0, f.group, f.after))
        .collect();
    let arrivals = |w: &Workload| w.coflows.iter().map(|c| c.arrival.0).collect::<Vec<_>>();
    assert_eq!(
        got,
        vec![
            (10280, 10304, 6090, 1, None),
            (10281, 10304, 33961, 1, None),
            (10327, 10304, 40675, 1, None),
            (10304, 4821, 29046, 0, Some(1)),
            (24240, 24267, 21747, 2, None),
        ]
    );
    // Two-stage arrivals moved on 2026-11-23: top racks' links are classes of their own.
    assert_eq!(arrivals(&two), vec![0, 34283, 46780]);
    let single = generate(&BaraatConfig {
        sizes: SizeModel::Bing,
        compute_mean: Dur::from_micros(100),
        ..small(Workflow::SingleStage, 3)
    });
    let got1: Vec<_> = single.coflows[0].flows[..2]
        .iter()
        .chain(&single.coflows[0].flows[38..40])
        .map(|f| (f.src.0, f.dst.0, f.bytes.0, f.delay.0))
        .collect();
    assert_eq!(
        got1,
        vec![
            (10240, 10273, 18069, 9976),
            (10241, 10273, 18069, 47274),
            (10279, 10273, 18069, 30250),
            (10306, 10273, 18069, 194907),
        ]
    );
    assert_eq!(arrivals(&single), vec![0, 473, 645]);
}

#[test]
fn two_stage_tasks_have_the_papers_structure() {
    // Baraat 5.2: 30 mids in separate racks, 40 workers each, 1,230
    // flows per task; each mid->top flow waits for its own 40 worker
    // flows and carries 3% of what its mid received.
    let config = small(Workflow::TwoStage, 200);
    let t = config.tree;
    let w = generate(&config);
    assert_eq!(w.n_hosts, 36_000);
    assert_eq!(config.flows_per_task(), 1_230);
    for c in &w.coflows {
        assert_eq!(c.flows.len(), 1_230);
        let ups: Vec<&FlowSpec> = c.flows.iter().filter(|f| f.after.is_some()).collect();
        assert_eq!(ups.len(), 30);
        let top = ups[0].dst.0;
        let top_rack = t.rack_of(top);
        assert_eq!(
            top_rack % t.racks_per_pod,
            0,
            "the top aggregator is in a top rack"
        );
        let mut mid_racks = HashSet::new();
        for up in &ups {
            assert_eq!((up.dst.0, up.group), (top, 0));
            let g = up.after.unwrap();
            let workers: Vec<&FlowSpec> = c
                .flows
                .iter()
                .filter(|f| f.group == g && f.after.is_none())
                .collect();
            assert_eq!(workers.len(), 40);
            let mid = up.src.0;
            let rack = t.rack_of(mid);
            assert!(mid_racks.insert(rack), "mids in separate racks");
            assert_ne!(rack % t.racks_per_pod, 0, "mids are not in top racks");
            let received: u64 = workers.iter().map(|f| f.bytes.0).sum();
            assert_eq!(up.bytes.0, (received as f64 * 0.03).round() as u64);
            let same_rack = workers
                .iter()
                .filter(|f| t.rack_of(f.src.0) == rack)
                .count();
            assert_eq!(same_rack, 39);
            let srcs: HashSet<u32> = workers.iter().map(|f| f.src.0).collect();
            assert_eq!(srcs.len(), 40);
            for f in &workers {
                assert_eq!(f.dst.0, mid);
                assert_ne!(f.src.0, mid);
                let r = t.rack_of(f.src.0);
                assert_eq!(t.pod_of_rack(r), t.pod_of_rack(rack));
                assert_ne!(r % t.racks_per_pod, 0, "workers are not in top racks");
            }
        }
    }
    let fabric = Fabric::big_switch(36_000, BitsPerSec::GBPS).unwrap();
    assert!(w.validate(&fabric).is_ok());
}

#[test]
fn rack_aggregators_are_first_hosts_and_their_downlinks_carry_the_load() {
    let config = BaraatConfig {
        aggregators: Aggregators::Rack,
        sizes: SizeModel::Bing,
        ..small(Workflow::SingleStage, 400)
    };
    let t = config.tree;
    let w = generate(&config);
    let mut racks = std::collections::BTreeSet::new();
    for c in &w.coflows {
        let agg = c.flows[0].dst.0;
        assert_eq!(agg, t.host(t.rack_of(agg), 0), "task {:?}", c.id);
        assert!(c.flows.iter().all(|f| f.dst.0 == agg && f.src.0 != agg));
        racks.insert(t.rack_of(agg));
    }
    assert!(racks.len() > 1, "aggregators in one rack only");
    let loads = t.class_loads(&w, Split::of(&config));
    let load = |class, racks| load_of(&loads, class, racks);
    // Every byte ends at an aggregator: its downlinks are the bottleneck,
    // at the target load; the other hosts' downlinks carry nothing.
    assert!((load(LinkClass::HostDown, Racks::AggregatorHosts) - 0.8).abs() < 1e-6);
    assert_eq!(load(LinkClass::HostDown, Racks::OtherHosts), 0.0);
    assert!(load(LinkClass::HostUp, Racks::OtherHosts) < 0.1);
    assert!((t.offered_load(&w, Split::of(&config)).unwrap() - 0.8).abs() < 1e-6);
}

#[test]
fn rack_aggregators_apply_to_single_stage_tasks_only() {
    let e = BaraatConfig {
        aggregators: Aggregators::Rack,
        ..small(Workflow::TwoStage, 3)
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.field, "aggregators");
}

#[test]
fn flow_spread_varies_sizes_within_a_task_and_nothing_else() {
    let base = BaraatConfig {
        sizes: SizeModel::Bing,
        ..small(Workflow::SingleStage, 200)
    };
    let spread = BaraatConfig {
        flow_spread: 0.5,
        ..base.clone()
    };
    let (a, b) = (generate(&base), generate(&spread));
    let mut varied = 0;
    for (ca, cb) in a.coflows.iter().zip(&b.coflows) {
        assert_eq!(ca.flows.len(), cb.flows.len());
        let one = ca.flows[0].bytes.0 as f64;
        for (fa, fb) in ca.flows.iter().zip(&cb.flows) {
            assert_eq!((fa.src, fa.dst), (fb.src, fb.dst));
            assert_eq!(fa.bytes, ca.flows[0].bytes, "one size per task at 0");
            let x = fb.bytes.0 as f64;
            assert!(
                x >= (0.5 * one).floor() && x <= (1.5 * one).ceil(),
                "{x} from {one}"
            );
        }
        varied += usize::from(cb.flows.iter().any(|f| f.bytes != cb.flows[0].bytes));
    }
    assert_eq!(varied, b.coflows.len());
    for bad in [-0.1, 1.0, f64::NAN] {
        let e = BaraatConfig {
            flow_spread: bad,
            ..base.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "flow_spread");
    }
}

#[test]
fn single_stage_tasks_query_their_rack_and_one_more_host() {
    let config = small(Workflow::SingleStage, 500);
    let t = config.tree;
    let w = generate(&config);
    for c in &w.coflows {
        assert_eq!(c.flows.len(), 40);
        let agg = c.flows[0].dst.0;
        let rack = t.rack_of(agg);
        assert!(c
            .flows
            .iter()
            .all(|f| f.dst.0 == agg && f.group == 0 && f.after.is_none()));
        let local = c
            .flows
            .iter()
            .filter(|f| t.rack_of(f.src.0) == rack)
            .count();
        assert_eq!(local, 39);
        let spill = c.flows.iter().find(|f| t.rack_of(f.src.0) != rack).unwrap();
        let p = t.pod_of_rack(rack);
        let next = p * t.racks_per_pod + (rack - p * t.racks_per_pod + 1) % t.racks_per_pod;
        assert_eq!(t.rack_of(spill.src.0), next);
    }
    // Fewer workers than the rack holds: a random subset of it.
    let w = generate(&BaraatConfig {
        workers: 10,
        ..small(Workflow::SingleStage, 50)
    });
    for c in &w.coflows {
        let agg = c.flows[0].dst.0;
        assert_eq!(c.flows.len(), 10);
        assert!(c
            .flows
            .iter()
            .all(|f| t.rack_of(f.src.0) == t.rack_of(agg) && f.src.0 != agg));
    }
}

/// The load of `class` over `racks` in `loads`.
fn load_of(loads: &[ClassLoad], class: LinkClass, racks: Racks) -> f64 {
    loads
        .iter()
        .find(|c| c.class == class && c.racks == racks)
        .and_then(|c| c.load)
        .unwrap_or_else(|| panic!("no {}{}", racks.name(), class.name()))
}

#[test]
fn load_is_the_most_loaded_link_class() {
    // Two-stage on Baraat's tree: the top racks' 2:1 ToR downlinks bind
    // (40 top aggregators share 20 Gbit/s), at exactly the target; no
    // class of links is above it.
    let w = generate(&small(Workflow::TwoStage, 300));
    let t = Tree::default();
    let loads = t.class_loads(&w, Workflow::TwoStage);
    assert_eq!(loads.len(), 10);
    let top_tor = load_of(&loads, LinkClass::TorDown, Racks::Top);
    assert!(
        (top_tor - 0.8).abs() < 1e-6,
        "top racks' ToR downlinks {top_tor}"
    );
    assert!(
        loads.iter().all(|c| c.load.unwrap() <= 0.8 + 1e-6),
        "{loads:?}"
    );
    assert!((t.offered_load(&w, Workflow::TwoStage).unwrap() - 0.8).abs() < 1e-6);
    // Top racks only receive: their hosts never send.
    assert_eq!(load_of(&loads, LinkClass::HostUp, Racks::Top), 0.0);
    // The other racks' host links carry every worker byte, equal up and
    // down (39 of 40 worker flows stay in the rack), well below the top
    // ToR links; their ToR uplinks carry the 3% mid -> top flows and
    // 1 spill flow of 40.
    let up = load_of(&loads, LinkClass::HostUp, Racks::Other);
    let down = load_of(&loads, LinkClass::HostDown, Racks::Other);
    assert!((0.3..0.6).contains(&up), "other racks' host uplinks {up}");
    assert!((down / up - 1.0).abs() < 0.05, "host downlinks {down}");
    assert!(load_of(&loads, LinkClass::TorUp, Racks::Other) < 0.2 * up);

    // The reproduction's 2 x 4 x 40 tree with 6 mids: the other racks'
    // host links bind (a quarter of the hosts are in top racks and
    // receive only 3%), where the unsplit average put them at 1.07.
    let tree = Tree {
        pods: 2,
        racks_per_pod: 4,
        ..Tree::default()
    };
    let w = generate(&BaraatConfig {
        tree,
        mids: 6,
        ..small(Workflow::TwoStage, 300)
    });
    let loads = tree.class_loads(&w, Workflow::TwoStage);
    let up = load_of(&loads, LinkClass::HostUp, Racks::Other);
    assert!((up - 0.8).abs() < 1e-6, "other racks' host uplinks {up}");
    assert!(
        loads.iter().all(|c| c.load.unwrap() <= 0.8 + 1e-6),
        "{loads:?}"
    );

    // Storage between random hosts: every rack alike (no split); nearly
    // every byte crosses racks, so the 2:1 ToR links bind at twice the
    // host links' load.
    let w = generate(&BaraatConfig {
        load: 0.5,
        ..small(Workflow::Storage, 3000)
    });
    let loads = t.class_loads(&w, Workflow::Storage);
    assert_eq!(loads.len(), 6);
    assert!(loads.iter().all(|c| c.racks == Racks::All));
    let (host, tor) = (loads[0].load.unwrap(), loads[2].load.unwrap());
    assert!((tor - 0.5).abs() < 1e-6, "ToR {tor}");
    assert!((tor / host - 2.0).abs() < 0.01, "host {host}");
}

#[test]
fn uniform_sizes_match_their_range_and_mean() {
    // 200 tasks x 1,200 worker flows uniform in [2 KB, 50 KB]: mean
    // 26 KB within 0.5% (sigma of the mean is 0.06%).
    let w = generate(&small(Workflow::TwoStage, 200));
    let sizes: Vec<f64> = w
        .coflows
        .iter()
        .flat_map(|c| &c.flows)
        .filter(|f| f.after.is_none())
        .map(|f| f.bytes.0 as f64)
        .collect();
    let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
    assert!((mean / 26_000.0 - 1.0).abs() < 0.005, "mean {mean}");
    assert!(sizes.iter().all(|&b| (2_000.0..=50_000.0).contains(&b)));
    assert!((percentile(&sizes, 50.0).unwrap() / 26_000.0 - 1.0).abs() < 0.01);
}

#[test]
fn bing_tasks_are_bimodal_with_15_percent_heavy() {
    // 20,000 storage tasks: heavy share 0.15 +- 0.01 (3 sigma = 0.0076);
    // every task within +-10% of 20 KB or 200 KB per flow.
    let w = generate(&BaraatConfig {
        sizes: SizeModel::Bing,
        ..small(Workflow::Storage, 20_000)
    });
    let mut heavy = 0;
    for c in &w.coflows {
        let b = c.flows[0].bytes.0;
        assert!(c.flows.iter().all(|f| f.bytes.0 == b));
        if (180_000..=220_000).contains(&b) {
            heavy += 1;
        } else {
            assert!((18_000..=22_000).contains(&b), "{b}");
        }
    }
    let share = heavy as f64 / 20_000.0;
    assert!((share - 0.15).abs() < 0.01, "heavy share {share}");
    // A light single-stage task is 40 x 20 KB = 800 KB (Baraat 5.1's task size).
    let single = generate(&BaraatConfig {
        sizes: SizeModel::Bing,
        bing_spread: 0.0,
        bing_heavy_fraction: 0.0,
        ..small(Workflow::SingleStage, 5)
    });
    assert!(single
        .coflows
        .iter()
        .all(|c| c.total_bytes() == Bytes(800_000)));
}

#[test]
fn analytics_tails_match_their_quantiles() {
    // Per-task flow sizes over 40,000 tasks. Pareto(1.2) with mean 26 KB
    // has scale 26 KB / 6; its median and p90 are scale * 2^(1/1.2) and
    // scale * 10^(1/1.2). Lognormal(sigma 2) with mean 26 KB has median
    // exp(mu). Tolerances: p50 3%, p90 5%, about 3 sigma of the sample
    // quantiles (sigma of a quantile relative to its value: Pareto p90
    // sqrt(0.09 / n) / (1.2 * 0.1) = 1.25%, lognormal p50
    // 2 * sqrt(0.25 / n) / 0.399 = 1.25%).
    for tail in [Tail::Pareto, Tail::Lognormal] {
        let config = BaraatConfig {
            sizes: SizeModel::Analytics,
            tail,
            storage_servers: 1,
            ..small(Workflow::Storage, 40_000)
        };
        let w = generate(&config);
        let b: Vec<f64> = w
            .coflows
            .iter()
            .map(|c| c.flows[0].bytes.0 as f64)
            .collect();
        let (p50, p90) = (percentile(&b, 50.0).unwrap(), percentile(&b, 90.0).unwrap());
        let (want50, want90) = match tail {
            Tail::Pareto => {
                let s = pareto_scale_for_mean(26_000.0, 1.2);
                (
                    crate::dist::pareto_quantile(s, 1.2, 0.5),
                    crate::dist::pareto_quantile(s, 1.2, 0.9),
                )
            }
            Tail::Lognormal => {
                let mu = lognormal_mu_for_mean(26_000.0, 2.0);
                (mu.exp(), (mu + 2.0 * 1.281_551_565_5).exp())
            }
        };
        assert!(
            (p50 / want50 - 1.0).abs() < 0.03,
            "{tail:?} p50 {p50} vs {want50}"
        );
        assert!(
            (p90 / want90 - 1.0).abs() < 0.03,
            "{tail:?} p90 {p90} vs {want90}"
        );
        assert!(b.iter().all(|&x| x <= (1u64 << 30) as f64));
    }
}

#[test]
fn compute_waits_are_exponential_and_leave_the_flows_alone() {
    let plain = generate(&small(Workflow::SingleStage, 2000));
    let timed = generate(&BaraatConfig {
        compute_mean: Dur::from_millis(2),
        ..small(Workflow::SingleStage, 2000)
    });
    let mut delays = Vec::new();
    for (a, b) in plain.coflows.iter().zip(&timed.coflows) {
        assert_eq!(a.arrival, b.arrival);
        for (f, g) in a.flows.iter().zip(&b.flows) {
            assert_eq!(
                (f.src, f.dst, f.bytes, f.delay),
                (g.src, g.dst, g.bytes, Dur::ZERO)
            );
            delays.push(g.delay.0 as f64);
        }
    }
    // 80,000 exponential draws: mean within 2% (sigma 0.35%).
    let mean = delays.iter().sum::<f64>() / delays.len() as f64;
    assert!((mean / 2e6 - 1.0).abs() < 0.02, "mean {mean}");
}

#[test]
fn data_parallel_jobs_are_a_batch_of_staged_shuffles() {
    let config = BaraatConfig {
        dp_stages: 3,
        ..small(Workflow::DataParallel, 40)
    };
    let w = generate(&config);
    assert_eq!(config.flows_per_task(), 8 * 5 + 2 * 25);
    for c in &w.coflows {
        assert_eq!(c.arrival, Time::ZERO);
        assert_eq!(c.flows.len(), 90);
        let mut by_group: HashMap<u32, Vec<&FlowSpec>> = HashMap::new();
        for f in &c.flows {
            by_group.entry(f.group).or_default().push(f);
        }
        assert_eq!(by_group.len(), 3);
        for s in 1..3u32 {
            assert!(by_group[&s].iter().all(|f| f.after == Some(s - 1)));
            let senders: HashSet<u32> = by_group[&s].iter().map(|f| f.src.0).collect();
            let before: HashSet<u32> = by_group[&(s - 1)].iter().map(|f| f.dst.0).collect();
            assert_eq!(senders, before);
        }
    }
    let fabric = Fabric::big_switch(36_000, BitsPerSec::GBPS).unwrap();
    assert!(w.validate(&fabric).is_ok());
}

#[test]
fn deadlines_apply_to_tasks() {
    let w = generate(&BaraatConfig {
        deadlines: DeadlineSpec {
            fraction: 0.5,
            ..DeadlineSpec::default()
        },
        ..small(Workflow::Storage, 4000)
    });
    let share = w.coflows.iter().filter(|c| c.deadline.is_some()).count() as f64 / 4000.0;
    assert!((share - 0.5).abs() < 0.03, "{share}");
    assert!(w
        .coflows
        .iter()
        .flat_map(|c| &c.flows)
        .all(|f| f.kind == FlowKind::Net));
}

#[test]
fn validation_names_the_field() {
    let check = |c: BaraatConfig| c.validate().unwrap_err().to_string();
    let d = BaraatConfig::default;
    assert_eq!(
        check(BaraatConfig { mids: 871, ..d() }),
        "mids: at most 870 (the racks that are not top racks), got 871"
    );
    assert_eq!(
        check(BaraatConfig {
            workers: 1200,
            ..d()
        }),
        "workers: at most 1159 fit in an aggregator's pod (29 racks of 40 hosts), got 1200"
    );
    assert_eq!(
        check(BaraatConfig {
            sizes: SizeModel::Analytics,
            pareto_shape: 1.0,
            ..d()
        }),
        "pareto_shape: must be above 1 (a finite mean), got 1"
    );
    assert_eq!(
        check(BaraatConfig {
            tree: Tree {
                racks_per_pod: 1,
                ..Tree::default()
            },
            ..d()
        }),
        "racks_per_pod: two-stage tasks need a top rack and at least one other rack per pod"
    );
}
