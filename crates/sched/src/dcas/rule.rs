//! Pseudocode 1, a sender's decision for one subcoflow: its priority
//! tuple `<T, P>` ([`Priority`]) from the bytes it has left, the large-flow
//! threshold and how long it waited ([`pseudocode1`], [`Rule`]), and what
//! a sender knows when it decides ([`Local`]).

use super::*;

/// A priority tuple `<T, P>`: lower is higher, `T` first (paper III-A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority {
    /// `T`: 0 for small (FIFO) subcoflows, 1 for large ones.
    pub main: u8,
    /// `P`: the coflow's arrival order (`T = 0`), 0 when starving, or the
    /// negotiated priority in quanta.
    pub secondary: u64,
}

impl Priority {
    /// `<1, 0>`: a starving large subcoflow.
    pub const STARVING: Priority = Priority {
        main: 1,
        secondary: 0,
    };

    /// `<0, rank>`: a small subcoflow, by its coflow's arrival order.
    pub fn fifo(rank: u64) -> Priority {
        Priority {
            main: 0,
            secondary: rank,
        }
    }

    /// `<1, p>`: a large subcoflow.
    pub fn large(p: u64) -> Priority {
        Priority {
            main: 1,
            secondary: p,
        }
    }

    /// The class the allocation serves it in: the order of priorities as
    /// one `u64` (`T` in the top bit; `P` saturates at 2^63 - 1).
    pub fn class(self) -> u64 {
        (u64::from(self.main) << 63) | self.secondary.min(u64::MAX >> 1)
    }

    /// The class for drivers with priority queues, squeezed into 32 bits
    /// (`P` saturates at 2^31 - 1); the simulator serves [`Priority::class`].
    pub fn queue_class(self) -> u32 {
        (u32::from(self.main) << 31) | self.secondary.min((1 << 31) - 1) as u32
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}, {}>", self.main, self.secondary)
    }
}

/// Which rule of Pseudocode 1 set a priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Below the threshold: `<0, cp>` (line 7).
    Fifo,
    /// No service during the last T: `<1, 0>` (line 9).
    Starving,
    /// A new subcoflow announced and waits for feedback: `<1, d>` meanwhile.
    Interim,
    /// Feedback came: `<1, Φ(M)>` (line 15).
    Negotiated,
    /// No feedback came: `<1, d>` (line 17).
    Fallback,
}

/// Pseudocode 1's case for a subcoflow with `rem` bytes left at its sender,
/// unserved for `waited`: [`Rule::Fifo`] below the threshold (lines 6-7;
/// within [`BYTES_TIE`] of it counts as not below), else
/// [`Rule::Starving`] if unserved for longer than `starvation` (lines
/// 8-9), else [`Rule::Interim`]: announce and negotiate (lines 10-17).
/// The flow-level model and the host policy ([`crate::dcas::host`]) both
/// decide by it.
pub fn pseudocode1(rem: f64, threshold: f64, waited: Dur, starvation: Dur) -> Rule {
    if rem + BYTES_TIE < threshold {
        Rule::Fifo
    } else if waited > starvation {
        Rule::Starving
    } else {
        Rule::Interim
    }
}

/// One priority decision, for tests and traces ([`Dcas::with_log`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// When.
    pub at: Time,
    /// The subcoflow's coflow.
    pub coflow: CoflowId,
    /// The subcoflow's sender.
    pub host: HostId,
    /// The rule that decided.
    pub rule: Rule,
    /// The priority set.
    pub priority: Priority,
    /// The desired priority (computed when the round started).
    pub desired: u64,
    /// The feedback values received (for `Negotiated`), in arrival order.
    pub feedback: Vec<u64>,
}

/// Where a [`Dcas`] writes its decisions.
pub type DecisionLog = Arc<Mutex<Vec<Decision>>>;

/// What one sender may read: the bytes its own flows have left, and where
/// they go. Bound to its host; another host's flow is refused.
#[derive(Clone, Copy)]
pub struct Local<'a> {
    pub(super) view: Clairvoyant<'a>,
    pub(super) host: HostId,
}

impl<'a> Local<'a> {
    /// Host `host`'s view.
    pub fn new(view: Clairvoyant<'a>, host: HostId) -> Local<'a> {
        Local { view, host }
    }
    #[inline]
    pub(super) fn own(&self, f: FlowIdx) {
        if self.view.src(f) != self.host {
            refused(self.host, f);
        }
    }
    /// Bytes flow `f` (of this host) has left.
    #[inline]
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        self.own(f);
        self.view.remaining(f)
    }
    /// Where flow `f` (of this host) goes.
    pub fn dst(&self, f: FlowIdx) -> HostId {
        self.own(f);
        self.view.dst(f)
    }
}

/// A host read another host's flow: a bug, out of the hot path.
#[cold]
#[inline(never)]
pub(super) fn refused(host: HostId, f: FlowIdx) -> ! {
    panic!("host {host} read flow {f} of another host")
}
