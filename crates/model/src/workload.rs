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

/// One flow of a coflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowSpec {
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// Bytes to send.
    pub bytes: Bytes,
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
}

impl CoflowSpec {
    /// A coflow with no job and no deadline.
    pub fn new(id: u64, arrival: Time, flows: Vec<FlowSpec>) -> CoflowSpec {
        CoflowSpec { id: CoflowId(id), arrival, flows, job: None, deadline: None }
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

/// A flow between the given hosts: a shorthand for tests and generators.
pub fn flow(src: u32, dst: u32, bytes: u64) -> FlowSpec {
    FlowSpec { src: HostId(src), dst: HostId(dst), bytes: Bytes(bytes) }
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
            return Err(WorkloadError::TooFewHosts { workload: self.n_hosts, fabric: n });
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
                for (side, h) in [("source", f.src), ("destination", f.dst)] {
                    if h.0 >= n {
                        return Err(WorkloadError::HostOutside { coflow: c.id.0, flow: i, side, host: h.0, n_hosts: n });
                    }
                }
            }
        }
        let mut coflows = self.coflows;
        coflows.sort_by_key(|c| (c.arrival, c.id));
        Ok(ValidWorkload { n_hosts: n, coflows })
    }
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
    /// Back to a raw workload (for writing it out).
    pub fn into_workload(self) -> Workload {
        Workload { n_hosts: self.n_hosts, coflows: self.coflows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::BitsPerSec;

    #[test]
    fn validation_names_the_problem() {
        let fab = Fabric::big_switch(2, BitsPerSec::GBPS).unwrap();
        let w = Workload { n_hosts: 2, coflows: vec![CoflowSpec::new(7, Time(0), vec![flow(0, 2, 1)])] };
        assert_eq!(
            w.validate(&fab).unwrap_err().to_string(),
            "coflow 7, flow 0: destination host 2 is outside the fabric (hosts 0..2)"
        );
        let w = Workload {
            n_hosts: 2,
            coflows: vec![CoflowSpec::new(1, Time(0), vec![flow(0, 1, 1)]), CoflowSpec::new(1, Time(5), vec![flow(0, 1, 1)])],
        };
        assert_eq!(w.validate(&fab).unwrap_err(), WorkloadError::DuplicateId(1));
    }

    #[test]
    fn validation_sorts_by_arrival() {
        let fab = Fabric::big_switch(2, BitsPerSec::GBPS).unwrap();
        let w = Workload {
            n_hosts: 2,
            coflows: vec![CoflowSpec::new(1, Time(9), vec![flow(0, 1, 1)]), CoflowSpec::new(2, Time(5), vec![flow(0, 1, 1)])],
        };
        let v = w.validate(&fab).unwrap();
        assert_eq!(v.coflows()[0].id, CoflowId(2));
        assert_eq!(v.n_flows(), 2);
    }
}
