//! Workloads: coflows made of flows, as a raw spec and as a validated one.
//!
//! A [`Workload`] is what a parser or a generator produces; [`Workload::validate`]
//! checks it against a [`Fabric`] once and returns a [`ValidWorkload`] whose
//! coflows are sorted by (arrival, id) and whose hosts all exist.
//!
//! Correctness properties of a `ValidWorkload` (enforced in `validate`):
//! coflow ids are unique; every coflow has at least one flow; every flow's
//! hosts exist in the fabric; a deadline, if given, is positive.
//!
//! Room for what later issues add: a coflow may carry its job and stage
//! (Aalo's external and internal id parts) and a deadline; flows carry the
//! fields the schedulers may be entitled to.

use crate::fabric::Fabric;
use crate::units::{Bytes, Dur, HostId, Time};
use thiserror::Error;

/// A coflow's id, as given by its trace or generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct CoflowId(pub u64);

/// The job and stage a coflow belongs to (Aalo 5.1: external and internal id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobStage {
    /// The job (external id part).
    pub job: u64,
    /// The stage inside the job (internal id part).
    pub stage: u32,
}

/// Aalo's CoflowId for a coflow of a DAG (Aalo 5.1, Pseudocode 2): an
/// external part naming the DAG and an internal part ordering the coflows
/// inside it. A scheduler that orders coflows of one DAG by the internal part
/// serves a parent before the coflows that depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DagId {
    /// The DAG (external part).
    pub dag: DagKey,
    /// The place in the DAG (internal part): 0 for a root, else more than
    /// every parent's.
    pub stage: u32,
}

/// Names a DAG of coflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DagKey {
    /// A job the workload names ([`CoflowSpec::job`]).
    Job(u64),
    /// The DAG grown from this root coflow by its dependencies (a coflow
    /// with neither job nor parents is a DAG of one).
    Root(CoflowId),
}

impl DagId {
    /// The id a coflow has on its own: its job and stage if it has a job,
    /// else a DAG of one rooted at itself.
    pub fn of(c: &CoflowSpec) -> DagId {
        match c.job {
            Some(j) => DagId {
                dag: DagKey::Job(j.job),
                stage: j.stage,
            },
            None => DagId {
                dag: DagKey::Root(c.id),
                stage: 0,
            },
        }
    }
}

/// What resource a flow uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FlowKind {
    /// A network transfer over the path from `src` to `dst`.
    #[default]
    Net,
    /// A compute stage on the CPU of `src` (`dst == src`): `bytes` units of
    /// work served by the host's CPU resource, which stages share like a link
    /// (TAFE III: "2 units of CPU, then 2 units of network").
    Compute,
}

/// One flow of a coflow.
///
/// A flow is released when its coflow is released and, if `after` names a
/// group, when every flow of that group in the same coflow has finished; it
/// then waits `delay` (worker computation modelled as a wait, Baraat 5.2.3;
/// a speculative copy added later) and starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowSpec {
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// Bytes to send (units of work for a compute stage).
    pub bytes: Bytes,
    /// Network transfer or compute stage.
    pub kind: FlowKind,
    /// The barrier group this flow belongs to inside its coflow (0 by default).
    pub group: u32,
    /// The group that must finish before this flow starts, if any.
    pub after: Option<u32>,
    /// A wait between the flow's release and its start.
    pub delay: Dur,
    /// A deadline relative to the flow's start (Karuna type 1), if any.
    pub deadline: Option<Dur>,
    /// Whether a scheduler entitled to sizes may know this flow's size
    /// (false: Karuna type 3, size unknown).
    pub size_known: bool,
}

impl FlowSpec {
    /// Puts the flow in barrier group `g`.
    pub fn in_group(mut self, g: u32) -> FlowSpec {
        self.group = g;
        self
    }
    /// Makes the flow wait for every flow of group `g` to finish.
    pub fn after(mut self, g: u32) -> FlowSpec {
        self.after = Some(g);
        self
    }
    /// Makes the flow wait `d` after its release.
    pub fn delayed(mut self, d: Dur) -> FlowSpec {
        self.delay = d;
        self
    }
    /// Gives the flow a deadline relative to its start.
    pub fn with_deadline(mut self, d: Dur) -> FlowSpec {
        self.deadline = Some(d);
        self
    }
    /// Hides the flow's size from every scheduler (Karuna type 3).
    pub fn size_unknown(mut self) -> FlowSpec {
        self.size_known = false;
        self
    }
    /// Karuna's flow type: 1 with a deadline, 2 with a known size and no
    /// deadline, 3 with neither.
    pub fn karuna_type(&self) -> u8 {
        match (self.deadline.is_some(), self.size_known) {
            (true, _) => 1,
            (false, true) => 2,
            (false, false) => 3,
        }
    }
}

/// How a child coflow depends on a parent (Aalo 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DepKind {
    /// The child cannot start until the parent has finished.
    StartsAfter,
    /// The child may run alongside the parent but is not finished before it.
    FinishesBefore,
}

/// A dependency of a coflow on a parent coflow of the same workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dependency {
    /// The parent coflow.
    pub parent: CoflowId,
    /// Starts-After or Finishes-Before.
    pub kind: DepKind,
}

/// A coflow: flows that arrive together and are done when the last one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoflowSpec {
    /// Its id, unique in the workload.
    pub id: CoflowId,
    /// When all its flows arrive.
    pub arrival: Time,
    /// Its flows (at least one).
    pub flows: Vec<FlowSpec>,
    /// Its job and stage, if it belongs to a multi-stage job.
    pub job: Option<JobStage>,
    /// Its deadline, relative to its arrival, if it has one.
    pub deadline: Option<Dur>,
    /// The coflows it depends on (a DAG; empty for a lone coflow).
    pub parents: Vec<Dependency>,
}

impl CoflowSpec {
    /// A coflow with no job, no deadline and no parents.
    pub fn new(id: u64, arrival: Time, flows: Vec<FlowSpec>) -> CoflowSpec {
        CoflowSpec {
            id: CoflowId(id),
            arrival,
            flows,
            job: None,
            deadline: None,
            parents: Vec::new(),
        }
    }
    /// Number of flows.
    pub fn width(&self) -> usize {
        self.flows.len()
    }
    /// The largest flow's size (the coflow's length).
    pub fn length(&self) -> Bytes {
        Bytes(self.flows.iter().map(|f| f.bytes.0).max().unwrap_or(0))
    }
    /// Its bin (SN/LN/SW/LW).
    pub fn bin(&self) -> Bin {
        Bin::of(self.length(), self.width())
    }
    /// The sum of its flows' sizes.
    pub fn total_bytes(&self) -> Bytes {
        Bytes(self.flows.iter().map(|f| f.bytes.0).sum())
    }
}

/// The Aalo paper's four coflow classes (7.1): short when the longest flow is
/// under 5 MiB, narrow when the coflow has at most 50 flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bin {
    /// Short and narrow.
    SN,
    /// Long and narrow.
    LN,
    /// Short and wide.
    SW,
    /// Long and wide.
    LW,
}

impl Bin {
    /// All bins, in report order.
    pub const ALL: [Bin; 4] = [Bin::SN, Bin::LN, Bin::SW, Bin::LW];
    /// A coflow is short below this length (5 MiB).
    pub const SHORT_BELOW: Bytes = Bytes(5 * Bytes::MIB);
    /// A coflow is narrow up to this many flows.
    pub const NARROW_UP_TO: usize = 50;
    /// The bin of a coflow with this length and width.
    pub fn of(length: Bytes, width: usize) -> Bin {
        match (length < Bin::SHORT_BELOW, width <= Bin::NARROW_UP_TO) {
            (true, true) => Bin::SN,
            (false, true) => Bin::LN,
            (true, false) => Bin::SW,
            (false, false) => Bin::LW,
        }
    }
    /// Its short name.
    pub fn name(self) -> &'static str {
        match self {
            Bin::SN => "SN",
            Bin::LN => "LN",
            Bin::SW => "SW",
            Bin::LW => "LW",
        }
    }
}

/// A network flow between the given hosts, released with its coflow: a
/// shorthand for tests and generators.
pub fn flow(src: u32, dst: u32, bytes: u64) -> FlowSpec {
    FlowSpec {
        src: HostId(src),
        dst: HostId(dst),
        bytes: Bytes(bytes),
        kind: FlowKind::Net,
        group: 0,
        after: None,
        delay: Dur::ZERO,
        deadline: None,
        size_known: true,
    }
}

/// A compute stage of `work` units on the CPU of `host`.
pub fn compute(host: u32, work: u64) -> FlowSpec {
    FlowSpec {
        kind: FlowKind::Compute,
        ..flow(host, host, work)
    }
}

/// A workload as read or generated, not yet checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Workload {
    /// Number of hosts the workload was written for.
    pub n_hosts: u32,
    /// Its coflows, in any order.
    pub coflows: Vec<CoflowSpec>,
}

/// Why a workload is not valid; each variant names the coflow.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum WorkloadError {
    /// Two coflows share an id.
    #[error("coflow {0}: duplicate id")]
    DuplicateId(u64),
    /// A coflow has no flows.
    #[error("coflow {0}: has no flows")]
    Empty(u64),
    /// A flow names a host the fabric does not have.
    #[error("coflow {coflow}, flow {flow}: {side} host {host} is outside the fabric (hosts 0..{n_hosts})")]
    HostOutside {
        /// The coflow.
        coflow: u64,
        /// The flow's index in the coflow.
        flow: usize,
        /// "source" or "destination".
        side: &'static str,
        /// The host named.
        host: u32,
        /// Hosts in the fabric.
        n_hosts: u32,
    },
    /// The workload needs more hosts than the fabric has.
    #[error("the workload is for {workload} hosts but the fabric has {fabric}")]
    TooFewHosts {
        /// Hosts in the workload.
        workload: u32,
        /// Hosts in the fabric.
        fabric: u32,
    },
    /// A deadline of zero.
    #[error("coflow {0}: deadline must be positive")]
    ZeroDeadline(u64),
    /// A flow's deadline of zero.
    #[error("coflow {coflow}, flow {flow}: deadline must be positive")]
    ZeroFlowDeadline {
        /// The coflow.
        coflow: u64,
        /// The flow's index in the coflow.
        flow: usize,
    },
    /// A flow waits for a group no flow of its coflow belongs to.
    #[error(
        "coflow {coflow}, flow {flow}: waits for group {group}, which has no flows in this coflow"
    )]
    NoSuchGroup {
        /// The coflow.
        coflow: u64,
        /// The flow's index in the coflow.
        flow: usize,
        /// The group named.
        group: u32,
    },
    /// The groups of a coflow wait for each other in a cycle.
    #[error("coflow {coflow}: flow groups wait for each other in a cycle through group {group}")]
    GroupCycle {
        /// The coflow.
        coflow: u64,
        /// A group on the cycle.
        group: u32,
    },
    /// A compute stage between two hosts.
    #[error("coflow {coflow}, flow {flow}: a compute stage runs on one host, but src {src} != dst {dst}")]
    ComputeAcross {
        /// The coflow.
        coflow: u64,
        /// The flow's index in the coflow.
        flow: usize,
        /// Its source.
        src: u32,
        /// Its destination.
        dst: u32,
    },
    /// A compute stage on a fabric without CPU resources.
    #[error("coflow {coflow}, flow {flow}: a compute stage needs a fabric with CPU resources (host {host} has none)")]
    NoCpu {
        /// The coflow.
        coflow: u64,
        /// The flow's index in the coflow.
        flow: usize,
        /// The host.
        host: u32,
    },
    /// A parent that is not in the workload.
    #[error("coflow {coflow}: parent {parent} is not in the workload")]
    NoSuchParent {
        /// The child.
        coflow: u64,
        /// The parent named.
        parent: u64,
    },
    /// Coflows that depend on each other in a cycle.
    #[error("coflow {0}: its dependencies form a cycle")]
    DependencyCycle(u64),
}

/// A workload that has passed [`Workload::validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidWorkload {
    n_hosts: u32,
    coflows: Vec<CoflowSpec>,
}

impl Workload {
    /// Checks the workload against `fabric`; sorts coflows by (arrival, id).
    pub fn validate(self, fabric: &Fabric) -> Result<ValidWorkload, WorkloadError> {
        let n = fabric.n_hosts();
        if self.n_hosts > n {
            return Err(WorkloadError::TooFewHosts {
                workload: self.n_hosts,
                fabric: n,
            });
        }
        let mut ids: Vec<u64> = self.coflows.iter().map(|c| c.id.0).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(WorkloadError::DuplicateId(w[0]));
        }
        for c in &self.coflows {
            if c.flows.is_empty() {
                return Err(WorkloadError::Empty(c.id.0));
            }
            if c.deadline == Some(Dur::ZERO) {
                return Err(WorkloadError::ZeroDeadline(c.id.0));
            }
            for (i, f) in c.flows.iter().enumerate() {
                let coflow = c.id.0;
                for (side, h) in [("source", f.src), ("destination", f.dst)] {
                    if h.0 >= n {
                        return Err(WorkloadError::HostOutside {
                            coflow,
                            flow: i,
                            side,
                            host: h.0,
                            n_hosts: n,
                        });
                    }
                }
                if f.deadline == Some(Dur::ZERO) {
                    return Err(WorkloadError::ZeroFlowDeadline { coflow, flow: i });
                }
                if f.kind == FlowKind::Compute {
                    if f.src != f.dst {
                        return Err(WorkloadError::ComputeAcross {
                            coflow,
                            flow: i,
                            src: f.src.0,
                            dst: f.dst.0,
                        });
                    }
                    if fabric.cpu(f.src).is_none() {
                        return Err(WorkloadError::NoCpu {
                            coflow,
                            flow: i,
                            host: f.src.0,
                        });
                    }
                }
                if let Some(g) = f.after {
                    if !c.flows.iter().any(|o| o.group == g) {
                        return Err(WorkloadError::NoSuchGroup {
                            coflow,
                            flow: i,
                            group: g,
                        });
                    }
                }
            }
            check_group_order(c)?;
        }
        check_dependencies(&self.coflows, &ids)?;
        let mut coflows = self.coflows;
        coflows.sort_by_key(|c| (c.arrival, c.id));
        Ok(ValidWorkload {
            n_hosts: n,
            coflows,
        })
    }
}

/// The groups of one coflow must wait for each other in a DAG.
fn check_group_order(c: &CoflowSpec) -> Result<(), WorkloadError> {
    if c.flows.iter().all(|f| f.after.is_none()) {
        return Ok(());
    }
    // Edges group -> the group it waits for; follow them from every group.
    let mut waits: Vec<(u32, u32)> = c
        .flows
        .iter()
        .filter_map(|f| f.after.map(|a| (f.group, a)))
        .collect();
    waits.sort_unstable();
    waits.dedup();
    let next = |g: u32| waits.iter().filter(move |e| e.0 == g).map(|e| e.1);
    for &(start, _) in &waits {
        // Depth-first search for a path back to `start`.
        let mut stack: Vec<u32> = next(start).collect();
        let mut seen = vec![start];
        while let Some(g) = stack.pop() {
            if g == start {
                return Err(WorkloadError::GroupCycle {
                    coflow: c.id.0,
                    group: start,
                });
            }
            if !seen.contains(&g) {
                seen.push(g);
                stack.extend(next(g));
            }
        }
    }
    Ok(())
}

/// Every parent exists and the coflows form a DAG. `sorted_ids` are all
/// coflow ids, sorted.
fn check_dependencies(coflows: &[CoflowSpec], sorted_ids: &[u64]) -> Result<(), WorkloadError> {
    if coflows.iter().all(|c| c.parents.is_empty()) {
        return Ok(());
    }
    let pos = |id: u64| sorted_ids.binary_search(&id).ok();
    // by_pos[i] = index in `coflows` of the coflow whose id is sorted_ids[i].
    let mut by_pos = vec![0usize; coflows.len()];
    for (k, c) in coflows.iter().enumerate() {
        by_pos[pos(c.id.0).expect("own id")] = k;
    }
    for c in coflows {
        for d in &c.parents {
            if pos(d.parent.0).is_none() {
                return Err(WorkloadError::NoSuchParent {
                    coflow: c.id.0,
                    parent: d.parent.0,
                });
            }
        }
    }
    // Kahn's algorithm over child -> parent edges.
    let mut n_children = vec![0usize; coflows.len()];
    for c in coflows {
        for d in &c.parents {
            n_children[by_pos[pos(d.parent.0).expect("checked")]] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..coflows.len()).filter(|&k| n_children[k] == 0).collect();
    let mut n_done = 0;
    while let Some(k) = ready.pop() {
        n_done += 1;
        for d in &coflows[k].parents {
            let p = by_pos[pos(d.parent.0).expect("checked")];
            n_children[p] -= 1;
            if n_children[p] == 0 {
                ready.push(p);
            }
        }
    }
    if n_done < coflows.len() {
        let k = (0..coflows.len())
            .find(|&k| n_children[k] > 0)
            .expect("a coflow on the cycle");
        return Err(WorkloadError::DependencyCycle(coflows[k].id.0));
    }
    Ok(())
}

impl ValidWorkload {
    /// Coflows sorted by (arrival, id).
    pub fn coflows(&self) -> &[CoflowSpec] {
        &self.coflows
    }
    /// Hosts of the fabric it was validated against.
    pub fn n_hosts(&self) -> u32 {
        self.n_hosts
    }
    /// Total number of flows.
    pub fn n_flows(&self) -> usize {
        self.coflows.iter().map(|c| c.flows.len()).sum()
    }
    /// Aalo's CoflowId of every coflow, in [`ValidWorkload::coflows`] order
    /// (Aalo 5.1, Pseudocode 2). A coflow with a job keeps its job and stage
    /// as the workload gives them. A coflow without a job is a root (its own
    /// DAG, internal id 0) if it has no parents; else it joins the DAG of its
    /// first parent with internal id `1 + max` over its parents' (the
    /// pseudocode's `pId` and `P`). So within a DAG built from parents alone,
    /// a coflow always comes after everything it depends on.
    pub fn dag_ids(&self) -> Vec<DagId> {
        let coflows = &self.coflows;
        let mut ids: Vec<DagId> = coflows.iter().map(DagId::of).collect();
        if coflows
            .iter()
            .all(|c| c.parents.is_empty() || c.job.is_some())
        {
            return ids;
        }
        let mut pos: Vec<(u64, usize)> = coflows
            .iter()
            .enumerate()
            .map(|(k, c)| (c.id.0, k))
            .collect();
        pos.sort_unstable();
        let at = |id: CoflowId| pos[pos.partition_point(|p| p.0 < id.0)].1;
        // Parents before children (validation guarantees a DAG): Kahn's
        // algorithm over parent -> child edges.
        let mut n_parents: Vec<usize> = coflows.iter().map(|c| c.parents.len()).collect();
        let mut children: Vec<Vec<usize>> = vec![vec![]; coflows.len()];
        for (k, c) in coflows.iter().enumerate() {
            for d in &c.parents {
                children[at(d.parent)].push(k);
            }
        }
        let mut ready: Vec<usize> = (0..coflows.len()).filter(|&k| n_parents[k] == 0).collect();
        while let Some(k) = ready.pop() {
            let c = &coflows[k];
            if c.job.is_none() {
                if let Some(first) = c.parents.first() {
                    ids[k] = DagId {
                        dag: ids[at(first.parent)].dag,
                        stage: 1 + c
                            .parents
                            .iter()
                            .map(|d| ids[at(d.parent)].stage)
                            .max()
                            .unwrap_or(0),
                    };
                }
            }
            for &child in &children[k] {
                n_parents[child] -= 1;
                if n_parents[child] == 0 {
                    ready.push(child);
                }
            }
        }
        ids
    }
    /// Back to a raw workload (for writing it out).
    pub fn into_workload(self) -> Workload {
        Workload {
            n_hosts: self.n_hosts,
            coflows: self.coflows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::BitsPerSec;

    #[test]
    fn validation_names_the_problem() {
        let fab = Fabric::big_switch(2, BitsPerSec::GBPS).unwrap();
        let w = Workload {
            n_hosts: 2,
            coflows: vec![CoflowSpec::new(7, Time(0), vec![flow(0, 2, 1)])],
        };
        assert_eq!(
            w.validate(&fab).unwrap_err().to_string(),
            "coflow 7, flow 0: destination host 2 is outside the fabric (hosts 0..2)"
        );
        let w = Workload {
            n_hosts: 2,
            coflows: vec![
                CoflowSpec::new(1, Time(0), vec![flow(0, 1, 1)]),
                CoflowSpec::new(1, Time(5), vec![flow(0, 1, 1)]),
            ],
        };
        assert_eq!(w.validate(&fab).unwrap_err(), WorkloadError::DuplicateId(1));
    }

    #[test]
    fn validation_checks_groups_and_dependencies() {
        let fab = Fabric::big_switch(2, BitsPerSec::GBPS).unwrap();
        let one = |flows: Vec<FlowSpec>| Workload {
            n_hosts: 2,
            coflows: vec![CoflowSpec::new(3, Time(0), flows)],
        };
        let e = one(vec![flow(0, 1, 1).after(4)])
            .validate(&fab)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "coflow 3, flow 0: waits for group 4, which has no flows in this coflow"
        );
        let e = one(vec![
            flow(0, 1, 1).in_group(1).after(2),
            flow(0, 1, 1).in_group(2).after(1),
        ])
        .validate(&fab);
        assert!(matches!(
            e,
            Err(WorkloadError::GroupCycle { coflow: 3, .. })
        ));
        assert!(one(vec![
            flow(0, 1, 1).in_group(1),
            flow(1, 0, 1).in_group(2).after(1)
        ])
        .validate(&fab)
        .is_ok());
        let e = one(vec![compute(0, 5)]).validate(&fab).unwrap_err();
        assert_eq!(
            e.to_string(),
            "coflow 3, flow 0: a compute stage needs a fabric with CPU resources (host 0 has none)"
        );
        let dep = |p: u64| Dependency {
            parent: CoflowId(p),
            kind: DepKind::StartsAfter,
        };
        let mut a = CoflowSpec::new(1, Time(0), vec![flow(0, 1, 1)]);
        let mut b = CoflowSpec::new(2, Time(0), vec![flow(0, 1, 1)]);
        b.parents.push(dep(1));
        let w = Workload {
            n_hosts: 2,
            coflows: vec![a.clone(), b.clone()],
        };
        assert!(w.validate(&fab).is_ok());
        a.parents.push(dep(2));
        let w = Workload {
            n_hosts: 2,
            coflows: vec![a, b.clone()],
        };
        assert!(matches!(
            w.validate(&fab),
            Err(WorkloadError::DependencyCycle(_))
        ));
        b.parents = vec![dep(9)];
        let w = Workload {
            n_hosts: 2,
            coflows: vec![b],
        };
        assert_eq!(
            w.validate(&fab).unwrap_err().to_string(),
            "coflow 2: parent 9 is not in the workload"
        );
    }

    #[test]
    fn dag_ids_follow_pseudocode_2() {
        let fab = Fabric::big_switch(2, BitsPerSec::GBPS).unwrap();
        let dep = |p: u64, kind| Dependency {
            parent: CoflowId(p),
            kind,
        };
        // 5 -> 3 (Starts-After), 3 and 4 -> 2 (Finishes-Before, Starts-After);
        // 6 is alone; 7 has a job of its own and a parent.
        let c = |id: u64, parents: Vec<Dependency>| {
            let mut s = CoflowSpec::new(id, Time(id), vec![flow(0, 1, 1)]);
            s.parents = parents;
            s
        };
        let mut seven = c(7, vec![dep(5, DepKind::StartsAfter)]);
        seven.job = Some(JobStage { job: 9, stage: 4 });
        let w = Workload {
            n_hosts: 2,
            coflows: vec![
                c(
                    2,
                    vec![
                        dep(3, DepKind::FinishesBefore),
                        dep(4, DepKind::StartsAfter),
                    ],
                ),
                c(3, vec![dep(5, DepKind::StartsAfter)]),
                c(4, vec![]),
                c(5, vec![]),
                c(6, vec![]),
                seven,
            ],
        }
        .validate(&fab)
        .unwrap();
        let ids: Vec<(u64, DagId)> = w
            .coflows()
            .iter()
            .map(|c| c.id.0)
            .zip(w.dag_ids())
            .collect();
        let root = |r: u64, stage| DagId {
            dag: DagKey::Root(CoflowId(r)),
            stage,
        };
        assert_eq!(
            ids,
            vec![
                (2, root(5, 2)),
                (3, root(5, 1)),
                (4, root(4, 0)),
                (5, root(5, 0)),
                (6, root(6, 0)),
                (
                    7,
                    DagId {
                        dag: DagKey::Job(9),
                        stage: 4
                    }
                ),
            ]
        );
    }

    #[test]
    fn validation_sorts_by_arrival() {
        let fab = Fabric::big_switch(2, BitsPerSec::GBPS).unwrap();
        let w = Workload {
            n_hosts: 2,
            coflows: vec![
                CoflowSpec::new(1, Time(9), vec![flow(0, 1, 1)]),
                CoflowSpec::new(2, Time(5), vec![flow(0, 1, 1)]),
            ],
        };
        let v = w.validate(&fab).unwrap();
        assert_eq!(v.coflows()[0].id, CoflowId(2));
        assert_eq!(v.n_flows(), 2);
    }
}
