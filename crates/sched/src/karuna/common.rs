//! The state every Karuna-family scheduler shares ([`Core`]): the flows by
//! type, the deadline flows' paced rates, the sieve's demotions, and the
//! allocation that gives each queue strict priority over the next.

use super::*;

/// Whether `sent` bytes reach threshold `t` (within float noise).
pub(super) fn reaches(sent: f64, t: f64) -> bool {
    sent >= t - 1e-6 * t.max(1.0)
}

/// The state and the rule shared by `karuna` and `pias`.
#[derive(Debug)]
pub(super) struct Core {
    pub(super) config: KarunaConfig,
    // Per flow: bytes sent at the last reset (type 3), promotions (type 2),
    // since when it has had rate 0 (NEVER: it has a rate), its MCP rate
    // (bits/s) and when that is next re-evaluated (NEVER: not yet).
    pub(super) offset: Vec<f64>,
    pub(super) promoted: Vec<u8>,
    pub(super) zero_since: Vec<Time>,
    pub(super) mcp: Vec<f64>,
    pub(super) next_eval: Vec<Time>,
    pub(super) order: Vec<(u8, FlowIdx)>,
    pub(super) solver: MaxMin,
    pub(super) residual: Vec<f64>,
    pub(super) fast: QueueDemands,
    // Whether a deadline flow was seen (then every call walks every flow).
    pub(super) general: bool,
}

impl Core {
    pub(super) fn new(config: KarunaConfig) -> Core {
        Core {
            config,
            offset: vec![],
            promoted: vec![],
            zero_since: vec![],
            mcp: vec![],
            next_eval: vec![],
            order: vec![],
            solver: MaxMin::default(),
            residual: vec![],
            fast: QueueDemands::default(),
            general: false,
        }
    }

    /// The flow's type (1, 2, 3) as this scheduler sees it.
    pub(super) fn kind(
        &self,
        obs: &Observed<'_>,
        sizes: Option<&Clairvoyant<'_>>,
        f: FlowIdx,
    ) -> u8 {
        match sizes {
            None => 3,
            Some(_) if obs.deadline(f).is_some() => 1,
            Some(_) if obs.size_known(f) => 2,
            Some(_) => 3,
        }
    }

    /// The queue (0-based) of a type-2 or type-3 flow: by size through the
    /// split thresholds (less its promotions), or by bytes sent since its
    /// last reset through the sieve thresholds.
    pub(super) fn queue(
        &self,
        kind: u8,
        obs: &Observed<'_>,
        sizes: Option<&Clairvoyant<'_>>,
        f: FlowIdx,
    ) -> usize {
        let fi = f as usize;
        if kind == 2 {
            let size = sizes.map_or(0.0, |v| v.size(f));
            let by_size = self.config.split.iter().filter(|&&t| size > t).count();
            let promoted = self.promoted.get(fi).copied().unwrap_or(0);
            self.config.base() + by_size.saturating_sub(usize::from(promoted))
        } else {
            let sent = obs.sent(f) - self.offset.get(fi).copied().unwrap_or(0.0);
            let reached = self.config.sieve.iter().filter(|&&t| reaches(sent, t));
            self.config.base() + reached.count()
        }
    }

    pub(super) fn decide(
        &mut self,
        now: Time,
        obs: Observed<'_>,
        sizes: Option<Clairvoyant<'_>>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let fast = self.config.starvation.is_none();
        if fast && !self.general && obs.fabric().is_big_switch() {
            if let Some(wake) = self.decide_fast(now, obs, sizes, changes, out) {
                return wake;
            }
        }
        let n = obs.n_flows();
        if self.offset.len() < n {
            self.offset.resize(n, 0.0);
            self.promoted.resize(n, 0);
            self.zero_since.resize(n, Time::NEVER);
            self.mcp.resize(n, 0.0);
            self.next_eval.resize(n, Time::NEVER);
        }
        let base = self.config.base();
        let rtt = self.config.rtt.0;
        let floor = self.config.floor_bps();
        self.order.clear();
        for &f in obs.active_flows() {
            let fi = f as usize;
            let kind = self.kind(&obs, sizes.as_ref(), f);
            // Starvation: promote (type 2) or reset (type 3).
            if let Some(t) = self.config.starvation {
                let z = self.zero_since[fi];
                if kind != 1 && z != Time::NEVER && now >= z + t {
                    if kind == 2 {
                        self.promoted[fi] = self.promoted[fi].saturating_add(1);
                    } else {
                        self.offset[fi] = obs.sent(f);
                    }
                    self.zero_since[fi] = now;
                }
            }
            let q = match kind {
                1 => {
                    if self.next_eval[fi] == Time::NEVER || now >= self.next_eval[fi] {
                        let deadline = obs.deadline(f).unwrap_or(Time::NEVER);
                        let rem = sizes.as_ref().map_or(0.0, |v| v.remaining(f));
                        self.mcp[fi] = if deadline > now {
                            (rem * 8e9 / (deadline.0 - now.0) as f64).max(floor)
                        } else {
                            floor
                        };
                        let start = obs.start(f).0;
                        let k = (now.0 - start) / rtt + 1;
                        self.next_eval[fi] = Time(start + k * rtt);
                    }
                    0
                }
                _ => self.queue(kind, &obs, sizes.as_ref(), f),
            };
            self.order.push((q as u8, f));
        }
        self.order.sort_unstable();
        self.residual.clear();
        self.residual.extend_from_slice(obs.capacities());
        let mut i = 0;
        while i < self.order.len() {
            let q = self.order[i].0;
            let j = i + self.order[i..].iter().take_while(|x| x.0 == q).count();
            self.solver.clear();
            for &(_, f) in &self.order[i..j] {
                let cap = if q == 0 && !self.config.all_type3 {
                    self.mcp[f as usize]
                } else {
                    f64::INFINITY
                };
                self.solver.push(obs.path(f).iter().copied(), 1.0, 1, cap);
            }
            let rates = self.solver.solve(&mut self.residual);
            for (&(_, f), &r) in self.order[i..j].iter().zip(rates) {
                out.set_rate(f, r);
                out.set_class(f, u32::from(q));
            }
            i = j;
        }
        // Timers: MCP re-evaluation, starvation, the next sieve threshold.
        let mut wake = Time::NEVER;
        for &(q, f) in &self.order {
            let fi = f as usize;
            let kind = self.kind(&obs, sizes.as_ref(), f);
            let r = out.rate(f);
            if kind == 1 {
                wake = wake.min(self.next_eval[fi]);
                continue;
            }
            if r > 0.0 {
                self.zero_since[fi] = Time::NEVER;
            } else if self.zero_since[fi] == Time::NEVER {
                self.zero_since[fi] = now;
            }
            if let Some(t) = self.config.starvation {
                if self.zero_since[fi] != Time::NEVER {
                    wake = wake.min(self.zero_since[fi] + t);
                }
            }
            if kind == 3 {
                if let Some(&t) = self.config.sieve.get(q as usize - base) {
                    let left = self.offset[fi] + t - obs.sent(f);
                    if let Some(at) = ceil_ns_time(now, left, r / 8e9) {
                        wake = wake.min(at);
                    }
                }
            }
        }
        (wake != Time::NEVER).then_some(wake)
    }
}

impl Core {
    /// [`Core::decide`] from what changed, on the big switch without
    /// starvation; `None` (and no state kept) once a deadline flow shows
    /// up, so the caller falls back to the general walk from then on.
    pub(super) fn decide_fast(
        &mut self,
        now: Time,
        obs: Observed<'_>,
        sizes: Option<Clairvoyant<'_>>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Option<Time>> {
        let mut q = std::mem::take(&mut self.fast);
        q.grow(obs.n_flows(), obs.n_paths());
        let base = self.config.base();
        let fresh = !q.ready || changes.resynced;
        if q.last.solver.is_none() {
            let n = obs.fabric().n_hosts() as usize;
            q.last.solver = Some(BipartiteMaxMin::new(n, n));
            q.last.by_up = vec![vec![]; n];
            q.last.grid = vec![NONE; n * n];
            q.last.grid_side = vec![UNSET; n * n];
            q.last.by_down = vec![vec![]; n];
        }
        if fresh {
            q.last.rated = false;
        }
        let started: &[FlowIdx] = if fresh {
            for &f in obs.active_flows() {
                q.leave(f);
            }
            obs.active_flows()
        } else {
            &changes.started
        };
        if started
            .iter()
            .any(|&f| self.kind(&obs, sizes.as_ref(), f) == 1)
        {
            self.general = true;
            return None;
        }
        q.ready = true;
        for &f in &changes.finished {
            q.leave(f);
        }
        // Flows demoted by bytes sent may have moved if their demand's clock
        // passed their threshold.
        q.joined.clear();
        q.moved.clear();
        q.epoch = q.epoch.wrapping_add(1);
        let sieve = Sieve {
            thresholds: &self.config.sieve,
            offset: &self.offset,
            base,
        };
        q.refresh_soon(sieve);
        // Those whose bound has come, in the order of the full scan (by
        // queue, then by place in it).
        // A demand's (queue, place) is one whole number (`at` is below
        // 2^32), sorted as numbers, not by a key read through each demand.
        let mut looks = std::mem::take(&mut q.looks);
        looks.clear();
        let come = q.soon.partition_point(|&(soon, _)| soon <= now.0);
        looks.extend(q.soon[..come].iter().map(|&(_, d)| {
            let dm = &q.demands[d as usize];
            (u64::from(dm.queue) << 32) | u64::from(dm.at)
        }));
        looks.sort_unstable();
        for &k in &looks {
            let d = q.by_queue[(k >> 32) as usize][(k & u64::from(u32::MAX)) as usize];
            q.look(d, now, &obs, sieve);
        }
        q.looks = looks;
        #[cfg(debug_assertions)]
        q.check_looks(now, &obs, sieve);
        let moved = std::mem::take(&mut q.moved);
        for &f in moved.iter().chain(started) {
            let kind = self.kind(&obs, sizes.as_ref(), f);
            let qu = self.queue(kind, &obs, sizes.as_ref(), f) as u8;
            if q.queue_of(f) != Some(qu) {
                q.leave(f);
                let left = sieve
                    .of_queue(qu as usize)
                    .map(|t| sieve.offset(f) + t - obs.sent(f));
                let p = obs.path_idx(f);
                let ends = grid_ends(obs.path_links(p), obs.fabric().n_hosts());
                q.join(now, f, qu, (p, ends), kind == 3, left);
                out.set_class(f, u32::from(qu));
            }
        }
        q.moved = moved;
        // The queues in order, each max-min on what the ones before left.
        q.residual.clear();
        q.residual.extend_from_slice(obs.capacities());
        q.solver.set_one_by_one(true);
        if fresh {
            q.kept.iter_mut().for_each(|k| k.dirty = true);
        }
        let mut by_levels = false;
        for qu in 0..QUEUES {
            if q.by_queue[qu].is_empty() {
                continue;
            }
            if qu == QUEUES - 1 && q.last.off_grid == 0 {
                q.solve_last(&obs, out);
                by_levels = true;
                continue;
            }
            if qu == QUEUES - 1 {
                q.last.rated = false;
                q.last.made.clear();
            }
            #[cfg(debug_assertions)]
            let before = q.residual.clone();
            if q.kept[qu].replay(&mut q.residual) {
                #[cfg(debug_assertions)]
                q.check_kept(qu, &obs, before);
                continue;
            }
            q.record(qu, &obs);
            let rates = q.solver.solve(&mut q.residual);
            let kept = &mut q.kept[qu];
            kept.after.clear();
            kept.after
                .extend(kept.links.iter().map(|&l| q.residual[l as usize]));
            kept.dirty = false;
            for (k, &r) in rates.iter().enumerate() {
                let d = q.by_queue[qu][k];
                let dm = &mut q.demands[d as usize];
                if dm.rerate(r, now, out) && !dm.stale {
                    dm.stale = true;
                    q.stale.push(d);
                }
            }
        }
        for &f in &q.joined {
            let d = q.demand_of[f as usize];
            let dm = &q.demands[d as usize];
            if by_levels && dm.queue as usize == QUEUES - 1 {
                out.join_group(f, q.port_group(d));
            } else {
                out.set_rate(f, dm.rate);
            }
        }
        #[cfg(debug_assertions)]
        if by_levels {
            q.check_last(&obs, out);
        }
        // The next sieve threshold of every flow that sends: the demands in
        // order of their bound, until the bound is past the earliest found.
        // A demand's crossing found at an earlier call stands while the
        // demand is not re-keyed and the crossing is still ahead
        // ([`QueueDemands::next_at`]).
        q.refresh_soon(sieve);
        let mut wake = Time::NEVER;
        for &(soon, d) in &q.soon {
            if soon >= wake.0 {
                break;
            }
            let kept = q.next_at[d as usize];
            let at = if kept > now.0 {
                Time(kept)
            } else {
                let at = q.next_threshold(d, now, &obs, sieve, out);
                q.next_at[d as usize] = at.0;
                at
            };
            wake = wake.min(at);
        }
        #[cfg(debug_assertions)]
        q.check_next_at(wake, now, &obs, sieve, out);
        self.fast = q;
        Some((wake != Time::NEVER).then_some(wake))
    }
}
