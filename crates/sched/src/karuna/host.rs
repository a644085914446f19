//! Karuna at a host (Chen et al., SIGCOMM 2016; [`crate::karuna`] is its
//! flow-level model and holds the thresholds and their presets).
//!
//! Three flow types (Karuna 2.1), each marked as the paper's end host does
//! (3.1-3.3, Fig. 3's "flow classifier"):
//! - type 1 (a deadline): class 0, congestion control MCP ([`Cc::Mcp`],
//!   §4, as seed 002's §1 names it) and a pacing rate at MCP's target, the
//!   minimal rate that meets the deadline, bytes left over the time left
//!   until one base RTT before the deadline (so that the last byte arrives
//!   by it, not only leaves by it), never
//!   below two 1,460-byte segments per base RTT ([`HostContext::rtt`], the
//!   authors' prototype's floor); re-evaluated on the grid `start + k * repace`
//!   (the host key `repace`, by default the spec's `rtt`, as the flow-level
//!   model re-evaluates) and held in between (past the deadline: the floor);
//! - type 2 (a known size): class `1 + #{t in split : size > t}` (3.3.1,
//!   the split thresholds);
//! - type 3 (size unknown): starts in class 1 and is demoted at the byte its
//!   sent count reaches each sieve threshold (3.3.2, PIAS's sieve).
//!
//! Starvation (`starvation=DUR`, as the flow-level karuna's, 4's prototype
//! after three timeouts): a type-2 or type-3 flow whose receiver has
//! acknowledged nothing for `DUR` is promoted one class (type 2, never
//! above class 1) or has its sent count reset (type 3), and the clock
//! starts again. A host knows a flow's progress by its acknowledged bytes:
//! sent minus [`HostView::unacked`], sampled when it wakes (at the earliest
//! instant a starvation could be due), so a flow that progressed since the
//! last sample counts as having progressed then.
//!
//! The testbed's `Karuna` class (before the policies moved here) paced on
//! one 10 ms timer for every deadline flow and re-marked them all each
//! time; here each flow has its grid (the testbed gives `repace=10ms`) and a
//! flow is re-marked only when its rate moved. It had no starvation rule.

use crate::descriptor::{Kind, Param, Params};
use crate::host::{
    demotion_class, to_next_threshold, whole_bytes, Cc, Effects, HostContext, HostFlow, HostPolicy,
    HostView, Marking,
};
use crate::karuna::{karuna_config, SEGMENT};
use crate::spec::{SchedulerError, WorkloadHints};
use coflowkit_model::{Dur, Time};
use std::collections::BTreeMap;

/// The host key `repace` of `karuna`.
pub const REPACE_PARAM: Param = Param {
    key: "repace",
    kind: Kind::Duration,
    default: "rtt",
    unit: "",
    help: "host policy: how often a deadline flow's pacing rate is re-evaluated",
};

/// The host key `lead` of `karuna`.
pub const LEAD_PARAM: Param = Param {
    key: "lead",
    kind: Kind::Duration,
    default: "rtt",
    unit: "",
    help: "host policy: how long before its deadline a deadline flow aims to send its last byte",
};

/// One flow at this host.
#[derive(Debug, Clone)]
struct Flow {
    /// Karuna's type: 1, 2 or 3.
    kind: u8,
    size: u64,
    sent: u64,
    /// Type 3: the sent count at the last reset.
    offset: u64,
    /// Type 2: promotions.
    promoted: u8,
    start: Time,
    /// Type 1: the absolute deadline, the pacing rate (bytes/s) and the
    /// next re-evaluation.
    deadline: Time,
    pace: u64,
    next_eval: Time,
    /// Acknowledged bytes at the last sample and when they last grew.
    acked: u64,
    progress: Time,
    class: u8,
}

/// Karuna's per-host marking and pacing; see the module doc.
#[derive(Debug, Clone)]
pub struct KarunaHost {
    split: Vec<u64>,
    sieve: Vec<u64>,
    /// How often a deadline flow's rate is re-evaluated.
    every: Dur,
    /// The pacing floor, bytes per second.
    floor: u64,
    /// How long before its deadline a flow's last byte is to leave: by
    /// default one base RTT, which covers its one-way trip to the receiver.
    lead: Dur,
    /// The base RTT: once inside `lead`, a flow still aims one `rtt` before
    /// its deadline, and inside that at the deadline itself.
    rtt: Dur,
    starvation: Option<Dur>,
    flows: BTreeMap<u64, Flow>,
}

impl KarunaHost {
    /// The policy: `split` and `sieve` thresholds (bytes, ascending, at
    /// most 6 each), a deadline flow's rate re-evaluated every `every`,
    /// its floor two segments per `rtt`, its last byte aimed one `rtt`
    /// before the deadline ([`KarunaHost::with_lead`] for another lead),
    /// starvation after `starvation`.
    pub fn new(
        split: &[u64],
        sieve: &[u64],
        every: Dur,
        rtt: Dur,
        starvation: Option<Dur>,
    ) -> KarunaHost {
        KarunaHost {
            split: split.to_vec(),
            sieve: sieve.to_vec(),
            every: Dur(every.0.max(1)),
            floor: (2.0 * SEGMENT * 1e9 / rtt.0.max(1) as f64) as u64,
            lead: rtt,
            rtt,
            starvation,
            flows: BTreeMap::new(),
        }
    }

    /// The same policy aiming a deadline flow's last byte `lead` before its
    /// deadline (the host key `lead`).
    pub fn with_lead(mut self, lead: Dur) -> KarunaHost {
        self.lead = lead;
        self
    }

    /// The pacing floor, bytes per second.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// A flow's class now.
    fn class(&self, f: &Flow) -> u8 {
        match f.kind {
            1 => 0,
            2 => {
                let by_size = self.split.iter().filter(|&&t| f.size > t).count() as u8;
                1 + by_size.saturating_sub(f.promoted)
            }
            _ => 1 + demotion_class(f.sent - f.offset, &self.sieve),
        }
    }

    /// MCP's target for a type-1 flow at `now`: bytes left over time left,
    /// bytes per second, at least the floor (the floor past the deadline).
    /// The time left ends `lead` (by default one base RTT) before the
    /// deadline, so that the last byte, which leaves then, *arrives* by the
    /// deadline; inside the lead it ends one base RTT before the deadline,
    /// and inside that last RTT at the deadline itself.
    fn mcp_rate(&self, f: &Flow, now: Time) -> u64 {
        let left = f.size.saturating_sub(f.sent);
        let end = [self.lead, self.rtt, Dur::ZERO]
            .into_iter()
            .map(|d| Time(f.deadline.0.saturating_sub(d.0)))
            .find(|&aim| aim > now)
            .unwrap_or(f.deadline);
        let need = if end > now {
            (u128::from(left) * 1_000_000_000 / u128::from((end - now).0)) as u64
        } else {
            0
        };
        need.max(self.floor)
    }

    /// Re-evaluates `f`'s rate at `now` and sets its next grid point.
    fn evaluate(&self, f: &mut Flow, now: Time) {
        f.pace = self.mcp_rate(f, now);
        let k = (now - f.start).0 / self.every.0 + 1;
        f.next_eval = f.start + Dur(k * self.every.0);
    }

    /// Whether starvation is due for `f` at `now`.
    fn starving(&self, f: &Flow, now: Time) -> bool {
        f.kind != 1 && self.starvation.is_some_and(|t| now >= f.progress + t)
    }
}

impl HostPolicy for KarunaHost {
    fn name(&self) -> &str {
        "karuna"
    }
    fn start(&mut self, now: Time, flow: &HostFlow, _out: &mut Effects) {
        let kind = match (flow.deadline, flow.size_known) {
            (Some(_), _) => 1,
            (None, true) => 2,
            (None, false) => 3,
        };
        let mut f = Flow {
            kind,
            size: flow.size,
            sent: 0,
            offset: 0,
            promoted: 0,
            start: now,
            deadline: now + flow.deadline.unwrap_or(Dur::ZERO),
            pace: 0,
            next_eval: Time::NEVER,
            acked: 0,
            progress: now,
            class: 0,
        };
        if kind == 1 {
            self.evaluate(&mut f, now);
        }
        f.class = self.class(&f);
        self.flows.insert(flow.id, f);
    }
    fn sent(&mut self, _now: Time, flow: u64, bytes: u64, out: &mut Effects) {
        let Some(mut f) = self.flows.remove(&flow) else {
            return;
        };
        f.sent = f.sent.saturating_add(bytes);
        let k = self.class(&f);
        if k != f.class {
            f.class = k;
            out.changed.push(flow);
        }
        self.flows.insert(flow, f);
    }
    fn finish(&mut self, _now: Time, flow: u64, _out: &mut Effects) {
        self.flows.remove(&flow);
    }
    fn wake_at(&self) -> Option<Time> {
        self.flows
            .values()
            .filter_map(|f| match (f.kind, self.starvation) {
                (1, _) => Some(f.next_eval),
                (_, Some(t)) => Some(f.progress + t),
                _ => None,
            })
            .min()
    }
    fn wake(&mut self, now: Time, view: &dyn HostView, out: &mut Effects) {
        let ids: Vec<u64> = self.flows.keys().copied().collect();
        for id in ids {
            let Some(mut f) = self.flows.remove(&id) else {
                continue;
            };
            let before = (f.class, f.pace);
            if f.kind == 1 && now >= f.next_eval {
                self.evaluate(&mut f, now);
            } else if f.kind != 1 && self.starvation.is_some() {
                let acked = f.sent.saturating_sub(view.unacked(id));
                if acked > f.acked {
                    f.acked = acked;
                    f.progress = now;
                } else if self.starving(&f, now) {
                    // Promote (type 2) or reset the sent count (type 3).
                    if f.kind == 2 {
                        f.promoted = f.promoted.saturating_add(1);
                    } else {
                        f.offset = f.sent;
                    }
                    f.progress = now;
                }
                f.class = self.class(&f);
            }
            if (f.class, f.pace) != before {
                out.changed.push(id);
            }
            self.flows.insert(id, f);
        }
    }
    fn marking(&self, flow: u64) -> Marking {
        match self.flows.get(&flow) {
            Some(f) if f.kind == 1 => Marking {
                pace: Some(f.pace),
                cc: Cc::Mcp {
                    deadline: f.deadline,
                },
                ..Marking::class(0)
            },
            Some(f) => Marking::class(f.class),
            None => Marking::BEST_EFFORT,
        }
    }
    fn limit(&self, flow: u64) -> u64 {
        match self.flows.get(&flow) {
            Some(f) if f.kind == 3 => to_next_threshold(f.sent - f.offset, &self.sieve),
            _ => u64::MAX,
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Builds it from the `karuna` scheduler's spec (`split`, `sieve`, `rtt`,
/// `starvation`; `auto@LOAD` thresholds need the workload's flow sizes)
/// and the host keys `repace` (default: `rtt`) and `lead` (default: the
/// host's base RTT).
pub(crate) fn build(
    p: &Params<'_>,
    hints: &WorkloadHints,
    ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let c = karuna_config(p, hints, false)?;
    let every = p
        .positive_dur("repace", "must be above 0")?
        .unwrap_or(c.rtt);
    let bytes = |t: &[f64]| t.iter().map(|&x| whole_bytes(x)).collect::<Vec<u64>>();
    let lead = p.dur("lead")?.unwrap_or(ctx.rtt);
    Ok(Box::new(
        KarunaHost::new(
            &bytes(&c.split),
            &bytes(&c.sieve),
            every,
            ctx.rtt,
            c.starvation,
        )
        .with_lead(lead),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NoView;

    fn flow(id: u64, size: u64, known: bool, deadline: Option<Dur>) -> HostFlow {
        HostFlow {
            id,
            coflow: 0,
            coflow_arrival: Time::ZERO,
            dst: 1,
            size,
            size_known: known,
            deadline,
        }
    }

    fn karuna(starvation: Option<Dur>) -> KarunaHost {
        KarunaHost::new(
            &[100, 200, 300, 400, 500, 600],
            &[10, 20, 30, 40, 50, 60],
            Dur::from_millis(10),
            Dur::from_millis(10),
            starvation,
        )
    }

    /// The testbed's hand-derived case (tests/test_testbed.py, before the
    /// policies moved).
    #[test]
    fn three_types_three_rules_and_mcp_pacing() {
        let mut p = karuna(None);
        // Two 1,460-byte segments per 10 ms.
        assert_eq!(p.floor(), 292_000);
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 250, true, None), &mut out);
        p.start(Time::ZERO, &flow(2, 1_000_000, false, None), &mut out);
        let d = Dur::from_millis(500);
        p.start(Time::ZERO, &flow(3, 1_000_000, true, Some(d)), &mut out);
        assert_eq!(
            [1, 2, 3].map(|f| p.marking(f).class),
            [3, 1, 0],
            "250 > 100, 200: class 3"
        );
        assert_eq!(p.marking(1).pace, None);
        // 1 MB to leave by one RTT (10 ms) before its 0.5 s deadline:
        // 10^6 B / 0.49 s.
        let m = p.marking(3);
        assert_eq!(m.pace, Some(2_040_816));
        assert_eq!(
            m.cc,
            Cc::Mcp {
                deadline: Time::from_millis(500)
            }
        );
        assert_eq!(p.wake_at(), Some(Time::from_millis(10)));
        // Half the time gone, nothing sent: 1 MB in 0.24 s.
        p.wake(Time::from_millis(250), &NoView, &mut out);
        assert_eq!(out.changed, vec![3]);
        assert_eq!(p.marking(3).pace, Some(4_166_666));
        // Inside the last RTT the time left runs to the deadline itself.
        let mut q = karuna(None);
        q.start(Time::ZERO, &flow(4, 1_000_000, true, Some(d)), &mut out);
        q.wake(Time::from_millis(495), &NoView, &mut out);
        assert_eq!(q.marking(4).pace, Some(200_000_000));
        assert_eq!(p.wake_at(), Some(Time::from_millis(260)));
        out.clear();
        p.sent(Time::from_millis(250), 2, 25, &mut out);
        assert_eq!(out.changed, vec![2]);
        assert_eq!((p.marking(2).class, p.limit(2)), (3, 5));
        // Nearly done, then past the deadline: the floor.
        p.sent(Time::from_millis(250), 3, 1_000_000 - 100, &mut out);
        p.wake(Time::from_millis(260), &NoView, &mut out);
        assert_eq!(p.marking(3).pace, Some(292_000));
        p.wake(Time::from_millis(1000), &NoView, &mut out);
        assert_eq!(p.marking(3).pace, Some(292_000));
        assert_eq!(p.limit(3), u64::MAX);
    }

    #[test]
    fn a_longer_lead_aims_earlier() {
        // 1 MB due at 0.5 s, its last byte to leave 60 ms (six RTTs of
        // 10 ms) before: 10^6 B / 0.44 s.
        let mut p = karuna(None).with_lead(Dur::from_millis(60));
        let mut out = Effects::default();
        let d = Dur::from_millis(500);
        p.start(Time::ZERO, &flow(1, 1_000_000, true, Some(d)), &mut out);
        assert_eq!(p.marking(1).pace, Some(2_272_727));
        // Past the aim, the time left runs to one RTT before the deadline
        // (10^6 B / 40 ms), then to the deadline itself (10^6 B / 5 ms).
        p.wake(Time::from_millis(450), &NoView, &mut out);
        assert_eq!(p.marking(1).pace, Some(25_000_000));
        p.wake(Time::from_millis(495), &NoView, &mut out);
        assert_eq!(p.marking(1).pace, Some(200_000_000));
    }

    #[test]
    fn the_lead_is_a_host_key() {
        use crate::spec::SchedulerSpec;
        let spec = SchedulerSpec::parse("karuna:lead=600us").unwrap();
        let ctx = HostContext {
            host: 0,
            n_hosts: 2,
            nic_bps: 1e9,
            rtt: Dur::from_micros(100),
        };
        let p = crate::registry::build_host(&spec, &WorkloadHints::default(), &ctx).unwrap();
        let k = p.as_any().downcast_ref::<KarunaHost>().unwrap();
        assert_eq!(k.lead, Dur::from_micros(600));
        let bad = SchedulerSpec::parse("karuna:lead=soon").unwrap();
        let Err(err) = crate::registry::build_host(&bad, &WorkloadHints::default(), &ctx) else {
            panic!("lead=soon was taken");
        };
        assert!(err.to_string().contains("lead"), "{err}");
    }

    struct Stuck;
    impl HostView for Stuck {
        fn unacked(&self, _flow: u64) -> u64 {
            u64::MAX
        }
    }

    #[test]
    fn a_starving_flow_is_promoted_or_its_count_reset() {
        let mut p = karuna(Some(Dur::from_millis(50)));
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 450, true, None), &mut out);
        p.start(Time::ZERO, &flow(2, 10_000, false, None), &mut out);
        p.sent(Time::ZERO, 2, 35, &mut out);
        assert_eq!((p.marking(1).class, p.marking(2).class), (5, 4));
        assert_eq!(p.wake_at(), Some(Time::from_millis(50)));
        out.clear();
        // Flow 2's bytes were acknowledged (NoView): progress, no reset.
        p.wake(Time::from_millis(50), &NoView, &mut out);
        assert_eq!(out.changed, vec![1]);
        assert_eq!((p.marking(1).class, p.marking(2).class), (4, 4));
        assert_eq!(p.wake_at(), Some(Time::from_millis(100)));
        out.clear();
        // Nothing acknowledged since: promoted again, and reset.
        p.wake(Time::from_millis(100), &Stuck, &mut out);
        assert_eq!(out.changed, vec![1, 2]);
        assert_eq!((p.marking(1).class, p.marking(2).class), (3, 1));
        assert_eq!(p.limit(2), 10);
    }
}
