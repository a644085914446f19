//! How a queue's demands follow the flows (start, finish, demotion, a
//! deadline's pace) and are solved max-min on what the queues before it
//! left, re-solving only what an event reaches.

use super::*;

impl QueueDemands {
    pub(super) fn grow(&mut self, n_flows: usize, n_paths: usize) {
        if self.demand_of.len() < n_flows {
            self.demand_of.resize(n_flows, NONE);
            self.slot.resize(n_flows, 0);
            self.sieved.resize(n_flows, false);
            self.due_key.resize(n_flows, NO_KEY);
            self.sent.resize(n_flows, (0, 0.0));
        }
        if self.index.len() < n_paths * QUEUES {
            self.index.resize(n_paths * QUEUES, NONE);
        }
    }

    pub(super) fn leave(&mut self, f: FlowIdx) {
        let d = self.demand_of[f as usize];
        if d == NONE {
            return;
        }
        self.demand_of[f as usize] = NONE;
        let dm = &mut self.demands[d as usize];
        dm.n_sieved -= u32::from(self.sieved[f as usize]);
        let key = std::mem::replace(&mut self.due_key[f as usize], NO_KEY);
        if key != NO_KEY {
            dm.due_remove(key, f);
        }
        self.kept[dm.queue as usize].dirty = true;
        if dm.queue as usize == QUEUES - 1 {
            self.last.count(dm.ends, false);
        }
        let i = self.slot[f as usize] as usize;
        dm.members.swap_remove(i);
        if let Some(&g) = dm.members.get(i) {
            self.slot[g as usize] = i as u32;
        }
        if dm.members.is_empty() {
            if dm.queue as usize == QUEUES - 1 {
                if let Some((s, t)) = dm.ends {
                    let (ua, da) = (dm.up_at as usize, dm.down_at as usize);
                    let last = &mut self.last;
                    let cell = &mut last.grid[s as usize * last.by_up.len() + t as usize];
                    if *cell == d {
                        *cell = NONE;
                    }
                    last.by_up[s as usize].swap_remove(ua);
                    if let Some(e) = last.by_up[s as usize].get(ua) {
                        self.demands[e.demand as usize].up_at = ua as u32;
                    }
                    last.by_down[t as usize].swap_remove(da);
                    if let Some(e) = last.by_down[t as usize].get(da) {
                        self.demands[e.demand as usize].down_at = da as u32;
                    }
                }
            }
            let dm = &self.demands[d as usize];
            let (q, at) = (dm.queue as usize, dm.at as usize);
            self.index[dm.path as usize * QUEUES + q] = NONE;
            self.by_queue[q].swap_remove(at);
            if let Some(&e) = self.by_queue[q].get(at) {
                self.demands[e as usize].at = at as u32;
            }
            self.free.push(d);
        }
        self.touch(d);
    }

    /// Puts `f` in the demand of (`queue`, `path`) at `now` (`path` with
    /// its [`grid_ends`]); a sieved flow that has a threshold `left` bytes
    /// ahead (after its bytes sent) is due when the demand's clock has run
    /// those bytes.
    pub(super) fn join(
        &mut self,
        now: Time,
        f: FlowIdx,
        queue: u8,
        (path, ends): (PathIdx, Option<(u32, u32)>),
        sieved: bool,
        left: Option<f64>,
    ) {
        let key = path as usize * QUEUES + queue as usize;
        let mut d = self.index[key];
        if d == NONE {
            d = self.free.pop().unwrap_or_else(|| {
                self.demands.push(Demand {
                    soon: NO_KEY,
                    ..Demand::default()
                });
                (self.demands.len() - 1) as u32
            });
            self.index[key] = d;
            let q = &mut self.by_queue[queue as usize];
            let dm = &mut self.demands[d as usize];
            dm.queue = queue;
            dm.path = path;
            dm.ends = ends;
            if let (Some((s, t)), true) = (ends, queue as usize == QUEUES - 1) {
                let last = &mut self.last;
                let cell = &mut last.grid[s as usize * last.by_up.len() + t as usize];
                if *cell == NONE {
                    *cell = d;
                    last.grid_side[s as usize * last.by_up.len() + t as usize] = UNSET;
                } else {
                    last.grid_shared = true;
                }
                dm.up_at = last.by_up[s as usize].len() as u32;
                dm.down_at = last.by_down[t as usize].len() as u32;
                last.by_up[s as usize].push(Listed {
                    demand: d,
                    other: t,
                    side: UNSET,
                });
                last.by_down[t as usize].push(Listed {
                    demand: d,
                    other: s,
                    side: UNSET,
                });
                last.made.push(d);
            }
            dm.side = UNSET;
            dm.rate = f64::NAN;
            dm.at = q.len() as u32;
            dm.v = 0.0;
            dm.v_time = now;
            q.push(d);
        }
        self.kept[queue as usize].dirty = true;
        if queue as usize == QUEUES - 1 {
            self.last.count(ends, true);
        }
        let dm = &mut self.demands[d as usize];
        self.sieved[f as usize] = sieved;
        dm.n_sieved += u32::from(sieved);
        self.demand_of[f as usize] = d;
        self.slot[f as usize] = dm.members.len() as u32;
        dm.members.push(f);
        if let Some(left) = left.filter(|_| sieved) {
            let key = (dm.clock(now) + left).max(0.0).to_bits();
            dm.due_insert(key, f);
            self.due_key[f as usize] = key;
        }
        self.touch(d);
        self.joined.push(f);
    }

    /// Says that demand `d`'s key in `soon` may be stale.
    pub(super) fn touch(&mut self, d: u32) {
        let dm = &mut self.demands[d as usize];
        if !dm.stale {
            dm.stale = true;
            self.stale.push(d);
        }
    }

    /// Gives every stale demand its key in `soon` anew (none if it does not
    /// send, has no sieved member or its queue no threshold). `soon` is a
    /// sorted list, not a B-tree: an upper queue's solve re-keys thousands
    /// of demands at once (FB2010's 21,168-flow coflow is as many one-flow
    /// demands), and a few ordinary events re-key a handful of a list of
    /// about 150, so the old entries are taken out and the new ones merged
    /// in one pass over the list (a few of them by binary search and a
    /// shift) instead of a tree remove and insert per demand. The list is
    /// the B-tree's in the same order, `(key, demand)`, so every reader
    /// walks what it walked.
    pub(super) fn refresh_soon(&mut self, sieve: Sieve<'_>) {
        self.soon_gone.clear();
        self.soon_new.clear();
        if self.next_at.len() < self.demands.len() {
            self.next_at.resize(self.demands.len(), 0);
        }
        for &d in &self.stale {
            self.next_at[d as usize] = 0;
            let dm = &mut self.demands[d as usize];
            dm.stale = false;
            if dm.soon != NO_KEY {
                self.soon_gone.push((dm.soon, d));
                dm.soon = NO_KEY;
            }
            if let (Some(t), Some((least, _))) = (sieve.of_queue(dm.queue as usize), dm.least) {
                if sends(dm.rate) && !dm.members.is_empty() {
                    dm.soon = dm.soon(f64::from_bits(least), t);
                    self.soon_new.push((dm.soon, d));
                }
            }
        }
        self.stale.clear();
        let (gone, new) = (&mut self.soon_gone, &mut self.soon_new);
        if gone.len() + new.len() <= SOON_SHIFTS {
            for x in gone.iter() {
                let at = self.soon.binary_search(x).expect("listed in soon");
                self.soon.remove(at);
            }
            for &x in new.iter() {
                let at = self.soon.binary_search(&x).unwrap_err();
                self.soon.insert(at, x);
            }
        } else {
            // The old entries are found by a mark on their demand (a
            // demand has one entry at most), not by sorting them.
            if self.soon_out.len() < self.demands.len() {
                self.soon_out.resize(self.demands.len(), false);
            }
            for &(_, d) in gone.iter() {
                self.soon_out[d as usize] = true;
            }
            new.sort_unstable();
            let merged = &mut self.soon_merged;
            merged.clear();
            merged.reserve(self.soon.len() + new.len());
            let (mut g, mut k) = (0, 0);
            for &x in &self.soon {
                let out = &mut self.soon_out[x.1 as usize];
                if *out {
                    *out = false;
                    g += 1;
                    continue;
                }
                while let Some(&y) = new.get(k).filter(|&&y| y < x) {
                    merged.push(y);
                    k += 1;
                }
                merged.push(x);
            }
            debug_assert_eq!(g, gone.len(), "a stale entry not in soon");
            merged.extend_from_slice(&new[k..]);
            std::mem::swap(&mut self.soon, merged);
        }
        debug_assert!(
            self.soon.windows(2).all(|w| w[0] < w[1]),
            "soon out of order"
        );
    }

    /// Pushes queue `qu`'s demands into the solver and records the links
    /// they cross and the residual on them before the solve.
    pub(super) fn record(&mut self, qu: usize, obs: &Observed<'_>) {
        if self.link_stamp.len() < self.residual.len() {
            self.link_stamp.resize(self.residual.len(), 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.link_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.stamp = 1;
        }
        let kept = &mut self.kept[qu];
        kept.links.clear();
        self.solver.clear();
        for &d in &self.by_queue[qu] {
            let dm = &self.demands[d as usize];
            let path = obs.path_links(dm.path);
            for &LinkId(l) in path {
                let s = &mut self.link_stamp[l as usize];
                if *s != self.stamp {
                    *s = self.stamp;
                    kept.links.push(l);
                }
            }
            self.solver.push(
                path.iter().copied(),
                1.0,
                dm.members.len() as u32,
                f64::INFINITY,
            );
        }
        kept.before.clear();
        kept.before
            .extend(kept.links.iter().map(|&l| self.residual[l as usize]));
    }

    /// [`MaxMin`] one by one on queue `qu`'s demands: the slow reference
    /// the debug checks below solve.
    #[cfg(debug_assertions)]
    pub(super) fn reference_solver(&self, qu: usize, obs: &Observed<'_>) -> MaxMin {
        let mut solver = MaxMin::default();
        solver.set_one_by_one(true);
        for &d in &self.by_queue[qu] {
            let dm = &self.demands[d as usize];
            let path = obs.path_links(dm.path).iter().copied();
            solver.push(path, 1.0, dm.members.len() as u32, f64::INFINITY);
        }
        solver
    }

    /// The slow reference for a replayed queue: solving it afresh from the
    /// residual it saw (`before`) gives its demands' kept rates and the
    /// residual the replay left, to the bit.
    #[cfg(debug_assertions)]
    pub(super) fn check_kept(&mut self, qu: usize, obs: &Observed<'_>, mut before: Vec<f64>) {
        let mut solver = self.reference_solver(qu, obs);
        let rates = solver.solve(&mut before);
        for (&d, &r) in self.by_queue[qu].iter().zip(rates) {
            let kept = self.demands[d as usize].rate;
            assert_eq!(kept.to_bits(), r.to_bits(), "queue {qu}: kept rate");
        }
        let same = before
            .iter()
            .zip(&self.residual)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "queue {qu}: kept residual");
    }

    /// The last queue's rates from the port levels over the residual the
    /// queues before it left (`residual` is left as it was: nothing
    /// follows), handed to `out` as port group rates ([`LastQueue`]). The
    /// members that joined a demand of it in this call join its group in
    /// [`Core::decide_fast`].
    pub(super) fn solve_last(&mut self, obs: &Observed<'_>, out: &mut Allocation) {
        let last = &mut self.last;
        let m = last.solver.as_mut().expect("made at the first call");
        let n = obs.fabric().n_hosts() as usize;
        last.up.clear();
        last.up
            .extend((0..n).map(|h| self.residual[2 * h].max(0.0)));
        last.down.clear();
        last.down
            .extend((0..n).map(|h| self.residual[2 * h + 1].max(0.0)));
        m.solve(
            &last.up,
            &last.down,
            &mut last.up_level,
            &mut last.down_level,
        );
        let qu = QUEUES - 1;
        let rated = last.rated;
        for p in 0..n {
            let (a, b) = (last.up_level[p], last.down_level[p]);
            if !rated || a.to_bits() != last.prev_up[p].to_bits() {
                out.set_group_rate(p as u32, group_rate(a));
            }
            if !rated || b.to_bits() != last.prev_down[p].to_bits() {
                out.set_group_rate((n + p) as u32, group_rate(b));
            }
        }
        if rated {
            // Only a demand at a port whose level moved, or a new one, can
            // have another bottleneck.
            let mut flips = std::mem::take(&mut self.last.flips);
            flips.clear();
            if self.last.grid_shared {
                self.flips_by_walk(n, &mut flips);
            } else {
                self.flips_by_levels(n, &mut flips);
                #[cfg(debug_assertions)]
                {
                    let mut walk = vec![];
                    self.flips_by_walk(n, &mut walk);
                    assert_eq!(flips, walk, "last queue: the flipped bottlenecks");
                }
            }
            for &(_, _, _, d) in &flips {
                let side = self.bottleneck(d);
                self.move_to(d, side, out);
            }
            self.last.flips = flips;
            for k in 0..self.last.made.len() {
                let d = self.last.made[k];
                let dm = &self.demands[d as usize];
                if dm.queue as usize != qu || dm.members.is_empty() {
                    continue; // freed (or made again elsewhere) since it was listed
                }
                let side = self.bottleneck(d);
                if side != dm.side {
                    self.move_to(d, side, out);
                }
            }
        } else {
            // Every member into its group afresh; a rate of NaN makes a
            // later `MaxMin` solve of the queue (a member off the grid)
            // write every member's rate.
            for k in 0..self.by_queue[qu].len() {
                let d = self.by_queue[qu][k];
                self.demands[d as usize].rate = f64::NAN;
                let side = self.bottleneck(d);
                self.move_to(d, side, out);
            }
        }
        let last = &mut self.last;
        last.made.clear();
        last.rated = true;
        last.prev_up.clone_from(&last.up_level);
        last.prev_down.clone_from(&last.down_level);
    }

    /// The side of last-queue demand `d`'s bottleneck port at the last
    /// solve's levels (its ingress when the two tie).
    pub(super) fn bottleneck(&self, d: u32) -> u8 {
        let (s, t) = self.demands[d as usize].ends.expect("on the grid");
        if self.last.up_level[s as usize] <= self.last.down_level[t as usize] {
            UP
        } else {
            DOWN
        }
    }

    /// The rate group of last-queue demand `d`'s members: its `side` port's.
    pub(super) fn port_group(&self, d: u32) -> u32 {
        let dm = &self.demands[d as usize];
        let (s, t) = dm.ends.expect("on the grid");
        match dm.side {
            UP => s,
            _ => self.last.by_up.len() as u32 + t,
        }
    }

    /// The last-queue demands whose bottleneck side flipped in this solve,
    /// in the order of a walk of the lists of every ingress port whose
    /// level moved, then of every egress port whose level moved (a
    /// demand's members are in its ingress port's group while that port's
    /// level is at most its egress port's): the slow reference, and the
    /// way when two demands share a pair of ports.
    pub(super) fn flips_by_walk(&self, n: usize, flips: &mut Vec<Flip>) {
        let last = &self.last;
        let moved = |level: &[f64], prev: &[f64], p: usize| level[p].to_bits() != prev[p].to_bits();
        for (pass, from_up) in [(0, true), (1, false)] {
            for p in 0..n {
                let (list, level, prev) = if from_up {
                    (&last.by_up[p], &last.up_level, &last.prev_up)
                } else {
                    (&last.by_down[p], &last.down_level, &last.prev_down)
                };
                if !moved(level, prev, p) {
                    continue;
                }
                for (k, e) in list.iter().enumerate() {
                    let (s, t) = if from_up {
                        (p, e.other as usize)
                    } else {
                        (e.other as usize, p)
                    };
                    if !from_up && moved(&last.up_level, &last.prev_up, s) {
                        continue; // met in the first pass
                    }
                    let side = if last.up_level[s] <= last.down_level[t] {
                        UP
                    } else {
                        DOWN
                    };
                    if side != e.side {
                        flips.push((pass, p as u32, k as u32, e.demand));
                    }
                }
            }
        }
    }

    /// [`QueueDemands::flips_by_walk`]'s list without the walk. A pair's
    /// side is a comparison of its ports' levels, and before this solve it
    /// was that comparison at the last solve's levels (or unset: a demand
    /// made since). So a demand with a side flips only if one of its ports
    /// moved: an ingress port `s` moved from `a` to `b`, with its egress
    /// port's level `c` unmoved, flips exactly when `min(a, b) <= c <
    /// max(a, b)`; an egress port moved from `a` to `b`, with its ingress
    /// port's level `u` unmoved, when `min(a, b) < u <= max(a, b)`. Those
    /// ranges are read off each side's ports sorted by level (the solve's
    /// freeze order, where levels only rise, then the unfrozen ports), the
    /// pairs of two moved ports are looked at directly, and the demands
    /// made since the last solve are listed at their moved ports. Debug
    /// builds hold the list against the walk.
    pub(super) fn flips_by_levels(&mut self, n: usize, flips: &mut Vec<Flip>) {
        let last = &mut self.last;
        let m = last.solver.as_ref().expect("made at the first call");
        last.sorted_up.clear();
        last.sorted_down.clear();
        for (p, level) in m.frozen() {
            if p < n {
                last.sorted_up.push((level, p as u32));
            } else {
                last.sorted_down.push((level, (p - n) as u32));
            }
        }
        for p in 0..n {
            if last.up_level[p] == f64::INFINITY {
                last.sorted_up.push((f64::INFINITY, p as u32));
            }
            if last.down_level[p] == f64::INFINITY {
                last.sorted_down.push((f64::INFINITY, p as u32));
            }
        }
        debug_assert!(last.sorted_up.windows(2).all(|w| w[0].0 <= w[1].0));
        debug_assert!(last.sorted_down.windows(2).all(|w| w[0].0 <= w[1].0));
        last.moved_up.clear();
        last.moved_up.extend(
            last.up_level
                .iter()
                .zip(&last.prev_up)
                .map(|(a, b)| a.to_bits() != b.to_bits()),
        );
        last.moved_down.clear();
        last.moved_down.extend(
            last.down_level
                .iter()
                .zip(&last.prev_down)
                .map(|(a, b)| a.to_bits() != b.to_bits()),
        );
        last.down_moved.clear();
        last.down_moved
            .extend((0..n as u32).filter(|&t| last.moved_down[t as usize]));
        let last = &self.last;
        let flipped = |s: usize, t: usize| {
            let d = last.grid[s * n + t];
            if d == NONE {
                return None;
            }
            let side = if last.up_level[s] <= last.down_level[t] {
                UP
            } else {
                DOWN
            };
            debug_assert_eq!(last.grid_side[s * n + t], self.demands[d as usize].side);
            (side != last.grid_side[s * n + t]).then(|| &self.demands[d as usize])
        };
        for s in (0..n).filter(|&s| last.moved_up[s]) {
            let (a, b) = (last.prev_up[s], last.up_level[s]);
            let (lo, hi) = (a.min(b), a.max(b));
            let sorted = &last.sorted_down;
            let from = sorted.partition_point(|x| x.0 < lo);
            let to = sorted.partition_point(|x| x.0 < hi);
            let unmoved = sorted[from..to]
                .iter()
                .map(|x| x.1 as usize)
                .filter(|&t| !last.moved_down[t]);
            let moved = last.down_moved.iter().map(|&t| t as usize);
            for t in unmoved.chain(moved) {
                if let Some(dm) = flipped(s, t) {
                    flips.push((0, s as u32, dm.up_at, last.grid[s * n + t]));
                }
            }
        }
        for &t in &last.down_moved {
            let t = t as usize;
            let (a, b) = (last.prev_down[t], last.down_level[t]);
            let (lo, hi) = (a.min(b), a.max(b));
            let sorted = &last.sorted_up;
            let from = sorted.partition_point(|x| x.0 <= lo);
            let to = sorted.partition_point(|x| x.0 <= hi);
            for s in sorted[from..to].iter().map(|x| x.1 as usize) {
                if last.moved_up[s] {
                    continue;
                }
                if let Some(dm) = flipped(s, t) {
                    flips.push((1, t as u32, dm.down_at, last.grid[s * n + t]));
                }
            }
        }
        for &d in &last.made {
            let dm = &self.demands[d as usize];
            if dm.queue as usize != QUEUES - 1 || dm.members.is_empty() || dm.side != UNSET {
                continue;
            }
            let (s, t) = dm.ends.expect("on the grid");
            if last.moved_up[s as usize] {
                flips.push((0, s, dm.up_at, d));
            } else if last.moved_down[t as usize] {
                flips.push((1, t, dm.down_at, d));
            }
        }
        flips.sort_unstable();
        flips.dedup();
    }

    /// Puts the members of last-queue demand `d` in the group of its
    /// `side` port, and says so in its ports' lists.
    pub(super) fn move_to(&mut self, d: u32, side: u8, out: &mut Allocation) {
        let dm = &mut self.demands[d as usize];
        let (s, t) = dm.ends.expect("on the grid");
        dm.side = side;
        let cell = s as usize * self.last.by_up.len() + t as usize;
        if self.last.grid[cell] == d {
            self.last.grid_side[cell] = side;
        }
        self.last.by_up[s as usize][dm.up_at as usize].side = side;
        self.last.by_down[t as usize][dm.down_at as usize].side = side;
        let g = self.port_group(d);
        for &f in &self.demands[d as usize].members {
            out.join_group(f, g);
        }
    }

    /// The slow reference for the last queue: [`MaxMin`] on its demands
    /// gives the same rates to 1e-9 relative (and 1e-3 bit/s absolute), and
    /// each member is in the group of its demand's bottleneck port, whose
    /// rate is that port's level (as if every port and demand were rated
    /// afresh).
    #[cfg(debug_assertions)]
    pub(super) fn check_last(&self, obs: &Observed<'_>, out: &Allocation) {
        let qu = QUEUES - 1;
        let mut solver = self.reference_solver(qu, obs);
        let mut residual = self.residual.clone();
        let rates = solver.solve(&mut residual);
        let last = &self.last;
        for (&d, &want) in self.by_queue[qu].iter().zip(rates) {
            let dm = &self.demands[d as usize];
            assert_eq!(dm.side, self.bottleneck(d), "last queue: a stale side");
            let g = self.port_group(d);
            for &f in &dm.members {
                assert_eq!(out.group(f), g, "last queue: a member out of its group");
            }
            let (s, t) = dm.ends.expect("on the grid");
            let all = last.up_level[s as usize].min(last.down_level[t as usize]);
            let got = out.group_rate(g);
            assert_eq!(got.to_bits(), all.to_bits(), "last queue: a stale rate");
            let tol = 1e-3 + 1e-9 * want.abs();
            assert!(
                (got - want).abs() <= tol,
                "last queue: {got} against {want}"
            );
        }
    }
    /// Looks at the sieved members of demand `d` whose threshold its clock
    /// may have reached, each by its bytes sent (kept for this call), and
    /// lists those whose queue is no longer `d`'s in `moved`.
    pub(super) fn look(&mut self, d: u32, now: Time, obs: &Observed<'_>, sieve: Sieve<'_>) {
        let dm = &self.demands[d as usize];
        let qu = dm.queue as usize;
        let Some(t) = sieve.of_queue(qu) else {
            return;
        };
        if !sends(dm.rate) || dm.least.is_none() {
            return;
        }
        let slack = CLOCK_SLACK + 1e-6 * t.max(1.0);
        for f in dm.due_by(dm.clock(now), slack) {
            let fi = f as usize;
            let sent = obs.sent(f);
            self.sent[fi] = (self.epoch, sent);
            let off = sieve.offset(f);
            let reached = sieve.thresholds.iter().filter(|&&t| reaches(sent - off, t));
            if sieve.base + reached.count() != qu {
                self.moved.push(f);
            }
        }
    }

    /// The slow reference for `soon`'s looks: looking at every demand, in
    /// queue order, lists the same flows as moved.
    #[cfg(debug_assertions)]
    pub(super) fn check_looks(&mut self, now: Time, obs: &Observed<'_>, sieve: Sieve<'_>) {
        let fast = std::mem::take(&mut self.moved);
        let all: Vec<u32> = self.by_queue.iter().flatten().copied().collect();
        for d in all {
            self.look(d, now, obs, sieve);
        }
        assert_eq!(fast, self.moved, "the flows demoted by bytes sent");
    }

    /// The first instant a member of demand `d` near its least reading
    /// reaches its queue's threshold by its bytes sent, at its rate in
    /// `out` (`Time::NEVER`: none).
    pub(super) fn next_threshold(
        &self,
        d: u32,
        now: Time,
        obs: &Observed<'_>,
        sieve: Sieve<'_>,
        out: &Allocation,
    ) -> Time {
        let dm = &self.demands[d as usize];
        let Some(t) = sieve.of_queue(dm.queue as usize) else {
            return Time::NEVER;
        };
        let Some((least, _)) = dm.least.filter(|_| sends(dm.rate)) else {
            return Time::NEVER;
        };
        let mut wake = Time::NEVER;
        for f in dm.due_by(f64::from_bits(least), 2.0 * CLOCK_SLACK) {
            let fi = f as usize;
            let sent = match self.sent[fi] {
                (e, sent) if e == self.epoch => sent,
                _ => obs.sent(f),
            };
            let off = sieve.offset(f);
            if let Some(at) = ceil_ns_time(now, off + t - sent, out.rate(f) / 8e9) {
                wake = wake.min(at);
            }
        }
        wake
    }

    /// The slow reference for the walk's `wake`: every demand's crossing
    /// found afresh now, a kept one within [`SNAP_NS`] of it (the same
    /// instant, read at another call: the rounding to the nanosecond may
    /// fall the other way), and `wake` the least of the crossings the walk
    /// would read (kept where kept).
    #[cfg(debug_assertions)]
    pub(super) fn check_next_at(
        &self,
        wake: Time,
        now: Time,
        obs: &Observed<'_>,
        sieve: Sieve<'_>,
        out: &Allocation,
    ) {
        let mut by_scan = Time::NEVER;
        for &d in self.by_queue.iter().flatten() {
            let fresh = self.next_threshold(d, now, obs, sieve, out);
            let kept = self.next_at[d as usize];
            let listed = self.demands[d as usize].soon != NO_KEY;
            let at = if listed && kept > now.0 {
                assert!(
                    kept.abs_diff(fresh.0) <= SNAP_NS,
                    "demand {d}: kept crossing {kept} ns, found afresh {} ns",
                    fresh.0
                );
                Time(kept)
            } else {
                fresh
            };
            by_scan = by_scan.min(at);
        }
        assert_eq!(wake, by_scan, "the next sieve threshold");
    }

    pub(super) fn queue_of(&self, f: FlowIdx) -> Option<u8> {
        let d = self.demand_of[f as usize];
        (d != NONE).then(|| self.demands[d as usize].queue)
    }
}
