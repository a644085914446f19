//! A task's flows in the order they are served, cut into chunks at key
//! gaps: the chunk and its stretches ([`Chunk`], [`Seg`]), the buffer of
//! its flows ([`Flows`]), and the edits an update makes to them (where a
//! flow goes, [`place`]; a re-key in place, [`rekey_in_place`]; a move
//! inside a chunk, [`move_in_chunk`]; the flows that leave and come in,
//! [`apply`]). The module doc of `tafe` says why the order is kept so.

use super::*;

/// Space [`apply`] reuses from one call to the next: positions of the
/// flows that leave or come into a chunk, and its stretches before.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    pub(super) at: Vec<usize>,
    pub(super) segs: Vec<Seg>,
}

/// Flows per chunk of a task's order, about (a chunk is split when it
/// holds more than twice this, where its keys leave a gap).
pub(super) const CHUNK: usize = 64;

/// A flow in a task's order: its key (remaining bytes), index and path,
/// with its path's first and last links (`u32::MAX` for an empty path).
#[derive(Debug, Clone, Copy)]
pub(super) struct Kept {
    pub(super) key: f64,
    pub(super) f: FlowIdx,
    pub(super) p: PathIdx,
    pub(super) ends: [u32; 2],
}

/// [`crate::greedy::by_key`] on kept flows: key, then flow index.
pub(super) fn kept_by_key(a: &Kept, b: &Kept) -> Ordering {
    a.key.total_cmp(&b.key).then(a.f.cmp(&b.f))
}

/// A chunk's flows in key order: `buf[head..]`. Flows that leave nearer
/// its front than its back move the flows before them one way (`head`
/// grows) instead of all those after them the other, and flows put in
/// nearer its front move those before them into the room `head` leaves:
/// FB2010's tasks have runs of thousands of exact ties, one chunk each,
/// whose front flows are served and leave, one or two an event, and each
/// moved the whole run. Read as a slice (`Deref`); the room at the front
/// changes no flow's place in it.
#[derive(Debug, Default)]
pub(super) struct Flows {
    pub(super) buf: Vec<Kept>,
    pub(super) head: usize,
}

impl std::ops::Deref for Flows {
    type Target = [Kept];
    #[inline(always)]
    fn deref(&self) -> &[Kept] {
        &self.buf[self.head..]
    }
}

impl std::ops::DerefMut for Flows {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Kept] {
        &mut self.buf[self.head..]
    }
}

impl<'a> IntoIterator for &'a Flows {
    type Item = &'a Kept;
    type IntoIter = std::slice::Iter<'a, Kept>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Flows {
    /// `flows` (in key order), with no room at the front.
    pub(super) fn of(flows: Vec<Kept>) -> Flows {
        Flows {
            buf: flows,
            head: 0,
        }
    }

    /// Appends `flows` (all after the last).
    pub(super) fn extend_from_slice(&mut self, flows: &[Kept]) {
        self.buf.extend_from_slice(flows);
    }

    /// Splits off the flows from place `at` on.
    pub(super) fn split_off(&mut self, at: usize) -> Vec<Kept> {
        self.buf.split_off(self.head + at)
    }

    /// Takes out the flows at places `at` (ascending, not empty), moving
    /// the flows before the last of them toward the back if they are
    /// fewer than those after the first, else those after toward the
    /// front. Each flow left keeps its place among the others.
    pub(super) fn remove(&mut self, at: &[usize]) {
        let (n, h, m) = (self.len(), self.head, at.len());
        let (first, last) = (at[0], at[m - 1]);
        debug_assert!(at.windows(2).all(|w| w[0] < w[1]) && last < n);
        if last < n - 1 - first {
            // From the last taken back to the front: the flows between the
            // (k-1)-th and the k-th move m - k places toward the back.
            let mut w = h + last + 1;
            for k in (0..m).rev() {
                let lo = if k > 0 { at[k - 1] + 1 } else { 0 };
                let len = at[k] - lo;
                self.buf.copy_within(h + lo..h + at[k], w - len);
                w -= len;
            }
            debug_assert_eq!(w, h + m);
            self.head = w;
        } else {
            let mut w = h + first;
            for k in 0..m {
                let hi = if k + 1 < m { at[k + 1] } else { n };
                self.buf.copy_within(h + at[k] + 1..h + hi, w);
                w += hi - at[k] - 1;
            }
            self.buf.truncate(w);
        }
    }

    /// Puts `items` (in key order, none in the chunk) in at their places,
    /// and leaves in `at` the place each went to (ascending). The flows
    /// before the last one's place move into the room at the front if
    /// there is room and they are fewer than those after the first's,
    /// else those after move toward the back.
    pub(super) fn insert(&mut self, items: &[Kept], at: &mut Vec<usize>) {
        let (n, h, m) = (self.len(), self.head, items.len());
        // Each item's place among the flows now (ascending, as the items).
        at.clear();
        let mut p = 0;
        for b in items {
            p += self[p..].partition_point(|e| before(e, b));
            at.push(p);
        }
        let (first, last) = (at[0], at[m - 1]);
        if h >= m && last < n - first {
            let nh = h - m;
            let mut prev = 0;
            for (j, b) in items.iter().enumerate() {
                let p = at[j];
                self.buf.copy_within(h + prev..h + p, nh + prev + j);
                self.buf[nh + p + j] = *b;
                at[j] = p + j;
                prev = p;
            }
            self.head = nh;
        } else {
            let mut end = n;
            self.buf.resize(h + n + m, items[0]);
            for (j, b) in items.iter().enumerate().rev() {
                let p = at[j];
                self.buf.copy_within(h + p..h + end, h + p + j + 1);
                self.buf[h + p + j] = *b;
                at[j] = p + j;
                end = p;
            }
        }
    }
}

/// A stretch of a task's order, with the link classes of its flows' ends.
#[derive(Debug, Default)]
pub(super) struct Chunk {
    pub(super) flows: Flows,
    pub(super) ends: Ends,
    // Its flows cut into stretches from one first link ([`Seg`]).
    pub(super) segs: Vec<Seg>,
    // Flows that left since `ends` was counted.
    pub(super) left: usize,
    // Flows came in since the last look for a place to split it.
    pub(super) grew: bool,
    // Its stretches were too short to be worth keeping (till a re-count).
    pub(super) segs_off: bool,
    // Its last `tail` flows each cross a link of `tail_full` (one class per
    // link): a walk that finds those links all full passes them at once.
    pub(super) tail: usize,
    pub(super) tail_full: Classes,
}

impl Chunk {
    /// A chunk of `flows`, its [`Ends`] counted.
    pub(super) fn of(flows: Vec<Kept>) -> Chunk {
        let mut chunk = Chunk {
            flows: Flows::of(flows),
            ends: Ends::default(),
            segs: vec![],
            left: 0,
            grew: true,
            segs_off: false,
            tail: 0,
            tail_full: [0; WORDS],
        };
        chunk.recount();
        chunk
    }

    /// Counts [`Ends`] anew from the flows in the chunk.
    pub(super) fn recount(&mut self) {
        self.ends = Ends::default();
        for e in &self.flows {
            add_class(&mut self.ends.first, e.ends[0]);
            add_class(&mut self.ends.last, e.ends[1]);
        }
        self.left = 0;
        self.segs.clear();
        self.segs_off = false;
        self.cut();
    }

    /// Cuts a long chunk without stretches into them, unless they come
    /// out shorter than [`SEG_FLOWS`] flows on average (a chunk of many
    /// senders: passing a stretch would save little and keeping them cost).
    pub(super) fn cut(&mut self) {
        if self.segs.is_empty() && !self.segs_off && self.flows.len() > SEG_MIN {
            for e in &self.flows {
                push_seg(&mut self.segs, Seg::of(e));
            }
            if self.segs.len() * SEG_FLOWS > self.flows.len() {
                self.segs.clear();
                self.segs_off = true;
            }
        }
    }
}

/// Chunks longer than this are walked by stretches ([`Seg`]), shorter
/// ones flow by flow (keeping the stretches of a short chunk costs more
/// than they save). Debug builds cut chunks of a few flows already, so
/// that the reference suite's small cases walk stretches, checked.
pub(super) const SEG_MIN: usize = if cfg!(debug_assertions) { 2 } else { 2 * CHUNK };

/// The fewest flows a chunk's stretches must hold on average to be kept
/// (1 in debug builds: the reference suite then walks stretches always).
pub(super) const SEG_FLOWS: usize = if cfg!(debug_assertions) { 1 } else { 4 };

/// A stretch of a chunk's flows, consecutive in its order, whose paths
/// all start at link `first`, with the classes of their last links (a
/// superset of them: a flow that leaves leaves its class in). A walk
/// passes over a stretch whose first link is full, or whose last links
/// all are, with one look, not one per flow (FB2010's runs of ties list a
/// sender's flows together, most of them blocked at one end).
#[derive(Debug, Clone, Copy)]
pub(super) struct Seg {
    pub(super) n: u32,
    pub(super) first: u32,
    pub(super) last: Classes,
}

impl Seg {
    /// The stretch of flow `e` alone.
    pub(super) fn of(e: &Kept) -> Seg {
        let mut last = [0; WORDS];
        add_class(&mut last, e.ends[1]);
        Seg {
            n: 1,
            first: e.ends[0],
            last,
        }
    }
}

/// Appends stretch `s` to `segs`, joined with the last one if that starts
/// at the same link (so no two neighbours share a first link).
pub(super) fn push_seg(segs: &mut Vec<Seg>, s: Seg) {
    if let Some(p) = segs.last_mut() {
        if p.first == s.first {
            p.n += s.n;
            for w in 0..WORDS {
                p.last[w] |= s.last[w];
            }
            return;
        }
    }
    segs.push(s);
}

/// Takes the flows at positions `removed` (ascending, before the removal)
/// out of the stretches `segs`, in place. The stretches before the first
/// flow taken out, and after the last if none emptied, are not written
/// (no two neighbours share a first link, so none of them joins another).
pub(super) fn remove_from_segs(segs: &mut Vec<Seg>, removed: &[usize]) {
    let Some(&first) = removed.first() else {
        return;
    };
    let (mut start, mut k0) = (0, 0);
    while k0 < segs.len() && start + segs[k0].n as usize <= first {
        start += segs[k0].n as usize;
        k0 += 1;
    }
    let (mut r, mut w) = (0, k0);
    for k in k0..segs.len() {
        if r == removed.len() && w == k {
            return;
        }
        let mut s = segs[k];
        let end = start + s.n as usize;
        let r0 = r;
        while r < removed.len() && removed[r] < end {
            r += 1;
        }
        start = end;
        s.n -= (r - r0) as u32;
        if s.n == 0 {
            continue;
        }
        if w > 0 && segs[w - 1].first == s.first {
            segs[w - 1].n += s.n;
            for x in 0..WORDS {
                segs[w - 1].last[x] |= s.last[x];
            }
        } else {
            segs[w] = s;
            w += 1;
        }
    }
    segs.truncate(w);
}

/// The stretches of `flows` once the flows at positions `put` (ascending,
/// in `flows`, which holds them) came into a chunk cut into `segs`.
/// `old` is scratch space (it ends holding the stretches before).
pub(super) fn insert_into_segs(
    segs: &mut Vec<Seg>,
    old: &mut Vec<Seg>,
    flows: &[Kept],
    put: &[usize],
) {
    std::mem::swap(segs, old);
    segs.clear();
    let mut old = old.iter().copied();
    let mut cur: Option<Seg> = None;
    let mut pos = 0;
    let mut take_old = |segs: &mut Vec<Seg>, upto: usize, pos: &mut usize| {
        while *pos < upto {
            let s = cur.get_or_insert_with(|| old.next().expect("stretches cover the chunk"));
            let n = (s.n as usize).min(upto - *pos);
            push_seg(segs, Seg { n: n as u32, ..*s });
            s.n -= n as u32;
            *pos += n;
            if s.n == 0 {
                cur = None;
            }
        }
    };
    for &q in put {
        take_old(segs, q, &mut pos);
        push_seg(segs, Seg::of(&flows[q]));
        pos += 1;
    }
    take_old(segs, flows.len(), &mut pos);
}

/// A task's order: its chunks, and the key and index of each one's last
/// flow (apart, so that finding a chunk reads one short array), and how
/// many flows it holds.
#[derive(Debug, Default)]
pub(super) struct Order {
    pub(super) chunks: Vec<Chunk>,
    pub(super) lasts: Vec<(f64, FlowIdx)>,
    pub(super) n_flows: usize,
}

/// The key and index of chunk `ch`'s last flow (it has one).
pub(super) fn last_of(ch: &Chunk) -> (f64, FlowIdx) {
    let e = ch.flows.last().expect("no empty chunk");
    (e.key, e.f)
}

/// The chunk (by the `lasts` of chunks, none empty) that holds `probe`'s
/// place: the first whose last flow is not before it, or the last.
pub(super) fn locate(lasts: &[(f64, FlowIdx)], probe: &Kept) -> usize {
    let at = lasts
        .partition_point(|&(k, f)| k.total_cmp(&probe.key).then(f.cmp(&probe.f)) == Ordering::Less);
    at.min(lasts.len().saturating_sub(1))
}

/// Where to split `flows` (sorted): the gap nearest the middle, if any.
pub(super) fn split_point(flows: &[Kept], tol: f64) -> Option<usize> {
    // Keys within a run's reach of the first leave no gap anywhere (keys
    // are not negative, so the reach only grows along the order): a long
    // run of ties is not searched flow by flow at each event it grew.
    let (first, last) = (flows.first()?.key, flows.last()?.key);
    if first >= 0.0 && last - first <= tie_reach(first, tol) {
        debug_assert!((1..flows.len()).all(|j| !gap(flows[j - 1].key, flows[j].key, tol)));
        return None;
    }
    let mid = flows.len() / 2;
    let is_gap = |j: usize| gap(flows[j - 1].key, flows[j].key, tol);
    (0..mid).find_map(|d| {
        let up = mid + d;
        let down = mid - d;
        if up < flows.len() && is_gap(up) {
            Some(up)
        } else if down >= 1 && is_gap(down) {
            Some(down)
        } else {
            None
        }
    })
}

/// Where a flow put in a task's order goes: into chunk `i`, or into a new
/// chunk at `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Into(usize),
    New(usize),
}

/// Where flow `b` goes in `chunks` (not empty). A flow in the gap between
/// two chunks (keys further apart on both sides than a run reaches) goes
/// to the end of the chunk before it, or the front of the one after, if
/// that one is short, else into a chunk of its own: a served flow leaves
/// a long run of exact ties for such a gap, and put at the run's front it
/// would move the whole run, and have it looked at and split again, at
/// each event. Elsewhere it goes to the chunk that holds its place
/// ([`locate`]). Where it goes changes no flow's place in the order.
pub(super) fn place(chunks: &[Chunk], lasts: &[(f64, FlowIdx)], b: &Kept, tol: f64) -> Place {
    let i = locate(lasts, b);
    let short = |j: usize| chunks[j].flows.len() <= 2 * CHUNK;
    let first = &chunks[i].flows[0];
    if before(b, first) {
        if !gap(b.key, first.key, tol) {
            return Place::Into(i);
        }
        // After chunk `i - 1`'s last flow (`locate`).
        if i > 0 && (!gap(lasts[i - 1].0, b.key, tol) || short(i - 1)) {
            return Place::Into(i - 1);
        }
        return if short(i) {
            Place::Into(i)
        } else {
            Place::New(i)
        };
    }
    let (last_key, _) = lasts[i];
    if i + 1 == chunks.len() && b.key > last_key && gap(last_key, b.key, tol) && !short(i) {
        return Place::New(i + 1);
    }
    Place::Into(i)
}

/// The place (chunk, and place in it) in a task's `chunks` (not empty) of
/// `probe` (the key and index of a flow kept there): at `hint` if the flow
/// stands there, else by galloping from `hint`'s place if `hint`'s chunk
/// holds it (the flows that left or came in before it since the note
/// moved it a few places), else by a binary search.
pub(super) fn find(
    chunks: &[Chunk],
    lasts: &[(f64, FlowIdx)],
    probe: &Kept,
    hint: [u32; 2],
) -> (usize, usize) {
    let [hc, hk] = hint.map(|x| x as usize);
    if let Some(ch) = chunks.get(hc) {
        let flows = &ch.flows;
        if flows.get(hk).is_some_and(|x| x.f == probe.f) {
            return (hc, hk);
        }
        if !before(probe, &flows[0]) && !before(&flows[flows.len() - 1], probe) {
            return (hc, gallop_from(flows, hk.min(flows.len() - 1), probe));
        }
    }
    let i = locate(lasts, probe);
    (i, chunks[i].flows.partition_point(|x| before(x, probe)))
}

/// `flows.partition_point(|x| before(x, probe))` (`flows` in key order,
/// not empty), galloping from place `h` forwards or backwards.
pub(super) fn gallop_from(flows: &[Kept], h: usize, probe: &Kept) -> usize {
    let lt = |e: &Kept| before(e, probe);
    if lt(&flows[h]) {
        let at = h + 1 + gallop(&flows[h + 1..], lt);
        debug_assert_eq!(at, flows.partition_point(lt));
        return at;
    }
    // `flows[hi]` is not before `probe`; `flows[lo]` is, or `lo` is 0.
    let (mut hi, mut step) = (h, 1);
    while hi >= step && !lt(&flows[hi - step]) {
        hi -= step;
        step *= 2;
    }
    let lo = hi.saturating_sub(step);
    let at = lo + flows[lo..hi].partition_point(lt);
    debug_assert_eq!(at, flows.partition_point(lt));
    at
}

/// Whether kept flow `a` comes before `b` ([`kept_by_key`]).
pub(super) fn before(a: &Kept, b: &Kept) -> bool {
    kept_by_key(a, b) == Ordering::Less
}

/// Gives kept flow `e`, kept under key `old` in `order`, its new key where
/// it stands (at `hint`, chunk and place, if it is there, else found from
/// there, [`find`]), if the order stays sorted and its chunk ends at gaps there
/// (the flows before and after it, in its chunk or the neighbours', stay
/// before and after it; a chunk end it sits at stays a gap). Its links
/// are the same, so its chunk's [`Ends`] and stretches are. If it does not
/// fit there, returns the flow as kept (its path and links: they need not
/// be read again) and its place (chunk, place in it), if the task has it.
pub(super) fn rekey_in_place(
    order: &mut Order,
    old: f64,
    e: &Kept,
    hint: [u32; 2],
    tol: f64,
) -> Result<(), Option<(Kept, [u32; 2])>> {
    let Order { chunks, lasts, .. } = order;
    if chunks.is_empty() {
        return Err(None);
    }
    let (i, at) = find(chunks, lasts, &Kept { key: old, ..*e }, hint);
    let flows = &chunks[i].flows;
    debug_assert_eq!(flows[at].f, e.f, "kept place of {}", e.f);
    debug_assert_eq!(
        flows[at].key.to_bits(),
        old.to_bits(),
        "kept key of {}",
        e.f
    );
    debug_assert_eq!(flows[at].p, e.p, "path of {}", e.f);
    let (first, last) = (at == 0, at + 1 == flows.len());
    let prev = if !first {
        Some(&flows[at - 1])
    } else {
        i.checked_sub(1).and_then(|h| chunks[h].flows.last())
    };
    let next = if !last {
        Some(&flows[at + 1])
    } else {
        chunks.get(i + 1).map(|ch| &ch.flows[0])
    };
    let fits = prev.is_none_or(|a| before(a, e)) && next.is_none_or(|b| before(e, b));
    let ends_gap = |a: Option<&Kept>, b: Option<&Kept>| match (a, b) {
        (Some(a), Some(b)) => gap(a.key, b.key, tol),
        _ => true,
    };
    let gaps = (!first || ends_gap(prev, Some(e))) && (!last || ends_gap(Some(e), next));
    if !(fits && gaps) {
        return Err(Some((flows[at], [i as u32, at as u32])));
    }
    chunks[i].flows[at].key = e.key;
    if last {
        lasts[i] = (e.key, e.f);
    }
    Ok(())
}

/// Moves kept flow `e` (its new key), kept under key `old` in `order`,
/// to its new place if that is inside the chunk it stands in (with a flow
/// of the chunk before it and one after it, so the chunk's ends and its
/// [`Ends`] stay): only the flows between its old and new places shift,
/// where taking it out and putting it back would shift the rest of the
/// chunk twice. Its blocked tail and stretches follow, as [`apply`]'s.
/// Returns its new place (chunk, place in it) if it moved.
pub(super) fn move_in_chunk(
    order: &mut Order,
    old: f64,
    e: &Kept,
    hint: [u32; 2],
    old_segs: &mut Vec<Seg>,
) -> Option<[u32; 2]> {
    let Order { chunks, lasts, .. } = order;
    if chunks.is_empty() {
        return None;
    }
    let (i, a) = find(chunks, lasts, &Kept { key: old, ..*e }, hint);
    let ch = &mut chunks[i];
    let n = ch.flows.len();
    debug_assert_eq!(ch.flows[a].f, e.f, "kept place of {}", e.f);
    debug_assert_eq!(ch.flows[a].p, e.p, "path of {}", e.f);
    // Its place once it is out and back: the chunk's flows before it.
    let t = if a > 0 && before(e, &ch.flows[a - 1]) {
        gallop_from(&ch.flows[..a], a - 1, e)
    } else {
        a + gallop(&ch.flows[a + 1..], |x| before(x, e))
    };
    if t == 0 || t + 1 >= n {
        return None;
    }
    if t < a {
        ch.flows.copy_within(t..a, t + 1);
    } else {
        ch.flows.copy_within(a + 1..t + 1, a);
    }
    ch.flows[t] = *e;
    if a >= n - ch.tail {
        ch.tail -= 1;
    }
    ch.tail = ch.tail.min(n - 1 - t);
    if !ch.segs.is_empty() {
        remove_from_segs(&mut ch.segs, &[a]);
        insert_into_segs(&mut ch.segs, old_segs, &ch.flows, &[t]);
    }
    ch.grew = true;
    lasts[i] = last_of(ch);
    Some([i as u32, t as u32])
}

/// Takes the flows `gone` out of a task's `chunks` and puts the flows
/// `batch` in (both in [`kept_by_key`] order), then restores the chunks'
/// rules: no chunk empty, chunk ends at gaps, long chunks split at one.
///
/// A chunk's flows leave, and come in, all at once: the flows between
/// them and the chunk's nearer end move once, not once per flow (FB2010's
/// tasks have runs of thousands of exact ties, one chunk each, and the
/// flows served in a turn sit near a chunk's front; [`Flows`]).
pub(super) fn apply(
    order: &mut Order,
    (gone, served_at): (&[Kept], &mut [[u32; 2]]),
    batch: &[Kept],
    tol: f64,
    scratch: &mut Scratch,
) {
    let Order {
        chunks,
        lasts,
        n_flows,
    } = order;
    *n_flows = *n_flows + batch.len() - gone.len();
    let Scratch { at: at_list, segs } = scratch;
    let mut k = 0;
    while k < gone.len() {
        // The flows of `gone` in chunk `i` (in key order, so consecutive),
        // found in turn (each search reads from after the one before),
        // then taken out in one pass ([`Flows::remove`]).
        let i = locate(lasts, &gone[k]);
        let ch = &mut chunks[i];
        let n = ch.flows.len();
        let last = ch.flows[n - 1];
        let mut r = 0;
        let start = k;
        at_list.clear();
        while k < gone.len() && (k == start || !before(&last, &gone[k])) {
            let g = &gone[k];
            // Where it was last noted (served or put in), if it stands
            // there still, else found galloping from there (nothing before
            // `r` is read).
            let [hc, hk] = served_at[g.f as usize].map(|x| x as usize);
            let at = if hc == i && hk >= r && hk < n {
                r + gallop_from(&ch.flows[r..n], hk - r, g)
            } else {
                r + ch.flows[r..].partition_point(|e| before(e, g))
            };
            debug_assert_eq!(ch.flows[at].f, g.f, "kept place of {}", g.f);
            at_list.push(at);
            r = at + 1;
            k += 1;
        }
        ch.flows.remove(at_list);
        ch.left += k - start;
        // Flows that leave the blocked tail shorten it.
        let tail_start = n - ch.tail;
        ch.tail -= at_list.iter().filter(|&&a| a >= tail_start).count();
        if !ch.segs.is_empty() {
            remove_from_segs(&mut ch.segs, at_list);
        }
        // A chunk that empties leaves a gap between its neighbours: keys
        // grow along the order, so the two are further apart than either
        // was from it.
        if ch.flows.is_empty() {
            chunks.remove(i);
            lasts.remove(i);
        } else {
            lasts[i] = last_of(ch);
        }
    }
    let mut k = 0;
    while k < batch.len() {
        if chunks.is_empty() {
            served_at[batch[k].f as usize] = [0, 0];
            chunks.push(Chunk::of(vec![batch[k]]));
            lasts.push((batch[k].key, batch[k].f));
            k += 1;
            continue;
        }
        // The flows of `batch` that go to chunk `i` (or to a new chunk
        // there), put in at once ([`Flows::insert`]).
        let to = place(chunks, lasts, &batch[k], tol);
        let start = k;
        k += 1;
        while k < batch.len() && place(chunks, lasts, &batch[k], tol) == to {
            k += 1;
        }
        let items = &batch[start..k];
        let i = match to {
            Place::Into(i) => i,
            Place::New(i) => {
                for (j, b) in items.iter().enumerate() {
                    served_at[b.f as usize] = [i as u32, j as u32];
                }
                chunks.insert(i, Chunk::of(items.to_vec()));
                lasts.insert(i, last_of(&chunks[i]));
                continue;
            }
        };
        let ch = &mut chunks[i];
        for b in items {
            add_class(&mut ch.ends.first, b.ends[0]);
            add_class(&mut ch.ends.last, b.ends[1]);
        }
        ch.flows.insert(items, at_list);
        for (b, &p) in items.iter().zip(at_list.iter()) {
            served_at[b.f as usize] = [i as u32, p as u32];
        }
        // The blocked tail is what stands after the last flow put in.
        let put_last = at_list[at_list.len() - 1];
        ch.tail = ch.tail.min(ch.flows.len() - 1 - put_last);
        if !ch.segs.is_empty() {
            insert_into_segs(&mut ch.segs, segs, &ch.flows, at_list);
        }
        ch.grew = true;
        lasts[i] = last_of(ch);
    }
    if batch.is_empty() && gone.is_empty() {
        return;
    }
    // A flow put in at a chunk's end may close the gap to its neighbour.
    let mut i = 1;
    while i < chunks.len() {
        let a = chunks[i - 1].flows.last().expect("no empty chunk").key;
        if gap(a, chunks[i].flows[0].key, tol) {
            i += 1;
            continue;
        }
        let next = chunks.remove(i);
        lasts.remove(i);
        let prev = &mut chunks[i - 1];
        prev.flows.extend_from_slice(&next.flows);
        if prev.segs.is_empty() || next.segs.is_empty() {
            prev.segs.clear();
            prev.segs_off = false;
        } else {
            for s in next.segs {
                push_seg(&mut prev.segs, s);
            }
        }
        prev.left += next.left;
        prev.grew = true;
        prev.tail = next.tail;
        prev.tail_full = next.tail_full;
        for set in 0..WORDS {
            prev.ends.first[set] |= next.ends.first[set];
            prev.ends.last[set] |= next.ends.last[set];
        }
        lasts[i - 1] = last_of(prev);
    }
    let mut i = 0;
    while i < chunks.len() {
        let ch = &mut chunks[i];
        if ch.grew && ch.flows.len() > 2 * CHUNK {
            ch.grew = false;
            if let Some(j) = split_point(&ch.flows, tol) {
                let rest = ch.flows.split_off(j);
                ch.recount();
                lasts[i] = last_of(ch);
                lasts.insert(i + 1, (rest[rest.len() - 1].key, rest[rest.len() - 1].f));
                let (tail, tail_full) = (ch.tail, ch.tail_full);
                ch.tail = tail.saturating_sub(rest.len());
                let mut rest = Chunk::of(rest);
                rest.tail = tail.min(rest.flows.len());
                rest.tail_full = tail_full;
                chunks.insert(i + 1, rest);
                continue;
            }
        }
        if ch.left > ch.flows.len() / 2 {
            ch.recount();
        }
        i += 1;
    }
}
