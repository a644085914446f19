//! One link's simulation alone, with its packet counters: which flows were
//! dropped, timed out, and its ports' counters; then each of its flows'
//! completion time three ways: in the link's simulation, with only the
//! link's flows on the whole fabric (their own paths), and in the full run.
//! Where the first two agree and the third differs, the link's simulation
//! is faithful and what it misses is the rest of the fabric's traffic.
//! `debug_link TOPOLOGY SIZES LOAD FLOWS OPTIONS LINK_NAME`

use coflowkit_decomposed::{linksim, route};
use coflowkit_model::LinkId;

mod common;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let common::Case {
        fabric,
        cfg,
        workload: w,
    } = common::case(&a);
    let routes = route::route(&fabric, &w, &[]);
    let flow_at: Vec<(u32, u32)> = w
        .coflows()
        .iter()
        .enumerate()
        .flat_map(|(c, x)| (0..x.flows.len() as u32).map(move |k| (c as u32, k)))
        .collect();
    let l = (0..fabric.n_links() as u32)
        .map(LinkId)
        .find(|&l| fabric.link_name(l) == a[5])
        .expect("a link of that name");
    let s = linksim::build(
        &fabric,
        &w,
        &cfg,
        &routes,
        &flow_at,
        l,
        linksim::Sources::Nic,
        None,
        false,
    )
    .unwrap();
    for (i, x) in s.part.fabric.links().iter().enumerate() {
        println!(
            "link {i} {:?} {} bps delay {:?}",
            x.kind,
            x.capacity.0,
            s.part.fabric.link_delay(LinkId(i as u32))
        );
    }
    let r = coflowkit_packet::simulate(
        &s.part.fabric,
        &s.part.workload,
        &[],
        &[],
        &cfg,
        &mut |_| {},
    )
    .unwrap();
    let rows = r.sim.flows.unwrap();
    for (n, st) in r.flow_stats.iter().enumerate() {
        if st.timeouts > 0 || st.drops > 0 {
            println!(
                "flow {} ({} B, from s{}): fct {} us, drops {}, timeouts {}, lost {}",
                s.flows[n],
                rows[n].bytes,
                rows[n].src,
                (rows[n].finish - rows[n].start).0 / 1000,
                st.drops,
                st.timeouts,
                st.timeouts_lost
            );
        }
    }
    for (name, p) in &r.ports {
        println!("{name}: {p:?}");
    }
    let full = coflowkit_packet::simulate(&fabric, &w, &[], &[], &cfg, &mut |_| {}).unwrap();
    for (name, p) in &full.ports {
        if name.starts_with(a[5].as_str()) {
            println!("full: {name}: {p:?}");
        }
    }
    let full_rows = full.sim.flows.as_ref().expect("every flow's row");
    let alone = alone_on_fabric(&fabric, &w, &cfg, &s.flows);
    println!("flow bytes start_us: link_sim_us / link's_flows_on_fabric_us / full_us");
    for (n, &i) in s.flows.iter().enumerate() {
        let us = |r: &coflowkit_sim::FlowResult| (r.finish - r.start).0 / 1000;
        println!(
            "flow {i} {} B {} us: {} / {} / {}",
            rows[n].bytes,
            rows[n].start.0 / 1000,
            us(&rows[n]),
            alone[&i],
            us(&full_rows[i as usize])
        );
    }
    for (n, &i) in s.flows.iter().enumerate() {
        let st = full.flow_stats[i as usize];
        if st.timeouts > 0 || st.drops > 0 || r.flow_stats[n].drops > 0 {
            println!(
                "full: flow {i}: drops {}, timeouts {}",
                st.drops, st.timeouts
            );
        }
    }
}

/// Each of `flows` (indices in `w`'s flow order) completion time (us) when
/// only they run, on the whole fabric.
fn alone_on_fabric(
    fabric: &coflowkit_model::Fabric,
    w: &coflowkit_model::ValidWorkload,
    cfg: &coflowkit_packet::PacketConfig,
    flows: &[u32],
) -> std::collections::HashMap<u32, u64> {
    let keep: std::collections::HashSet<u32> = flows.iter().copied().collect();
    let mut sub = coflowkit_model::Workload {
        n_hosts: w.n_hosts(),
        coflows: vec![],
    };
    let (mut index, mut kept) = (0u32, vec![]);
    for c in w.coflows() {
        let mut mine = c.clone();
        mine.flows.clear();
        for f in &c.flows {
            if keep.contains(&index) {
                mine.flows.push(*f);
                kept.push(index);
            }
            index += 1;
        }
        if !mine.flows.is_empty() {
            sub.coflows.push(mine);
        }
    }
    let sub = sub.validate(fabric).expect("a part of a valid workload");
    let r = coflowkit_packet::simulate(fabric, &sub, &[], &[], cfg, &mut |_| {}).unwrap();
    let rows = r.sim.flows.expect("every flow's row");
    kept.into_iter()
        .zip(rows.iter().map(|f| (f.finish - f.start).0 / 1000))
        .collect()
}
