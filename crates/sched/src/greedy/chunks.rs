//! The pieces of a kept order: a flow as kept ([`Kept`]: key, index, the
//! ends of its path), link-class sets that summarize a cluster's links,
//! the runs of near-ties and the merges and searches an update makes, and
//! the chunks the order is cut into with where each flow stands
//! ([`Chunk`], [`Places`]).

use super::*;

/// A flow kept in [`SortedFlows`]: its key and index, and the first and
/// last links of its path (`u32::MAX` for an empty path), which decide
/// most fills without reading the path. A flow that left the order stays in place,
/// `dead`, until its chunk is purged: it still counts for the clusters
/// and their summaries (which then hold more than they need, never less)
/// but no walk visits it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Kept {
    pub(super) key: f64,
    pub(super) f: FlowIdx,
    pub(super) ends: [u32; 2],
    pub(super) dead: bool,
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
    pub(super) fn add(&mut self, other: &Ends) {
        for w in 0..WORDS {
            self.first[w] |= other.first[w];
            self.last[w] |= other.last[w];
        }
    }
}

/// Flows per piece: a cluster longer than this whose runs are already in
/// flow index order is also summed up piece by piece, so that the fill
/// can pass over a blocked piece of it.
pub(super) const PIECE: usize = 64;

/// Flows per chunk aimed at: a chunk is split where a cluster ends once
/// it holds more than twice this, and joined with the next one when both
/// fit in this.
pub(super) const CHUNK: usize = 16;

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
pub(super) fn ends_of(flows: &[Kept]) -> Ends {
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
pub(super) fn runs_in_index_order(cluster: &[Kept], tol: f64) -> bool {
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
pub(super) fn cut(s: &[Kept], tol: f64, pieces: &mut Vec<Ends>) -> (Ends, bool, bool) {
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
pub(super) fn exact_ties(s: &[Kept], tol: f64) -> bool {
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
pub(super) fn position(sorted: &[Kept], k: f64, f: FlowIdx) -> usize {
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
pub(super) fn kept_by_key(a: &Kept, b: &Kept) -> Ordering {
    a.key.total_cmp(&b.key).then(a.f.cmp(&b.f))
}

/// Appends to `out` the flows of `a` and `b` (each in [`by_key`] order)
/// merged in that order.
pub(super) fn merge_sorted(a: &[Kept], b: &[Kept], out: &mut Vec<Kept>) {
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
pub(super) fn apart(
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
pub(super) fn spaced(moving: &[Kept], next: Option<f64>, tol: f64) -> bool {
    let apart = |w: &[Kept]| w[0].key == w[1].key || gap(w[0].key, w[1].key, tol);
    let last = moving[moving.len() - 1].key;
    moving.windows(2).all(apart) && next.is_none_or(|n| gap(last, n, tol))
}

/// Merges `batch` into `sorted` (both in [`by_key`] order) where it lies:
/// only the flows after the first of `batch` move, each once.
pub(super) fn merge_in_place(sorted: &mut Vec<Kept>, batch: &[Kept]) {
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
pub(super) fn walk_runs(
    sorted: &[Kept],
    tol: f64,
    buf: &mut Vec<Kept>,
    visit: &mut impl FnMut(&Kept),
) {
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
pub(super) struct FlowBits(Vec<u64>);

impl FlowBits {
    pub(super) fn get(&self, f: FlowIdx) -> bool {
        let f = f as usize;
        self.0.get(f / 64).is_some_and(|w| w >> (f % 64) & 1 == 1)
    }
    pub(super) fn set(&mut self, f: FlowIdx, on: bool) {
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
pub(super) struct Chunk {
    // Its id in [`Places`]: it does not change while the chunk lives.
    pub(super) id: u32,
    pub(super) flows: Vec<Kept>,
    // The [`Ends`] of all its flows, dead or alive, if `summed`.
    pub(super) ends: Ends,
    pub(super) pieces: Vec<Ends>,
    // Its near-tie runs are in flow index order: walked where it lies.
    pub(super) in_order: bool,
    // Neighbouring keys are equal or a cluster's end apart: its runs are
    // of equal keys, in index order whoever leaves.
    pub(super) exact: bool,
    // Its ends, pieces and flags are those [`cut`] gives on its flows;
    // if not, it is walked as runs (`in_order` false, no pieces). A chunk
    // that changed is summed up again only when a fill would pass over
    // it unread if it could: one that holds a flow the last fill gave a
    // rate, or that the classes reach, is walked whatever its summary.
    pub(super) summed: bool,
    pub(super) n_dead: usize,
    // A stamp that changes whenever its flows move (not when they only
    // die): a flow's place found under it stays right until it changes.
    pub(super) version: u64,
    // If `covered`: link classes of which every live flow of it has its
    // path's first or last link in one. Once they are all
    // full, each of its flows would get 0 and no new class: a fill past
    // the classes passes it over unread. It depends on the flows' ends
    // only, so it stays while flows leave or are purged,
    // and goes with the flows when the chunk is split or joined.
    pub(super) cover: Classes,
    pub(super) covered: bool,
    // Per piece: a cover of its live flows as `cover` is of the chunk's,
    // if known.
    pub(super) piece_covers: Vec<Option<Classes>>,
}

impl Chunk {
    /// Whether dead flows are a quarter of it: it is then purged.
    pub(super) fn purge_due(&self) -> bool {
        self.n_dead > 0 && 4 * self.n_dead >= self.flows.len()
    }

    /// Drops its dead flows.
    pub(super) fn purge(&mut self) {
        self.flows.retain(|e| !e.dead);
        self.n_dead = 0;
        self.summed = false;
    }

    /// Sums it up again as [`cut`] does, if it changed since it was.
    pub(super) fn sum(&mut self, tol: f64) {
        if !self.summed {
            let (ends, in_order, exact) = cut(&self.flows, tol, &mut self.pieces);
            self.piece_covers.clear();
            self.piece_covers.resize(self.pieces.len(), None);
            (self.ends, self.in_order, self.exact, self.summed) = (ends, in_order, exact, true);
        }
    }

    /// Notes that it changed: walked as runs until it is summed up again.
    pub(super) fn unsum(&mut self) {
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
pub(super) struct Places {
    // Per flow: the id of the chunk that holds it alive.
    pub(super) chunk_of: Vec<u32>,
    // Per chunk id: the chunk's position.
    pub(super) at: Vec<u32>,
    // Ids of removed chunks, for reuse.
    pub(super) free: Vec<u32>,
}

impl Places {
    /// An id for a new chunk.
    pub(super) fn new_id(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.at.push(0);
            self.at.len() as u32 - 1
        })
    }

    /// Notes that the live flows of `flows` are in chunk `id`.
    pub(super) fn put(&mut self, flows: &[Kept], id: u32) {
        for e in flows.iter().filter(|e| !e.dead) {
            let f = e.f as usize;
            if self.chunk_of.len() <= f {
                self.chunk_of.resize(f + 1, u32::MAX);
            }
            self.chunk_of[f] = id;
        }
    }

    /// The position of the chunk that holds live flow `f`.
    pub(super) fn chunk(&self, f: FlowIdx) -> usize {
        self.at[self.chunk_of[f as usize] as usize] as usize
    }

    /// Notes every chunk's position.
    pub(super) fn renumber(&mut self, chunks: &[Box<Chunk>]) {
        for (p, c) in chunks.iter().enumerate() {
            self.at[c.id as usize] = p as u32;
        }
    }

    /// Forgets every chunk.
    pub(super) fn clear(&mut self) {
        self.at.clear();
        self.free.clear();
    }
}

/// The chunk whose flows hold key `k` and index `f` (or would), by the
/// key and index of each chunk's first flow: the last chunk whose first
/// flow does not come after it.
pub(super) fn chunk_of(firsts: &[(f64, FlowIdx)], k: f64, f: FlowIdx) -> usize {
    let after = firsts.partition_point(|h| h.0.total_cmp(&k).then(h.1.cmp(&f)).is_le());
    after.saturating_sub(1)
}
