//! Queue sampling (`queue_trace`): every port's queued bytes at a fixed
//! interval, by its own `Sample` event, while anything else is pending.

use super::{ns_ceil, ps, Engine, Ev};
use crate::QueueSample;
use coflowkit_model::{LinkKind, Time};

impl Engine<'_> {
    pub(super) fn sample(&mut self) {
        let t = ns_ceil(self.now);
        for (i, p) in self.ports.iter().enumerate() {
            if matches!(self.fabric.links()[i].kind, LinkKind::Cpu(_)) {
                continue;
            }
            self.trace.push(QueueSample {
                port: i as u32,
                at: t,
                bytes: p.queued_bytes(),
            });
        }
        // Only while something else is pending: samples alone never keep
        // a stalled run going.
        if let (Some(q), false) = (self.cfg.queue_trace, self.heap.is_empty()) {
            self.push(self.now + ps(Time(q.0)), Ev::Sample);
        }
    }
}
