//! RCP's ports in the loop (`crate::rcp`): each port's rate, stamped on
//! the RCP packets that cross it, and its control interval, an `RcpTick`
//! event of its own that runs while RCP packets come. Nothing here exists
//! until an RCP flow starts.

use super::{Engine, Ev, PS_PER_NS};
use crate::packet::{Kind, Packet};

impl Engine<'_> {
    /// RCP at a port: count the arrival, average the RTT it carries, stamp
    /// an RCP packet's rate field on its way out, and run the control
    /// interval while RCP packets come.
    pub(super) fn rcp_arrival(&mut self, port: u32, pkt: &mut Packet) {
        let rcp_flow =
            pkt.kind != Kind::Control && self.flows[pkt.flow as usize].transport.rules().rate_based;
        let now = self.now;
        let ctl = &mut self.rcp[port as usize];
        if rcp_flow && !ctl.running {
            ctl.running = true;
            ctl.bytes_in = 0;
            ctl.last_ps = now;
            let at = now + ctl.interval_ps(&self.rcp_params);
            self.push(at, Ev::RcpTick(port));
        }
        let ctl = &mut self.rcp[port as usize];
        let rtt_ps = pkt.rtt_ns as u64 * PS_PER_NS;
        let queued = self.ports[port as usize].queued_bytes();
        let stamped = ctl.on_arrival(pkt.wire, queued, rtt_ps, pkt.rate);
        if rcp_flow && !pkt.reverse() {
            pkt.rate = stamped;
        }
    }

    pub(super) fn rcp_tick(&mut self, port: u32) {
        let queued = self.ports[port as usize].queued_bytes();
        let ctl = &mut self.rcp[port as usize];
        let t = self.now - ctl.last_ps;
        ctl.last_ps = self.now;
        if ctl.update(t, queued, &self.rcp_params) {
            ctl.running = false;
        } else {
            let at = self.now + ctl.interval_ps(&self.rcp_params);
            self.push(at, Ev::RcpTick(port));
        }
    }
}
