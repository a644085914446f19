//! The fluid view of a decomposed run: every flow on its own path at its
//! per-flow max-min fair rate over the whole fabric (what DCTCP and TCP
//! approximate, and what the flow engine's `fair` scheduler gives),
//! brought up to date at every start and completion.
//!
//! Besides each flow's fluid completion time it keeps, per flow and per
//! link of its path, the shares of the flow's bytes sent, and of its
//! lifetime spent, while that link was one of its bottlenecks (a saturated
//! link on which no flow gets a higher rate). A link's simulation uses them
//! to send a flow that the fabric holds back elsewhere as gently as the
//! fabric would (m3's idea, Li et al., SIGCOMM 2024, with no learned
//! model).
//!
//! [`run`] keeps the rates with [`coflowkit_alloc::IncrementalMaxMin`], the
//! flows of one path as one demand, so an event costs what it changes, not
//! every flow in progress (a fabric of thousands of hosts has millions of
//! flows and tens of thousands in progress at once). Everything per flow is
//! kept per path instead and read as a difference: a path's flows all run
//! at its one per-flow rate, so the bits each has been served since the run
//! began (`served`), and those served (and the time spent) while each link
//! of the path was a bottleneck, are the same for all of them; a flow notes
//! them when it starts and ends when its path has served its bytes since. A
//! link's saturation comes from the solver's kept load, its highest rate
//! from an ordered set of its paths' rates, and a path's bottleneck flags
//! are looked at again only where its rate, or a link's saturation or
//! highest rate, changed.
//!
//! The events themselves (which flows start and end when) depend only on
//! the rates, not on those books, so two threads share a run: one solves
//! the rates and finds the events, and hands each event's starts, ends, new
//! rates and link loads over in batches to the other, which keeps the
//! books, a few batches behind at most. The books are the ones a single
//! thread would keep; the solving thread is the busier of the two, and a
//! run takes a little more than half the time it takes on one.
//! [`run_reference`] is the same view solved from scratch at
//! every event and every flow stepped at every event: the slow reference
//! `run` is checked against (test `crates/decomposed/tests/fluid.rs`).
//!
//! Completion instants are kept in whole nanoseconds (rounded up, as the
//! flow engine does), so a run is deterministic. The fluid times equal the
//! flow engine's `fair` run to within its own rounding (same test).

use coflowkit_alloc::{IncrementalMaxMin, MaxMin};
use coflowkit_model::{Fabric, LinkId, Time};
use coflowkit_sched::RadixQueue;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::mpsc;

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
    pub bottleneck: PerHop,
    /// Per flow, per link of its path, the share of its fluid lifetime
    /// during which that link was a bottleneck of it.
    pub held: PerHop,
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

    /// Flow `i`'s mean rate (bits/s) while the `pos`-th link of its path
    /// was not a bottleneck of it: what the rest of the fabric let it
    /// have. `None` for a zero-byte flow, or one that link held back all
    /// its life.
    pub fn rest_rate(&self, i: usize, pos: usize, bytes: u64) -> Option<f64> {
        let free_bits = bytes as f64 * 8.0 * (1.0 - self.bottleneck[i][pos]);
        let free_ns = self.fct[i] as f64 * (1.0 - self.held[i][pos]);
        (bytes > 0 && free_ns >= 1.0 && free_bits > 0.0).then(|| free_bits * 1e9 / free_ns)
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

/// One value per link of each path (of each flow, or each distinct path),
/// flat (a fabric of thousands of hosts has millions of flows): `x[i]` is
/// path `i`'s, in path order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerHop<T = f64> {
    /// Where each path's values start, and one past the last path's.
    at: Vec<usize>,
    values: Vec<T>,
}

impl<T: Clone + Default> PerHop<T> {
    /// Defaults (zeros), as many per path as `lens` gives its links.
    pub fn zeros(lens: impl ExactSizeIterator<Item = usize>) -> PerHop<T> {
        let mut at = Vec::with_capacity(lens.len() + 1);
        at.push(0);
        for n in lens {
            at.push(at.last().unwrap() + n);
        }
        let values = vec![T::default(); *at.last().unwrap()];
        PerHop { at, values }
    }
}

impl<T> PerHop<T> {
    /// Every path's values, one after another.
    pub fn values(&self) -> &[T] {
        &self.values
    }
}

impl<T> std::ops::Index<usize> for PerHop<T> {
    type Output = [T];
    fn index(&self, i: usize) -> &[T] {
        &self.values[self.at[i]..self.at[i + 1]]
    }
}

impl<T> std::ops::IndexMut<usize> for PerHop<T> {
    fn index_mut(&mut self, i: usize) -> &mut [T] {
        &mut self.values[self.at[i]..self.at[i + 1]]
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
    let mut bottleneck: PerHop = PerHop::zeros(paths.iter().map(Vec::len));
    let mut held: PerHop = PerHop::zeros(paths.iter().map(Vec::len));
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
    let (path_id, distinct) =
        intern_by_start(&paths.iter().map(|p| &p[..]).collect::<Vec<_>>(), &order);
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
                let life = fct[i] as f64 / 1e9;
                for h in held[i].iter_mut() {
                    *h = (*h / life).clamp(0.0, 1.0);
                }
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
                    held[i][pos] += span;
                }
            }
        }
    }
    Fluid {
        fct,
        bottleneck,
        held,
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

/// Each flow's path as an id, and the distinct paths in id order: ids in
/// the order the paths are first used (by start, then flow), so that the
/// paths in use at once have ids close together (a run's per-path records,
/// the solver's among them, are read where the ids say; ranks in sorted
/// order would scatter them over millions of records, a cache and TLB miss
/// each).
fn intern_by_start<'a>(paths: &[&'a [LinkId]], order: &[usize]) -> (Vec<u32>, Vec<&'a [LinkId]>) {
    let mut id: HashMap<&[LinkId], u32> = HashMap::new();
    let mut distinct = vec![];
    let mut path_id = vec![0u32; paths.len()];
    for &i in order {
        path_id[i] = *id.entry(paths[i]).or_insert_with(|| {
            distinct.push(paths[i]);
            distinct.len() as u32 - 1
        });
    }
    (path_id, distinct)
}

/// Runs the flows (`paths`, `bytes`, `start`: per flow, in one order) at
/// their max-min fair rates on `fabric`'s link capacities.
///
/// Two threads share the work, with the same arithmetic as one: this one
/// keeps the rates and finds each event (the solver, each path's bits
/// served, the completions), and sends each event's starts, completions,
/// new rates and link loads, in batches, to a second that keeps the books
/// the events do not depend on (bottlenecks and each NIC's bits sent).
pub fn run(fabric: &Fabric, paths: &[Vec<LinkId>], bytes: &[u64], start: &[Time]) -> Fluid {
    run_batched(fabric, paths, bytes, start, BATCH)
}

/// [`run`] with its events handed to the books' thread `per_batch` at a
/// time (`run` hands [`BATCH`]): the result is the same for any batch size
/// (test `crates/decomposed/tests/fluid.rs`).
pub fn run_batched(
    fabric: &Fabric,
    paths: &[Vec<LinkId>],
    bytes: &[u64],
    start: &[Time],
    per_batch: usize,
) -> Fluid {
    let paths: Vec<&[LinkId]> = paths.iter().map(|p| &p[..]).collect();
    let mut order: Vec<usize> = (0..bytes.len()).collect();
    order.sort_by_key(|&i| (start[i], i));
    let (path_id, distinct) = intern_by_start(&paths, &order);
    assert!(
        distinct.iter().all(|p| p.len() <= 32),
        "the fluid view keeps at most 32 links per path"
    );
    let cap: Vec<f64> = fabric.links().iter().map(|l| l.capacity.0).collect();
    let flows = Flows {
        cap: &cap,
        paths: &paths,
        distinct: &distinct,
        path_id: &path_id,
        bytes,
        start,
        order: &order,
    };
    let (to_books, from_rates) = mpsc::sync_channel::<Batch>(4);
    let (to_rates, from_books) = mpsc::channel::<Batch>();
    std::thread::scope(|s| {
        let books = s.spawn(|| {
            let mut books = Books::new(&flows);
            for batch in from_rates {
                books.apply(&batch);
                // Handed back for reuse; the producer may be done already.
                let _ = to_rates.send(batch);
            }
            books.into_fluid()
        });
        rates(
            &flows,
            Handoff {
                out: to_books,
                back: from_books,
                per_batch,
            },
        );
        books.join().expect("the fluid view's books")
    })
}

/// A fluid run's flows as both its threads read them.
struct Flows<'a> {
    /// Each link's capacity (bits/s).
    cap: &'a [f64],
    /// Per flow, its path, and its path's id ([`intern_by_start`]).
    paths: &'a [&'a [LinkId]],
    path_id: &'a [u32],
    /// The distinct paths, by id.
    distinct: &'a [&'a [LinkId]],
    bytes: &'a [u64],
    start: &'a [Time],
    /// The flows by start, then flow.
    order: &'a [usize],
}

/// Events per batch sent from [`rates`] to [`Books`].
pub const BATCH: usize = 4096;

/// How [`rates`] hands its events to the books' thread: batches of
/// `per_batch` events to `out`, which come back on `back` for reuse.
struct Handoff {
    out: mpsc::SyncSender<Batch>,
    back: mpsc::Receiver<Batch>,
    per_batch: usize,
}

/// Some events of a fluid run, in order, as [`Books`] takes them.
#[derive(Debug, Default)]
struct Batch {
    /// Per event: its instant and how many of each list below are its.
    events: Vec<(u64, u32, u32, u32, u32)>,
    /// Paths whose flows were due (in order), with how many of `ends` are
    /// theirs (possibly none).
    due: Vec<(u32, u32)>,
    ends: Vec<u32>,
    starts: Vec<u32>,
    /// Paths whose rate was looked at again, with their new per-flow rate.
    rated: Vec<(u32, f64)>,
    /// Links those paths cross (each once), with their new load.
    loads: Vec<(u32, f64)>,
}

impl Batch {
    fn clear(&mut self) {
        self.events.clear();
        self.due.clear();
        self.ends.clear();
        self.starts.clear();
        self.rated.clear();
        self.loads.clear();
    }
}

/// What [`rates`] keeps per path (one solver demand).
#[derive(Debug, Clone, Copy, Default)]
struct PathRate {
    /// Flows in progress on it.
    count: u32,
    /// Per-flow rate (bits/s) since `at`.
    rate: f64,
    /// Bits served per flow since the run began, up to `at`.
    served: f64,
    at: u64,
    /// When its next flow is due to complete: its one live entry in the
    /// queue of completions (none is at 0 or `u64::MAX`).
    due: u64,
    declared: bool,
}

impl PathRate {
    /// Brings `served` up to `t` at its rate since `at`.
    fn advance(&mut self, t: u64) {
        if t > self.at {
            self.served += self.rate * (t - self.at) as f64 / 1e9;
            self.at = t;
        }
    }
}

/// The events of the fluid run: rates kept by the incremental solver, the
/// flows of one path as one demand; the events handed over in batches.
fn rates(flows: &Flows<'_>, handoff: Handoff) {
    let Flows {
        cap,
        distinct,
        path_id,
        bytes,
        start,
        order,
        ..
    } = *flows;
    let Handoff {
        out,
        back,
        per_batch,
    } = handoff;
    let n = bytes.len();
    let mut st = vec![PathRate::default(); distinct.len()];
    // Per path, its flows in progress by the `served` at which each is
    // done (bits as ordered keys: they are non-negative).
    let mut waiting: Vec<BinaryHeap<Reverse<(u64, u32)>>> = vec![BinaryHeap::new(); distinct.len()];
    let mut solver = IncrementalMaxMin::new(cap.to_vec());
    // Completions: (instant, path), live while the path is still due then
    // (a path's rate change leaves its earlier entry stale).
    let mut due = RadixQueue::default();
    let mut next = 0usize;
    // Per-event scratch, deduplicated by stamps.
    let mut epoch = 0u32;
    let mut path_mark = vec![0u32; distinct.len()];
    let mut link_mark = vec![0u32; cap.len()];
    let mut touched: Vec<u32> = vec![];
    let mut changed: Vec<u32> = vec![];
    let mut batch = Batch::default();
    loop {
        let t_start = order.get(next).map_or(u64::MAX, |&i| start[i].0);
        let t_done = due
            .peek_min(|t, k| st[k as usize].due == t)
            .unwrap_or(u64::MAX);
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
        let counts = (
            batch.due.len(),
            batch.starts.len(),
            batch.rated.len(),
            batch.loads.len(),
        );
        // Completions due now: a path's flows within a nanosecond's worth
        // of bits of their bytes.
        while let Some((_, k)) = due.pop_min(t, |t, k| st[k as usize].due == t) {
            let ku = k as usize;
            st[ku].advance(t);
            let s = st[ku];
            let ends = batch.ends.len();
            while let Some(&Reverse((target, i))) = waiting[ku].peek() {
                if f64::from_bits(target) - s.served > s.rate * 1e-9 {
                    break;
                }
                waiting[ku].pop();
                batch.ends.push(i);
                st[ku].count -= 1;
            }
            batch.due.push((k, (batch.ends.len() - ends) as u32));
            st[ku].due = u64::MAX;
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
            if st[ku].count == 0 {
                st[ku].at = t;
            }
            st[ku].advance(t);
            let target = st[ku].served + bytes[i] as f64 * 8.0;
            waiting[ku].push(Reverse((target.to_bits(), i as u32)));
            batch.starts.push(i as u32);
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
        // New rates, each path's bits served brought up to now at its old
        // one, and the loads of the links they cross.
        for &k in &touched {
            let ku = k as usize;
            st[ku].advance(t);
            st[ku].rate = solver.rate(k);
            batch.rated.push((k, st[ku].rate));
            for &l in distinct[ku] {
                let li = l.0 as usize;
                if link_mark[li] != epoch {
                    link_mark[li] = epoch;
                    batch.loads.push((l.0, solver.load(l)));
                }
            }
        }
        // Each changed path's next completion.
        for &k in &touched {
            let ku = k as usize;
            st[ku].due = u64::MAX;
            let s = st[ku];
            if let Some(&Reverse((target, _))) = waiting[ku].peek() {
                if s.rate > 0.0 {
                    let left = f64::from_bits(target) - s.served;
                    let dt = (left / s.rate * 1e9).ceil().max(1.0) as u64;
                    st[ku].due = t + dt;
                    due.push(t + dt, k);
                }
            }
        }
        let len = |now: usize, was: usize| (now - was) as u32;
        batch.events.push((
            t,
            len(batch.due.len(), counts.0),
            len(batch.starts.len(), counts.1),
            len(batch.rated.len(), counts.2),
            len(batch.loads.len(), counts.3),
        ));
        if batch.events.len() == per_batch {
            let mut fresh = back.try_recv().unwrap_or_default();
            fresh.clear();
            if out.send(std::mem::replace(&mut batch, fresh)).is_err() {
                return; // the books' thread failed; its join says why
            }
        }
    }
    let _ = out.send(batch);
}

/// What [`Books`] keeps per path.
#[derive(Debug, Clone, Copy, Default)]
struct PathBooks {
    /// Flows in progress on it.
    count: u32,
    /// Per-flow rate (bits/s) since `at`.
    rate: f64,
    at: u64,
    /// Bit k: the path's k-th link is a bottleneck of its flows since `at`.
    flags: u32,
    /// Whether it is in its links' sets of rates (it has flows).
    listed: bool,
}

/// The books of a fluid run that its events do not depend on, kept from
/// [`rates`]' batches: per flow, its completion time, the shares of its
/// bytes sent and of its lifetime spent while each link of its path was a
/// bottleneck, and its NIC's room.
///
/// Everything per flow is kept per path and read as a difference: a
/// path's flows all run at its one per-flow rate, so the bits served per
/// flow (and the time spent) while each link of the path was a bottleneck
/// are the same for all of them; a flow notes them when it starts and ends. A link's saturation
/// comes from its load, its highest rate from an ordered set of its paths'
/// rates, and a path's bottleneck flags are looked at again only where its
/// rate, or a link's saturation or highest rate, changed.
struct Books<'a> {
    flows: &'a Flows<'a>,
    fct: Vec<u64>,
    bottleneck: PerHop,
    held: PerHop,
    nic_room: Vec<f64>,
    st: Vec<PathBooks>,
    /// Per path, the bits served per flow while each of its links was a
    /// bottleneck, and the seconds each was.
    acc: PerHop,
    acc_t: PerHop,
    /// Per link: whether it is saturated and its highest per-flow rate (as
    /// last looked at), and its paths in progress by rate.
    sat: Vec<bool>,
    top: Vec<f64>,
    by_rate: Vec<BTreeSet<(u64, u32)>>,
    /// Per link, the bits sent through it since the run began, up to
    /// `sent_at`, and its load since: a flow's NIC's bits at its start and
    /// end, less its own, are what its host's other flows sent meanwhile.
    sent: Vec<f64>,
    sent_at: Vec<u64>,
    load: Vec<f64>,
    // Per-event scratch, deduplicated by stamps.
    epoch: u32,
    path_mark: Vec<u32>,
    reflag: Vec<u32>,
}

impl<'a> Books<'a> {
    fn new(flows: &'a Flows<'a>) -> Books<'a> {
        let Flows {
            cap,
            paths,
            distinct,
            ..
        } = *flows;
        Books {
            flows,
            fct: vec![0; paths.len()],
            bottleneck: PerHop::zeros(paths.iter().map(|p| p.len())),
            held: PerHop::zeros(paths.iter().map(|p| p.len())),
            nic_room: paths.iter().map(|p| nic_cap(cap, p)).collect(),
            st: vec![PathBooks::default(); distinct.len()],
            acc: PerHop::zeros(distinct.iter().map(|p| p.len())),
            acc_t: PerHop::zeros(distinct.iter().map(|p| p.len())),
            sat: vec![false; cap.len()],
            top: vec![0.0; cap.len()],
            by_rate: vec![BTreeSet::new(); cap.len()],
            sent: vec![0.0; cap.len()],
            sent_at: vec![0; cap.len()],
            load: vec![0.0; cap.len()],
            epoch: 0,
            path_mark: vec![0; distinct.len()],
            reflag: vec![],
        }
    }

    fn into_fluid(self) -> Fluid {
        Fluid {
            fct: self.fct,
            bottleneck: self.bottleneck,
            held: self.held,
            nic_room: self.nic_room,
        }
    }

    /// Bits sent through link `l` up to `t`.
    fn sent_by(&self, l: usize, t: u64) -> f64 {
        self.sent[l] + self.load[l] * (t - self.sent_at[l]) as f64 / 1e9
    }

    /// Brings path `k`'s sums up to `t` at its rate and flags since `at`.
    fn advance(&mut self, k: usize, t: u64) {
        let s = &mut self.st[k];
        if t > s.at {
            let secs = (t - s.at) as f64 / 1e9;
            let bits = s.rate * secs;
            let (acc, acc_t) = (&mut self.acc[k], &mut self.acc_t[k]);
            let mut f = s.flags;
            while f != 0 {
                let pos = f.trailing_zeros() as usize;
                acc[pos] += bits;
                acc_t[pos] += secs;
                f &= f - 1;
            }
            s.at = t;
        }
    }

    fn apply(&mut self, b: &Batch) {
        let (mut due, mut ends, mut starts, mut rated, mut loads) = (0, 0, 0, 0, 0);
        for &(t, n_due, n_starts, n_rated, n_loads) in &b.events {
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch == 0 {
                self.path_mark.iter_mut().for_each(|m| *m = 0);
                self.epoch = 1;
            }
            for &(k, n) in &b.due[due..due + n_due as usize] {
                let ku = k as usize;
                self.advance(ku, t);
                for &i in &b.ends[ends..ends + n as usize] {
                    let i = i as usize;
                    self.fct[i] = t - self.flows.start[i].0;
                    let nic = self.flows.paths[i][0].0 as usize;
                    let bits = self.flows.bytes[i] as f64 * 8.0;
                    let others = self.sent_by(nic, t) - self.nic_room[i] - bits;
                    self.nic_room[i] = room(self.flows.cap[nic], others, self.fct[i]);
                    for (x, &sum) in self.bottleneck[i].iter_mut().zip(&self.acc[ku]) {
                        *x = ((*x + sum).min(bits) / bits).max(0.0);
                    }
                    let life = self.fct[i] as f64 / 1e9;
                    for (x, &sum) in self.held[i].iter_mut().zip(&self.acc_t[ku]) {
                        *x = ((*x + sum) / life).clamp(0.0, 1.0);
                    }
                }
                ends += n as usize;
                self.st[ku].count -= n;
            }
            due += n_due as usize;
            for &i in &b.starts[starts..starts + n_starts as usize] {
                let i = i as usize;
                let k = self.flows.path_id[i] as usize;
                if self.st[k].count == 0 {
                    self.st[k].at = t;
                }
                self.advance(k, t);
                for (x, &sum) in self.bottleneck[i].iter_mut().zip(&self.acc[k]) {
                    *x = -sum;
                }
                for (x, &sum) in self.held[i].iter_mut().zip(&self.acc_t[k]) {
                    *x = -sum;
                }
                // Until it ends, its NIC's bits at its start.
                self.nic_room[i] = self.sent_by(self.flows.paths[i][0].0 as usize, t);
                self.st[k].count += 1;
            }
            starts += n_starts as usize;
            // New rates: each path's sums brought up to now at its old
            // rate, and its place in its links' sets.
            self.reflag.clear();
            for &(k, new) in &b.rated[rated..rated + n_rated as usize] {
                let ku = k as usize;
                self.advance(ku, t);
                let old = self.st[ku].rate;
                let listed = self.st[ku].count > 0;
                for &l in self.flows.distinct[ku] {
                    let set = &mut self.by_rate[l.0 as usize];
                    if self.st[ku].listed {
                        set.remove(&(old.to_bits(), k));
                    }
                    if listed {
                        set.insert((new.to_bits(), k));
                    }
                }
                self.st[ku].rate = new;
                self.st[ku].listed = listed;
                self.path_mark[ku] = self.epoch;
                self.reflag.push(k);
            }
            rated += n_rated as usize;
            // Links whose saturation or highest rate moved: the paths at
            // the old or new highest rate may have gained or lost a
            // bottleneck.
            for &(l, load) in &b.loads[loads..loads + n_loads as usize] {
                let li = l as usize;
                self.sent[li] = self.sent_by(li, t);
                self.sent_at[li] = t;
                self.load[li] = load;
                let s = load >= self.flows.cap[li] * TIGHT;
                let m = self.by_rate[li]
                    .last()
                    .map_or(0.0, |&(r, _)| f64::from_bits(r));
                if s != self.sat[li] || m != self.top[li] {
                    let from = self.top[li].min(m) * TIGHT;
                    for &(_, k) in self.by_rate[li].range((from.to_bits(), 0)..) {
                        if self.path_mark[k as usize] != self.epoch {
                            self.path_mark[k as usize] = self.epoch;
                            self.reflag.push(k);
                        }
                    }
                    self.sat[li] = s;
                    self.top[li] = m;
                }
            }
            loads += n_loads as usize;
            for j in 0..self.reflag.len() {
                let ku = self.reflag[j] as usize;
                let r = self.st[ku].rate;
                let mut flags = 0u32;
                for (pos, l) in self.flows.distinct[ku].iter().enumerate() {
                    let li = l.0 as usize;
                    if self.sat[li] && r >= self.top[li] * TIGHT {
                        flags |= 1 << pos;
                    }
                }
                if flags != self.st[ku].flags {
                    self.advance(ku, t);
                    self.st[ku].flags = flags;
                }
            }
        }
    }
}
