//! The fluid view of a decomposed run: every flow on its own path at its
//! per-flow max-min fair rate over the whole fabric (what DCTCP and TCP
//! approximate, and what the flow engine's `fair` scheduler gives),
//! recomputed at every start and completion.
//!
//! Besides each flow's fluid completion time it keeps, per flow and per
//! link of its path, the share of the flow's bytes sent while that link
//! was one of its bottlenecks (a saturated link on which no flow gets a
//! higher rate). A link's simulation uses it to send a flow that the
//! fabric holds back elsewhere as gently as the fabric would (m3's idea,
//! Li et al., SIGCOMM 2024, with no learned model).
//!
//! Rates are solved by [`coflowkit_alloc::MaxMin`], the flows of one path
//! as one demand; completion instants are kept in whole nanoseconds
//! (rounded up, as the flow engine does), so a run is deterministic. The
//! fluid times equal the flow engine's `fair` run to within its own
//! rounding (test `crates/decomposed/tests/fluid.rs`).

use coflowkit_alloc::MaxMin;
use coflowkit_model::{Fabric, LinkId, Time};
use std::collections::HashMap;

/// A link is saturated when its flows use this share of it or more, and
/// a flow is bottlenecked there when no flow on it gets more than this
/// share above its own rate.
const TIGHT: f64 = 1.0 - 1e-9;

/// Per flow, what the fluid run found.
#[derive(Debug, Clone, Default)]
pub struct Fluid {
    /// Completion time (ns) of each flow, from its start; 0 for a
    /// zero-byte flow.
    pub fct: Vec<u64>,
    /// Per flow, per link of its path (in path order), the share of its
    /// bytes sent while that link was a bottleneck of it (several links
    /// can be at once, so the shares of a path can add up past 1).
    pub bottleneck: Vec<Vec<f64>>,
}

impl Fluid {
    /// The flow's mean rate over its fluid lifetime (bits/s), or `None`
    /// for a zero-byte flow.
    pub fn mean_rate(&self, i: usize, bytes: u64) -> Option<f64> {
        (bytes > 0 && self.fct[i] > 0).then(|| bytes as f64 * 8e9 / self.fct[i] as f64)
    }

    /// The position in its path of the link where flow `i` spent most of
    /// its bytes bottlenecked (the first of equals).
    pub fn main_bottleneck(&self, i: usize) -> Option<usize> {
        let b = &self.bottleneck[i];
        (0..b.len()).fold(None, |best: Option<usize>, k| match best {
            Some(j) if b[j] >= b[k] => Some(j),
            _ => Some(k),
        })
    }
}

/// Runs the flows (`paths`, `bytes`, `start`: per flow, in one order) at
/// their max-min fair rates on `fabric`'s link capacities.
pub fn run(fabric: &Fabric, paths: &[Vec<LinkId>], bytes: &[u64], start: &[Time]) -> Fluid {
    let n = bytes.len();
    let cap: Vec<f64> = fabric.links().iter().map(|l| l.capacity.0).collect();
    let mut fct = vec![0u64; n];
    let mut bottleneck: Vec<Vec<f64>> = paths.iter().map(|p| vec![0.0; p.len()]).collect();
    // Flows by start, in flow order within an instant.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (start[i], i));
    let mut next = 0usize;
    // Active flows: remaining bits, rate (bits/s), completion instant.
    let mut left = vec![0.0f64; n];
    let mut rate = vec![0.0f64; n];
    let mut due = vec![Time::NEVER; n];
    let mut active: Vec<usize> = vec![];
    let mut solver = MaxMin::new(cap.len());
    // Each flow's path as an id, the distinct paths in their order (what
    // the solver's demands are pushed in), and per-event buffers.
    let mut sorted: Vec<&[LinkId]> = paths.iter().map(|p| &p[..]).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let rank: HashMap<&[LinkId], u32> = sorted
        .iter()
        .enumerate()
        .map(|(k, p)| (*p, k as u32))
        .collect();
    let path_id: Vec<u32> = paths.iter().map(|p| rank[&p[..]]).collect();
    let distinct = sorted;
    let mut count = vec![0u32; distinct.len()];
    let mut demand_of = vec![0u32; distinct.len()];
    let mut used: Vec<u32> = vec![];
    let mut residual = cap.clone();
    let mut top = vec![0.0f64; cap.len()];
    let mut touched: Vec<u32> = vec![];
    let mut now = Time(0);
    loop {
        let t_start = order.get(next).map_or(Time::NEVER, |&i| start[i]);
        let t_done = active.iter().map(|&i| due[i]).min().unwrap_or(Time::NEVER);
        let t = t_start.min(t_done);
        if t == Time::NEVER {
            break;
        }
        // Progress up to t at the rates of the last interval.
        let dt = (t.0 - now.0) as f64 / 1e9;
        for &i in &active {
            left[i] -= rate[i] * dt;
        }
        now = t;
        // Completions due now (within a nanosecond's worth of bits).
        active.retain(|&i| {
            if due[i] <= t || left[i] <= rate[i] * 1e-9 {
                fct[i] = t.0 - start[i].0;
                false
            } else {
                true
            }
        });
        while next < n && start[order[next]] == t {
            let i = order[next];
            next += 1;
            if bytes[i] == 0 {
                continue;
            }
            left[i] = bytes[i] as f64 * 8.0;
            active.push(i);
        }
        active.sort_unstable();
        // New rates: one demand per distinct path, pushed in the paths'
        // order (their ids are ranks in it).
        solver.clear();
        used.clear();
        for &i in &active {
            let k = path_id[i] as usize;
            if count[k] == 0 {
                used.push(k as u32);
            }
            count[k] += 1;
        }
        used.sort_unstable();
        for (d, &k) in used.iter().enumerate() {
            demand_of[k as usize] = d as u32;
            solver.push(
                distinct[k as usize].iter().copied(),
                1.0,
                count[k as usize],
                f64::INFINITY,
            );
            count[k as usize] = 0;
        }
        residual.copy_from_slice(&cap);
        let r = solver.solve(&mut residual).to_vec();
        // Each link's highest rate, for the bottlenecks.
        for &l in &touched {
            top[l as usize] = 0.0;
        }
        touched.clear();
        for (d, &k) in used.iter().enumerate() {
            for &l in distinct[k as usize].iter() {
                let m = &mut top[l.0 as usize];
                if *m == 0.0 {
                    touched.push(l.0);
                }
                *m = m.max(r[d]);
            }
        }
        for &i in &active {
            let ri = r[demand_of[path_id[i] as usize] as usize];
            rate[i] = ri;
            due[i] = if ri > 0.0 {
                Time(now.0 + (left[i] / ri * 1e9).ceil().max(1.0) as u64)
            } else {
                Time::NEVER
            };
        }
        // Each flow's bottlenecks until the next event (the next start or
        // completion, where the rates may change), charged by the share of
        // its bytes it sends until then.
        let t_next = order
            .get(next)
            .map_or(Time::NEVER, |&i| start[i])
            .min(active.iter().map(|&i| due[i]).min().unwrap_or(Time::NEVER));
        if t_next == Time::NEVER {
            continue;
        }
        let span = (t_next.0 - now.0) as f64 / 1e9;
        for &i in &active {
            let ri = r[demand_of[path_id[i] as usize] as usize];
            let sent = (ri * span).min(left[i]) / (bytes[i] as f64 * 8.0);
            for (pos, l) in paths[i].iter().enumerate() {
                let li = l.0 as usize;
                let saturated = residual[li] <= cap[li] * (1.0 - TIGHT);
                if saturated && ri >= top[li] * TIGHT {
                    bottleneck[i][pos] += sent;
                }
            }
        }
    }
    Fluid { fct, bottleneck }
}
