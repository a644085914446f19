//! The one call every driver makes at an instant: the flow engine
//! (`coflowkit-sim`), the packet engine's coordinator and the runtime's
//! coordinator each keep a [`NetState`], the [`Changes`] since their last
//! call and an [`Allocation`], and at each instant they decide to call the
//! scheduler they hand all three to [`Timer::call`]. The rule of the
//! scheduler's own timer (a scheduler asks to be called again at an
//! instant even if nothing happens: D-CLAS's Δ, Baraat's rounds) is
//! written here once.
//!
//! # Correctness properties
//! - A timer fires at most once: the call at or after its instant sees
//!   `changes.timer` and the timer is forgotten, unless the scheduler asks
//!   again.
//! - A scheduler's wake-up is never before `now + 1 ns`, so a scheduler
//!   that asks for `now` (or earlier) is called again at the next instant,
//!   not in a loop at this one.
//! - The scheduler sees the flows started since the last call in flow
//!   order, whatever order the driver noted them in.

use crate::{Allocation, AnyScheduler, Changes, NetState};
use coflowkit_model::Time;

/// A scheduler's timer: when it asked to be called again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    wake: Time,
}

impl Default for Timer {
    fn default() -> Timer {
        Timer { wake: Time::NEVER }
    }
}

impl Timer {
    /// When the scheduler asked to be called again ([`Time::NEVER`]: not).
    pub fn wake(&self) -> Time {
        self.wake
    }

    /// Calls `sched` at `now` with the `changes` since the last call: the
    /// timer fires if due (`changes.timer`), the started flows are put in
    /// flow order, the scheduler's next wake-up is kept (see the module
    /// doc), and `changes` is cleared for the next call. The driver then
    /// applies `alloc` to its state its own way.
    pub fn call(
        &mut self,
        sched: &mut AnyScheduler,
        now: Time,
        state: &NetState,
        changes: &mut Changes,
        alloc: &mut Allocation,
    ) {
        if self.wake <= now {
            changes.timer = true;
            self.wake = Time::NEVER;
        }
        changes.started.sort_unstable();
        if let Some(w) = sched.schedule(now, state, changes, alloc) {
            self.wake = w.max(Time(now.0 + 1));
        }
        changes.clear();
    }
}
