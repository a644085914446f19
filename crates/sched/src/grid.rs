//! Wide classes on the big switch solved on port counts: a class's flows
//! counted per (ingress, egress) port pair and solved by
//! [`BipartiteMaxMin`] as port levels, max-min to float rounding, instead
//! of [`MaxMin`] over every flow's path. Shared by the strict-priority
//! class servers ([`crate::class_server::ClassServer`],
//! [`crate::class_cache::ClassCache`]) and Karuna's grid of priority
//! classes.
//!
//! # Correctness properties
//! - A grid solve gives each flow the rate [`MaxMin`] gives it over the same
//!   residual, to 1e-9 relative (debug builds check every solve against it:
//!   `check_grid`).

use crate::{FlowIdx, Observed};
use coflowkit_alloc::BipartiteMaxMin;
#[cfg(debug_assertions)]
use coflowkit_alloc::MaxMin;
use coflowkit_model::LinkId;

/// Coflows with at least this many active flows are solved on port counts
/// (`class_cache`'s `Grid`, [`ServerGrid`]) rather than by [`MaxMin`] over their paths. Debug builds put
/// every coflow on the grid, so that the reference suites hold the grid
/// against their slow references (and each grid solve against [`MaxMin`]).
pub(crate) const GRID_FLOWS: usize = if cfg!(debug_assertions) { 1 } else { 128 };

/// The (ingress, egress) ports of a big-switch path of `n` hosts: links
/// `2s` and `2d + 1`; `None` for any other path (a CPU).
pub(crate) fn grid_ends(links: &[LinkId], n: u32) -> Option<(u32, u32)> {
    match *links {
        [LinkId(a), LinkId(b)] if a % 2 == 0 && b % 2 == 1 && a < 2 * n && b < 2 * n => {
            Some((a / 2, b / 2))
        }
        _ => None,
    }
}

/// Scratch of the grid solves: each port's capacity left and level.
#[derive(Debug, Default)]
pub(crate) struct Levels {
    pub(crate) up: Vec<f64>,
    pub(crate) down: Vec<f64>,
    pub(crate) up_level: Vec<f64>,
    pub(crate) down_level: Vec<f64>,
    pub(crate) up_moved: Vec<bool>,
    pub(crate) down_moved: Vec<bool>,
    pub(crate) flows: Vec<(FlowIdx, u32, u32)>,
}

/// A wide class's max-min on the big switch as port levels, solved afresh
/// at each call on one shared count matrix (flows added, solved, removed):
/// what [`ClassServer::on_grid`] uses, for classes of several coflows.
#[derive(Debug, Default)]
pub struct ServerGrid {
    solver: Option<BipartiteMaxMin>,
    lv: Levels,
    flows: Vec<(FlowIdx, u32, u32)>,
    // Every host, for the rows and the columns of `solver`.
    hosts: Vec<u32>,
}

impl ServerGrid {
    /// Solves the class of `flows` over `residual` and takes what it uses
    /// from it, if the class is wide and on the big switch's ports; whether
    /// it did ([`ServerGrid::flows`] and [`ServerGrid::rate`] then give the
    /// rates).
    pub(crate) fn solve(
        &mut self,
        view: &Observed<'_>,
        flows: impl IntoIterator<Item = FlowIdx>,
        residual: &mut [f64],
    ) -> bool {
        if !view.fabric().is_big_switch() {
            return false;
        }
        let n = view.fabric().n_hosts();
        self.flows.clear();
        for f in flows {
            match grid_ends(view.path(f), n) {
                Some((s, d)) => self.flows.push((f, s, d)),
                None => return false,
            }
        }
        if self.flows.len() < GRID_FLOWS {
            return false;
        }
        let m = self
            .solver
            .get_or_insert_with(|| BipartiteMaxMin::new(n as usize, n as usize));
        for &(_, s, d) in &self.flows {
            m.add(s as usize, d as usize);
        }
        #[cfg(debug_assertions)]
        let before = residual.to_vec();
        if self.hosts.len() != n as usize {
            self.hosts = (0..n).collect();
        }
        self.lv.solve(m, &self.hosts, &self.hosts, residual);
        for &(_, s, d) in &self.flows {
            m.remove(s as usize, d as usize);
        }
        #[cfg(debug_assertions)]
        check_grid(view, &self.flows, &self.lv, before);
        true
    }

    /// The flows of the class last solved, with their ports.
    pub(crate) fn flows(&self) -> &[(FlowIdx, u32, u32)] {
        &self.flows
    }

    /// The rate of a flow from host `s` to host `d` in the last solve.
    pub(crate) fn rate(&self, s: u32, d: u32) -> f64 {
        self.lv.rate(s, d)
    }
}

impl Levels {
    /// Solves `m`, whose rows are the ingress ports (link `2h`) of hosts
    /// `rows` of a big switch and whose columns are the egress ports (link
    /// `2h + 1`) of hosts `cols`, over `residual`, and takes from each port
    /// what its flows use ([`BipartiteMaxMin::left`]).
    pub(crate) fn solve(
        &mut self,
        m: &mut BipartiteMaxMin,
        rows: &[u32],
        cols: &[u32],
        residual: &mut [f64],
    ) {
        let link = |p: usize| {
            if p < rows.len() {
                2 * rows[p] as usize
            } else {
                2 * cols[p - rows.len()] as usize + 1
            }
        };
        self.up.clear();
        self.up
            .extend((0..rows.len()).map(|p| residual[link(p)].max(0.0)));
        self.down.clear();
        self.down
            .extend((rows.len()..rows.len() + cols.len()).map(|p| residual[link(p)].max(0.0)));
        m.solve(
            &self.up,
            &self.down,
            &mut self.up_level,
            &mut self.down_level,
        );
        for (p, left) in m.left().enumerate() {
            residual[link(p)] = left;
        }
    }

    /// The rate of a flow from row `s` to column `d` after [`Levels::solve`].
    pub(crate) fn rate(&self, s: u32, d: u32) -> f64 {
        self.up_level[s as usize].min(self.down_level[d as usize])
    }
}

/// The slow reference for a grid solve ([`Levels::solve`]): [`MaxMin`] on
/// the class's flows over the residual `before` gives each flow the rate
/// the grid gave it to 1e-9 relative (and 1e-3 bit/s absolute).
#[cfg(debug_assertions)]
pub(crate) fn check_grid(
    view: &Observed<'_>,
    flows: &[(FlowIdx, u32, u32)],
    lv: &Levels,
    mut before: Vec<f64>,
) {
    let mut solver = MaxMin::new(before.len());
    // A grid lists flows that finished until they are half of its list.
    let flows: Vec<_> = flows.iter().filter(|x| view.is_active(x.0)).collect();
    for &&(f, _, _) in &flows {
        solver.push(view.path(f).iter().copied(), 1.0, 1, f64::INFINITY);
    }
    let rates = solver.solve(&mut before);
    for (&&(f, s, d), &want) in flows.iter().zip(rates) {
        let got = lv.rate(s, d);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs() + 1e-3,
            "flow {f}: grid rate {got}, MaxMin's {want}"
        );
    }
}
