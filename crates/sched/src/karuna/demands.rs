//! One queue's demands ([`Demand`], [`QueueDemands`]), the last queue's
//! kept groups ([`LastQueue`]) and the solve a queue keeps while its
//! demands and the residual before it are unchanged ([`KeptSolve`]).

use super::*;

/// One queue's flows on one path: a demand of the queue's max-min.
#[derive(Debug, Default)]
pub(super) struct Demand {
    pub(super) queue: u8,
    pub(super) path: PathIdx,
    pub(super) members: Vec<FlowIdx>,
    // The per-flow rate of the last solve (NaN: none yet).
    pub(super) rate: f64,
    // Members demoted by bytes sent (type 3).
    pub(super) n_sieved: u32,
    // Position in `QueueDemands::by_queue[queue]`.
    pub(super) at: u32,
    // The (ingress, egress) ports of its path, if it is one of those two,
    // and its places in `LastQueue::by_up` and `by_down` (last queue only).
    pub(super) ends: Option<(u32, u32)>,
    pub(super) up_at: u32,
    pub(super) down_at: u32,
    // Last queue, solved by port levels: the port whose rate group its
    // members are in (`UP`: ingress, `DOWN`: egress, `UNSET`: none yet).
    pub(super) side: u8,
    // Bytes each member has sent since the demand was made, as of `v_time`
    // (every member sends at `rate`): the demand's clock.
    pub(super) v: f64,
    pub(super) v_time: Time,
    // The sieved members below the last queue by the clock's reading at
    // which they reach the queue's threshold (bits of a non-negative f64):
    // the first in `least`, the others in `due`. A one-member demand (most
    // of FB2010's, one per flow of a wide coflow) then never makes a node
    // of the set, nor searches or frees one as its member comes and goes.
    pub(super) due: BTreeSet<(u64, FlowIdx)>,
    pub(super) least: Option<(u64, FlowIdx)>,
    // Its key in `QueueDemands::soon` (NO_KEY: not there), and whether that
    // key may be stale (it is then in `QueueDemands::stale`).
    pub(super) soon: u64,
    pub(super) stale: bool,
}

impl Demand {
    /// Gives the demand rate `r` from `now` (unless it has it to the bit):
    /// its clock carried to `now`, each member's rate set in `out`. True if
    /// the rate changed.
    pub(super) fn rerate(&mut self, r: f64, now: Time, out: &mut Allocation) -> bool {
        if self.rate.to_bits() == r.to_bits() {
            return false;
        }
        self.v = self.clock(now);
        self.v_time = now;
        self.rate = r;
        for &f in &self.members {
            out.set_rate(f, r);
        }
        true
    }

    /// A lower bound (ns) on the instant the clock, at its rate, comes
    /// within a look's slack of reading `least` (a member's reading; the
    /// queue's threshold `t`), and on the instant any member near `least`
    /// reaches `t` by its bytes sent: a few bytes of clock and 16 ns plus
    /// 1e-8 of the interval early, far beyond the float noise of either.
    pub(super) fn soon(&self, least: f64, t: f64) -> u64 {
        let margin = 3.0 * CLOCK_SLACK + 1e-6 * (t.max(1.0) + least.abs());
        let x = (least - margin - self.v) / (self.rate / 8e9);
        let at = self.v_time.0 as f64 + x - 16.0 - 1e-8 * x.abs();
        if at.is_nan() || at <= 0.0 {
            0
        } else if at >= 1.8e19 {
            u64::MAX - 1
        } else {
            at as u64
        }
    }

    /// The demand's clock at `now`.
    pub(super) fn clock(&self, now: Time) -> f64 {
        if sends(self.rate) {
            self.v + self.rate / 8e9 * (now.0 - self.v_time.0) as f64
        } else {
            self.v
        }
    }

    /// The sieved members whose threshold the clock may have reached (read
    /// at `at`), up to `slack` bytes of clock early: a superset of those
    /// that did, whatever the float noise between the clock and each
    /// member's bytes sent.
    pub(super) fn due_by(&self, at: f64, slack: f64) -> impl Iterator<Item = FlowIdx> + '_ {
        let bound = (at + slack + 1e-9 * at.abs()).max(0.0).to_bits();
        debug_assert!(
            self.least.is_some() || self.due.is_empty(),
            "due without a least"
        );
        debug_assert!(
            self.least.zip(self.due.first()).is_none_or(|(a, &b)| a < b),
            "a least above the rest"
        );
        let one = self.least.filter(|&(key, _)| key <= bound);
        // The rest only past the least (the set is empty for one member).
        let many = one
            .filter(|_| !self.due.is_empty())
            .map(|_| self.due.range(..=(bound, FlowIdx::MAX)));
        one.map(|(_, f)| f)
            .into_iter()
            .chain(many.into_iter().flatten().map(|&(_, f)| f))
    }

    /// Lists sieved member `f` as due at clock reading `key`.
    pub(super) fn due_insert(&mut self, key: u64, f: FlowIdx) {
        match self.least {
            None => self.least = Some((key, f)),
            Some(least) if (key, f) < least => {
                self.due.insert(least);
                self.least = Some((key, f));
            }
            Some(_) => {
                self.due.insert((key, f));
            }
        }
    }

    /// Takes sieved member `f`, due at `key`, off the list.
    pub(super) fn due_remove(&mut self, key: u64, f: FlowIdx) {
        if self.least == Some((key, f)) {
            self.least = self.due.pop_first();
        } else {
            self.due.remove(&(key, f));
        }
    }
}

/// Bytes of float noise allowed between a demand's clock and a member's
/// bytes sent (they add the same rates over the same intervals, in another
/// order); candidates within it are read exactly.
pub(super) const CLOCK_SLACK: f64 = 1.0;

/// `karuna` and `pias` on the big switch without starvation and without
/// deadline flows, kept from one event to the next: each queue's flows
/// grouped by path (a demand with a count), a flow's queue read again only
/// when it may have moved (it started, or it is demoted by bytes sent and
/// its demand's clock says it may have reached its threshold), and a rate
/// written only where its demand's rate moved.
///
/// Demotions are found as events rather than by a scan: the members of a
/// demand all send at its rate, so each keeps, while it stays, the reading
/// of the demand's clock (bytes per member since the demand was made) at
/// which it reaches its queue's threshold; an event reads the bytes sent
/// only of the members whose reading the clock has passed (less a byte of
/// slack), and the earliest threshold crossing of a demand only of its
/// members within a byte or two of its least reading. Nor are the demands
/// scanned for either: they are kept in order of a lower bound on the
/// instant their clock comes within a few bytes of their least reading
/// ([`Demand::soon`]; a sorted list into which each event's re-keyed
/// demands are merged, [`QueueDemands::refresh_soon`]), so an event looks
/// only at those whose bound has come (in the scan's order), and the next
/// crossing is searched from the front of that order until the bound passes
/// the earliest found, a demand's crossing found at an earlier call read
/// back while the demand is not re-keyed (`next_at`: the same instant, up
/// to the rounding to the nanosecond; FB2010's per-coflow CCTs are the
/// same to the bit). Debug builds check both against the scan (the kept
/// crossings within [`SNAP_NS`] of those found afresh), and that the list
/// stays sorted. What they read is
/// what the full walk reads, so the queues and timer are its own. The
/// queues but the last are solved as [`Core::decide`] solves them, bit
/// for bit (or replayed, [`KeptSolve`]): no demand has a cap here, and
/// [`MaxMin::set_one_by_one`] takes a demand's use flow by flow, so a
/// path's flows pushed as one demand get what they get pushed apart. The
/// last queue is [`LastQueue`].
#[derive(Debug, Default)]
pub(super) struct QueueDemands {
    // Per flow: its demand (NONE: not in one) and its place in its members.
    pub(super) demand_of: Vec<u32>,
    pub(super) slot: Vec<u32>,
    // Per flow: whether bytes sent demote it (type 3), its reading in its
    // demand's `due` (NONE as bits: none), and its bytes sent as read in
    // call `epoch`.
    pub(super) sieved: Vec<bool>,
    pub(super) due_key: Vec<u64>,
    pub(super) sent: Vec<(u32, f64)>,
    pub(super) epoch: u32,
    // Per (queue, path): the demand (NONE: none).
    pub(super) index: Vec<u32>,
    pub(super) demands: Vec<Demand>,
    pub(super) free: Vec<u32>,
    pub(super) by_queue: [Vec<u32>; QUEUES],
    // Flows that joined a demand in this call (their rate is written anew).
    pub(super) joined: Vec<FlowIdx>,
    pub(super) moved: Vec<FlowIdx>,
    pub(super) solver: MaxMin,
    pub(super) residual: Vec<f64>,
    // Per queue: its last solve, kept while its demands and the residual
    // on its links stay the same to the bit.
    pub(super) kept: [KeptSolve; QUEUES],
    // Per link: the call of `KeptSolve::record` that last listed it.
    pub(super) link_stamp: Vec<u32>,
    pub(super) stamp: u32,
    pub(super) last: LastQueue,
    // The demands that send and have a sieved member below a threshold, by
    // [`Demand::soon`] (a sorted list: [`QueueDemands::refresh_soon`]): an
    // event looks only at those whose bound it has reached, and the next
    // threshold crossing is searched among the first ones, not across
    // every demand.
    pub(super) soon: Vec<(u64, u32)>,
    pub(super) stale: Vec<u32>,
    // Scratch of `refresh_soon`: the stale demands' old and new entries,
    // and the merged list.
    pub(super) soon_gone: Vec<(u64, u32)>,
    pub(super) soon_new: Vec<(u64, u32)>,
    pub(super) soon_merged: Vec<(u64, u32)>,
    // Per demand: whether its entry in `soon` is among those going out
    // (set only during a merge of `refresh_soon`).
    pub(super) soon_out: Vec<bool>,
    pub(super) looks: Vec<u64>,
    // Per demand: its next threshold crossing as found at the call that
    // found it (0: none found since it was last re-keyed). The instant a
    // member reaches its threshold does not move while its demand keeps
    // its rate and members (and so its key in `soon`): found again at a
    // later call, it is the same instant up to the rounding to the
    // nanosecond. FB2010's wide coflows put hundreds of one-flow demands
    // at the same crossing, each read at every call until they cross (16.6
    // M reads over the trace, each a member's bytes sent and a division).
    pub(super) next_at: Vec<u64>,
    pub(super) ready: bool,
}

/// The last queue as a count matrix of the big switch's ports: nothing is
/// served after it, so only its rates matter, and those are the levels of
/// [`BipartiteMaxMin`] (the solver `fair` uses), kept as its demands come
/// and go, instead of a [`MaxMin`] solve of every demand at every event.
/// The same max-min rates up to float rounding (not bit for bit: a port's
/// residual is taken as one product, not member by member); debug builds
/// hold each solve against [`MaxMin`]'s.
///
/// A demand's rate is the lower of its two ports' levels, so its members
/// are, as in `fair`, members of the rate group of its bottleneck port
/// (ingress `s` is group `s`, egress `t` group `n + t`; the ingress when the
/// two tie), whose rate is that port's level. A solve then sets the rate of
/// each port whose level moved, and moves to the other port's group only
/// the members of the demands at such a port whose bottleneck side flipped:
/// no member's rate is written when only levels move, and the engine
/// carries the members' progress by group clocks. Which demands flipped is
/// read off the ports sorted by level, not by walking every demand at each
/// port whose level moved (FB2010's ports each have demands to most others;
/// [`QueueDemands::flips_by_levels`], which debug builds hold against the
/// walk, [`QueueDemands::flips_by_walk`]). It reads a pair's last side from
/// a copy kept in the grid beside the pair's demand (debug builds check
/// the copy against the demand's), so a look along a port's row of pairs
/// touches no demand that did not flip.
#[derive(Debug, Default)]
pub(super) struct LastQueue {
    pub(super) solver: Option<BipartiteMaxMin>,
    // Members of the last queue whose path is not (ingress, egress).
    pub(super) off_grid: u32,
    pub(super) up: Vec<f64>,
    pub(super) down: Vec<f64>,
    pub(super) up_level: Vec<f64>,
    pub(super) down_level: Vec<f64>,
    // The levels of the last solve, and whether every demand's rate is
    // their min (false: rate every demand at the next solve).
    pub(super) prev_up: Vec<f64>,
    pub(super) prev_down: Vec<f64>,
    pub(super) rated: bool,
    // The queue's demands on the grid by ingress and by egress port, and
    // those made since the last solve.
    pub(super) by_up: Vec<Vec<Listed>>,
    pub(super) by_down: Vec<Vec<Listed>>,
    pub(super) made: Vec<u32>,
    // The queue's demand of each (ingress, egress) pair (NONE: none), a
    // copy of its `side` beside it (read by `flips_by_levels` along a row,
    // not from the demand), and whether two ever shared a pair (then flips
    // are found by the walk).
    pub(super) grid: Vec<u32>,
    pub(super) grid_side: Vec<u8>,
    pub(super) grid_shared: bool,
    // Scratch of `flips_by_levels`: each side's ports by level (the solve's
    // freeze order, then the ports it did not freeze), which ports' levels
    // moved (and the egress ones listed), and the flips found.
    pub(super) sorted_up: Vec<(f64, u32)>,
    pub(super) sorted_down: Vec<(f64, u32)>,
    pub(super) moved_up: Vec<bool>,
    pub(super) moved_down: Vec<bool>,
    pub(super) down_moved: Vec<u32>,
    pub(super) flips: Vec<Flip>,
}

/// A last-queue demand whose bottleneck side a solve flipped, keyed by
/// where the walk of the moved ports' lists meets it first: (0, its
/// ingress port, its place there) if that port's level moved, else (1, its
/// egress port, its place there); then the demand.
pub(super) type Flip = (u8, u32, u32, u32);

/// A last-queue demand as a port lists it: the demand, the port at its
/// other end and a copy of its `side`, so that the look for flipped
/// bottlenecks at a port whose level moved reads one list end to end.
#[derive(Debug, Clone, Copy)]
pub(super) struct Listed {
    pub(super) demand: u32,
    pub(super) other: u32,
    pub(super) side: u8,
}

/// A last-queue demand's members are in its ingress port's group.
pub(super) const UP: u8 = 0;
/// A last-queue demand's members are in its egress port's group.
pub(super) const DOWN: u8 = 1;
/// A demand whose members are in no port group (yet).
pub(super) const UNSET: u8 = 2;

/// A port group's rate: the port's level, or 0 for a port that is nobody's
/// bottleneck (infinite level; no member is in its group then).
pub(super) fn group_rate(level: f64) -> f64 {
    if level.is_finite() {
        level
    } else {
        0.0
    }
}

impl LastQueue {
    /// Counts one more (`add`) or one fewer member of a demand with `ends`.
    pub(super) fn count(&mut self, ends: Option<(u32, u32)>, add: bool) {
        match (ends, self.solver.as_mut()) {
            (Some((s, d)), Some(m)) if add => m.add(s as usize, d as usize),
            (Some((s, d)), Some(m)) => m.remove(s as usize, d as usize),
            _ if add => self.off_grid += 1,
            _ => self.off_grid -= 1,
        }
    }
}

/// One queue's last solve: the links its demands cross, the residual on
/// them before and after it. A queue's rates and what it leaves are a
/// function of its demands (paths, counts, push order) and the residual on
/// those links alone, so while its demands are unchanged (`dirty` false)
/// and the residual before it is the same to the bit on its links, solving
/// it again gives its demands' last rates and its last residual after.
#[derive(Debug, Default)]
pub(super) struct KeptSolve {
    pub(super) dirty: bool,
    pub(super) links: Vec<u32>,
    pub(super) before: Vec<f64>,
    pub(super) after: Vec<f64>,
}

impl KeptSolve {
    /// Applies the last solve to `residual` if it still holds; false (and
    /// `residual` untouched) if the queue must be solved.
    pub(super) fn replay(&self, residual: &mut [f64]) -> bool {
        if self.dirty {
            return false;
        }
        let same = self
            .links
            .iter()
            .zip(&self.before)
            .all(|(&l, b)| residual[l as usize].to_bits() == b.to_bits());
        if same {
            for (&l, &a) in self.links.iter().zip(&self.after) {
                residual[l as usize] = a;
            }
        }
        same
    }
}

pub(super) const NONE: u32 = u32::MAX;
pub(super) const NO_KEY: u64 = u64::MAX;
/// Up to this many entries out of and into `soon` in one refresh are
/// shifted in place; more are merged in one pass.
pub(super) const SOON_SHIFTS: usize = 8;

/// What sieved members are demoted by: the thresholds, each flow's bytes
/// sent before its count was last reset (starvation; none on the fast
/// path), and the first queue the thresholds sort into.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sieve<'a> {
    pub(super) thresholds: &'a [f64],
    pub(super) offset: &'a [f64],
    pub(super) base: usize,
}

impl Sieve<'_> {
    /// Queue `qu`'s threshold (none for the queues before the sieve's
    /// first and for its last).
    pub(super) fn of_queue(&self, qu: usize) -> Option<f64> {
        qu.checked_sub(self.base)
            .and_then(|i| self.thresholds.get(i))
            .copied()
    }

    /// Flow `f`'s bytes sent before its count was last reset.
    pub(super) fn offset(&self, f: FlowIdx) -> f64 {
        self.offset.get(f as usize).copied().unwrap_or(0.0)
    }
}

/// Whether a demand's last rate is positive (not before its first solve).
pub(super) fn sends(rate: f64) -> bool {
    rate > 0.0
}
