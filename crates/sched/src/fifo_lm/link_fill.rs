//! The paper's rule on multi-hop fabrics and with `solver=incremental`
//! ([`LinkFill`]): link by link, each class frozen at the level the links
//! it crosses leave it, and a call kept without a solve where nothing it
//! reads changed (the module doc of `fifo_lm`).

use super::*;

/// When a coflow (or sender) that has sent `sent` bytes reaches `threshold`
/// at `rate_bps` from `now`, rounded up to the nanosecond (`None` at rate 0).
pub(super) fn crossing(threshold: f64, now: Time, sent: f64, rate_bps: f64) -> Option<Time> {
    ceil_ns_time(now, threshold - sent, rate_bps / 8e9)
}

pub(super) fn is_heavy(threshold: f64, sent: f64) -> bool {
    sent >= threshold - 1e-6 * threshold.max(1.0)
}

/// No coflow (a link's last entry where it has none).
pub(super) const NO_COFLOW: CoflowIdx = CoflowIdx::MAX;

/// `mux=link`'s allocation, computed afresh at each call by priority
/// progressive filling (module doc, "Per link"). Flows are numbered in
/// the order of their coflows (`order`), then of `active_flows_of`.
#[derive(Debug, Default)]
pub(super) struct LinkFill {
    // Per flow (local number): its index, where its entries' positions
    // start in `at`, the level it began rising at, its
    // rate, how many of its links hold an unfrozen flow of a higher
    // class, whether it rises, whether it is frozen.
    pub(super) flows: Vec<FlowIdx>,
    pub(super) at_start: Vec<u32>,
    pub(super) start: Vec<f64>,
    pub(super) rate: Vec<f64>,
    pub(super) blocked: Vec<u32>,
    pub(super) rising: Vec<bool>,
    pub(super) frozen: Vec<bool>,
    // (link, coflow position, flow) for every link of every flow, sorted:
    // a link's entries in task order; their class at that link; and per
    // flow, the positions of its entries (`at[at_start[i]..at_start[i+1]]`).
    pub(super) entries: Vec<(u32, u32, u32)>,
    pub(super) class: Vec<u32>,
    // Scratch of the sort by link.
    pub(super) sorted: Vec<(u32, u32, u32)>,
    pub(super) bucket: Vec<u32>,
    pub(super) at: Vec<u32>,
    // Per link: its entries' range, where its classes begin (in `classes`,
    // each the position of its first entry, with one past the last),
    // its top class (the first with an unfrozen flow), the level `lam` at
    // which its residual `res` was last settled, and its rising flows.
    pub(super) link_entries: Vec<(u32, u32)>,
    pub(super) link_classes: Vec<(u32, u32)>,
    pub(super) classes: Vec<u32>,
    pub(super) unfrozen: Vec<u32>,
    pub(super) top: Vec<u32>,
    pub(super) lam: Vec<f64>,
    pub(super) res: Vec<f64>,
    pub(super) n_rising: Vec<u32>,
    pub(super) dirty: Vec<u32>,
    pub(super) is_dirty: Vec<bool>,
    // The level at which each link with a rising flow fills.
    pub(super) fills: FillLevels,
    // As of the last solve: per coflow, whether it was heavy; per link,
    // the coflow of its last entry (`NO_COFLOW` for none).
    pub(super) solved: bool,
    pub(super) was_heavy: Vec<bool>,
    pub(super) last_at: Vec<CoflowIdx>,
}

impl LinkFill {
    /// Rates and classes for every active flow of the coflows of `order`
    /// (task order; `heavy` says which have sent the threshold).
    pub(super) fn solve(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        heavy: impl Fn(CoflowIdx) -> bool,
        out: &mut Allocation,
    ) {
        self.build(view, order, &heavy);
        self.fill(view);
        self.solved = true;
        self.note_heavy(order, &heavy);
        self.last_at.clear();
        self.last_at.resize(view.capacities().len(), NO_COFLOW);
        for (l, &(b, e)) in self.link_entries.iter().enumerate() {
            if e > b {
                self.last_at[l] = order[self.entries[e as usize - 1].1 as usize];
            }
        }
        for i in 0..self.flows.len() {
            let f = self.flows[i];
            out.set_rate(f, self.rate[i]);
            // A flow's class for drivers with queues: its class at the
            // first link of its path, as the task position of its first
            // member.
            let e = self.at[self.at_start[i] as usize] as usize;
            let (cs, _) = self.link_classes[self.entries[e].0 as usize];
            let head = self.classes[(cs + self.class[e]) as usize];
            out.set_class(f, self.entries[head as usize].1);
        }
    }

    /// Notes which coflows of `order` are heavy now, for the next call's
    /// [`LinkFill::unchanged`].
    pub(super) fn note_heavy(&mut self, order: &[CoflowIdx], heavy: &impl Fn(CoflowIdx) -> bool) {
        for &c in order {
            let ci = c as usize;
            if self.was_heavy.len() <= ci {
                self.was_heavy.resize(ci + 1, false);
            }
            self.was_heavy[ci] = heavy(c);
        }
    }

    /// Whether the last solve's rates and classes stand: no flow started
    /// or finished and no coflow arrived or completed since (the debug
    /// check caught a completion without a flow's: the same rates, but
    /// the classes, named by places in `order`, moved), and every coflow
    /// that turned heavy since is the
    /// last at each of its links (a class then ends at it as before). The
    /// engine's events that change nothing else (a crossing by a coflow
    /// with none behind it anywhere) then cost no solve.
    pub(super) fn unchanged(
        &mut self,
        view: &Observed<'_>,
        changes: &Changes,
        order: &[CoflowIdx],
        heavy: &impl Fn(CoflowIdx) -> bool,
    ) -> bool {
        // An arrival or a completion moves coflows' places in `order`,
        // which name the classes, even when no flow starts or finishes.
        if !self.solved
            || !changes.started.is_empty()
            || !changes.finished.is_empty()
            || !changes.arrived.is_empty()
            || !changes.finished_coflows.is_empty()
        {
            return false;
        }
        for &c in order {
            let ci = c as usize;
            let was = self.was_heavy.get(ci).copied().unwrap_or(false);
            if heavy(c) == was {
                continue;
            }
            // A coflow with no active flow (one arrived since) has no entry.
            let last_everywhere = view
                .active_flows_of(c)
                .all(|f| view.path(f).iter().all(|l| self.last_at[l.0 as usize] == c));
            if !last_everywhere {
                return false;
            }
        }
        self.note_heavy(order, heavy);
        true
    }

    /// Debug builds: the rates a call found [`unchanged`](Self::unchanged)
    /// keeps are a fresh solve's, to the bit.
    #[cfg(debug_assertions)]
    pub(super) fn check_unchanged(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        heavy: &impl Fn(CoflowIdx) -> bool,
        out: &mut Allocation,
    ) {
        let rates = |fill: &LinkFill| -> Vec<(FlowIdx, u64)> {
            fill.flows
                .iter()
                .zip(&fill.rate)
                .map(|(&f, r)| (f, r.to_bits()))
                .collect()
        };
        let kept = rates(self);
        let classes: Vec<u32> = self.flows.iter().map(|&f| out.class(f)).collect();
        self.solve(view, order, heavy, out);
        let fresh = rates(self);
        assert_eq!(
            kept, fresh,
            "fifo-lm:mux=link: an unchanged call's rates moved"
        );
        let now: Vec<u32> = self.flows.iter().map(|&f| out.class(f)).collect();
        assert_eq!(
            classes, now,
            "fifo-lm:mux=link: an unchanged call's classes moved"
        );
    }

    /// Lists the flows and their entries, and the classes at each link.
    pub(super) fn build(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        heavy: &impl Fn(CoflowIdx) -> bool,
    ) {
        let n_links = view.capacities().len();
        self.flows.clear();
        self.at_start.clear();
        self.entries.clear();
        for (r, &c) in order.iter().enumerate() {
            for f in view.active_flows_of(c) {
                let i = self.flows.len() as u32;
                self.at_start.push(self.entries.len() as u32);
                self.flows.push(f);
                for l in view.path(f) {
                    self.entries.push((l.0, r as u32, i));
                }
            }
        }
        self.at_start.push(self.entries.len() as u32);
        // By link, stably: pushed in (coflow position, flow) order, so this
        // is the sort by (link, position, flow), in linear time (a sort was
        // a third of FB2010's time).
        self.bucket.clear();
        self.bucket.resize(n_links + 1, 0);
        for &(l, _, _) in &self.entries {
            self.bucket[l as usize + 1] += 1;
        }
        for l in 0..n_links {
            self.bucket[l + 1] += self.bucket[l];
        }
        self.sorted.clear();
        self.sorted.resize(self.entries.len(), (0, 0, 0));
        for &x in &self.entries {
            let k = &mut self.bucket[x.0 as usize];
            self.sorted[*k as usize] = x;
            *k += 1;
        }
        std::mem::swap(&mut self.entries, &mut self.sorted);
        let n = self.flows.len();
        self.at.clear();
        self.at.resize(self.entries.len(), 0);
        // Per flow, a cursor into its slots of `at` (reusing `blocked`).
        self.blocked.clear();
        self.blocked.resize(n, 0);
        for (e, &(_, _, i)) in self.entries.iter().enumerate() {
            let k = self.at_start[i as usize] + self.blocked[i as usize];
            self.at[k as usize] = e as u32;
            self.blocked[i as usize] += 1;
        }
        self.blocked.iter_mut().for_each(|b| *b = 0);
        self.link_entries.clear();
        self.link_entries.resize(n_links, (0, 0));
        self.link_classes.clear();
        self.link_classes.resize(n_links, (0, 0));
        self.classes.clear();
        self.unfrozen.clear();
        self.class.clear();
        self.class.resize(self.entries.len(), 0);
        let mut e = 0;
        while e < self.entries.len() {
            let l = self.entries[e].0;
            let begin = e;
            let cs = self.classes.len() as u32;
            let mut k = 0u32;
            self.classes.push(e as u32);
            self.unfrozen.push(0);
            while e < self.entries.len() && self.entries[e].0 == l {
                let r = self.entries[e].1;
                // A new class begins after a light coflow's last entry.
                if e > begin
                    && self.entries[e - 1].1 != r
                    && !heavy(order[self.entries[e - 1].1 as usize])
                {
                    k += 1;
                    self.classes.push(e as u32);
                    self.unfrozen.push(0);
                }
                self.class[e] = k;
                *self.unfrozen.last_mut().expect("a class") += 1;
                if k > 0 {
                    self.blocked[self.entries[e].2 as usize] += 1;
                }
                e += 1;
            }
            self.classes.push(e as u32);
            self.unfrozen.push(0);
            self.link_entries[l as usize] = (begin as u32, e as u32);
            self.link_classes[l as usize] = (cs, k + 1);
        }
    }

    /// Priority progressive filling over the entries `build` listed.
    pub(super) fn fill(&mut self, view: &Observed<'_>) {
        let n = self.flows.len();
        let caps = view.capacities();
        let n_links = caps.len();
        self.start.clear();
        self.start.resize(n, 0.0);
        self.rate.clear();
        self.rate.resize(n, 0.0);
        self.rising.clear();
        self.rising.resize(n, false);
        self.frozen.clear();
        self.frozen.resize(n, false);
        self.top.clear();
        self.top.resize(n_links, 0);
        self.lam.clear();
        self.lam.resize(n_links, 0.0);
        self.res.clear();
        self.res.extend_from_slice(caps);
        self.n_rising.clear();
        self.n_rising.resize(n_links, 0);
        if self.is_dirty.len() < n_links {
            self.is_dirty.resize(n_links, false);
        }
        self.fills.reset(n_links);
        self.dirty.clear();
        for i in 0..n {
            if self.blocked[i] == 0 {
                self.begin_rising(i, 0.0);
            }
        }
        self.push_dirty(caps);
        while let Some((level, l)) = self.fills.lowest() {
            let li = l as usize;
            let (b, e) = self.link_entries[li];
            for x in b..e {
                let i = self.entries[x as usize].2 as usize;
                if !self.frozen[i] {
                    self.freeze(i, level);
                }
            }
            self.res[li] = 0.0;
            // Its entry goes (it had no rising flow left when another link
            // filling at this level froze its last: `push_dirty`).
            self.mark(li);
            self.push_dirty(caps);
        }
        debug_assert!(
            self.frozen.iter().all(|&x| x),
            "fifo-lm:mux=link: a flow left unfrozen"
        );
    }

    /// Brings link `l`'s residual to `level`.
    pub(super) fn settle(&mut self, l: usize, level: f64) {
        let used = f64::from(self.n_rising[l]) * (level - self.lam[l]);
        self.res[l] = (self.res[l] - used).max(0.0);
        self.lam[l] = level;
    }

    pub(super) fn begin_rising(&mut self, i: usize, level: f64) {
        self.rising[i] = true;
        self.start[i] = level;
        for k in self.at_start[i]..self.at_start[i + 1] {
            let l = self.entries[self.at[k as usize] as usize].0 as usize;
            self.settle(l, level);
            self.n_rising[l] += 1;
            self.mark(l);
        }
    }

    /// Freezes flow `i` at `level`; flows its freezing unblocks rise.
    pub(super) fn freeze(&mut self, i: usize, level: f64) {
        self.frozen[i] = true;
        let was_rising = self.rising[i];
        if was_rising {
            self.rate[i] = (level - self.start[i]).max(0.0);
            self.rising[i] = false;
        }
        for k in self.at_start[i]..self.at_start[i + 1] {
            let e = self.at[k as usize] as usize;
            let l = self.entries[e].0 as usize;
            if was_rising {
                self.settle(l, level);
                self.n_rising[l] -= 1;
                self.mark(l);
            }
            let (cs, n_classes) = self.link_classes[l];
            let c = (cs + self.class[e]) as usize;
            self.unfrozen[c] -= 1;
            if self.class[e] != self.top[l] || self.unfrozen[c] > 0 {
                continue;
            }
            // The top class emptied: the next one with unfrozen flows rises.
            while self.top[l] < n_classes && self.unfrozen[(cs + self.top[l]) as usize] == 0 {
                self.top[l] += 1;
            }
            if self.top[l] == n_classes {
                continue;
            }
            let t = (cs + self.top[l]) as usize;
            for x in self.classes[t]..self.classes[t + 1] {
                let j = self.entries[x as usize].2 as usize;
                if !self.frozen[j] {
                    self.blocked[j] -= 1;
                    if self.blocked[j] == 0 {
                        self.begin_rising(j, level);
                    }
                }
            }
        }
    }

    /// Notes that link `l`'s fill level moved.
    pub(super) fn mark(&mut self, l: usize) {
        if !self.is_dirty[l] {
            self.is_dirty[l] = true;
            self.dirty.push(l as u32);
        }
    }

    /// Sets the level at which each link touched since the last call
    /// fills (none once no flow rises on it). A link whose last rising
    /// flow froze (another link filling) just as its residual ran out
    /// (within 1e-12 of its capacity, as the reference's filling) fills
    /// too, at that level, if it holds an unfrozen flow: several links
    /// filling at one level all freeze their flows, whichever comes first
    /// (a flow waiting there behind the class that filled it gets nothing,
    /// and the classes behind it at its other links rise from then on).
    pub(super) fn push_dirty(&mut self, caps: &[f64]) {
        let mut dirty = std::mem::take(&mut self.dirty);
        for &l in &dirty {
            let li = l as usize;
            self.is_dirty[li] = false;
            let level = if self.n_rising[li] > 0 {
                Some(self.lam[li] + self.res[li] / f64::from(self.n_rising[li]))
            } else {
                let (_, n_classes) = self.link_classes[li];
                (self.res[li] <= 1e-12 * caps[li] && self.top[li] < n_classes)
                    .then_some(self.lam[li])
            };
            self.fills.set(l, level);
        }
        dirty.clear();
        self.dirty = dirty;
    }
}

/// The links' fill levels in a tournament tree: the lowest (level, link)
/// at the root, one leaf per link updated in place. It replaced a binary
/// heap with lazy deletion, whose stale entries (one per change of a
/// link's level) were 40% of `mux=link`'s time on cut80; the order is the
/// heap's, level then link, so the filling is the same to the bit.
#[derive(Debug, Default)]
pub(super) struct FillLevels {
    // Nodes of a complete binary tree over `n_leaves` leaves (node 1 the
    // root, leaf `l` at `n_leaves + l`): (level's bits, link), `EMPTY` for
    // a link that does not fill.
    pub(super) nodes: Vec<(u64, u32)>,
    pub(super) n_leaves: usize,
}

impl FillLevels {
    const EMPTY: (u64, u32) = (u64::MAX, u32::MAX);

    /// No link fills; room for `n_links`.
    pub(super) fn reset(&mut self, n_links: usize) {
        self.n_leaves = n_links.next_power_of_two();
        self.nodes.clear();
        self.nodes.resize(2 * self.n_leaves, Self::EMPTY);
    }

    /// Link `l` fills at `level` (a level >= 0, so its bits order as it
    /// does), or not at all.
    pub(super) fn set(&mut self, l: u32, level: Option<f64>) {
        let mut k = self.n_leaves + l as usize;
        self.nodes[k] = level.map_or(Self::EMPTY, |x| (x.to_bits(), l));
        while k > 1 {
            k /= 2;
            let m = self.nodes[2 * k].min(self.nodes[2 * k + 1]);
            if self.nodes[k] == m {
                break;
            }
            self.nodes[k] = m;
        }
    }

    /// The lowest fill level and its link.
    pub(super) fn lowest(&self) -> Option<(f64, u32)> {
        let (bits, l) = self.nodes[1];
        (l != u32::MAX).then(|| (f64::from_bits(bits), l))
    }
}
