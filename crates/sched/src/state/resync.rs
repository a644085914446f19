//! The runtime's resync: measured bytes replace the bytes a [`NetState`]
//! advanced at the rates (every Δ, and at a flow's close), each flow keeping
//! its solo rate or its group.

use super::{proportional, FlowIdx, NetState, INACTIVE, SOLO};

impl NetState {
    /// Replaces what flows have sent, `(flow, bytes)`, by measured bytes
    /// (clamped to each flow's size) rather than bytes advanced at their
    /// rates: the runtime's coordinator calls this every Δ with what agents
    /// report, for every active flow. Each flow keeps its solo rate or its
    /// group (rejoined with the bytes it has left now); a proportional group
    /// all of whose members are listed starts afresh, paused until its
    /// deadline is set again (the scheduler is told through
    /// [`crate::Changes::resynced`]). Flows that are not active are skipped.
    pub fn resync_sent(&mut self, reports: &[(FlowIdx, f64)]) {
        let mut back = Vec::with_capacity(reports.len());
        // First every listed flow leaves its group, so that groups left
        // empty start afresh when their members rejoin.
        for &(f, bytes) in reports {
            let fi = f as usize;
            if self.fl[fi].active_pos == INACTIVE {
                continue;
            }
            back.push((f, self.fl[fi].group, self.fl[fi].rate));
            // Solo at rate 0, with the modelled bytes settled into `base`.
            self.set_solo_rate(f, 0.0);
            let bytes = bytes.clamp(0.0, self.fl[fi].size);
            let c = self.fl[fi].coflow as usize;
            self.coflows[c].base_sent += bytes - self.fl[fi].base;
            self.fl[fi].base = bytes;
        }
        for (f, g, rate) in back {
            if g == SOLO {
                self.set_solo_rate(f, rate);
            } else if let Some(pg) = proportional(g) {
                self.join_pgroup(f, pg);
            } else {
                self.join_group(f, g);
            }
        }
    }

    /// Finishes active flow `f` having sent `bytes` in all, measured: its
    /// size becomes `bytes` (the runtime learns a flow's size when its
    /// writer closes; until then it is a hint or a placeholder).
    pub fn finish_flow_measured(&mut self, f: FlowIdx, bytes: f64) {
        let fi = f as usize;
        if self.fl[fi].active_pos == INACTIVE {
            return;
        }
        // Solo at rate 0, with the modelled bytes settled into `base`.
        self.set_solo_rate(f, 0.0);
        let bytes = bytes.max(0.0);
        let ci = &mut self.coflows[self.fl[fi].coflow as usize];
        ci.base_sent += bytes - self.fl[fi].base;
        ci.size += bytes - self.fl[fi].size;
        self.fl[fi].size = bytes;
        self.fl[fi].base = bytes;
        self.finish_flow(f);
    }
}
