//! [`SortedFlows`]: every flow in one sorted order kept from one call to
//! the next, updated from the flows whose keys moved, started or left,
//! and walked by a fill that passes the clusters that cannot get anything.

use super::*;

/// The active flows in (key, flow index) order, kept from one call to the
/// next in chunks; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct SortedFlows {
    // The key and index of each chunk's first flow (dead or alive), kept
    // apart from the chunks so that the search reads no more than this.
    pub(super) firsts: Vec<(f64, FlowIdx)>,
    // Boxed, so that a chunk inserted or removed moves a pointer per
    // chunk after it, not the chunk.
    #[allow(clippy::vec_box)]
    pub(super) chunks: Vec<Box<Chunk>>,
    pub(super) places: Places,
    // Flows per chunk aimed at (0: [`CHUNK`]).
    pub(super) chunk_len: usize,
    pub(super) batch: Vec<Kept>,
    // Kept keys of the flows that leave in this update.
    pub(super) leaving: Vec<(f64, FlowIdx)>,
    // Chunks changed in this update.
    pub(super) dirty: Vec<usize>,
    // The chunks of the flows the last fill gave a rate (they may have to
    // be set to 0), and their positions in the chunks walked piece by
    // piece (their indices in the others).
    pub(super) hot: Vec<(usize, usize)>,
    // Per flow: the key it is kept under, NaN if it is not.
    pub(super) key_of: Vec<f64>,
    // Per flow: where it was last found in its chunk, as (the chunk's
    // `version` then, position); `version`s are never reused.
    pub(super) found: Vec<(u64, u32)>,
    // The last `version` given.
    pub(super) stamp: u64,
    // Per flow: already handled in this update.
    pub(super) seen: Vec<bool>,
    // Flows given a positive rate by the last and the one before last fill.
    pub(super) positive: Vec<FlowIdx>,
    pub(super) positive_before: Vec<FlowIdx>,
    // The flows the last fill gave a positive rate.
    pub(super) was_positive: FlowBits,
    // Flows whose class is to be reset to `LAST_CLASS` at the next fill:
    // the last fill's first positions, and the flows that started since.
    pub(super) classed: Vec<FlowIdx>,
    pub(super) run: Vec<Kept>,
    // Keys never move while a flow is active (a total size, say): only the
    // flows that start or finish are (re-)keyed.
    pub(super) fixed_keys: bool,
    pub(super) tol: f64,
    pub(super) ready: bool,
    // The flows the last two fills gave a rate, whose keys move: kept
    // apart from the chunks, in (key, index) order, and merged into the
    // walk by the fill (their `key_of` is NaN).
    pub(super) moving: Vec<Kept>,
    pub(super) in_moving: FlowBits,
    // A stretch of the order walked merged with moving flows.
    pub(super) merged: Vec<Kept>,
    // Where each moving flow of a chunk falls among its flows, found by
    // [`apart`].
    pub(super) cuts: Vec<usize>,
    // Per flow: its key in `moving`, written at each fill.
    pub(super) mkey: Vec<f64>,
    // The fill as a greedy matching kept from one fill to the next.
    pub(super) matching: Matching,
}

/// Every active flow of the order with its key: the chunks' live flows,
/// then the moving ones (the matching's input).
pub(super) fn keyed_flows<'a>(
    chunks: &'a [Box<Chunk>],
    moving: &'a [Kept],
) -> impl Iterator<Item = (f64, FlowIdx)> + 'a {
    let live = chunks.iter().flat_map(|c| &c.flows).filter(|e| !e.dead);
    live.chain(moving).map(|e| (e.key, e.f))
}

/// Flow `f`'s key now: its kept key, or, for a moving flow (kept key NaN),
/// the key `mkey` holds for it this fill.
#[inline(always)]
pub(super) fn key_now(key_of: &[f64], mkey: &[f64], f: FlowIdx) -> f64 {
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
    pub(super) fn apply(&mut self) {
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
    pub(super) fn target(&self) -> usize {
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
    pub(super) fn check(&self) {
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
    pub(super) fn order(&self, view: &Clairvoyant<'_>) -> Vec<(FlowIdx, PathIdx)> {
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
    pub(super) fn note_positive(&mut self) {
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
    pub(super) fn check_fill(&self, view: &Clairvoyant<'_>, out: &Allocation, want: &Allocation) {
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
    pub(super) fn head_classes(&mut self, out: &mut Allocation) {
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
pub(super) fn split_point(s: &[Kept], target: usize, tol: f64) -> Option<usize> {
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
