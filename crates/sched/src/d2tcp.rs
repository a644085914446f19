//! `d2tcp`: deadline-aware per-flow sharing, D2TCP's window rule at flow
//! level (Vamanan, Hasan and Vijaykumar, "Deadline-Aware Datacenter TCP",
//! SIGCOMM 2012, 3.1): TAFE's flow-aware baseline (TAFE V-D).
//!
//! D2TCP backs a flow off on congestion by `p = alpha^d`, `W <- W (1 -
//! p / 2)`, and grows it by one segment otherwise, where `d` is the
//! deadline imminence factor `Tc / D` (`Tc`: the time the flow needs to
//! finish at its deadline-agnostic rate, `D`: the time left to its
//! deadline), clamped to `[0.5, 2]`, and `d = 1` (DCTCP) without a
//! deadline. Flows on one bottleneck see the same `alpha`; in the AIMD fixed
//! point each flow's decrease equals the common increase, `W_i p_i =
//! const`, so its share is proportional to `1 / p_i = alpha^(-d_i)`. The
//! flow-level model: per-flow weighted max-min with weight
//! `w = alpha^(1 - d)` (1 for a flow without a deadline), `alpha = 0.5`
//! by default (`alpha=` sets it, in (0, 1)). So a flow far from its
//! deadline (`d = 0.5`) gets weight `0.71`, a flow about to miss it
//! (`d = 2`) weight 2, a flow past it weight 2.
//!
//! `Tc` is the flow's remaining bits over its equal share of its most
//! crowded link (the least `capacity / active flows` along its path): the
//! rate deadline-agnostic DCTCP would converge to. Weights are recomputed
//! at every event (arrival, start, completion) and held between events
//! (D2TCP itself updates once per RTT): this makes the model piecewise
//! constant, and exact and reproducible in the event-driven engine. With
//! no deadlines it is `fair` exactly.
//!
//! Cost: while no active flow has a deadline every weight is 1, and the
//! allocation is `fair`'s, so the scheduler takes an inner [`Fair`]'s
//! (its rate groups and solvers: an event costs what it changes).
//! The [`Fair`] follows every event on an allocation of its own, whose
//! changes are copied to the driver's while no active flow has a
//! deadline, so it is current whenever the last deadline flow leaves; the
//! flows then rejoin `fair`'s groups once. While a deadline flow is
//! active, weights drift with time, so every event re-weights every
//! active flow (one weighted max-min).
//!
//! `Knows = KnowsSizes`: `Tc` needs each flow's remaining bytes, as D2TCP's
//! sender knows what is left of its own flow.

use crate::descriptor::{Kind, Needs, Param, Parts, SchedulerDescriptor};
use crate::fair::Fair;
use crate::AnyScheduler;
use crate::{Allocation, Change, Changes, Clairvoyant, FlowIdx, KnowsSizes, Scheduler, SOLO};
use coflowkit_alloc::MaxMin;
use coflowkit_model::Time;

/// `d2tcp`: D2TCP's window rule at flow level.
pub const D2TCP: SchedulerDescriptor = SchedulerDescriptor {
    cost: 1.2,
    parts: Parts::NONE,
    name: "d2tcp",
    description: "deadline-aware per-flow weighted max-min, D2TCP's window rule at flow level",
    paper: "Vamanan et al., SIGCOMM 2012, 3.1; TAFE V-D's flow-aware baseline",
    params: &[Param {
        key: "alpha",
        kind: Kind::Number,
        default: "0.5",
        unit: "",
        help: "weight base in (0, 1): a flow's weight is alpha^(1 - d)",
    }],
    needs: Needs {
        deadlines: true,
        ..Needs::SIZES
    },
    build: |p, _| {
        let alpha = p
            .number("alpha", |a| a > 0.0 && a < 1.0, "a number in (0, 1)")?
            .unwrap_or(0.5);
        Ok(AnyScheduler::Clairvoyant(Box::new(D2tcp::new(alpha))))
    },
};

/// The deadline imminence factor `d = Tc / D`, clamped to `[0.5, 2]`; 2
/// once the deadline is due or past; 1 without a deadline.
pub fn imminence(tc_s: f64, left_s: Option<f64>) -> f64 {
    match left_s {
        None => 1.0,
        Some(d) if d <= 0.0 => 2.0,
        Some(d) => (tc_s / d).clamp(0.5, 2.0),
    }
}

/// Deadline-aware per-flow weighted max-min; see the module doc.
#[derive(Debug)]
pub struct D2tcp {
    alpha: f64,
    n_on_link: Vec<u32>,
    solver: MaxMin,
    residual: Vec<f64>,
    flows: Vec<FlowIdx>,
    /// `fair`, fed every event: the allocation while no active flow has a
    /// deadline.
    fair: Fair,
    /// Where `fair` writes, and the number of flows it has room for.
    scratch: Allocation,
    scratch_len: usize,
    /// Active flows with a deadline.
    n_deadline: usize,
    /// Whether the last call handed the allocation to `fair` (its flows are
    /// in its rate groups).
    in_fair: bool,
}

impl D2tcp {
    /// A D2TCP-like scheduler with marked fraction `alpha` in (0, 1).
    pub fn new(alpha: f64) -> D2tcp {
        D2tcp {
            alpha,
            n_on_link: vec![],
            solver: MaxMin::default(),
            residual: vec![],
            flows: vec![],
            fair: Fair::new(),
            scratch: Allocation::default(),
            scratch_len: 0,
            n_deadline: 0,
            in_fair: true,
        }
    }

    /// Counts the active flows with a deadline after `changes`.
    fn count_deadlines(&mut self, view: &Clairvoyant<'_>, changes: &Changes) {
        let obs = view.observed();
        let has = |f: &&FlowIdx| obs.deadline(**f).is_some();
        self.n_deadline += changes.started.iter().filter(has).count();
        self.n_deadline -= changes.finished.iter().filter(has).count();
    }

    /// Hands the event to `fair`, which writes to the scratch allocation,
    /// and copies its group rates to `out`; when no active flow has a
    /// deadline, also its flows' groups (then `true`), after putting every
    /// active flow back in its path group if the last call did not.
    fn follow_fair(
        &mut self,
        now: Time,
        view: &Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> bool {
        let obs = view.observed();
        if self.scratch_len < obs.n_flows() {
            self.scratch_len = obs.n_flows();
            self.scratch.resize(self.scratch_len);
        }
        for &f in &changes.finished {
            self.scratch.forget(f);
        }
        self.fair.schedule(now, obs, changes, &mut self.scratch);
        let mirror = self.n_deadline == 0;
        if mirror && !self.in_fair {
            for &f in obs.active_flows() {
                out.join_group(f, self.scratch.group(f));
            }
        }
        // Group rates always (a group without members in `out` costs the
        // driver nothing), so that `out`'s equal `fair`'s at any switch.
        self.scratch.drain_changes(|a, change| match change {
            Change::Flow(f) if mirror && a.group(f) != SOLO => out.join_group(f, a.group(f)),
            Change::Group(g) => out.set_group_rate(g, a.group_rate(g)),
            _ => {}
        });
        self.in_fair = mirror;
        mirror
    }
}

impl Scheduler for D2tcp {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "d2tcp"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.count_deadlines(&view, changes);
        if self.follow_fair(now, &view, changes, out) {
            return None;
        }
        let obs = view.observed();
        let caps = obs.capacities();
        self.n_on_link.clear();
        self.n_on_link.resize(caps.len(), 0);
        self.flows.clear();
        self.flows.extend_from_slice(obs.active_flows());
        for &f in &self.flows {
            for l in obs.path(f) {
                self.n_on_link[l.0 as usize] += 1;
            }
        }
        self.solver.clear();
        for &f in &self.flows {
            let path = obs.path(f);
            let w = match obs.deadline(f) {
                None => 1.0,
                Some(deadline) => {
                    let share = path
                        .iter()
                        .map(|l| caps[l.0 as usize] / f64::from(self.n_on_link[l.0 as usize]))
                        .fold(f64::INFINITY, f64::min);
                    let tc = view.remaining(f) * 8.0 / share;
                    let left = deadline.0 as f64 * 1e-9 - now.0 as f64 * 1e-9;
                    self.alpha.powf(1.0 - imminence(tc, Some(left)))
                }
            };
            self.solver.push(path.iter().copied(), w, 1, f64::INFINITY);
        }
        self.residual.clear();
        self.residual.extend_from_slice(caps);
        let rates = self.solver.solve(&mut self.residual);
        for (&f, &r) in self.flows.iter().zip(rates) {
            out.set_rate(f, r);
            out.set_class(f, 0);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imminence_is_clamped_and_2_past_the_deadline() {
        assert_eq!(imminence(1.0, None), 1.0);
        assert_eq!(imminence(1.0, Some(4.0)), 0.5);
        assert_eq!(imminence(1.0, Some(1.0)), 1.0);
        assert_eq!(imminence(3.0, Some(1.0)), 2.0);
        assert_eq!(imminence(0.1, Some(0.0)), 2.0);
        assert_eq!(imminence(1.5, Some(1.0)), 1.5);
    }
}
