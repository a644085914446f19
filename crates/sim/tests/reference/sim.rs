//! The reference simulator: time and bytes as `f64`, every rule re-read
//! at every event, nothing incremental.
//!
//! At every event (an arrival, any flow completion, a delayed flow start,
//! and whatever instants the policy asks for: a threshold crossing, a
//! refresh, a round, a protocol message) it first applies the release rules
//! of `coflowkit_sim::release` by re-evaluating every one of them on every
//! coflow and flow until nothing changes (releases, starts, zero-byte
//! finishes, completions), then asks the policy for the rates (a
//! [`ReferencePolicy`], which recomputes its allocation from scratch with
//! straightforward code, per-flow max-min by
//! [`coflowkit_alloc::reference::max_min`], itself checked against the fast
//! solvers), moves time on to the earliest next event, takes `rate * dt`
//! from every flow and finishes the flows that have (almost) nothing left.
//! The engine rounds every event up to a whole nanosecond, so the two agree
//! to within a few nanoseconds per event (see [`resolution_ns`]).
//!
//! From the model the reference takes only the links' capacities and where
//! each flow goes (its ECMP choice and that path, [`path_of`]); it shares
//! nothing with the engine's state (path interning, rate groups) or the fast
//! solvers, and every allocation is over the links of each flow's path.
//!
//! Missed deadlines (`Missed::Drop`, a spec ending in `|drop`): the
//! reference removes a flow unfinished at its start + deadline at that
//! instant, after the flows that finish then.

use crate::case::{path_of, Case};
use crate::compare::resolution_ns;
use crate::policy::ReferencePolicy;
use coflowkit_alloc::reference::max_min;
use coflowkit_model::{CoflowId, DepKind};

/// A flow as the reference keeps it.
#[derive(Debug, Clone)]
pub struct RefFlow {
    /// Its coflow's index in [`RefSim::coflows`].
    pub coflow: usize,
    /// The sending host.
    pub src: u32,
    /// The receiving host.
    pub dst: u32,
    /// The links it crosses.
    pub path: Vec<u32>,
    /// Its bytes.
    pub size: f64,
    /// Its bytes left.
    pub rem: f64,
    group: u32,
    after: Option<u32>,
    delay: f64,
    /// Its deadline after its start, ns.
    pub deadline: Option<f64>,
    /// Whether schedulers may read its size (false: Karuna type 3).
    pub known: bool,
    /// When it may start (NaN until released).
    pub start_at: f64,
    started: bool,
    /// Whether it finished (or was dropped at its deadline).
    pub done: bool,
    finish: f64,
    /// The rate (bits/s) it sent at just before it finished (0: none).
    last_rate: f64,
}

/// A coflow as the reference keeps it.
#[derive(Debug, Clone)]
pub struct RefCoflow {
    /// Its id in the case.
    pub id: u64,
    /// Its arrival, ns.
    pub arrival: u64,
    /// Its flows' indices in [`RefSim::flows`], in the spec's order.
    pub flows: Vec<usize>,
    starts_after: Vec<usize>,
    finishes_before: Vec<usize>,
    /// Every parent, in the spec's order.
    pub parents: Vec<usize>,
    /// Whether the release rules released it.
    pub released: bool,
    /// When it was released (NaN until then).
    pub release: f64,
    complete: bool,
    finish: f64,
}

/// What the reference computes: instants (ns), coflows as (id, release,
/// completion) in (arrival, id) order, flow finishes in that coflow order
/// then in their order in the coflow.
#[derive(Debug, Clone)]
pub struct RefResult {
    /// (id, release, completion) of every coflow.
    pub coflows: Vec<(u64, f64, f64)>,
    /// Every flow's finish.
    pub flows: Vec<f64>,
    /// How far (ns) the engine's instants may be from these (see
    /// [`resolution_ns`]).
    pub tolerance: f64,
    /// Ordering decisions where two keys were equal up to 1e-6 relative
    /// (where float noise or nanosecond rounding could flip the order).
    pub ties: Vec<String>,
    /// Whether a decision was within rounding of a boundary (see
    /// [`RefSim::ambiguous`]): the engine may decide the other way, so the
    /// case is not compared.
    pub ambiguous: bool,
}

/// Residual capacity (bits/s) at or under which a link counts as full.
pub const FULL: f64 = 1e-3;

/// Two instants of the reference's clock this close (ns) are one instant.
///
/// The clock is summed from float steps, so an instant reached by steps (a
/// completion, a start that waits on it) can stand a rounding error off an
/// instant it equals in exact arithmetic (a delayed start, a Baraat round,
/// a Karuna deadline on its MCP grid); the engine's integer clock makes
/// them one instant, and so does every comparison of instants here. Each
/// case that needed it is a named regression test:
/// `karuna_regression_issue_31_deadline_on_the_grid`,
/// `baraat_regression_fuzz_start_on_a_round`,
/// `dcas_regression_fuzz_completion_on_a_start`.
pub const SAME_INSTANT_NS: f64 = 1e-3;

/// How near (bytes) two keys from progress must be to their tie tolerance
/// apart for the order to go either way: the engine reads progress at
/// whole nanoseconds, up to 0.4 B off at 3.2 Gbit/s.
pub const AT_TOLERANCE: f64 = 0.5;

/// Whether instants `a` and `b` (ns) are one ([`SAME_INSTANT_NS`]).
pub fn same_instant(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_INSTANT_NS
}

/// The reference simulator's state: flows, coflows and the clock; what a
/// policy keeps between events is the policy's.
pub struct RefSim {
    /// Every link's capacity, bits/s.
    pub caps: Vec<f64>,
    /// Flows, by coflow (in [`RefSim::coflows`] order) then in each
    /// coflow's order.
    pub flows: Vec<RefFlow>,
    /// Coflows in (arrival, id) order.
    pub coflows: Vec<RefCoflow>,
    /// The current instant, ns.
    pub now: f64,
    ties: std::cell::RefCell<Vec<String>>,
    /// Whether an order by keys from progress met two keys within rounding
    /// of their tolerance apart ([`RefSim::coflows_by`]): ambiguous.
    at_tolerance: std::cell::Cell<bool>,
    /// Whether a policy met a decision within rounding of a boundary,
    /// which the engine, whose instants are whole nanoseconds, may take
    /// the other way; such a case is not compared.
    pub ambiguous: bool,
    /// `Missed::Drop`: a flow unfinished at its start + deadline is removed then.
    pub drop_missed: bool,
}

impl RefSim {
    /// The reference's state for `case` at time 0.
    pub fn new(case: &Case) -> RefSim {
        let fabric = case.fabric().expect("a valid fabric");
        let caps = fabric.links().iter().map(|l| l.capacity.0).collect();
        let mut specs = case.coflows.clone();
        specs.sort_by_key(|c| (c.arrival, c.id));
        let pos = |id: CoflowId| specs.iter().position(|c| c.id == id).unwrap();
        let mut flows = vec![];
        let mut coflows = vec![];
        for (ci, c) in specs.iter().enumerate() {
            let mut ids = vec![];
            for (i, f) in c.flows.iter().enumerate() {
                ids.push(flows.len());
                let path = path_of(&fabric, c, i);
                flows.push(RefFlow {
                    coflow: ci,
                    src: f.src.0,
                    dst: f.dst.0,
                    path,
                    size: f.bytes.0 as f64,
                    rem: f.bytes.0 as f64,
                    group: f.group,
                    after: f.after,
                    delay: f.delay.0 as f64,
                    deadline: f.deadline.map(|d| d.0 as f64),
                    known: f.size_known,
                    start_at: f64::NAN,
                    started: false,
                    done: false,
                    finish: f64::NAN,
                    last_rate: 0.0,
                });
            }
            let parents = |kind| {
                c.parents
                    .iter()
                    .filter(|d| d.kind == kind)
                    .map(|d| pos(d.parent))
                    .collect()
            };
            coflows.push(RefCoflow {
                id: c.id.0,
                arrival: c.arrival.0,
                flows: ids,
                starts_after: parents(DepKind::StartsAfter),
                finishes_before: parents(DepKind::FinishesBefore),
                parents: c.parents.iter().map(|d| pos(d.parent)).collect(),
                released: false,
                release: f64::NAN,
                complete: false,
                finish: f64::NAN,
            });
        }
        RefSim {
            caps,
            flows,
            coflows,
            now: 0.0,
            ties: Default::default(),
            at_tolerance: Default::default(),
            ambiguous: false,
            drop_missed: false,
        }
    }

    /// Whether flow `f` has started and not finished.
    pub fn is_active(&self, f: usize) -> bool {
        self.flows[f].started && !self.flows[f].done
    }

    /// Every active flow, in flow order.
    pub fn active_flows(&self) -> Vec<usize> {
        (0..self.flows.len())
            .filter(|&f| self.is_active(f))
            .collect()
    }

    /// The active flows of coflow `c`, in its order.
    pub fn active_flows_of(&self, c: usize) -> Vec<usize> {
        self.coflows[c]
            .flows
            .iter()
            .copied()
            .filter(|&f| self.is_active(f))
            .collect()
    }

    /// Active coflows (released, not complete) in (release, arrival, id)
    /// order.
    pub fn active_coflows(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.coflows.len())
            .filter(|&c| self.coflows[c].released && !self.coflows[c].complete)
            .collect();
        // Coflows are listed in (arrival, id) order: a stable sort by release.
        v.sort_by(|&a, &b| self.coflows[a].release.total_cmp(&self.coflows[b].release));
        v
    }

    /// The started flows of coflow `c`, in its order.
    pub fn started_flows_of(&self, c: usize) -> impl Iterator<Item = &RefFlow> {
        self.coflows[c]
            .flows
            .iter()
            .map(|&f| &self.flows[f])
            .filter(|f| f.started)
    }

    /// Bytes coflow `c` has sent.
    pub fn sent(&self, c: usize) -> f64 {
        self.started_flows_of(c).map(|f| f.size - f.rem).sum()
    }

    /// Bytes coflow `c` has sent from host `src` (from every host: `None`).
    pub fn sent_by(&self, c: usize, src: Option<u32>) -> f64 {
        self.started_flows_of(c)
            .filter(|f| src.is_none_or(|s| f.src == s))
            .map(|f| f.size - f.rem)
            .sum()
    }

    /// Applies the release rules at `t` until nothing changes; returns
    /// whether a coflow was released or completed or a flow with bytes
    /// started (what Varys's `recompute=coflow` reacts to).
    pub fn settle_releases(&mut self, t: f64) -> bool {
        let mut coflow_event = false;
        loop {
            let mut changed = false;
            for c in 0..self.coflows.len() {
                let co = &self.coflows[c];
                if !co.released
                    && co.arrival as f64 <= t
                    && co.starts_after.iter().all(|&p| self.coflows[p].complete)
                {
                    self.coflows[c].released = true;
                    self.coflows[c].release = t;
                    changed = true;
                    coflow_event = true;
                }
            }
            for f in 0..self.flows.len() {
                let fl = &self.flows[f];
                let co = &self.coflows[fl.coflow];
                if co.released && fl.start_at.is_nan() {
                    let ready = match fl.after {
                        None => true,
                        Some(g) => co
                            .flows
                            .iter()
                            .filter(|&&x| self.flows[x].group == g)
                            .all(|&x| self.flows[x].done),
                    };
                    if ready {
                        self.flows[f].start_at = t + self.flows[f].delay;
                        changed = true;
                    }
                }
                let fl = &mut self.flows[f];
                if !fl.started && fl.start_at <= t + SAME_INSTANT_NS {
                    fl.started = true;
                    changed = true;
                    if fl.size == 0.0 {
                        fl.done = true;
                        fl.finish = t;
                    } else {
                        coflow_event = true;
                    }
                }
            }
            for c in 0..self.coflows.len() {
                let co = &self.coflows[c];
                if co.released
                    && !co.complete
                    && co.flows.iter().all(|&f| self.flows[f].done)
                    && co.finishes_before.iter().all(|&p| self.coflows[p].complete)
                {
                    self.coflows[c].complete = true;
                    self.coflows[c].finish = t;
                    changed = true;
                    coflow_event = true;
                }
            }
            if !changed {
                return coflow_event;
            }
        }
    }

    /// Strict priority between classes (each a list of coflows), per-flow
    /// max-min inside a class on what the classes before it left.
    pub fn serve_classes(&self, classes: &[Vec<usize>], rate: &mut [f64]) {
        let flows: Vec<Vec<usize>> = classes
            .iter()
            .map(|class| {
                class
                    .iter()
                    .flat_map(|&c| self.active_flows_of(c))
                    .collect()
            })
            .collect();
        self.serve_flow_classes(&flows, rate);
    }

    /// As [`Self::serve_classes`], each class a list of active flows; gives
    /// what the classes leave of each link.
    pub fn serve_flow_classes(&self, classes: &[Vec<usize>], rate: &mut [f64]) -> Vec<f64> {
        let mut residual = self.caps.clone();
        for members in classes {
            let demands: Vec<(Vec<u32>, f64, f64)> = members
                .iter()
                .map(|&f| (self.flows[f].path.clone(), 1.0, f64::INFINITY))
                .collect();
            let r = max_min(&demands, &mut residual);
            for (&f, &x) in members.iter().zip(&r) {
                rate[f] = x;
            }
        }
        residual
    }

    /// Greedy in the order of `order`: each flow gets the least `residual`
    /// on its path, if more than [`FULL`], on top of its rate, and takes it
    /// from every link of its path.
    pub fn greedy(
        &self,
        order: impl IntoIterator<Item = usize>,
        residual: &mut [f64],
        rate: &mut [f64],
    ) {
        for f in order {
            let path = &self.flows[f].path;
            let r = path
                .iter()
                .map(|&l| residual[l as usize])
                .fold(f64::INFINITY, f64::min);
            if r > FULL {
                rate[f] += r;
                for &l in path {
                    residual[l as usize] -= r;
                }
            }
        }
    }

    /// Active coflows in the order of `key`, ascending, ties (keys equal up
    /// to float noise) by (release, arrival, id). Near-ties of keys computed
    /// from progress (`computed`) are noted.
    pub fn coflows_by(&self, key: impl Fn(usize) -> f64, computed: bool, tol: f64) -> Vec<usize> {
        let keys: Vec<f64> = (0..self.coflows.len()).map(key).collect();
        // Active coflows are listed in (release, arrival, id) order already.
        let order = order_by(self.active_coflows(), |c| keys[c], tol);
        if computed {
            self.note_ties("coflows", &order, |c| (self.coflows[c].id, keys[c]));
            // Two keys `tol` apart in exact arithmetic tie or not by how the
            // rounding falls (the engine's keys are read at whole
            // nanoseconds): such a decision can go either way
            // (`stf_regression_fuzz_keys_at_the_tie_tolerance`).
            let edge = |a: f64, b: f64| ((a - b).abs() - tol).abs() <= AT_TOLERANCE;
            if tol > 0.0
                && order
                    .iter()
                    .enumerate()
                    .any(|(i, &a)| order[i + 1..].iter().any(|&b| edge(keys[a], keys[b])))
            {
                self.at_tolerance.set(true);
            }
        }
        order
    }

    /// Notes every pair of `order` whose keys are equal up to 1e-6 relative.
    pub fn note_ties(&self, what: &str, order: &[usize], key: impl Fn(usize) -> (u64, f64)) {
        for (i, &a) in order.iter().enumerate() {
            for &b in &order[i + 1..] {
                let ((ia, ka), (ib, kb)) = (key(a), key(b));
                if (ka - kb).abs() <= 1e-6 * ka.abs().max(kb.abs()) && ka.is_finite() {
                    self.ties.borrow_mut().push(format!(
                        "t={:.1} ns: {what} {ia} and {ib} tie at {ka} vs {kb}",
                        self.now
                    ));
                }
            }
        }
    }

    /// Runs the case to its end under `policy`.
    pub fn run(mut self, policy: &mut dyn ReferencePolicy) -> RefResult {
        let mut t: f64 = 0.0;
        let mut rate = vec![0.0; self.flows.len()];
        let mut coflow_event = false;
        let mut n_events = 0;
        loop {
            n_events += 1;
            assert!(n_events < 100_000, "reference simulator does not converge");
            self.now = t;
            policy.before_releases(&mut self, t);
            coflow_event |= self.settle_releases(t);
            policy.after_releases(&mut self, t);
            if self.coflows.iter().all(|c| c.complete) {
                break;
            }
            policy.prepare(&mut self, t);
            if policy.reallocates(t, coflow_event) {
                rate = policy.allocate(&self);
            }
            coflow_event = false;
            policy.served(&mut self, t, &rate);
            let active = self.active_flows();
            // The next event: an arrival, a delayed start (both at exact
            // instants), an instant the policy acts at, a completion, a
            // crossing the policy reacts to.
            let mut at = f64::INFINITY;
            for c in &self.coflows {
                if c.arrival as f64 > t {
                    at = at.min(c.arrival as f64);
                }
            }
            for f in &self.flows {
                if !f.started && f.start_at > t + SAME_INSTANT_NS {
                    at = at.min(f.start_at);
                }
            }
            at = at.min(policy.next_instant(&self, t, &active));
            if self.drop_missed {
                // Deadlines of started flows (Missed::Drop).
                for &f in &active {
                    if let Some(d) = self.flows[f].deadline {
                        let due = self.flows[f].start_at + d;
                        if due > t {
                            at = at.min(due);
                        }
                    }
                }
            }
            let mut dt = at - t;
            let mut exact = at.is_finite();
            for &f in &active {
                if rate[f] > 0.0 {
                    let d = self.flows[f].rem / (rate[f] / 8e9);
                    if d < dt {
                        dt = d;
                        exact = false;
                    }
                }
            }
            let d = policy.next_crossing(&self, &rate, &active);
            if d < dt {
                dt = d;
                exact = false;
            }
            if let Some(p) = policy.protocol_instant(&mut self, t, &rate, &active) {
                at = at.min(p);
            }
            // An exact instant at (or within SAME_INSTANT_NS after) the
            // first completion or crossing is where the step ends: in exact
            // arithmetic they are one instant.
            if at - t <= dt + SAME_INSTANT_NS {
                dt = at - t;
                exact = true;
            }
            assert!(
                dt.is_finite(),
                "reference stalls at {t} ns with {} active flows",
                active.len()
            );
            // Move on.
            for &f in &active {
                self.flows[f].rem -= rate[f] / 8e9 * dt;
            }
            t = if exact { at } else { t + dt };
            for &f in &active {
                let fl = &mut self.flows[f];
                // The engine's rule: a flow due within SNAP_NS of an event
                // finishes at it (its instants are whole nanoseconds).
                let snap = rate[f] > 0.0
                    && fl.rem / (rate[f] / 8e9) <= coflowkit_sim::SNAP_NS as f64 + 1e-6;
                if fl.rem <= 1e-9 * fl.size || snap {
                    fl.rem = 0.0;
                    fl.done = true;
                    fl.finish = t;
                    fl.last_rate = rate[f];
                    rate[f] = 0.0;
                }
            }
            // Missed::Drop: what is unfinished at its deadline leaves now,
            // after the flows that finished now.
            if self.drop_missed {
                for &f in &active {
                    let fl = &mut self.flows[f];
                    if let Some(d) = fl.deadline {
                        if !fl.done && fl.start_at + d <= t + 1e-6 {
                            fl.done = true;
                            fl.finish = t;
                            rate[f] = 0.0;
                        }
                    }
                }
            }
            // A coflow that sent its last started byte is a coflow event.
            for &f in &active {
                if self.flows[f].done && self.active_flows_of(self.flows[f].coflow).is_empty() {
                    coflow_event = true;
                }
            }
        }
        RefResult {
            coflows: self
                .coflows
                .iter()
                .map(|c| (c.id, c.release, c.finish))
                .collect(),
            flows: self.flows.iter().map(|f| f.finish).collect(),
            tolerance: resolution_ns(
                &self.caps,
                self.flows
                    .iter()
                    .map(|f| f.last_rate)
                    .filter(|&r| r > 0.0)
                    .fold(f64::INFINITY, f64::min),
            ),
            ties: self.ties.into_inner(),
            ambiguous: self.ambiguous || self.at_tolerance.get(),
        }
    }
}

/// `items` (given in tie-break order) ordered by `key` ascending, keys
/// within `tol` plus float noise (1e-9 relative) counting as equal,
/// as `coflowkit_model::stats::sort_with_ties` documents it: take the
/// smallest key left; every item within `tol` of it is one run, which goes
/// next in the given order; repeat. So exact ties, however the float
/// arithmetic reached them, go by the given order, and a chain of near-ties
/// (a ~ b, b ~ c, but not a ~ c) is cut at the first key out of reach of
/// the run's smallest.
pub fn order_by(mut items: Vec<usize>, key: impl Fn(usize) -> f64, tol: f64) -> Vec<usize> {
    let mut out = vec![];
    while !items.is_empty() {
        let least = items.iter().map(|&i| key(i)).fold(f64::INFINITY, f64::min);
        let reach = tol + 1e-9 * least.abs();
        let (run, rest): (Vec<usize>, Vec<usize>) = items
            .into_iter()
            .partition(|&i| key(i) == least || key(i) - least <= reach);
        out.extend(run);
        items = rest;
    }
    out
}

/// The reference's result for `case` under `policy`.
pub fn reference(case: &Case, policy: &mut dyn ReferencePolicy) -> RefResult {
    RefSim::new(case).run(policy)
}
