//! Each flow's path as the packet engine routes it (per-flow ECMP by the
//! fabric's hash of the flow's key, or a pinned path), and the flows each
//! link carries.

use coflowkit_model::{Fabric, FlowKey, LinkId, ValidWorkload};

/// Every flow's path (its links, source NIC first), in the workload's flow
/// order, and per link the flows that cross it (indices into that order).
pub struct Routes {
    /// Each flow's links.
    pub paths: Vec<Vec<LinkId>>,
    /// Per link id, the flows crossing it, in flow order.
    pub on_link: Vec<Vec<u32>>,
}

/// Routes every flow of `workload` on `fabric`: path number `pinned[i]`
/// when given, else the ECMP hash's choice, as the packet engine does.
pub fn route(fabric: &Fabric, workload: &ValidWorkload, pinned: &[Option<u32>]) -> Routes {
    let mut paths = Vec::with_capacity(workload.n_flows());
    let mut on_link = vec![vec![]; fabric.n_links()];
    for c in workload.coflows() {
        for (k, f) in c.flows.iter().enumerate() {
            let i = paths.len();
            let key = FlowKey {
                coflow: c.id.0,
                index: k as u32,
            };
            let choice = pinned
                .get(i)
                .copied()
                .flatten()
                .unwrap_or_else(|| fabric.path_choice(f.src, f.dst, key));
            let path = fabric.path(f.src, f.dst, choice);
            for l in &path {
                on_link[l.0 as usize].push(i as u32);
            }
            paths.push(path);
        }
    }
    Routes { paths, on_link }
}
