//! The fluid view of a decomposed run: every flow on its own path at its
//! per-flow max-min fair rate over the whole fabric (what DCTCP and TCP
//! approximate, and what the flow engine's `fair` scheduler gives),
//! brought up to date at every start and completion.
//!
//! Besides each flow's fluid completion time it keeps, per flow and per
//! link of its path, the share of the flow's bytes sent while that link
//! was one of its bottlenecks (a saturated link on which no flow gets a
//! higher rate). A link's simulation uses it to send a flow that the
//! fabric holds back elsewhere as gently as the fabric would (m3's idea,
//! Li et al., SIGCOMM 2024, with no learned model).
//!
//! [`run`] keeps the rates with [`coflowkit_alloc::IncrementalMaxMin`], the
//! flows of one path as one demand, so an event costs what it changes, not
//! every flow in progress (a fabric of thousands of hosts has millions of
//! flows and tens of thousands in progress at once). Everything per flow is
//! kept per path instead and read as a difference: a path's flows all run
//! at its one per-flow rate, so the bits each has been served since the run
//! began (`served`), and those served while each link of the path was a
//! bottleneck, are the same for all of them; a flow notes both when it
//! starts and ends when its path has served its bytes since. A link's
//! saturation comes from the solver's kept load, its highest rate from an
//! ordered set of its paths' rates, and a path's bottleneck flags are
//! looked at again only where its rate, or a link's saturation or highest
//! rate, changed. [`run_reference`] is the same view solved from scratch at
//! every event and every flow stepped at every event: the slow reference
//! `run` is checked against (test `crates/decomposed/tests/fluid.rs`).
//!
//! Completion instants are kept in whole nanoseconds (rounded up, as the
//! flow engine does), so a run is deterministic. The fluid times equal the
//! flow engine's `fair` run to within its own rounding (same test).

use coflowkit_alloc::{IncrementalMaxMin, MaxMin};
use coflowkit_model::{Fabric, LinkId, Time};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

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
    /// Per flow, the mean rate (bits/s) its NIC had left beyond its host's
    /// other flows while it ran: the NIC's capacity less their mean total
    /// rate over its fluid lifetime (the NIC's capacity for a zero-byte
    /// flow). What its host lets it send at, whatever holds it back
    /// downstream.
    pub nic_room: Vec<f64>,
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

/// [`run`] solved from scratch at every event: the slow reference.
pub fn run_reference(
    fabric: &Fabric,
    paths: &[Vec<LinkId>],
    bytes: &[u64],
    start: &[Time],
) -> Fluid {
    let n = bytes.len();
    let cap: Vec<f64> = fabric.links().iter().map(|l| l.capacity.0).collect();
    let mut fct = vec![0u64; n];
    let mut bottleneck: Vec<Vec<f64>> = paths.iter().map(|p| vec![0.0; p.len()]).collect();
    let mut nic_room: Vec<f64> = paths.iter().map(|p| nic_cap(&cap, p)).collect();
    // Bits each flow's host's other flows sent through its NIC meanwhile.
    let mut others = vec![0.0f64; n];
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
    let (path_id, distinct) = intern(paths);
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
                nic_room[i] = room(nic_cap(&cap, &paths[i]), others[i], fct[i]);
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
            let nic = paths[i][0].0 as usize;
            others[i] += (cap[nic] - residual[nic] - ri).max(0.0) * span;
            for (pos, l) in paths[i].iter().enumerate() {
                let li = l.0 as usize;
                let saturated = residual[li] <= cap[li] * (1.0 - TIGHT);
                if saturated && ri >= top[li] * TIGHT {
                    bottleneck[i][pos] += sent;
                }
            }
        }
    }
    Fluid {
        fct,
        bottleneck,
        nic_room,
    }
}

/// The capacity (bits/s) of a path's first link, its source's NIC (0 for
/// an empty path).
fn nic_cap(cap: &[f64], path: &[LinkId]) -> f64 {
    path.first().map_or(0.0, |l| cap[l.0 as usize])
}

/// What a NIC of capacity `nic` left a flow that ran `fct` ns while its
/// host's other flows sent `others` bits through it.
fn room(nic: f64, others: f64, fct: u64) -> f64 {
    if fct == 0 {
        return nic;
    }
    (nic - others * 1e9 / fct as f64).clamp(0.0, nic)
}

/// Each flow's path as an id, and the distinct paths in sorted order (ids
/// are ranks in it, so a run does not depend on the flows' order).
fn intern(paths: &[Vec<LinkId>]) -> (Vec<u32>, Vec<&[LinkId]>) {
    let mut sorted: Vec<&[LinkId]> = paths.iter().map(|p| &p[..]).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let rank: HashMap<&[LinkId], u32> = sorted
        .iter()
        .enumerate()
        .map(|(k, p)| (*p, k as u32))
        .collect();
    let path_id = paths.iter().map(|p| rank[&p[..]]).collect();
    (path_id, sorted)
}

/// What [`run`] keeps per path (one solver demand).
#[derive(Debug, Clone, Copy, Default)]
struct PathState {
    /// Flows in progress on it.
    count: u32,
    /// Per-flow rate (bits/s) since `at`.
    rate: f64,
    /// Bits served per flow since the run began, up to `at`.
    served: f64,
    at: u64,
    /// Bit k: the path's k-th link is a bottleneck of its flows since `at`.
    flags: u32,
    /// Stamp of the completion event last scheduled for it.
    version: u32,
    /// Whether it is in its links' sets of rates (it has flows).
    listed: bool,
    declared: bool,
}

/// Runs the flows (`paths`, `bytes`, `start`: per flow, in one order) at
/// their max-min fair rates on `fabric`'s link capacities.
pub fn run(fabric: &Fabric, paths: &[Vec<LinkId>], bytes: &[u64], start: &[Time]) -> Fluid {
    let n = bytes.len();
    let cap: Vec<f64> = fabric.links().iter().map(|l| l.capacity.0).collect();
    let mut fct = vec![0u64; n];
    let mut bottleneck: Vec<Vec<f64>> = paths.iter().map(|p| vec![0.0; p.len()]).collect();
    let mut nic_room: Vec<f64> = paths.iter().map(|p| nic_cap(&cap, p)).collect();
    let (path_id, distinct) = intern(paths);
    assert!(
        distinct.iter().all(|p| p.len() <= 32),
        "the fluid view keeps at most 32 links per path"
    );
    // Per path: its state, and where its bottleneck sums start in `acc`
    // (bits served per flow while each of its links was a bottleneck).
    let mut st = vec![PathState::default(); distinct.len()];
    let mut at_acc = Vec::with_capacity(distinct.len() + 1);
    at_acc.push(0usize);
    for p in &distinct {
        at_acc.push(at_acc.last().unwrap() + p.len());
    }
    let mut acc = vec![0.0f64; *at_acc.last().unwrap()];
    // Per path, its flows in progress by the `served` at which each is
    // done (bits as ordered keys: they are non-negative).
    let mut waiting: Vec<BinaryHeap<Reverse<(u64, u32)>>> = vec![BinaryHeap::new(); distinct.len()];
    // Per link: whether it is saturated and its highest per-flow rate (as
    // last looked at), and its paths in progress by rate.
    let mut sat = vec![false; cap.len()];
    let mut top = vec![0.0f64; cap.len()];
    let mut by_rate: Vec<BTreeSet<(u64, u32)>> = vec![BTreeSet::new(); cap.len()];
    // Per link, the bits sent through it since the run began, up to
    // `sent_at`, and its load since: a flow's NIC's bits at its start and
    // end, less its own, are what its host's other flows sent meanwhile.
    let mut sent = vec![0.0f64; cap.len()];
    let mut sent_at = vec![0u64; cap.len()];
    let mut load = vec![0.0f64; cap.len()];
    let sent_by = |sent: &[f64], sent_at: &[u64], load: &[f64], l: usize, t: u64| {
        sent[l] + load[l] * (t - sent_at[l]) as f64 / 1e9
    };
    let mut solver = IncrementalMaxMin::new(cap.clone());
    // Completions: (instant, path, stamp); a stale stamp is skipped.
    let mut due: BinaryHeap<Reverse<(u64, u32, u32)>> = BinaryHeap::new();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (start[i], i));
    let mut next = 0usize;
    // Per-event scratch, deduplicated by stamps.
    let mut epoch = 0u32;
    let mut path_mark = vec![0u32; distinct.len()];
    let mut link_mark = vec![0u32; cap.len()];
    let mut touched: Vec<u32> = vec![];
    let mut changed: Vec<u32> = vec![];
    let mut links: Vec<u32> = vec![];
    let mut reflag: Vec<u32> = vec![];

    // Brings path k's sums up to `t` at its rate and flags since `at`.
    fn advance(s: &mut PathState, acc: &mut [f64], t: u64) {
        if t > s.at {
            let bits = s.rate * (t - s.at) as f64 / 1e9;
            s.served += bits;
            let mut f = s.flags;
            while f != 0 {
                acc[f.trailing_zeros() as usize] += bits;
                f &= f - 1;
            }
            s.at = t;
        }
    }

    loop {
        let t_start = order.get(next).map_or(u64::MAX, |&i| start[i].0);
        while let Some(&Reverse((_, k, v))) = due.peek() {
            if st[k as usize].version == v {
                break;
            }
            due.pop();
        }
        let t_done = due.peek().map_or(u64::MAX, |Reverse(e)| e.0);
        let t = t_start.min(t_done);
        if t == u64::MAX {
            break;
        }
        epoch = epoch.wrapping_add(1);
        if epoch == 0 {
            path_mark.iter_mut().for_each(|m| *m = 0);
            link_mark.iter_mut().for_each(|m| *m = 0);
            epoch = 1;
        }
        touched.clear();
        // Completions due now: a path's flows within a nanosecond's worth
        // of bits of their bytes.
        while let Some(&Reverse((when, k, v))) = due.peek() {
            if when > t {
                break;
            }
            due.pop();
            let ku = k as usize;
            if st[ku].version != v {
                continue;
            }
            let (a, b) = (at_acc[ku], at_acc[ku + 1]);
            advance(&mut st[ku], &mut acc[a..b], t);
            let s = st[ku];
            while let Some(&Reverse((target, i))) = waiting[ku].peek() {
                if f64::from_bits(target) - s.served > s.rate * 1e-9 {
                    break;
                }
                waiting[ku].pop();
                let i = i as usize;
                fct[i] = t - start[i].0;
                let nic = distinct[ku][0].0 as usize;
                let others =
                    sent_by(&sent, &sent_at, &load, nic, t) - nic_room[i] - bytes[i] as f64 * 8.0;
                nic_room[i] = room(cap[nic], others, fct[i]);
                let bits = bytes[i] as f64 * 8.0;
                for (x, &sum) in bottleneck[i].iter_mut().zip(&acc[a..b]) {
                    *x = ((*x + sum).min(bits) / bits).max(0.0);
                }
                st[ku].count -= 1;
            }
            st[ku].version = st[ku].version.wrapping_add(1);
            solver.set_count(k, st[ku].count);
            if path_mark[ku] != epoch {
                path_mark[ku] = epoch;
                touched.push(k);
            }
        }
        while next < n && start[order[next]].0 == t {
            let i = order[next];
            next += 1;
            if bytes[i] == 0 {
                continue;
            }
            let k = path_id[i];
            let ku = k as usize;
            if !st[ku].declared {
                solver.declare(k, distinct[ku].iter().copied(), 1.0);
                st[ku].declared = true;
            }
            let (a, b) = (at_acc[ku], at_acc[ku + 1]);
            if st[ku].count == 0 {
                st[ku].at = t;
            }
            advance(&mut st[ku], &mut acc[a..b], t);
            let target = st[ku].served + bytes[i] as f64 * 8.0;
            waiting[ku].push(Reverse((target.to_bits(), i as u32)));
            for (x, &sum) in bottleneck[i].iter_mut().zip(&acc[a..b]) {
                *x = -sum;
            }
            // Until it ends, its NIC's bits at its start.
            nic_room[i] = sent_by(&sent, &sent_at, &load, distinct[ku][0].0 as usize, t);
            st[ku].count += 1;
            solver.set_count(k, st[ku].count);
            if path_mark[ku] != epoch {
                path_mark[ku] = epoch;
                touched.push(k);
            }
        }
        changed.clear();
        solver.solve(&mut changed);
        for &k in &changed {
            if path_mark[k as usize] != epoch {
                path_mark[k as usize] = epoch;
                touched.push(k);
            }
        }
        // New rates: each path's sums brought up to now at its old rate,
        // and its place in its links' sets.
        links.clear();
        reflag.clear();
        for &k in &touched {
            let ku = k as usize;
            let (a, b) = (at_acc[ku], at_acc[ku + 1]);
            advance(&mut st[ku], &mut acc[a..b], t);
            let old = st[ku].rate;
            let new = solver.rate(k);
            let listed = st[ku].count > 0;
            for &l in distinct[ku] {
                let li = l.0 as usize;
                if st[ku].listed {
                    by_rate[li].remove(&(old.to_bits(), k));
                }
                if listed {
                    by_rate[li].insert((new.to_bits(), k));
                }
                if link_mark[li] != epoch {
                    link_mark[li] = epoch;
                    links.push(l.0);
                }
            }
            st[ku].rate = new;
            st[ku].listed = listed;
            reflag.push(k);
        }
        // Links whose saturation or highest rate moved: the paths at the
        // old or new highest rate may have gained or lost a bottleneck.
        for &l in &links {
            let li = l as usize;
            sent[li] = sent_by(&sent, &sent_at, &load, li, t);
            sent_at[li] = t;
            load[li] = solver.load(LinkId(l));
            let s = load[li] >= cap[li] * TIGHT;
            let m = by_rate[li].last().map_or(0.0, |&(r, _)| f64::from_bits(r));
            if s != sat[li] || m != top[li] {
                let from = top[li].min(m) * TIGHT;
                for &(_, k) in by_rate[li].range((from.to_bits(), 0)..) {
                    if path_mark[k as usize] != epoch {
                        path_mark[k as usize] = epoch;
                        reflag.push(k);
                    }
                }
                sat[li] = s;
                top[li] = m;
            }
        }
        for &k in &reflag {
            let ku = k as usize;
            let r = st[ku].rate;
            let mut flags = 0u32;
            for (pos, l) in distinct[ku].iter().enumerate() {
                let li = l.0 as usize;
                if sat[li] && r >= top[li] * TIGHT {
                    flags |= 1 << pos;
                }
            }
            if flags != st[ku].flags {
                let (a, b) = (at_acc[ku], at_acc[ku + 1]);
                advance(&mut st[ku], &mut acc[a..b], t);
                st[ku].flags = flags;
            }
        }
        // Each changed path's next completion.
        for &k in &touched {
            let ku = k as usize;
            st[ku].version = st[ku].version.wrapping_add(1);
            let s = st[ku];
            if let Some(&Reverse((target, _))) = waiting[ku].peek() {
                if s.rate > 0.0 {
                    let left = f64::from_bits(target) - s.served;
                    let dt = (left / s.rate * 1e9).ceil().max(1.0) as u64;
                    due.push(Reverse((t + dt, k, s.version)));
                }
            }
        }
    }
    Fluid {
        fct,
        bottleneck,
        nic_room,
    }
}
