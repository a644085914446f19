//! Strict-priority classes of coflows served in order: the flows of one
//! class share max-min (flows with one path grouped into one demand) on
//! the capacity the classes before it left (Varys, SIGCOMM 2014, 5.1;
//! Orchestra's FIFO). The common machinery of every strict-priority coflow
//! scheduler (`fifo`, the size orders, `fifo-lm`, `tafe`) and of
//! [`crate::class_cache::ClassCache`].

use crate::grid::ServerGrid;
use crate::{Allocation, Changes, CoflowIdx, FlowIdx, Observed, PathIdx};
use coflowkit_alloc::{IncrementalMaxMin, MaxMin};

/// Serves priority classes of coflows in order: the flows of one class share
/// max-min (flows with one path grouped into one demand) on the capacity the
/// classes before it left. Reused by every strict-priority coflow scheduler.
#[derive(Debug, Default)]
pub struct ClassServer {
    solver: MaxMin,
    residual: Vec<f64>,
    stamp: Vec<u32>,
    demand: Vec<u32>,
    epoch: u32,
    members: Vec<(crate::FlowIdx, u32)>,
    counts: Vec<u32>,
    paths: Vec<PathIdx>,
    // Flows given a positive rate in the previous and the current round.
    positive: Vec<crate::FlowIdx>,
    next_positive: Vec<crate::FlowIdx>,
    served: Vec<u32>,
    round: u32,
    // Per coflow: its paths' first and last links (to skip coflows that
    // cannot get anything once those links are full); recomputed when flows
    // of the coflow start, kept when they finish (then only less is skipped).
    ends: Vec<Option<(Vec<u32>, Vec<u32>)>>,
    // With [`ClassServer::on_grid`]: wide classes on port counts.
    grid: Option<Box<ServerGrid>>,
}

impl ClassServer {
    /// A server that solves wide classes on the big switch on port counts
    /// ([`ServerGrid`]): max-min to float rounding rather than [`MaxMin`]'s
    /// rates to the bit, at the cost of the ports and one pass over the
    /// class's flows instead of a [`MaxMin`] solve over its paths.
    pub fn on_grid() -> ClassServer {
        ClassServer {
            grid: Some(Box::default()),
            ..ClassServer::default()
        }
    }

    /// Takes note of what changed: coflows whose flows started have new
    /// paths (call this at every schedule, before serving).
    pub fn note(&mut self, changes: &Changes, view: &Observed<'_>) {
        for &f in &changes.started {
            let c = view.coflow_of(f) as usize;
            if let Some(e) = self.ends.get_mut(c) {
                *e = None;
            }
        }
    }

    /// Starts a round: every link back to full capacity.
    pub fn begin(&mut self, view: &Observed<'_>) {
        self.round = self.round.wrapping_add(1);
        if self.served.len() < view.n_flows() {
            self.served.resize(view.n_flows(), 0);
        }
        self.next_positive.clear();
        self.residual.clear();
        self.residual.extend_from_slice(view.capacities());
        if self.stamp.len() < view.n_paths() {
            self.stamp.resize(view.n_paths(), 0);
            self.demand.resize(view.n_paths(), 0);
        }
    }

    /// Whether every flow of coflow `c` crosses a full link, judged by its
    /// paths' first and last links (so the coflow would get nothing).
    pub(crate) fn blocked(&mut self, view: &Observed<'_>, c: CoflowIdx) -> bool {
        let ci = c as usize;
        if self.ends.len() <= ci {
            self.ends.resize(ci + 1, None);
        }
        let ends = self.ends[ci].get_or_insert_with(|| {
            let (mut first, mut last) = (vec![], vec![]);
            for f in view.active_flows_of(c) {
                let p = view.path(f);
                first.push(p[0].0);
                last.push(p[p.len() - 1].0);
            }
            first.sort_unstable();
            first.dedup();
            last.sort_unstable();
            last.dedup();
            (first, last)
        });
        let residual = &self.residual;
        let full = |l: &u32| residual[*l as usize] <= coflowkit_alloc::EPS * 1e9;
        ends.0.iter().all(full) || ends.1.iter().all(full)
    }

    /// Serves one class made of `coflows`, writing the rates of their active
    /// flows and `class` into `out`. Classes whose every flow is blocked by
    /// a full link are skipped (their flows keep rate 0).
    pub fn serve(
        &mut self,
        view: &Observed<'_>,
        coflows: &[CoflowIdx],
        class: u32,
        out: &mut Allocation,
    ) {
        if coflows.iter().all(|&c| self.blocked(view, c)) {
            return;
        }
        if let Some(grid) = self.grid.as_mut() {
            let flows = coflows.iter().flat_map(|&c| view.active_flows_of(c));
            if grid.solve(view, flows, &mut self.residual) {
                for &(f, s, d) in grid.flows() {
                    let r = grid.rate(s, d);
                    out.set_rate(f, r);
                    out.set_class(f, class);
                    self.served[f as usize] = self.round;
                    if r > 0.0 {
                        self.next_positive.push(f);
                    }
                }
                return;
            }
        }
        let flows = coflows.iter().flat_map(|&c| view.active_flows_of(c));
        self.serve_flows(view, flows, class, out);
    }

    /// Serves one class made of the active flows `flows`, writing their
    /// rates and `class` into `out`, with no check for blocked members (a
    /// caller that knows them skips them; [`ClassServer::is_full`] helps).
    pub fn serve_flows(
        &mut self,
        view: &Observed<'_>,
        flows: impl IntoIterator<Item = crate::FlowIdx>,
        class: u32,
        out: &mut Allocation,
    ) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.epoch = 1;
        }
        self.solver.clear();
        self.members.clear();
        // One demand per distinct path in the class; counts via a second pass.
        let (mut counts, mut paths) = (
            std::mem::take(&mut self.counts),
            std::mem::take(&mut self.paths),
        );
        counts.clear();
        paths.clear();
        for f in flows {
            let p = view.path_idx(f) as usize;
            if self.stamp[p] != self.epoch {
                self.stamp[p] = self.epoch;
                self.demand[p] = counts.len() as u32;
                counts.push(0);
                paths.push(p as PathIdx);
            }
            let d = self.demand[p];
            counts[d as usize] += 1;
            self.members.push((f, d));
        }
        for (&p, &n) in paths.iter().zip(&counts) {
            self.solver
                .push(view.path_links(p).iter().copied(), 1.0, n, f64::INFINITY);
        }
        self.solve_members(class, out);
        self.counts = counts;
        self.paths = paths;
    }
}

impl ClassServer {
    /// Serves active flow `f` alone as class `class`: the least residual
    /// along its path (0 for an empty path), taken from every link of it.
    /// What [`ClassServer::serve_flows`] gives one flow, to the bit (a
    /// single demand of weight 1 freezes at its path's least residual and
    /// takes it from each link, flooring at 0), without a [`MaxMin`]
    /// solve; debug builds check it against that solve.
    pub(crate) fn serve_one(
        &mut self,
        view: &Observed<'_>,
        f: crate::FlowIdx,
        class: u32,
        out: &mut Allocation,
    ) {
        let path = view.path_links(view.path_idx(f));
        #[cfg(debug_assertions)]
        let want = {
            let mut residual = self.residual.clone();
            let mut solver = MaxMin::default();
            solver.push(path.iter().copied(), 1.0, 1, f64::INFINITY);
            let r = solver.solve(&mut residual)[0];
            (r, residual)
        };
        let mut r = f64::INFINITY;
        for l in path {
            r = r.min(self.residual[l.0 as usize].max(0.0));
        }
        if path.is_empty() {
            r = 0.0;
        }
        for l in path {
            let res = &mut self.residual[l.0 as usize];
            *res -= r;
            if *res < 0.0 {
                *res = 0.0;
            }
        }
        #[cfg(debug_assertions)]
        {
            assert_eq!(r.to_bits(), want.0.to_bits(), "rate of {f}");
            let same = self.residual.iter().zip(&want.1);
            assert!(same.into_iter().all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        out.set_rate(f, r);
        out.set_class(f, class);
        self.served[f as usize] = self.round;
        if r > 0.0 {
            self.next_positive.push(f);
        }
    }

    /// Solves the demands pushed for `members` on what is left and writes
    /// each member's rate (its demand's) and `class` into `out`.
    fn solve_members(&mut self, class: u32, out: &mut Allocation) {
        let rates = self.solver.solve(&mut self.residual);
        for &(f, d) in &self.members {
            let r = rates[d as usize];
            out.set_rate(f, r);
            out.set_class(f, class);
            self.served[f as usize] = self.round;
            if r > 0.0 {
                self.next_positive.push(f);
            }
        }
    }

    /// Serves one class made of the active flows `flows`, each with its
    /// weight: weighted max-min on what the classes before it left, each
    /// flow its own demand (`tafe:flows=weighted`). Writes their rates and
    /// `class` into `out`.
    pub fn serve_weighted(
        &mut self,
        view: &Observed<'_>,
        flows: impl IntoIterator<Item = (crate::FlowIdx, f64)>,
        class: u32,
        out: &mut Allocation,
    ) {
        self.solver.clear();
        self.members.clear();
        for (i, (f, w)) in flows.into_iter().enumerate() {
            self.solver
                .push(view.path(f).iter().copied(), w, 1, f64::INFINITY);
            self.members.push((f, i as u32));
        }
        self.solve_members(class, out);
    }
}

impl ClassServer {
    /// The solver of the last class served (its [`MaxMin::trace`]).
    pub(crate) fn solver(&self) -> &MaxMin {
        &self.solver
    }

    /// The first and last links of coflow `c`'s paths that
    /// [`ClassServer::blocked`] last judged it by (none before it did).
    pub(crate) fn end_links(&self, c: CoflowIdx) -> impl Iterator<Item = u32> + '_ {
        let ends = self.ends.get(c as usize).and_then(|e| e.as_ref());
        ends.into_iter()
            .flat_map(|(first, last)| first.iter().chain(last).copied())
    }

    /// Whether the residual of each of `links` is, bit for bit, `values`.
    pub(crate) fn residual_is(&self, links: &[u32], values: &[f64]) -> bool {
        links
            .iter()
            .zip(values)
            .all(|(&l, v)| self.residual[l as usize].to_bits() == v.to_bits())
    }

    /// Every link's residual this round.
    pub(crate) fn residual_mut(&mut self) -> &mut [f64] {
        &mut self.residual
    }

    /// The residual of link `l` this round.
    pub(crate) fn residual_at(&self, l: u32) -> f64 {
        self.residual[l as usize]
    }

    /// Copies the residual of `links` into `values`.
    pub(crate) fn residual_of(&self, links: &[u32], values: &mut Vec<f64>) {
        values.clear();
        values.extend(links.iter().map(|&l| self.residual[l as usize]));
    }

    /// Sets the residual of `links` to `values`.
    pub(crate) fn set_residual(&mut self, links: &[u32], values: &[f64]) {
        for (&l, &v) in links.iter().zip(values) {
            self.residual[l as usize] = v;
        }
    }

    /// Whether link `l` has no capacity left this round (what
    /// [`ClassServer::serve`] calls full when it skips a blocked coflow).
    pub fn is_full(&self, l: u32) -> bool {
        self.residual[l as usize] <= coflowkit_alloc::EPS * 1e9
    }

    /// The flows given a positive rate in the last round (after
    /// [`ClassServer::end`]).
    pub fn positive_flows(&self) -> &[crate::FlowIdx] {
        &self.positive
    }

    /// Takes `flows` as the flows with a positive rate in the last round:
    /// a round decided without the server (`tafe`'s kept matching).
    pub(crate) fn set_positive(&mut self, flows: &[crate::FlowIdx]) {
        self.positive.clear();
        self.positive.extend_from_slice(flows);
    }

    /// Ends a round: flows that had a rate in the previous round and were
    /// not served in this one get rate 0.
    pub fn end(&mut self, view: &Observed<'_>, out: &mut Allocation) {
        for &f in &self.positive {
            if self.served[f as usize] != self.round && view.is_active(f) {
                out.set_rate(f, 0.0);
            }
        }
        std::mem::swap(&mut self.positive, &mut self.next_positive);
    }
}

/// Flows as demands of one [`IncrementalMaxMin`] in strict-priority
/// classes (lower first), fed from a call's [`Changes`]: what `fifo` and
/// `fifo-lm` use on multi-hop fabrics, so that an event re-solves only the
/// links it reaches. Each flow's class also goes to the [`Allocation`] (as
/// a `u32`, saturated), for drivers with priority queues.
#[derive(Debug)]
pub(crate) struct ClassedFlows {
    solver: IncrementalMaxMin,
    changed: Vec<u32>,
}

impl ClassedFlows {
    pub(crate) fn new(view: &Observed<'_>) -> ClassedFlows {
        ClassedFlows {
            solver: IncrementalMaxMin::new(view.capacities().to_vec()),
            changed: vec![],
        }
    }

    /// Removes the flows that finished; each keeps its last rate in
    /// [`ClassedFlows::rate`] until it is given another.
    pub(crate) fn finish(&mut self, changes: &Changes) {
        for &f in &changes.finished {
            self.solver.set_count(f, 0);
        }
    }

    /// Adds started flow `f` in `class`.
    pub(crate) fn start(
        &mut self,
        view: &Observed<'_>,
        f: FlowIdx,
        class: u64,
        out: &mut Allocation,
    ) {
        self.solver
            .declare_in(f, view.path(f).iter().copied(), 1.0, class);
        self.solver.set_count(f, 1);
        out.set_class(f, class_u32(class));
    }

    /// Moves flow `f` to `class`.
    pub(crate) fn set_class(&mut self, f: FlowIdx, class: u64, out: &mut Allocation) {
        self.solver.set_class(f, class);
        out.set_class(f, class_u32(class));
    }

    /// Flow `f`'s rate after the last solve (bits/s).
    pub(crate) fn rate(&self, f: FlowIdx) -> f64 {
        self.solver.rate(f)
    }

    /// Re-solves what the changes reach and gives each flow whose rate
    /// moved its new rate, calling `moved(f, new - old)` first.
    pub(crate) fn solve(&mut self, out: &mut Allocation, mut moved: impl FnMut(FlowIdx, f64)) {
        self.changed.clear();
        self.solver.solve(&mut self.changed);
        for &f in &self.changed {
            let r = self.solver.rate(f);
            moved(f, r - out.rate(f));
            out.set_rate(f, r);
        }
    }
}

/// A class as the [`Allocation`] carries it: saturated to `u32`.
fn class_u32(class: u64) -> u32 {
    class.min(u64::from(u32::MAX)) as u32
}
