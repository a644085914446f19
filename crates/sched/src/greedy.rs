//! The greedy per-flow fill of `srpt`, `pfabric-edf` and `edf-sjf`, and
//! the order it walks kept sorted from one event to the next.
//!
//! These schedulers take the active flows in an order (remaining bytes,
//! total size or deadline, near-ties by flow index) and give each in turn
//! the least residual capacity on its path ([`greedy_fill`]). Sorting every
//! active flow at every event costs O(n log n) where little moves: a flow
//! whose rate is 0 sends nothing, so its remaining bytes, and with them its
//! key, stay what they were (to the bit: the state adds `0 * elapsed`). Only
//! the flows that had a rate since the key was last read (at most one per
//! link and fill, since each positive rate fills a link of its path), the
//! flows that started and the flows that finished move. [`SortedFlows`]
//! keeps the active flows sorted by (key, flow index) and at each call
//! re-reads the keys of the flows that moved, sorts those few and merges
//! them into the rest (finding them by their kept keys in one sweep, and
//! merging from the back in place, so that only the flows after the first
//! join move). A flow whose key did not move (no time passed) keeps its
//! place. A flow that leaves stays in its place marked dead, so that no
//! cluster (below) is cut again for it, until dead flows are a fifth of
//! the order. Where keys never move while
//! a flow is active (`edf-sjf`'s total size:
//! [`SortedFlows::with_fixed_keys`]) only the flows that start or finish
//! are (re-)keyed.
//!
//! The fill still walks the order, but not flow by flow. The order falls
//! into clusters: maximal stretches whose neighbouring keys are within the
//! tie reach, so that a near-tie run never crosses a cluster's end. Each
//! cluster keeps the sets of the first and of the last links of its
//! flows' paths (by link class, `l % 320`: exact on a big switch of up
//! to 160 hosts, and never wrong, since a class counts as full only when
//! all its links are), re-cut only where a flow joined. A dead flow
//! still counts: its sets hold more than they need, never less, and a
//! cluster end next to it is also one between the live flows around it
//! (keys grow along the order, and the tie reach with them). A cluster
//! whose first links or whose last links are all full by the time the
//! walk reaches it, that holds no flow the last fill gave a rate, and that
//! lies past [`LAST_CLASS`], would give each of its flows 0 and no new
//! class: the walk passes it over whole. On FB2010 that is most of the
//! order. A cluster longer than [`PIECE`] flows whose near-tie runs are
//! already in flow index order (exact ties, as a coflow's equal flows
//! are under a size key) is walked where it lies, and also keeps the
//! same sets per [`PIECE`] flows of it, so that the walk passes over its
//! blocked pieces the same way. A flow whose path's first or last link
//! is full is passed without reading its path. Classes are positions
//! capped at [`LAST_CLASS`], where every driver stops telling them apart.
//!
//! Correctness properties: after [`SortedFlows::update`] the order is the
//! one `sort_with_ties` gives on every active flow's key read now: the
//! merge yields the unique (key, index) order, whose anchored near-tie runs
//! are then cut exactly as `sort_with_ties` cuts them (the reference suites
//! in `crates/sim/tests/reference` hold `srpt`, `pfabric-edf` and
//! `edf-sjf` against slow references; debug builds check every cached key
//! against a fresh read and the live flows against the active ones in
//! [`SortedFlows::update`], the kept clusters and their pieces against a
//! cut from scratch, and every fill's rates and classes against
//! [`greedy_fill`] on the full order; the kept order, its clusters and
//! dead flows are also held against a full sort in the unit tests). A
//! cached key is trusted only for a flow whose rate was 0 in the last two
//! fills: the first fill that gives it 0 runs while it still sends at its
//! old rate until the driver applies the new one.

#[cfg(any(test, debug_assertions))]
use crate::PathIdx;
use crate::{Allocation, Changes, Clairvoyant, FlowIdx};
use std::cmp::Ordering;

/// Gives each flow of `order` (with its path) in turn the least residual
/// capacity along its path and takes it from every link it crosses (rates
/// at or below the allocation's noise floor count as 0), with class = its
/// position in `order`. Once every link is full the rest get 0 without
/// looking at paths. Flows whose rate is positive afterwards are pushed
/// onto `positive`; a flow for which `was_positive` is false had rate 0
/// before, so a 0 now leaves the allocation as it is.
#[cfg(any(test, debug_assertions))]
pub(crate) fn greedy_fill(
    view: &Clairvoyant<'_>,
    order: impl IntoIterator<Item = (FlowIdx, PathIdx)>,
    residual: &mut Vec<f64>,
    out: &mut Allocation,
    was_positive: &[bool],
    positive: &mut Vec<FlowIdx>,
) {
    let floor = coflowkit_alloc::EPS * 1e9;
    residual.clear();
    residual.extend_from_slice(view.capacities());
    let mut saturated = 0;
    let mut order = order.into_iter().enumerate();
    for (i, (f, p)) in order.by_ref() {
        out.set_class(f, i as u32);
        let path = view.path_links(p);
        let mut r = f64::INFINITY;
        for l in path {
            r = r.min(residual[l.0 as usize]);
        }
        if r <= floor {
            // Also a negative or NaN-free 0: the fill's `max(0.0)`.
            if was_positive[f as usize] {
                out.set_rate(f, 0.0);
            }
            continue;
        }
        out.set_rate(f, r);
        for l in path {
            let res = &mut residual[l.0 as usize];
            *res -= r;
            if *res <= floor {
                *res = 0.0;
                saturated += 1;
            }
        }
        if out.rate(f) > 0.0 {
            positive.push(f);
        }
        if saturated == residual.len() {
            break;
        }
    }
    for (i, (g, _)) in order {
        if was_positive[g as usize] {
            out.set_rate(g, 0.0);
        }
        out.set_class(g, i as u32);
    }
}

/// A flow in the order: its key, index and path.
#[cfg(any(test, debug_assertions))]
pub(crate) type Entry = (f64, FlowIdx, PathIdx);

/// Entries in ascending key order, ties by flow index.
#[cfg(any(test, debug_assertions))]
pub(crate) fn by_key(a: &Entry, b: &Entry) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Writes into `merged` the entries of `sorted` whose flow does not
/// `leave`, with `batch` merged in; both inputs in [`by_key`] order, and
/// so the output.
#[cfg(test)]
pub(crate) fn merge_into(
    sorted: &[Entry],
    batch: &[Entry],
    leaves: impl Fn(FlowIdx) -> bool,
    merged: &mut Vec<Entry>,
) {
    merged.clear();
    merged.reserve(sorted.len() + batch.len());
    let mut new = batch.iter().copied().peekable();
    for &e in sorted {
        if leaves(e.1) {
            continue;
        }
        while let Some(b) = new.next_if(|b| by_key(b, &e) == Ordering::Less) {
            merged.push(b);
        }
        merged.push(e);
    }
    merged.extend(new);
}

/// Writes into `order` the flows of `sorted` (in [`by_key`] order) with
/// each run of near-ties (keys within `tol` of the run's first key, plus
/// 1e-9 of it) by flow index: the order `sort_with_ties` gives.
#[cfg(test)]
pub(crate) fn cut_runs(sorted: &[Entry], tol: f64, order: &mut Vec<(FlowIdx, PathIdx)>) {
    order.clear();
    let s = sorted;
    let mut i = 0;
    while i < s.len() {
        let k0 = s[i].0;
        let reach = tie_reach(k0, tol);
        let mut j = i + 1;
        while j < s.len() && s[j].0 - k0 <= reach {
            j += 1;
        }
        let start = order.len();
        order.extend(s[i..j].iter().map(|e| (e.1, e.2)));
        if j - i > 1 {
            order[start..].sort_unstable_by_key(|e| e.0);
        }
        i = j;
    }
}

/// Classes past this one are one class to every driver (the runtime marks
/// `class.min(63)`, the packet engine queues `class.min(7)`), so the
/// greedy fill writes `min(position, LAST_CLASS)`: an event then rewrites
/// the classes of the first positions only, not of every active flow.
pub(crate) const LAST_CLASS: u32 = 63;

/// A flow kept in [`SortedFlows`]: its key and index, and the first and
/// last links of its path (`u32::MAX` for an empty path), which decide
/// most fills without reading the path. The first flow of a cluster (see
/// the module doc) also holds the cluster's length and the slot of its
/// [`Ends`] in [`Clusters`]; other flows' `span` and `ends_at` are stale
/// and never read. A flow that left the order stays in place, `dead`,
/// until the next purge: it still counts for the clusters and their
/// summaries (which then hold more than they need, never less) but no
/// walk visits it.
#[derive(Debug, Clone, Copy)]
struct Kept {
    key: f64,
    f: FlowIdx,
    span: u32,
    ends: [u32; 2],
    ends_at: u32,
    dead: bool,
}

/// Link classes of a cluster summary: link `l` is in class `l % CLASSES`
/// (one class per link on a big switch of up to 160 hosts).
pub(crate) const CLASSES: usize = 320;
pub(crate) const WORDS: usize = CLASSES / 64;

/// A set of link classes.
pub(crate) type Classes = [u64; WORDS];

/// Adds link `l`'s class to `set`; `u32::MAX` (no link) adds them all.
pub(crate) fn add_class(set: &mut Classes, l: u32) {
    if l == u32::MAX {
        *set = [u64::MAX; WORDS];
    } else {
        let c = l as usize % CLASSES;
        set[c / 64] |= 1 << (c % 64);
    }
}

/// The classes of the first and of the last links of a cluster's paths.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Ends {
    pub(crate) first: Classes,
    pub(crate) last: Classes,
}

/// Flows per piece: a cluster longer than this whose runs are already in
/// flow index order is also summed up piece by piece, so that the fill
/// can pass over a blocked piece of it.
const PIECE: usize = 64;

/// The [`Ends`] of the clusters, in slots owned by the flow that starts
/// the cluster; slots whose cluster was re-cut are garbage until
/// [`Clusters::full_recut_due`] starts over. A slot whose cluster is
/// longer than [`PIECE`] and walked where it lies (its runs in flow index
/// order) also holds the [`Ends`] of each [`PIECE`] flows of it, in
/// `pieces` from `first_piece`, `piece_count` of them (a re-cut writes
/// over them if it needs no more).
#[derive(Debug, Default)]
struct Clusters {
    ends: Vec<Ends>,
    owner: Vec<FlowIdx>,
    first_piece: Vec<u32>,
    piece_count: Vec<u32>,
    pieces: Vec<Ends>,
}

impl Clusters {
    /// Whether garbage slots outnumber the flows kept.
    fn full_recut_due(&self, n: usize) -> bool {
        self.ends.len() > 2 * n + 1024 || self.pieces.len() > 2 * n / PIECE + 1024
    }

    /// Forgets every slot, and the slots `flows` point to: a flow may be
    /// kept twice (dead and alive), and two of its entries must never
    /// share a slot.
    fn clear(&mut self, flows: &mut [Kept]) {
        for e in flows {
            e.ends_at = u32::MAX;
        }
        self.ends.clear();
        self.owner.clear();
        self.first_piece.clear();
        self.piece_count.clear();
        self.pieces.clear();
    }

    /// The pieces of slot `slot`, if its cluster has them.
    fn pieces_of(&self, slot: usize) -> Option<&[Ends]> {
        let at = self.first_piece[slot];
        (at != u32::MAX).then(|| {
            let at = at as usize;
            &self.pieces[at..at + self.piece_count[slot] as usize]
        })
    }
}

/// How far above key `k0` a near-tie run that starts at it reaches: `tol`
/// plus 1e-9 of the key, as `sort_with_ties` cuts runs (0 when `tol` is 0:
/// only equal keys tie).
pub(crate) fn tie_reach(k0: f64, tol: f64) -> f64 {
    if tol > 0.0 {
        tol + 1e-9 * k0.abs()
    } else {
        0.0
    }
}

/// Whether a cluster of the order ends between keys `a` and `b` (`a <=
/// b`): `b` is then further from `a`, and so (keys being non-negative)
/// from every key before it, than `sort_with_ties` reaches, so a run
/// starts at `b` whatever came before.
pub(crate) fn gap(a: f64, b: f64, tol: f64) -> bool {
    a >= 0.0 && b - a > tie_reach(a, tol)
}

/// The [`Ends`] of `flows`.
fn ends_of(flows: &[Kept]) -> Ends {
    let mut ends = Ends::default();
    for e in flows {
        add_class(&mut ends.first, e.ends[0]);
        add_class(&mut ends.last, e.ends[1]);
    }
    ends
}

/// Whether every near-tie run of `cluster` (cut as [`walk_runs_in`] cuts
/// them) is already in flow index order, so that the order walks the
/// cluster where it lies.
fn runs_in_index_order(cluster: &[Kept], tol: f64) -> bool {
    let c = cluster;
    let mut i = 0;
    while i < c.len() {
        if c[i].dead {
            i += 1;
            continue;
        }
        let k0 = c[i].key;
        let reach = tie_reach(k0, tol);
        let (mut j, mut last) = (i + 1, c[i].f);
        while j < c.len() && c[j].key - k0 <= reach {
            if !c[j].dead {
                if c[j].f < last {
                    return false;
                }
                last = c[j].f;
            }
            j += 1;
        }
        i = j;
    }
    true
}

/// Re-cuts `s[lo..]` into clusters, writing each one's `span` at its
/// first flow and its [`Ends`] (and pieces) into `clusters`, up to the
/// first cluster that ends after `at`; returns where that cluster ends.
/// `lo` must start a cluster.
fn recut(s: &mut [Kept], lo: usize, at: usize, tol: f64, clusters: &mut Clusters) -> usize {
    let mut i = lo;
    while i < s.len() && i <= at {
        let mut j = i + 1;
        while j < s.len() && !gap(s[j - 1].key, s[j].key, tol) {
            j += 1;
        }
        let cluster = &s[i..j];
        let ends = ends_of(cluster);
        let n_pieces = if cluster.len() > PIECE && runs_in_index_order(cluster, tol) {
            cluster.len().div_ceil(PIECE)
        } else {
            0
        };
        let e = &mut s[i];
        e.span = (j - i) as u32;
        let slot = e.ends_at as usize;
        let slot = if clusters.owner.get(slot) != Some(&e.f) {
            e.ends_at = clusters.ends.len() as u32;
            clusters.ends.push(ends);
            clusters.owner.push(e.f);
            clusters.first_piece.push(u32::MAX);
            clusters.piece_count.push(0);
            clusters.ends.len() - 1
        } else {
            clusters.ends[slot] = ends;
            slot
        };
        if n_pieces == 0 {
            clusters.first_piece[slot] = u32::MAX;
        } else {
            let room = clusters.piece_count[slot] as usize;
            let start = if clusters.first_piece[slot] != u32::MAX && room >= n_pieces {
                clusters.first_piece[slot] as usize
            } else {
                let start = clusters.pieces.len();
                clusters.pieces.resize(start + n_pieces, Ends::default());
                start
            };
            let cluster = &s[i..j];
            for (p, chunk) in cluster.chunks(PIECE).enumerate() {
                clusters.pieces[start + p] = ends_of(chunk);
            }
            clusters.first_piece[slot] = start as u32;
            clusters.piece_count[slot] = n_pieces as u32;
        }
        i = j;
    }
    i
}

/// `s.partition_point(pred)`, probing from the front in steps that
/// double: a few cache lines when the answer is near the front, as it is
/// for the next of a sorted batch.
fn gallop<T>(s: &[T], pred: impl Fn(&T) -> bool) -> usize {
    let (mut lo, mut step) = (0, 1);
    while lo + step <= s.len() && pred(&s[lo + step - 1]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(s.len());
    lo + s[lo..hi].partition_point(pred)
}

/// The position in `sorted` of flow `f`, kept under key `k`.
fn position(sorted: &[Kept], k: f64, f: FlowIdx) -> usize {
    let mut at = gallop(sorted, |e| e.key.total_cmp(&k).then(e.f.cmp(&f)).is_lt());
    while sorted[at].dead && sorted[at].f == f {
        // An earlier stay of `f` under the same key.
        at += 1;
    }
    debug_assert_eq!(sorted[at].f, f, "kept position of {f}");
    at
}

/// [`by_key`] on kept flows.
fn kept_by_key(a: &Kept, b: &Kept) -> Ordering {
    a.key.total_cmp(&b.key).then(a.f.cmp(&b.f))
}

/// Writes into `merged` the flows of `sorted` but those at the (ascending,
/// distinct) positions `gone`, with `batch` merged in; both inputs in
/// [`by_key`] order, and so the output. Stretches that neither lose nor
/// gain a flow are copied whole, so the cost is a copy plus a binary search
/// per change rather than a comparison per flow. `fresh` gets the output
/// positions of `batch`'s flows, `cuts` those where a flow left.
fn merge_at(
    sorted: &[Kept],
    gone: &[usize],
    batch: &[Kept],
    merged: &mut Vec<Kept>,
    fresh: &mut Vec<usize>,
    cuts: &mut Vec<usize>,
) {
    merged.clear();
    fresh.clear();
    cuts.clear();
    merged.reserve(sorted.len() + batch.len());
    let (mut i, mut b) = (0, 0);
    for end in gone.iter().copied().chain([sorted.len()]) {
        while i < end {
            let Some(next) = batch.get(b) else {
                merged.extend_from_slice(&sorted[i..end]);
                break;
            };
            let at = i + gallop(&sorted[i..end], |e| kept_by_key(e, next) == Ordering::Less);
            merged.extend_from_slice(&sorted[i..at]);
            i = at;
            if at == end {
                break;
            }
            fresh.push(merged.len());
            merged.push(*next);
            b += 1;
        }
        if end < sorted.len() {
            cuts.push(merged.len());
        }
        i = end + 1;
    }
    fresh.extend(merged.len()..merged.len() + batch.len() - b);
    merged.extend_from_slice(&batch[b..]);
}

/// Merges `batch` into `sorted` (both in [`by_key`] order) where it lies:
/// only the flows after the first of `batch` move, each once. `fresh`
/// gets the positions of `batch`'s flows, ascending.
fn merge_in_place(sorted: &mut Vec<Kept>, batch: &[Kept], fresh: &mut Vec<usize>) {
    fresh.clear();
    let (n, m) = (sorted.len(), batch.len());
    if m == 0 {
        return;
    }
    sorted.extend_from_slice(batch);
    // `sorted[..i]` are the old flows not yet moved, `sorted[w..]` done.
    let (mut i, mut w) = (n, n + m);
    for b in batch.iter().rev() {
        let p = sorted[..i].partition_point(|e| kept_by_key(e, b) == Ordering::Less);
        sorted.copy_within(p..i, w - (i - p));
        w -= i - p;
        i = p;
        w -= 1;
        sorted[w] = *b;
        fresh.push(w);
    }
    fresh.reverse();
}

/// Calls `visit` on the flows of `sorted` (in [`by_key`] order) with each
/// run of near-ties (keys within `tol` of the run's first key, plus 1e-9
/// of it) by flow index: the order `sort_with_ties` gives, and
/// [`cut_runs`]'s. A run already in index order (exact ties, the common
/// case) is visited where it lies; others are sorted in `buf`. `visit`
/// also hears whether the flow's run holds one of the (ascending)
/// positions `fresh`.
#[cfg(any(test, debug_assertions))]
fn walk_runs(
    sorted: &[Kept],
    tol: f64,
    fresh: &[usize],
    buf: &mut Vec<Kept>,
    mut visit: impl FnMut(&Kept, bool),
) {
    walk_runs_in(sorted, 0, tol, fresh, buf, &mut visit);
}

/// [`walk_runs`] on `sorted[at..]`, `at` the first flow of a run, with
/// `fresh` the positions at or after `at`.
#[inline(always)]
fn walk_runs_in(
    sorted: &[Kept],
    at: usize,
    tol: f64,
    fresh: &[usize],
    buf: &mut Vec<Kept>,
    visit: &mut impl FnMut(&Kept, bool),
) {
    let s = sorted;
    let (mut i, mut q) = (at, 0);
    while i < s.len() {
        if s[i].dead {
            i += 1;
            continue;
        }
        let k0 = s[i].key;
        let reach = tie_reach(k0, tol);
        let mut j = i + 1;
        while j < s.len() && s[j].key - k0 <= reach {
            j += 1;
        }
        let run = &s[i..j];
        let has = q < fresh.len() && fresh[q] < j;
        while q < fresh.len() && fresh[q] < j {
            q += 1;
        }
        let mut live = run.iter().filter(|e| !e.dead);
        let mut last = None;
        if live.clone().all(|e| last.replace(e.f) < Some(e.f)) {
            live.for_each(|e| visit(e, has));
        } else {
            buf.clear();
            buf.extend(live.by_ref());
            buf.sort_unstable_by_key(|e| e.f);
            buf.iter().for_each(|e| visit(e, has));
        }
        i = j;
    }
}

/// A set of flows as a bit per flow index.
#[derive(Debug, Default)]
struct FlowBits(Vec<u64>);

impl FlowBits {
    fn get(&self, f: FlowIdx) -> bool {
        let f = f as usize;
        self.0.get(f / 64).is_some_and(|w| w >> (f % 64) & 1 == 1)
    }
    fn set(&mut self, f: FlowIdx, on: bool) {
        let f = f as usize;
        if self.0.len() <= f / 64 {
            self.0.resize(f / 64 + 1, 0);
        }
        let bit = 1u64 << (f % 64);
        if on {
            self.0[f / 64] |= bit;
        } else {
            self.0[f / 64] &= !bit;
        }
    }
}

/// The active flows in (key, flow index) order, kept from one call to the
/// next; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct SortedFlows {
    sorted: Vec<Kept>,
    merged: Vec<Kept>,
    batch: Vec<Kept>,
    // Positions in `sorted` of the flows that leave it in this update.
    gone: Vec<usize>,
    // Positions in `sorted` of the flows (re-)keyed in this update: the
    // only ones the last fill can have given a rate.
    fresh: Vec<usize>,
    // Positions in `sorted` where a flow left in this update.
    cuts: Vec<usize>,
    // Positions in `sorted` whose flow has a new neighbour before it.
    dirty: Vec<usize>,
    // Kept keys of the flows that leave in this update (or stay: `stay`).
    leaving: Vec<(f64, FlowIdx)>,
    // Flows in `sorted` that left it (`Kept::dead`); whether the last
    // update dropped them.
    n_dead: usize,
    purged: bool,
    clusters: Clusters,
    // Per flow: the key it is kept under in `sorted`, NaN if it is not.
    key_of: Vec<f64>,
    // Per flow: already handled in this update.
    seen: Vec<bool>,
    // Flows given a positive rate by the last and the one before last fill.
    positive: Vec<FlowIdx>,
    positive_before: Vec<FlowIdx>,
    // The flows the last fill gave a positive rate.
    was_positive: FlowBits,
    // Flows whose class is to be reset to `LAST_CLASS` at the next fill:
    // the last fill's first positions, and the flows that started since.
    classed: Vec<FlowIdx>,
    run: Vec<Kept>,
    // Flows the last fill may have given a rate whose keys did not move.
    stay: Vec<FlowIdx>,
    // Positions in `sorted` the fill may not pass over unread: `fresh`,
    // and those of `stay`.
    hot: Vec<usize>,
    // Keys never move while a flow is active (a total size, say): only the
    // flows that start or finish are (re-)keyed.
    fixed_keys: bool,
    tol: f64,
    ready: bool,
}

impl SortedFlows {
    /// An order whose keys never move while a flow is active (a total
    /// size or a deadline): an update re-keys only the flows that started
    /// or finished, not those that had a rate.
    pub(crate) fn with_fixed_keys() -> SortedFlows {
        SortedFlows {
            fixed_keys: true,
            ..SortedFlows::default()
        }
    }

    /// Brings the order up to date with `changes`; the order is then
    /// `sort_with_ties` of the keyed active flows, near-ties (keys within
    /// `tol` of their run's first key, as `sort_with_ties` cuts runs) by
    /// flow index. `key(f)` is the key of active flow `f`, or `None` for a
    /// flow this order leaves out; it is read for the flows that started
    /// and the flows that had a rate in the last two fills (all of them
    /// at the first call, and after a resync, when every key may have
    /// moved).
    pub(crate) fn update(
        &mut self,
        view: &Clairvoyant<'_>,
        changes: &Changes,
        tol: f64,
        key: impl Fn(FlowIdx) -> Option<f64>,
    ) {
        self.tol = tol;
        if self.seen.len() < view.n_flows() {
            self.seen.resize(view.n_flows(), false);
            self.key_of.resize(view.n_flows(), f64::NAN);
        }
        let kept = |k: f64, f: FlowIdx| {
            let path = view.path_links(view.path_idx(f));
            let ends = match (path.first(), path.last()) {
                (Some(a), Some(b)) => [a.0, b.0],
                _ => [u32::MAX; 2],
            };
            Kept {
                key: k,
                f,
                span: 1,
                ends,
                ends_at: u32::MAX,
                dead: false,
            }
        };
        self.batch.clear();
        self.gone.clear();
        if !self.ready || changes.resynced {
            self.ready = true;
            for e in self.sorted.drain(..) {
                self.key_of[e.f as usize] = f64::NAN;
            }
            self.n_dead = 0;
            for &f in view.active_flows() {
                self.classed.push(f);
                if let Some(k) = key(f) {
                    self.batch.push(kept(k, f));
                }
            }
        } else {
            // A flow that leaves stays in place, dead, so that the flows
            // around it keep their places and their clusters' summaries.
            let (key_of, leaving) = (&mut self.key_of, &mut self.leaving);
            leaving.clear();
            let leave = |key_of: &mut [f64], leaving: &mut Vec<(f64, FlowIdx)>, f: FlowIdx| {
                let k = std::mem::replace(&mut key_of[f as usize], f64::NAN);
                if !k.is_nan() {
                    leaving.push((k, f));
                }
            };
            for &f in &changes.finished {
                leave(key_of, leaving, f);
            }
            let moved: &[FlowIdx] = if self.fixed_keys { &[] } else { &self.positive };
            let before: &[FlowIdx] = if self.fixed_keys {
                &[]
            } else {
                &self.positive_before
            };
            for &f in moved.iter().chain(before).chain(&changes.started) {
                let fi = f as usize;
                if self.seen[fi] || !view.is_active(f) {
                    continue;
                }
                self.seen[fi] = true;
                let k = key(f);
                if k.map(f64::to_bits) == Some(key_of[fi].to_bits()) {
                    // Sent nothing since it was keyed (no time passed).
                    self.stay.push(f);
                    continue;
                }
                leave(key_of, leaving, f);
                if let Some(k) = k {
                    self.batch.push(kept(k, f));
                }
            }
            for &f in moved.iter().chain(before).chain(&changes.started) {
                self.seen[f as usize] = false;
            }
            if self.fixed_keys {
                self.stay.extend_from_slice(&self.positive);
            }
            self.classed.extend_from_slice(&changes.started);
            // Found in one sweep, in key order.
            leaving.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut at = 0;
            for &(k, f) in leaving.iter() {
                at += position(&self.sorted[at..], k, f);
                self.sorted[at].dead = true;
            }
            self.n_dead += leaving.len();
        }
        for e in &self.batch {
            self.key_of[e.f as usize] = e.key;
        }
        self.batch.sort_unstable_by(kept_by_key);
        // Dead flows are dropped once they are a fifth of the order; the
        // clusters are then cut again from scratch.
        self.purged = self.n_dead > self.sorted.len() / 5 + 64;
        if self.purged {
            let dead = self.sorted.iter().enumerate().filter(|(_, e)| e.dead);
            self.gone.extend(dead.map(|(i, _)| i));
            self.n_dead = 0;
        }
        if self.gone.is_empty() {
            // Nothing leaves the vector: merged in place, from the back.
            merge_in_place(&mut self.sorted, &self.batch, &mut self.fresh);
            self.cuts.clear();
        } else {
            let (sorted, merged) = (&self.sorted, &mut self.merged);
            merge_at(
                sorted,
                &self.gone,
                &self.batch,
                merged,
                &mut self.fresh,
                &mut self.cuts,
            );
            std::mem::swap(&mut self.sorted, &mut self.merged);
        }
        self.recut();
        // The flows the last fill may have given a rate that kept their
        // keys, and so their places: found by their kept keys.
        self.hot.clear();
        self.hot.extend_from_slice(&self.fresh);
        self.leaving.clear();
        for f in self.stay.drain(..) {
            let k = self.key_of[f as usize];
            if !k.is_nan() {
                self.leaving.push((k, f));
            }
        }
        self.leaving
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut at = 0;
        for &(k, f) in &self.leaving {
            at += position(&self.sorted[at..], k, f);
            self.hot.push(at);
        }
        self.hot.sort_unstable();
        #[cfg(debug_assertions)]
        {
            for e in self.sorted.iter().filter(|e| !e.dead) {
                let f = e.f;
                let k = key(f).map(f64::to_bits);
                debug_assert_eq!(k, Some(e.key.to_bits()), "key of {f}");
                debug_assert_eq!(self.key_of[f as usize].to_bits(), e.key.to_bits());
            }
            let live = self.sorted.iter().filter(|e| !e.dead).count();
            let keyed = view.active_flows().iter().filter(|&&f| key(f).is_some());
            debug_assert_eq!(live, keyed.count(), "flows kept");
            let dead = self.sorted.len() - live;
            debug_assert_eq!(dead, if self.purged { 0 } else { self.n_dead });
        }
    }

    /// Re-cuts the clusters around the positions where flows joined or
    /// left; the others only moved, and keep their `span` and [`Ends`].
    fn recut(&mut self) {
        let (s, tol, clusters) = (&mut self.sorted, self.tol, &mut self.clusters);
        if self.purged || clusters.full_recut_due(s.len()) {
            clusters.clear(s);
            let n = s.len();
            recut(s, 0, n, tol, clusters);
            return;
        }
        // Where a flow has a new neighbour before it: each one that joined,
        // and the first flow after each place where one left (past the
        // flows that joined there).
        let fresh = &self.fresh;
        self.dirty.clear();
        self.dirty.extend_from_slice(fresh);
        for &x in &self.cuts {
            let (mut y, mut k) = (x, fresh.partition_point(|&p| p < x));
            while fresh.get(k) == Some(&y) {
                (y, k) = (y + 1, k + 1);
            }
            self.dirty.push(y);
        }
        self.dirty.sort_unstable();
        let mut done = 0;
        for &x in &self.dirty {
            if s.is_empty() {
                break;
            }
            // New neighbours: the flows at `x - 1` and `x` (a join cannot
            // make a flow after it start a cluster, keys only growing
            // along the order). Re-cut from the start of the cluster that
            // holds the flow before `x` to the end of the one that holds
            // `x`.
            let at = x.min(s.len() - 1);
            if at < done {
                continue;
            }
            let mut lo = x.saturating_sub(1).max(done).min(s.len() - 1);
            while lo > done && !gap(s[lo - 1].key, s[lo].key, tol) {
                lo -= 1;
            }
            done = recut(s, lo, at, tol, clusters);
        }
        #[cfg(debug_assertions)]
        {
            let (mut fresh, mut want_clusters) = (s.clone(), Clusters::default());
            want_clusters.clear(&mut fresh);
            let n = fresh.len();
            recut(&mut fresh, 0, n, tol, &mut want_clusters);
            let mut i = 0;
            while i < s.len() {
                let (got, want) = (&s[i], &fresh[i]);
                debug_assert_eq!(got.span, want.span, "span at {i}");
                let got_ends = clusters.ends[got.ends_at as usize];
                debug_assert!(got_ends == want_clusters.ends[want.ends_at as usize]);
                let got_pieces = clusters.pieces_of(got.ends_at as usize);
                let want_pieces = want_clusters.pieces_of(want.ends_at as usize);
                debug_assert_eq!(got_pieces, want_pieces, "pieces at {i}");
                debug_assert_eq!(clusters.owner[got.ends_at as usize], got.f);
                i += want.span as usize;
            }
        }
    }

    /// The order of the last [`SortedFlows::update`], as [`cut_runs`]
    /// writes it.
    #[cfg(any(test, debug_assertions))]
    fn order(&self, view: &Clairvoyant<'_>) -> Vec<(FlowIdx, PathIdx)> {
        let mut order = vec![];
        let visit = |e: &Kept, _| order.push((e.f, view.path_idx(e.f)));
        walk_runs(&self.sorted, self.tol, &[], &mut vec![], visit);
        order
    }

    /// Fills greedily in `prefix` then the order of the last
    /// [`SortedFlows::update`]: what [`greedy_fill`] gives (the same rates,
    /// set in the same order), but classes capped at [`LAST_CLASS`] and a
    /// flow whose path's first or last link is full passed over without
    /// reading its path. Notes which flows got a rate, for the next update.
    pub(crate) fn fill(
        &mut self,
        view: &Clairvoyant<'_>,
        prefix: &[FlowIdx],
        residual: &mut Vec<f64>,
        out: &mut Allocation,
    ) {
        #[cfg(debug_assertions)]
        let want = {
            let mut want = out.clone();
            let order = prefix.iter().map(|&f| (f, view.path_idx(f)));
            let was: Vec<bool> = (0..view.n_flows())
                .map(|f| self.was_positive.get(f as FlowIdx))
                .collect();
            let order = order.chain(self.order(view));
            greedy_fill(view, order, &mut vec![], &mut want, &was, &mut vec![]);
            want
        };
        std::mem::swap(&mut self.positive, &mut self.positive_before);
        self.positive.clear();
        for f in self.classed.drain(..) {
            out.set_class(f, LAST_CLASS);
        }
        residual.clear();
        residual.extend_from_slice(view.capacities());
        let mut fill = Fill {
            view,
            residual,
            out,
            floor: coflowkit_alloc::EPS * 1e9,
            was_positive: &self.was_positive,
            positive: &mut self.positive,
            classed: &mut self.classed,
            at: 0,
            saturated: 0,
            open: vec![0; CLASSES],
            full: [0; WORDS],
        };
        fill.start();
        for &f in prefix {
            fill.visit(f, [u32::MAX; 2], true);
        }
        // Cluster by cluster: one whose flows share a full link, holds no
        // flow the last fill gave a rate and lies past the classes is
        // passed over whole (each of its flows would get 0 and no class).
        let (s, tol, fresh) = (&self.sorted, self.tol, &self.hot[..]);
        let (mut i, mut q) = (0, 0);
        while i < s.len() {
            let end = i + s[i].span as usize;
            while q < fresh.len() && fresh[q] < i {
                q += 1;
            }
            let has_fresh = q < fresh.len() && fresh[q] < end;
            let slot = s[i].ends_at as usize;
            let ends = &self.clusters.ends[slot];
            if !has_fresh && fill.at >= LAST_CLASS && fill.all_blocked(ends) {
                i = end;
                continue;
            }
            if let Some(pieces) = self.clusters.pieces_of(slot) {
                // Walked where it lies: piece by piece, passing over a
                // blocked piece as over a blocked cluster.
                for (p, ends) in pieces.iter().enumerate() {
                    let (a, b) = (i + p * PIECE, (i + (p + 1) * PIECE).min(end));
                    while q < fresh.len() && fresh[q] < a {
                        q += 1;
                    }
                    let has_fresh = q < fresh.len() && fresh[q] < b;
                    if !has_fresh && fill.at >= LAST_CLASS && fill.all_blocked(ends) {
                        continue;
                    }
                    for e in s[a..b].iter().filter(|e| !e.dead) {
                        fill.visit(e.f, e.ends, has_fresh);
                    }
                }
                i = end;
                continue;
            }
            let mut visit = |e: &Kept, fresh| fill.visit(e.f, e.ends, fresh);
            walk_runs_in(&s[..end], i, tol, &fresh[q..], &mut self.run, &mut visit);
            i = end;
        }
        for &f in &self.positive_before {
            self.was_positive.set(f, false);
        }
        for &f in &self.positive {
            self.was_positive.set(f, true);
        }
        #[cfg(debug_assertions)]
        for &f in view.active_flows() {
            let (got, w) = (out.rate(f), want.rate(f));
            debug_assert_eq!(got.to_bits(), w.to_bits(), "rate of {f}");
            let class = want.class(f).min(LAST_CLASS);
            debug_assert_eq!(out.class(f), class, "class of {f}");
        }
    }
}

/// One greedy fill in progress: [`greedy_fill`]'s loop body.
struct Fill<'a, 'v> {
    view: &'a Clairvoyant<'v>,
    residual: &'a mut [f64],
    out: &'a mut Allocation,
    floor: f64,
    was_positive: &'a FlowBits,
    positive: &'a mut Vec<FlowIdx>,
    classed: &'a mut Vec<FlowIdx>,
    // The position of the next flow in the order.
    at: u32,
    // Links filled so far; once all are, the rest get 0 unread.
    saturated: usize,
    // Per link class: how many of its links are not full; the classes
    // whose links are all full.
    open: Vec<u32>,
    full: Classes,
}

impl Fill<'_, '_> {
    /// Counts each class's links that are not full.
    fn start(&mut self) {
        for (l, &r) in self.residual.iter().enumerate() {
            if r > self.floor {
                self.open[l % CLASSES] += 1;
            }
        }
        for c in 0..CLASSES {
            if self.open[c] == 0 {
                self.full[c / 64] |= 1 << (c % 64);
            }
        }
    }

    /// Whether every flow of a cluster with these [`Ends`] crosses a full
    /// link: all first links or all last links are full.
    #[inline(always)]
    fn all_blocked(&self, ends: &Ends) -> bool {
        let within = |set: &Classes| set.iter().zip(&self.full).all(|(s, f)| s & !f == 0);
        within(&ends.first) || within(&ends.last)
    }

    /// Notes that link `l` just became full.
    fn filled(&mut self, l: usize) {
        self.saturated += 1;
        let c = l % CLASSES;
        self.open[c] -= 1;
        if self.open[c] == 0 {
            self.full[c / 64] |= 1 << (c % 64);
        }
    }

    /// Whether one of `links` (`u32::MAX` for none) is full.
    #[inline(always)]
    fn any_full(&self, links: [u32; 2]) -> bool {
        let full = |l: u32| {
            self.residual
                .get(l as usize)
                .is_some_and(|&r| r <= self.floor)
        };
        full(links[0]) || full(links[1])
    }

    /// Gives flow `f` (whose path's first and last links are `ends`, or
    /// `u32::MAX` if unknown) the least residual capacity on its path;
    /// `fresh` is false only if the last fill did not give it a rate.
    #[inline(always)]
    fn visit(&mut self, f: FlowIdx, ends: [u32; 2], fresh: bool) {
        if self.at < LAST_CLASS {
            self.out.set_class(f, self.at);
            self.classed.push(f);
        }
        self.at += 1;
        if self.saturated == self.residual.len() {
            self.pass(f, fresh);
            return;
        }
        if self.any_full(ends) {
            self.pass(f, fresh);
            return;
        }
        let floor = self.floor;
        let path = self.view.path_links(self.view.path_idx(f));
        let mut r = f64::INFINITY;
        for l in path {
            r = r.min(self.residual[l.0 as usize]);
        }
        if r <= floor {
            // Also a negative or NaN-free 0: the fill's `max(0.0)`.
            self.pass(f, fresh);
            return;
        }
        self.out.set_rate(f, r);
        for l in path {
            let res = &mut self.residual[l.0 as usize];
            *res -= r;
            if *res <= floor {
                *res = 0.0;
                self.filled(l.0 as usize);
            }
        }
        if self.out.rate(f) > 0.0 {
            self.positive.push(f);
        }
    }

    /// Flow `f` gets 0: a change only if the last fill gave it a rate.
    #[inline]
    fn pass(&mut self, f: FlowIdx, fresh: bool) {
        if fresh && self.was_positive.get(f) {
            self.out.set_rate(f, 0.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::stats::sort_with_ties;
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    /// An order kept by [`merge_into`] and [`cut_runs`] (some flows leave,
    /// some are re-keyed, some join) is, at every step, `sort_with_ties` of
    /// the flows present, on random keys with many near-ties.
    #[test]
    fn kept_order_matches_a_full_sort() {
        // proptest's deterministic generator: the same instances every run.
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        let tol = 1.0;
        for _ in 0..500 {
            let n = 1 + rnd(60) as usize;
            let mut key: Vec<Option<f64>> = vec![None; n];
            let mut sorted: Vec<Entry> = vec![];
            let (mut merged, mut order) = (vec![], vec![]);
            for _ in 0..10 {
                // Flows to (re-)key: some present, some absent; some leave.
                let mut leaves = vec![false; n];
                let mut batch: Vec<Entry> = vec![];
                for f in 0..n {
                    match rnd(4) {
                        0 => {
                            leaves[f] = true;
                            let k = (rnd(40) as f64) * 0.4;
                            key[f] = Some(k);
                            batch.push((k, f as FlowIdx, f as PathIdx));
                        }
                        1 if key[f].is_some() => {
                            leaves[f] = true;
                            key[f] = None;
                        }
                        _ => {}
                    }
                }
                batch.sort_unstable_by(by_key);
                merge_into(&sorted, &batch, |f| leaves[f as usize], &mut merged);
                std::mem::swap(&mut sorted, &mut merged);
                cut_runs(&sorted, tol, &mut order);
                let mut full: Vec<(f64, FlowIdx)> = (0..n)
                    .filter_map(|f| key[f].map(|k| (k, f as FlowIdx)))
                    .collect();
                sort_with_ties(&mut full, |e| e.0, |e| e.1, tol);
                let got: Vec<FlowIdx> = order.iter().map(|e| e.0).collect();
                let want: Vec<FlowIdx> = full.iter().map(|e| e.1).collect();
                assert_eq!(got, want);
            }
        }
    }

    /// The order kept by [`merge_at`] and [`SortedFlows::recut`] (some
    /// flows leave, out of it or dead in place, some are re-keyed, some
    /// join) is at every step
    /// `sort_with_ties` of the flows present, walked cluster by cluster as
    /// the fill walks it, and its clusters are the ones a cut from scratch
    /// gives; random keys with many exact and near ties.
    #[test]
    fn kept_clusters_match_a_full_sort() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        let tol = 1.0;
        for _ in 0..500 {
            let n = 1 + rnd(60) as usize;
            let mut key: Vec<Option<f64>> = vec![None; n];
            let mut kept = SortedFlows {
                tol,
                ..SortedFlows::default()
            };
            for _ in 0..10 {
                let (mut gone, mut batch) = (vec![], vec![]);
                // Every other step all leaving flows die in place and the
                // batch is merged in place, as `update` does.
                let in_place = rnd(2) == 0;
                for (f, slot) in key.iter_mut().enumerate() {
                    let was = *slot;
                    let leaves = match rnd(4) {
                        0 => {
                            let k = (rnd(40) as f64) * 0.4;
                            *slot = Some(k);
                            let ends = [rnd(3) as u32, 3 + rnd(3) as u32];
                            let f = f as FlowIdx;
                            batch.push(Kept {
                                key: k,
                                f,
                                span: 1,
                                ends,
                                ends_at: u32::MAX,
                                dead: false,
                            });
                            true
                        }
                        1 if was.is_some() => {
                            *slot = None;
                            true
                        }
                        _ => false,
                    };
                    if let (true, Some(k)) = (leaves, was) {
                        let at = kept
                            .sorted
                            .iter()
                            .position(|e| e.f as usize == f && !e.dead);
                        let at = at.unwrap();
                        assert_eq!(kept.sorted[at].key, k);
                        // Half of them leave their place, half die in it.
                        if !in_place && rnd(2) == 0 {
                            gone.push(at);
                        } else {
                            kept.sorted[at].dead = true;
                        }
                    }
                }
                gone.sort_unstable();
                batch.sort_unstable_by(kept_by_key);
                let k = &mut kept;
                if gone.is_empty() {
                    merge_in_place(&mut k.sorted, &batch, &mut k.fresh);
                    k.cuts.clear();
                } else {
                    merge_at(
                        &k.sorted,
                        &gone,
                        &batch,
                        &mut k.merged,
                        &mut k.fresh,
                        &mut k.cuts,
                    );
                    std::mem::swap(&mut k.sorted, &mut k.merged);
                }
                k.recut();
                // Cluster by cluster, as the fill walks it.
                let mut got = vec![];
                let mut i = 0;
                while i < k.sorted.len() {
                    let end = i + k.sorted[i].span as usize;
                    let mut visit = |e: &Kept, _| got.push(e.f);
                    walk_runs_in(&k.sorted[..end], i, tol, &[], &mut vec![], &mut visit);
                    i = end;
                }
                let mut full: Vec<(f64, FlowIdx)> = (0..n)
                    .filter_map(|f| key[f].map(|k| (k, f as FlowIdx)))
                    .collect();
                sort_with_ties(&mut full, |e| e.0, |e| e.1, tol);
                let want: Vec<FlowIdx> = full.iter().map(|e| e.1).collect();
                assert_eq!(got, want);
            }
        }
    }
}
