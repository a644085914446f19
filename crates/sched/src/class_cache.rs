//! Strict-priority coflow classes re-served only from where they changed:
//! the big-switch path of `fifo`, `scf`, `ncf`, `lcf` and `stf`, and of
//! `fifo-lm`, whose classes are runs of several coflows
//! ([`ClassCache::serve_classes`]: a class's slot is its first coflow's,
//! and stands only for the members it had at its last turn, in the round
//! before; a coflow that changes class is served afresh with its new one).
//!
//! Under strict priority (Varys, SIGCOMM 2014, 5.1; Orchestra's FIFO) each
//! coflow, in order, is served max-min on the capacity the coflows before
//! it left ([`ClassServer`]). What a coflow gets depends on two things
//! only: its active flows (their paths) and the residual capacity of the
//! links those paths cross when its turn comes. So at every event the
//! coflows are walked in order as before, but a coflow whose flows did not
//! change and whose links show the residual of its last solve gets what it
//! got then: its rates stand (the allocation keeps them) and the residual
//! it leaves on its links is written back without a solve. An event then
//! costs a solve for each coflow it reaches (its own, and those after it
//! whose bottlenecks' share moved) and a comparison of residuals for the
//! others.
//!
//! "The residual of its last solve" is, for a coflow solved by [`MaxMin`],
//! weaker than equality: the links that solve picked as bottlenecks equal
//! to the bit and the others no lower ([`MaxMin::trace`] says why the rates
//! then stand to the bit); the residual it leaves on a link it did not pick
//! is replayed from the uses it took there, in freeze order (`Slot`). A
//! freed port raises the residual of the coflows after it on links where
//! most of them are not bottlenecked, so most of them keep their solve.
//!
//! A wide coflow (at least [`GRID_FLOWS`] flows) is solved instead on port
//! counts ([`Grid`]), because [`MaxMin`] pays for every (ingress, egress)
//! pair at every solve and wide coflows have thousands. The grid is
//! [`BipartiteMaxMin`], the solver of `fair`, kept per coflow as its flows
//! start and finish, over only the ports its flows use (rows and columns in
//! host order, so that ties break as on the whole switch): a solve costs
//! those ports and takes from each port what [`BipartiteMaxMin::left`] says
//! is left. A flow's rate is the lower of its two ports' levels, so its
//! flows sit in engine rate groups, one per (coflow, port), each flow in the
//! group of its lower port at that port's level (on a tie, the one it is
//! in, so that ties, frequent in wide coflows, move no flow): a port whose
//! level moved is one group-rate change, and only the flows at moved ports
//! whose lower side flipped change group (read from per-port lists); a
//! blocked coflow's groups go to 0. A moved port first reads the sides of
//! its pairs of ports in one dense pass (a pair's flows share their side,
//! `Grid::side`) and walks its flows only when some pair flips, so an event
//! costs the engine the groups it moves, not every flow of a wide coflow.
//! The rates are max-min to float rounding, not MaxMin's to the bit (a
//! port's use is one product, not demand by demand): debug builds check
//! each grid solve against [`MaxMin`] to 1e-9 relative, and a grouped flow
//! finishes by its group's clock, which rounds differently from a solo
//! flow's (FB2010's per-coflow CCTs are within 10 ns of re-serving every
//! flow alone).
//!
//! A wide coflow's last solve stands on residuals equal to the bit at
//! the ports it froze and, at the others (each of whose flows froze at its
//! other end), on any residual that still leaves the port a margin after
//! the uses its flows took, replayed in freeze order
//! (`ClassCache::grid_stands`): the picks and levels are then the same to
//! the bit, and the residual the coflow leaves there is the replay. Every
//! moved port is checked (not frozen by the solve, not full) before any is
//! replayed, so a turn that does not stand pays for no replay; it is then
//! solved again without `Slot::stands`, which could not keep it either
//! (a grid turn pins every link).
//!
//! The result is the same as re-serving every coflow with the same solver
//! (a coflow once wide stays on its grid until it completes), to the bit:
//! a coflow's solve reads nothing else (the solver's order of demands comes
//! from its flows; whether it is skipped as blocked reads its paths' end
//! links, which are among the links compared, and raised residuals cannot
//! block it), and a coflow given the same inputs gives the same rates,
//! which the allocation would have seen as no change. A coflow served
//! before and blocked now has its flows set to 0, as [`ClassServer::end`]
//! would; classes (the order's positions) are rewritten where a served
//! coflow moved.
//!
//! Correctness properties: after [`ClassCache::serve`] every active flow's
//! rate and class are those a full re-serve would give (checked by the
//! reference suites, `crates/sim/tests/reference`, which hold `fifo`, `scf`,
//! `ncf`, `lcf` and `stf` against slow references with every coflow on the
//! grid in debug builds, and by FB2010's per-coflow CCTs); every flow of a
//! rated grid is in the group of a port whose level is its rate (the lower
//! of its two), and every group of a grid
//! that is not paused is at its port's level (`serve_on_grid`; the same
//! suites); a slot is reused
//! only while its coflow's flows are unchanged (`note` marks them) and its
//! links' residuals stand (`Slot::stands`); a grid's counts are its active
//! flows' (`note`, `bipartite_matches_reference`), and the solve it stands
//! for (`trace_replays_on_raised_residuals`,
//! `bipartite_restart_matches_scratch`).

use crate::class_server::ClassServer;
#[cfg(debug_assertions)]
use crate::grid::check_grid;
use crate::grid::{grid_ends, Levels, GRID_FLOWS};
use crate::{Allocation, Changes, CoflowIdx, FlowIdx, Observed};
use coflowkit_alloc::{BipartiteMaxMin, MaxMin};

/// Big switches of at most this many hosts keep a matrix per wide coflow
/// ([`Grid`]: a count matrix over the ports its flows use and the solver's
/// copies, about 40 bytes per pair of ports, at most 2.6 MB at this size);
/// larger ones solve every coflow by [`MaxMin`].
const GRID_MAX_HOSTS: u32 = 256;

/// What a coflow's last turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Turn {
    /// No turn since it was released or its flows changed.
    #[default]
    None,
    /// Skipped: every flow met a full link.
    Blocked,
    /// Served in class `class`.
    Served { class: u32 },
}

/// One coflow's last turn: the links it reads (its active flows' links and
/// its paths' end links, sorted) with their residual before and after it.
/// For a served turn, also which links the solve must see again to the bit
/// (`pinned`: the bottlenecks it picked, or every link when the solver gave
/// no trace) and, per link, the uses its demands took in freeze order
/// (`uses[use_start[i]..use_start[i + 1]]` for `links[i]`), from which the
/// residual it leaves on a link it did not pin is replayed.
#[derive(Debug, Clone, Default)]
struct Slot {
    turn: Turn,
    links: Vec<u32>,
    before: Vec<f64>,
    after: Vec<f64>,
    pinned: Vec<bool>,
    use_start: Vec<u32>,
    uses: Vec<f64>,
    // A wide coflow's flows on port counts, kept as they start and finish,
    // and the block of rate groups its grids use until it completes.
    grid: Option<Box<Grid>>,
    groups: Option<u32>,
    // The class's coflows at its last turn (itself first), and the round of
    // that turn: a slot stands for the same class only if it was turned in
    // the round before with the same members.
    members: Vec<CoflowIdx>,
    round: u32,
    // A turn on its grid: per link, where its uses (in freeze order) are in
    // `replay_uses`, read from the grid's solver when first needed
    // (`u32::MAX`: not yet; see `ClassCache::grid_stands`), and the last
    // residual replayed there (its bits) with what the replay left.
    replay: Vec<(u32, u32, f64)>,
    replay_uses: Vec<f64>,
    replay_last: Vec<(u64, f64)>,
}

/// How far above zero the replayed residual of a port its grid's solve did
/// not freeze must stay (relative to its capacity or uses) for that solve
/// to stand on a new capacity: far above the rounding of a few hundred
/// subtractions (~1e-13), so the port's share stays strictly above each
/// step's level (see [`ClassCache::grid_stands`]).
const REPLAY_MARGIN: f64 = 1e-9;

impl Slot {
    /// Whether a served turn's solve stands on the residuals `now` reads:
    /// its pinned links equal to the bit, the others no lower (see
    /// [`coflowkit_alloc::MaxMin::trace`]).
    fn stands(&self, now: impl Fn(u32) -> f64) -> bool {
        self.links
            .iter()
            .zip(&self.before)
            .zip(&self.pinned)
            .all(|((&l, &b), &pin)| {
                let r = now(l);
                r.to_bits() == b.to_bits() || (!pin && r >= b)
            })
    }

    /// The residual this turn leaves on `links[i]`, which reads `r` now
    /// (the slot [`Slot::stands`]).
    fn after_at(&self, i: usize, r: f64) -> f64 {
        if r.to_bits() == self.before[i].to_bits() {
            return self.after[i];
        }
        let (s, e) = (self.use_start[i] as usize, self.use_start[i + 1] as usize);
        self.uses[s..e].iter().fold(r, |r, &u| {
            let r = r - u;
            if r < 0.0 {
                0.0
            } else {
                r
            }
        })
    }

    /// Keeps the last turn's solve, served in class `was`, for the class of
    /// `members` served now in `class` (its flows move class if it moved).
    fn keep(
        &mut self,
        view: &Observed<'_>,
        members: &[CoflowIdx],
        was: u32,
        class: u32,
        out: &mut Allocation,
    ) {
        if was != class {
            members
                .iter()
                .flat_map(|&m| view.active_flows_of(m))
                .for_each(|f| out.set_class(f, class));
            self.turn = Turn::Served { class };
            if let Some(g) = self.grid.as_mut() {
                g.class = class;
            }
        }
    }

    /// Takes note of the solver's trace of the solve just made.
    fn record(&mut self, solver: Option<&MaxMin>, pos: &mut Vec<u32>) {
        let n = self.links.len();
        self.pinned.clear();
        self.use_start.clear();
        self.use_start.resize(n + 1, 0);
        self.uses.clear();
        let Some(trace) = solver.and_then(MaxMin::trace) else {
            self.pinned.resize(n, true);
            return;
        };
        self.pinned.resize(n, false);
        for (i, &l) in self.links.iter().enumerate() {
            if pos.len() <= l as usize {
                pos.resize(l as usize + 1, u32::MAX);
            }
            pos[l as usize] = i as u32;
        }
        for &l in trace.picked() {
            self.pinned[pos[l as usize] as usize] = true;
        }
        // Uses per unpinned link, in freeze order: count, then place.
        for (path, _) in trace.uses() {
            for &l in path {
                let i = pos[l as usize] as usize;
                if !self.pinned[i] {
                    self.use_start[i + 1] += 1;
                }
            }
        }
        for i in 0..n {
            self.use_start[i + 1] += self.use_start[i];
        }
        self.uses.resize(self.use_start[n] as usize, 0.0);
        let mut at: Vec<u32> = self.use_start[..n].to_vec();
        for (path, u) in trace.uses() {
            for &l in path {
                let i = pos[l as usize] as usize;
                if !self.pinned[i] {
                    self.uses[at[i] as usize] = u;
                    at[i] += 1;
                }
            }
        }
        for &l in &self.links {
            pos[l as usize] = u32::MAX;
        }
    }
}

/// Strict-priority classes of one coflow each, re-served from where they
/// changed; see the module doc.
#[derive(Debug, Default)]
pub struct ClassCache {
    server: ClassServer,
    slots: Vec<Slot>,
    // Per coflow: whether its flows changed since its last turn, and
    // whether some started (so that its links must be listed again).
    changed: Vec<bool>,
    grown: Vec<bool>,
    zero: Vec<CoflowIdx>,
    // Scratch of `Slot::record`: a link's position in the slot's links.
    pos: Vec<u32>,
    levels: Levels,
    // Blocks of rate groups for grids (one group per port): free ones, and
    // the first never handed out.
    free_groups: Vec<u32>,
    next_group: u32,
    // Whether grid flows get solo rates instead ([`ClassCache::solo`]).
    solo_rates: bool,
    // Whether a class leaves its grid once narrow ([`ClassCache::exact`]).
    narrow_off_grid: bool,
    // Per coflow: the slot (its class's first coflow) whose grid counts its
    // flows, if that slot's grid is still there and lists it.
    owner: Vec<CoflowIdx>,
    // Serves so far (the slots' `round`).
    round: u32,
    // Scratch of `grid_stands`: the ports whose residual moved (position in
    // the slot's links, port on its side, whether a row) and, if the turn
    // stands, the residual it leaves on each.
    moved: Vec<(u32, u32, bool)>,
    after: Vec<f64>,
}

/// A wide coflow's max-min on the big switch as port levels: the rate of a
/// flow from host `s` to host `d` is the lower of the levels its ingress
/// and egress ports froze at under [`BipartiteMaxMin`], the solver of
/// `fair`, which costs the ports, not the paths. The same max-min rates as
/// [`MaxMin`]'s up to float rounding (a port's use is taken as one product
/// per pair of ports, not demand by demand); debug builds hold every solve
/// against [`MaxMin`]'s to 1e-9 relative.
#[derive(Debug, Clone)]
struct Grid {
    solver: BipartiteMaxMin,
    // Its flows with their ingress and egress ports; some may have
    // finished since (`n_finished` of them, dropped once they are half).
    flows: Vec<(FlowIdx, u32, u32)>,
    n_finished: usize,
    // Per port (ingress ports, then egress ones), its flows' positions in
    // `flows` with their other ends (column or row), so that a moved port
    // reads its flows' sides in order and `flows` only where one flips.
    at_port: Vec<Vec<(u32, u32)>>,
    // The hosts of its ingress ports (its matrix's rows) and of its egress
    // ports (columns), in host order, and per host its row and column
    // (`u32::MAX` for none): the matrix has only the ports its flows use.
    rows: Vec<u32>,
    cols: Vec<u32>,
    row_of: Vec<u32>,
    col_of: Vec<u32>,
    // The port levels and class its flows were last given, and whether
    // every flow is in the group of its bottleneck side (false after flows
    // started).
    up_level: Vec<f64>,
    down_level: Vec<f64>,
    class: u32,
    rated: bool,
    // Its rate groups: row `i`'s is `groups + i`, column `j`'s
    // `groups + rows + j`, each at its port's level (0 while `paused`:
    // blocked); per flow (as `flows`), whether it is in its ingress port's.
    groups: u32,
    in_up: Vec<bool>,
    paused: bool,
    // Per pair of ports (row-major, and its transpose column-major), the
    // side its active flows are in: all of a pair's flows are placed
    // together, so they share it (`SIDE_UP`, `SIDE_DOWN`; `SIDE_NONE`
    // before any was placed). A moved port reads its pairs' sides in one
    // dense pass and walks its flows only when one of them flips.
    side: Vec<u8>,
    side_t: Vec<u8>,
}

/// [`Grid::side`]: no active flow placed yet, the ingress port's group,
/// the egress port's.
const SIDE_NONE: u8 = 0;
const SIDE_UP: u8 = 1;
const SIDE_DOWN: u8 = 2;

impl Grid {
    /// A grid of `flows` (with their ingress and egress hosts) on a big
    /// switch of `n` hosts, its rate groups from `groups` on.
    fn new(flows: &[(FlowIdx, u32, u32)], n: u32, groups: u32, class: u32) -> Grid {
        let (mut row_of, mut col_of) = (vec![u32::MAX; n as usize], vec![u32::MAX; n as usize]);
        for &(_, s, d) in flows {
            row_of[s as usize] = 0;
            col_of[d as usize] = 0;
        }
        // Local ports in host order, so that the solver breaks ties among
        // them as it would on the whole switch.
        let number = |of: &mut Vec<u32>| {
            let mut hosts = vec![];
            for (h, x) in of.iter_mut().enumerate() {
                if *x == 0 {
                    *x = hosts.len() as u32;
                    hosts.push(h as u32);
                }
            }
            hosts
        };
        let (rows, cols) = (number(&mut row_of), number(&mut col_of));
        let mut grid = Grid {
            solver: BipartiteMaxMin::new(rows.len(), cols.len()),
            flows: vec![],
            n_finished: 0,
            at_port: vec![vec![]; rows.len() + cols.len()],
            rows,
            cols,
            row_of,
            col_of,
            up_level: vec![],
            down_level: vec![],
            class,
            rated: false,
            groups,
            in_up: vec![],
            paused: false,
            side: vec![],
            side_t: vec![],
        };
        let pairs = grid.rows.len() * grid.cols.len();
        grid.side = vec![SIDE_NONE; pairs];
        grid.side_t = vec![SIDE_NONE; pairs];
        for &(f, s, d) in flows {
            grid.add(f, s, d);
        }
        grid
    }

    /// Counts flow `f` from host `s` to host `d`; false if the grid has no
    /// port for one of them (it must then be made anew).
    fn add(&mut self, f: FlowIdx, s: u32, d: u32) -> bool {
        let (r, c) = (self.row_of[s as usize], self.col_of[d as usize]);
        if r == u32::MAX || c == u32::MAX {
            return false;
        }
        self.solver.add(r as usize, c as usize);
        let i = self.flows.len() as u32;
        self.at_port[r as usize].push((i, c));
        self.at_port[self.rows.len() + c as usize].push((i, r));
        self.flows.push((f, r, c));
        self.rated = false;
        true
    }

    /// Uncounts finished flow `f` from host `s` to host `d`.
    fn remove(&mut self, s: u32, d: u32) {
        let (r, c) = (self.row_of[s as usize], self.col_of[d as usize]);
        self.solver.remove(r as usize, c as usize);
        self.n_finished += 1;
    }

    /// Drops the flows that finished once they are half of those listed.
    fn drop_finished(&mut self, view: &Observed<'_>) {
        if 2 * self.n_finished <= self.flows.len() {
            return;
        }
        let mut kept = 0;
        for i in 0..self.flows.len() {
            if view.is_active(self.flows[i].0) {
                self.flows[kept] = self.flows[i];
                if i < self.in_up.len() {
                    self.in_up[kept] = self.in_up[i];
                }
                kept += 1;
            }
        }
        self.flows.truncate(kept);
        self.in_up.truncate(kept.min(self.in_up.len()));
        self.n_finished = 0;
        self.at_port.iter_mut().for_each(Vec::clear);
        let n = self.rows.len();
        for (i, &(_, r, c)) in self.flows.iter().enumerate() {
            self.at_port[r as usize].push((i as u32, c));
            self.at_port[n + c as usize].push((i as u32, r));
        }
    }

    /// Whether some pair of ports at port `p` (a row below `nu`, else a
    /// column) has its flows on the side that is no longer the lower under
    /// `up` and `down` levels, strictly (a tie keeps them): where the walk
    /// of the port's flows would flip one. One pass over the other side.
    fn port_flips(&self, p: usize, up: &[f64], down: &[f64]) -> bool {
        let (nu, nd) = (self.rows.len(), self.cols.len());
        let flips = |s: u8, a: f64, b: f64| (s == SIDE_UP && a > b) | (s == SIDE_DOWN && b > a);
        if p < nu {
            let (a, sides) = (up[p], &self.side[p * nd..(p + 1) * nd]);
            sides
                .iter()
                .zip(&down[..nd])
                .fold(false, |x, (&s, &b)| x | flips(s, a, b))
        } else {
            let j = p - nu;
            let (b, sides) = (down[j], &self.side_t[j * nu..(j + 1) * nu]);
            sides
                .iter()
                .zip(&up[..nu])
                .fold(false, |x, (&s, &a)| x | flips(s, a, b))
        }
    }

    /// The rate group of a flow from row `r` to column `c`, at its ingress
    /// port's level (`up`) or its egress port's.
    fn group(&self, up: bool, r: u32, c: u32) -> u32 {
        if up {
            self.groups + r
        } else {
            self.groups + self.rows.len() as u32 + c
        }
    }

    /// Sets the rate of every port's group to its level (0 for a port
    /// without flows, whose level is infinite).
    fn rate_groups(&self, moved: impl Fn(usize) -> bool, out: &mut Allocation) {
        let levels = self.up_level.iter().chain(&self.down_level);
        for (p, &level) in levels.enumerate() {
            if moved(p) {
                let r = if level.is_finite() { level } else { 0.0 };
                out.set_group_rate(self.groups + p as u32, r);
            }
        }
    }
}

impl ClassCache {
    /// A cache whose grid flows get solo rates, one by one, rather than
    /// rate groups (what [`ClassCache::exact`] builds on; `stf` used it
    /// while the engine summed a coflow's grouped flows one by one).
    pub fn solo() -> ClassCache {
        ClassCache {
            solo_rates: true,
            ..ClassCache::default()
        }
    }

    /// The rate groups that hold coflow `c`'s grouped flows when each
    /// class is one coflow ([`ClassCache::serve`] with groups): its grid's,
    /// one per port it uses (none without a grid). Only `c`'s flows are in
    /// them: a block of groups is its slot's until `c` completes.
    pub fn grid_groups(&self, c: CoflowIdx) -> std::ops::Range<u32> {
        let grid = self.slots.get(c as usize).and_then(|s| s.grid.as_ref());
        grid.map_or(0..0, |g| {
            g.groups..g.groups + (g.rows.len() + g.cols.len()) as u32
        })
    }

    /// A cache that gives what [`ClassServer::on_grid`] gives, rate for
    /// rate: solo rates, and a class solved on port counts only while it
    /// has at least [`GRID_FLOWS`] active flows (by [`MaxMin`] below), as
    /// [`ServerGrid`] decides at each call (`fifo-lm`).
    pub fn exact() -> ClassCache {
        ClassCache {
            narrow_off_grid: true,
            ..ClassCache::solo()
        }
    }

    /// Takes note of what changed (call at every schedule, before serving):
    /// coflows whose flows started or finished are served afresh.
    pub fn note(&mut self, changes: &Changes, view: &Observed<'_>) {
        self.server.note(changes, view);
        let finished = changes.finished.iter().map(|&f| view.coflow_of(f));
        for c in finished.chain(changes.finished_coflows.iter().copied()) {
            self.mark(c, false);
        }
        for &c in &changes.finished_coflows {
            let slot = &mut self.slots[c as usize];
            slot.grid = None;
            self.free_groups.extend(slot.groups.take());
        }
        let started = changes.started.iter().map(|&f| view.coflow_of(f));
        for c in started.chain(changes.arrived.iter().copied()) {
            self.mark(c, true);
        }
        // Counted on the grids: started flows first, so that one that starts
        // and finishes in one call is added, then removed.
        let n = view.fabric().n_hosts();
        for &f in &changes.started {
            let Some(slot) = self.grid_slot(view.coflow_of(f)) else {
                continue;
            };
            if let Some(g) = slot.grid.as_mut() {
                // A flow off the grid's ports makes it anew.
                let ends = grid_ends(view.path(f), n);
                if !ends.is_some_and(|(s, d)| g.add(f, s, d)) {
                    slot.grid = None;
                }
            }
        }
        for &f in &changes.finished {
            let slot = self.grid_slot(view.coflow_of(f));
            if let Some(g) = slot.and_then(|s| s.grid.as_mut()) {
                let (s, d) = grid_ends(view.path(f), n).expect("counted on the grid");
                g.remove(s, d);
            }
        }
    }

    /// The slot whose grid counts coflow `c`'s flows, if any: its class's
    /// at its last turn on a grid, while that grid stands for that class.
    fn grid_slot(&mut self, c: CoflowIdx) -> Option<&mut Slot> {
        let o = *self.owner.get(c as usize)?;
        let slot = &mut self.slots[o as usize];
        (slot.grid.is_some() && slot.members.contains(&c)).then_some(slot)
    }

    /// Marks coflow `c`'s flows changed (`grown`: some started).
    fn mark(&mut self, c: CoflowIdx, grown: bool) {
        let ci = c as usize;
        if self.changed.len() <= ci {
            self.changed.resize(ci + 1, false);
            self.grown.resize(ci + 1, false);
            self.slots.resize_with(ci + 1, Slot::default);
            let n = self.owner.len() as CoflowIdx;
            self.owner.extend(n..=c);
        }
        self.changed[ci] = true;
        self.grown[ci] |= grown;
    }

    /// Serves `order` (one coflow per class, highest priority first),
    /// writing the rates and classes that changed into `out`.
    pub fn serve(
        &mut self,
        view: &Observed<'_>,
        order: impl IntoIterator<Item = CoflowIdx>,
        out: &mut Allocation,
    ) {
        self.begin(view);
        for (i, c) in order.into_iter().enumerate() {
            self.turn(view, std::slice::from_ref(&c), i as u32, out);
        }
        self.end(view, out);
    }

    /// Serves `classes` in order (highest priority first), each a run of
    /// coflows whose flows share max-min (`fifo-lm`'s), writing the rates
    /// and classes that changed into `out`. A class's slot is its first
    /// coflow's; it is served afresh when its members differ from those of
    /// its last turn. Only with solo rates ([`ClassCache::exact`]): a
    /// coflow that changes class would be left in the rate groups of
    /// another.
    pub fn serve_classes<'a>(
        &mut self,
        view: &Observed<'_>,
        classes: impl IntoIterator<Item = &'a [CoflowIdx]>,
        out: &mut Allocation,
    ) {
        debug_assert!(
            self.solo_rates,
            "classes of several coflows need solo rates"
        );
        self.begin(view);
        for (i, members) in classes.into_iter().enumerate() {
            self.turn(view, members, i as u32, out);
        }
        self.end(view, out);
    }

    fn begin(&mut self, view: &Observed<'_>) {
        self.server.begin(view);
        self.round = self.round.wrapping_add(1);
    }

    /// Stops the classes served before and blocked now.
    fn end(&mut self, view: &Observed<'_>, out: &mut Allocation) {
        for &c in &self.zero {
            // A grid's flows stop with their groups (those not yet in one
            // are solo at 0 already or set so here).
            let slot = &mut self.slots[c as usize];
            let mut grid = slot.grid.as_mut();
            if self.solo_rates {
                if let Some(g) = grid.take() {
                    g.rated = false;
                }
            }
            for f in slot.members.iter().flat_map(|&m| view.active_flows_of(m)) {
                if grid.is_none() || out.group(f) == crate::SOLO {
                    out.set_rate(f, 0.0);
                }
            }
            if let Some(g) = grid {
                for p in 0..g.up_level.len() + g.down_level.len() {
                    out.set_group_rate(g.groups + p as u32, 0.0);
                }
                g.paused = true;
            }
        }
        self.zero.clear();
    }

    /// The turn of the class of `members` (its slot's coflow first) in
    /// class `class`.
    fn turn(
        &mut self,
        view: &Observed<'_>,
        members: &[CoflowIdx],
        class: u32,
        out: &mut Allocation,
    ) {
        let c = members[0];
        let ci = c as usize;
        for &m in members {
            if self.changed.len() <= m as usize {
                self.mark(m, true);
            }
        }
        // Another class than at its last turn (or none then): served afresh,
        // its links listed anew, its grid made anew.
        let slot = &mut self.slots[ci];
        let moved = slot.round != self.round.wrapping_sub(1) || slot.members != members;
        slot.round = self.round;
        if moved {
            slot.members.clear();
            slot.members.extend_from_slice(members);
            slot.grid = None;
        }
        let mut fresh = moved;
        for &m in members {
            fresh |= std::mem::replace(&mut self.changed[m as usize], false);
        }
        // A slot last served that has a grid was served on it
        // (`serve_on_grid` serves on a grid whenever the slot has one, and
        // makes one only to serve on it), and that turn pinned every link
        // (`Slot::record` has no trace of it): where `grid_stands` finds it
        // does not stand, some link moved, and `Slot::stands` cannot find
        // it does.
        let slot = &mut self.slots[ci];
        let on_grid = slot.grid.is_some();
        if let (Turn::Served { class: was }, false, true) = (slot.turn, fresh, on_grid) {
            if self.grid_stands(ci) {
                let slot = &mut self.slots[ci];
                self.server.set_residual(&slot.links, &slot.after);
                for (&(i, _, _), &v) in self.moved.iter().zip(&self.after) {
                    self.server
                        .set_residual(&slot.links[i as usize..][..1], &[v]);
                }
                slot.keep(view, members, was, class, out);
                return;
            }
            let slot = &self.slots[ci];
            debug_assert!(!slot.stands(|l| self.server.residual_at(l)));
        }
        let slot = &mut self.slots[ci];
        let server = &mut self.server;
        match slot.turn {
            Turn::Served { class: was }
                if !fresh && !on_grid && slot.stands(|l| server.residual_at(l)) =>
            {
                for (i, &l) in slot.links.iter().enumerate() {
                    let after = slot.after_at(i, server.residual_at(l));
                    server.set_residual(&[l], &[after]);
                }
                slot.keep(view, members, was, class, out);
                return;
            }
            Turn::Blocked if !fresh && server.residual_is(&slot.links, &slot.before) => return,
            _ => {}
        }
        // A class is blocked when each of its coflows is.
        let mut blocked = true;
        let mut grown = moved;
        for &m in members {
            blocked &= self.server.blocked(view, m);
            grown |= std::mem::replace(&mut self.grown[m as usize], false);
        }
        let slot = &mut self.slots[ci];
        // Links of flows that finished stay listed: comparing more links
        // than the class reads only skips it less often.
        if grown || slot.turn == Turn::None {
            slot.links.clear();
            for f in members.iter().flat_map(|&m| view.active_flows_of(m)) {
                slot.links.extend(view.path(f).iter().map(|l| l.0));
            }
            for &m in members {
                slot.links.extend(self.server.end_links(m));
            }
            slot.links.sort_unstable();
            slot.links.dedup();
        }
        self.server.residual_of(&slot.links, &mut slot.before);
        if blocked {
            // Its flows may have rates from the classes they were in.
            if moved || matches!(slot.turn, Turn::Served { .. }) {
                self.zero.push(c);
            }
            slot.turn = Turn::Blocked;
            return;
        }
        let on_grid = self.serve_on_grid(view, members, class, out);
        if !on_grid {
            let flows = members.iter().flat_map(|&m| view.active_flows_of(m));
            self.server.serve_flows(view, flows, class, out);
        }
        let slot = &mut self.slots[ci];
        self.server.residual_of(&slot.links, &mut slot.after);
        let solver = (!on_grid).then(|| self.server.solver());
        slot.record(solver, &mut self.pos);
        slot.replay.clear();
        slot.replay.resize(slot.links.len(), (u32::MAX, 0, 0.0));
        slot.replay_uses.clear();
        slot.replay_last.clear();
        slot.replay_last.resize(slot.links.len(), (u64::MAX, 0.0));
        slot.turn = Turn::Served { class };
    }

    /// Whether the last solve of slot `ci` on its grid stands on the
    /// residuals now; if so, the links whose residual moved are in
    /// `self.moved` and the residual it leaves on each in `self.after` (on
    /// the others, it leaves the slot's `after`). A port the solve froze
    /// must read its residual of then to the bit; a port it did not freeze
    /// (all its flows froze at the other end) may read any residual on
    /// which it still has, after the uses its flows took in freeze order
    /// (replayed as the solve subtracts them), at least [`REPLAY_MARGIN`]
    /// of its capacity left: its share is then above each step's level at
    /// every step, so it is never picked, every pick and level is the same
    /// to the bit, and the residual it leaves is the replay (debug builds
    /// solve again and compare). Such a port must not be full either: the
    /// class then stays unblocked, as at its solve. FB2010 `ncf`: 115,000
    /// of 217,000 grid turns re-solved had only such ports moved.
    fn grid_stands(&mut self, ci: usize) -> bool {
        let slot = &mut self.slots[ci];
        let Some(grid) = slot.grid.as_ref() else {
            return false;
        };
        // Every moved port is checked before any is replayed: a turn that
        // does not stand costs no replay.
        self.moved.clear();
        for (i, (&l, &b)) in slot.links.iter().zip(&slot.before).enumerate() {
            let r = self.server.residual_at(l);
            if r.to_bits() == b.to_bits() {
                continue;
            }
            // Links `2h` and `2h + 1` are host `h`'s ingress and egress ports.
            let h = (l / 2) as usize;
            let (row, port, level) = if l.is_multiple_of(2) {
                let x = grid.row_of.get(h).copied().unwrap_or(u32::MAX);
                (true, x, grid.up_level.get(x as usize))
            } else {
                let x = grid.col_of.get(h).copied().unwrap_or(u32::MAX);
                (false, x, grid.down_level.get(x as usize))
            };
            // A full port could make the class blocked (`ClassServer::blocked`
            // reads its end links, all listed here).
            if !level.is_some_and(|v| v.is_infinite()) || self.server.is_full(l) {
                return false;
            }
            self.moved.push((i as u32, port, row));
        }
        self.after.clear();
        let nr = grid.rows.len();
        for &(i, port, row) in &self.moved {
            let i = i as usize;
            let r = self.server.residual_at(slot.links[i]);
            // A port's residual often moves once and then stays.
            if slot.replay_last[i].0 == r.to_bits() {
                self.after.push(slot.replay_last[i].1);
                continue;
            }
            if slot.replay[i].0 == u32::MAX {
                // Its flows' counts to each port of the other side, read
                // along the freeze order, and their sum in that order (what
                // the replay's `total` would add up to, to the bit).
                let start = slot.replay_uses.len() as u32;
                let (counts, lo) = if row {
                    (grid.solver.row_counts(port as usize), nr)
                } else {
                    (grid.solver.col_counts(port as usize), 0)
                };
                let mut total = 0.0;
                for (p, level) in grid.solver.frozen() {
                    let k = p.checked_sub(lo).and_then(|q| counts.get(q)).copied();
                    if let Some(k @ 1..) = k {
                        let u = f64::from(k) * level;
                        slot.replay_uses.push(u);
                        total += u;
                    }
                }
                slot.replay[i] = (start, slot.replay_uses.len() as u32, total);
            }
            let (s, e, total) = slot.replay[i];
            let cap = r.max(0.0);
            let v = slot.replay_uses[s as usize..e as usize]
                .iter()
                .fold(cap, |v, &u| v - u);
            if v <= REPLAY_MARGIN * cap.max(total) {
                return false;
            }
            slot.replay_last[i] = (r.to_bits(), v);
            self.after.push(v);
        }
        #[cfg(debug_assertions)]
        {
            // The slow reference: the solve made again on the residuals now.
            let mut solver = grid.solver.clone();
            let mut residual = self.server.residual_mut().to_vec();
            let mut lv = Levels::default();
            lv.solve(&mut solver, &grid.rows, &grid.cols, &mut residual);
            let same =
                |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same(&lv.up_level, &grid.up_level) && same(&lv.down_level, &grid.down_level));
            let mut after = slot.after.clone();
            for (&(i, _, _), &v) in self.moved.iter().zip(&self.after) {
                after[i as usize] = v;
            }
            let left: Vec<f64> = slot.links.iter().map(|&l| residual[l as usize]).collect();
            assert!(same(&left, &after), "replayed residuals");
        }
        true
    }

    /// Serves the class of `members` (its slot's coflow first) on port
    /// levels ([`Grid`]) when it is wide and all its flows cross one
    /// ingress and one egress port; whether it did.
    fn serve_on_grid(
        &mut self,
        view: &Observed<'_>,
        members: &[CoflowIdx],
        class: u32,
        out: &mut Allocation,
    ) -> bool {
        let c = members[0];
        let n = view.fabric().n_hosts();
        let slot = &mut self.slots[c as usize];
        let lv = &mut self.levels;
        if self.narrow_off_grid {
            if let Some(g) = slot.grid.as_ref() {
                if g.flows.len() - g.n_finished < GRID_FLOWS {
                    slot.grid = None;
                }
            }
        }
        if slot.grid.is_none() {
            if n > GRID_MAX_HOSTS {
                return false;
            }
            lv.flows.clear();
            for f in members.iter().flat_map(|&m| view.active_flows_of(m)) {
                match grid_ends(view.path(f), n) {
                    Some((s, d)) => lv.flows.push((f, s, d)),
                    None => return false,
                }
            }
            if lv.flows.len() < GRID_FLOWS {
                return false;
            }
            for &m in members {
                self.owner[m as usize] = c;
            }
            // At most 2n ports: a block of 2n groups, kept until the
            // coflow completes (flows of a grid made anew may still be in
            // its groups).
            let groups = *slot.groups.get_or_insert_with(|| {
                self.free_groups.pop().unwrap_or_else(|| {
                    self.next_group += 2 * n;
                    self.next_group - 2 * n
                })
            });
            slot.grid = Some(Box::new(Grid::new(&lv.flows, n, groups, class)));
        }
        let Some(grid) = slot.grid.as_mut() else {
            return false;
        };
        grid.drop_finished(view);
        #[cfg(debug_assertions)]
        let before = self.server.residual_mut().to_vec();
        let residual = self.server.residual_mut();
        lv.solve(&mut grid.solver, &grid.rows, &grid.cols, residual);
        // A flow's rate moves only with one of its ports' levels.
        let moved = |new: &[f64], old: &[f64], out: &mut Vec<bool>| {
            out.clear();
            out.extend(new.iter().zip(old).map(|(a, b)| a.to_bits() != b.to_bits()));
            out.resize(new.len(), true);
        };
        moved(&lv.up_level, &grid.up_level, &mut lv.up_moved);
        moved(&lv.down_level, &grid.down_level, &mut lv.down_moved);
        grid.up_level.clone_from(&lv.up_level);
        grid.down_level.clone_from(&lv.down_level);
        // A flow sits in the group of its lower port (on a tie, the one it
        // is in; at first, the ingress one), at that port's level: its rate
        // moves with the group, and it changes group only where one of its
        // ports' levels moved.
        // (With `solo_rates`, every flow at a moved port gets its rate.)
        let all = !grid.rated;
        let solo = self.solo_rates;
        let nu = grid.rows.len();
        let (up_moved, down_moved) = (&lv.up_moved, &lv.down_moved);
        let moved_port = |p: usize| {
            if p < nu {
                up_moved[p]
            } else {
                down_moved[p - nu]
            }
        };
        if !solo {
            grid.rate_groups(|p| all || grid.paused || moved_port(p), out);
        }
        grid.in_up.resize(grid.flows.len(), false);
        let (up_level, down_level) = (&lv.up_level, &lv.down_level);
        let mut place = |grid: &mut Grid, i: usize, up: bool| {
            let (f, r, c) = grid.flows[i];
            if view.is_active(f) {
                grid.in_up[i] = up;
                let (nu, nd) = (grid.rows.len(), grid.cols.len());
                let s = if up { SIDE_UP } else { SIDE_DOWN };
                grid.side[r as usize * nd + c as usize] = s;
                grid.side_t[c as usize * nu + r as usize] = s;
                if solo {
                    let level = if up {
                        up_level[r as usize]
                    } else {
                        down_level[c as usize]
                    };
                    out.set_rate(f, level);
                } else {
                    out.join_group(f, grid.group(up, r, c));
                }
            }
        };
        if all {
            for i in 0..grid.flows.len() {
                let (_, r, c) = grid.flows[i];
                place(grid, i, up_level[r as usize] <= down_level[c as usize]);
            }
        } else {
            for p in (0..nu + grid.cols.len()).filter(|&p| moved_port(p)) {
                if !solo && !grid.port_flips(p, up_level, down_level) {
                    continue;
                }
                for k in 0..grid.at_port[p].len() {
                    let (i, q) = grid.at_port[p][k];
                    let (a, b) = if p < nu {
                        (up_level[p], down_level[q as usize])
                    } else {
                        (up_level[q as usize], down_level[p - nu])
                    };
                    // A flow on a tie stays where it is.
                    let was = grid.in_up[i as usize];
                    if solo || (was && a > b) || (!was && b > a) {
                        place(grid, i as usize, a <= b);
                    }
                }
            }
        }
        if all || grid.class != class {
            for &(f, _, _) in &grid.flows {
                out.set_class(f, class);
            }
        }
        grid.rated = true;
        grid.paused = false;
        grid.class = class;
        #[cfg(debug_assertions)]
        {
            // Every active flow is on its pair's side.
            for (i, &(f, r, c)) in grid.flows.iter().enumerate() {
                let s = grid.side[r as usize * grid.cols.len() + c as usize];
                let s_t = grid.side_t[c as usize * grid.rows.len() + r as usize];
                let want = if grid.in_up[i] { SIDE_UP } else { SIDE_DOWN };
                assert!(
                    !view.is_active(f) || (s == want && s_t == want),
                    "flow {f}: side"
                );
            }
            // Every flow has its lower port's level: through its group to
            // the bit, or solo (to the allocation's 1e-12 of a rate kept).
            for &(f, r, c) in grid.flows.iter().filter(|x| view.is_active(x.0)) {
                let (got, want) = (out.rate(f), lv.rate(r, c));
                assert!(
                    got.to_bits() == want.to_bits()
                        || (solo && (got - want).abs() <= 1e-12 * got.abs()),
                    "flow {f}: rate {got}, its lower port's level {want}"
                );
            }
            check_grid(view, &grid.flows, lv, before);
        }
        true
    }
}
