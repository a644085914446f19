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
        let g = self.group[f];
        let sent = if self.active_pos[f] == INACTIVE {
            if self.flags[f] & DONE != 0 {
                self.size[f]
            } else {
                0.0
            }
        } else if g == SOLO {
            self.base[f] + self.rate[f] * self.elapsed(self.base_time[f])
        } else if let Some(pg) = proportional(g) {
            self.size[f] - self.base[f] * self.pgroup_phi(pg)
        } else {
            self.size[f] - (self.base[f] - self.group_clock(g)).max(0.0)
        };
        sent.min(self.size[f])
    }

    pub(super) fn coflow_sent_now(&self, c: usize) -> f64 {
        let i = &self.coflows[c];
        let mut s = i.base_sent + i.solo_rate * self.elapsed(i.base_time);
        if i.n_grouped > 0 {
            for f in (i.first_flow..i.first_flow + i.n_flows).chain(i.later.iter().copied()) {
                let f = f as usize;
                if self.active_pos[f] != INACTIVE && self.group[f] != SOLO {
                    s += self.flow_sent(f);
                }
            }
        }
        s.min(i.size)
    }

    pub(super) fn settle_coflow(&mut self, c: usize) {
        let now = self.now;
        let i = &mut self.coflows[c];
        i.base_sent += i.solo_rate * ns_f64(now.0 - i.base_time.0);
        i.base_time = now;
    }

    pub(super) fn settle_solo(&mut self, f: usize) {
        self.base[f] =
            (self.base[f] + self.rate[f] * self.elapsed(self.base_time[f])).min(self.size[f]);
        self.base_time[f] = self.now;
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
        let g = self.group[f];
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
        let c = self.coflow[f] as usize;
        self.settle_coflow(c);
        let ci = &mut self.coflows[c];
        ci.n_grouped -= 1;
        ci.base_sent += sent;
        self.group[f] = SOLO;
        self.base[f] = sent;
        self.base_time[f] = self.now;
        self.rate[f] = 0.0;
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
        } else {
            self.recompute_head(g);
            self.refresh_group(g);
        }
    }

    /// Sets the rate of solo flow `f` (bytes per ns), taking it out of its
    /// group first. Returns the instant it will finish at this rate.
    pub fn set_solo_rate(&mut self, f: FlowIdx, bytes_per_ns: f64) -> Time {
        let fi = f as usize;
        self.make_solo(fi);
        let c = self.coflow[fi] as usize;
        self.settle_coflow(c);
        self.settle_solo(fi);
        self.coflows[c].solo_rate += bytes_per_ns - self.rate[fi];
        self.rate[fi] = bytes_per_ns;
        self.solo_finish(fi)
    }

    fn solo_finish(&self, f: usize) -> Time {
        let left = self.size[f] - self.base[f];
        if left <= 0.0 {
            return self.now;
        }
        ceil_ns_time(self.now, left, self.rate[f]).unwrap_or(Time::NEVER)
    }

    /// Puts flow `f` in shared group `g` (creating groups up to `g`).
    pub fn join_group(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.group[fi] == g {
            return;
        }
        self.set_solo_rate(f, 0.0);
        let c = self.coflow[fi] as usize;
        let sent = self.base[fi];
        {
            let ci = &mut self.coflows[c];
            ci.base_sent -= sent;
            ci.n_grouped += 1;
        }
        self.ensure_group(g);
        self.settle_group(g);
        let gr = &mut self.groups[g as usize];
        let mark = gr.clock + (self.size[fi] - sent);
        gr.members.push(std::cmp::Reverse((MarkKey(mark), f)));
        gr.head = gr.head.min(mark);
        gr.n_members += 1;
        if gr.n_members == 1 {
            self.group_pos[g as usize] = self.active_groups.len() as u32;
            self.active_groups.push(g);
        }
        self.group[fi] = g;
        self.base[fi] = mark;
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
        if self.group[fi] == PROPORTIONAL | g {
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
        let sent = self.base[fi];
        let c = self.coflow[fi] as usize;
        {
            let ci = &mut self.coflows[c];
            ci.base_sent -= sent;
            ci.n_grouped += 1;
        }
        let path = self.path[fi];
        let (ps, pe) = self.path_range(path);
        let p = &mut self.pgroups[g as usize];
        let w = (self.size[fi] - sent) / p.phi;
        for &l in &self.path_links[ps..pe] {
            p.link_w[l.0 as usize] += w;
        }
        p.members.push(f);
        p.n_members += 1;
        self.group[fi] = PROPORTIONAL | g;
        self.base[fi] = w;
    }

    fn renormalize_pgroup(&mut self, g: u32) {
        let p = &mut self.pgroups[g as usize];
        let phi = p.phi;
        for &f in &p.members {
            if self.group[f as usize] == PROPORTIONAL | g {
                self.base[f as usize] *= phi;
            }
        }
        for w in &mut p.link_w {
            *w *= phi;
        }
        p.phi = 1.0;
    }

    pub(super) fn leave_pgroup(&mut self, f: usize, g: u32) {
        let (ps, pe) = self.path_range(self.path[f]);
        let w = self.base[f];
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
