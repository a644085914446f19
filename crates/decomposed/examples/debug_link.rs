//! One link's simulation alone, with its packet counters: which flows were
//! dropped, timed out, and its ports' counters.
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
    )
    .unwrap();
    for (i, x) in s.fabric.links().iter().enumerate() {
        println!(
            "link {i} {:?} {} bps delay {:?}",
            x.kind,
            x.capacity.0,
            s.fabric.link_delay(LinkId(i as u32))
        );
    }
    let r =
        coflowkit_packet::simulate(&s.fabric, &s.workload, &[], &[], &cfg, &mut |_| {}).unwrap();
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
