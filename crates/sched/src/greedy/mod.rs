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

mod chunks;
mod fill;
pub(crate) mod matching;
mod sorted;

pub(crate) use chunks::*;
use fill::*;
pub(crate) use sorted::*;

#[cfg(any(test, debug_assertions))]
use crate::PathIdx;
use crate::{Allocation, Changes, Clairvoyant, FlowIdx};
use matching::Matching;
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
