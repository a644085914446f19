//! Lazy progress in a [`NetState`]: solo flows (bytes at a rate since an
//! instant), shared rate groups (a virtual clock and each member's mark) and
//! proportional groups (Varys's MADD: a scale falling to 0 at the group's
//! deadline), and the per-coflow sums kept alongside.

use super::{ns_f64, proportional, FlowIdx, Group, MarkKey, NetState, PGroup};
use super::{DONE, INACTIVE, PROPORTIONAL, SOLO};
use coflowkit_model::{ceil_ns_time, Time};

impl NetState {
    pub(super) fn elapsed(&self, since: Time) -> f64 {
        ns_f64(self.now.0 - since.0)
    }

    pub(super) fn group_clock(&self, g: u32) -> f64 {
        let gr = &self.groups[g as usize];
        gr.clock + gr.rate * self.elapsed(gr.clock_time)
    }

    pub(super) fn flow_sent(&self, f: usize) -> f64 {
        let r = &self.fl[f];
        let g = r.group;
        let sent = if r.active_pos == INACTIVE {
            if r.flags & DONE != 0 {
                r.size
            } else {
                0.0
            }
        } else if g == SOLO {
            r.base + r.rate * self.elapsed(r.base_time)
        } else if let Some(pg) = proportional(g) {
            r.size - r.base * self.pgroup_phi(pg)
        } else {
            r.size - (r.base - self.group_clock(g)).max(0.0)
        };
        sent.min(r.size)
    }

    pub(super) fn coflow_sent_now(&self, c: usize) -> f64 {
        let i = &self.coflows[c];
        let mut s = i.base_sent + i.solo_rate * self.elapsed(i.base_time);
        if i.n_grouped > 0 {
            for f in (i.first_flow..i.first_flow + i.n_flows).chain(i.later.iter().copied()) {
                let f = f as usize;
                if self.fl[f].active_pos != INACTIVE && self.fl[f].group != SOLO {
                    s += self.flow_sent(f);
                }
            }
        }
        s.min(i.size)
    }

    #[inline]
    pub(super) fn settle_coflow(&mut self, c: usize) {
        let now = self.now;
        let i = &mut self.coflows[c];
        i.base_sent += i.solo_rate * ns_f64(now.0 - i.base_time.0);
        i.base_time = now;
    }

    #[inline]
    pub(super) fn settle_solo(&mut self, f: usize) {
        let now = self.now;
        let r = &mut self.fl[f];
        r.base = (r.base + r.rate * ns_f64(now.0 - r.base_time.0)).min(r.size);
        r.base_time = now;
    }

    fn settle_group(&mut self, g: u32) {
        let clock = self.group_clock(g);
        let gr = &mut self.groups[g as usize];
        gr.clock = clock;
        gr.clock_time = self.now;
    }

    /// Takes flow `f` out of its group (if any) and makes it solo at rate 0,
    /// keeping what it has sent.
    fn make_solo(&mut self, f: usize) {
        let g = self.fl[f].group;
        if g == SOLO {
            return;
        }
        let sent = self.flow_sent(f);
        // A proportional group gives up the flow's weights before the
        // coflow settles; a rate group refreshes its next finish after.
        let pgroup = proportional(g);
        if let Some(pg) = pgroup {
            self.leave_pgroup(f, pg);
        }
        let c = self.fl[f].coflow as usize;
        self.settle_coflow(c);
        let ci = &mut self.coflows[c];
        ci.n_grouped -= 1;
        ci.base_sent += sent;
        if pgroup.is_none() {
            self.sum_leave(g, f);
        }
        self.fl[f].group = SOLO;
        self.fl[f].base = sent;
        self.fl[f].base_time = self.now;
        self.fl[f].rate = 0.0;
        if pgroup.is_none() {
            self.leave_group(g);
        }
    }

    fn ensure_group(&mut self, g: u32) {
        let gi = g as usize;
        if self.groups.len() <= gi {
            self.groups.resize_with(gi + 1, Group::default);
            self.group_finish_at.resize(gi + 1, Time::NEVER);
            self.group_pos.resize(gi + 1, INACTIVE);
        }
    }

    pub(super) fn leave_group(&mut self, g: u32) {
        let gi = g as usize;
        self.groups[gi].n_members -= 1;
        if self.groups[gi].n_members == 0 {
            let at = self.group_pos[gi] as usize;
            let last = self.active_groups.pop().expect("group is listed");
            if last != g {
                self.active_groups[at] = last;
                self.group_pos[last as usize] = at as u32;
            }
            self.group_pos[gi] = INACTIVE;
            self.groups[gi].members.clear();
            self.groups[gi].head = f64::INFINITY;
            self.group_finish_at[gi] = Time::NEVER;
            // Marked too if it was already: its finish is NEVER now.
            self.refresh_group(g);
        } else {
            self.recompute_head(g);
            self.refresh_group(g);
        }
    }

    /// Sets the rate of solo flow `f` (bytes per ns), taking it out of its
    /// group first. Returns the instant it will finish at this rate.
    /// (Inlined: it is the body of a re-rate, and a call cost the applying
    /// loop its registers.)
    #[inline(always)]
    pub fn set_solo_rate(&mut self, f: FlowIdx, bytes_per_ns: f64) -> Time {
        let fi = f as usize;
        if self.fl[fi].group != SOLO {
            self.make_solo(fi);
        }
        // The flow's settle (`settle_solo`) and its coflow's, then the new
        // rate, reading and writing the flow's one record.
        let now = self.now;
        let r = &mut self.fl[fi];
        let c = r.coflow as usize;
        r.base = (r.base + r.rate * ns_f64(now.0 - r.base_time.0)).min(r.size);
        r.base_time = now;
        let old = r.rate;
        r.rate = bytes_per_ns;
        let left = r.size - r.base;
        self.settle_coflow(c);
        self.coflows[c].solo_rate += bytes_per_ns - old;
        if left <= 0.0 {
            return now;
        }
        ceil_ns_time(now, left, bytes_per_ns).unwrap_or(Time::NEVER)
    }

    /// Puts flow `f` in shared group `g` (creating groups up to `g`).
    pub fn join_group(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.fl[fi].group == g {
            return;
        }
        self.set_solo_rate(f, 0.0);
        let c = self.fl[fi].coflow as usize;
        let sent = self.fl[fi].base;
        {
            let ci = &mut self.coflows[c];
            ci.base_sent -= sent;
            ci.n_grouped += 1;
        }
        self.ensure_group(g);
        self.settle_group(g);
        let gr = &mut self.groups[g as usize];
        let mark = gr.clock + (self.fl[fi].size - sent);
        gr.members.push(std::cmp::Reverse((MarkKey::of(mark), f)));
        gr.head = gr.head.min(mark);
        gr.n_members += 1;
        if gr.n_members == 1 {
            self.group_pos[g as usize] = self.active_groups.len() as u32;
            self.active_groups.push(g);
        }
        self.fl[fi].group = g;
        self.fl[fi].base = mark;
        self.sum_join(g, fi);
        self.refresh_group(g);
    }

    /// The scale `phi` of proportional group `g` now.
    pub fn pgroup_phi(&self, g: u32) -> f64 {
        match self.pgroups.get(g as usize) {
            None => 1.0,
            Some(p) if p.deadline == Time::NEVER => p.phi,
            Some(p) => {
                if self.now >= p.deadline {
                    return 0.0;
                }
                p.phi * ns_f64(p.deadline.0 - self.now.0) / ns_f64(p.deadline.0 - p.phi_time.0)
            }
        }
    }

    fn settle_pgroup(&mut self, g: u32) {
        let phi = self.pgroup_phi(g);
        let p = &mut self.pgroups[g as usize];
        p.phi = phi;
        p.phi_time = self.now;
    }

    /// The scale `phi` of proportional group `g` now and its members' `w`
    /// summed per link (bytes left on link `l` = `phi * w[l]`); `w` is empty
    /// for a group that never had members.
    pub fn pgroup_link_weights(&self, g: u32) -> (f64, &[f64]) {
        match self.pgroups.get(g as usize) {
            Some(p) => (self.pgroup_phi(g), &p.link_w),
            None => (1.0, &[]),
        }
    }

    /// Puts flow `f` in proportional group `g`: from now on it progresses in
    /// proportion to what it has left, finishing at the group's deadline.
    pub fn join_pgroup(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.fl[fi].group == PROPORTIONAL | g {
            return;
        }
        self.set_solo_rate(f, 0.0);
        if self.pgroups.len() <= g as usize {
            self.pgroups.resize_with(g as usize + 1, PGroup::default);
        }
        let n_links = self.capacity.len();
        let now = self.now;
        if self.pgroups[g as usize].n_members == 0 {
            let p = &mut self.pgroups[g as usize];
            *p = PGroup {
                phi: 1.0,
                phi_time: now,
                deadline: Time::NEVER,
                n_members: 0,
                members: std::mem::take(&mut p.members),
                link_w: std::mem::take(&mut p.link_w),
            };
            p.members.clear();
            p.link_w.clear();
            p.link_w.resize(n_links, 0.0);
            self.active_pgroups.push(g);
        }
        self.settle_pgroup(g);
        if self.pgroups[g as usize].phi < 1e-6 {
            self.renormalize_pgroup(g);
        }
        let sent = self.fl[fi].base;
        let c = self.fl[fi].coflow as usize;
        {
            let ci = &mut self.coflows[c];
            ci.base_sent -= sent;
            ci.n_grouped += 1;
        }
        let path = self.path[fi];
        let (ps, pe) = self.path_range(path);
        let p = &mut self.pgroups[g as usize];
        let w = (self.fl[fi].size - sent) / p.phi;
        for &l in &self.path_links[ps..pe] {
            p.link_w[l.0 as usize] += w;
        }
        p.members.push(f);
        p.n_members += 1;
        self.fl[fi].group = PROPORTIONAL | g;
        self.fl[fi].base = w;
    }

    fn renormalize_pgroup(&mut self, g: u32) {
        let p = &mut self.pgroups[g as usize];
        let phi = p.phi;
        for &f in &p.members {
            if self.fl[f as usize].group == PROPORTIONAL | g {
                self.fl[f as usize].base *= phi;
            }
        }
        for w in &mut p.link_w {
            *w *= phi;
        }
        p.phi = 1.0;
    }

    pub(super) fn leave_pgroup(&mut self, f: usize, g: u32) {
        let (ps, pe) = self.path_range(self.path[f]);
        let w = self.fl[f].base;
        let p = &mut self.pgroups[g as usize];
        for &l in &self.path_links[ps..pe] {
            p.link_w[l.0 as usize] -= w;
        }
        p.n_members -= 1;
        if p.n_members == 0 {
            p.deadline = Time::NEVER;
            p.members.clear();
            self.active_pgroups.retain(|&x| x != g);
        }
    }

    /// Sets the instant all members of proportional group `g` finish
    /// (`Time::NEVER` pauses the group).
    pub fn set_pgroup_deadline(&mut self, g: u32, deadline: Time) {
        if self.pgroups.len() <= g as usize {
            self.pgroups.resize_with(g as usize + 1, PGroup::default);
        }
        self.settle_pgroup(g);
        let p = &mut self.pgroups[g as usize];
        p.deadline = if p.n_members == 0 {
            Time::NEVER
        } else {
            deadline.max(self.now)
        };
    }

    /// Sets the per-member rate of group `g` (bytes per ns).
    pub fn set_group_rate(&mut self, g: u32, bytes_per_ns: f64) {
        self.ensure_group(g);
        self.settle_group(g);
        self.groups[g as usize].rate = bytes_per_ns;
        self.refresh_group(g);
    }
}
