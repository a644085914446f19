//! Baraat at a host (Dogar, Karagiannis, Ballani and Rowstron, SIGCOMM
//! 2014, 4.1 and 4.3.3; seed `000_db116703e99242b1.txt`): the sender side
//! of Smart Priority Classes. The switches' side (classes, Algorithm 1) is
//! `coflowkit_packet::spc`; this policy is what a host adds to it.
//!
//! - **Task tag** (4.1, 4.4): every flow carries its task's id, the
//!   coflow's rank (release order, which every host agrees on: the
//!   flow-level model's ids with one counter), and a heavy flag, set once
//!   this host has sent `threshold` bytes of the task (as `fifo-lm`'s host
//!   side; the switches also judge heaviness from the bytes they reserved,
//!   and a task is heavy at a port once either says so).
//! - **Requests** (4.3.3, Algorithm 2): each flow asks the switches on its
//!   path for a rate once per interval (the spec's `rtt`; the packet engine
//!   carries the request on a data packet, and lets a held flow ask less
//!   often: `coflowkit_packet`'s `spc_probe_max`); its first demand
//!   is `min(NIC rate, size / rtt)`, and after each feedback
//!   `min(NIC rate, buffered / rtt)`, lowered to `MinNR + delta` when the
//!   least NR is below the demand the feedback answered (the flow is
//!   bottlenecked elsewhere): [`crate::baraat::demand`], the flow-level
//!   model's rule. `buffered` is what the host has not had acknowledged
//!   ([`HostView::unacked`]), as the flow-level model's remaining bytes.
//! - **Pacing** (4.3.3: "it transmits data at the minimum of the rates
//!   specified in the AR vector"): the flow is paced at its path's least
//!   AR ([`Marking::pace`], bytes/s, rounded down); until its first
//!   feedback, and while its AR is 0, it is paced at 0 (a driver holds
//!   it: the packet engine sends no data of a flow whose least AR is 0).
//!
//! Its class is 0 for every flow: the queue of a data packet is chosen by
//! each switch port from the task's class there (`SpcPort::queue_of`); the
//! marking's class is what the flow's other packets (ACKs, handshakes)
//! use. A driver without Smart Priority Classes (the testbed) cannot run
//! it: its flows would wait for a feedback that never comes.
//!
//! The keys are the `baraat` scheduler's ([`crate::baraat::BaraatConfig`]):
//! `threshold`, `rtt` and `delta`; the switches read `share`, `vc` and
//! `vc_max`; the task-id keys (`counters`, `background`) are not read (one
//! counter).

use crate::baraat::BaraatConfig;
use crate::descriptor::Params;
use crate::host::tasks::{Task, Tasks};
use crate::host::{
    whole_bytes, Effects, HostContext, HostFlow, HostPolicy, HostView, Marking, PathRates, TaskTag,
};
use crate::spec::{SchedulerError, WorkloadHints};
use coflowkit_model::{Dur, Time};
use std::collections::HashMap;

/// One flow's rate state.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FlowRate {
    /// The demand of its latest request, bits/s.
    demand: u64,
    /// Its path's least AR, bits/s (0 before the first feedback).
    ar: u64,
}

/// Baraat's sender; see the module doc.
#[derive(Debug, Clone)]
pub struct BaraatHost {
    /// Bytes of a task sent here that make it heavy.
    heavy: u64,
    /// The interval between requests (the paper's RTT).
    interval: Dur,
    /// Algorithm 2's delta, bits/s.
    delta: f64,
    /// The NIC's rate, bits/s.
    nic: f64,
    tasks: Tasks,
    flows: HashMap<u64, FlowRate>,
}

impl BaraatHost {
    /// A host whose NIC sends `nic_bps`, its tasks heavy from `heavy`
    /// bytes sent here, asking every `interval` with Algorithm 2's `delta`.
    pub fn new(heavy: u64, interval: Dur, delta: f64, nic_bps: f64) -> BaraatHost {
        BaraatHost {
            heavy,
            interval: Dur(interval.0.max(1)),
            delta,
            nic: nic_bps,
            tasks: Tasks::default(),
            flows: HashMap::new(),
        }
    }

    /// Algorithm 2, line 2: `min(NIC rate, bytes / interval)`, bits/s.
    fn cap(&self, bytes: u64) -> f64 {
        let per_s = bytes as f64 * 8.0 * 1e9 / self.interval.0 as f64;
        self.nic.min(per_s)
    }

    fn is_heavy(&self, task: &Task) -> bool {
        task.bytes >= self.heavy
    }
}

/// A rate in bits/s as an integer (rounded, held to `u64`).
fn bits(rate: f64) -> u64 {
    rate.max(0.0).round().min(u64::MAX as f64) as u64
}

impl HostPolicy for BaraatHost {
    fn name(&self) -> &str {
        "baraat"
    }
    fn start(&mut self, _now: Time, flow: &HostFlow, _out: &mut Effects) {
        self.tasks.join(flow, |_| 0);
        let demand = bits(self.cap(flow.size));
        self.flows.insert(flow.id, FlowRate { demand, ar: 0 });
    }
    fn sent(&mut self, _now: Time, flow: u64, bytes: u64, out: &mut Effects) {
        let heavy = self.heavy;
        let Some(task) = self.tasks.of_mut(flow) else {
            return;
        };
        let before = task.bytes;
        task.bytes = before.saturating_add(bytes);
        if before < heavy && task.bytes >= heavy {
            // The heavy flag is in every flow's tag.
            out.changed.extend_from_slice(&task.flows);
        }
    }
    fn finish(&mut self, _now: Time, flow: u64, _out: &mut Effects) {
        self.tasks.leave(flow);
        self.flows.remove(&flow);
    }
    fn feedback(
        &mut self,
        _now: Time,
        flow: u64,
        rates: PathRates,
        view: &dyn HostView,
        out: &mut Effects,
    ) {
        let nic = self.nic;
        let buffered = self.cap(view.unacked(flow));
        let delta = self.delta;
        let Some(st) = self.flows.get_mut(&flow) else {
            return;
        };
        // No switch wrote a rate (a path of only hosts): the NIC's.
        let ar = if rates.min_ar == u64::MAX {
            bits(nic)
        } else {
            rates.min_ar
        };
        let previous = Some((st.demand as f64, rates.min_nr as f64));
        st.demand = bits(crate::baraat::demand(nic, buffered, previous, delta));
        if ar / 8 != st.ar / 8 {
            out.changed.push(flow);
        }
        st.ar = ar;
    }
    fn demand(&self, flow: u64) -> Option<u64> {
        self.flows.get(&flow).map(|st| st.demand)
    }
    fn marking(&self, flow: u64) -> Marking {
        let (Some((c, task)), Some(st)) = (self.tasks.of(flow), self.flows.get(&flow)) else {
            return Marking::BEST_EFFORT;
        };
        Marking {
            pace: Some(st.ar / 8),
            task: Some(TaskTag {
                id: u64::from(c),
                heavy: self.is_heavy(task),
                bytes: task.bytes,
            }),
            ..Marking::class(0)
        }
    }
    fn limit(&self, flow: u64) -> u64 {
        self.tasks.to_heavy(flow, self.heavy)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Builds it from the `baraat` scheduler's spec ([`BaraatConfig::of_params`]:
/// `threshold`, whose percentile needs the workload's coflow sizes, `rtt`,
/// `delta`) and the host's NIC rate.
pub(crate) fn build(
    p: &Params<'_>,
    hints: &WorkloadHints,
    ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let c = BaraatConfig::of_params(p, hints)?;
    Ok(Box::new(BaraatHost::new(
        whole_bytes(c.threshold),
        c.rtt,
        c.delta,
        ctx.nic_bps,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NoView;

    struct Unacked(u64);
    impl HostView for Unacked {
        fn unacked(&self, _flow: u64) -> u64 {
            self.0
        }
    }

    fn flow(id: u64, coflow: u32, size: u64) -> HostFlow {
        HostFlow {
            id,
            coflow,
            coflow_arrival: Time::ZERO,
            dst: 1,
            size,
            size_known: true,
            deadline: None,
        }
    }

    const G: u64 = 1_000_000_000;

    /// By hand: 1 Gbit/s NIC, 100 us interval (12,500 bytes per interval
    /// at line rate), delta 10 Mbit/s.
    #[test]
    fn demand_follows_algorithm_2_and_the_pace_the_least_ar() {
        let mut p = BaraatHost::new(u64::MAX, Dur::from_micros(100), 10e6, 1e9);
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 3, 1_000_000), &mut out);
        // 1 MB is 80 Gbit/s over 100 us: the NIC's rate.
        assert_eq!(p.demand(1), Some(G));
        let m = p.marking(1);
        assert_eq!((m.class, m.pace), (0, Some(0)), "held until feedback");
        assert_eq!(m.task.unwrap().id, 3);
        // The path grants 400 Mbit/s now, 600 nominal: bottlenecked, so
        // the next demand is 600 + 10 Mbit/s.
        let rates = PathRates {
            min_ar: 400_000_000,
            min_nr: 600_000_000,
        };
        p.feedback(Time(1), 1, rates, &Unacked(900_000), &mut out);
        assert_eq!(out.changed, vec![1]);
        assert_eq!(p.marking(1).pace, Some(50_000_000));
        assert_eq!(p.demand(1), Some(610_000_000));
        // The bottleneck frees (NR 1 Gbit/s is not below 610): the demand
        // climbs back to the NIC's rate, and the pace to the AR.
        out.clear();
        let free = PathRates {
            min_ar: G,
            min_nr: G,
        };
        p.feedback(Time(2), 1, free, &Unacked(900_000), &mut out);
        assert_eq!(p.demand(1), Some(G));
        assert_eq!(p.marking(1).pace, Some(125_000_000));
        // 5,000 bytes left: 400 Mbit/s over one interval.
        p.feedback(Time(3), 1, free, &Unacked(5_000), &mut out);
        assert_eq!(p.demand(1), Some(400_000_000));
        // An unchanged AR changes nothing.
        out.clear();
        p.feedback(Time(4), 1, free, &NoView, &mut out);
        assert!(out.changed.is_empty());
        p.finish(Time(5), 1, &mut out);
        assert_eq!(p.demand(1), None);
        assert_eq!(p.marking(1), Marking::BEST_EFFORT);
    }

    #[test]
    fn a_task_turns_heavy_at_the_threshold_for_all_its_flows() {
        let mut p = BaraatHost::new(1000, Dur::from_micros(100), 0.0, 1e9);
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 0, 5000), &mut out);
        p.start(Time::ZERO, &flow(2, 0, 5000), &mut out);
        // A small flow asks only what it has: 800 bytes in 100 us.
        p.start(Time::ZERO, &flow(3, 1, 800), &mut out);
        assert_eq!(p.demand(3), Some(64_000_000));
        assert_eq!(p.limit(1), 1000);
        p.sent(Time(1), 1, 600, &mut out);
        assert!(out.changed.is_empty());
        assert_eq!(p.limit(2), 400);
        p.sent(Time(2), 2, 400, &mut out);
        assert_eq!(out.changed, vec![1, 2]);
        let tag = p.marking(1).task.unwrap();
        assert_eq!((tag.id, tag.heavy, tag.bytes), (0, true, 1000));
        assert!(!p.marking(3).task.unwrap().heavy);
        assert_eq!(p.limit(1), u64::MAX);
    }
}
