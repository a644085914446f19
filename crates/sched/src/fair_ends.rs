//! `fair-ends`: per-flow equal share of each end, the smaller of the two,
//! the remainder left idle: the FAIR sharing of CoflowSim, the simulator
//! the Aalo paper's numbers come from (github.com/coflow/coflowsim), and so
//! the per-flow fairness Aalo's 2.7x is measured against (Aalo 7). It is a
//! weaker baseline than [`crate::fair`]'s exact max-min: a flow held below
//! its share at one end does not hand the rest to the other flows there.
//!
//! # What CoflowSim does
//! Read at its last commit (b61f209, 2017), without copying code:
//! - `simulators/FlowSimulator.java`, `fairShare`, called by `onSchedule`
//!   at every time step: it counts, for every rack, the unfinished flows
//!   whose mapper is there (`numMapSideFlows`) and those whose reducer is
//!   there (`flowsInRacks[i].size()`), over all admitted coflows, and lets
//!   each flow send `min(C / receivers' count, C / senders' count)` in the
//!   step, capped by its bytes left. Nothing a flow cannot use is given to
//!   another, neither what its smaller end leaves at the other end nor
//!   what a finishing flow leaves of its step.
//! - `Simulator.java`, `simulate`: the counts are taken afresh at every
//!   step of `Constants.SIMULATION_QUANTA` (1/128 of a simulated second,
//!   the time a rack sends 1 MiB at `RACK_BITS_PER_SEC`, 1 Gibit/s), so
//!   the shares follow every arrival and departure, on that grid.
//! - `FlowSimulator.uponJobAdmission`: every flow of a reducer starts at
//!   its coflow's admission (`MAX_CONCURRENT_FLOWS` is read and then
//!   overwritten by the flow count).
//! - `Simulator.mergeTasksByRack` and `Job.arrangeTasks`: machines merge
//!   into racks, the ports of one non-blocking big switch, each with
//!   capacity C up and C down; `ReduceTask.createFlows` makes one flow per
//!   (mapper rack, reducer rack), a same-rack pair included, which counts
//!   at that rack's sending side and at its receiving side (as coflowkit's
//!   benchmark reader keeps a src == dst flow on the port's two links).
//!
//! # What this module does
//! The rule with the grid taken to its limit: at every start and finish of
//! a flow, each active flow gets the least, over the links of its path, of
//! `capacity / active flows crossing the link`. On the big switch the links
//! are the two ends (sending port up, receiving port down), CoflowSim's
//! rule exactly; a compute stage's one link is its host's CPU, shared
//! equally as under `fair`. On a multi-hop fabric every link of the path
//! counts, the same rule carried to links CoflowSim does not have, so the
//! rates stay feasible. Not modelled, as they belong to CoflowSim's engine,
//! not to the sharing rule: its time grid (a time unit of 1/1024 s, in
//! which it also reads the trace's milliseconds; steps of 1/128 s; a
//! coflow admitted at the start of the 10 s epoch it arrives in, so up to
//! 10 s before its arrival, its CCT counted from then; finishes rounded up
//! to a step), its capacity (2^30 bit/s where coflowkit's trace runs use
//! 10^9), and its trace rounding (a reducer's bytes rounded up to a whole
//! MiB per mapper rack; this changes no byte of FB2010).
//!
//! The flows of a path share its rate: one rate group per path (group id =
//! path index). An event changes the counts of the links of the flows that
//! started or finished, and re-rates only the active paths crossing those
//! links (on the big switch, the paths at the ports of the flows that
//! came and went).
//!
//! On FB2010 (`trace_run FB2010-1Hr-150-0.txt fair fair-ends`, release):
//! mean CCT 76.94 s (`fair` 64.63 s, `aalo` 42.33 s), 185,510 events
//! (`fair` 43,977: flows at one port no longer share one rate, so they
//! finish at more distinct instants), 18.9 s user time (`fair` 2.7 s).
//! At CoflowSim's port speed (`LINK_BPS=1048576000`: 2^30 bits per 1024 of
//! its time units, the units taken as the trace's milliseconds) the mean
//! CCT is 70.32 s, where CoflowSim's FAIR gives 70.59 s as issue 67 cites
//! it: the rule is CoflowSim's, what is left is its time grid.
//!
//! # Correctness properties
//! - Every active flow is in its path's group, whose rate is the least
//!   `capacity / count` over the path's links, with counts of active flows
//!   only (`schedule`; held to the reference suite's `fair_ends.rs`).
//! - No link is oversubscribed: a link's flows get at most `capacity /
//!   count` each.

use crate::descriptor::{Needs, Parts, SchedulerDescriptor};
use crate::AnyScheduler;
use crate::{Allocation, Changes, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_model::Time;

/// `fair-ends`: CoflowSim's FAIR.
pub const FAIR_ENDS: SchedulerDescriptor = SchedulerDescriptor {
    cost: 7.1,
    parts: Parts::NONE,
    name: "fair-ends",
    description: "per-flow equal share of each end, the smaller of the two, \
                  remainder left idle (CoflowSim's FAIR)",
    paper: "CoflowSim (github.com/coflow/coflowsim) FAIR, FlowSimulator.fairShare: \
            Aalo 7's per-flow fairness",
    params: &[],
    needs: Needs::NOTHING,
    build: |_, _| Ok(AnyScheduler::NonClairvoyant(Box::new(FairEnds::new()))),
};

/// Per-flow equal share of each link, the least along the path; see the
/// module doc.
#[derive(Debug, Default)]
pub struct FairEnds {
    /// Per link: active flows crossing it.
    n_on_link: Vec<u32>,
    /// Per link: its active paths.
    paths_on_link: Vec<Vec<PathIdx>>,
    /// Per path: its active flows.
    n_on_path: Vec<u32>,
    /// Per path: its place in the list of each of its links, in path order.
    at: Vec<Vec<u32>>,
    /// Links whose count moved in this call, and a mark per link.
    moved: Vec<u32>,
    moved_mark: Vec<bool>,
    /// Paths to re-rate in this call, and a mark per path.
    dirty: Vec<PathIdx>,
    dirty_mark: Vec<bool>,
}

impl FairEnds {
    /// A `fair-ends` scheduler.
    pub fn new() -> FairEnds {
        FairEnds::default()
    }

    /// Counts one more (`+1`) or one fewer (`-1`) active flow on path `p`,
    /// listing or unlisting the path at its links as it becomes active or
    /// idle.
    fn count(&mut self, view: &Observed<'_>, p: PathIdx, step: i32) {
        let pi = p as usize;
        if self.n_on_path.len() <= pi {
            self.n_on_path.resize(pi + 1, 0);
            self.at.resize_with(pi + 1, Vec::new);
            self.dirty_mark.resize(pi + 1, false);
        }
        let links = view.path_links(p);
        if step > 0 && self.n_on_path[pi] == 0 {
            self.at[pi].clear();
            for l in links {
                let list = &mut self.paths_on_link[l.0 as usize];
                self.at[pi].push(list.len() as u32);
                list.push(p);
            }
        }
        self.n_on_path[pi] = self.n_on_path[pi].wrapping_add_signed(step);
        if step < 0 && self.n_on_path[pi] == 0 {
            for (k, l) in links.iter().enumerate() {
                let i = self.at[pi][k] as usize;
                let list = &mut self.paths_on_link[l.0 as usize];
                list.swap_remove(i);
                if let Some(&q) = list.get(i) {
                    // `q` crosses `l` at some place in its path; a path
                    // crosses a link once.
                    let kq = view
                        .path_links(q)
                        .iter()
                        .position(|m| m == l)
                        .expect("a listed path crosses its link");
                    self.at[q as usize][kq] = i as u32;
                }
            }
            self.at[pi].clear();
        }
        for l in links {
            let li = l.0 as usize;
            self.n_on_link[li] = self.n_on_link[li].wrapping_add_signed(step);
            if !self.moved_mark[li] {
                self.moved_mark[li] = true;
                self.moved.push(l.0);
            }
        }
    }
}

impl Scheduler for FairEnds {
    type Knows = KnowsSent;

    fn name(&self) -> &str {
        "fair-ends"
    }

    fn schedule(
        &mut self,
        _now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let caps = view.capacities();
        if self.n_on_link.len() < caps.len() {
            self.n_on_link.resize(caps.len(), 0);
            self.paths_on_link.resize_with(caps.len(), Vec::new);
            self.moved_mark.resize(caps.len(), false);
        }
        for &f in &changes.finished {
            self.count(&view, view.path_idx(f), -1);
        }
        for &f in &changes.started {
            let p = view.path_idx(f);
            self.count(&view, p, 1);
            out.join_group(f, p);
        }
        // Every active path at a link whose count moved.
        for k in 0..self.moved.len() {
            let l = self.moved[k] as usize;
            self.moved_mark[l] = false;
            for &p in &self.paths_on_link[l] {
                if !self.dirty_mark[p as usize] {
                    self.dirty_mark[p as usize] = true;
                    self.dirty.push(p);
                }
            }
        }
        self.moved.clear();
        for &p in &self.dirty {
            self.dirty_mark[p as usize] = false;
            let share = view
                .path_links(p)
                .iter()
                .map(|l| caps[l.0 as usize] / f64::from(self.n_on_link[l.0 as usize]))
                .fold(f64::INFINITY, f64::min);
            out.set_group_rate(p, share);
        }
        self.dirty.clear();
        None
    }
}
