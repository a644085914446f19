//! The coordinator in the loop (`crate::coordinator`): its tick, at the
//! scheduler's interval, and its decisions, which reach the hosts a
//! delay later; both its own events ([`CoordEv`]).

use super::{ps, Engine, Ev, FlowEv};
use crate::coordinator::Coordinator;
use crate::pacing::Pacing;
use coflowkit_model::Time;

/// The coordinator's events.
#[derive(Debug, Clone, Copy)]
pub(super) enum CoordEv {
    /// Its tick.
    Tick,
    /// The oldest batch of its decisions reaches the hosts.
    Apply,
}

impl Engine<'_> {
    /// Handles one of the coordinator's events.
    pub(super) fn on_coord_event(&mut self, ev: CoordEv) {
        match ev {
            CoordEv::Tick => self.coord_tick(),
            CoordEv::Apply => self.coord_apply(),
        }
    }

    /// Runs `coord` every `coordinator_interval`.
    pub(crate) fn with_coordinator(mut self, coord: Coordinator) -> Self {
        self.coord = Some(Box::new(coord));
        self
    }

    pub(super) fn coord_tick(&mut self) {
        let mut coord = self.coord.take().expect("a coordinator");
        let flows = &self.flows;
        let acked = |f: u32| {
            flows[f as usize]
                .sender
                .as_ref()
                .map_or(0, |s| s.una.min(flows[f as usize].bytes))
        };
        let mut batch = vec![];
        coord.tick(self.now_ns(), &acked, &mut batch);
        self.coord = Some(coord);
        if !batch.is_empty() {
            let at = self.now + ps(Time(self.cfg.coordinator_delay.0));
            self.in_transit.push_back(batch);
            self.push(at, Ev::Coord(CoordEv::Apply));
        }
        let n = self.workload.coflows().len();
        if self.done_coflows < n {
            let next = self.now + ps(Time(self.cfg.coordinator_interval.0)).max(1);
            self.push(next, Ev::Coord(CoordEv::Tick));
        }
    }

    /// The oldest batch of decisions arrives: each flow's pacing and class.
    pub(super) fn coord_apply(&mut self) {
        let Some(batch) = self.in_transit.pop_front() else {
            return;
        };
        for d in batch {
            let (rate, class) = d.enforced();
            let fl = &mut self.flows[d.flow as usize];
            let Some(s) = fl.sender.as_mut() else {
                continue;
            };
            if fl.finish.is_some() {
                continue;
            }
            fl.class = class;
            if fl.transport.rules().rate_based {
                continue;
            }
            let pacing = if rate > 0 {
                Pacing::Rate(rate)
            } else {
                Pacing::Off
            };
            if pacing != fl.pacing {
                fl.pacing = pacing;
                fl.pacer.set_rate(rate);
                s.set_paced(rate > 0);
                self.push(self.now, Ev::Flow(FlowEv::Kick(d.flow)));
            }
        }
    }
}
