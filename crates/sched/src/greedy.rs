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
//! them into the rest.
//!
//! Correctness properties: after [`SortedFlows::update`] the order is the
//! one `sort_with_ties` gives on every active flow's key read now: the
//! merge yields the unique (key, index) order, whose anchored near-tie runs
//! are then cut exactly as `sort_with_ties` cuts them (the reference suites
//! in `crates/sim/tests/reference` hold `srpt`, `pfabric-edf` and
//! `edf-sjf` against slow references; debug builds check every cached key
//! against a fresh read in [`SortedFlows::update`]). A cached key is
//! trusted only for a flow whose rate was 0 in the last two fills: the
//! first fill that gives it 0 runs while it still sends at its old rate
//! until the driver applies the new one.

use crate::{Allocation, Changes, Clairvoyant, FlowIdx, PathIdx};
use std::cmp::Ordering;

/// Gives each flow of `order` (with its path) in turn the least residual
/// capacity along its path and takes it from every link it crosses (rates
/// at or below the allocation's noise floor count as 0), with class = its
/// position in `order`. Once every link is full the rest get 0 without
/// looking at paths. Flows whose rate is positive afterwards are pushed
/// onto `positive`; a flow for which `was_positive` is false had rate 0
/// before, so a 0 now leaves the allocation as it is.
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
pub(crate) type Entry = (f64, FlowIdx, PathIdx);

/// Entries in ascending key order, ties by flow index.
pub(crate) fn by_key(a: &Entry, b: &Entry) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Writes into `merged` the entries of `sorted` whose flow does not
/// `leave`, with `batch` merged in; both inputs in [`by_key`] order, and
/// so the output.
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
pub(crate) fn cut_runs(sorted: &[Entry], tol: f64, order: &mut Vec<(FlowIdx, PathIdx)>) {
    order.clear();
    let s = sorted;
    let mut i = 0;
    while i < s.len() {
        let k0 = s[i].0;
        let reach = if tol > 0.0 {
            tol + 1e-9 * k0.abs()
        } else {
            0.0
        };
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

/// The active flows in (key, flow index) order, kept from one call to the
/// next; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct SortedFlows {
    sorted: Vec<Entry>,
    merged: Vec<Entry>,
    batch: Vec<Entry>,
    // Per flow: leaves `sorted` in this update (finished, or re-keyed).
    leaves: Vec<bool>,
    // Flows given a positive rate by the last and the one before last fill.
    positive: Vec<FlowIdx>,
    positive_before: Vec<FlowIdx>,
    // Per flow: whether the last fill gave it a positive rate.
    was_positive: Vec<bool>,
    order: Vec<(FlowIdx, PathIdx)>,
    ready: bool,
}

impl SortedFlows {
    /// Brings the order up to date with `changes` and returns it, near-ties
    /// (keys within `tol` of their run's first key, as `sort_with_ties`
    /// cuts runs) by flow index. `key(f)` is the key of active flow `f`, or
    /// `None` for a flow this order leaves out; it is read for the flows
    /// that started and the flows that had a rate in the last two fills
    /// (all of them when `moving` says every key may have moved, at the
    /// first call, and after a resync).
    pub(crate) fn update(
        &mut self,
        view: &Clairvoyant<'_>,
        changes: &Changes,
        tol: f64,
        key: impl Fn(FlowIdx) -> Option<f64>,
    ) {
        if self.leaves.len() < view.n_flows() {
            self.leaves.resize(view.n_flows(), false);
            self.was_positive.resize(view.n_flows(), false);
        }
        self.batch.clear();
        if !self.ready || changes.resynced {
            self.ready = true;
            self.sorted.clear();
            let keyed = view
                .active_flows()
                .iter()
                .filter_map(|&f| Some((key(f)?, f, view.path_idx(f))));
            self.batch.extend(keyed);
        } else {
            for &f in &changes.finished {
                self.leaves[f as usize] = true;
            }
            let moved = self.positive.iter().chain(&self.positive_before);
            for &f in moved.chain(&changes.started) {
                let fi = f as usize;
                if self.leaves[fi] || !view.is_active(f) {
                    continue;
                }
                self.leaves[fi] = true;
                if let Some(k) = key(f) {
                    self.batch.push((k, f, view.path_idx(f)));
                }
            }
        }
        self.batch.sort_unstable_by(by_key);
        self.merge();
        for &f in changes.finished.iter().chain(&self.positive) {
            self.leaves[f as usize] = false;
        }
        for &f in self.positive_before.iter().chain(&changes.started) {
            self.leaves[f as usize] = false;
        }
        #[cfg(debug_assertions)]
        for &(k, f, _) in &self.sorted {
            debug_assert_eq!(key(f).map(f64::to_bits), Some(k.to_bits()), "key of {f}");
        }
        self.cut_runs(tol);
    }

    /// Merges `batch` into what stays of `sorted`.
    fn merge(&mut self) {
        let leaves = &self.leaves;
        merge_into(
            &self.sorted,
            &self.batch,
            |f| leaves[f as usize],
            &mut self.merged,
        );
        std::mem::swap(&mut self.sorted, &mut self.merged);
    }

    /// The final order: `sorted` with each run of near-ties by flow index
    /// (the runs of `sort_with_ties`).
    fn cut_runs(&mut self, tol: f64) {
        cut_runs(&self.sorted, tol, &mut self.order);
    }

    /// Fills greedily in `prefix` then the order of the last
    /// [`SortedFlows::update`] (see [`greedy_fill`]) and notes which flows
    /// got a rate, for the next update.
    pub(crate) fn fill(
        &mut self,
        view: &Clairvoyant<'_>,
        prefix: &[FlowIdx],
        residual: &mut Vec<f64>,
        out: &mut Allocation,
    ) {
        std::mem::swap(&mut self.positive, &mut self.positive_before);
        self.positive.clear();
        let first = prefix.iter().map(|&f| (f, view.path_idx(f)));
        let order = first.chain(self.order.iter().copied());
        greedy_fill(
            view,
            order,
            residual,
            out,
            &self.was_positive,
            &mut self.positive,
        );
        for &f in &self.positive_before {
            self.was_positive[f as usize] = false;
        }
        for &f in &self.positive {
            self.was_positive[f as usize] = true;
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
}
