//! The engine's completion queue over a [`NetState`]'s groups: when each
//! rate group's next member finishes (cached per group, scanned or kept in a
//! lazy radix queue by how many groups are active), and which grouped flows
//! are due at an instant. Solo flows' finishes are the driver's
//! ([`NetState::set_solo_rate`] returns them).
//!
//! A group's next finish is computed once per instant, not at every change:
//! a join, a leave or a rate marks the group (`refresh_group`), and
//! `flush_groups` computes the marked ones before time moves on
//! (`NetState::set_now`) or a finish is read (`next_group_finish`,
//! `due_grouped`). Under `fair` a group changed ~130 times an event on
//! FB2010's first 200 coflows, each change a division. The instant is the
//! one an eager computation at the last change gives (it reads only the
//! group's head, clock and rate and `now`); debug builds compute it eagerly
//! too and `flush_groups` asserts the two equal.

use super::{ns_f64, FlowIdx, NetState, INACTIVE, PROPORTIONAL};
use coflowkit_model::{ceil_ns_time, Time};

impl NetState {
    /// Marks group `g`'s next finish as to be computed again (its head,
    /// clock or rate changed); [`NetState::flush_groups`] computes it once
    /// for all the changes of an instant.
    #[inline]
    pub(super) fn refresh_group(&mut self, g: u32) {
        let gr = &mut self.groups[g as usize];
        if !gr.dirty {
            gr.dirty = true;
            self.group_dirty.push(g);
        }
        // Debug builds also compute it now, as before the deferral, for
        // `flush_groups` to compare with.
        #[cfg(debug_assertions)]
        {
            let t = self.group_finish(g);
            let gi = g as usize;
            if self.group_finish_eager.len() <= gi {
                self.group_finish_eager.resize(gi + 1, Time::NEVER);
            }
            self.group_finish_eager[gi] = t;
        }
    }

    /// Computes the next finish of every group marked since the last call,
    /// at the current instant, and lists it in the queue when that is on.
    /// The same instant as one computed at each change: `group_finish`
    /// reads only the group's head, clock and rate and `now`, which is
    /// still the instant of the changes (`set_now` calls this first).
    pub(super) fn flush_groups(&mut self) {
        if self.group_dirty.is_empty() {
            return;
        }
        let mut dirty = std::mem::take(&mut self.group_dirty);
        for &g in &dirty {
            self.groups[g as usize].dirty = false;
            let t = self.group_finish(g);
            #[cfg(debug_assertions)]
            assert_eq!(
                t, self.group_finish_eager[g as usize],
                "group {g}'s next finish, deferred and at its last change"
            );
            if self.group_finish_at[g as usize] != t {
                self.group_finish_at[g as usize] = t;
                if self.group_heap_on && t != Time::NEVER {
                    self.group_heap.push(t.0, g);
                }
            }
        }
        dirty.clear();
        self.group_dirty = dirty;
    }

    /// Switches between scanning the active groups for the next finish and
    /// keeping them in a lazy queue, by how many there are (with
    /// hysteresis), and rebuilds the queue when stale entries dominate it.
    fn tune_group_heap(&mut self) {
        const HEAP_ABOVE: usize = 1 << 16;
        const SCAN_BELOW: usize = 1 << 14;
        let n = self.active_groups.len();
        let rebuild = if self.group_heap_on {
            if n < SCAN_BELOW {
                self.group_heap_on = false;
                self.group_heap = Default::default();
                false
            } else {
                self.group_heap.len() > 4 * n + 1024
            }
        } else if n > HEAP_ABOVE {
            self.group_heap_on = true;
            true
        } else {
            false
        };
        if rebuild {
            let at = &self.group_finish_at;
            self.group_heap.rebuild(
                self.active_groups
                    .iter()
                    .map(|&g| (at[g as usize].0, g))
                    .filter(|e| e.0 != Time::NEVER.0),
            );
        }
    }

    /// The earliest instant a grouped flow finishes.
    pub fn next_group_finish(&mut self) -> Time {
        self.flush_groups();
        self.tune_group_heap();
        let mut t = Time::NEVER;
        if self.group_heap_on {
            let at = &self.group_finish_at;
            t = self
                .group_heap
                .peek_min(|t, g| at[g as usize].0 == t)
                .map_or(Time::NEVER, Time);
        } else {
            for &g in &self.active_groups {
                t = t.min(self.group_finish_at[g as usize]);
            }
        }
        for &g in &self.active_pgroups {
            t = t.min(self.pgroups[g as usize].deadline);
        }
        t
    }

    /// Pushes to `due` the grouped flows that finish at or before
    /// `horizon` (the engine's instant plus `SNAP_NS`: a flow due within it
    /// finishes now).
    pub fn due_grouped(&mut self, horizon: Time, due: &mut Vec<FlowIdx>) {
        self.flush_groups();
        if !self.group_heap_on {
            for i in 0..self.active_groups.len() {
                let g = self.active_groups[i];
                if self.group_finish_at[g as usize] <= horizon {
                    self.due_members(g, horizon, due);
                }
            }
        }
        while self.group_heap_on {
            let at = &self.group_finish_at;
            match self
                .group_heap
                .pop_min(horizon.0, |t, g| at[g as usize].0 == t)
            {
                Some((_, g)) => {
                    // Its due members finish now; leaving the group then
                    // refreshes (and re-lists) its next finish.
                    self.group_finish_at[g as usize] = Time::NEVER;
                    self.due_members(g, horizon, due);
                }
                None => break,
            }
        }
        for &g in &self.active_pgroups {
            let p = &self.pgroups[g as usize];
            if p.deadline <= horizon {
                due.extend(p.members.iter().copied().filter(|&f| {
                    self.fl[f as usize].active_pos != INACTIVE
                        && self.fl[f as usize].group == PROPORTIONAL | g
                }));
            }
        }
    }

    /// Whether the entry `(mark, f)` of group `g`'s members is live: `f` is
    /// active, in `g`, and joined with this mark. A flow that left the group
    /// and joined it again has a stale entry from its first stay, with
    /// another mark (for a grouped flow `base` is its mark).
    fn is_member(&self, f: usize, g: u32, mark: f64) -> bool {
        self.fl[f].active_pos != INACTIVE && self.fl[f].group == g && self.fl[f].base == mark
    }

    /// Drops members that left or finished from the top of `members` and
    /// caches the lowest live mark.
    pub(super) fn recompute_head(&mut self, g: u32) {
        let gi = g as usize;
        let mut head = f64::INFINITY;
        while let Some(&std::cmp::Reverse((key, f))) = self.groups[gi].members.peek() {
            let mark = key.mark();
            let fi = f as usize;
            if self.is_member(fi, g, mark) {
                head = mark;
                break;
            }
            self.groups[gi].members.pop();
        }
        self.groups[gi].head = head;
    }

    /// The instant group `g`'s next member finishes at its current rate.
    fn group_finish(&self, g: u32) -> Time {
        let gr = &self.groups[g as usize];
        if gr.head == f64::INFINITY {
            return Time::NEVER;
        }
        let left = gr.head - (gr.clock + gr.rate * self.elapsed(gr.clock_time));
        if left <= 0.0 {
            return self.now;
        }
        ceil_ns_time(self.now, left, gr.rate).unwrap_or(Time::NEVER)
    }

    /// Pushes to `due` the members of group `g` that finish now: the head
    /// (whose finish instant, at most `horizon`, was computed when the rate
    /// was set), every member whose mark equals it up to float noise, and
    /// every member the group's clock reaches by `horizon`. The last are a
    /// solo flow's `SNAP_NS` (the engine's resolution): nanosecond rounding
    /// can leave a member a fraction of a byte behind another that ends
    /// with it in exact arithmetic, and it must not wait behind other work
    /// for that (`pias_regression_fuzz_last_queue_flows_end_together`).
    fn due_members(&mut self, g: u32, horizon: Time, due: &mut Vec<FlowIdx>) {
        let gi = g as usize;
        let mut head: Option<f64> = None;
        let ahead = ns_f64(horizon.0.saturating_sub(self.now.0));
        let clock = self.group_clock(g) + self.groups[gi].rate * ahead;
        while let Some(&std::cmp::Reverse((key, f))) = self.groups[gi].members.peek() {
            let mark = key.mark();
            let fi = f as usize;
            if !self.is_member(fi, g, mark) {
                self.groups[gi].members.pop();
                continue;
            }
            let limit = head.unwrap_or(mark).max(clock);
            if head.is_none() || mark <= limit + 1e-9 * limit.abs().max(1.0) {
                head.get_or_insert(mark);
                due.push(f);
                self.groups[gi].members.pop();
            } else {
                break;
            }
        }
        self.recompute_head(g);
        // Its head moved: the next finish is computed again (the engine
        // finishes the flows listed, and each leave marks it too).
        self.refresh_group(g);
    }
}
