//! Link utilization over time (opt-in: `SimOptions::link_util_bin`).
//!
//! Each link keeps the total rate its flows send at now (bytes per ns) and
//! the instant it was last settled. Rates are constant between events, so
//! whenever a link's total rate changes the meter first credits
//! `rate * (now - since)` bytes to the bins that span covers (split exactly at
//! bin boundaries), then applies the change. At the end every link is settled
//! to the last event. Utilization of a bin = bytes carried * 8 / (capacity *
//! bin length); the last bin is divided by a whole bin too.
//!
//! The three ways an [`Allocation`](coflowkit_sched::Allocation) gives rates:
//! * a solo flow adds its own rate to each link of its path;
//! * a shared rate group adds (members on the link) * (group rate); the meter
//!   counts members per link for each group, so a group rate change costs
//!   one update per link the group uses;
//! * a proportional group (Varys's MADD) sends, on link `l`, the bytes its
//!   members have left there by its deadline `D`: `left_l / (D - now)`,
//!   constant until the deadline or the membership changes. The meter
//!   recomputes a group's per-link rates once per event, and only if its
//!   deadline or its members changed.
//!
//! Cost per event: O(flows whose rate or group changed * path length +
//! links of changed groups), plus one step per bin a settled span crosses;
//! nothing when the option is off (the engine holds no meter).

use coflowkit_model::{Dur, Time};
use coflowkit_sched::{proportional, FlowIdx, NetState, SOLO};

/// Links with a member count and a rate contribution, sorted by link.
#[derive(Debug, Default, Clone)]
struct LinkCounts {
    // (link, members on it, the group's rate on it as counted, bytes/ns).
    entries: Vec<(u32, u32, f64)>,
}

impl LinkCounts {
    fn at(&mut self, l: u32) -> usize {
        match self.entries.binary_search_by_key(&l, |e| e.0) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (l, 0, 0.0));
                i
            }
        }
    }
}

/// The meter; see the module doc.
pub(crate) struct LinkMeter {
    bin: u64,
    capacity_bpns: Vec<f64>,
    rate: Vec<f64>,
    since: Vec<Time>,
    bytes: Vec<Vec<f64>>,
    groups: Vec<LinkCounts>,
    group_rate: Vec<f64>,
    pgroups: Vec<LinkCounts>,
    pgroup_deadline: Vec<Time>,
    pgroup_dirty: Vec<bool>,
    dirty: Vec<u32>,
}

impl LinkMeter {
    /// A meter over links of these capacities (bits/s), with bins of `bin`.
    pub(crate) fn new(capacities: &[f64], bin: Dur) -> LinkMeter {
        let n = capacities.len();
        LinkMeter {
            bin: bin.0.max(1),
            capacity_bpns: capacities.iter().map(|c| c / 8e9).collect(),
            rate: vec![0.0; n],
            since: vec![Time::ZERO; n],
            bytes: vec![vec![]; n],
            groups: vec![],
            group_rate: vec![],
            pgroups: vec![],
            pgroup_deadline: vec![],
            pgroup_dirty: vec![],
            dirty: vec![],
        }
    }

    /// Credits link `l` up to `now` at its current rate.
    fn settle(&mut self, l: usize, now: Time) {
        let r = self.rate[l];
        let mut s = self.since[l].0;
        if r > 0.0 {
            let bins = &mut self.bytes[l];
            while s < now.0 {
                let b = s / self.bin;
                let end = ((b + 1) * self.bin).min(now.0);
                if bins.len() <= b as usize {
                    bins.resize(b as usize + 1, 0.0);
                }
                bins[b as usize] += r * (end - s) as f64;
                s = end;
            }
        }
        self.since[l] = now;
    }

    /// Changes link `l`'s total rate by `delta` bytes/ns from `now` on.
    fn shift(&mut self, l: usize, now: Time, delta: f64) {
        if delta == 0.0 {
            return;
        }
        self.settle(l, now);
        let r = self.rate[l] + delta;
        // Sums of float rates leave noise when everything has left.
        self.rate[l] = if r <= 1e-9 * self.capacity_bpns[l] {
            0.0
        } else {
            r
        };
    }

    /// Takes flow `f`'s contribution out, as the state applies it now (call
    /// before the state changes the flow's rate or group, or finishes it).
    pub(crate) fn remove_flow(&mut self, state: &NetState, f: FlowIdx, now: Time) {
        self.account(state, f, now, false);
    }

    /// Puts flow `f`'s contribution in, as the state applies it now (call
    /// after the state changed the flow's rate or group).
    pub(crate) fn add_flow(&mut self, state: &NetState, f: FlowIdx, now: Time) {
        self.account(state, f, now, true);
    }

    fn account(&mut self, state: &NetState, f: FlowIdx, now: Time, up: bool) {
        let sign = if up { 1.0 } else { -1.0 };
        let g = state.flow_group(f);
        if g == SOLO {
            let r = state.solo_rate(f);
            if r != 0.0 {
                for l in state.path_of(f) {
                    self.shift(l.0 as usize, now, sign * r);
                }
            }
        } else if let Some(pg) = proportional(g) {
            let pi = pg as usize;
            if self.pgroups.len() <= pi {
                self.pgroups.resize_with(pi + 1, LinkCounts::default);
                self.pgroup_deadline.resize(pi + 1, Time::NEVER);
                self.pgroup_dirty.resize(pi + 1, false);
            }
            for l in state.path_of(f) {
                let i = self.pgroups[pi].at(l.0);
                let e = &mut self.pgroups[pi].entries[i];
                if up {
                    e.1 += 1;
                } else {
                    e.1 -= 1;
                }
            }
            self.mark(pg);
        } else {
            let gi = g as usize;
            if self.groups.len() <= gi {
                self.groups.resize_with(gi + 1, LinkCounts::default);
                self.group_rate.resize(gi + 1, 0.0);
            }
            let r = self.group_rate[gi];
            for l in state.path_of(f) {
                let i = self.groups[gi].at(l.0);
                let e = &mut self.groups[gi].entries[i];
                if up {
                    e.1 += 1;
                } else {
                    e.1 -= 1;
                    if e.1 == 0 {
                        self.groups[gi].entries.remove(i);
                    }
                }
                self.shift(l.0 as usize, now, sign * r);
            }
        }
    }

    /// Shared group `g`'s per-member rate becomes `bytes_per_ns` now.
    pub(crate) fn set_group_rate(&mut self, g: u32, bytes_per_ns: f64, now: Time) {
        let gi = g as usize;
        if self.groups.len() <= gi {
            self.groups.resize_with(gi + 1, LinkCounts::default);
            self.group_rate.resize(gi + 1, 0.0);
        }
        let delta = bytes_per_ns - self.group_rate[gi];
        self.group_rate[gi] = bytes_per_ns;
        let entries = std::mem::take(&mut self.groups[gi].entries);
        for &(l, n, _) in &entries {
            self.shift(l as usize, now, n as f64 * delta);
        }
        self.groups[gi].entries = entries;
    }

    /// Proportional group `g`'s deadline was set: its rates change if the
    /// deadline did.
    pub(crate) fn deadline_set(&mut self, state: &NetState, g: u32) {
        let gi = g as usize;
        if gi < self.pgroups.len() && state.pgroup_deadline(g) != self.pgroup_deadline[gi] {
            self.mark(g);
        }
    }

    fn mark(&mut self, g: u32) {
        if !self.pgroup_dirty[g as usize] {
            self.pgroup_dirty[g as usize] = true;
            self.dirty.push(g);
        }
    }

    /// Brings the proportional groups that changed during this event up to
    /// date (call once per event, after the allocation was applied).
    pub(crate) fn end_event(&mut self, state: &NetState, now: Time) {
        let dirty = std::mem::take(&mut self.dirty);
        for &g in &dirty {
            let gi = g as usize;
            self.pgroup_dirty[gi] = false;
            let deadline = state.pgroup_deadline(g);
            self.pgroup_deadline[gi] = deadline;
            let (phi, w) = state.pgroup_link_weights(g);
            let span = if deadline == Time::NEVER || deadline <= now {
                None
            } else {
                Some((deadline.0 - now.0) as f64)
            };
            let mut entries = std::mem::take(&mut self.pgroups[gi].entries);
            for e in entries.iter_mut() {
                let new = match span {
                    Some(span) if e.1 > 0 => {
                        (phi * w.get(e.0 as usize).copied().unwrap_or(0.0) / span).max(0.0)
                    }
                    _ => 0.0,
                };
                if new != e.2 {
                    self.shift(e.0 as usize, now, new - e.2);
                    e.2 = new;
                }
            }
            entries.retain(|e| e.1 > 0);
            self.pgroups[gi].entries = entries;
        }
        self.dirty = dirty;
        self.dirty.clear();
    }

    /// Settles every link at `end` and returns bytes carried per link and
    /// bin, with the number of bins up to `end`.
    pub(crate) fn into_bytes(mut self, end: Time) -> (Dur, usize, Vec<Vec<f64>>) {
        for l in 0..self.rate.len() {
            self.settle(l, end);
        }
        let n_bins = end.0.div_ceil(self.bin) as usize;
        for b in &mut self.bytes {
            b.resize(n_bins, 0.0);
        }
        (Dur(self.bin), n_bins, self.bytes)
    }
}
