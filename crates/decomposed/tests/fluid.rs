//! The fluid correction: its fluid times are the flow engine's `fair`
//! run's; its bottlenecks are the links a flow's share is decided at; a
//! lone flow still takes its packet-level time with it on; a run is
//! deterministic; the option parses or is refused by name.

mod common;

use coflowkit_decomposed::{fluid, prepare, route, DecomposedResult, Options};
use coflowkit_model::{
    flow, BitsPerSec, CoflowSpec, Fabric, FatTreeSpec, LeafSpineSpec, LinkId, Time, ValidWorkload,
    Workload,
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

/// `w`'s flows on `fabric` as the fluid view takes them: paths, sizes and
/// starts.
fn flows_of(fabric: &Fabric, w: &ValidWorkload) -> (Vec<Vec<LinkId>>, Vec<u64>, Vec<Time>) {
    let routes = route::route(fabric, w, &[]);
    let (mut bytes, mut start) = (vec![], vec![]);
    for c in w.coflows() {
        for f in &c.flows {
            bytes.push(f.bytes.0);
            start.push(Time(c.arrival.0 + f.delay.0));
        }
    }
    (routes.paths, bytes, start)
}

/// Where the options `fluid` pace the first flow of `w` (whose path has
/// four links) at each link of its path.
fn first_steps(fabric: &Fabric, w: &ValidWorkload, fluid: &str) -> Vec<u8> {
    let mut o = Options::default();
    o.set(fluid).unwrap();
    let cfg = PacketConfig::default();
    prepare(fabric, w, &[], &cfg, o).unwrap().paces().unwrap()[..4].to_vec()
}

/// The fluid view of `w` on `fabric`, as a decomposed run computes it.
fn fluid_of(fabric: &Fabric, w: &ValidWorkload) -> (fluid::Fluid, Vec<u64>) {
    let (paths, bytes, start) = flows_of(fabric, w);
    (fluid::run(fabric, &paths, &bytes, &start), bytes)
}

#[test]
fn the_books_do_not_depend_on_how_the_events_are_batched() {
    // The books' thread takes the events in batches: one event a batch
    // (every batch boundary, every batch sent back and reused), a few,
    // and the default (one batch for these 400 flows) give the same books
    // bit for bit.
    let fabric = leaf_spine();
    let w = websearch(&fabric, 400, 0.7);
    let (paths, bytes, start) = flows_of(&fabric, &w);
    let whole = fluid::run(&fabric, &paths, &bytes, &start);
    assert!(2 * bytes.len() < fluid::BATCH);
    for per_batch in [1, 7, 100] {
        let cut = fluid::run_batched(&fabric, &paths, &bytes, &start, per_batch);
        assert_eq!(cut.fct, whole.fct, "{per_batch} events a batch");
        assert_eq!(
            cut.bottleneck, whole.bottleneck,
            "{per_batch} events a batch"
        );
        assert_eq!(cut.held, whole.held, "{per_batch} events a batch");
        assert_eq!(cut.nic_room, whole.nic_room, "{per_batch} events a batch");
    }
    // Some flow is bottlenecked somewhere, so the books were kept.
    assert!(whole.bottleneck.values().iter().any(|&x| x > 0.5));
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
            let (paths, bytes, start) = flows_of(fabric, &w);
            let fast = fluid::run(fabric, &paths, &bytes, &start);
            let slow = fluid::run_reference(fabric, &paths, &bytes, &start);
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
                        &fast.bottleneck[i],
                        &slow.bottleneck[i]
                    );
                }
                // Shares of its lifetime: a few nanoseconds' rounding per
                // event, over its time.
                for (x, y) in fast.held[i].iter().zip(&slow.held[i]) {
                    assert!(
                        (x - y).abs() <= 1e-4 + 200.0 / b,
                        "{mix} {load}, flow {i}: held shares {:?} against {:?}",
                        &fast.held[i],
                        &slow.held[i]
                    );
                }
                // The same main bottleneck, or two whose shares are equal
                // but for rounding (a tie taken either way).
                let (m, n) = (fast.main_bottleneck(i), slow.main_bottleneck(i));
                if m != n {
                    let b = &slow.bottleneck[i];
                    let (m, n) = (m.unwrap(), n.unwrap());
                    assert!(
                        (b[m] - b[n]).abs() <= 1e-4,
                        "{mix} {load}, flow {i}: main bottleneck {m} against {n}, shares {b:?}"
                    );
                }
                // Bits a NIC sends in the times' slack, over the flow's time.
                let (x, y) = (fast.nic_room[i], slow.nic_room[i]);
                assert!(
                    (x - y).abs() <= 1e-6 * 10e9 + 10e9 * 20.0 / b,
                    "{mix} {load}, flow {i}: its NIC's room {x} bits/s against {y}"
                );
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
    assert_eq!(fl.nic_room[0], 10e9, "nothing else on its NIC");
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
        assert!((fl.nic_room[i] - 10e9).abs() < 1e3, "alone on its NIC");
    }
    // One host to two: each flow has half its NIC, the other the rest.
    // Then a third, twice as long, from the same host to a third host: it
    // shares the NIC three ways while the others run, then has it alone.
    let three = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: vec![CoflowSpec::new(
            1,
            Time(0),
            vec![
                flow(0, 4, 1_000_000),
                flow(0, 5, 1_000_000),
                flow(0, 6, 2_000_000),
            ],
        )],
    }
    .validate(&fabric)
    .unwrap();
    let (fl, _) = fluid_of(&fabric, &three);
    // The first two: 2.4 ms at a third each, the others two thirds.
    for i in 0..2 {
        assert_eq!(fl.fct[i], 2_400_000);
        let room = fl.nic_room[i];
        assert!((room - 10e9 / 3.0).abs() < 1e3, "{room}");
    }
    // The third: 1 MB in the first 2.4 ms, 1 MB alone in 0.8 ms; the others
    // sent 2 MB in its 3.2 ms.
    assert_eq!(fl.fct[2], 3_200_000);
    let room = fl.nic_room[2];
    assert!((room - (10e9 - 16e6 / 3.2e-3)).abs() < 1e3, "{room}");
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
        for opts in [
            "fluid=pace+base",
            "fluid=pace-up",
            "fluid=pace+nic",
            "fluid=pace+host",
            "fluid=pace-rest",
        ] {
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
fn pace_host_sends_a_flow_its_port_holds_at_what_its_host_leaves_it() {
    // Host 0 sends to hosts 4, 8 and 9; hosts 12-14 also send to host 4.
    // The port to host 4 holds its four flows at 2.5 Gbit/s; host 0's two
    // others (longer) take 3.75 each of its NIC while the first runs, which
    // leaves it 2.5.
    let fabric = leaf_spine();
    let mb = 1_000_000;
    let w = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: vec![CoflowSpec::new(
            1,
            Time(0),
            vec![
                flow(0, 4, mb),
                flow(0, 8, 2 * mb),
                flow(0, 9, 2 * mb),
                flow(12, 4, mb),
                flow(13, 4, mb),
                flow(14, 4, mb),
            ],
        )],
    }
    .validate(&fabric)
    .unwrap();
    let (fl, _) = fluid_of(&fabric, &w);
    assert_eq!(fl.main_bottleneck(0), Some(3), "{:?}", &fl.bottleneck[0]);
    let room = fl.nic_room[0];
    assert!((room - 2.5e9).abs() < 1e3, "{room}");
    let steps = |fluid: &str| first_steps(&fabric, &w, fluid);
    // 2.5 Gbit/s is four half octaves below the NIC. `pace` paces it
    // where it is not held (the spine links), `pace+host` at its port too;
    // its own NIC never.
    assert_eq!(steps("fluid=pace"), [0, 4, 4, 0]);
    assert_eq!(steps("fluid=pace+host"), [0, 4, 4, 4]);
}

#[test]
fn pace_rest_sends_a_flow_at_each_link_as_the_rest_of_the_fabric_lets_it() {
    // Host 0 sends 1 MB to host 4 beside two long flows (to 8 and 9): a
    // third of its NIC each. From 0.1 ms hosts 12-14 send 600 KB each to
    // host 4: the port to host 4 holds its four flows at 2.5 Gbit/s for
    // 1.92 ms; then the first has its third of the NIC again.
    let fabric = leaf_spine();
    let x = |src: u32, dst: u32, bytes: u64, at: u64| {
        CoflowSpec::new(
            u64::from(src) * 100 + u64::from(dst),
            Time(at),
            vec![flow(src, dst, bytes)],
        )
    };
    let w = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: vec![
            x(0, 4, 1_000_000, 0),
            x(0, 8, 10_000_000, 0),
            x(0, 9, 10_000_000, 0),
            x(12, 4, 600_000, 100_000),
            x(13, 4, 600_000, 100_000),
            x(14, 4, 600_000, 100_000),
        ],
    }
    .validate(&fabric)
    .unwrap();
    let (fl, _) = fluid_of(&fabric, &w);
    // 1/3 Mbit by 0.1 ms, 4.8 Mbit more by 2.02 ms, the rest at a third.
    assert!(
        (fl.fct[0] as f64 - 2_880_000.0).abs() < 10.0,
        "{}",
        fl.fct[0]
    );
    let (b, h) = (fl.bottleneck[0][3], fl.held[0][3]);
    assert!(
        (b - 0.6).abs() < 1e-6 && (h - 1.92 / 2.88).abs() < 1e-6,
        "{b} {h}"
    );
    // Outside those 1.92 ms the rest of the fabric let it have 3.33
    // Gbit/s; never held at the spine links, their rest is its mean rate.
    let rest = fl.rest_rate(0, 3, 1_000_000).unwrap();
    assert!((rest - 10e9 / 3.0).abs() < 1e3, "{rest}");
    let mean = fl.mean_rate(0, 1_000_000).unwrap();
    assert!((fl.rest_rate(0, 1, 1_000_000).unwrap() - mean).abs() < 1e-3);
    let steps = |fluid: &str| first_steps(&fabric, &w, fluid);
    // 2.78 Gbit/s (its mean) is four half octaves below the NIC, 3.33 three.
    // `pace` leaves it alone at the port that holds it for most of its
    // bytes; `pace-rest` paces it there too, as it arrives when the port
    // does not hold it.
    assert_eq!(steps("fluid=pace"), [0, 4, 4, 0]);
    assert_eq!(steps("fluid=pace-rest"), [0, 4, 4, 3]);
}

#[test]
fn without_the_fluid_correction_no_one_is_paced() {
    let fabric = leaf_spine();
    let w = websearch(&fabric, 120, 0.6);
    let cfg = PacketConfig::default();
    let on = prepare(&fabric, &w, &[], &cfg, Options::default()).unwrap();
    assert!(on
        .paces()
        .expect("the default options pace")
        .iter()
        .any(|&s| s > 0));
    let mut off = Options::default();
    off.set("fluid=off").unwrap();
    assert!(prepare(&fabric, &w, &[], &cfg, off)
        .unwrap()
        .paces()
        .is_none());
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
    o.set("fluid=pace+host").unwrap();
    assert!(o.fluid.host && !o.fluid.nic && o.fluid.pace == coflowkit_decomposed::Pace::All);
    o.set("fluid=pace-rest").unwrap();
    assert_eq!(o.fluid.pace, coflowkit_decomposed::Pace::Rest);
    for bad in [
        "fluid=host",
        "fluid=pace-up+host",
        "fluid=pace+host+host",
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
    // The part that is wrong is named, and why.
    for (bad, why) in [
        ("fluid=fast", "\"fast\" is not a part of fluid"),
        ("fluid=", "\"\" is not a part of fluid"),
        ("fluid=pace+host+host", "\"host\" cannot join here"),
        ("fluid=pace+pace-up", "\"pace-up\" cannot join here"),
        ("fluid=pace-rest+pace", "\"pace\" cannot join here"),
        ("fluid=off+base", "\"off\" cannot join here"),
    ] {
        let e = o.set(bad).unwrap_err().to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
}
