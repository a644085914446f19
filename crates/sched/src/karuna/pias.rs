//! PIAS at a host (Bai et al., NSDI 2015, 3.1): every flow starts in the
//! highest class and is demoted one class each time the bytes it has sent
//! reach the next of up to 7 thresholds; the switches' strict-priority
//! queues then serve short flows first without knowing any size.
//!
//! The thresholds are the flow-level `pias` scheduler's (the same spec keys
//! and presets, [`crate::karuna`]), rounded up to whole bytes: a flow
//! that has sent `t` bytes is demoted at its `t`-th byte.

use crate::descriptor::Params;
use crate::host::{
    demotion_class, to_next_threshold, Effects, HostContext, HostFlow, HostPolicy, Marking,
};
use crate::spec::{SchedulerError, WorkloadHints};
use coflowkit_model::Time;
use std::collections::HashMap;

/// PIAS's per-host demotion by bytes sent.
#[derive(Debug, Clone)]
pub struct PiasHost {
    thresholds: Vec<u64>,
    /// Bytes sent per active flow.
    sent: HashMap<u64, u64>,
}

impl PiasHost {
    /// The policy with these thresholds (bytes; sorted here, at most 7 kept).
    pub fn new(thresholds: &[u64]) -> PiasHost {
        let mut t = thresholds.to_vec();
        t.sort_unstable();
        t.truncate(usize::from(crate::host::N_CLASSES) - 1);
        PiasHost {
            thresholds: t,
            sent: HashMap::new(),
        }
    }

    /// The thresholds in use, ascending.
    pub fn thresholds(&self) -> &[u64] {
        &self.thresholds
    }
}

impl HostPolicy for PiasHost {
    fn name(&self) -> &str {
        "pias"
    }
    fn start(&mut self, _now: Time, flow: &HostFlow, _out: &mut Effects) {
        self.sent.insert(flow.id, 0);
    }
    fn sent(&mut self, _now: Time, flow: u64, bytes: u64, out: &mut Effects) {
        if let Some(s) = self.sent.get_mut(&flow) {
            let before = demotion_class(*s, &self.thresholds);
            *s = s.saturating_add(bytes);
            if demotion_class(*s, &self.thresholds) != before {
                out.changed.push(flow);
            }
        }
    }
    fn finish(&mut self, _now: Time, flow: u64, _out: &mut Effects) {
        self.sent.remove(&flow);
    }
    fn marking(&self, flow: u64) -> Marking {
        match self.sent.get(&flow) {
            Some(&s) => Marking::class(demotion_class(s, &self.thresholds)),
            None => Marking::BEST_EFFORT,
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn limit(&self, flow: u64) -> u64 {
        self.sent
            .get(&flow)
            .map_or(u64::MAX, |&s| to_next_threshold(s, &self.thresholds))
    }
}

/// Builds it from the `pias` scheduler's spec (its `thresholds`; the
/// flow-level `starvation` rule has no host meaning here and is ignored:
/// a host cannot tell a starving flow from a slow one without the
/// network's view).
pub(crate) fn build(
    p: &Params<'_>,
    hints: &WorkloadHints,
    _ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let config = crate::karuna::karuna_config(p, hints, true)?;
    let t: Vec<u64> = config.sieve.iter().map(|&t| t.ceil() as u64).collect();
    Ok(Box::new(PiasHost::new(&t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: u64) -> HostFlow {
        HostFlow {
            id,
            coflow: 0,
            coflow_arrival: Time::ZERO,
            dst: 1,
            size: 1 << 20,
            size_known: false,
            deadline: None,
        }
    }

    #[test]
    fn a_flow_is_demoted_at_the_byte_each_threshold_names() {
        let mut p = PiasHost::new(&[1_000, 100]);
        assert_eq!(p.thresholds(), &[100, 1_000]);
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(7), &mut out);
        assert_eq!(p.marking(7), Marking::class(0));
        assert_eq!(p.limit(7), 100);
        p.sent(Time(1), 7, 99, &mut out);
        assert!(out.changed.is_empty());
        assert_eq!(p.limit(7), 1);
        p.sent(Time(2), 7, 1, &mut out);
        assert_eq!(out.changed, vec![7]);
        assert_eq!(p.marking(7).class, 1);
        out.clear();
        p.sent(Time(3), 7, 5_000, &mut out);
        assert_eq!(out.changed, vec![7]);
        assert_eq!(p.marking(7).class, 2);
        assert_eq!(p.limit(7), u64::MAX);
        p.finish(Time(4), 7, &mut out);
        assert_eq!(p.marking(7), Marking::BEST_EFFORT);
    }

    #[test]
    fn at_most_seven_thresholds_are_kept() {
        let p = PiasHost::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(p.thresholds(), &[1, 2, 3, 4, 5, 6, 7]);
    }
}
