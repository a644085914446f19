//! Applying a scheduler's [`Allocation`] to a [`NetState`]: the one step the
//! simulator's engine and the runtime's coordinator share. Each changed
//! flow goes solo at its rate, into its rate group or into its proportional
//! group; each changed group gets its rate; each proportional group whose
//! deadline was set gets it. Rates go from bits/s to bytes per ns (negative
//! ones count as 0). A driver that watches the changes (the engine's
//! completion timers and link meter) does so through [`ApplyHooks`].
//!
//! Changed flows are applied in the order the scheduler changed them (a
//! coflow's solo-rate sum adds in that order: another order could move a
//! CCT), and that order is known before the first is applied: while one
//! flow is applied, the record of the flow `FLOW_AHEAD` changes on is
//! fetched into cache, with what the driver keeps for it
//! ([`ApplyHooks::ahead_flow`]). Under `dcas` on FB2010 three in four of
//! the engine's samples in this loop waited on the flow record otherwise. Prefetches
//! change no value: what is applied, and in which order, is the same.

use super::{prefetch, proportional, FlowIdx, NetState, SOLO};
use crate::{Allocation, Change};
use coflowkit_model::Time;

/// What a driver hears while an allocation is applied; every hook does
/// nothing by default, so `()` hears nothing.
pub trait ApplyHooks {
    /// Flow `f` is to be applied a few changes from now: a hook may
    /// [`prefetch`] what it will touch for it.
    #[inline(always)]
    fn ahead_flow(&mut self, _f: FlowIdx) {}
    /// Active flow `f` is about to change its rate or group.
    #[inline(always)]
    fn before_flow(&mut self, _state: &NetState, _f: FlowIdx) {}
    /// Active flow `f` changed: `finish` is when it finishes sending alone
    /// at its new rate, `Time::NEVER` in a group.
    #[inline(always)]
    fn after_flow(&mut self, _state: &NetState, _f: FlowIdx, _finish: Time) {}
    /// Rate group `g` is about to get `bytes_per_ns` per member.
    #[inline(always)]
    fn before_group_rate(&mut self, _g: u32, _bytes_per_ns: f64) {}
    /// Proportional group `g`'s deadline was set.
    #[inline(always)]
    fn after_deadline(&mut self, _state: &NetState, _g: u32) {}
}

impl ApplyHooks for () {}

/// How many changed flows ahead of the one applied its record is
/// prefetched.
const FLOW_AHEAD: usize = 8;

impl NetState {
    /// Applies what changed in `alloc` since it was last applied (and
    /// forgets those changes), telling `hooks`; changes to flows that are
    /// not active are skipped.
    #[inline]
    pub fn apply_allocation<H: ApplyHooks>(&mut self, alloc: &mut Allocation, hooks: &mut H) {
        alloc.drain_changes_ahead(|a, ch, next| match ch {
            Change::Flow(f) => {
                // The flow record `FLOW_AHEAD` changes on: a cache miss
                // otherwise. (Its coflow's record is not fetched: that
                // needed the flow record's `coflow` loaded 4 changes on,
                // a wait when it was not in yet, and a change's coflow is
                // nearly always the one just settled at this instant.)
                if let Some(&n) = next.get(FLOW_AHEAD - 1) {
                    prefetch(&self.fl[n as usize]);
                    hooks.ahead_flow(n);
                }
                if !self.is_active(f) {
                    return;
                }
                hooks.before_flow(self, f);
                let g = a.group(f);
                let finish = if g == SOLO {
                    self.set_solo_rate(f, a.rate(f).max(0.0) / 8e9)
                } else if let Some(pg) = proportional(g) {
                    self.join_pgroup(f, pg);
                    Time::NEVER
                } else {
                    self.join_group(f, g);
                    Time::NEVER
                };
                hooks.after_flow(self, f, finish);
            }
            Change::Group(g) => {
                let r = a.group_rate(g).max(0.0) / 8e9;
                hooks.before_group_rate(g, r);
                self.set_group_rate(g, r);
            }
            Change::Deadline(g) => {
                self.set_pgroup_deadline(g, a.deadline(g));
                hooks.after_deadline(self, g);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PROPORTIONAL;
    use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Fabric};

    /// Counts what the hooks hear.
    #[derive(Default)]
    struct Heard {
        before: Vec<FlowIdx>,
        after: Vec<(FlowIdx, Time)>,
        groups: Vec<(u32, f64)>,
        deadlines: Vec<u32>,
    }

    impl ApplyHooks for Heard {
        fn before_flow(&mut self, _: &NetState, f: FlowIdx) {
            self.before.push(f);
        }
        fn after_flow(&mut self, _: &NetState, f: FlowIdx, finish: Time) {
            self.after.push((f, finish));
        }
        fn before_group_rate(&mut self, g: u32, bytes_per_ns: f64) {
            self.groups.push((g, bytes_per_ns));
        }
        fn after_deadline(&mut self, _: &NetState, g: u32) {
            self.deadlines.push(g);
        }
    }

    #[test]
    fn an_allocation_applies_solo_rates_groups_and_deadlines_once() {
        let fabric = Fabric::big_switch(4, BitsPerSec::GBPS).unwrap();
        let mut s = NetState::new(fabric);
        let flows = vec![
            flow(0, 1, 1000),
            flow(1, 2, 2000),
            flow(2, 3, 3000),
            flow(3, 0, 4000),
        ];
        let c = s.add_coflow(&CoflowSpec::new(1, Time::ZERO, flows));
        s.release_coflow(c);
        for f in s.flows_of(c) {
            assert!(s.start_flow(f));
        }
        let mut a = Allocation::default();
        a.resize(s.n_flows());
        a.set_rate(0, 8e9); // 1 byte per ns: done at 1000 ns.
        a.set_rate(1, -5.0); // counts as 0.
        a.join_group(2, 7);
        a.set_group_rate(7, 16e9);
        a.join_proportional(3, 2);
        a.set_deadline(2, Time(4000));
        let mut heard = Heard::default();
        s.apply_allocation(&mut a, &mut heard);
        assert_eq!(heard.before, vec![0, 1, 2, 3]);
        assert_eq!(
            heard.after,
            vec![
                (0, Time(1000)),
                (1, Time::NEVER),
                (2, Time::NEVER),
                (3, Time::NEVER)
            ]
        );
        assert_eq!(heard.groups, vec![(7, 2.0)]);
        assert_eq!(heard.deadlines, vec![2]);
        assert_eq!(s.solo_rate(0), 1.0);
        assert_eq!(s.solo_rate(1), 0.0);
        assert_eq!(s.flow_group(2), 7);
        assert_eq!(s.flow_group(3), PROPORTIONAL | 2);
        assert_eq!(s.pgroup_deadline(2), Time(4000));
        assert_eq!(s.next_group_finish(), Time(1500));
        // Applied once: nothing is left to apply.
        let mut again = Heard::default();
        s.apply_allocation(&mut a, &mut again);
        assert!(again.before.is_empty() && again.groups.is_empty() && again.deadlines.is_empty());
        // A flow no longer active is skipped.
        s.finish_flow(0);
        a.set_rate(0, 1e9);
        s.apply_allocation(&mut a, &mut ());
        assert_eq!(s.solo_rate(0), 0.0);
    }
}
