//! Baraat's switch: Smart Priority Classes at one output port (Dogar,
//! Karagiannis, Ballani and Rowstron, "Decentralized Task-Aware Scheduling
//! for Data Center Networks", SIGCOMM 2014, §4.3; seed
//! `000_db116703e99242b1.txt`). The flow-level model of the same switch is
//! `coflowkit_sched::baraat`; this unit reuses its Algorithm 1 arithmetic
//! ([`coflowkit_sched::baraat::feedback`]) so that both levels compute one
//! rule, and adds what a port needs to run it packet by packet: per-task
//! counters, the classifier, and a header.
//!
//! * **Task ids** (§4.1): every flow carries its task's id; a lower id is a
//!   higher priority, the same at every switch.
//! * **The classifier** (§4.3.1, Fig. 6b): the port keeps, per task that has
//!   a flow through it, a count of the task's size there ("the total bytes
//!   reserved by flows of a task, which we use as proxy for the task's
//!   size"): by default (`task_size=sent`) the payload of the task's data
//!   packets that arrive at the port, the bytes its reservations carried
//!   (an AR above what the flow's path lets it send, or granted out of a
//!   virtual capacity above `C`, carries none); with `task_size=granted` the
//!   ARs the port granted the task's flows, each for one interval. The
//!   flow-level model counts the same (`coflowkit_sched::baraat`, "The
//!   task's size at a link", which says why). A task is *heavy at this
//!   port* once that reaches the heavy
//!   threshold ("If the task size exceeds a pre-determined threshold, the
//!   task is marked as heavy"), or once a request of it says so (the host's
//!   `TaskTag::heavy`, for drivers whose hosts judge heaviness). By default
//!   one task is one class, in task-id order (class 0 the highest); "the
//!   heavy task and the task immediately next in priority to the heavy task
//!   share the same class". Classes are therefore the maximal runs of tasks,
//!   in id order, in which every member but the last is heavy: tasks 1
//!   (heavy), 2, 3 give {1, 2}, {3}; when 2 finishes, {1, 3} ("when task 2
//!   finishes, task 3 is moved to the top priority queue"). A task can be
//!   heavy at one port and light at another (footnote 3).
//! * **Algorithm 1** (§4.3.2), per request, for a flow of task `t` with
//!   demand `D`: (1) return the flow's previous allocation and demand, which
//!   its request carries, to the counters; (2) `k = Classifier(t)`; (3)
//!   `ClassAvlBW = max(0, C - sum of the demands of classes before k)`; (4)
//!   `AvailShare = max(0, ClassAvlBW - D_k)`; (5-9) `NR = D` if `AvailShare >
//!   D`, else `ClassAvlBW / F_k`; (10) `AR = min(NR, C - A)`; (11) write AR
//!   and NR into the header; (12) add `D` and `AR` to the counters. `D_k` and
//!   `F_k` are the demands and flows of class `k`, `A` the allocations of
//!   every flow through the port.
//! * **The header** (§4.4, "Header"): [`SpcHeader`], the task id, the
//!   flow's demand, the switch index, and per switch on the path the AR and
//!   NR it grants and the demand and AR it holds from last time (the
//!   paper's 26 bytes for at most 6 switches: [`MAX_HOPS`]; its one previous
//!   demand is one per switch here, so that a request lost part way is
//!   returned exactly by the next). It rides on a data packet or alone (the
//!   engine's choice); the receiver echoes it on an ACK; the sender paces at the least AR of its path
//!   ([`SpcHeader::min_ar`]) and sets its next demand from the least NR
//!   (Algorithm 2, `coflowkit_sched::baraat::demand`), then sends the next
//!   request with [`SpcHeader::next`].
//! * **Virtual capacity** (footnote 5: "increased or decreased depending on
//!   link utilization and queuing", no formula given): every interval, the
//!   flow-level model's step (`coflowkit_sched::baraat::virtual_capacity`,
//!   one function for both levels) with the rate offered `y + q / T`, `y`
//!   the bytes that arrived in the interval over its length `T` and `q` the
//!   bytes queued at its end (the queue term only a packet model has):
//!   `Cv <- clamp(Cv + vc_gain * (C - y - q / T), C, vc_max * C)` while the
//!   port holds a task, and `Cv = C` once it holds none, as a link with no
//!   flow at the flow level (an idle port does not wind up to `vc_max · C`
//!   and its timer stops). `C` in Algorithm 1 is `Cv`. With `vc_gain = 0`
//!   (the default) `Cv = C`.
//!
//! # The interface the engine calls
//!
//! One [`SpcPort`] per switch output port that runs Baraat, all sharing one
//! [`SpcParams`] (from the scheduler spec: [`SpcParams::of_baraat`]):
//! - per packet that arrives at the port, before it is queued:
//!   [`SpcPort::on_arrival`] (the bytes for `y`); per data packet of a task
//!   [`SpcPort::on_data`] (its payload, for the task's size); the engine
//!   queues data in one queue, not one per class (`crate::engine::baraat`);
//! - per request (one forward packet per flow per RTT carrying the header,
//!   a data packet or one of its own): [`SpcPort::on_request`], which reads and writes the header and
//!   moves it to the next switch;
//! - per interval (`SpcParams::interval_ps`, the paper's RTT, while the port
//!   has tasks or traffic): [`SpcPort::tick`], which returns whether the
//!   port is idle so its timer may stop (as [`crate::rcp::RcpPort`]'s); then,
//!   if the engine sets capacity aside for traffic no AR covers,
//!   [`SpcPort::reserve_control`].
//!
//! # Our readings (where the paper leaves a detail open)
//!
//! - Rates are integer bits per second (§4.4: "we use integer arithmetic
//!   for rate calculations"); the header does not round them to the
//!   paper's one-byte encoding. The per-class sums are then exact, so the
//!   fast structure below agrees with the slow reference to the bit.
//! - `F_k` counts the requesting flow (a flow joins the counters on its
//!   first request, before line 8, so a class never divides by 0), and
//!   leaves them on its FIN request ([`Request::Fin`]), which grants
//!   nothing. `D_k` and `A` exclude it (line 1 returned its share).
//! - Classes change at once when a task arrives, leaves or turns heavy, not
//!   at interval boundaries (the flow-level model fixes them per round).
//! - A task none of whose flows made a request for
//!   [`SpcParams::stale_intervals`] whole intervals (at least
//!   [`STALE_INTERVALS`]) is dropped with its demand and allocation (a lost FIN
//!   would otherwise hold its demand against every lower class forever). A
//!   request of a task the port does not know counts as the flow's first.
//! - What a request returns is subtracted from its own task's counters and
//!   never below 0, so a lost request (whose returned values the counters
//!   never held) can skew only its own task's sums, until the task leaves.
//! - With `task_size=granted`, bytes reserved are `AR * T / 8` per request,
//!   `T` the interval. With `task_size=sent`, a retransmitted packet counts
//!   again (its bytes crossed the port again).
//! - Baraat's classes are logical, enforced by the rates; the port's data
//!   queue (one, first come first served: `crate::engine::baraat`) holds
//!   only what the rates let pile up (a preempted flow's packets already
//!   sent).
//!
//! # The fast structure, and its check
//!
//! Tasks sit in a vector sorted by id with each one's class; the demands
//! are in a Fenwick tree over that order, so the sum of the classes before
//! `k` and `D_k` are two prefix sums, O(log n) per request. Arrivals,
//! departures and heavy turns rebuild the classes and the tree, O(n): they
//! are rare beside requests. The test `matches_the_slow_reference` runs
//! random requests against a reference that recomputes everything by
//! scanning the tasks.
//!
//! Correctness properties: a grant never takes the ARs held above the
//! `Cv` in force (line 10; `on_request`; a `Cv` lowered by `tick` is met as
//! the flows ask again); a task's class never rises while the tasks before
//! it stay (heavy is monotone; `rebuild`); counters never underflow
//! (`give_back`) nor overflow (demands capped at [`MAX_RATE`]).

use crate::config::values::parse_dur;
use crate::config::{bad, Knob};
use coflowkit_sched::baraat::{
    feedback, virtual_capacity, BaraatConfig, FeedbackInput, Share, TaskSize,
};

/// The most switches a header carries feedback for (Baraat §4.4: 12 bytes
/// of feedback, "allowing a maximum of 6 switches").
pub const MAX_HOPS: usize = 6;
/// The largest demand a request may ask, bits/s (2^48, 281 Tbit/s): larger
/// ones are taken as this, so that the sums of many cannot overflow.
pub const MAX_RATE: u64 = 1 << 48;
/// Whole intervals without a request after which a task is dropped, at
/// least ([`SpcParams::stale_intervals`]: more where flows ask less often).
pub const STALE_INTERVALS: u64 = 2;
/// Picoseconds per second.
const PS: u128 = 1_000_000_000_000;

/// The knobs every Baraat port shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpcParams {
    /// The interval between [`SpcPort::tick`]s, the paper's RTT (ps): each
    /// AR reserves this long.
    pub interval_ps: u64,
    /// A task's size at a port that makes it heavy there (`u64::MAX`:
    /// never).
    pub heavy_bytes: u64,
    /// What counts as a task's size at a port: the payload of its data
    /// packets that arrive there (`Sent`), or its ARs times the interval
    /// (`Granted`).
    pub task_size: TaskSize,
    /// Algorithm 1's line 8 as written, or our `fill` variant.
    pub share: Share,
    /// The virtual capacity's gain per interval (0: `Cv = C`).
    pub vc_gain: f64,
    /// The virtual capacity's ceiling, a multiple of `C` (1 or more).
    pub vc_max: f64,
    /// Whole intervals without a request after which a port drops a task
    /// (at least [`STALE_INTERVALS`]; longer than the longest a live flow
    /// waits between requests).
    pub stale_intervals: u64,
}

impl SpcParams {
    /// The parameters of the `baraat` scheduler spec: its `rtt` as the
    /// interval, its `threshold` (bytes, rounded up) as the heavy bytes,
    /// its `task_size`, `share`, `vc` and `vc_max`.
    pub fn of_baraat(c: &BaraatConfig) -> SpcParams {
        let heavy_bytes = if c.threshold.is_finite() {
            c.threshold.max(0.0).ceil().min(u64::MAX as f64) as u64
        } else {
            u64::MAX
        };
        SpcParams {
            interval_ps: c.rtt.0.saturating_mul(1000),
            heavy_bytes,
            task_size: c.task_size,
            share: c.share,
            vc_gain: c.vc_gain,
            vc_max: c.vc_max,
            stale_intervals: STALE_INTERVALS,
        }
    }
}

/// What a request asks of the ports on its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// The flow's first request: it joins its task's counters.
    First,
    /// A request every RTT after: return the previous demand and AR, ask
    /// again.
    Refresh,
    /// The flow is done: return the previous demand and AR, leave.
    Fin,
}

/// Baraat's SPC header (§4.4), carried by one forward packet per flow per
/// RTT (a data packet, or one of its own) and echoed back to the sender by
/// its receiver. Rates in bits/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpcHeader {
    /// The task id (lower is served first).
    pub task: u64,
    /// The host says the task is heavy (`TaskTag::heavy`).
    pub heavy: bool,
    /// What the request asks.
    pub request: Request,
    /// The flow's demand for the next RTT (Algorithm 2).
    pub demand: u64,
    /// The demand each switch holds for the flow from its previous request
    /// (what line 1 returns there): the same for every switch, unless a
    /// request was lost part way (our reading; the paper's header carries
    /// one).
    pub prev_demand: [u64; MAX_HOPS],
    /// The switch index: the next switch on the path to write feedback.
    pub hop: u8,
    /// The AR each switch granted the previous request (line 1 returns it).
    pub prev_ar: [u64; MAX_HOPS],
    /// The AR each switch grants this request.
    pub ar: [u64; MAX_HOPS],
    /// The NR each switch grants this request.
    pub nr: [u64; MAX_HOPS],
}

impl SpcHeader {
    /// A flow's first request for task `task` with demand `demand`.
    pub fn first(task: u64, heavy: bool, demand: u64) -> SpcHeader {
        SpcHeader {
            task,
            heavy,
            request: Request::First,
            demand,
            prev_demand: [0; MAX_HOPS],
            hop: 0,
            prev_ar: [0; MAX_HOPS],
            ar: [0; MAX_HOPS],
            nr: [0; MAX_HOPS],
        }
    }

    /// The least of `rates` over the switches that wrote feedback
    /// (`u64::MAX` if none did).
    fn least(&self, rates: &[u64; MAX_HOPS]) -> u64 {
        let stamped = (self.hop as usize).min(MAX_HOPS);
        rates[..stamped].iter().copied().min().unwrap_or(u64::MAX)
    }

    /// The least AR of the path: the rate the sender sends at until the next
    /// feedback (`u64::MAX` if no switch wrote one).
    pub fn min_ar(&self) -> u64 {
        self.least(&self.ar)
    }

    /// The least NR of the path: Algorithm 2's `MinNR` (`u64::MAX` if no
    /// switch wrote one).
    pub fn min_nr(&self) -> u64 {
        self.least(&self.nr)
    }

    /// The request after this one: `demand` for the next RTT, returning
    /// to each switch what it holds. The switches this one reached hold its
    /// demand and the ARs they wrote; those it did not reach (it was lost
    /// on the way, `hop` short of the path) still hold the previous ones,
    /// which this header still carries for them.
    pub fn next(&self, demand: u64) -> SpcHeader {
        let reached = (self.hop as usize).min(MAX_HOPS);
        let mut prev_ar = self.prev_ar;
        let mut prev_demand = self.prev_demand;
        prev_ar[..reached].copy_from_slice(&self.ar[..reached]);
        prev_demand[..reached].fill(self.demand);
        SpcHeader {
            request: Request::Refresh,
            demand,
            prev_demand,
            hop: 0,
            prev_ar,
            ar: [0; MAX_HOPS],
            nr: [0; MAX_HOPS],
            ..*self
        }
    }

    /// The flow's last request, returning this one's demand and ARs.
    pub fn fin(&self) -> SpcHeader {
        SpcHeader {
            request: Request::Fin,
            ..self.next(0)
        }
    }
}

/// A port's Baraat counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpcStats {
    /// Requests handled (FINs included).
    pub requests: u64,
    /// Requests past [`MAX_HOPS`] switches, passed on without feedback.
    pub unstamped: u64,
    /// Tasks dropped as stale.
    pub expired: u64,
    /// Tasks that turned heavy here.
    pub heavy: u64,
    /// The most tasks held at once.
    pub max_tasks: u64,
}

/// One task's counters at a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TaskCounters {
    id: u64,
    /// The demands of its flows here.
    demand: u64,
    /// The ARs granted its flows here.
    alloc: u64,
    /// Its flows here.
    n_flows: u32,
    /// Its size here ([`SpcParams::task_size`]), bytes.
    reserved: u64,
    heavy: bool,
    /// The interval of its last request.
    seen: u64,
}

/// A Fenwick tree of sums in wrapping u64 arithmetic (exact while the true
/// sums fit).
#[derive(Debug, Clone, Default)]
struct Fenwick(Vec<u64>);

impl Fenwick {
    fn rebuild(&mut self, values: impl Iterator<Item = u64>) {
        self.0.clear();
        self.0.extend(values);
        let n = self.0.len();
        for i in 0..n {
            let j = i | (i + 1);
            if j < n {
                self.0[j] = self.0[j].wrapping_add(self.0[i]);
            }
        }
    }

    fn add(&mut self, mut i: usize, delta: u64) {
        while i < self.0.len() {
            self.0[i] = self.0[i].wrapping_add(delta);
            i |= i + 1;
        }
    }

    fn sub(&mut self, i: usize, delta: u64) {
        self.add(i, delta.wrapping_neg());
    }

    /// The sum of the first `n` values.
    fn prefix(&self, mut n: usize) -> u64 {
        let mut s = 0u64;
        while n > 0 {
            s = s.wrapping_add(self.0[n - 1]);
            n &= n - 1;
        }
        s
    }
}

/// One output port's Smart Priority Classes; see the module doc.
#[derive(Debug, Clone)]
pub struct SpcPort {
    /// The link's capacity `C`, bits/s.
    pub capacity: u64,
    /// The capacity Algorithm 1 shares, bits/s: the virtual capacity `Cv`
    /// less what [`SpcPort::reserve_control`] set aside.
    pub vcap: u64,
    /// Counters.
    pub stats: SpcStats,
    /// Tasks with a flow here, sorted by id.
    tasks: Vec<TaskCounters>,
    /// Per task (same order), its class.
    class: Vec<u32>,
    /// Per class, the position of its first task; then `tasks.len()`.
    class_start: Vec<usize>,
    /// Per class, its flows `F_k`.
    class_flows: Vec<u32>,
    /// The tasks' demands, in task order.
    demand: Fenwick,
    /// `A`: the ARs held, all tasks.
    allocated: u64,
    /// The virtual capacity `Cv` (footnote 5), bits/s, kept unrounded so
    /// that it follows the flow level's sequence.
    virtual_cap: f64,
    /// Bytes that arrived this interval.
    bytes_in: u64,
    /// Intervals completed.
    epoch: u64,
}

impl SpcPort {
    /// A port of `capacity` bits/s with no task.
    pub fn new(capacity: u64) -> SpcPort {
        SpcPort {
            capacity,
            vcap: capacity,
            virtual_cap: capacity as f64,
            stats: SpcStats::default(),
            tasks: vec![],
            class: vec![],
            class_start: vec![0],
            class_flows: vec![],
            demand: Fenwick::default(),
            allocated: 0,
            bytes_in: 0,
            epoch: 0,
        }
    }

    /// A packet of `wire` bytes arrived (any packet: `y` counts them all).
    pub fn on_arrival(&mut self, wire: u32) {
        self.bytes_in += wire as u64;
    }

    /// A data packet of `task` with `payload` bytes arrived: with
    /// `task_size=sent` they count toward the task's size here (a task the
    /// port does not hold is not counted).
    pub fn on_data(&mut self, task: u64, payload: u32, p: &SpcParams) {
        if p.task_size != TaskSize::Sent {
            return;
        }
        if let Ok(i) = self.find(task) {
            self.count(i, u64::from(payload), p);
        }
    }

    /// The virtual capacity `Cv`, bits/s (unrounded).
    pub fn virtual_capacity(&self) -> f64 {
        self.virtual_cap
    }

    /// Sets aside `rate` bits/s of `Cv` (at most half of it) for packets
    /// no AR covers, until the next [`SpcPort::tick`].
    pub fn reserve_control(&mut self, rate: u64) {
        let cv = self.virtual_cap.round() as u64;
        self.vcap = cv - rate.min(cv / 2);
    }

    /// The SPC class of `task` here (0 the highest), if it has a flow here.
    pub fn class_of(&self, task: u64) -> Option<u32> {
        self.find(task).ok().map(|i| self.class[i])
    }

    /// Whether `task` is heavy here.
    pub fn is_heavy(&self, task: u64) -> bool {
        self.find(task)
            .map(|i| self.tasks[i].heavy)
            .unwrap_or(false)
    }

    /// Tasks with a flow here.
    pub fn n_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// The ARs held (`A`), bits/s.
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Algorithm 1 for the request `h` at this port (the switch `h.hop` of
    /// its path): writes `h.ar[hop]` and `h.nr[hop]` and moves `h.hop` on.
    pub fn on_request(&mut self, h: &mut SpcHeader, p: &SpcParams) {
        self.stats.requests += 1;
        let hop = h.hop as usize;
        h.hop = h.hop.saturating_add(1);
        if hop >= MAX_HOPS {
            self.stats.unstamped += 1;
            return;
        }
        let known = self.find(h.task);
        if h.request == Request::Fin {
            if let Ok(i) = known {
                self.give_back(i, h.prev_demand[hop].min(MAX_RATE), h.prev_ar[hop]);
                self.leave(i);
            }
            h.ar[hop] = 0;
            h.nr[hop] = 0;
            return;
        }
        // Line 1 (or the flow joins).
        let i = match known {
            Ok(i) if h.request == Request::Refresh => {
                self.give_back(i, h.prev_demand[hop].min(MAX_RATE), h.prev_ar[hop]);
                i
            }
            Ok(i) => {
                self.join(i);
                i
            }
            Err(at) => self.insert(at, h.task),
        };
        self.tasks[i].seen = self.epoch;
        if h.heavy && !self.tasks[i].heavy {
            self.turn_heavy(i);
        }
        // Lines 2-10.
        let d = h.demand.min(MAX_RATE);
        let (ar, nr) = self.feedback(i, d, p.share);
        h.ar[hop] = ar;
        h.nr[hop] = nr;
        // Line 12.
        self.take(i, d, ar, p);
    }

    /// The end of an interval of `t_ps` with `queued` bytes in the queue:
    /// drops stale tasks and updates the virtual capacity (the flow
    /// level's rule, [`virtual_capacity`], with the queue's drain rate
    /// added to what arrived; a port with no task is back at `C`); returns
    /// whether the port is idle (no task, nothing arrived, nothing queued),
    /// so its timer may stop. It clears what [`SpcPort::reserve_control`]
    /// set aside.
    pub fn tick(&mut self, t_ps: u64, queued: u64, p: &SpcParams) -> bool {
        self.expire(p.stale_intervals.max(STALE_INTERVALS));
        let c = self.capacity as f64;
        let offered = if self.tasks.is_empty() || t_ps == 0 {
            None
        } else {
            let per_s = |bytes: u64| (bytes as u128 * 8 * PS / t_ps as u128) as f64;
            Some(per_s(self.bytes_in) + per_s(queued))
        };
        if offered.is_some() || self.tasks.is_empty() {
            self.virtual_cap = virtual_capacity(self.virtual_cap, c, offered, p.vc_gain, p.vc_max);
        }
        self.vcap = self.virtual_cap.round() as u64;
        let idle = self.tasks.is_empty() && self.bytes_in == 0 && queued == 0;
        self.bytes_in = 0;
        self.epoch += 1;
        idle
    }

    /// Lines 2-10 for a flow of task `i` with demand `d`: (AR, NR).
    fn feedback(&self, i: usize, d: u64, share: Share) -> (u64, u64) {
        let k = self.class[i] as usize;
        let (lo, hi) = (self.class_start[k], self.class_start[k + 1]);
        let higher = self.demand.prefix(lo);
        let class_demand = self.demand.prefix(hi).wrapping_sub(higher);
        let (ar, nr) = feedback(
            FeedbackInput {
                capacity: self.vcap as f64,
                higher_demand: higher as f64,
                class_demand: class_demand as f64,
                class_flows: self.class_flows[k],
                allocated: self.allocated as f64,
                demand: d as f64,
            },
            share,
        );
        (ar as u64, nr as u64)
    }

    /// Line 12: task `i`'s flow asks `d` and holds `ar` for an interval.
    fn take(&mut self, i: usize, d: u64, ar: u64, p: &SpcParams) {
        let t = &mut self.tasks[i];
        t.demand += d;
        t.alloc += ar;
        self.demand.add(i, d);
        self.allocated += ar;
        if p.task_size == TaskSize::Granted {
            let bytes = ar as u128 * p.interval_ps as u128 / (8 * PS);
            self.count(i, bytes.min(u64::MAX as u128) as u64, p);
        }
    }

    /// `bytes` more of task `i`'s size here; it turns heavy at the
    /// threshold.
    fn count(&mut self, i: usize, bytes: u64, p: &SpcParams) {
        let t = &mut self.tasks[i];
        t.reserved = t.reserved.saturating_add(bytes);
        if !t.heavy && t.reserved >= p.heavy_bytes {
            self.turn_heavy(i);
        }
    }

    /// Line 1: task `i` gets back a flow's previous demand and AR (never
    /// below 0).
    fn give_back(&mut self, i: usize, d: u64, ar: u64) {
        let t = &mut self.tasks[i];
        let d = d.min(t.demand);
        let ar = ar.min(t.alloc);
        t.demand -= d;
        t.alloc -= ar;
        self.demand.sub(i, d);
        self.allocated -= ar;
    }

    /// A new flow of task `i`.
    fn join(&mut self, i: usize) {
        self.tasks[i].n_flows += 1;
        self.class_flows[self.class[i] as usize] += 1;
    }

    /// A flow of task `i` left; the task goes with its last flow.
    fn leave(&mut self, i: usize) {
        let t = &mut self.tasks[i];
        t.n_flows = t.n_flows.saturating_sub(1);
        if t.n_flows == 0 {
            let t = self.tasks.remove(i);
            self.allocated -= t.alloc;
            self.rebuild();
        } else {
            self.class_flows[self.class[i] as usize] -= 1;
        }
    }

    /// Task `id` arrives at position `at` with one flow; returns `at`.
    fn insert(&mut self, at: usize, id: u64) -> usize {
        self.tasks.insert(
            at,
            TaskCounters {
                id,
                demand: 0,
                alloc: 0,
                n_flows: 1,
                reserved: 0,
                heavy: false,
                seen: self.epoch,
            },
        );
        self.stats.max_tasks = self.stats.max_tasks.max(self.tasks.len() as u64);
        self.rebuild();
        at
    }

    /// Task `i` turns heavy: it shares its class with the next task.
    fn turn_heavy(&mut self, i: usize) {
        self.tasks[i].heavy = true;
        self.stats.heavy += 1;
        self.rebuild();
    }

    /// Drops the tasks with no request for `stale` intervals.
    fn expire(&mut self, stale: u64) {
        let now = self.epoch;
        let before = self.tasks.len();
        let mut freed = 0;
        self.tasks.retain(|t| {
            let keep = now - t.seen < stale;
            if !keep {
                freed += t.alloc;
            }
            keep
        });
        if self.tasks.len() < before {
            self.stats.expired += (before - self.tasks.len()) as u64;
            self.allocated -= freed;
            self.rebuild();
        }
    }

    /// The classes, their flows and the demand tree from the tasks (after
    /// an arrival, a departure or a heavy turn).
    fn rebuild(&mut self) {
        self.class.clear();
        self.class_start.clear();
        self.class_flows.clear();
        let mut after_heavy = false;
        for (i, t) in self.tasks.iter().enumerate() {
            if !after_heavy {
                self.class_start.push(i);
                self.class_flows.push(0);
            }
            self.class.push(self.class_start.len() as u32 - 1);
            *self.class_flows.last_mut().expect("a class") += t.n_flows;
            after_heavy = t.heavy;
        }
        self.class_start.push(self.tasks.len());
        self.demand.rebuild(self.tasks.iter().map(|t| t.demand));
    }

    /// The position of task `id`, or where it would go.
    fn find(&self, id: u64) -> Result<usize, usize> {
        self.tasks.binary_search_by_key(&id, |t| t.id)
    }
}

/// Baraat's requests and headers.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "spc_probe_max",
        default: "1ms",
        unit: "duration",
        help: "baraat: the longest a flow held with no nominal share (AR and NR 0) waits between requests; the wait doubles from one interval (rtt) while held (1ms)",
        set: |c, key, v| {
            c.spc_probe_max = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "spc_header",
        default: "data",
        unit: "choice",
        help: "baraat: data (a sending flow's requests ride on its data packets, the answers on ACKs) or alone (on packets of their own) (data)",
        set: |c, key, v| {
            c.spc_on_data = match v.trim().to_ascii_lowercase().as_str() {
                "data" => true,
                "alone" => false,
                _ => return Err(bad(key, format!("'{v}': data or alone"))),
            };
            Ok(())
        },
    },
    Knob {
        name: "spc_control",
        default: "wire",
        unit: "choice",
        help: "baraat: wire (its requests, echoes and the header on data packets and ACKs take the wire) or free (no bytes: a knob to measure their cost) (wire)",
        set: |c, key, v| {
            c.spc_control_wire = match v.trim().to_ascii_lowercase().as_str() {
                "wire" => true,
                "free" => false,
                _ => return Err(bad(key, format!("'{v}': wire or free"))),
            };
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests;
