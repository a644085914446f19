//! The network part on the big switch: subcoflows, classes of equal
//! priority walked in order, and the solver of one class's flows
//! ([`PairSolver`]) with the turn each class last took, so that a class
//! whose subcoflows and links' residuals are unchanged keeps its rates
//! without a solve (the module doc of `dcas`).

use super::*;

/// A subcoflow, as its sender keeps it.
#[derive(Debug, Clone)]
pub(super) struct Subcoflow {
    pub(super) coflow: CoflowIdx,
    pub(super) host: HostId,
    // Unique per subcoflow ever made (messages name a slot and this), or
    // `GONE` once forgotten.
    pub(super) instance: u32,
    pub(super) flows: Vec<FlowIdx>,
    // Each flow's last link, in the order of `flows` (big switch: its
    // downlink), read in a row where the walk lists a class.
    pub(super) lasts: Vec<u32>,
    pub(super) priority: Option<Priority>,
    pub(super) n_served: u32,
    // Its service as its sender's tick clock reads it (`Subcoflow::waited`):
    // the last run of Pseudocode 1 that found it served, or its appearance;
    // when its current service began (None while unserved); when its last
    // service that counts (longer than `SNAP_NS`) ended.
    pub(super) served_at: Time,
    pub(super) served_from: Option<Time>,
    pub(super) served_until: Option<Time>,
    // Its last run of Pseudocode 1 (a tick, or its appearance).
    pub(super) last_run: Time,
    // Runs of Pseudocode 1 so far; the open negotiation's desired priority.
    pub(super) round: u32,
    pub(super) pending: Option<u64>,
    pub(super) feedback: Vec<u64>,
    // The distinct receivers of its flows (recomputed after flows join or
    // leave; shared with its announcements in flight), and the distinct
    // first and last links of their paths (big switch: to skip it when
    // either side is full; recomputed after joins).
    pub(super) receivers: Option<Arc<[HostId]>>,
    pub(super) ends: Option<(Vec<u32>, Vec<u32>)>,
    // Whether no two of its flows share a last link (so, with one first
    // link, no two share a path): found with `ends`; a leave keeps it true.
    pub(super) distinct: bool,
    // When its flows last changed (`Dcas::n_changes` then): a class whose
    // subcoflows all show the stamps of its last turn has the same flows.
    pub(super) changed_at: u64,
    // The bytes its flows had left when Pseudocode 1 last summed them (None
    // after a join or leave); whether a flow of it may have sent since
    // (`moved`: then they are summed again), and whether one had a positive
    // rate at its class's last serve (`sending`; big switch).
    pub(super) rem: Option<f64>,
    pub(super) moved: bool,
    pub(super) sending: bool,
}

impl Subcoflow {
    /// It is served at `now` (a flow of it has a rate above the floor).
    pub(super) fn served(&mut self, now: Time) {
        self.served_from.get_or_insert(now);
    }

    /// It is not served from `now`, having been. Service that lasted no
    /// more than `SNAP_NS` does not count: in exact arithmetic it is an
    /// instant's split (two events of one instant, one reached through
    /// rounded completions, stand a few nanoseconds apart) or too short for
    /// the engine to time.
    pub(super) fn unserved(&mut self, now: Time) {
        if let Some(from) = self.served_from.take() {
            if now.0 - from.0 > SNAP_NS {
                self.served_until = Some(now);
            }
        }
    }

    /// How long it has gone unserved, read at a run of Pseudocode 1 at
    /// `now` (before `last_run` moves to `now`) by its sender's tick clock,
    /// as the host policy reads it ([`crate::dcas::host`]): served at this
    /// run if it had service at any time since its previous run (it is
    /// served now, or its last service ended after that run), and then it
    /// waited 0; else it waited since the last run that found it served,
    /// or since its appearance.
    pub(super) fn waited(&mut self, now: Time) -> Dur {
        if self.served_from.is_some() || self.served_until.is_some_and(|u| u > self.last_run) {
            self.served_at = now;
        }
        now - self.served_at
    }
}

/// One class's last turn on the big switch: its subcoflows (slot and
/// change stamp, in order), the links its flows cross (each once, in the
/// order first met) with their residual before and after it, and the flows
/// it gave a rate.
#[derive(Debug, Default)]
pub(super) struct ClassTurn {
    pub(super) subs: Vec<(u32, u64)>,
    pub(super) links: Vec<u32>,
    pub(super) before: Vec<f64>,
    pub(super) after: Vec<f64>,
    pub(super) members: Vec<FlowIdx>,
    // Each member's path's two links, in a row with `members`.
    pub(super) ends: Vec<(u32, u32)>,
    pub(super) round: u64,
    // Which of `links` were full when listed; where each subcoflow's
    // members end in `members`; whether no two members share a path;
    // whether the lists were made (a turn made anew has none).
    pub(super) full: Vec<bool>,
    pub(super) member_ends: Vec<u32>,
    pub(super) distinct: bool,
    pub(super) listed: bool,
    // The demands [`PairSolver`] made of `members` (kept with the lists).
    pub(super) setup: PairSetup,
}

/// The demands of a class's members as [`PairSolver`] makes them, kept
/// with the class's lists (the same members make the same demands): each
/// demand's two links and count, each member's demand, the solve's links
/// in index order with their demands (`adj[first..end]`, in demand order)
/// and weight. `valid` is false until made and after the lists change.
#[derive(Debug, Default)]
pub(super) struct PairSetup {
    pub(super) ends: Vec<(u32, u32)>,
    pub(super) count: Vec<u32>,
    pub(super) member_demand: Vec<u32>,
    pub(super) live: Vec<u32>,
    pub(super) first: Vec<u32>,
    pub(super) end: Vec<u32>,
    pub(super) weight: Vec<f64>,
    pub(super) adj: Vec<u32>,
    pub(super) valid: bool,
}

/// A class's lists, as [`Dcas::list_class`] makes them.
#[derive(Debug, Default)]
pub(super) struct ClassLists {
    pub(super) links: Vec<u32>,
    pub(super) members: Vec<FlowIdx>,
    pub(super) ends: Vec<(u32, u32)>,
    pub(super) member_ends: Vec<u32>,
}

/// The links of a class's solve beyond which [`coflowkit_alloc::MaxMin`] fills with a heap
/// rather than by scans (its scan limit): [`PairSolver`] repeats the
/// scans' arithmetic, so a class touching more links goes to
/// [`ClassServer::serve_flows`].
pub(super) const SCAN_LINKS: usize = 512;

/// Max-min of one class on the big switch, every flow's path two links
/// (its uplink and downlink): the rates and residuals of
/// [`ClassServer::serve_flows`] to the bit, without its generic solve.
///
/// [`ClassServer::serve_flows`] makes one demand per distinct path (in the
/// order the members first show it, `count` flows each, weight 1, no cap)
/// and [`coflowkit_alloc::MaxMin`] fills them by scans: each step picks the live link of the
/// least `(residual.max(0) / weight, index)`, freezes its unfrozen demands
/// at that level (in demand order) and takes `rate * count` from both links
/// of each. This does the same steps on the same values, with each link's
/// level kept between steps and computed again only when its residual or
/// weight moved (a step then reads the levels, with no division), and no
/// path lists (a demand is its two links). Debug builds solve the class
/// with [`coflowkit_alloc::MaxMin`] too and compare rates and residuals bit for bit.
#[derive(Debug, Default)]
pub(super) struct PairSolver {
    // Per path: the demand it is this solve (valid when `path_stamp` is
    // `epoch`).
    pub(super) path_stamp: Vec<u32>,
    pub(super) path_demand: Vec<u32>,
    pub(super) epoch: u32,
    // Per demand: its rate and whether it is frozen.
    pub(super) rate: Vec<f64>,
    pub(super) frozen: Vec<bool>,
    // Per link: unfrozen weight, level, and its demands (`adj[first..end]`
    // of the class's [`PairSetup`]); valid for the links in `live` (the
    // solve's links not yet left).
    pub(super) link_stamp: Vec<u32>,
    pub(super) weight: Vec<f64>,
    pub(super) level: Vec<f64>,
    pub(super) first: Vec<u32>,
    pub(super) end: Vec<u32>,
    pub(super) live: Vec<u32>,
}

impl PairSolver {
    /// Adds a demand on the links `a` and `b` to `setup` (its `ends`),
    /// counting it on each and putting a link this listing has not seen
    /// yet in `setup.live`.
    #[inline(always)]
    pub(super) fn push_demand(&mut self, setup: &mut PairSetup, (a, b): (u32, u32), epoch: u32) {
        setup.ends.push((a, b));
        for l in [a, b] {
            let li = l as usize;
            if self.link_stamp[li] != epoch {
                self.link_stamp[li] = epoch;
                self.first[li] = 0;
                setup.live.push(l);
            }
            self.first[li] += 1;
        }
    }

    /// Makes `setup` the demands of the class's `members` (each on the
    /// path `ends` gives, in a row with them): one per distinct path in
    /// the order members first show it (with `distinct`, no two members
    /// share a path: one per member, found without looking paths up),
    /// and the links they cross in index order, each with its demands in
    /// demand order and its weight.
    pub(super) fn make_setup(
        &mut self,
        obs: &crate::Observed<'_>,
        members: &[FlowIdx],
        ends: &[(u32, u32)],
        distinct: bool,
        setup: &mut PairSetup,
    ) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.path_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.link_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        setup.ends.clear();
        setup.count.clear();
        setup.member_demand.clear();
        setup.live.clear();
        if distinct {
            for &e in ends {
                self.push_demand(setup, e, epoch);
            }
            setup.count.resize(members.len(), 1);
            setup.member_demand.extend(0..members.len() as u32);
        } else {
            for (&f, &e) in members.iter().zip(ends) {
                let p = obs.path_idx(f) as usize;
                if self.path_stamp[p] != epoch {
                    self.path_stamp[p] = epoch;
                    self.path_demand[p] = setup.ends.len() as u32;
                    self.push_demand(setup, e, epoch);
                    setup.count.push(0);
                }
                let d = self.path_demand[p];
                setup.count[d as usize] += 1;
                setup.member_demand.push(d);
            }
        }
        // Links in index order (ties between levels go to the lower
        // index); `first` becomes each link's start in `adj`.
        setup.live.sort_unstable();
        let mut off = 0u32;
        for &l in &setup.live {
            let li = l as usize;
            let n = self.first[li];
            self.first[li] = off;
            self.end[li] = off;
            self.weight[li] = 0.0;
            off += n;
        }
        setup.adj.clear();
        setup.adj.resize(off as usize, 0);
        for (d, &(a, b)) in setup.ends.iter().enumerate() {
            let wc = 1.0 * f64::from(setup.count[d]);
            for l in [a as usize, b as usize] {
                setup.adj[self.end[l] as usize] = d as u32;
                self.end[l] += 1;
                self.weight[l] += wc;
            }
        }
        setup.first.clear();
        setup.end.clear();
        setup.weight.clear();
        for &l in &setup.live {
            let li = l as usize;
            setup.first.push(self.first[li]);
            setup.end.push(self.end[li]);
            setup.weight.push(self.weight[li]);
        }
        setup.valid = true;
    }

    /// Serves the class of active flows `members` (each on the path
    /// `ends` gives, in a row with them) max-min on `residual`, writing
    /// their rates into `out`, as [`ClassServer::serve_flows`] would (the
    /// members are in `class` already); false (and nothing done) when the
    /// class touches more than [`SCAN_LINKS`] links. With `distinct` (no
    /// two members share a path) each member is its own demand, found
    /// without looking up paths. The demands are `setup`'s when it is
    /// valid (made for these members: debug builds make them anew and
    /// compare), else they are made into it first.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn serve(
        &mut self,
        obs: &crate::Observed<'_>,
        members: &[FlowIdx],
        ends: &[(u32, u32)],
        distinct: bool,
        residual: &mut [f64],
        class: u32,
        out: &mut Allocation,
        setup: &mut PairSetup,
        (flow_round, round, got): (&mut [u64], u64, &mut Vec<f64>),
    ) -> bool {
        if self.path_stamp.len() < obs.n_paths() {
            self.path_stamp.resize(obs.n_paths(), 0);
            self.path_demand.resize(obs.n_paths(), 0);
        }
        if self.link_stamp.len() < residual.len() {
            let n = residual.len();
            self.link_stamp.resize(n, 0);
            self.weight.resize(n, 0.0);
            self.level.resize(n, 0.0);
            self.first.resize(n, 0);
            self.end.resize(n, 0);
        }
        #[cfg(debug_assertions)]
        if setup.valid {
            let mut fresh = PairSetup::default();
            self.make_setup(obs, members, ends, distinct, &mut fresh);
            assert_eq!(fresh.ends, setup.ends, "kept demands' links");
            assert_eq!(fresh.count, setup.count, "kept demands' counts");
            assert_eq!(
                fresh.member_demand, setup.member_demand,
                "kept members' demands"
            );
            assert_eq!(fresh.live, setup.live, "kept links");
            assert_eq!(
                (&fresh.first, &fresh.end),
                (&setup.first, &setup.end),
                "kept runs"
            );
            assert_eq!(fresh.adj, setup.adj, "kept links' demands");
            let same = fresh.weight.iter().zip(&setup.weight);
            assert!(
                same.into_iter().all(|(a, b)| a.to_bits() == b.to_bits()),
                "kept weights"
            );
        }
        if !setup.valid {
            self.make_setup(obs, members, ends, distinct, setup);
        }
        if setup.live.len() > SCAN_LINKS {
            return false;
        }
        #[cfg(debug_assertions)]
        let want = {
            // Demands by path in the order members first show them, each
            // with its members' count, as `ClassServer::serve_flows` makes
            // them; and each member's demand as found here.
            let mut solver = coflowkit_alloc::MaxMin::default();
            let mut demand_of = vec![u32::MAX; obs.n_paths()];
            let mut counts: Vec<u32> = vec![];
            for (&f, &(a, b)) in members.iter().zip(ends) {
                let p = obs.path_idx(f) as usize;
                let links: Vec<u32> = obs.path_links(p as u32).iter().map(|l| l.0).collect();
                assert_eq!(links, [a, b], "links of member {f}");
                if demand_of[p] == u32::MAX {
                    demand_of[p] = counts.len() as u32;
                    counts.push(0);
                }
                counts[demand_of[p] as usize] += 1;
            }
            for (&f, &d) in members.iter().zip(&setup.member_demand) {
                let p = obs.path_idx(f);
                assert_eq!(demand_of[p as usize], d, "demand of member {f}");
                if d as usize == solver.len() {
                    let links = obs.path_links(p).iter().copied();
                    assert_eq!(
                        setup.count[d as usize], counts[d as usize],
                        "count of demand {d}"
                    );
                    solver.push(links, 1.0, counts[d as usize], f64::INFINITY);
                }
            }
            let mut after = residual.to_vec();
            let rates = solver.solve(&mut after).to_vec();
            (rates, after)
        };
        // Each link's demands, weight and level.
        self.live.clear();
        self.live.extend_from_slice(&setup.live);
        for (i, &l) in setup.live.iter().enumerate() {
            let li = l as usize;
            self.first[li] = setup.first[i];
            self.end[li] = setup.end[i];
            self.weight[li] = setup.weight[i];
            self.level[li] = residual[li].max(0.0) / setup.weight[i];
        }
        let n = setup.ends.len();
        self.rate.clear();
        self.rate.resize(n, 0.0);
        self.frozen.clear();
        self.frozen.resize(n, false);
        let mut level: f64 = 0.0;
        let mut n_frozen = 0;
        while n_frozen < n {
            // The live link of the least (level, index); links with no
            // unfrozen weight leave.
            let (mut best, mut best_l) = (f64::INFINITY, NO_LINK);
            let mut k = 0;
            for i in 0..self.live.len() {
                let l = self.live[i];
                if self.weight[l as usize] <= 1e-12 {
                    continue;
                }
                self.live[k] = l;
                k += 1;
                let lv = self.level[l as usize];
                if lv < best {
                    (best, best_l) = (lv, l);
                }
            }
            self.live.truncate(k);
            if best_l == NO_LINK {
                break;
            }
            level = level.max(best);
            let l = best_l as usize;
            // `MaxMin`'s rate of a demand of weight 1 with no cap.
            #[allow(clippy::manual_clamp)]
            let r = (1.0 * level).min(f64::INFINITY).max(0.0);
            // The picked link's residual is taken from by each of its
            // demands in turn (the same steps, held in a register rather
            // than stored and loaded back per demand); its weight is not
            // read again (it leaves: 0 below).
            let mut residual_l = residual[l];
            for i in self.first[l] as usize..self.end[l] as usize {
                let d = setup.adj[i] as usize;
                if std::mem::replace(&mut self.frozen[d], true) {
                    continue;
                }
                n_frozen += 1;
                self.rate[d] = r;
                let count = f64::from(setup.count[d]);
                let (wc, use_) = (1.0 * count, r * count);
                residual_l -= use_;
                if residual_l < 0.0 {
                    residual_l = 0.0;
                }
                // Its other link: residual, weight and level (no path is
                // one link twice: `all_pairs`).
                let (a, b) = setup.ends[d];
                let m = if a as usize == l { b } else { a } as usize;
                residual[m] -= use_;
                if residual[m] < 0.0 {
                    residual[m] = 0.0;
                }
                self.weight[m] -= wc;
                if self.weight[m] > 1e-12 {
                    self.level[m] = residual[m].max(0.0) / self.weight[m];
                }
            }
            residual[l] = residual_l;
            self.weight[l] = 0.0;
        }
        // Each member's rate as `out` holds it (set now, or kept within
        // float noise) in a row in `got`, and marked given one in `round`,
        // while its entries are at hand.
        got.clear();
        for (&f, &d) in members.iter().zip(&setup.member_demand) {
            out.set_rate(f, self.rate[d as usize]);
            flow_round[f as usize] = round;
            got.push(out.rate(f));
            debug_assert_eq!(out.class(f), class, "class of member {f}");
        }
        #[cfg(debug_assertions)]
        {
            for (&f, &d) in members.iter().zip(&setup.member_demand) {
                let (got, exp) = (self.rate[d as usize], want.0[d as usize]);
                assert_eq!(got.to_bits(), exp.to_bits(), "rate of flow {f}");
            }
            let same = residual.iter().zip(&want.1);
            assert!(
                same.into_iter().all(|(a, b)| a.to_bits() == b.to_bits()),
                "residuals of the class's solve"
            );
        }
        true
    }
}
