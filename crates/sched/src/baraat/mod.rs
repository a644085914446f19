//! `baraat`: Baraat's Smart Priority Class (B. Dogar, T. Karagiannis,
//! H. Ballani, A. Rowstron, "Decentralized Task-Aware Scheduling for Data
//! Center Networks", SIGCOMM 2014, 4.1 and 4.3), simulated round by round.
//!
//! Every task (coflow) has a task id (4.1, [`crate::tasks`]); a lower id is
//! a higher priority. There is no central scheduler: each link (a switch
//! port, or a host's CPU for a compute stage) decides from what crosses it,
//! and each sender sets its demand from the feedback of its path.
//!
//! # One round (one RTT)
//!
//! Time is cut into rounds at the instants `k · rtt` (integer ns, `rtt`
//! default 100 us). At the start of round `k`:
//!
//! 1. **Sender, Algorithm 2.** Every active flow computes its demand
//!    `D = min(NIC rate, buffered / rtt)`, where the NIC rate is the
//!    capacity of the first link of its path and `buffered` its bytes left;
//!    if the flow was already set up (it had feedback in round `k - 1`) and
//!    the least NR of that feedback is below its previous demand, it is
//!    bottlenecked elsewhere and `D = min(D, min NR + delta)`.
//! 2. **Classifier, 4.3.1, per link.** The link keeps, per task, a count
//!    of the task's size there ([the task's size](#the-tasks-size-at-a-link),
//!    below). A task is *heavy on this link* when
//!    that reaches `threshold` (within 1e-6 relative, as `fifo-lm`). The
//!    tasks with a flow on the link, in task-id order, form classes: a class
//!    is a maximal run in which every member but the last is heavy (a heavy
//!    task shares its class with the task after it; several heavy tasks in a
//!    row raise the multiplexing further). So a task can be heavy on one
//!    link and light on another (footnote 3). Classes are fixed for the round
//!    from the counters before it.
//! 3. **Switch, Algorithm 1, per link.** The link handles its flows' requests
//!    in priority order (task id, then flow index). For flow `f` of class `k`
//!    with demand `D`, after its previous demand and allocation are returned
//!    (line 1): `ClassAvlBW = max(0, C - sum of the demands of classes
//!    before k)`, `AvailShare = max(0, ClassAvlBW - D_k)` with `D_k` the
//!    demands of the other flows of class `k`; `NR = D` if `AvailShare > D`,
//!    else `NR = ClassAvlBW / F_k` (`F_k` flows in class `k`, `f` included);
//!    `AR = min(NR, C - A)` with `A` the allocations of the other flows on
//!    the link. Then `f`'s demand and AR replace its old ones in the counters
//!    (line 12). The counters hold, for a flow already handled this round,
//!    its new values, for one not yet handled its values of the previous
//!    round, and nothing for a flow in its first round (so a new
//!    high-priority flow is held to what lower ones left until they are
//!    handled again: preemption takes a round, as in the paper).
//! 4. **Rates.** A flow sends during the round at the least AR of its path;
//!    its least NR is kept for step 1 of the next round.
//!
//! Comparisons of rates (`AvailShare > D`, `MinNR < Demand`) treat values
//! within [`RATE_TIE`] (1e-9 relative) as equal. `AvailShare > D` is
//! relative to the larger of `D` and the link's capacity `C`: `AvailShare`
//! is `C` less sums of demands, so its float noise is on the scale of `C`
//! even when it and `D` are small (a flow's last bytes against what a
//! class leaves).
//!
//! A flow that starts between rounds sends nothing until the next round
//! (its first request); a flow that finishes returns its allocation at the
//! next round (its FIN), so the bandwidth it leaves idles until then, as it
//! would on a real network. Rates are constant within a round, so the engine
//! stays exact; the sum of ARs on a link never exceeds its capacity
//! (`AR <= C - A`), so every allocation is feasible (with virtual
//! capacity, below, the rates are clipped to keep it so).
//!
//! Work conservation in multi-hop settings (4.3.2-4.3.3) comes from the
//! demand: a high-priority flow bottlenecked downstream lowers its demand to
//! that bottleneck's NR + delta, and an upstream link gives the rest to
//! lower classes (`ClassAvlBW` subtracts demands, not capacities). Two
//! details follow Algorithm 1 literally: within a class the share is
//! `ClassAvlBW / F_k`, not a water level over the flows' demands (so a
//! class whose flows are partly bottlenecked elsewhere may leave some of
//! its share to the next class only), and a flow whose demand fits is given
//! exactly its demand.
//!
//! # The task's size at a link
//!
//! The paper (4.3.1): "We maintain a counter that keeps track of the total
//! bytes reserved by flows of a task, which we use as proxy for the
//! task's size. If the task size exceeds a pre-determined threshold, the
//! task is marked as heavy"; and the threshold is one "in terms of task
//! size" taken from the task-size distribution (3.3, `threshold=p80`). So
//! the counter stands for bytes of the task, and a reservation counts as
//! far as the flow uses it: a flow sends at the least AR of its path, so
//! what a link grants above that (the NR + delta a flow bottlenecked
//! elsewhere asks, Algorithm 2; a new flow's NIC rate) and what a virtual
//! capacity above `C` overcommits are no bytes of the task and would turn
//! it heavy early. By default (`task_size=sent`) a link counts, per round,
//! the bytes each flow of the task sends through it: its final rate (the
//! least AR of its path, clipped to the real capacities) times `rtt`, at
//! most the bytes it has left. The packet level counts the same thing,
//! the payload of the task's data packets that arrive at the port
//! (`coflowkit_packet::spc`). `task_size=granted` counts the ARs the link
//! granted, times `rtt`, whether the flows used them or not.
//!
//! # Virtual capacity (footnote 5), `vc_gain > 0`
//!
//! Demands overstate what flows send (NR + delta, a new flow's NIC rate),
//! so `ClassAvlBW` withholds capacity from lower classes. The paper's fix
//! is a virtual capacity raised while the link is under-used and lowered
//! when it is over-used, as in RCP; it gives no formula. Ours
//! ([`virtual_capacity`], the one rule of both levels): after round
//! `k`, per link, `Cv <- clamp(Cv + vc_gain * (C - y), C, vc_max * C)` with
//! `y` the rate offered to the link (the least AR of each of its flows'
//! paths, summed), `|C - y|` within [`RATE_TIE`] counting as 0. Round
//! `k + 1` uses `Cv` for `C` in Algorithm 1 (`ClassAvlBW` and `AR <= Cv -
//! A`). A link offered `y > C` (possible only while `Cv > C`) passes
//! less than offered (a fluid stand-in for the queue, which has no place
//! in this simulator): the flows that send their last bytes in the round
//! (their least AR carries all they have left in one RTT,
//! [`sends_its_last`]) in full, the others scaled to what is left
//! ([`clip`]); a flow sends at its least AR times the least factor of its
//! path. Scaling a flow's last round instead would leave a sliver, scaled
//! again the next round, and so on: its end would slide to within
//! nanoseconds of a tick, where float noise decides whether it is still
//! there for the next round's classes. Invariant: the rates handed to the engine never sum
//! above `C` on any link. With `Cv = C` nothing changes from the above. A
//! link with no flow at some round (its last flow gone before the tick,
//! no new one by then) starts again from `C`: a link's credit is for the
//! flows that left it room, not for idle time (a packet port with no task
//! resets the same way). A round computed
//! twice at one instant (a flow ending on the tick) restarts from the rate
//! state before the first (demands, least NRs, ARs, virtual capacities).
//!
//! # Speed: rounds that change nothing are skipped
//!
//! Each round is computed in full, but a round whose outcome equals the
//! previous one (every demand, every AR and every least NR the same within
//! [`RATE_TIE`], no flow set up for the first time) is a fixed point: the
//! next round has the same inputs unless a sender's buffered bytes fall
//! below its demand times `rtt`, or a light task's reserved bytes on some
//! link reach the threshold. Both are linear in time, so the scheduler
//! computes the first round where either can happen and sleeps until the
//! round before it (one early, so float noise can only wake it sooner);
//! skipped rounds' reservations are added when it wakes (or when a flow
//! starts or finishes, which wakes it at the next round anyway). Sums
//! taken in a different order can make an AR flip by one ulp from round
//! to round forever; within [`RATE_TIE`] that is no change, so skipping
//! moves rates by at most 1e-9 relative from what computing every round
//! gives (checked against a reference that computes every round).
//!
//! # Cost, and refusing a workload too large for it
//!
//! A computed round costs about [`NS_PER_FLOW_ROUND`] per active flow,
//! and a flow is active for at least its bytes at its NIC rate, so a
//! workload costs at least `sum over flows of (bits / NIC rate / rtt)`
//! flow-rounds ([`least_flow_rounds`]): on FB2010 (706,397 flows, an hour
//! of arrivals) that is about 3 G flow-rounds at 100 us, 6 minutes or more
//! (its first 200 coflows alone ran over 25 minutes without finishing),
//! where `fifo-lm` (its idealized stand-in) takes seconds. Drivers that
//! know the fabric check the estimate before they run ([`check_budget`];
//! `simulate` does, and the CLI leaves a refused `baraat` out of its
//! default list): above `budget` (`300s` by default, `inf` for no limit)
//! the run is refused up front with the estimate in one line; a coarser
//! round (`rtt=`) divides the estimate.
//!
//! What it knows: `Knows = KnowsSizes`, only for each sender's own buffered
//! bytes (Algorithm 2, line 2). Nothing else reads a size: heavy tasks are
//! found from the bytes counted at each link. Allocation classes are left at 0 (classes are
//! per link here, not per flow).

mod config;
mod rules;

pub use config::*;
pub use rules::*;

pub mod host;

use crate::descriptor::{
    Kind, Needs, Param, Params, Parts, SchedulerDescriptor, Switch, TASK_ID_PARAMS,
};
use crate::fifo_lm::THRESHOLD_PARAM;
use crate::spec::Hint;
use crate::tasks::{TaskIdConfig, TaskIds};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_model::{Dur, Time};

/// `baraat`: Smart Priority Classes per link, explicit feedback every RTT.
pub const BARAAT: SchedulerDescriptor = SchedulerDescriptor {
    cost: 1000.0,
    parts: Parts {
        host: Some(crate::baraat::host::build),
        switch: Switch::SmartPriorityClasses,
        preflight: Some(check_budget),
        ..Parts::NONE
    },
    name: "baraat",
    description: "Baraat's Smart Priority Classes per link, explicit feedback every RTT",
    paper: "Baraat (SIGCOMM 2014) 4.1, 4.3 (classifier 4.3.1, Algorithms 1-2)",
    params: &[
        THRESHOLD_PARAM,
        Param {
            key: "rtt",
            kind: Kind::Duration,
            default: "100us",
            unit: "",
            help: "round length (the paper's RTT), above 0",
        },
        Param {
            key: "delta",
            kind: Kind::Rate,
            default: "10Mbps",
            unit: "",
            help: "Algorithm 2's delta",
        },
        Param {
            key: "share",
            kind: Kind::Choice(&["equal", "fill"]),
            default: "equal",
            unit: "",
            help: "equal: Algorithm 1 as written; fill: also what a class leaves unused",
        },
        Param {
            key: "vc",
            kind: Kind::Number,
            default: "0",
            unit: "",
            help: "virtual capacity gain per round (0: none)",
        },
        Param {
            key: "vc_max",
            kind: Kind::Number,
            default: "10",
            unit: "x C",
            help: "upper bound of the virtual capacity, 1 or more",
        },
        Param {
            key: "task_size",
            kind: Kind::Choice(&["sent", "granted"]),
            default: "sent",
            unit: "",
            help: "a task's size at a link, for the threshold: sent: bytes its flows sent through it; granted: its ARs times the RTT",
        },
        TASK_ID_PARAMS[0],
        TASK_ID_PARAMS[1],
        BUDGET_PARAM,
    ],
    needs: Needs {
        hints: &[Hint::CoflowSizes],
        ..Needs::SIZES
    },
    build: |p, hints| {
        let config = BaraatConfig::of_params(p, hints)?;
        Ok(AnyScheduler::Clairvoyant(Box::new(Baraat::new(config))))
    },
};

#[derive(Debug, Clone, Default)]
struct FlowState {
    task: u64,
    setup: bool,
    demand: f64,
    min_nr: f64,
    /// AR granted by each link of the path, in path order.
    ar: Vec<f64>,
    new_demand: f64,
    new_min_nr: f64,
    /// The round that last wrote `setup`, `demand`, `min_nr` and `ar`, and
    /// their values before it: a round computed again at the same instant
    /// (a flow ending on the tick) starts from the same state.
    round: Option<i64>,
    before: (bool, f64, f64),
    ar_before: Vec<f64>,
}

#[derive(Debug, Clone)]
struct LinkTask {
    task: u64,
    n_flows: u32,
    reserved: f64,
    /// Bytes counted per round ([`TaskSize`]) at the last computed round.
    grant: f64,
    heavy: bool,
}

#[derive(Debug, Clone, Default)]
struct LinkState {
    /// (task id, flow, position of the link in the flow's path), sorted.
    members: Vec<(u64, FlowIdx, u32)>,
    /// Per task seen on the link, sorted by task id.
    tasks: Vec<LinkTask>,
    busy: bool,
    /// Virtual capacity (bits/s), 0 until the link first carries a flow.
    vcap: f64,
    /// The round that last updated `vcap`, and its value before: a round
    /// computed again at the same instant (a flow ending on the tick)
    /// starts from the same virtual capacity.
    vcap_round: i64,
    vcap_before: f64,
    /// When the link's last flow left (ns), while it has none.
    idle_from: Option<u64>,
}

/// Baraat with Smart Priority Classes; see the module doc.
#[derive(Debug)]
pub struct Baraat {
    config: BaraatConfig,
    tasks: TaskIds,
    flows: Vec<FlowState>,
    links: Vec<LinkState>,
    busy: Vec<u32>,
    /// Links each coflow has counters on.
    coflow_links: Vec<Vec<u32>>,
    /// Reservations of rounds up to this one are in the counters.
    credited: i64,
    /// The round the scheduler sleeps until.
    planned: Option<i64>,
    scratch_class: Vec<u32>,
    scratch_old: Vec<(f64, u32)>,
    /// Per link: rate offered in the current round, then the clip factor;
    /// the same for the flows that send their last bytes in the round.
    scratch_y: Vec<f64>,
    scratch_last: Vec<f64>,
    rounds: u64,
}

impl Baraat {
    /// A `baraat` scheduler.
    pub fn new(config: BaraatConfig) -> Baraat {
        Baraat {
            tasks: TaskIds::new(config.tasks),
            config,
            flows: vec![],
            links: vec![],
            busy: vec![],
            coflow_links: vec![],
            credited: -1,
            planned: None,
            scratch_class: vec![],
            scratch_old: vec![],
            scratch_y: vec![],
            scratch_last: vec![],
            rounds: 0,
        }
    }

    /// How many rounds were computed (the others were skipped as fixed
    /// points).
    pub fn rounds_computed(&self) -> u64 {
        self.rounds
    }

    fn rtt(&self) -> u64 {
        self.config.rtt.0.max(1)
    }

    fn is_heavy(&self, reserved: f64) -> bool {
        let t = self.config.threshold;
        t.is_finite() && reserved >= t - 1e-6 * t.max(1.0)
    }

    /// Adds the reservations of rounds `credited + 1 ..= k` at the grants of
    /// the last computed round.
    fn credit_through(&mut self, k: i64) {
        if k <= self.credited {
            return;
        }
        let n = (k - self.credited) as f64;
        for &l in &self.busy {
            for t in &mut self.links[l as usize].tasks {
                if t.grant > 0.0 {
                    t.reserved += n * t.grant;
                }
            }
        }
        self.credited = k;
    }

    fn zero_grants(&mut self) {
        for &l in &self.busy {
            for t in &mut self.links[l as usize].tasks {
                t.grant = 0.0;
            }
        }
    }

    fn link_task(&mut self, l: u32, task: u64, coflow: CoflowIdx) -> &mut LinkTask {
        let link = &mut self.links[l as usize];
        let i = match link.tasks.binary_search_by_key(&task, |t| t.task) {
            Ok(i) => i,
            Err(i) => {
                link.tasks.insert(
                    i,
                    LinkTask {
                        task,
                        n_flows: 0,
                        reserved: 0.0,
                        grant: 0.0,
                        heavy: false,
                    },
                );
                let cl = &mut self.coflow_links[coflow as usize];
                cl.push(l);
                i
            }
        };
        if !link.busy {
            link.busy = true;
            self.busy.push(l);
        }
        &mut link.tasks[i]
    }

    fn start(&mut self, now: Time, view: &Clairvoyant<'_>, f: FlowIdx) {
        let c = view.coflow_of(f);
        let task = self.tasks.get(c).0;
        if self.flows.len() <= f as usize {
            self.flows.resize(f as usize + 1, FlowState::default());
        }
        if self.coflow_links.len() <= c as usize {
            self.coflow_links.resize(c as usize + 1, vec![]);
        }
        let path = view.path(f);
        self.flows[f as usize] = FlowState {
            task,
            setup: false,
            demand: 0.0,
            min_nr: f64::INFINITY,
            ar: vec![0.0; path.len()],
            new_demand: 0.0,
            new_min_nr: f64::INFINITY,
            round: None,
            before: (false, 0.0, f64::INFINITY),
            ar_before: vec![],
        };
        let rtt = self.rtt();
        for (pos, l) in path.iter().enumerate() {
            self.link_task(l.0, task, c).n_flows += 1;
            let link = &mut self.links[l.0 as usize];
            // A link that had no flow at some round since its last one left
            // starts again from its capacity.
            if let Some(idle) = link.idle_from.take() {
                if idle.div_ceil(rtt) * rtt < now.0 {
                    let c = view.capacities()[l.0 as usize];
                    link.vcap = virtual_capacity(link.vcap, c, None, 0.0, 1.0);
                }
            }
            let members = &mut link.members;
            let key = (task, f, pos as u32);
            let i = members.partition_point(|m| *m < key);
            members.insert(i, key);
        }
    }

    fn finish(&mut self, now: Time, view: &Clairvoyant<'_>, f: FlowIdx) {
        let task = self.flows[f as usize].task;
        for l in view.path(f) {
            let link = &mut self.links[l.0 as usize];
            if let Ok(i) = link
                .members
                .binary_search_by_key(&(task, f), |m| (m.0, m.1))
            {
                link.members.remove(i);
                if link.members.is_empty() {
                    link.idle_from = Some(now.0);
                }
            }
            if let Ok(i) = link.tasks.binary_search_by_key(&task, |t| t.task) {
                link.tasks[i].n_flows -= 1;
            }
        }
        self.flows[f as usize].ar = vec![];
    }

    fn drop_coflow(&mut self, c: CoflowIdx) {
        let Some(links) = self.coflow_links.get_mut(c as usize) else {
            return;
        };
        let links = std::mem::take(links);
        let task = self.tasks.get(c).0;
        for l in links {
            let link = &mut self.links[l as usize];
            if let Ok(i) = link.tasks.binary_search_by_key(&task, |t| t.task) {
                link.tasks.remove(i);
            }
        }
    }

    /// Computes round `k`; returns whether its outcome differs from the
    /// previous round's.
    fn round(&mut self, k: i64, view: &Clairvoyant<'_>, out: &mut Allocation) -> bool {
        self.rounds += 1;
        self.credit_through(k - 1);
        let rtt_s = self.rtt() as f64 * 1e-9;
        let delta = self.config.delta;
        let mut changed = false;
        // 1. Senders (Algorithm 2).
        for &f in view.active_flows() {
            let st = &mut self.flows[f as usize];
            if st.round == Some(k) {
                (st.setup, st.demand, st.min_nr) = st.before;
                st.ar.clone_from(&st.ar_before);
            } else {
                st.round = Some(k);
                st.before = (st.setup, st.demand, st.min_nr);
                st.ar_before.clone_from(&st.ar);
            }
            let nic = view.capacities()[view.path(f)[0].0 as usize];
            let buffered = view.remaining(f).max(0.0) * 8.0 / rtt_s;
            let prev = st.setup.then_some((st.demand, st.min_nr));
            st.new_demand = demand(nic, buffered, prev, delta);
            st.new_min_nr = f64::INFINITY;
            changed |= !st.setup || moved(st.new_demand, st.demand);
        }
        // 2-3. Links: classify, then Algorithm 1 in priority order.
        let busy = std::mem::take(&mut self.busy);
        let mut still_busy = Vec::with_capacity(busy.len());
        for &l in &busy {
            let real_cap = view.capacities()[l as usize];
            let mut link = std::mem::take(&mut self.links[l as usize]);
            if link.vcap_round == k {
                link.vcap = link.vcap_before;
            }
            if link.members.is_empty() || link.vcap <= 0.0 {
                // No flow (or none yet): back at `C`.
                link.vcap = virtual_capacity(link.vcap, real_cap, None, 0.0, 1.0);
            }
            let cap = link.vcap;
            link.vcap_round = i64::MIN;
            for t in &mut link.tasks {
                t.grant = 0.0;
                t.heavy = self.is_heavy(t.reserved);
            }
            if link.members.is_empty() {
                link.busy = !link.tasks.is_empty();
                if link.busy {
                    still_busy.push(l);
                }
                self.links[l as usize] = link;
                continue;
            }
            // Classes: runs of tasks (with flows here) where all but the last
            // are heavy. Old per-class demand sums and set-up flow counts.
            let classes = &mut self.scratch_class;
            let old = &mut self.scratch_old;
            classes.clear();
            old.clear();
            let mut class = 0u32;
            let mut ti = 0;
            let mut cur_task = None;
            let mut a_old_rest = 0.0;
            for m in &link.members {
                if cur_task != Some(m.0) {
                    // The task before this one (at `ti`) closes its class if light.
                    if cur_task.is_some() && !link.tasks[ti].heavy {
                        class += 1;
                    }
                    while link.tasks[ti].task != m.0 {
                        ti += 1;
                    }
                    cur_task = Some(m.0);
                }
                classes.push(class);
                if old.len() <= class as usize {
                    old.push((0.0, 0));
                }
                let st = &self.flows[m.1 as usize];
                if st.setup {
                    old[class as usize].0 += st.demand;
                    old[class as usize].1 += 1;
                }
                a_old_rest += st.ar[m.2 as usize];
            }
            // Algorithm 1 for each flow in order.
            let mut higher = 0.0; // new demands of earlier classes
            let mut cur = u32::MAX;
            let (mut new_sum, mut old_rest, mut new_count, mut old_count) = (0.0, 0.0, 0u32, 0u32);
            let mut a_new = 0.0;
            ti = 0;
            for (i, m) in link.members.iter().enumerate() {
                let k = classes[i];
                if k != cur {
                    higher += new_sum;
                    cur = k;
                    new_sum = 0.0;
                    new_count = 0;
                    old_rest = old[k as usize].0;
                    old_count = old[k as usize].1;
                }
                let st = &mut self.flows[m.1 as usize];
                let pos = m.2 as usize;
                let (own_old_d, own_old_ar) = if st.setup {
                    (st.demand, st.ar[pos])
                } else {
                    (0.0, 0.0)
                };
                if !st.setup {
                    new_count += 1;
                }
                let (ar, nr) = feedback(
                    FeedbackInput {
                        capacity: cap,
                        higher_demand: higher,
                        class_demand: new_sum + (old_rest - own_old_d).max(0.0),
                        class_flows: old_count + new_count,
                        allocated: a_new + (a_old_rest - own_old_ar).max(0.0),
                        demand: st.new_demand,
                    },
                    self.config.share,
                );
                new_sum += st.new_demand;
                old_rest -= own_old_d;
                a_old_rest -= st.ar[pos];
                a_new += ar;
                changed |= moved(ar, st.ar[pos]);
                st.ar[pos] = ar;
                st.new_min_nr = st.new_min_nr.min(nr);
                while link.tasks[ti].task != m.0 {
                    ti += 1;
                }
                if self.config.task_size == TaskSize::Granted {
                    link.tasks[ti].grant += ar * rtt_s / 8.0;
                }
            }
            link.busy = true;
            still_busy.push(l);
            self.links[l as usize] = link;
        }
        self.busy = still_busy;
        // 4. Rates: the least AR of the path is what the flow offers.
        let caps = view.capacities();
        let y = &mut self.scratch_y;
        let y_last = &mut self.scratch_last;
        if y.len() < caps.len() {
            y.resize(caps.len(), 0.0);
            y_last.resize(caps.len(), 0.0);
        }
        let vc = self.config.vc_gain > 0.0;
        for &f in view.active_flows() {
            let st = &mut self.flows[f as usize];
            changed |= moved(st.new_min_nr, st.min_nr);
            st.setup = true;
            st.demand = st.new_demand;
            st.min_nr = st.new_min_nr;
            let rate = st.ar.iter().copied().fold(f64::INFINITY, f64::min);
            let rate = if rate.is_finite() { rate } else { 0.0 };
            let last = vc && sends_its_last(rate, view.remaining(f), rtt_s);
            for l in view.path(f) {
                y[l.0 as usize] += rate;
                if last {
                    y_last[l.0 as usize] += rate;
                }
            }
            out.set_rate(f, rate);
        }
        if vc {
            // Virtual capacity: a link whose offered load `y` exceeds `C`
            // (possible only when its virtual capacity is above `C`) passes
            // the flows that send their last bytes in full and scales the
            // rest to what is left ([`clip`]); a flow sends at the least of
            // its factors over its path times what it offers, so what
            // crosses every link stays within its real capacity.
            for &l in &self.busy {
                let link = &mut self.links[l as usize];
                let (c, yl) = (caps[l as usize], y[l as usize]);
                if !link.members.is_empty() {
                    let (gain, vc_max) = (self.config.vc_gain, self.config.vc_max);
                    let v = virtual_capacity(link.vcap, c, Some(yl), gain, vc_max);
                    changed |= moved(v, link.vcap);
                    link.vcap_round = k;
                    link.vcap_before = link.vcap;
                    link.vcap = v;
                }
                (y_last[l as usize], y[l as usize]) = clip(c, y_last[l as usize], yl);
            }
            for &f in view.active_flows() {
                let rate = out.rate(f);
                let factor = if sends_its_last(rate, view.remaining(f), rtt_s) {
                    &*y_last
                } else {
                    &*y
                };
                let s = view
                    .path(f)
                    .iter()
                    .map(|l| factor[l.0 as usize])
                    .fold(1.0, f64::min);
                if s < 1.0 {
                    out.set_rate(f, rate * s);
                }
            }
        }
        for &l in &self.busy {
            y[l as usize] = 0.0;
            y_last[l as usize] = 0.0;
        }
        if self.config.task_size == TaskSize::Sent {
            // A task's size at a link: what its flows send through it this
            // round (their final rates), never more than they have left.
            for &f in view.active_flows() {
                let bytes = (out.rate(f) * rtt_s / 8.0).min(view.remaining(f).max(0.0));
                let task = self.flows[f as usize].task;
                for l in view.path(f) {
                    let tasks = &mut self.links[l.0 as usize].tasks;
                    if let Ok(i) = tasks.binary_search_by_key(&task, |t| t.task) {
                        tasks[i].grant += bytes;
                    }
                }
            }
        }
        for &l in &self.busy {
            for t in &mut self.links[l as usize].tasks {
                t.reserved += t.grant;
            }
        }
        self.credited = k;
        changed
    }

    /// After a round that changed nothing: the round before the first one
    /// whose inputs may differ (a buffer falling below a demand, a task
    /// turning heavy on a link), or `None` if none will.
    fn next_change(&self, k: i64, view: &Clairvoyant<'_>, out: &Allocation) -> Option<i64> {
        let rtt = self.rtt() as f64;
        let mut first = f64::INFINITY; // rounds after k
        for &f in view.active_flows() {
            let st = &self.flows[f as usize];
            let rate = out.rate(f);
            if rate <= 0.0 {
                continue;
            }
            // buffered(k + j) * 8 / rtt < demand, with buffered falling by
            // rate * rtt / 8 per round.
            let buffered = view.remaining(f) * 8e9 / rtt;
            first = first.min(((buffered - st.demand) / rate).floor() + 1.0);
        }
        if self.config.threshold.is_finite() {
            let t = self.config.threshold;
            let thr = t - 1e-6 * t.max(1.0);
            for &l in &self.busy {
                for lt in &self.links[l as usize].tasks {
                    if lt.n_flows > 0 && !lt.heavy && lt.grant > 0.0 {
                        // Round k + j classifies with reserved + (j - 1) * grant.
                        first = first.min(((thr - lt.reserved) / lt.grant).ceil().max(0.0) + 1.0);
                    }
                }
            }
        }
        first
            .is_finite()
            .then(|| k + (first - 1.0).clamp(1.0, 1e15) as i64)
    }
}

impl Scheduler for Baraat {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "baraat"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if self.links.len() < view.n_links() {
            self.links.resize(view.n_links(), LinkState::default());
        }
        let rtt = self.rtt();
        self.tasks.assign(&view.observed(), &changes.arrived);
        let flows_changed = !changes.started.is_empty() || !changes.finished.is_empty();
        if flows_changed {
            // Rounds before now had the old flows: credit them, then nothing
            // until the next computed round (the next tick).
            self.credit_through(now.0.div_ceil(rtt) as i64 - 1);
            self.zero_grants();
            self.planned = Some(now.0.div_ceil(rtt) as i64);
        }
        for &f in &changes.finished {
            self.finish(now, &view, f);
        }
        for &c in &changes.finished_coflows {
            self.drop_coflow(c);
        }
        for &f in &changes.started {
            self.start(now, &view, f);
        }
        if view.active_flows().is_empty() {
            self.planned = None;
            return None;
        }
        if (now.0 / rtt) * rtt == now.0 {
            let k = (now.0 / rtt) as i64;
            let due = match self.planned {
                None => true,
                Some(p) => p <= k,
            };
            if due || changes.timer {
                let changed = self.round(k, &view, out);
                self.planned = if changed {
                    Some(k + 1)
                } else {
                    self.next_change(k, &view, out)
                };
            }
        } else if self.planned.is_none() {
            self.planned = Some(now.0.div_ceil(rtt) as i64);
        }
        self.planned.map(|p| Time(p as u64 * rtt))
    }
}

#[cfg(test)]
mod tests;
