//! A flow with nothing else on the fabric: its decomposed estimate is its
//! packet-level time (each link's simulation costs it nothing beyond its
//! time alone there).

use coflowkit_decomposed::{simulate, Options, Run};
use coflowkit_model::{
    flow, BitsPerSec, CoflowSpec, Fabric, FatTreeSpec, LeafSpineSpec, Time, Workload,
};
use coflowkit_packet::PacketConfig;

fn check(fabric: &Fabric, src: u32, dst: u32, bytes: u64) {
    check_with(fabric, src, dst, bytes, "");
}

fn check_with(fabric: &Fabric, src: u32, dst: u32, bytes: u64, knobs: &str) {
    let mut cfg = PacketConfig::default();
    cfg.set_all(knobs).unwrap();
    let w = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: vec![CoflowSpec::new(1, Time(0), vec![flow(src, dst, bytes)])],
    }
    .validate(fabric)
    .unwrap();
    let p = coflowkit_packet::simulate(fabric, &w, &[], &[], &cfg, &mut |_| {}).unwrap();
    let d = simulate(
        fabric,
        &w,
        &Run::Transport,
        &[],
        &cfg,
        Options {
            threads: 1,
            ..Options::default()
        },
        &mut |_, _| {},
    )
    .unwrap();
    let (a, b) = (&p.sim.flows.unwrap()[0], &d.sim.flows.unwrap()[0]);
    let (fa, fb) = ((a.finish - a.start).0 as f64, (b.finish - b.start).0 as f64);
    assert!(
        (fa - fb).abs() <= 0.01 * fa + 50.0,
        "{src}->{dst} {bytes} B, {knobs:?}: packet {fa} ns, decomposed {fb} ns"
    );
}

/// Two leaves of two 10 Gbit/s hosts, two 40 Gbit/s spines.
fn leaf_spine() -> Fabric {
    Fabric::leaf_spine(&LeafSpineSpec {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 2,
        host_rate: BitsPerSec(10e9),
        spine_rate: Some(BitsPerSec(40e9)),
    })
    .unwrap()
}

#[test]
fn a_lone_flow_takes_its_packet_level_time() {
    let ls = leaf_spine();
    let ft = Fabric::fat_tree(&FatTreeSpec {
        k: 4,
        link_rate: BitsPerSec(10e9),
    })
    .unwrap();
    for bytes in [1_000, 14_600, 100_000, 1_000_000, 5_000_000] {
        check(&ls, 0, 1, bytes);
        check(&ls, 0, 3, bytes);
        check(&ft, 0, 15, bytes);
        check(&ft, 0, 2, bytes);
    }
}

#[test]
fn a_lone_flow_past_the_measured_sizes_takes_its_packet_level_time() {
    // Sizes past `alone::LINEAR` are extrapolated from the grid's last
    // step: a lone flow is at its path's rate by then, its slow start and
    // its first losses (TCP filling a buffer) behind it.
    use coflowkit_decomposed::alone::LINEAR;
    let ls = leaf_spine();
    for knobs in [
        "",
        "tsq=32KB,buffer=1MB",
        "transport=tcp",
        "transport=tcp,buffer=1MB",
    ] {
        for bytes in [LINEAR + 1, 3 * LINEAR, 12 * LINEAR] {
            check_with(&ls, 0, 3, bytes, knobs);
        }
    }
}

#[test]
fn dependencies_barriers_and_compute_stages_are_refused_naming_the_coflow() {
    use coflowkit_model::{compute, DepKind, Dependency};
    let fabric = Fabric::big_switch(4, BitsPerSec(10e9))
        .unwrap()
        .with_cpus(BitsPerSec(1e9))
        .unwrap();
    let mut child = CoflowSpec::new(2, Time(0), vec![flow(1, 2, 1_000)]);
    child.parents.push(Dependency {
        parent: coflowkit_model::CoflowId(1),
        kind: DepKind::StartsAfter,
    });
    let cases = [
        (
            vec![CoflowSpec::new(1, Time(0), vec![flow(0, 1, 1_000)]), child],
            "coflow 2 depends",
        ),
        (
            vec![CoflowSpec::new(
                3,
                Time(0),
                vec![
                    flow(0, 1, 1_000).in_group(0),
                    flow(0, 2, 1).in_group(1).after(0),
                ],
            )],
            "coflow 3 flow 1 waits",
        ),
        (
            vec![CoflowSpec::new(4, Time(0), vec![compute(0, 10)])],
            "coflow 4 flow 0 is a compute stage",
        ),
    ];
    for (coflows, want) in cases {
        let w = Workload {
            n_hosts: 4,
            coflows,
        }
        .validate(&fabric)
        .unwrap();
        let e = simulate(
            &fabric,
            &w,
            &Run::Transport,
            &[],
            &PacketConfig::default(),
            Options::default(),
            &mut |_, _| {},
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with(want), "{e}");
    }
}
