//! Every task's kept order ([`TaskOrders`]): the update from an event's
//! changes, the walk that serves the flows in priority order, chunk by
//! chunk, passing what cannot get anything, and the matching kept on the
//! big switch. The module doc of `tafe` says what each part spares.

use super::*;

/// `flows=srpt`: each task's active flows in order of remaining bytes (as
/// `sort_with_ties` orders them), kept from one call to the next and cut
/// into chunks, so that an event costs what it moves and what the turns
/// can serve, not the size of the tasks.
///
/// *What moves.* A flow whose rate was 0 in the last two rounds sent
/// nothing, so its remaining bytes, and its place, stay what they were, to
/// the bit (the argument of [`crate::greedy`]). Only the flows that had a
/// rate, started or finished are taken out and put back, each by a binary
/// search over the task's chunks and one within a chunk; one whose new key
/// keeps it between its neighbours is given it in place instead
/// ([`rekey_in_place`]), found first where it was last served or put in,
/// and one whose new place is inside its chunk moves there
/// ([`move_in_chunk`]).
///
/// *Chunks.* A task's order is a list of chunks of about [`CHUNK`] flows,
/// cut only where the keys are further apart than a near-tie run reaches
/// ([`gap`]), so that no run crosses a chunk's end and each chunk is
/// walked alone; a run of exact ties longer than that is one chunk. Each
/// chunk keeps the classes of the first and of the last links of its
/// flows' paths ([`Ends`], by link class as [`crate::greedy`] keeps its
/// clusters'), a superset of them between re-counts (a flow that leaves
/// leaves its links in), which only makes a chunk passed over less often.
/// A chunk of more than [`SEG_MIN`] flows is also cut into stretches from
/// one first link ([`Seg`]), kept through the flows that leave and come in
/// (built when such a chunk is first walked without them).
///
/// *Turns.* In a task's turn each flow in order that meets no full link is
/// served alone ([`ClassServer::serve_one`]: the least residual on its path)
/// with the class of its place in the task's order; a chunk whose first
/// links or whose last links are all full would give each of its flows 0,
/// so the turn passes it over whole. A full link stays full for the rest
/// of a round, so a flow passed over would never get a rate in it.
///
/// Correctness properties: after [`TaskOrders::update`] each active task's
/// chunks, read end to end, are its active flows in (remaining, index)
/// order with every key read now, chunk ends are gaps and each chunk's
/// [`Ends`] hold its flows', whether a flow was re-keyed in place or moved
/// (debug builds check all of it against a fresh sort; the reference suite
/// holds `tafe` against a slow reference that sorts and walks every flow at
/// every call); a chunk is passed over only
/// if each of its flows crosses a full link (checked flow by flow in debug
/// builds); a chunk's stretches, if it has them, cover its flows in order,
/// each flow starting at its stretch's first link and its last link's
/// class in its stretch's (checked in debug builds), and a stretch is
/// passed over only if each of its flows crosses a full link (the same);
/// a chunk's blocked tail, when kept, holds flows that each cross a link of
/// its `tail_full` (checked in debug builds at each walk, with each flow of
/// the tail passed over crossing a full link), so a stretch of it passed
/// because it misses the links of `tail_full` open now crosses a full link
/// (checked flow by flow in debug builds, as any stretch passed), and so
/// does each flow of it a walk passes by its ends (the same); a flow
/// that leaves is taken from where it was last served only if it stands
/// there (debug builds compare the place with a search).
#[derive(Debug, Default)]
pub(super) struct TaskOrders {
    // Per task: its order.
    pub(super) tasks: Vec<Order>,
    // Per flow: the key it is kept under, NaN if it is not kept.
    pub(super) key_of: Vec<f64>,
    // Per flow: handled in this update.
    pub(super) seen: Vec<bool>,
    // Flows that leave their task's order, and flows (re-)keyed, in this
    // update, each with its task.
    pub(super) gone: Vec<(CoflowIdx, Kept)>,
    pub(super) batch: Vec<(CoflowIdx, Kept)>,
    // Flows with a rate in the round before the last.
    pub(super) positive_before: Vec<FlowIdx>,
    // This round: per link, the round it was counted full in; per link
    // class, its links not full; the classes whose links are all full.
    pub(super) full_in: Vec<u32>,
    // Per link, 1 if it is full this round, and a 0 past the last (for
    // `u32::MAX`, no link): read with no branch ([`next_open_flow`]).
    pub(super) full_link: Vec<u8>,
    pub(super) open: Vec<u32>,
    pub(super) full: Classes,
    pub(super) round: u32,
    // Whether each link has a class of its own (blocked tails are kept).
    pub(super) memo: bool,
    // Whether a flow with a path of more than two links was kept (a tail
    // whose links opened is then not sorted by its flows' ends).
    pub(super) long_paths: bool,
    pub(super) run: Vec<Kept>,
    pub(super) ready: bool,
    pub(super) scratch: Scratch,
    // Flows given their new key where they stood, or moved inside their
    // chunk, in this update.
    pub(super) in_place: Vec<FlowIdx>,
    // Per flow: its chunk and place in it when it was last served, or put
    // in by an update (where its next update, and the next fill's
    // classes, look for it first, and gallop from: few flows move it).
    pub(super) served_at: Vec<[u32; 2]>,
    // For [`TaskOrders::place_classes`], per task: its first class (the
    // place of its first flow in the whole order), the call its chunks'
    // starts were last counted in, and its first chunk's in `starts`; per
    // chunk of those tasks: the place of its first flow in its task.
    pub(super) first_class: Vec<u32>,
    pub(super) counted: Vec<u32>,
    pub(super) call: u32,
    pub(super) base: Vec<u32>,
    pub(super) starts: Vec<u32>,
}

impl TaskOrders {
    /// Brings every active task's order up to date; `positive` are the
    /// flows with a rate after the last round.
    pub(super) fn update(
        &mut self,
        view: &Clairvoyant<'_>,
        changes: &Changes,
        positive: &[FlowIdx],
    ) {
        let obs = view.observed();
        if self.seen.len() < view.n_flows() {
            self.seen.resize(view.n_flows(), false);
            self.key_of.resize(view.n_flows(), f64::NAN);
            self.served_at.resize(view.n_flows(), [u32::MAX; 2]);
        }
        self.gone.clear();
        self.batch.clear();
        let kept = |f: FlowIdx| {
            let p = view.path_idx(f);
            let path = obs.path_links(p);
            let ends = match (path.first(), path.last()) {
                (Some(a), Some(b)) => [a.0, b.0],
                _ => [u32::MAX; 2],
            };
            let key = view.remaining(f);
            (obs.coflow_of(f), Kept { key, f, p, ends })
        };
        let before = std::mem::take(&mut self.positive_before);
        if !self.ready || changes.resynced {
            self.ready = true;
            for order in &mut self.tasks {
                order.lasts.clear();
                order.n_flows = 0;
                for ch in order.chunks.drain(..) {
                    for e in &ch.flows {
                        self.key_of[e.f as usize] = f64::NAN;
                    }
                }
            }
            self.batch
                .extend(view.active_flows().iter().map(|&f| kept(f)));
            for &(_, e) in &self.batch {
                self.long_paths |= obs.path_links(e.p).len() > 2;
            }
        } else {
            let key_of = &mut self.key_of;
            let gone = &mut self.gone;
            let leave = |key_of: &mut [f64], gone: &mut Vec<_>, c: CoflowIdx, f: FlowIdx| {
                let key = std::mem::replace(&mut key_of[f as usize], f64::NAN);
                if !key.is_nan() {
                    let ends = [0; 2];
                    gone.push((c, Kept { key, f, p: 0, ends }));
                }
            };
            for &f in &changes.finished {
                leave(key_of, gone, obs.coflow_of(f), f);
            }
            self.in_place.clear();
            for &f in positive.iter().chain(&before).chain(&changes.started) {
                let fi = f as usize;
                if self.seen[fi] || !view.is_active(f) {
                    continue;
                }
                self.seen[fi] = true;
                let c = obs.coflow_of(f);
                let old = key_of[fi];
                // The flow as kept, with its new key, and its place, if it
                // does not fit where it stands.
                let mut stored = None;
                if !old.is_nan() {
                    // Re-keyed where it stands, its path is not read (its
                    // links are the same); debug builds check its path.
                    let probe = Kept {
                        key: view.remaining(f),
                        f,
                        p: if cfg!(debug_assertions) {
                            view.path_idx(f)
                        } else {
                            0
                        },
                        ends: [0; 2],
                    };
                    let order = self.tasks.get_mut(c as usize);
                    let hint = self.served_at[fi];
                    match order.map(|o| rekey_in_place(o, old, &probe, hint, BYTES_TIE)) {
                        Some(Ok(())) => {
                            key_of[fi] = probe.key;
                            self.in_place.push(f);
                            continue;
                        }
                        Some(Err(Some((x, at)))) => {
                            stored = Some((
                                Kept {
                                    key: probe.key,
                                    ..x
                                },
                                at,
                            ));
                        }
                        _ => {}
                    }
                }
                // Its path and links as kept, if it was found (not read
                // again; debug builds check them), else read.
                let (c, e) = match stored {
                    Some((e, at)) => {
                        debug_assert_eq!(kept(f).1.ends, e.ends, "links of {f}");
                        self.served_at[fi] = at;
                        (c, e)
                    }
                    None => {
                        let (c, e) = kept(f);
                        self.long_paths |= obs.path_links(e.p).len() > 2;
                        (c, e)
                    }
                };
                if !old.is_nan() {
                    let hint = self.served_at[fi];
                    let order = self.tasks.get_mut(c as usize);
                    let segs = &mut self.scratch.segs;
                    if let Some(at) = order.and_then(|o| move_in_chunk(o, old, &e, hint, segs)) {
                        key_of[fi] = e.key;
                        self.served_at[fi] = at;
                        self.in_place.push(f);
                        continue;
                    }
                }
                leave(key_of, gone, c, f);
                self.batch.push((c, e));
            }
            for &(_, e) in &self.batch {
                self.seen[e.f as usize] = false;
            }
            for &f in &self.in_place {
                self.seen[f as usize] = false;
            }
        }
        // (A flow's path was looked at for `long_paths` when it was read.)
        for &(_, e) in &self.batch {
            self.key_of[e.f as usize] = e.key;
        }
        let by_task = |a: &(CoflowIdx, Kept), b: &(CoflowIdx, Kept)| {
            a.0.cmp(&b.0).then(kept_by_key(&a.1, &b.1))
        };
        self.gone.sort_unstable_by(by_task);
        self.batch.sort_unstable_by(by_task);
        let (mut g, mut b) = (0, 0);
        let mut gone = vec![];
        let mut batch = vec![];
        while g < self.gone.len() || b < self.batch.len() {
            let task = |x: Option<&(CoflowIdx, Kept)>| x.map_or(CoflowIdx::MAX, |x| x.0);
            let c = task(self.gone.get(g)).min(task(self.batch.get(b)));
            gone.clear();
            while g < self.gone.len() && self.gone[g].0 == c {
                gone.push(self.gone[g].1);
                g += 1;
            }
            batch.clear();
            while b < self.batch.len() && self.batch[b].0 == c {
                batch.push(self.batch[b].1);
                b += 1;
            }
            let ci = c as usize;
            if self.tasks.len() <= ci {
                self.tasks.resize_with(ci + 1, Order::default);
            }
            apply(
                &mut self.tasks[ci],
                (&gone, &mut self.served_at),
                &batch,
                BYTES_TIE,
                &mut self.scratch,
            );
        }
        self.positive_before = before;
        self.positive_before.clear();
        self.positive_before.extend_from_slice(positive);
        #[cfg(debug_assertions)]
        self.check(view);
    }

    /// Gives each of `flows` (kept, in the tasks of `order`) its class as
    /// the walk would serve it: its place in the whole order (the flows of
    /// the tasks before it, of its task's chunks before its own, and its
    /// place in its chunk's runs, a run out of index order walked by
    /// index), and notes where it stands for the next update. Only the
    /// chunks of the tasks that hold one of `flows` are counted (FB2010:
    /// the blocked tasks at the order's back hold most chunks).
    pub(super) fn place_classes(
        &mut self,
        obs: &crate::Observed<'_>,
        order: &[(u32, (Time, Time, u64), CoflowIdx)],
        flows: &[FlowIdx],
        out: &mut Allocation,
    ) {
        let mut at = 0u32;
        self.starts.clear();
        self.call = self.call.wrapping_add(1);
        for &(_, _, c) in order {
            let ci = c as usize;
            if self.first_class.len() <= ci {
                self.first_class.resize(ci + 1, 0);
                self.counted.resize(ci + 1, 0);
                self.base.resize(ci + 1, 0);
            }
            self.first_class[ci] = at;
            at += self.tasks.get(ci).map_or(0, |o| o.n_flows as u32);
        }
        for &f in flows {
            let c = obs.coflow_of(f) as usize;
            let o = &self.tasks[c];
            if self.counted[c] != self.call {
                self.counted[c] = self.call;
                self.base[c] = self.starts.len() as u32;
                let mut start = self.first_class[c];
                for ch in &o.chunks {
                    self.starts.push(start);
                    start += ch.flows.len() as u32;
                }
            }
            // Where it was last noted (served, or put in by the update),
            // or found galloping from there ([`find`]).
            let probe = Kept {
                key: self.key_of[f as usize],
                f,
                p: 0,
                ends: [0; 2],
            };
            let (i, k) = find(&o.chunks, &o.lasts, &probe, self.served_at[f as usize]);
            let kept = &o.chunks[i].flows;
            debug_assert_eq!(kept[k].f, f, "place of {f}");
            let place = run_place(kept, k);
            self.served_at[f as usize] = [i as u32, k as u32];
            let start = self.starts[self.base[c] as usize + i];
            out.set_class(f, start + place as u32);
        }
    }

    /// Debug builds: every active task's chunks against a fresh sort.
    #[cfg(debug_assertions)]
    pub(super) fn check(&self, view: &Clairvoyant<'_>) {
        for &c in view.active_coflows() {
            let order = self.tasks.get(c as usize);
            let chunks = order.map_or(&[][..], |o| &o.chunks[..]);
            if let Some(o) = order {
                let lasts: Vec<(f64, FlowIdx)> = o.chunks.iter().map(last_of).collect();
                assert!(lasts
                    .iter()
                    .zip(&o.lasts)
                    .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1));
                assert_eq!(lasts.len(), o.lasts.len(), "chunk lasts of task {c}");
                let n: usize = o.chunks.iter().map(|ch| ch.flows.len()).sum();
                assert_eq!(n, o.n_flows, "flows of task {c}");
            }
            let mut want: Vec<crate::greedy::Entry> = view
                .active_flows_of(c)
                .map(|f| (view.remaining(f), f, view.path_idx(f)))
                .collect();
            want.sort_unstable_by(crate::greedy::by_key);
            let got: Vec<crate::greedy::Entry> = chunks
                .iter()
                .flat_map(|ch| ch.flows.iter().map(|e| (e.key, e.f, e.p)))
                .collect();
            assert_eq!(got.len(), want.len(), "flows of task {c}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!((g.0.to_bits(), g.1), (w.0.to_bits(), w.1), "task {c}");
            }
            for w in chunks.windows(2) {
                let a = w[0].flows.last().expect("no empty chunk").key;
                assert!(gap(a, w[1].flows[0].key, BYTES_TIE), "chunk end in a run");
            }
            for ch in chunks {
                let exact = Chunk::of(ch.flows.to_vec()).ends;
                let within = |a: &Classes, b: &Classes| a.iter().zip(b).all(|(a, b)| a & !b == 0);
                assert!(within(&exact.first, &ch.ends.first) && within(&exact.last, &ch.ends.last));
                let n: usize = ch.segs.iter().map(|s| s.n as usize).sum();
                assert!(
                    ch.segs.is_empty() || n == ch.flows.len(),
                    "stretches of task {c}"
                );
                let mut at = 0;
                for s in &ch.segs {
                    assert!(s.n > 0, "empty stretch");
                    for e in &ch.flows[at..at + s.n as usize] {
                        assert_eq!(e.ends[0], s.first, "first link of {}", e.f);
                        assert!(within(&Seg::of(e).last, &s.last), "last link of {}", e.f);
                    }
                    at += s.n as usize;
                }
            }
        }
    }

    /// Starts a round: counts the links that are full from the start.
    pub(super) fn begin(&mut self, obs: &crate::Observed<'_>, server: &ClassServer) {
        self.round = self.round.wrapping_add(1);
        self.memo = obs.n_links() <= CLASSES;
        if self.full_in.len() < obs.n_links() {
            self.full_in.resize(obs.n_links(), 0);
        }
        self.open.clear();
        self.open.resize(CLASSES, 0);
        self.full = [0; WORDS];
        self.full_link.clear();
        self.full_link.resize(obs.n_links() + 1, 0);
        for l in 0..obs.n_links() {
            if server.is_full(l as u32) {
                self.full_in[l] = self.round;
                self.full_link[l] = 1;
            } else {
                self.open[l % CLASSES] += 1;
            }
        }
        for (c, &n) in self.open.iter().enumerate() {
            if n == 0 {
                self.full[c / 64] |= 1 << (c % 64);
            }
        }
    }

    /// Notes the links of `path` that the flow just served filled.
    pub(super) fn filled(&mut self, path: &[coflowkit_model::LinkId], server: &ClassServer) {
        for l in path {
            let li = l.0 as usize;
            if self.full_in[li] != self.round && server.is_full(l.0) {
                self.full_in[li] = self.round;
                self.full_link[li] = 1;
                let c = li % CLASSES;
                self.open[c] -= 1;
                if self.open[c] == 0 {
                    self.full[c / 64] |= 1 << (c % 64);
                }
            }
        }
    }

    /// Whether every flow of a chunk with these [`Ends`] crosses a full
    /// link: its first links or its last links are all full.
    pub(super) fn all_blocked(&self, ends: &Ends) -> bool {
        self.all_full(&ends.first) || self.all_full(&ends.last)
    }

    /// Whether stretch `seg`'s flows, each crossing a link of
    /// `tail_full` (one class per link) that was full, still cross a full
    /// one: neither its first link nor any of its last links is a link of
    /// `tail_full` open now (paths of at most two links: their ends).
    pub(super) fn still_blocked(&self, seg: &Seg, tail_full: &Classes) -> bool {
        let f = seg.first as usize;
        let mut first = [0; WORDS];
        first[f / 64] = 1 << (f % 64);
        (0..WORDS).all(|w| (first[w] | seg.last[w]) & tail_full[w] & !self.full[w] == 0)
    }

    /// Whether every link of the classes `set` is full.
    pub(super) fn all_full(&self, set: &Classes) -> bool {
        set.iter().zip(&self.full).all(|(s, f)| s & !f == 0)
    }

    /// Task `c`'s turn from class `class` on: each flow in order that meets
    /// no full link is served alone, and every flow takes a class (its
    /// place in the order). Returns the next class. A task is passed over
    /// whole when its paths' first or last links are all full, and a chunk
    /// when its flows' are.
    pub(super) fn serve(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        c: CoflowIdx,
        class: u32,
        out: &mut Allocation,
    ) -> u32 {
        let ci = c as usize;
        let Some(mut chunks) = self
            .tasks
            .get_mut(ci)
            .map(|o| std::mem::take(&mut o.chunks))
        else {
            return class;
        };
        let len: usize = chunks.iter().map(|ch| ch.flows.len()).sum();
        if !server.blocked(obs, c) {
            let mut at = class;
            for (ci, ch) in chunks.iter_mut().enumerate() {
                if self.all_blocked(&ch.ends) {
                    #[cfg(debug_assertions)]
                    for e in &ch.flows {
                        let path = obs.path_links(e.p);
                        assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                    }
                } else {
                    ch.cut();
                    if let Some((tail, full)) = self.walk(obs, server, (ch, ci), at, out) {
                        (ch.tail, ch.tail_full) = (tail, full);
                    }
                }
                at += ch.flows.len() as u32;
            }
        }
        self.tasks[ci].chunks = chunks;
        class + len as u32
    }

    /// Serves the flows of chunk `ch` from class `class` on: each run of
    /// near-ties by flow index, as `sort_with_ties` orders them, until the
    /// chunk's flows all cross a full link. A run already in index order
    /// (most are) is walked stretch by stretch ([`Seg`]): a stretch whose
    /// first link is full, or whose last links all are, is passed over
    /// with one look. The chunk's blocked tail (its last `tail` flows) is
    /// passed over at once while the links of its `tail_full` are all full
    /// (looked at on entry and after each serve: nothing fills between).
    /// A chunk without stretches goes from each place straight to the run
    /// of its next flow with both ends open ([`next_open_flow`]), or
    /// leaves if none is.
    /// Returns the chunk's new blocked tail (with one class per link): the
    /// flows after its last serve (after the end of its run if that run
    /// was walked out of order), with the chunk's first and last links
    /// full now and the links between that blocked a flow (`None` if
    /// classes hold several links).
    pub(super) fn walk(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        (ch, ci): (&Chunk, usize),
        class: u32,
        out: &mut Allocation,
    ) -> Option<(usize, Classes)> {
        let (flows, ends, segs) = (&ch.flows[..], &ch.ends, &ch.segs[..]);
        let n = flows.len();
        // Where the blocked tail starts if its links are all full now.
        let tail_at = |me: &Self| {
            if me.memo && ch.tail > 0 && me.all_full(&ch.tail_full) {
                n - ch.tail
            } else {
                n
            }
        };
        let mut limit = tail_at(self);
        // Where the kept tail starts when some of its links opened: each
        // flow from there on still crosses a link of `tail_full`, so one
        // whose links (its ends: no path is longer than two links) miss the
        // links of `tail_full` open now crosses a full one.
        let t0 = if self.memo && !self.long_paths && ch.tail > 0 {
            n - ch.tail
        } else {
            n
        };
        // The flows from `from` on were looked at since the last serve;
        // `blk` gets the links between their ends that blocked one.
        let (mut from, mut blk) = (0, [0; WORDS]);
        let at = |k: usize| [ci as u32, k as u32];
        let mut run = std::mem::take(&mut self.run);
        // The stretch that holds position `k` below, and where it starts.
        let (mut s, mut s_start) = (0, 0);
        let mut i = 0;
        // Debug builds walk a chunk with stretches by the scan below too,
        // every other round, so that the reference suite checks both walks.
        let segs = if cfg!(debug_assertions) && self.round.is_multiple_of(2) {
            &[][..]
        } else {
            segs
        };
        'runs: while i < limit {
            let j;
            if segs.is_empty() {
                // The first flow from `i` on with both ends open (or no
                // path), found with no branch a flow ([`next_open_flow`]):
                // those before it cross a full link (an end), whatever
                // their runs' order. The walk goes on from the run that
                // holds it, which starts at the last gap before it (a run
                // starts at a gap whatever came before), or at `i`, or
                // leaves if there is none.
                let Some(m) = next_open_flow(flows, i, limit, &self.full_link) else {
                    #[cfg(debug_assertions)]
                    for e in &flows[i..limit] {
                        let path = obs.path_links(e.p);
                        assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                    }
                    break 'runs;
                };
                #[cfg(debug_assertions)]
                for e in &flows[i..m] {
                    let path = obs.path_links(e.p);
                    assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                }
                let mut r = m;
                while r > i && !gap(flows[r - 1].key, flows[r].key, BYTES_TIE) {
                    r -= 1;
                }
                let mut end = run_end(flows, r, BYTES_TIE);
                while end <= m {
                    r = end;
                    end = run_end(flows, r, BYTES_TIE);
                }
                if in_order(&flows[r..end]) {
                    // The run in place: its flows with both ends open, in
                    // turn, each found as `m` was.
                    let mut q = Some(m);
                    while let Some(k) = q {
                        let e = &flows[k];
                        let served = (e, at(k));
                        let class = class + k as u32;
                        if let Some(done) =
                            self.try_serve(obs, server, served, class, out, (ends, &mut blk))
                        {
                            (from, blk, limit) = (k + 1, [0; WORDS], tail_at(self));
                            if done {
                                break 'runs;
                            }
                        }
                        let hi = end.min(limit);
                        q = next_open_flow(flows, k + 1, hi, &self.full_link);
                        #[cfg(debug_assertions)]
                        for e in &flows[k + 1..q.unwrap_or(hi).max(k + 1)] {
                            let path = obs.path_links(e.p);
                            assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                        }
                    }
                    i = end;
                    continue;
                }
                (i, j) = (r, end);
            } else {
                j = run_end(flows, i, BYTES_TIE);
                if in_order(&flows[i..j]) {
                    let mut k = i;
                    while k < j.min(limit) {
                        while s_start + segs[s].n as usize <= k {
                            s_start += segs[s].n as usize;
                            s += 1;
                        }
                        let seg = &segs[s];
                        let hi = (s_start + seg.n as usize).min(j);
                        if seg.first != u32::MAX
                            && (server.is_full(seg.first)
                                || self.all_full(&seg.last)
                                || (k >= t0 && self.still_blocked(seg, &ch.tail_full)))
                        {
                            #[cfg(debug_assertions)]
                            for e in &flows[k..hi] {
                                let path = obs.path_links(e.p);
                                assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                            }
                            k = hi;
                            continue;
                        }
                        while k < hi.min(limit) {
                            let e = &flows[k];
                            k += 1;
                            if e.ends[0] != u32::MAX {
                                if server.is_full(e.ends[0]) {
                                    // The rest of the stretch crosses it too.
                                    k = hi;
                                    break;
                                }
                                if server.is_full(e.ends[1]) {
                                    continue;
                                }
                            }
                            let served = (e, at(k - 1));
                            let class = class + (k - 1) as u32;
                            if let Some(done) =
                                self.try_serve(obs, server, served, class, out, (ends, &mut blk))
                            {
                                (from, blk, limit) = (k, [0; WORDS], tail_at(self));
                                if done {
                                    break 'runs;
                                }
                            }
                        }
                    }
                    i = j;
                    continue;
                }
            }
            // A run out of index order: walked sorted by index.
            run.clear();
            run.extend_from_slice(&flows[i..j]);
            run.sort_unstable_by_key(|e| e.f);
            for (k, e) in run.iter().enumerate() {
                if e.ends[0] != u32::MAX {
                    if server.is_full(e.ends[0]) {
                        continue;
                    }
                    if server.is_full(e.ends[1]) {
                        continue;
                    }
                }
                let served = (e, [u32::MAX; 2]);
                let class = class + (i + k) as u32;
                if let Some(done) =
                    self.try_serve(obs, server, served, class, out, (ends, &mut blk))
                {
                    // The run's flows before its end are not in the tail.
                    (from, blk, limit) = (j, [0; WORDS], tail_at(self));
                    if done {
                        break 'runs;
                    }
                }
            }
            i = j;
        }
        self.run = run;
        if !self.memo {
            return None;
        }
        // Each flow after the last serve crosses a full link: its first
        // or last (in the chunk's ends, full now), or one between (noted).
        for (w, b) in blk.iter_mut().enumerate() {
            *b |= (ends.first[w] | ends.last[w]) & self.full[w];
        }
        if limit < n {
            or_classes(&mut blk, &ch.tail_full);
        }
        #[cfg(debug_assertions)]
        for (k, e) in flows.iter().enumerate().skip(from.min(limit)) {
            let path = obs.path_links(e.p);
            let in_blk = |l: &coflowkit_model::LinkId| {
                let mut c = [0; WORDS];
                add_class(&mut c, l.0);
                server.is_full(l.0) && (0..WORDS).any(|w| c[w] & blk[w] != 0)
            };
            let full = |l: &coflowkit_model::LinkId| server.is_full(l.0);
            assert!(k < limit || path.iter().any(full), "{} passed", e.f);
            assert!(k < from || path.iter().any(in_blk), "{} in the tail", e.f);
        }
        Some((n.saturating_sub(from), blk))
    }

    /// Serves flow `e` as class `class` if its path meets no full link,
    /// and returns whether every flow of its chunk (with these `ends`) now
    /// crosses a full link; `None`, and the first full link it meets added
    /// to `blk` (a link between its ends: the walk looked at those), if it
    /// meets one.
    pub(super) fn try_serve(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        (e, at): (&Kept, [u32; 2]),
        class: u32,
        out: &mut Allocation,
        (ends, blk): (&Ends, &mut Classes),
    ) -> Option<bool> {
        let path = obs.path_links(e.p);
        if let Some(l) = path.iter().find(|l| server.is_full(l.0)) {
            note_link(blk, l.0);
            return None;
        }
        server.serve_one(obs, e.f, class, out);
        self.served_at[e.f as usize] = at;
        self.filled(path, server);
        Some(self.all_blocked(ends))
    }
}

/// Every kept flow of the active tasks `tasks_now` with its key in the
/// matching: its task's `prefix`, then the bytes left it is kept under.
pub(super) fn keyed_flows<'a>(
    tasks_now: &'a [CoflowIdx],
    tasks: &'a [Order],
    prefix: impl Fn(CoflowIdx) -> u64 + 'a,
) -> impl Iterator<Item = (Ranked, FlowIdx)> + 'a {
    tasks_now.iter().flat_map(move |&c| {
        let p = prefix(c);
        let chunks = tasks.get(c as usize).map_or(&[][..], |o| &o.chunks[..]);
        chunks.iter().flat_map(|ch| &ch.flows).map(move |e| {
            let key = Ranked {
                prefix: p,
                bytes: e.key,
            };
            (key, e.f)
        })
    })
}

/// Debug builds: a fill the matching decided against a fresh one, each
/// task's flows sorted (`sort_with_ties`) and served in turn where no
/// link of theirs is full, as the walk serves them (its classes: places
/// in the whole order; a flow not served keeps its class and gets 0).
/// `before` is the allocation before the fill.
#[cfg(debug_assertions)]
pub(super) fn check_fill(
    view: &Clairvoyant<'_>,
    order: &[(u32, (Time, Time, u64), CoflowIdx)],
    before: &Allocation,
    out: &Allocation,
) {
    let floor = coflowkit_alloc::EPS * 1e9;
    let mut want = before.clone();
    let mut residual = view.capacities().to_vec();
    let mut served = std::collections::HashSet::new();
    let mut class = 0;
    for &(_, _, c) in order {
        let mut flows: Vec<(f64, FlowIdx)> = view
            .active_flows_of(c)
            .map(|f| (view.remaining(f), f))
            .collect();
        coflowkit_model::stats::sort_with_ties(&mut flows, |x| x.0, |x| x.1, BYTES_TIE);
        for (i, &(_, f)) in flows.iter().enumerate() {
            let path = view.path_links(view.path_idx(f));
            if path.is_empty() || path.iter().any(|l| residual[l.0 as usize] <= floor) {
                continue;
            }
            let r = path
                .iter()
                .map(|l| residual[l.0 as usize].max(0.0))
                .fold(f64::INFINITY, f64::min);
            for l in path {
                let res = &mut residual[l.0 as usize];
                *res = (*res - r).max(0.0);
            }
            want.set_rate(f, r);
            want.set_class(f, class + i as u32);
            served.insert(f);
        }
        class += flows.len() as u32;
    }
    for &f in view.active_flows() {
        if !served.contains(&f) {
            want.set_rate(f, 0.0);
        }
        let (got, w) = (out.rate(f), want.rate(f));
        assert_eq!(got.to_bits(), w.to_bits(), "rate of {f}");
        assert_eq!(out.class(f), want.class(f), "class of {f}");
    }
}

/// Adds link `l` (a real link, below [`CLASSES`] when blocked tails are
/// kept; its class otherwise, unused) to `set`, without [`add_class`]'s
/// checks.
#[inline(always)]
pub(super) fn note_link(set: &mut Classes, l: u32) {
    let c = (l as usize).min(CLASSES - 1);
    set[c / 64] |= 1 << (c % 64);
}

/// Adds the classes of `other` to `set`.
pub(super) fn or_classes(set: &mut Classes, other: &Classes) {
    for w in 0..WORDS {
        set[w] |= other[w];
    }
}

/// Whether the flows of a near-tie run are in flow index order (the
/// order it is walked in): exact ties are (as kept), so a run whose
/// first and last keys are the same bits needs no look.
pub(super) fn in_order(run: &[Kept]) -> bool {
    run[0].key.to_bits() == run[run.len() - 1].key.to_bits()
        || run.windows(2).all(|w| w[0].f < w[1].f)
}

/// The first of `flows[from..to]` whose path's two ends are open (or
/// that has no path), by `full_link` (1 for a full link, and a 0 past the
/// last for `u32::MAX`): eight flows at a time, with no branch a flow
/// (most flows looked at cross a full end, the one or the other, in no
/// order a branch could guess).
#[inline]
pub(super) fn next_open_flow(
    flows: &[Kept],
    from: usize,
    to: usize,
    full_link: &[u8],
) -> Option<usize> {
    let none = (full_link.len() - 1) as u32;
    let mut k = from;
    while k < to {
        let end = (k + 8).min(to);
        let mut open = 0u32;
        for (t, e) in flows[k..end].iter().enumerate() {
            let a = full_link[e.ends[0].min(none) as usize];
            let b = full_link[e.ends[1].min(none) as usize];
            open |= u32::from(a | b == 0) << t;
        }
        if open != 0 {
            return Some(k + open.trailing_zeros() as usize);
        }
        k = end;
    }
    None
}

/// Flow `flows[k]`'s place in `flows` (a chunk, in key order) as a walk
/// takes them, runs of near-ties by flow index (`k` if its run is in
/// index order). Its run starts at the last gap at or
/// before it (a run starts at a gap whatever came before), found by
/// blocks of equal keys (FB2010's runs of thousands of exact ties).
pub(super) fn run_place(flows: &[Kept], k: usize) -> usize {
    // The first of the flows before `i` with its key, galloping back.
    let equal_from = |i: usize| {
        let key = flows[i].key.to_bits();
        let (mut lo, mut step) = (i, 1);
        while lo >= step && flows[lo - step].key.to_bits() == key {
            lo -= step;
            step *= 2;
        }
        let from = lo.saturating_sub(step);
        from + flows[from..lo].partition_point(|e| e.key.to_bits() != key)
    };
    let mut r = equal_from(k);
    while r > 0 && !gap(flows[r - 1].key, flows[r].key, BYTES_TIE) {
        r = equal_from(r - 1);
    }
    let mut end = run_end(flows, r, BYTES_TIE);
    while end <= k {
        r = end;
        end = run_end(flows, r, BYTES_TIE);
    }
    let run = &flows[r..end];
    if in_order(run) {
        k
    } else {
        let f = flows[k].f;
        r + run.iter().filter(|e| e.f < f).count()
    }
}

/// The end of the near-tie run of `flows` (in key order) that starts at
/// `i`: the first flow whose key is more than `tol` (plus 1e-9 of the
/// run's first key) above `flows[i]`'s, as `sort_with_ties` cuts runs.
/// Found by galloping, then a binary search (`key - k0` grows with the
/// key): most runs are a flow or two, but FB2010's tasks have runs of
/// thousands of exact ties, which a walk often leaves after a few flows.
pub(super) fn run_end(flows: &[Kept], i: usize, tol: f64) -> usize {
    let k0 = flows[i].key;
    let reach = tie_reach(k0, tol);
    let within = |e: &Kept| e.key - k0 <= reach;
    let j = i + 1 + gallop(&flows[i + 1..], within);
    debug_assert_eq!(j, {
        let mut j = i + 1;
        while j < flows.len() && within(&flows[j]) {
            j += 1;
        }
        j
    });
    j
}

/// The bytes left of kept flow `f` (`flows=srpt`): the key the update
/// just kept it under, the same bits as `view.remaining(f)` (checked in
/// debug builds), which would read the flow's progress once more.
#[inline(always)]
pub(super) fn kept_bytes(key_of: &[f64], view: &Clairvoyant<'_>, f: FlowIdx) -> f64 {
    let k = key_of[f as usize];
    debug_assert_eq!(k.to_bits(), view.remaining(f).to_bits(), "key of {f}");
    k
}
