//! The greedy fill as a matching kept from one event to the next: where
//! every link has one capacity and every path is one or two links (a big
//! switch), each flow the fill reaches gets either the whole of both its
//! links or 0, and the flows that get a rate are the greedy matching in
//! the order's priority: a flow is matched iff none of its links is held
//! by a matched flow before it (its holder). That matching is the one
//! independent set in which every unmatched flow has a holder before it,
//! so it depends only on how each two flows that share a link are
//! ordered.
//!
//! Between two fills the holders' keys only fall (`srpt`'s and
//! `pfabric-edf`'s bytes left; `edf-sjf`'s keys are fixed), so each holder
//! stays before whatever it blocked, and the matching stays but for what
//! arrives and leaves: a holder that finishes frees its links, a flow that
//! starts may take links from holders after it. A chain of such changes
//! is followed in the order's priority from the links freed ([`Matching`]
//! keeps, per link, its unmatched flows by (key, index)): on a freed link,
//! the first flow whose other link is free or held by a flow after it
//! takes both, and the holders it passes lose theirs and free their other
//! links in turn. On FB2010 `srpt` a fill changes ~4 holders and looks at
//! ~300 flows, where the walk of the whole order looks at ~1,000 and
//! passes ~450 chunks.
//!
//! The chain orders flows by (key, index). The order `sort_with_ties`
//! gives agrees with it on two flows with equal keys (one run, by index)
//! or keys a cluster's end apart ([`gap`]); and on `w` before `u` where
//! `w`'s key is at most `u`'s and `w`'s index the smaller (they are then
//! in one run, by index, or `w`'s run comes first), which stays so while
//! `w`'s key falls. Every unmatched flow is kept blocked by a holder that
//! is certainly before it in that sense ([`certain`]): each flow the chain
//! finds blocked is checked, and each flow that takes links is checked
//! against the flows after it on them. Where a check fails, or the links
//! or paths are not a matching's, the chain is dropped and the order is
//! walked in full; the matching is then taken from that fill's rates and
//! checked for certainty flow by flow before a chain is trusted again.
//!
//! The key is generic ([`Key`]): `srpt`'s bytes left, `pfabric-edf`'s and
//! `edf-sjf`'s keys (`f64`), or `tafe`'s (task's queue and FIFO ticket,
//! then bytes left: [`Ranked`]), whose prefix orders two flows strictly
//! where it differs (a cluster's end apart) and bytes left inside one as
//! above.
//!
//! Correctness properties: the holders are the flows the last fill gave a
//! rate, each listed flow is an active flow under its key now and on both
//! its links' lists, and every unmatched flow is certainly blocked (debug
//! builds check each in [`Matching::check`] at every fill that keeps the
//! matching); every fill's rates and classes are checked against
//! [`super::greedy_fill`] on the full order (debug builds).

use super::{gap, FlowBits};
use crate::{Allocation, Clairvoyant, FlowIdx};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// No flow, or no link.
const NONE: u32 = u32::MAX;

/// An unmatched flow on a link: its key and index, and its other link
/// (the same link for a one-link path).
#[derive(Debug, Clone, Copy)]
struct Slot<K> {
    key: K,
    f: FlowIdx,
    other: u32,
}

/// A flow's key in the order the matching follows: `srpt`'s bytes left
/// (`f64`), or a prefix that orders whole groups strictly (a task's queue
/// and FIFO rank in `tafe`) and bytes left inside one ([`Ranked`]). Keys
/// of listed flows never move while listed; a holder's key only falls.
pub(crate) trait Key: Copy + std::fmt::Debug {
    /// The key's place in the order, as an integer for the heap.
    type Ord: Ord + Copy + std::fmt::Debug;
    /// No key (a flow not listed).
    const NONE: Self;
    /// Whether this is [`Key::NONE`].
    fn is_none(self) -> bool;
    /// The key's place in the order, as an integer for the heap.
    fn ordinal(self) -> Self::Ord;
    /// The keys' order (`total_cmp`'s on bytes).
    fn cmp(self, other: Self) -> std::cmp::Ordering;
    /// Whether a key `b` after `a` is a cluster's end after it, so that
    /// no near-tie run holds both ([`gap`]).
    fn gap(a: Self, b: Self, tol: f64) -> bool;
    /// Whether the key is one a chain cannot reason about (NaN or
    /// negative bytes).
    fn odd(self) -> bool;
    /// The key's bits, for the debug checks.
    #[cfg(debug_assertions)]
    fn bits(self) -> (u64, u64);
}

impl Key for f64 {
    type Ord = u64;
    const NONE: f64 = f64::NAN;
    #[inline(always)]
    fn is_none(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    fn ordinal(self) -> u64 {
        ordinal(self)
    }
    #[inline(always)]
    fn cmp(self, other: f64) -> std::cmp::Ordering {
        self.total_cmp(&other)
    }
    #[inline(always)]
    fn gap(a: f64, b: f64, tol: f64) -> bool {
        gap(a, b, tol)
    }
    #[inline(always)]
    fn odd(self) -> bool {
        self.is_nan() || self < 0.0
    }
    #[cfg(debug_assertions)]
    fn bits(self) -> (u64, u64) {
        (0, self.to_bits())
    }
}

/// A key with a prefix before bytes left: flows of smaller prefix come
/// first whatever their bytes (`tafe`: a task's queue and FIFO rank),
/// and inside one prefix by bytes left as `srpt` orders them (near-ties
/// by index). The prefix of a listed flow or a holder does not move.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ranked {
    /// The group's place: smaller first.
    pub(crate) prefix: u64,
    /// Bytes left.
    pub(crate) bytes: f64,
}

impl Key for Ranked {
    type Ord = (u64, u64);
    const NONE: Ranked = Ranked {
        prefix: u64::MAX,
        bytes: f64::NAN,
    };
    #[inline(always)]
    fn is_none(self) -> bool {
        self.bytes.is_nan()
    }
    #[inline(always)]
    fn ordinal(self) -> (u64, u64) {
        (self.prefix, ordinal(self.bytes))
    }
    #[inline(always)]
    fn cmp(self, other: Ranked) -> std::cmp::Ordering {
        self.prefix
            .cmp(&other.prefix)
            .then(self.bytes.total_cmp(&other.bytes))
    }
    #[inline(always)]
    fn gap(a: Ranked, b: Ranked, tol: f64) -> bool {
        if a.prefix == b.prefix {
            gap(a.bytes, b.bytes, tol)
        } else {
            a.prefix < b.prefix
        }
    }
    #[inline(always)]
    fn odd(self) -> bool {
        self.bytes.is_nan() || self.bytes < 0.0
    }
    #[cfg(debug_assertions)]
    fn bits(self) -> (u64, u64) {
        (self.prefix, self.bytes.to_bits())
    }
}

/// Whether flow `a` under key `ka` comes before `b` under `kb` by (key,
/// index).
#[inline(always)]
fn before<K: Key>(ka: K, a: FlowIdx, kb: K, b: FlowIdx) -> bool {
    ka.cmp(kb).then(a.cmp(&b)).is_lt()
}

/// Whether `w` (key `kw`) comes before `u` (key `ku`) in the order
/// `sort_with_ties` gives, whatever the other keys, and stays so while
/// `kw` falls: a cluster's end apart, or `kw <= ku` with the smaller
/// index.
#[inline(always)]
fn certain<K: Key>(kw: K, w: FlowIdx, ku: K, u: FlowIdx, tol: f64) -> bool {
    (kw.cmp(ku).is_le() && w < u) || K::gap(kw, ku, tol)
}

/// A key's place in `total_cmp`'s order, as an integer for the heap.
#[inline(always)]
fn ordinal(k: f64) -> u64 {
    let b = k.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// `s.partition_point(pred)`, probing from the back in steps that
/// double: a few cache lines when the answer is near the back, where a
/// list keeps the flows nearest the order's front.
fn from_back<T>(s: &[T], pred: impl Fn(&T) -> bool) -> usize {
    // `pred` is false on `s[hi..]`.
    let (mut hi, mut step) = (s.len(), 1);
    while hi >= step && !pred(&s[hi - step]) {
        hi -= step;
        step *= 2;
    }
    let lo = hi.saturating_sub(step);
    lo + s[lo..hi].partition_point(pred)
}

/// The greedy matching kept from one fill to the next; see the module doc.
#[derive(Debug)]
pub(crate) struct Matching<K: Key = f64> {
    // The lists and holders are kept: the links are of one capacity, the
    // paths one or two links, and no prefix comes before the order.
    kept: bool,
    // Every unmatched flow is certainly blocked: a chain may run.
    certain: bool,
    // Fills to wait before building or checking certainty again, and the
    // wait after the next failure.
    wait: u32,
    backoff: u32,
    // The links' capacities when built, and their one value.
    caps: Vec<f64>,
    cap: f64,
    // Per link: its unmatched flows by (key, index), the last first (the
    // order's front, where flows come and go, at the `Vec`'s end); its
    // holder and the holder's key at this fill.
    lists: Vec<Vec<Slot<K>>>,
    holder: Vec<u32>,
    hkey: Vec<K>,
    // Per flow: its links, and the key it is listed under (NaN if not).
    ends: Vec<[u32; 2]>,
    lkey: Vec<K>,
    // Flows that started and that finished since the last fill.
    arrived: Vec<(K, FlowIdx)>,
    // The flows that started, to list, each with a link of its path.
    pending: Vec<(u32, Slot<K>)>,
    departed: Vec<FlowIdx>,
    // Holders that finished.
    freed: Vec<FlowIdx>,
    // A chain: flows to decide by (key, index), with the link scanned and
    // the place on its list (`NONE` for a flow that started); holders
    // written, as (link, holder, key) before; flows that took links and
    // holders that lost them.
    heap: BinaryHeap<Reverse<Turn<K>>>,
    undo: Vec<(u32, u32, K)>,
    taken: Vec<FlowIdx>,
    lost: Vec<FlowIdx>,
    // Per flow: in the last fill's matching (a scratch set for [`Matching::sync`]).
    mark: FlowBits,
}

/// A flow's turn in a chain: its key's place and index, the link scanned
/// and its place on that link's list.
type Turn<K> = (<K as Key>::Ord, FlowIdx, u32, u32);

/// What a chain found.
enum Chain {
    Done,
    // An order it could not be sure of: the order is walked in full.
    Unsure,
}

impl<K: Key> Default for Matching<K> {
    fn default() -> Self {
        Matching {
            kept: false,
            certain: false,
            wait: 0,
            backoff: 0,
            caps: vec![],
            cap: 0.0,
            lists: vec![],
            holder: vec![],
            hkey: vec![],
            ends: vec![],
            lkey: vec![],
            arrived: vec![],
            pending: vec![],
            departed: vec![],
            freed: vec![],
            heap: BinaryHeap::new(),
            undo: vec![],
            taken: vec![],
            lost: vec![],
            mark: FlowBits::default(),
        }
    }
}

impl<K: Key> Matching<K> {
    /// Forgets the matching (at the first update and after a resync).
    pub(crate) fn reset(&mut self) {
        self.kept = false;
        self.certain = false;
        self.wait = 0;
        self.arrived.clear();
        self.departed.clear();
    }

    /// Notes a flow that started, under key `k`.
    pub(crate) fn started(&mut self, k: K, f: FlowIdx) {
        if self.kept {
            self.arrived.push((k, f));
        }
    }

    /// Notes a flow that finished.
    pub(crate) fn finished(&mut self, f: FlowIdx) {
        if self.kept {
            self.departed.push(f);
        }
    }

    /// The links of `f`'s path if it is one or two links.
    fn links_of(view: &Clairvoyant<'_>, f: FlowIdx) -> Option<[u32; 2]> {
        match view.path_links(view.path_idx(f)) {
            [a] => Some([a.0, a.0]),
            [a, b] => Some([a.0, b.0]),
            _ => None,
        }
    }

    fn grow(&mut self, n_flows: usize) {
        if self.ends.len() < n_flows {
            self.ends.resize(n_flows, [NONE; 2]);
            self.lkey.resize(n_flows, K::NONE);
        }
    }

    /// Lists flow `f` under key `k` on its links.
    fn list(&mut self, k: K, f: FlowIdx) {
        let [a, b] = self.ends[f as usize];
        self.lkey[f as usize] = k;
        for (l, other) in [(a, b), (b, a)] {
            let list = &mut self.lists[l as usize];
            let at = from_back(list, |s| before(k, f, s.key, s.f));
            list.insert(at, Slot { key: k, f, other });
            if a == b {
                break;
            }
        }
    }

    /// Lists the flows of `pending` (each once per link of its path) all
    /// at once, each list merged with its new flows from the back: the
    /// flows of a list move once, not once for each flow put in before
    /// them (a task that starts lists its flows at the order's back, the
    /// front of every list's `Vec`, which moved the whole list per flow).
    /// The lists come out as [`Matching::list`] would leave them.
    fn list_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        // By link, then in a list's order (the order's last first).
        pending.sort_unstable_by(|(la, a), (lb, b)| {
            la.cmp(lb).then(b.key.cmp(a.key)).then(b.f.cmp(&a.f))
        });
        let mut start = 0;
        while start < pending.len() {
            let l = pending[start].0;
            let mut end = start + 1;
            while end < pending.len() && pending[end].0 == l {
                end += 1;
            }
            let new = &pending[start..end];
            let list = &mut self.lists[l as usize];
            let n = list.len();
            list.resize(n + new.len(), new[0].1);
            // Each place from the back takes whichever of the old and the
            // new flows left comes first in the order.
            let (mut i, mut j, mut w) = (n, new.len(), n + new.len());
            while j > 0 {
                let s = new[j - 1].1;
                if i > 0 && before(list[i - 1].key, list[i - 1].f, s.key, s.f) {
                    list[w - 1] = list[i - 1];
                    i -= 1;
                } else {
                    list[w - 1] = s;
                    j -= 1;
                }
                w -= 1;
            }
            start = end;
        }
        pending.clear();
        self.pending = pending;
    }

    /// Takes flow `f` off its links' lists.
    fn unlist(&mut self, f: FlowIdx) {
        let [a, b] = self.ends[f as usize];
        let k = std::mem::replace(&mut self.lkey[f as usize], K::NONE);
        for l in [a, b] {
            let list = &mut self.lists[l as usize];
            let at = from_back(list, |s| before(k, f, s.key, s.f));
            if list.get(at).is_some_and(|s| s.f == f) {
                list.remove(at);
            }
        }
    }

    /// Brings the matching up to this fill and, if a chain may decide it,
    /// gives the flows that gain or lose links their rates, pushes the
    /// holders onto `positive` and returns true. `key(f)` is the key of a
    /// keyed active flow now; `holders` are the flows the last fill gave a
    /// rate. If it returns false the order is to be walked in full, then
    /// [`Matching::sync`] called with what that fill gave.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill(
        &mut self,
        view: &Clairvoyant<'_>,
        prefix: bool,
        key: impl Fn(FlowIdx) -> K,
        holders: &[FlowIdx],
        tol: f64,
        out: &mut Allocation,
        positive: &mut Vec<FlowIdx>,
    ) -> bool {
        if !self.kept {
            return false;
        }
        if prefix || view.capacities() != &self.caps[..] {
            self.kept = false;
            return false;
        }
        self.grow(view.n_flows());
        // The holders' keys now: they only fall.
        for &f in holders {
            if !view.is_active(f) {
                continue;
            }
            let k = key(f);
            for l in self.ends[f as usize] {
                if k.cmp(self.hkey[l as usize]).is_gt() {
                    self.certain = false;
                }
                self.hkey[l as usize] = k;
            }
        }
        // Flows that finished leave the lists and flows that started join
        // them; then the holders that finished free their links (a scan
        // holds a place on a list: the lists do not change after it).
        self.heap.clear();
        let mut freed = std::mem::take(&mut self.freed);
        freed.clear();
        for i in 0..self.departed.len() {
            let f = self.departed[i];
            let a = self.ends[f as usize][0];
            if a != NONE && self.holder[a as usize] == f {
                freed.push(f);
            } else if !self.lkey[f as usize].is_none() {
                self.unlist(f);
            }
        }
        self.departed.clear();
        for i in 0..self.arrived.len() {
            let (k, f) = self.arrived[i];
            if !view.is_active(f) || !self.lkey[f as usize].is_none() {
                continue;
            }
            let Some(ends) = Self::links_of(view, f) else {
                self.kept = false;
                self.pending.clear();
                self.freed = freed;
                return false;
            };
            self.ends[f as usize] = ends;
            self.lkey[f as usize] = k;
            let [a, b] = ends;
            self.pending.push((
                a,
                Slot {
                    key: k,
                    f,
                    other: b,
                },
            ));
            if a != b {
                self.pending.push((
                    b,
                    Slot {
                        key: k,
                        f,
                        other: a,
                    },
                ));
            }
            self.heap.push(Reverse((k.ordinal(), f, NONE, 0)));
        }
        self.arrived.clear();
        self.list_pending();
        for &f in &freed {
            let [a, b] = self.ends[f as usize];
            let k = self.hkey[a as usize];
            for l in [a, b] {
                self.holder[l as usize] = NONE;
                self.scan_after(l, k, f);
            }
        }
        self.freed = freed;
        if !self.certain {
            return false;
        }
        self.undo.clear();
        self.taken.clear();
        self.lost.clear();
        if let Chain::Unsure = self.chain(tol) {
            for &(l, h, k) in self.undo.iter().rev() {
                self.holder[l as usize] = h;
                self.hkey[l as usize] = k;
            }
            self.certain = false;
            return false;
        }
        for &g in &self.lost {
            out.set_rate(g, 0.0);
        }
        for i in 0..self.lost.len() {
            let g = self.lost[i];
            let k = key(g);
            self.list(k, g);
        }
        for i in 0..self.taken.len() {
            let f = self.taken[i];
            out.set_rate(f, self.cap);
            self.unlist(f);
        }
        for &f in holders.iter().chain(&self.taken) {
            let a = self.ends[f as usize][0];
            if view.is_active(f) && self.holder[a as usize] == f {
                positive.push(f);
            }
        }
        true
    }

    /// Pushes the first flow on link `l` after flow `f` under key `k`.
    fn scan_after(&mut self, l: u32, k: K, f: FlowIdx) {
        let list = &self.lists[l as usize];
        let after = from_back(list, |s| before(k, f, s.key, s.f));
        if let Some(at) = after.checked_sub(1) {
            let s = &list[at];
            self.heap
                .push(Reverse((s.key.ordinal(), s.f, l, at as u32)));
        }
    }

    /// Follows the chain from the flows on the heap, in (key, index)
    /// order: each flow is decided once its turn comes, all flows before
    /// it being decided. A list scanned goes on in place while its next
    /// flow comes before the heap's first.
    fn chain(&mut self, tol: f64) -> Chain {
        while let Some(Reverse((_, f, l, at))) = self.heap.pop() {
            if l == NONE {
                // A flow that started.
                let [a, b] = self.ends[f as usize];
                if self.holder[a as usize] == f {
                    continue;
                }
                let k = self.lkey[f as usize];
                match self.decide(k, f, a, b, tol) {
                    Some(true) => {}
                    Some(false) => {
                        if !self.take(k, f, a, b, tol) {
                            return Chain::Unsure;
                        }
                    }
                    None => return Chain::Unsure,
                }
                continue;
            }
            let mut at = at as usize;
            loop {
                let s = self.lists[l as usize][at];
                let h = self.holder[l as usize];
                if h != NONE && (h == s.f || before(self.hkey[l as usize], h, s.key, s.f)) {
                    // Taken before this flow: the rest of the list is blocked.
                    break;
                }
                match self.decide(s.key, s.f, s.other, s.other, tol) {
                    None => return Chain::Unsure,
                    Some(false) => {
                        if !self.take(s.key, s.f, l, s.other, tol) {
                            return Chain::Unsure;
                        }
                        break;
                    }
                    Some(true) => {}
                }
                // The next flow on the list: the one before in the `Vec`.
                let Some(next) = at.checked_sub(1) else {
                    break;
                };
                at = next;
                let n = &self.lists[l as usize][at];
                let here = (n.key.ordinal(), n.f);
                if self.heap.peek().is_some_and(|t| (t.0 .0, t.0 .1) < here) {
                    self.heap.push(Reverse((here.0, here.1, l, at as u32)));
                    break;
                }
            }
        }
        Chain::Done
    }

    /// Whether flow `f` (key `k`, links `a` and `b`) is blocked by a
    /// holder before it: `None` if it is, but not certainly.
    #[inline(always)]
    fn decide(&self, k: K, f: FlowIdx, a: u32, b: u32, tol: f64) -> Option<bool> {
        let blocks = |x: u32| {
            let h = self.holder[x as usize];
            (h != NONE && before(self.hkey[x as usize], h, k, f)).then_some(h)
        };
        let (ba, bb) = (blocks(a), blocks(b));
        if ba.is_none() && bb.is_none() {
            return Some(false);
        }
        let sure = |x: u32, h: Option<u32>| {
            h.is_some_and(|h| certain(self.hkey[x as usize], h, k, f, tol))
        };
        (sure(a, ba) || sure(b, bb)).then_some(true)
    }

    /// Flow `f` (key `k`) takes links `a` and `b`; their holders (after
    /// it) lose theirs, and their other links are scanned. False if a
    /// flow it now blocks is not certainly after it.
    fn take(&mut self, k: K, f: FlowIdx, a: u32, b: u32, tol: f64) -> bool {
        for x in [a, b] {
            let g = self.holder[x as usize];
            if g == NONE || g == f {
                continue;
            }
            let kg = self.hkey[x as usize];
            if !certain(k, f, kg, g, tol) {
                return false;
            }
            self.lost.push(g);
            for y in self.ends[g as usize] {
                if self.holder[y as usize] == g {
                    self.undo.push((y, g, kg));
                    self.holder[y as usize] = NONE;
                    if y != a && y != b {
                        self.scan_after(y, kg, g);
                    }
                }
            }
        }
        for x in [a, b] {
            self.undo
                .push((x, self.holder[x as usize], self.hkey[x as usize]));
            self.holder[x as usize] = f;
            self.hkey[x as usize] = k;
        }
        self.taken.push(f);
        // The flows after it on its links are blocked by it: surely?
        if k.odd() {
            return false;
        }
        for x in [a, b] {
            let list = &self.lists[x as usize];
            let after = from_back(list, |s| s.key.cmp(k).is_gt());
            for s in list[..after].iter().rev() {
                if K::gap(k, s.key, tol) {
                    break;
                }
                if s.f < f {
                    return false;
                }
            }
        }
        true
    }

    /// After a fill that walked the order in full (`positive`: the flows
    /// it gave a rate; `holders`: the last fill's), takes its matching:
    /// builds the lists if they are not kept and can be, and checks that
    /// every unmatched flow is certainly blocked if that is not known.
    /// `flows` are the keyed active flows with their keys (read only to
    /// build).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sync(
        &mut self,
        view: &Clairvoyant<'_>,
        prefix: bool,
        key: impl Fn(FlowIdx) -> K,
        flows: impl Iterator<Item = (K, FlowIdx)>,
        holders: &[FlowIdx],
        positive: &[FlowIdx],
        tol: f64,
        out: &Allocation,
    ) {
        if prefix {
            self.kept = false;
            return;
        }
        if !self.kept {
            if self.wait > 0 {
                self.wait -= 1;
                return;
            }
            if !self.build(view, flows, positive, out) {
                self.backoff = (2 * self.backoff).clamp(64, 1 << 16);
                self.wait = self.backoff;
                return;
            }
        } else {
            self.grow(view.n_flows());
            for &f in positive {
                self.mark.set(f, true);
            }
            for &f in holders {
                if self.mark.get(f) || !view.is_active(f) {
                    continue;
                }
                for l in self.ends[f as usize] {
                    if self.holder[l as usize] == f {
                        self.holder[l as usize] = NONE;
                    }
                }
                self.list(key(f), f);
            }
            for &f in positive {
                self.mark.set(f, false);
                let k = key(f);
                if self.holder[self.ends[f as usize][0] as usize] != f {
                    self.unlist(f);
                }
                for l in self.ends[f as usize] {
                    self.holder[l as usize] = f;
                    self.hkey[l as usize] = k;
                }
            }
        }
        if !self.certain {
            if self.wait > 0 {
                self.wait -= 1;
            } else {
                self.certain = self.all_certain(tol);
                if self.certain {
                    self.backoff = 0;
                } else {
                    self.backoff = (2 * self.backoff).clamp(16, 1 << 12);
                    self.wait = self.backoff;
                }
            }
        }
    }

    /// Builds the lists and holders from scratch if the links are of one
    /// capacity and every path one or two links; whether it could.
    fn build(
        &mut self,
        view: &Clairvoyant<'_>,
        flows: impl Iterator<Item = (K, FlowIdx)>,
        positive: &[FlowIdx],
        out: &Allocation,
    ) -> bool {
        let caps = view.capacities();
        let floor = coflowkit_alloc::EPS * 1e9;
        let Some(&cap) = caps.first() else {
            return false;
        };
        if cap.is_nan() || cap <= floor || caps.iter().any(|&c| c != cap) {
            return false;
        }
        self.caps.clear();
        self.caps.extend_from_slice(caps);
        self.cap = cap;
        self.grow(view.n_flows());
        self.lists.iter_mut().for_each(Vec::clear);
        self.lists.resize_with(caps.len(), Vec::new);
        self.holder.clear();
        self.holder.resize(caps.len(), NONE);
        self.hkey.clear();
        self.hkey.resize(caps.len(), K::NONE);
        self.lkey.iter_mut().for_each(|k| *k = K::NONE);
        for &f in positive {
            self.mark.set(f, true);
        }
        let mut ok = true;
        for (k, f) in flows {
            let Some([a, b]) = Self::links_of(view, f) else {
                ok = false;
                break;
            };
            self.ends[f as usize] = [a, b];
            if self.mark.get(f) {
                debug_assert_eq!(out.rate(f), cap, "a matching's rate");
                for l in [a, b] {
                    self.holder[l as usize] = f;
                    self.hkey[l as usize] = k;
                }
            } else {
                self.lkey[f as usize] = k;
                self.lists[a as usize].push(Slot {
                    key: k,
                    f,
                    other: b,
                });
                if a != b {
                    self.lists[b as usize].push(Slot {
                        key: k,
                        f,
                        other: a,
                    });
                }
            }
        }
        for &f in positive {
            self.mark.set(f, false);
        }
        if !ok {
            return false;
        }
        for list in &mut self.lists {
            list.sort_unstable_by(|x, y| y.key.cmp(x.key).then(y.f.cmp(&x.f)));
        }
        self.kept = true;
        self.certain = false;
        self.wait = 0;
        self.backoff = 0;
        self.arrived.clear();
        self.departed.clear();
        true
    }

    /// Whether every listed flow is certainly blocked by a holder of one
    /// of its links.
    fn all_certain(&self, tol: f64) -> bool {
        for (l, list) in self.lists.iter().enumerate() {
            for s in list {
                if self.ends[s.f as usize][0] as usize != l {
                    continue;
                }
                let sure = |x: u32| {
                    let h = self.holder[x as usize];
                    h != NONE && certain(self.hkey[x as usize], h, s.key, s.f, tol)
                };
                if !(sure(l as u32) || sure(s.other)) {
                    return false;
                }
            }
        }
        true
    }

    /// Checks the lists and holders against the keyed active flows
    /// `flows` (with their keys now) and the flows the fill gave a rate.
    #[cfg(debug_assertions)]
    pub(crate) fn check(
        &self,
        flows: impl Iterator<Item = (K, FlowIdx)>,
        positive: &[FlowIdx],
        tol: f64,
    ) {
        if !self.kept {
            return;
        }
        let mut held = std::collections::HashSet::new();
        for &f in positive {
            for l in self.ends[f as usize] {
                assert_eq!(self.holder[l as usize], f, "holder of {l}");
            }
            held.insert(f);
        }
        let mut n_listed = 0;
        for (k, f) in flows {
            if held.contains(&f) {
                assert!(self.lkey[f as usize].is_none(), "holder {f} listed");
                let l = self.ends[f as usize][0] as usize;
                assert_eq!(self.hkey[l].bits(), k.bits(), "key of holder {f}");
                continue;
            }
            assert_eq!(self.lkey[f as usize].bits(), k.bits(), "key of {f}");
            n_listed += 1;
        }
        let mut n = 0;
        for (l, list) in self.lists.iter().enumerate() {
            for w in list.windows(2) {
                assert!(before(w[1].key, w[1].f, w[0].key, w[0].f), "list order");
            }
            for s in list {
                let [a, b] = self.ends[s.f as usize];
                assert!(l as u32 == a || l as u32 == b);
                assert_eq!(s.key.bits(), self.lkey[s.f as usize].bits());
                if a as usize == l {
                    n += 1;
                }
            }
        }
        assert_eq!(n, n_listed, "flows listed");
        if self.certain {
            assert!(
                self.all_certain(tol),
                "an unmatched flow not surely blocked"
            );
        }
    }
}
