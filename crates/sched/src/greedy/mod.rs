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
//! keeps the active flows sorted by (key, flow index) in chunks: stretches
//! of the order that end where a cluster does (neighbouring keys further
//! apart than the tie reach, [`gap`], so that no near-tie run crosses a
//! chunk's end), of about [`CHUNK`] flows (one cluster longer than that
//! is a chunk of its own). The chunks' first keys are kept apart from
//! them (the search by key reads no more than these), and each chunk's
//! summary holds the sets of the first and of the last links of its
//! flows' paths (by link class, `l % 320`: exact on a big switch of up to
//! 160 hosts, and never wrong, since a class counts as full only when all
//! its links are). Each live flow's chunk is kept by an id that stays
//! while chunks before it come and go ([`Places`]), so a flow that moves
//! or leaves finds its chunk without a search, and its place by a look
//! over a short chunk. A flow the last fill gave a rate, kept in a long
//! chunk walked piece by piece, finds its place where it was last found
//! while the chunk's flows have not moved since (a version per chunk,
//! new whenever they move): `edf-sjf`'s ~110 such flows an event on
//! FB2010 are not searched for by key again at every fill. The flows that had a rate in the last two fills
//! (the moving flows: their keys are read again at every update) are not
//! kept in the chunks but apart, in a short list sorted again at each
//! update (~110 on FB2010, nearly in order: a stable sort, which finds
//! the runs of a list nearly in order, and gives the same order since no
//! two flows share a (key, index)); a flow joins it when a fill
//! first gives it a rate (it is marked dead in its chunk) and goes back
//! into the chunks, under its key read then, once two fills in turn gave
//! it 0: on FB2010 ~4 flows an event, where the moving ones are ~110. The
//! flows that leave the chunks are marked dead in place, and the
//! returning and the new flows merged into the chunks they fall in; only
//! those chunks are joined with
//! the next one (where no cluster ends between them any more, or both are
//! short) and split (where a cluster ends nearest their middle). A flow
//! that falls past its chunk's last flow, a cluster's end away, starts a
//! chunk of its own, so that a long cluster is not changed for it. A dead
//! flow still counts for its chunk's summary (which holds more than it
//! needs, never less) until dead flows are a quarter of the chunk, which
//! is then purged. A chunk that changed is summed up again only when a
//! fill may pass over it (it holds no flow the last fill gave a rate and
//! lies past the classes) or walk it piece by piece (it is long and few
//! of its flows had a rate): a chunk whose flows send (under fixed keys)
//! is walked whatever its summary. Until then it is walked as runs, where
//! it lies if they are in flow index order. So an event costs the flows
//! and chunks it changes, not the length of the order. Chunks are boxed:
//! one inserted or removed moves a pointer per chunk after it. Where keys never move while a flow is active
//! (`edf-sjf`'s total size: [`SortedFlows::with_fixed_keys`]) only the
//! flows that start or finish are (re-)keyed, and no flow moves.
//!
//! On a big switch whose links are all of one capacity (FB2010), the
//! fill's rates are a greedy matching in the order's priority, and an
//! event changes only a short chain of it near the order's front: there
//! the fill is kept as that matching ([`matching`]) and decided from the
//! links freed, the order's first [`LAST_CLASS`] positions read for the
//! classes alone. Where that chain cannot be sure of the order (near-ties
//! on a link), or the links or paths are not a matching's, or a prefix
//! comes first, the order is walked in full as below.
//!
//! The fill walks the order chunk by chunk, each with the moving flows
//! that fall among its flows (up to the next chunk's first flow). A
//! chunk past the classes whose flows are all blocked when the walk
//! reaches it (its cover or its ends), and that holds no flow the last
//! fill gave a rate, gives its own flows 0 and no class: if its moving
//! flows are pairwise of equal keys or a cluster's end apart, the last
//! one a cluster's end before the next chunk ([`spaced`]; no run can
//! reorder them, whatever kept flows lie between), they alone are
//! visited, in their order, and the chunk's flows are not read (on
//! FB2010, 22 of the 32 chunks an event that hold moving flows). Where
//! each such moving flow is a cluster's end away from its neighbours,
//! kept or moving, dead or alive ([`apart`]; the common case), it is a
//! near-tie run of its own that ends the runs before it; in a chunk of
//! equal-key runs it may also have the key of a kept neighbour (the
//! merged flows are then of equal-key runs too). Either way it is visited
//! where it falls, and the chunk's stretches between them are walked as
//! the chunk is (the stretches end where runs do); if the chunk's flows
//! are all blocked when the walk reaches it (its cover or its ends, past
//! the classes), only the moving flows are visited, since the links they
//! fill only block more. Otherwise the chunk and its moving flows are
//! merged and walked as runs, with the next chunks while the last flow is
//! a moving one no cluster's end away from the next chunk.
//!
//! A chunk whose first links or whose last links are all full by the
//! time the walk reaches it, that holds no flow the last fill gave a rate, and that lies past
//! [`LAST_CLASS`], would give each of its flows 0 and no new class: the
//! walk passes it over unread. On FB2010 that is most of the order. A
//! chunk whose near-tie runs are already in flow index order (exact ties,
//! as a coflow's equal flows are under a size key) is walked where it
//! lies; one longer than [`PIECE`] also keeps the same sets per [`PIECE`]
//! flows, so that the walk passes over its blocked pieces the same way.
//! A chunk (of at most [`PIECE`] flows) or piece past [`LAST_CLASS`] with
//! no flow the last fill gave a rate, whose live flows all cross a full
//! first or last link when the walk reaches it, keeps a cover: for each
//! such flow the class of one full end. The cover depends on the flows'
//! ends only, so it stays while they leave or are purged (and goes with
//! the flows into a split or joined chunk);
//! while all its classes are full, a later fill passes the chunk or
//! piece over reading no more than the cover, however its first and last
//! links are mixed. A chunk whose cover is not known or not full is
//! looked at flow by flow from its start while they are blocked: those
//! are not walked again (full links stay full through a fill).
//! A flow that leaves a chunk whose runs are not all of equal keys may
//! let a run start later and reach further, out of index order: the chunk
//! is then walked as runs until it is summed up again. A flow whose
//! path's first or last link is full is passed without reading its path.
//! Classes are positions capped at [`LAST_CLASS`], where every driver
//! stops telling them apart.
//!
//! Correctness properties: after [`SortedFlows::update`] the order is the
//! one `sort_with_ties` gives on every active flow's key read now: the
//! chunks hold the unique (key, index) order, whose anchored near-tie
//! runs are then cut exactly as `sort_with_ties` cuts them (the reference
//! suites in `crates/sim/tests/reference` hold `srpt`, `pfabric-edf` and
//! `edf-sjf` against slow references; debug builds check every kept key
//! and every moving flow's key against a fresh read, the moving flows'
//! order, and the live flows against the active ones in
//! [`SortedFlows::update`], the chunks, their first keys, each live flow's
//! chunk id and each id's position, each place kept under a chunk's
//! version against a search, every cover against its chunk's or
//! piece's live flows, and the summed chunks' ends, flags and
//! pieces against a summary from scratch (a chunk not summed is walked as
//! runs), and every fill's rates and classes against [`greedy_fill`] on
//! the full order (the chunks' live flows and the moving ones sorted from
//! scratch); the unit tests hold the chunked order, joined, split, purged
//! and summed up at random with chunks of 1
//! to 16 flows, against a sorted `Vec` and `sort_with_ties`). A kept key is trusted
//! only for a flow whose rate was 0 in the last two fills: the first fill
//! that gives it 0 runs while it still sends at its old rate until the
//! driver applies the new one.

#[cfg(any(test, debug_assertions))]
use crate::PathIdx;
use crate::{Allocation, Changes, Clairvoyant, FlowIdx};
use matching::Matching;
use std::cmp::Ordering;

pub(crate) mod matching;

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
        let j = tie_run_end(s, i, tol, |e| e.0);
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
/// most fills without reading the path. A flow that left the order stays in place,
/// `dead`, until its chunk is purged: it still counts for the clusters
/// and their summaries (which then hold more than they need, never less)
/// but no walk visits it.
#[derive(Debug, Clone, Copy)]
struct Kept {
    key: f64,
    f: FlowIdx,
    ends: [u32; 2],
    dead: bool,
}

/// Link classes of a cluster summary: link `l` is in class `l % CLASSES`
/// (one class per link on a big switch of up to 160 hosts).
pub(crate) const CLASSES: usize = 320;
pub(crate) const WORDS: usize = CLASSES / 64;

/// A set of link classes.
pub(crate) type Classes = [u64; WORDS];

/// Adds link `l`'s class to `set`; `u32::MAX` (no link) adds them all.
#[inline(always)]
pub(crate) fn add_class(set: &mut Classes, l: u32) {
    if l == u32::MAX {
        *set = [u64::MAX; WORDS];
    } else {
        // Most links are below `CLASSES`: no division for them.
        let c = if (l as usize) < CLASSES {
            l as usize
        } else {
            l as usize % CLASSES
        };
        set[c / 64] |= 1 << (c % 64);
    }
}

/// The classes of the first and of the last links of a cluster's paths.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Ends {
    pub(crate) first: Classes,
    pub(crate) last: Classes,
}

impl Ends {
    /// Adds `other`'s classes.
    fn add(&mut self, other: &Ends) {
        for w in 0..WORDS {
            self.first[w] |= other.first[w];
            self.last[w] |= other.last[w];
        }
    }
}

/// Flows per piece: a cluster longer than this whose runs are already in
/// flow index order is also summed up piece by piece, so that the fill
/// can pass over a blocked piece of it.
const PIECE: usize = 64;

/// Flows per chunk aimed at: a chunk is split where a cluster ends once
/// it holds more than twice this, and joined with the next one when both
/// fit in this.
const CHUNK: usize = 16;

// How far a near-tie run reaches, and where it ends: `sort_with_ties`'s
// own rule (the model crate), so that every order cuts runs alike.
pub(crate) use coflowkit_model::stats::{tie_reach, tie_run_end};

/// Whether a cluster of the order ends between keys `a` and `b` (`a <=
/// b`): `b` is then further from `a`, and so (keys being non-negative)
/// from every key before it, than `sort_with_ties` reaches, so a run
/// starts at `b` whatever came before. The gap stays one if a flow before
/// `b` leaves or one after `a` does (the keys around it only move apart).
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

/// Whether every near-tie run of `cluster` (cut as [`walk_runs`] cuts
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

/// Sums up chunk `s` (it starts and ends where clusters do): returns the
/// [`Ends`] of all its flows, whether its near-tie runs are already in
/// flow index order (it is then walked where it lies) and whether they
/// are all of equal keys ([`exact_ties`]), and writes into `pieces` the
/// [`Ends`] of each [`PIECE`] flows of it if it is in order and longer
/// than that.
fn cut(s: &[Kept], tol: f64, pieces: &mut Vec<Ends>) -> (Ends, bool, bool) {
    pieces.clear();
    let exact = exact_ties(s, tol);
    let in_order = exact || runs_in_index_order(s, tol);
    let ends = if s.len() > PIECE && in_order {
        let mut all = Ends::default();
        for piece in s.chunks(PIECE) {
            let ends = ends_of(piece);
            all.add(&ends);
            pieces.push(ends);
        }
        all
    } else {
        ends_of(s)
    };
    (ends, in_order, exact)
}

/// Whether neighbouring keys of `s` are equal or a cluster's end apart.
fn exact_ties(s: &[Kept], tol: f64) -> bool {
    let apart = |w: &[Kept]| w[0].key == w[1].key || gap(w[0].key, w[1].key, tol);
    s.windows(2).all(apart)
}

/// `s.partition_point(pred)`, probing from the front in steps that
/// double: a few cache lines when the answer is near the front.
pub(crate) fn gallop<T>(s: &[T], pred: impl Fn(&T) -> bool) -> usize {
    let (mut lo, mut step) = (0, 1);
    while lo + step <= s.len() && pred(&s[lo + step - 1]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(s.len());
    lo + s[lo..hi].partition_point(pred)
}

/// The position in `sorted` of live flow `f`, kept under key `k`: a
/// look at each flow of a short chunk (it holds one live `f`), a search
/// by key in a long one.
fn position(sorted: &[Kept], k: f64, f: FlowIdx) -> usize {
    if sorted.len() <= PIECE {
        let at = sorted.iter().position(|e| e.f == f && !e.dead);
        debug_assert!(at.is_some(), "kept position of {f}");
        return at.unwrap_or(0);
    }
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

/// Appends to `out` the flows of `a` and `b` (each in [`by_key`] order)
/// merged in that order.
fn merge_sorted(a: &[Kept], b: &[Kept], out: &mut Vec<Kept>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if kept_by_key(&a[i], &b[j]).is_le() {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// Whether each flow of `moving` (in [`by_key`] order, falling among the
/// flows of chunk `flows` and before the next chunk's first key `next`)
/// is a cluster's end away from its neighbours in the merged order, dead
/// or alive (or, if `exact`, of equal key to those of the chunk): it is
/// then a run of its own, and ends the runs before it (or, if `exact`,
/// the merged flows are of equal-key runs too, walked where they lie).
/// Writes into `at` where each moving flow falls among `flows` (the
/// number of them before it), so that the walk does not search again.
fn apart(
    flows: &[Kept],
    moving: &[Kept],
    next: Option<f64>,
    tol: f64,
    exact: bool,
    at: &mut Vec<usize>,
) -> bool {
    at.clear();
    let mut j = 0;
    for (i, m) in moving.iter().enumerate() {
        j += flows[j..].partition_point(|e| kept_by_key(e, m).is_lt());
        at.push(j);
        let before = [
            i.checked_sub(1).map(|i| &moving[i]),
            j.checked_sub(1).map(|j| &flows[j]),
        ];
        let prev = before
            .into_iter()
            .flatten()
            .max_by(|a, b| kept_by_key(a, b));
        let after = [moving.get(i + 1), flows.get(j)];
        let after = after.into_iter().flatten().min_by(|a, b| kept_by_key(a, b));
        let prev_ok = prev.is_none_or(|p| (exact && p.key == m.key) || gap(p.key, m.key, tol));
        let next_ok = match after {
            Some(n) => (exact && n.key == m.key) || gap(m.key, n.key, tol),
            // A cluster's end before the next chunk, so that no run crosses it.
            None => next.is_none_or(|n| gap(m.key, n, tol)),
        };
        if !(prev_ok && next_ok) {
            return false;
        }
    }
    true
}

/// Whether the flows of `moving` (in [`by_key`] order, falling before
/// the next chunk's first key `next`) keep that order among themselves in
/// the order, whatever kept flows lie between them: each neighbouring pair
/// is of equal keys (one run, by index) or a cluster's end apart (no run
/// holds both: a run starting at or before the first reaches no further
/// than from it), and the last one is a cluster's end before `next`, so
/// that no run carries it past a flow of the next chunk. Kept flows that
/// are all blocked then change nothing: the moving flows alone are
/// visited, in this order.
fn spaced(moving: &[Kept], next: Option<f64>, tol: f64) -> bool {
    let apart = |w: &[Kept]| w[0].key == w[1].key || gap(w[0].key, w[1].key, tol);
    let last = moving[moving.len() - 1].key;
    moving.windows(2).all(apart) && next.is_none_or(|n| gap(last, n, tol))
}

/// Merges `batch` into `sorted` (both in [`by_key`] order) where it lies:
/// only the flows after the first of `batch` move, each once.
fn merge_in_place(sorted: &mut Vec<Kept>, batch: &[Kept]) {
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
    }
}

/// Calls `visit` on the live flows of `sorted` (in [`by_key`] order, a
/// cluster's end before it) with each run of near-ties (keys within `tol`
/// of the run's first key, plus 1e-9 of it) by flow index: the order
/// `sort_with_ties` gives, and [`cut_runs`]'s. A run already in index
/// order (exact ties, the common case) is visited where it lies; others
/// are sorted in `buf`.
#[inline(always)]
fn walk_runs(sorted: &[Kept], tol: f64, buf: &mut Vec<Kept>, visit: &mut impl FnMut(&Kept)) {
    let s = sorted;
    let mut i = 0;
    while i < s.len() {
        if s[i].dead {
            i += 1;
            continue;
        }
        let j = tie_run_end(s, i, tol, |e| e.key);
        let run = &s[i..j];
        let mut live = run.iter().filter(|e| !e.dead);
        let mut last = None;
        if live.clone().all(|e| last.replace(e.f) < Some(e.f)) {
            live.for_each(&mut *visit);
        } else {
            buf.clear();
            buf.extend(live.by_ref());
            buf.sort_unstable_by_key(|e| e.f);
            buf.iter().for_each(&mut *visit);
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

/// A stretch of the order that starts and ends where clusters do: its
/// flows in (key, index) order, its summary and its pieces' (see
/// [`cut`]), its dead flows.
#[derive(Debug, Default)]
struct Chunk {
    // Its id in [`Places`]: it does not change while the chunk lives.
    id: u32,
    flows: Vec<Kept>,
    // The [`Ends`] of all its flows, dead or alive, if `summed`.
    ends: Ends,
    pieces: Vec<Ends>,
    // Its near-tie runs are in flow index order: walked where it lies.
    in_order: bool,
    // Neighbouring keys are equal or a cluster's end apart: its runs are
    // of equal keys, in index order whoever leaves.
    exact: bool,
    // Its ends, pieces and flags are those [`cut`] gives on its flows;
    // if not, it is walked as runs (`in_order` false, no pieces). A chunk
    // that changed is summed up again only when a fill would pass over
    // it unread if it could: one that holds a flow the last fill gave a
    // rate, or that the classes reach, is walked whatever its summary.
    summed: bool,
    n_dead: usize,
    // A stamp that changes whenever its flows move (not when they only
    // die): a flow's place found under it stays right until it changes.
    version: u64,
    // If `covered`: link classes of which every live flow of it has its
    // path's first or last link in one. Once they are all
    // full, each of its flows would get 0 and no new class: a fill past
    // the classes passes it over unread. It depends on the flows' ends
    // only, so it stays while flows leave or are purged,
    // and goes with the flows when the chunk is split or joined.
    cover: Classes,
    covered: bool,
    // Per piece: a cover of its live flows as `cover` is of the chunk's,
    // if known.
    piece_covers: Vec<Option<Classes>>,
}

impl Chunk {
    /// Whether dead flows are a quarter of it: it is then purged.
    fn purge_due(&self) -> bool {
        self.n_dead > 0 && 4 * self.n_dead >= self.flows.len()
    }

    /// Drops its dead flows.
    fn purge(&mut self) {
        self.flows.retain(|e| !e.dead);
        self.n_dead = 0;
        self.summed = false;
    }

    /// Sums it up again as [`cut`] does, if it changed since it was.
    fn sum(&mut self, tol: f64) {
        if !self.summed {
            let (ends, in_order, exact) = cut(&self.flows, tol, &mut self.pieces);
            self.piece_covers.clear();
            self.piece_covers.resize(self.pieces.len(), None);
            (self.ends, self.in_order, self.exact, self.summed) = (ends, in_order, exact, true);
        }
    }

    /// Notes that it changed: walked as runs until it is summed up again.
    fn unsum(&mut self) {
        self.summed = false;
        self.in_order = false;
        self.pieces.clear();
        self.piece_covers.clear();
    }
}

/// Which chunk holds each live flow, by chunk ids that stay the same when
/// chunks are inserted or removed before it: a flow that moves or leaves
/// finds its chunk without a search by key.
#[derive(Debug, Default)]
struct Places {
    // Per flow: the id of the chunk that holds it alive.
    chunk_of: Vec<u32>,
    // Per chunk id: the chunk's position.
    at: Vec<u32>,
    // Ids of removed chunks, for reuse.
    free: Vec<u32>,
}

impl Places {
    /// An id for a new chunk.
    fn new_id(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.at.push(0);
            self.at.len() as u32 - 1
        })
    }

    /// Notes that the live flows of `flows` are in chunk `id`.
    fn put(&mut self, flows: &[Kept], id: u32) {
        for e in flows.iter().filter(|e| !e.dead) {
            let f = e.f as usize;
            if self.chunk_of.len() <= f {
                self.chunk_of.resize(f + 1, u32::MAX);
            }
            self.chunk_of[f] = id;
        }
    }

    /// The position of the chunk that holds live flow `f`.
    fn chunk(&self, f: FlowIdx) -> usize {
        self.at[self.chunk_of[f as usize] as usize] as usize
    }

    /// Notes every chunk's position.
    fn renumber(&mut self, chunks: &[Box<Chunk>]) {
        for (p, c) in chunks.iter().enumerate() {
            self.at[c.id as usize] = p as u32;
        }
    }

    /// Forgets every chunk.
    fn clear(&mut self) {
        self.at.clear();
        self.free.clear();
    }
}

/// The chunk whose flows hold key `k` and index `f` (or would), by the
/// key and index of each chunk's first flow: the last chunk whose first
/// flow does not come after it.
fn chunk_of(firsts: &[(f64, FlowIdx)], k: f64, f: FlowIdx) -> usize {
    let after = firsts.partition_point(|h| h.0.total_cmp(&k).then(h.1.cmp(&f)).is_le());
    after.saturating_sub(1)
}

/// The active flows in (key, flow index) order, kept from one call to the
/// next in chunks; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct SortedFlows {
    // The key and index of each chunk's first flow (dead or alive), kept
    // apart from the chunks so that the search reads no more than this.
    firsts: Vec<(f64, FlowIdx)>,
    // Boxed, so that a chunk inserted or removed moves a pointer per
    // chunk after it, not the chunk.
    #[allow(clippy::vec_box)]
    chunks: Vec<Box<Chunk>>,
    places: Places,
    // Flows per chunk aimed at (0: [`CHUNK`]).
    chunk_len: usize,
    batch: Vec<Kept>,
    // Kept keys of the flows that leave in this update.
    leaving: Vec<(f64, FlowIdx)>,
    // Chunks changed in this update.
    dirty: Vec<usize>,
    // The chunks of the flows the last fill gave a rate (they may have to
    // be set to 0), and their positions in the chunks walked piece by
    // piece (their indices in the others).
    hot: Vec<(usize, usize)>,
    // Per flow: the key it is kept under, NaN if it is not.
    key_of: Vec<f64>,
    // Per flow: where it was last found in its chunk, as (the chunk's
    // `version` then, position); `version`s are never reused.
    found: Vec<(u64, u32)>,
    // The last `version` given.
    stamp: u64,
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
    // Keys never move while a flow is active (a total size, say): only the
    // flows that start or finish are (re-)keyed.
    fixed_keys: bool,
    tol: f64,
    ready: bool,
    // The flows the last two fills gave a rate, whose keys move: kept
    // apart from the chunks, in (key, index) order, and merged into the
    // walk by the fill (their `key_of` is NaN).
    moving: Vec<Kept>,
    in_moving: FlowBits,
    // A stretch of the order walked merged with moving flows.
    merged: Vec<Kept>,
    // Where each moving flow of a chunk falls among its flows, found by
    // [`apart`].
    cuts: Vec<usize>,
    // Per flow: its key in `moving`, written at each fill.
    mkey: Vec<f64>,
    // The fill as a greedy matching kept from one fill to the next.
    matching: Matching,
}

/// Every active flow of the order with its key: the chunks' live flows,
/// then the moving ones (the matching's input).
fn keyed_flows<'a>(
    chunks: &'a [Box<Chunk>],
    moving: &'a [Kept],
) -> impl Iterator<Item = (f64, FlowIdx)> + 'a {
    let live = chunks.iter().flat_map(|c| &c.flows).filter(|e| !e.dead);
    live.chain(moving).map(|e| (e.key, e.f))
}

/// Flow `f`'s key now: its kept key, or, for a moving flow (kept key NaN),
/// the key `mkey` holds for it this fill.
#[inline(always)]
fn key_now(key_of: &[f64], mkey: &[f64], f: FlowIdx) -> f64 {
    let k = key_of[f as usize];
    if k.is_nan() {
        mkey[f as usize]
    } else {
        k
    }
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
                ends,
                dead: false,
            }
        };
        self.batch.clear();
        self.leaving.clear();
        if !self.ready || changes.resynced {
            self.ready = true;
            self.matching.reset();
            self.places.clear();
            for e in self.moving.drain(..) {
                self.in_moving.set(e.f, false);
            }
            for e in self.chunks.drain(..).flat_map(|c| c.flows) {
                self.key_of[e.f as usize] = f64::NAN;
            }
            self.firsts.clear();
            for &f in view.active_flows() {
                self.classed.push(f);
                if let Some(k) = key(f) {
                    self.batch.push(kept(k, f));
                }
            }
        } else {
            // A flow that leaves stays in place, dead, so that its chunk
            // is not cut again for it.
            let (key_of, leaving) = (&mut self.key_of, &mut self.leaving);
            let leave = |key_of: &mut [f64], leaving: &mut Vec<(f64, FlowIdx)>, f: FlowIdx| {
                let k = std::mem::replace(&mut key_of[f as usize], f64::NAN);
                if !k.is_nan() {
                    leaving.push((k, f));
                }
            };
            for &f in &changes.finished {
                leave(key_of, leaving, f);
                self.matching.finished(f);
            }
            let moved: &[FlowIdx] = if self.fixed_keys { &[] } else { &self.positive };
            let before: &[FlowIdx] = if self.fixed_keys {
                &[]
            } else {
                &self.positive_before
            };
            // The flows the last two fills gave a rate move: read again and
            // kept in `moving`. The others of `moving` had 0 from both, so
            // their keys read now stay: back into the chunks.
            for &f in moved.iter().chain(before) {
                self.seen[f as usize] = true;
            }
            let (seen, in_moving, batch) = (&mut self.seen, &mut self.in_moving, &mut self.batch);
            self.moving.retain_mut(|e| {
                let f = e.f;
                let k = if view.is_active(f) { key(f) } else { None };
                match k {
                    Some(k) if std::mem::replace(&mut seen[f as usize], false) => {
                        e.key = k;
                        return true;
                    }
                    Some(k) => batch.push(Kept { key: k, ..*e }),
                    None => seen[f as usize] = false,
                }
                in_moving.set(f, false);
                false
            });
            for &f in moved.iter().chain(before) {
                let fi = f as usize;
                if !std::mem::replace(&mut self.seen[fi], false) || !view.is_active(f) {
                    continue;
                }
                // Out of the chunks if it was kept there.
                leave(key_of, leaving, f);
                if let Some(k) = key(f) {
                    self.moving.push(kept(k, f));
                    self.in_moving.set(f, true);
                }
            }
            // Nearly in order (the kept ones, then the new): a stable sort
            // walks its runs (cut80 `srpt`: 9% fewer instructions than
            // a quicksort's); (key, index) pairs are unique, so the order is
            // the same.
            self.moving.sort_by(kept_by_key);
            for &f in &changes.started {
                let fi = f as usize;
                if !view.is_active(f) || self.in_moving.get(f) || !key_of[fi].is_nan() {
                    continue;
                }
                if let Some(k) = key(f) {
                    self.batch.push(kept(k, f));
                    self.matching.started(k, f);
                }
            }
            self.classed.extend_from_slice(&changes.started);
        }
        for e in &self.batch {
            self.key_of[e.f as usize] = e.key;
        }
        self.batch.sort_unstable_by(kept_by_key);
        self.apply();
        #[cfg(debug_assertions)]
        {
            let mut live = 0;
            for e in self
                .chunks
                .iter()
                .flat_map(|c| &c.flows)
                .filter(|e| !e.dead)
            {
                let f = e.f;
                let k = key(f).map(f64::to_bits);
                debug_assert_eq!(k, Some(e.key.to_bits()), "key of {f}");
                debug_assert_eq!(self.key_of[f as usize].to_bits(), e.key.to_bits());
                live += 1;
            }
            for w in self.moving.windows(2) {
                debug_assert!(kept_by_key(&w[0], &w[1]).is_lt(), "moving order");
            }
            for e in &self.moving {
                let f = e.f;
                let k = key(f).map(f64::to_bits);
                debug_assert_eq!(k, Some(e.key.to_bits()), "key of moving {f}");
                debug_assert!(self.key_of[f as usize].is_nan() && self.in_moving.get(f));
                live += 1;
            }
            let keyed = view.active_flows().iter().filter(|&&f| key(f).is_some());
            debug_assert_eq!(live, keyed.count(), "flows kept");
            self.check();
        }
    }

    /// Marks the flows of `leaving` dead where they are kept and merges
    /// `batch` in: each chunk that changed is then joined with the next
    /// one where no cluster ends between them (or both are short), split
    /// where it grew long, purged of its dead flows where they are many,
    /// and cut into clusters again. The other chunks are not read.
    fn apply(&mut self) {
        let (tol, target) = (self.tol, self.target());
        let stamp = &mut self.stamp;
        let (firsts, chunks, dirty) = (&mut self.firsts, &mut self.chunks, &mut self.dirty);
        let places = &mut self.places;
        dirty.clear();
        for &(k, f) in &self.leaving {
            let c = places.chunk(f);
            let chunk = &mut chunks[c];
            let at = position(&chunk.flows, k, f);
            chunk.flows[at].dead = true;
            chunk.n_dead += 1;
            if !chunk.exact {
                // A run that started at it may now start at a later flow
                // and reach further, out of index order: walked as runs
                // until the chunk is cut again.
                chunk.in_order = false;
                chunk.pieces.clear();
                chunk.piece_covers.clear();
            }
            if chunk.purge_due() {
                dirty.push(c);
            }
        }
        let batch = &self.batch;
        let mut b = 0;
        while b < batch.len() {
            if chunks.is_empty() {
                firsts.push((batch[0].key, batch[0].f));
                let id = places.new_id();
                chunks.push(Box::new(Chunk {
                    id,
                    ..Chunk::default()
                }));
            }
            let c = chunk_of(firsts, batch[b].key, batch[b].f);
            let end = match firsts.get(c + 1) {
                Some(h) => {
                    let next = |e: &Kept| e.key.total_cmp(&h.0).then(e.f.cmp(&h.1));
                    b + batch[b..].partition_point(|e| next(e).is_lt())
                }
                None => batch.len(),
            };
            // Flows past the chunk's last one, a cluster's end away, start
            // a chunk of their own (joined with the next one if short), so
            // that a long chunk is not cut again for them.
            let last = *chunks[c].flows.last().unwrap_or(&batch[b]);
            let inside = batch[b..end].partition_point(|e| kept_by_key(e, &last).is_lt());
            let (inside, past) = batch[b..end].split_at(inside);
            let past = match past.first() {
                Some(p) if inside.is_empty() && gap(last.key, p.key, tol) => past,
                _ => &[],
            };
            let mid = end - past.len();
            if mid > b {
                let chunk = &mut chunks[c];
                merge_in_place(&mut chunk.flows, &batch[b..mid]);
                *stamp += 1;
                chunk.version = *stamp;
                places.put(&batch[b..mid], chunk.id);
                chunk.covered = false;
                let short = chunk.flows.len() <= PIECE;
                if chunk.summed && chunk.exact && short && exact_ties(&chunk.flows, tol) {
                    // Still of equal-key runs and with no pieces: its head
                    // only gains the new flows' classes.
                    for e in &batch[b..mid] {
                        add_class(&mut chunk.ends.first, e.ends[0]);
                        add_class(&mut chunk.ends.last, e.ends[1]);
                    }
                } else {
                    chunk.unsum();
                }
                dirty.push(c);
            }
            if !past.is_empty() {
                // Numbered as a chunk inserted after `c` at once.
                firsts.insert(c + 1, (past[0].key, past[0].f));
                let (flows, id) = (past.to_vec(), places.new_id());
                places.put(past, id);
                chunks.insert(
                    c + 1,
                    Box::new(Chunk {
                        id,
                        flows,
                        ..Chunk::default()
                    }),
                );
                for d in dirty.iter_mut().filter(|d| **d > c) {
                    *d += 1;
                }
                dirty.push(c + 1);
            }
            b = end;
        }
        dirty.sort_unstable();
        dirty.dedup();
        // Chunks inserted (+) or removed (-) before the next dirty one.
        let mut shift = 0isize;
        let mut done = 0;
        for &d in dirty.iter() {
            let c = d as isize + shift;
            if c < done as isize {
                // Joined with a chunk before it.
                continue;
            }
            let c = c as usize;
            if chunks[c].purge_due() {
                chunks[c].purge();
            }
            if chunks[c].flows.is_empty() {
                places.free.push(chunks.remove(c).id);
                firsts.remove(c);
                shift -= 1;
                done = c;
                continue;
            }
            while c + 1 < chunks.len() {
                let (a, next) = (chunks[c].flows.last().unwrap(), &chunks[c + 1].flows);
                let short = chunks[c].flows.len() + next.len() <= target;
                if gap(a.key, next[0].key, tol) && !short {
                    break;
                }
                let next = chunks.remove(c + 1);
                firsts.remove(c + 1);
                shift -= 1;
                let chunk = &mut chunks[c];
                places.free.push(next.id);
                places.put(&next.flows, chunk.id);
                chunk.flows.extend_from_slice(&next.flows);
                chunk.n_dead += next.n_dead;
                chunk.covered &= next.covered;
                for w in 0..WORDS {
                    chunk.cover[w] |= next.cover[w];
                }
                chunk.unsum();
                if chunk.purge_due() {
                    chunk.purge();
                }
            }
            let mut at = c;
            loop {
                let chunk = &mut chunks[at];
                let tail = split_point(&chunk.flows, target, tol).map(|i| chunk.flows.split_off(i));
                if tail.is_some() || at > c {
                    chunk.n_dead = chunk.flows.iter().filter(|e| e.dead).count();
                    chunk.summed = false;
                }
                if !chunk.summed {
                    // Summed up by the fill that needs it.
                    chunk.unsum();
                }
                firsts[at] = (chunk.flows[0].key, chunk.flows[0].f);
                let Some(flows) = tail else { break };
                let (cover, covered) = (chunk.cover, chunk.covered);
                at += 1;
                let id = places.new_id();
                places.put(&flows, id);
                chunks.insert(
                    at,
                    Box::new(Chunk {
                        id,
                        flows,
                        cover,
                        covered,
                        ..Chunk::default()
                    }),
                );
                firsts.insert(at, firsts[at - 1]);
                shift += 1;
            }
            for chunk in &mut chunks[c..=at] {
                *stamp += 1;
                chunk.version = *stamp;
            }
            done = at + 1;
        }
        places.renumber(chunks);
    }

    /// Flows per chunk aimed at.
    fn target(&self) -> usize {
        if self.chunk_len == 0 {
            CHUNK
        } else {
            self.chunk_len
        }
    }

    /// Checks the chunks against a cut from scratch: flows in (key,
    /// index) order, a cluster ending at every chunk's end, first flows,
    /// dead counts, and the summaries of the summed chunks as [`cut`]
    /// writes them (a chunk not summed is walked as runs).
    #[cfg(any(test, debug_assertions))]
    fn check(&self) {
        let tol = self.tol;
        assert_eq!(self.firsts.len(), self.chunks.len());
        let mut last: Option<&Kept> = None;
        for (p, (h, c)) in self.firsts.iter().zip(&self.chunks).enumerate() {
            let s = &c.flows;
            assert!(!s.is_empty(), "empty chunk");
            assert_eq!((h.0.to_bits(), h.1), (s[0].key.to_bits(), s[0].f));
            if let Some(a) = last {
                assert!(gap(a.key, s[0].key, tol), "no gap between chunks");
            }
            for w in s.windows(2) {
                assert!(kept_by_key(&w[0], &w[1]).is_le(), "chunk order");
            }
            assert_eq!(c.n_dead, s.iter().filter(|e| e.dead).count());
            for e in s.iter().filter(|e| !e.dead) {
                assert_eq!(self.places.chunk_of[e.f as usize], c.id, "chunk of {}", e.f);
            }
            assert_eq!(self.places.at[c.id as usize] as usize, p, "chunk {p}");
            last = s.last();
            let check_cover = |flows: &[Kept], cover: &Classes| {
                let within = |l: u32| {
                    let mut one = [0; WORDS];
                    add_class(&mut one, l);
                    one.iter().zip(cover).all(|(a, b)| a & !b == 0)
                };
                for e in flows.iter().filter(|e| !e.dead) {
                    let covered = within(e.ends[0]) || within(e.ends[1]);
                    assert!(e.ends[0] != u32::MAX && covered, "cover of {}", e.f);
                }
            };
            if c.covered {
                check_cover(s, &c.cover);
            }
            assert_eq!(c.piece_covers.len(), c.pieces.len(), "piece covers");
            for (p, cover) in c.piece_covers.iter().enumerate() {
                if let Some(cover) = cover {
                    check_cover(&s[p * PIECE..((p + 1) * PIECE).min(s.len())], cover);
                }
            }
            if !c.summed {
                assert!(!c.in_order && c.pieces.is_empty(), "walked as runs");
                continue;
            }
            let mut pieces = vec![];
            let (ends, in_order, exact) = cut(s, tol, &mut pieces);
            assert!(ends == c.ends, "chunk ends");
            // Not known in order (a flow left since the cut) is safe.
            assert!(in_order || !c.in_order, "in order");
            if c.in_order {
                assert!(pieces == c.pieces, "pieces");
            }
            assert_eq!(exact, c.exact, "exact ties");
        }
    }

    /// The order of the last [`SortedFlows::update`], as [`cut_runs`]
    /// writes it: the live flows of the chunks and the moving flows,
    /// sorted from scratch.
    #[cfg(any(test, debug_assertions))]
    fn order(&self, view: &Clairvoyant<'_>) -> Vec<(FlowIdx, PathIdx)> {
        let flows = self
            .chunks
            .iter()
            .flat_map(|c| &c.flows)
            .filter(|e| !e.dead);
        let mut all: Vec<Kept> = flows.chain(&self.moving).copied().collect();
        all.sort_unstable_by(kept_by_key);
        let mut order = vec![];
        let mut visit = |e: &Kept| order.push((e.f, view.path_idx(e.f)));
        walk_runs(&all, self.tol, &mut vec![], &mut visit);
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
        if self.mkey.len() < view.n_flows() {
            self.mkey.resize(view.n_flows(), f64::NAN);
        }
        for e in &self.moving {
            self.mkey[e.f as usize] = e.key;
        }
        let (key_of, mkey) = (&self.key_of, &self.mkey);
        let key = |f: FlowIdx| key_now(key_of, mkey, f);
        let chained = self.matching.fill(
            view,
            !prefix.is_empty(),
            key,
            &self.positive_before,
            self.tol,
            out,
            &mut self.positive,
        );
        if chained {
            self.head_classes(out);
            self.note_positive();
            #[cfg(debug_assertions)]
            self.check_fill(view, out, &want);
            return;
        }
        // Where the flows are that the last fill gave a rate: they may
        // have to be set to 0. By chunk and flow, then by chunk and
        // position in a chunk walked piece by piece: a long one, summed
        // up here unless a quarter of its flows or more are such (it is
        // then walked as runs).
        self.hot.clear();
        if self.found.len() < view.n_flows() {
            self.found.resize(view.n_flows(), (0, 0));
        }
        for &f in &self.positive_before {
            let k = self.key_of[f as usize];
            if !k.is_nan() {
                self.hot.push((self.places.chunk(f), f as usize));
            }
        }
        self.hot.sort_unstable();
        let mut i = 0;
        while i < self.hot.len() {
            let c = self.hot[i].0;
            let n = self.hot[i..].partition_point(|x| x.0 == c);
            let (chunk, here) = (&mut self.chunks[c], &mut self.hot[i..i + n]);
            if chunk.flows.len() > PIECE {
                if 4 * n < chunk.flows.len() {
                    chunk.sum(self.tol);
                }
                if !chunk.pieces.is_empty() {
                    let found = &mut self.found;
                    for x in here.iter_mut() {
                        let f = x.1 as FlowIdx;
                        // Found again only if the chunk's flows moved since.
                        let (v, at) = found[x.1];
                        x.1 = if v == chunk.version && v != 0 {
                            at as usize
                        } else {
                            let at = position(&chunk.flows, self.key_of[x.1], f);
                            found[f as usize] = (chunk.version, at as u32);
                            at
                        };
                        debug_assert_eq!(x.1, position(&chunk.flows, self.key_of[f as usize], f));
                    }
                    here.sort_unstable();
                }
            }
            i += n;
        }
        residual.clear();
        residual.extend_from_slice(view.capacities());
        let was_positive = &self.was_positive;
        let mut fill = Fill {
            view,
            residual,
            out,
            floor: coflowkit_alloc::EPS * 1e9,
            was_positive,
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
        // Chunk by chunk, then cluster by cluster: a chunk, a cluster or a
        // piece whose flows all cross a full link, that holds no flow the
        // last fill gave a rate and lies past the classes is passed over
        // whole (each of its flows would get 0 and no class).
        let (tol, mut hot) = (self.tol, &self.hot[..]);
        let moving = &self.moving[..];
        // Moving flows walked so far; chunks walked in a merged stretch.
        let (mut mi, mut skip_to) = (0, 0);
        // The chunk that the next moving flow falls in: the chunks before
        // it hold none, and are not compared with it one by one. Found
        // from chunk `from` on, which does not come after it (galloping:
        // the moving flows lie mostly near the front of the order, a few
        // chunks apart).
        let firsts = &self.firsts;
        let chunk_of_next = |mi: usize, from: usize| {
            moving.get(mi).map_or(usize::MAX, |m| {
                let le = |h: &(f64, FlowIdx)| h.0.total_cmp(&m.key).then(h.1.cmp(&m.f)).is_le();
                (from + gallop(&firsts[from..], le)).saturating_sub(1)
            })
        };
        let mut next_c = chunk_of_next(0, 0);
        for c in 0..self.chunks.len() {
            if c < skip_to {
                continue;
            }
            // The positions of this chunk's flows that the last fill gave
            // a rate, ascending.
            while hot.first().is_some_and(|x| x.0 < c) {
                hot = &hot[1..];
            }
            let n_hot = hot.iter().take_while(|x| x.0 == c).count();
            let (here, rest) = hot.split_at(n_hot);
            hot = rest;
            let may_pass = here.is_empty() && fill.at >= LAST_CLASS;
            // The moving flows that fall among this chunk's flows (or
            // before the first chunk), up to the next chunk's first flow.
            let next = firsts.get(c + 1).copied();
            let m_end = match next {
                _ if c < next_c => mi,
                Some(h) => {
                    let before = |e: &Kept| e.key.total_cmp(&h.0).then(e.f.cmp(&h.1)).is_lt();
                    mi + gallop(&moving[mi..], before)
                }
                None => moving.len(),
            };
            let region = &moving[mi..m_end];
            if m_end > mi {
                mi = m_end;
                next_c = chunk_of_next(mi, c + 1);
            }
            let chunk = &mut self.chunks[c];
            if !region.is_empty() {
                if may_pass && spaced(region, next.map(|h| h.0), tol) {
                    // The moving flows keep their order among themselves
                    // whatever lies between them: if the chunk's flows are
                    // all blocked, only the moving ones are visited, and
                    // its flows are not searched for their neighbours.
                    let blocked = (chunk.covered && fill.within_full(&chunk.cover)) || {
                        chunk.sum(tol);
                        fill.all_blocked(&chunk.ends)
                    };
                    if blocked {
                        for m in region {
                            fill.visit(m.f, m.ends, true);
                        }
                        continue;
                    }
                }
                let fresh = !here.is_empty();
                chunk.sum(tol);
                let cuts = &mut self.cuts;
                if apart(
                    &chunk.flows,
                    region,
                    next.map(|h| h.0),
                    tol,
                    chunk.exact,
                    cuts,
                ) {
                    // Each moving flow is a run of its own and ends the
                    // runs before it: visited where it falls, between
                    // stretches of the chunk walked as the chunk is.
                    let blocked = may_pass
                        && ((chunk.covered && fill.within_full(&chunk.cover))
                            || fill.all_blocked(&chunk.ends));
                    if blocked {
                        for m in region {
                            fill.visit(m.f, m.ends, true);
                        }
                        continue;
                    }
                    let s = &chunk.flows[..];
                    let lies = chunk.in_order;
                    let run = &mut self.run;
                    let mut walk = |fill: &mut Fill, s: &[Kept]| {
                        if lies {
                            fill.visit_all(s, fresh);
                        } else {
                            walk_runs(s, tol, run, &mut |e: &Kept| fill.visit(e.f, e.ends, fresh));
                        }
                    };
                    let mut j = 0;
                    for (m, &p) in region.iter().zip(cuts.iter()) {
                        walk(&mut fill, &s[j..p]);
                        fill.visit(m.f, m.ends, true);
                        j = p;
                    }
                    walk(&mut fill, &s[j..]);
                    continue;
                }
                // Near-ties between moving and kept flows: the stretch is
                // walked merged, as runs, up to a cluster's end before the
                // next chunk.
                let merged = &mut self.merged;
                merged.clear();
                merge_sorted(&chunk.flows, region, merged);
                let mut d = c;
                while d + 1 < self.chunks.len() {
                    let (last, h) = (merged[merged.len() - 1], self.firsts[d + 1]);
                    if gap(last.key, h.0, tol) {
                        break;
                    }
                    d += 1;
                    let m_end = match self.firsts.get(d + 1) {
                        Some(h) => {
                            let before =
                                |e: &Kept| e.key.total_cmp(&h.0).then(e.f.cmp(&h.1)).is_lt();
                            mi + gallop(&moving[mi..], before)
                        }
                        None => moving.len(),
                    };
                    merge_sorted(&self.chunks[d].flows, &moving[mi..m_end], merged);
                    mi = m_end;
                }
                skip_to = d + 1;
                next_c = chunk_of_next(mi, d + 1);
                let mut visit = |e: &Kept| fill.visit(e.f, e.ends, true);
                walk_runs(merged, tol, &mut self.run, &mut visit);
                continue;
            }
            // Its flows before `from` are blocked: each gets 0 wherever
            // the walk visits it (full links stay full).
            let mut from = 0;
            if may_pass {
                if chunk.covered && fill.within_full(&chunk.cover) {
                    continue;
                }
                chunk.sum(tol);
                let mut cover = None;
                if fill.all_blocked(&chunk.ends) {
                    let within = fill.within_full(&chunk.ends.first);
                    let ends = &chunk.ends;
                    cover = Some(if within { ends.first } else { ends.last });
                } else if chunk.flows.len() <= PIECE {
                    // A long chunk is passed over piece by piece instead.
                    match fill.cover(&chunk.flows) {
                        Ok(c) => cover = Some(c),
                        Err(i) => from = i,
                    }
                }
                if let Some(cover) = cover {
                    (chunk.cover, chunk.covered) = (cover, true);
                    continue;
                }
            }
            if here.is_empty() && chunk.flows.len() > PIECE {
                // Summed up only where it may be passed over, or be
                // walked piece by piece.
                chunk.sum(tol);
            }
            let s = &chunk.flows[..];
            // Whether a flow of `s[a..b]` is in `here` (`a` ascending).
            let mut q = 0;
            let mut has_hot = |a: usize, b: usize| {
                while q < here.len() && here[q].1 < a {
                    q += 1;
                }
                q < here.len() && here[q].1 < b
            };
            let fresh = !here.is_empty();
            if !chunk.summed && runs_in_index_order(s, tol) {
                // Walked where it lies, as a summed chunk without pieces.
                fill.visit_all(&s[from..], fresh);
                continue;
            }
            if !chunk.in_order {
                let mut visit = |e: &Kept| fill.visit(e.f, e.ends, fresh);
                walk_runs(s, tol, &mut self.run, &mut visit);
                continue;
            }
            if chunk.pieces.is_empty() {
                fill.visit_all(&s[from..], fresh);
                continue;
            }
            // Walked where it lies: piece by piece, passing over a blocked
            // piece as over a blocked chunk.
            for (p, ends) in chunk.pieces.iter().enumerate() {
                let (mut a, b) = (p * PIECE, ((p + 1) * PIECE).min(s.len()));
                if fill.at >= LAST_CLASS && !has_hot(a, b) {
                    let cover = &mut chunk.piece_covers[p];
                    if cover.is_some_and(|c| fill.within_full(&c)) {
                        continue;
                    }
                    if fill.all_blocked(ends) {
                        let within = fill.within_full(&ends.first);
                        *cover = Some(if within { ends.first } else { ends.last });
                        continue;
                    }
                    match fill.cover(&s[a..b]) {
                        Ok(c) => {
                            *cover = Some(c);
                            continue;
                        }
                        Err(i) => a += i,
                    }
                }
                fill.visit_all(&s[a.max(from).min(b)..b], fresh);
            }
        }
        if mi < moving.len() {
            // No chunks: the moving flows alone.
            let mut visit = |e: &Kept| fill.visit(e.f, e.ends, true);
            walk_runs(&moving[mi..], tol, &mut self.run, &mut visit);
        }
        let (key_of, mkey) = (&self.key_of, &self.mkey);
        let key = |f: FlowIdx| key_now(key_of, mkey, f);
        let flows = keyed_flows(&self.chunks, &self.moving);
        let (holders, positive) = (&self.positive_before, &self.positive);
        self.matching.sync(
            view,
            !prefix.is_empty(),
            key,
            flows,
            holders,
            positive,
            self.tol,
            out,
        );
        self.note_positive();
        #[cfg(debug_assertions)]
        self.check_fill(view, out, &want);
    }

    /// Notes which flows the fill just done gave a rate.
    fn note_positive(&mut self) {
        for &f in &self.positive_before {
            self.was_positive.set(f, false);
        }
        for &f in &self.positive {
            self.was_positive.set(f, true);
        }
    }

    /// Checks a fill's rates and classes against [`greedy_fill`]'s
    /// (`want`), and the matching kept.
    #[cfg(debug_assertions)]
    fn check_fill(&self, view: &Clairvoyant<'_>, out: &Allocation, want: &Allocation) {
        for &f in view.active_flows() {
            let (got, w) = (out.rate(f), want.rate(f));
            debug_assert_eq!(got.to_bits(), w.to_bits(), "rate of {f}");
            let class = want.class(f).min(LAST_CLASS);
            debug_assert_eq!(out.class(f), class, "class of {f}");
        }
        let flows = keyed_flows(&self.chunks, &self.moving);
        self.matching.check(flows, &self.positive, self.tol);
    }

    /// Gives the order's first positions their classes, as the walk
    /// does: the chunks and the moving flows merged from the front, up to
    /// a cluster's end past position [`LAST_CLASS`] (runs are cut there
    /// as in the whole order).
    fn head_classes(&mut self, out: &mut Allocation) {
        let (tol, moving, firsts) = (self.tol, &self.moving[..], &self.firsts);
        let merged = &mut self.merged;
        merged.clear();
        let (mut c, mut mi, mut live) = (0, 0, 0);
        loop {
            if c < self.chunks.len() {
                let m_end = match firsts.get(c + 1) {
                    Some(h) => {
                        let before = |e: &Kept| e.key.total_cmp(&h.0).then(e.f.cmp(&h.1)).is_lt();
                        mi + gallop(&moving[mi..], before)
                    }
                    None => moving.len(),
                };
                let chunk = &self.chunks[c];
                merge_sorted(&chunk.flows, &moving[mi..m_end], merged);
                live += chunk.flows.len() - chunk.n_dead + (m_end - mi);
                mi = m_end;
                c += 1;
            } else {
                merged.extend_from_slice(&moving[mi..]);
                mi = moving.len();
            }
            let next = [firsts.get(c).map(|h| h.0), moving.get(mi).map(|e| e.key)];
            let Some(next) = next.into_iter().flatten().min_by(f64::total_cmp) else {
                break;
            };
            let last = merged.last().map(|e| e.key);
            if live > LAST_CLASS as usize && last.is_some_and(|k| gap(k, next, tol)) {
                break;
            }
        }
        // Run by run as [`walk_runs`] cuts them, up to the last class: a
        // run's end found by a gallop, and a run of equal keys (in (key,
        // index) order, so by index) visited no further than needed.
        let (classed, run, s) = (&mut self.classed, &mut self.run, &merged[..]);
        let (mut i, mut at) = (0, 0);
        let mut class = |e: &Kept, at: &mut u32| {
            out.set_class(e.f, *at);
            classed.push(e.f);
            *at += 1;
        };
        while i < s.len() && at < LAST_CLASS {
            if s[i].dead {
                i += 1;
                continue;
            }
            let (k0, reach) = (s[i].key, tie_reach(s[i].key, tol));
            let j = i + 1 + gallop(&s[i + 1..], |e| e.key - k0 <= reach);
            let live = s[i..j].iter().filter(|e| !e.dead);
            let n = (LAST_CLASS - at) as usize;
            if s[j - 1].key.to_bits() == k0.to_bits() {
                live.take(n).for_each(|e| class(e, &mut at));
            } else {
                run.clear();
                run.extend(live);
                run.sort_unstable_by_key(|e| e.f);
                run.iter().take(n).for_each(|e| class(e, &mut at));
            }
            i = j;
        }
    }
}

/// Where to split `s` (a chunk) if it holds more than twice `target`
/// flows: the end of a cluster nearest its middle, if it has one.
fn split_point(s: &[Kept], target: usize, tol: f64) -> Option<usize> {
    if s.len() <= 2 * target {
        return None;
    }
    let mid = s.len() / 2;
    let ends_at = |i: usize| gap(s[i - 1].key, s[i].key, tol);
    (0..mid).find_map(|d| {
        [mid - d, mid + d]
            .into_iter()
            .find(|&i| i > 0 && i < s.len() && ends_at(i))
    })
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

    /// Whether every class of `set` is full.
    #[inline(always)]
    fn within_full(&self, set: &Classes) -> bool {
        set.iter().zip(&self.full).all(|(s, f)| s & !f == 0)
    }

    /// A cover of `flows` (see [`Chunk`]) by the classes full now: the
    /// class of each flow's first link if it is full, else of its last
    /// link if that is; or the position of the first flow with neither
    /// full (the flows before it are blocked).
    fn cover(&self, flows: &[Kept]) -> Result<Classes, usize> {
        let mut cover = [0; WORDS];
        // As [`add_class`] finds a class: no division below `CLASSES`.
        let class_full = |l: u32| {
            let c = if (l as usize) < CLASSES {
                l as usize
            } else {
                l as usize % CLASSES
            };
            l != u32::MAX && self.full[c / 64] >> (c % 64) & 1 == 1
        };
        for (i, e) in flows.iter().enumerate() {
            if e.dead {
                continue;
            }
            if class_full(e.ends[0]) {
                add_class(&mut cover, e.ends[0]);
            } else if class_full(e.ends[1]) {
                add_class(&mut cover, e.ends[1]);
            } else {
                return Err(i);
            }
        }
        Ok(cover)
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

    /// Visits the live flows of `flows` in turn; `fresh` as for
    /// [`Fill::visit`]. Past the classes, a flow that gets 0 and had 0
    /// needs no more than a look at its path's ends.
    #[inline(always)]
    fn visit_all(&mut self, flows: &[Kept], fresh: bool) {
        if !fresh && self.at >= LAST_CLASS {
            for e in flows {
                if !e.dead && !self.any_full(e.ends) {
                    self.visit(e.f, e.ends, false);
                }
            }
        } else if self.at >= LAST_CLASS {
            for e in flows.iter().filter(|e| !e.dead) {
                if self.any_full(e.ends) {
                    self.pass(e.f, true);
                } else {
                    self.visit(e.f, e.ends, true);
                }
            }
        } else {
            for e in flows.iter().filter(|e| !e.dead) {
                self.visit(e.f, e.ends, fresh);
            }
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

    /// The chunked order kept by [`SortedFlows::apply`] (some flows leave,
    /// dead in place, some are re-keyed, some join; chunks joined, split
    /// and purged) is at every step `sort_with_ties` of the flows present
    /// (a sorted `Vec`), walked chunk by chunk and cluster by cluster as
    /// the fill walks it, and its chunks pass [`SortedFlows::check`] (a
    /// cluster ends at each chunk's end; heads, clusters and pieces as a
    /// cut from scratch); random keys with many exact and near ties, long
    /// exact-tie clusters (pieces), and chunks of 1 to 16 flows.
    #[test]
    fn chunked_order_matches_a_sorted_vec() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        for round in 0..600 {
            let tol = if round % 5 == 4 { 0.0 } else { 1.0 };
            let n = 1 + rnd(if round % 3 == 0 { 400 } else { 60 }) as usize;
            let spread = 1 + rnd(60);
            let mut key: Vec<Option<f64>> = vec![None; n];
            let mut kept = SortedFlows {
                tol,
                chunk_len: 1 << rnd(5),
                ..SortedFlows::default()
            };
            for _ in 0..12 {
                let (k, churn) = (&mut kept, 2 + rnd(6));
                k.leaving.clear();
                k.batch.clear();
                for (f, slot) in key.iter_mut().enumerate() {
                    let was = *slot;
                    let leaves = match rnd(churn) {
                        0 => {
                            let key = (rnd(spread) as f64) * 0.4;
                            *slot = Some(key);
                            let f = f as FlowIdx;
                            let ends = [rnd(3) as u32, 3 + rnd(3) as u32];
                            let dead = false;
                            k.batch.push(Kept { key, f, ends, dead });
                            true
                        }
                        1 if was.is_some() => {
                            *slot = None;
                            true
                        }
                        _ => false,
                    };
                    if let (true, Some(old)) = (leaves, was) {
                        k.leaving.push((old, f as FlowIdx));
                    }
                }
                k.batch.sort_unstable_by(kept_by_key);
                k.apply();
                k.check();
                // Some chunks summed up, as a fill that reaches them does.
                for c in k.chunks.iter_mut().filter(|_| rnd(2) == 0) {
                    c.sum(tol);
                }
                k.check();
                // Chunk by chunk, as the fill walks it: where it lies if
                // it has pieces.
                let mut got = vec![];
                for c in &k.chunks {
                    let start = got.len();
                    let mut visit = |e: &Kept| got.push(e.f);
                    walk_runs(&c.flows, tol, &mut vec![], &mut visit);
                    // Where it lies, as the fill walks it, if summed in
                    // order or not summed with runs found in order.
                    let unsummed = !c.summed && runs_in_index_order(&c.flows, tol);
                    if c.in_order || unsummed {
                        let lies = c.flows.iter().filter(|e| !e.dead).map(|e| e.f);
                        assert!(got[start..].iter().copied().eq(lies), "pieces walk");
                    }
                }
                let mut full: Vec<(f64, FlowIdx)> = (0..n)
                    .filter_map(|f| key[f].map(|k| (k, f as FlowIdx)))
                    .collect();
                sort_with_ties(&mut full, |e| e.0, |e| e.1, tol);
                let want: Vec<FlowIdx> = full.iter().map(|e| e.1).collect();
                assert_eq!(got, want);
                let live = k.chunks.iter().flat_map(|c| &c.flows).filter(|e| !e.dead);
                assert_eq!(live.count(), want.len());
            }
        }
    }
}
