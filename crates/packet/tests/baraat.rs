//! Baraat at packet level (scratch).

use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Fabric, Time, ValidWorkload, Workload};
use coflowkit_packet::{simulate, simulate_scheduled, PacketConfig, PacketResult};
use coflowkit_sched::SchedulerSpec;

fn workload(fabric: &Fabric, coflows: Vec<CoflowSpec>) -> ValidWorkload {
    Workload {
        n_hosts: fabric.n_hosts(),
        coflows,
    }
    .validate(fabric)
    .unwrap()
}

fn cfg(text: &str) -> PacketConfig {
    let mut c = PacketConfig::default();
    c.set_all(text).unwrap();
    c
}

fn scheduled(fabric: &Fabric, w: &ValidWorkload, spec: &str, knobs: &str) -> PacketResult {
    let spec = SchedulerSpec::parse(spec).unwrap();
    simulate_scheduled(fabric, w, &spec, &[], &cfg(knobs), &mut |_| {}).unwrap()
}

fn mean_cct_ms(r: &PacketResult) -> f64 {
    let c = &r.sim.coflows;
    c.iter().map(|c| (c.finish - c.arrival).0 as f64 / 1e6).sum::<f64>() / c.len() as f64
}

#[test]
fn scratch() {
    let fabric = Fabric::big_switch(4, BitsPerSec(1e9)).unwrap();
    for n in [1u64, 2, 4, 8] {
        let coflows = (0..n)
            .map(|i| {
                CoflowSpec::new(i, Time(0), (1..4).map(|s| flow(s, 0, 400_000)).collect())
            })
            .collect();
        let w = workload(&fabric, coflows);
        let b = scheduled(&fabric, &w, "baraat", "buffer=1MB");
        let bi = scheduled(&fabric, &w, "baraat:threshold=inf", "buffer=1MB");
        let d = simulate(&fabric, &w, &[], &[], &cfg("transport=dctcp,buffer=1MB"), &mut |_| {}).unwrap();
        println!("inf {:.3} dctcp {:.3}", mean_cct_ms(&bi), mean_cct_ms(&d));
        println!("{:?}", b.sim.coflows.iter().map(|c| c.finish.0 / 1000).collect::<Vec<_>>());
        println!("{:?}", bi.sim.coflows.iter().map(|c| c.finish.0 / 1000).collect::<Vec<_>>());
        let r = simulate(&fabric, &w, &[], &[], &cfg("transport=rcp,buffer=1MB"), &mut |_| {}).unwrap();
        let (mb, mr) = (mean_cct_ms(&b), mean_cct_ms(&r));
        println!("n={n} baraat {mb:.3} ms rcp {mr:.3} ms reduction {:.1}% {:?}", 100.0 * (1.0 - mb / mr), b.spc);
        println!("rcp drops {} timeouts {}", r.flow_stats.iter().map(|s| s.drops).sum::<u64>(), r.flow_stats.iter().map(|s| s.timeouts).sum::<u64>());
    }
}
