//! The scheduler's host policy run by the agent for its watched flows
//! (`agent --transparent-policy host`): the host-side form of a scheduler
//! (`coflowkit_sched::host`, the one the packet engine's hosts and the
//! testbed's replay run), which marks each flow from what this host sees at
//! once, instead of the coordinator's rates and classes a Δ later. Baraat's
//! FIFO-LM is such a rule (a task's class follows its age; every host
//! agrees on it without talking), and its gain over fair sharing needs the
//! decision at the hosts (docs/reproductions/memcached.md).
//!
//! What the agent tells the policy: a watched flow starts when it is named
//! (its coflow's arrival is when this agent first saw that coflow, so every
//! agent naming a task's flows at the same moment agrees on its age), bytes
//! sent as the kernel counts them every Δ, its finish at its close, and a
//! wake-up at the first count at or after the instant the policy asked for.
//! A flow's class is its marking's; its rate is the NIC's (the marking
//! holds it in its class, the class's ceiling lets it borrow). Control
//! messages (D-CAS's negotiation) are not sent: the agent has no channel to
//! other agents' policies, and says so once in its log.

use coflowkit_model::{Dur, Time};
use coflowkit_sched::build_host;
use coflowkit_sched::host::{Effects, HostContext, HostFlow, HostPolicy, NoView};
use coflowkit_sched::spec::{SchedulerSpec, WorkloadHints};
use std::collections::HashMap;
use std::time::Instant;
use tracing::warn;

/// One host's policy and what it needs to be driven.
pub(crate) struct Local {
    policy: Box<dyn HostPolicy>,
    origin: Instant,
    /// Per coflow with a flow open here: its rank (the order this agent
    /// first saw it), its arrival, and its open flows.
    coflows: HashMap<u64, (u32, Time, u32)>,
    next_rank: u32,
    out: Effects,
    warned: bool,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("policy", &self.policy.name())
            .field("coflows", &self.coflows.len())
            .finish_non_exhaustive()
    }
}

impl Local {
    /// The host policy of scheduler `spec` at host `host` of `n_hosts`
    /// with a NIC of `nic_bps`, or why there is none. No workload hints: a
    /// threshold must be a size, not a percentile.
    pub(crate) fn build(
        spec: &str,
        host: u32,
        n_hosts: u32,
        nic_bps: f64,
    ) -> Result<Local, String> {
        let parsed = SchedulerSpec::parse(spec).map_err(|e| e.to_string())?;
        let ctx = HostContext {
            host,
            n_hosts,
            nic_bps,
            // The fabric's base RTT is not known to an agent; only Karuna's
            // pacing floor reads it.
            rtt: Dur(100_000),
        };
        let policy = build_host(&parsed, &WorkloadHints::default(), &ctx)
            .map_err(|e| format!("--transparent-policy host with scheduler '{spec}': {e}"))?;
        Ok(Local {
            policy,
            origin: Instant::now(),
            coflows: HashMap::new(),
            next_rank: 0,
            out: Effects::default(),
            warned: false,
        })
    }

    fn now(&self) -> Time {
        Time(self.origin.elapsed().as_nanos() as u64)
    }

    /// Flow `id` of coflow `coflow` to host `dst` starts; returns its class.
    pub(crate) fn start(&mut self, id: u64, coflow: u64, dst: u32, size_hint: u64) -> u8 {
        let now = self.now();
        if !self.coflows.contains_key(&coflow) {
            self.coflows.insert(coflow, (self.next_rank, now, 0));
            self.next_rank = self.next_rank.wrapping_add(1);
        }
        let e = self.coflows.get_mut(&coflow).expect("inserted");
        e.2 += 1;
        let flow = HostFlow {
            id,
            coflow: e.0,
            coflow_arrival: e.1,
            dst,
            size: if size_hint > 0 {
                size_hint
            } else {
                u64::MAX / 2
            },
            size_known: size_hint > 0,
            deadline: None,
        };
        self.out.clear();
        self.policy.start(now, &flow, &mut self.out);
        self.policy.marking(id).class.min(7)
    }

    /// Flow `id` has `more` bytes sent beyond what the policy was told; then
    /// the policy's wake-up if due. Returns the flows whose class changed,
    /// with their class.
    pub(crate) fn sent(&mut self, sends: &[(u64, u64)]) -> Vec<(u64, u8)> {
        let now = self.now();
        self.out.clear();
        let mut changed = vec![];
        for &(id, mut more) in sends {
            while more > 0 {
                let step = more.min(self.policy.limit(id).max(1));
                self.policy.sent(now, id, step, &mut self.out);
                more -= step;
            }
            changed.extend(self.out.changed.drain(..));
        }
        if self.policy.wake_at().is_some_and(|t| t <= now) {
            self.policy.wake(now, &NoView, &mut self.out);
        }
        changed.extend(self.out.changed.drain(..));
        self.warn_messages();
        changed.sort_unstable();
        changed.dedup();
        changed
            .into_iter()
            .map(|id| (id, self.policy.marking(id).class.min(7)))
            .collect()
    }

    /// Flow `id` of coflow `coflow` is done.
    pub(crate) fn finish(&mut self, id: u64, coflow: u64) {
        let now = self.now();
        self.out.clear();
        self.policy.finish(now, id, &mut self.out);
        self.warn_messages();
        if let Some(e) = self.coflows.get_mut(&coflow) {
            e.2 -= 1;
            if e.2 == 0 {
                self.coflows.remove(&coflow);
            }
        }
    }

    fn warn_messages(&mut self) {
        if !self.out.send.is_empty() && !self.warned {
            self.warned = true;
            warn!(
                policy = self.policy.name(),
                "the host policy sends control messages to other hosts, which an agent does not \
                 carry: its flows are marked without them"
            );
        }
        self.out.send.clear();
    }

    /// Coflows with a flow open here (bounded by the open flows).
    #[cfg(test)]
    pub(crate) fn coflows(&self) -> usize {
        self.coflows.len()
    }
}
