//! TAFE's switch side in the loop (`crate::tafe`): marking by task bytes
//! at every switch port, and the ports' first-come-first-served order of
//! flows inside a class.

use super::{switch_of, Engine};
use crate::packet::{Kind, Packet};

impl Engine<'_> {
    /// Marks by task bytes at every switch port (TAFE), if `m` is given.
    pub fn with_tafe(mut self, m: Option<crate::tafe::TafeMarking>) -> Self {
        self.task_bytes = match m {
            Some(_) => vec![0; self.workload.coflows().len()],
            None => vec![],
        };
        if m.is_some() && self.cfg.tafe_one_by_one {
            // TAFE: flows first come, first served inside a class, in task
            // release order (flow indices follow it); control packets first.
            // `tafe_service=fifo` keeps FIFO packet queues instead.
            for p in &mut self.ports {
                p.set_task_fifo(tafe_order);
            }
        }
        self.tafe = m;
        self
    }

    /// TAFE's marking by task bytes at a switch port (`crate::tafe`): CE on
    /// a packet whose task has sent more than its queue's threshold. The
    /// task bytes are its flow's tag now (the host's latest count), not a
    /// copy taken when it left: a packet carries no tag of its own yet.
    pub(super) fn tafe_mark(&mut self, port: u32, pkt: &mut Packet) {
        if switch_of(self.fabric, self.fabric.links()[port as usize].kind).is_none() {
            return;
        }
        let fl = &mut self.flows[pkt.flow as usize];
        let (Some(m), Some(tag)) = (&self.tafe, fl.task) else {
            return;
        };
        if !pkt.ce && m.mark(pkt, tag.bytes) {
            fl.stats.ecn_marks += 1;
            self.ports[port as usize].stats.marks += 1;
        }
    }
}

/// A packet's place in a TAFE port's class: its flow's index (task release
/// order, then the task's own), control packets before every flow.
pub(super) fn tafe_order(p: &Packet) -> u32 {
    match p.kind {
        Kind::Data | Kind::Ack | Kind::Syn | Kind::SynAck => p.flow.saturating_add(1),
        _ => 0,
    }
}
