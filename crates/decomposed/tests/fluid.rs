//! The fluid correction: its fluid times are the flow engine's `fair`
//! run's; its bottlenecks are the links a flow's share is decided at; a
//! lone flow still takes its packet-level time with it on; a run is
//! deterministic; the option parses or is refused by name.

mod common;

use coflowkit_decomposed::{fluid, prepare, prepare_paced, route, DecomposedResult, Options};
use coflowkit_model::{
    flow, BitsPerSec, CoflowSpec, Fabric, FatTreeSpec, LeafSpineSpec, Time, ValidWorkload, Workload,
};
use coflowkit_packet::PacketConfig;
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{SimOptions, Simulation};
use coflowkit_workload::empirical::{generate, EmpiricalConfig};
use common::run;

fn leaf_spine() -> Fabric {
    Fabric::leaf_spine(&LeafSpineSpec {
        leaves: 4,
        spines: 2,
        hosts_per_leaf: 4,
        host_rate: BitsPerSec(10e9),
        spine_rate: Some(BitsPerSec(20e9)),
    })
    .unwrap()
}

fn websearch(fabric: &Fabric, n_flows: usize, load: f64) -> ValidWorkload {
    generate(&EmpiricalConfig {
        n_hosts: fabric.n_hosts(),
        n_flows,
        load,
        capacity_bps: BitsPerSec(10e9),
        ..EmpiricalConfig::websearch()
    })
    .validate(fabric)
    .unwrap()
}

/// The fluid view of `w` on `fabric`, as a decomposed run computes it.
fn fluid_of(fabric: &Fabric, w: &ValidWorkload) -> (fluid::Fluid, Vec<u64>) {
    let routes = route::route(fabric, w, &[]);
    let mut bytes = vec![];
    let mut start = vec![];
    for c in w.coflows() {
        for f in &c.flows {
            bytes.push(f.bytes.0);
            start.push(Time(c.arrival.0 + f.delay.0));
        }
    }
    (fluid::run(fabric, &routes.paths, &bytes, &start), bytes)
}

#[test]
fn fluid_times_are_the_flow_engines_fair_sharing() {
    // The flow engine (exact, event-driven, its own incremental max-min)
    // is the reference; the fluid view re-solves every event from scratch.
    for fabric in [
        leaf_spine(),
        Fabric::fat_tree(&FatTreeSpec {
            k: 4,
            link_rate: BitsPerSec(10e9),
        })
        .unwrap(),
    ] {
        let w = websearch(&fabric, 400, 0.7);
        let (fl, bytes) = fluid_of(&fabric, &w);
        let s = build(
            &SchedulerSpec::parse("fair").unwrap(),
            &WorkloadHints::of(&w),
        )
        .unwrap();
        let r = Simulation::new(
            fabric.clone(),
            &w,
            s,
            SimOptions {
                per_flow: true,
                ..SimOptions::default()
            },
        )
        .run(&mut |_| {})
        .unwrap();
        let rows = r.flows.unwrap();
        assert_eq!(rows.len(), fl.fct.len());
        for (i, f) in rows.iter().enumerate() {
            let want = (f.finish - f.start).0 as f64;
            let got = fl.fct[i] as f64;
            assert!(
                (want - got).abs() <= 1e-6 * want + 1_000.0,
                "flow {i} ({} B): fair {want} ns, fluid {got} ns",
                bytes[i]
            );
        }
    }
}

#[test]
fn the_incremental_fluid_run_is_the_one_solved_from_scratch() {
    // `run` keeps rates incrementally and sums per path; `run_reference`
    // re-solves every event and steps every flow. Same times to within a
    // nanosecond's rounding per event, same bottleneck shares.
    let fabrics = [
        leaf_spine(),
        Fabric::fat_tree(&FatTreeSpec {
            k: 4,
            link_rate: BitsPerSec(10e9),
        })
        .unwrap(),
    ];
    let mut cases = 0;
    for fabric in &fabrics {
        for (mix, load, n_flows, seed) in [
            ("websearch", 0.3, 300, 1),
            ("websearch", 0.7, 500, 2),
            ("websearch", 0.9, 400, 3),
            ("datamining", 0.5, 400, 4),
            ("datamining", 0.8, 300, 5),
        ] {
            let base = if mix == "websearch" {
                EmpiricalConfig::websearch()
            } else {
                EmpiricalConfig::datamining()
            };
            let w = generate(&EmpiricalConfig {
                n_hosts: fabric.n_hosts(),
                n_flows,
                load,
                seed,
                capacity_bps: BitsPerSec(10e9),
                ..base
            })
            .validate(fabric)
            .unwrap();
            let routes = route::route(fabric, &w, &[]);
            let (mut bytes, mut start) = (vec![], vec![]);
            for c in w.coflows() {
                for f in &c.flows {
                    bytes.push(f.bytes.0);
                    start.push(Time(c.arrival.0 + f.delay.0));
                }
            }
            let fast = fluid::run(fabric, &routes.paths, &bytes, &start);
            let slow = fluid::run_reference(fabric, &routes.paths, &bytes, &start);
            for i in 0..bytes.len() {
                let (a, b) = (fast.fct[i] as f64, slow.fct[i] as f64);
                assert!(
                    (a - b).abs() <= 1e-6 * b + 20.0,
                    "{mix} {load}, flow {i} ({} B): incremental {a} ns, reference {b} ns",
                    bytes[i]
                );
                for (x, y) in fast.bottleneck[i].iter().zip(&slow.bottleneck[i]) {
                    assert!(
                        (x - y).abs() <= 1e-4,
                        "{mix} {load}, flow {i}: bottleneck shares {:?} against {:?}",
                        fast.bottleneck[i],
                        slow.bottleneck[i]
                    );
                }
                assert_eq!(fast.main_bottleneck(i), slow.main_bottleneck(i), "flow {i}");
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 10);
}

#[test]
fn a_flow_is_bottlenecked_where_its_share_is_decided() {
    let fabric = leaf_spine();
    // Alone: every 10 Gbit/s hop holds it (its NIC and the far host's
    // port); the 20 Gbit/s spine links do not.
    let one = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: vec![CoflowSpec::new(1, Time(0), vec![flow(0, 4, 1_000_000)])],
    }
    .validate(&fabric)
    .unwrap();
    let (fl, _) = fluid_of(&fabric, &one);
    let b = &fl.bottleneck[0];
    assert_eq!(b.len(), 4);
    assert!(
        (b[0] - 1.0).abs() < 1e-9 && (b[3] - 1.0).abs() < 1e-9,
        "{b:?}"
    );
    assert!(b[1] == 0.0 && b[2] == 0.0, "{b:?}");
    assert_eq!(fl.fct[0], 800_000);
    // Two hosts into one: the shared port to host 4 holds both, at half
    // the rate, for as long as both send.
    let two = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: vec![CoflowSpec::new(
            1,
            Time(0),
            vec![flow(0, 4, 1_000_000), flow(1, 4, 1_000_000)],
        )],
    }
    .validate(&fabric)
    .unwrap();
    let (fl, bytes) = fluid_of(&fabric, &two);
    for (i, &size) in bytes.iter().enumerate() {
        let b = &fl.bottleneck[i];
        assert!((b[3] - 1.0).abs() < 1e-9 && b[0] == 0.0, "{b:?}");
        assert_eq!(fl.main_bottleneck(i), Some(3));
        assert_eq!(fl.fct[i], 1_600_000);
        let r = fl.mean_rate(i, size).unwrap();
        assert!((r - 5e9).abs() < 1e3, "{r}");
    }
}

#[test]
fn a_lone_flow_takes_its_packet_level_time_with_the_correction_on() {
    let fabric = leaf_spine();
    for bytes in [1_000, 100_000, 3_000_000] {
        let w = Workload {
            n_hosts: fabric.n_hosts(),
            coflows: vec![CoflowSpec::new(1, Time(0), vec![flow(0, 5, bytes)])],
        }
        .validate(&fabric)
        .unwrap();
        let p = coflowkit_packet::simulate(
            &fabric,
            &w,
            &[],
            &[],
            &PacketConfig::default(),
            &mut |_| {},
        )
        .unwrap();
        let a = &p.sim.flows.unwrap()[0];
        let want = (a.finish - a.start).0 as f64;
        for opts in ["fluid=pace+base", "fluid=pace-up", "fluid=pace+nic"] {
            let d = run(&fabric, &w, opts, 1);
            let b = &d.sim.flows.unwrap()[0];
            let got = (b.finish - b.start).0 as f64;
            assert!(
                (want - got).abs() <= 0.01 * want + 50.0,
                "{opts}, {bytes} B: packet {want} ns, decomposed {got} ns"
            );
        }
    }
}

#[test]
fn a_corrected_run_is_deterministic_and_paces_someone() {
    let fabric = leaf_spine();
    let w = websearch(&fabric, 120, 0.6);
    let times = |d: &DecomposedResult| -> Vec<(Time, Time)> {
        d.sim
            .flows
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| (f.start, f.finish))
            .collect()
    };
    let a = run(&fabric, &w, "fluid=pace+base", 2);
    let b = run(&fabric, &w, "fluid=pace+base", 1);
    assert_eq!(times(&a), times(&b));
    // Pacing changes what the links' simulations see (their packets), so
    // some flow was paced.
    let off = run(&fabric, &w, "fluid=off", 2);
    assert_ne!(a.packets, off.packets);
    assert!(a.alone_paths > off.alone_paths);
    // Holding flows back in their NICs' simulations too adds paths (a
    // NIC followed by a link at a pacing rate) and changes those runs.
    let nic = run(&fabric, &w, "fluid=pace+nic+base", 2);
    assert_eq!(
        times(&nic),
        times(&run(&fabric, &w, "fluid=pace+nic+base", 1))
    );
    assert_ne!(nic.packets, a.packets);
    assert!(nic.alone_paths > a.alone_paths);
}

#[test]
fn a_plan_prepared_with_handed_over_paces_is_the_same_plan() {
    // A Dask link task takes the pacing its point's task found instead of
    // running the fluid view again: the same link simulations.
    let fabric = leaf_spine();
    let w = websearch(&fabric, 120, 0.6);
    let cfg = PacketConfig::default();
    let opts = Options::default();
    let a = prepare(&fabric, &w, &[], &cfg, opts).unwrap();
    let paces = a.paces().expect("the default options pace");
    assert!(paces.iter().any(|&s| s > 0), "someone is paced");
    let b = prepare_paced(&fabric, &w, &[], &cfg, opts, Some(paces.clone())).unwrap();
    assert_eq!(b.paces().as_ref(), Some(&paces));
    assert_eq!(a.sims.len(), b.sims.len());
    for (x, y) in a.sims.iter().zip(&b.sims) {
        assert_eq!(x.flows, y.flows);
        assert_eq!(x.paths, y.paths);
    }
    let mut off = Options::default();
    off.set("fluid=off").unwrap();
    assert!(prepare(&fabric, &w, &[], &cfg, off)
        .unwrap()
        .paces()
        .is_none());
    // Paces of another run are refused, naming them.
    for bad in [paces[1..].to_vec(), vec![200; paces.len()]] {
        let e = prepare_paced(&fabric, &w, &[], &cfg, opts, Some(bad))
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("paces:"), "{e}");
    }
}

#[test]
fn the_fluid_option_parses_or_is_refused_naming_the_item() {
    let mut o = Options::default();
    assert_eq!(o.fluid, coflowkit_decomposed::FluidUse::PACE);
    o.set("fluid=pace+base").unwrap();
    assert!(o.fluid.base && o.fluid.pace == coflowkit_decomposed::Pace::All);
    o.set("fluid=off").unwrap();
    assert!(!o.fluid.is_on());
    o.set("fluid=pace-up").unwrap();
    assert_eq!(o.fluid.pace, coflowkit_decomposed::Pace::Up);
    o.set("fluid=pace+nic+base").unwrap();
    assert!(o.fluid.nic && o.fluid.base && o.fluid.pace == coflowkit_decomposed::Pace::All);
    for bad in [
        "fluid=fast",
        "fluid=pace+pace-up",
        "fluid=off+base",
        "fluid=",
        "fluid=nic",
        "fluid=pace-up+nic",
        "fluid=pace+nic+nic",
    ] {
        let e = o.set(bad).unwrap_err().to_string();
        assert!(e.contains(&format!("{bad:?}")), "{bad}: {e}");
        assert!(e.contains("fluid=off|pace"), "{bad}: {e}");
    }
}
