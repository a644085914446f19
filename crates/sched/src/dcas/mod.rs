//! `dcas`: D-CAS, decentralized coflow-aware scheduling by sender-receiver
//! negotiation (Luo, Yu, Zhao, Wu, Wang, Li, "Minimizing Average Coflow
//! Completion Time with Decentralized Scheduling", ICC 2015).
//!
//! # The policy (paper III-IV)
//!
//! A *subcoflow* is the flows of one coflow that leave one source host
//! (III-A). Every subcoflow has a priority tuple `<T, P>`, lower is higher
//! (`T` first, then `P`), carried by all its flows. Every port serves
//! strictly by priority, pFabric-like and work-conserving: a flow of lower
//! priority uses what higher ones leave, and flows of equal priority share
//! max-min (III-B). The network part is thus strict priority between classes
//! with per-flow max-min inside a class, the allocation rule of `fifo` and
//! `fifo-lm`, with the same machinery: on the big switch the classes (runs
//! of subcoflows with equal priority, in priority order) are walked in
//! order by [`ClassServer`], leaving out flows that meet a full link (they
//! would get nothing and take nothing); on multi-hop fabrics, or with
//! `solver=incremental`, every flow is a demand of [`IncrementalMaxMin`] in
//! the class [`Priority::class`] of its subcoflow.
//!
//! On the big switch an event costs what it changes, in two steps. An event
//! that changes no priority and no flow (a receiver's announcement, the
//! feedback, most ticks) keeps every rate: the allocation reads nothing
//! else. And in the walk a class gets what it got at its last turn, without
//! a solve, when its subcoflows and their flows are the same and the links
//! it read show, bit for bit, the residual capacity they showed then (the
//! idea of `fifo`'s `ClassCache`): max-min inside the class reads nothing
//! else. A subcoflow blocked behind full links reads only the links that
//! showed it blocked (its uplink, most often), so a class of many waiting
//! subcoflows lists few links. The turn is remembered by the class's first subcoflow, not
//! its priority, so that a big coflow, whose subcoflows all negotiate the
//! same `<1, P>` (Ψ = Φ = max) with a `P` that moves every tick, keeps its
//! turn while the classes before it leave it the same capacity.
//!
//! A class that is solved costs one pass over its subcoflows' flows to
//! list its links and members (a subcoflow's one uplink open, the flows
//! whose downlink is open; each subcoflow keeps its flows' downlinks in a
//! row beside them) and one `PairSolver` solve: every path on the
//! big switch is two links, so the solve does [`ClassServer::serve_flows`]'s
//! progressive filling step for step on the same values (rates and
//! residuals to the bit, which debug builds check against
//! [`coflowkit_alloc::MaxMin`]) with no path lists, and keeps each link's
//! level between steps, computing it again only when its residual or
//! weight moved, so a step reads levels without dividing; the picked
//! link's residual, which each of its demands takes from in turn, is held
//! in a register through the step (the same subtractions in the same
//! order), and its weight, not read again, is only zeroed. Each member's
//! rate, as the allocation holds it after it is set, is written in a row
//! beside the solve, and the service recount reads that row (debug builds
//! compare it with the allocation), so a member's entries in the
//! allocation are visited once per solve. Most solves on
//! FB2010 come of residuals that moved under a class whose subcoflows did
//! not change: its lists stay from its last turn when every link they
//! hold is full or open as it was then (the members would come out the
//! same; debug builds list anew and compare), so such a solve reads no
//! flow but its members. When its subcoflows did change (a flow of one
//! finished, most often) and every listed link is full or open as then,
//! each subcoflow of the last turn with the same flows takes its run of
//! members from the kept lists and only the others read their flows (the
//! lists come out as a listing makes them, in its order: debug builds
//! list anew and compare). The listing writes each member's two links in a
//! row beside it, and the solve's demands (each demand's links and count,
//! each link's demands and weight, the links in index order) are made from
//! that row once and kept with the lists: a solve on kept lists only sets
//! levels from the residuals and fills (debug builds make the demands anew
//! and compare). When no two members share a path (each open
//! subcoflow's flows go to distinct downlinks and no two share an uplink:
//! one flow per path, as FB2010's coflows are) each member is its own
//! demand, found without looking its path up.
//!
//! The protocol costs one pass over each negotiating subcoflow's flows per
//! tick, and, most ticks, not one step per message: bytes left are summed
//! again only after a flow of the subcoflow had a rate; an announcement is
//! one queued entry for all its receivers (their list shared with the
//! subcoflow). With no loss a coflow's batch of announcements (at one
//! instant, by sender) is kept as its [`Board`]; when the next batch has
//! the same senders with the same receiver lists (94% of FB2010's messages
//! on its first 200 coflows: the same senders announce every tick, and a
//! list is made anew only after a join or leave), a receiver whose cache
//! held exactly that batch's entries (a *follower*) would update it wholly
//! in place, so its cache stays the board's values and its reply is Ψ of
//! them, once per group of followers with the same senders; a sender's
//! feedback with Φ = max is the largest reply of the groups it reached.
//! The other coflows' copies are laid out by receiver, each a (coflow,
//! sender, value) in a row, and receivers update their caches per
//! (receiver, coflow) in place while the same senders announce, merging
//! only the rest, and reply through a table of Ψ per (coflow, receiver),
//! which each sender reads in its receivers' order; a board goes (its
//! followers' caches written back) when its coflow's batch differs, and the
//! batch makes the next. Debug builds read every held board's batch afresh
//! by the copying path (each receiver's full cache: reply and cache after)
//! and compare. With Ψ = max a cache updated wholly in place replies the
//! largest value it was set to (no second pass), and with Φ = max (and no
//! decision log) a round's feedback is kept as its largest value alone.
//!
//! Priorities are set by the hosts, with no controller (IV):
//!
//! * **Sender, Pseudocode 1.** Every `delta` (δ, default 100 ms) each
//!   sender runs, for each of its subcoflows `S` of coflow `c`, with `rem`
//!   the bytes `S` has left at this sender and `d` its desired priority:
//!   1. `rem < threshold` (default 1 MiB): `<0, cp>`, `cp` the coflow's
//!      arrival order (FIFO, like Baraat's task id);
//!   2. else, if `S` got no service during the last `T` (default 1 s):
//!      `<1, 0>` (starvation freedom: every starving subcoflow shares at
//!      the top of the large class);
//!   3. else: announce `d` to the receivers of `S` (the destinations of its
//!      flows), wait for the negotiation (two message delays: there and
//!      back) and set `<1, Φ(M)>` with `M` the feedback values received for
//!      this announcement, or `<1, d>` when none came (all lost).
//! * **Receiver, Pseudocode 2.** A receiver caches the latest desired
//!   priority per (coflow, sender); on an announcement it updates the entry,
//!   drops entries older than `expiry` (default 2 s) and replies
//!   `Ψ(cached values of that coflow)` to the announcer.
//! * `Ψ = Φ = max` by default (IV, "Design of Ψ and Φ"); `min` and `mean`
//!   can be chosen. The desired priority is `rem / NIC rate` (IV, "About
//!   getDesiredPriority"), the time `S` would take alone on its sender's
//!   uplink, in whole `quantum`s (default 1 µs; rounded to the nearest), or
//!   a constant: `desired=1` with `threshold=0` is per-flow fair sharing, as
//!   the paper notes (every subcoflow is `<1, 1>`).
//! * Control messages arrive `msg_delay` (default 100 µs) after they are
//!   sent and are lost with probability `loss` (default 0). A message's
//!   fate is a seeded hash (splitmix64, [`coflowkit_model::fabric::mix`]) of
//!   the seed, the message kind, the coflow id, sender, receiver and the
//!   sender's announcement number for that subcoflow: the same in every
//!   run, and independent of the order events are handled in.
//!
//! # What a host knows
//!
//! D-CAS reads the bytes a subcoflow has left at its sender
//! (`getLocalRemSize`), so the scheduler is clairvoyant: its `Knows` is
//! [`KnowsSizes`]. It is clairvoyant only about a sender's *own* flows, as a
//! host is about the data its application hands it, so the state lives per
//! host as in the real system: a sender reads sizes through [`Local`], a
//! view bound to its host (it refuses another host's flows), and keeps only
//! its own subcoflows and the feedback it received; a receiver keeps only
//! its cache and learns only what announcements tell it. Two things are
//! global on purpose: the coflow's arrival order `cp` (Baraat's task id,
//! handed out in arrival order by the framework) and the tick grid (every
//! host ticks at the multiples of δ).
//!
//! # Timing (integer nanoseconds, the driver's timer)
//!
//! The protocol runs on timed events inside the scheduler, the earliest of
//! which is the timer the scheduler asks the driver for. Every message takes
//! the same delay and every negotiation the same time, so each kind of
//! event comes due in the order it was made: one FIFO queue per kind
//! (announcements, one entry per run of Pseudocode 1 for all its receivers,
//! and decisions) and the next tick, merged by (instant, phase). Feedback
//! needs no queue: a reply arrives at the instant its negotiation ends,
//! before the decision, so it goes into its round's feedback when the
//! receiver replies (a later run of Pseudocode 1 drops it, as it would drop
//! a reply still in flight). At one instant, in this order:
//! 1. flows that finished leave their subcoflows (a subcoflow with no flow
//!    left is forgotten by its sender; receivers keep its entries until they
//!    expire); flows that started join theirs, and a subcoflow that appears
//!    (its first flow at this host starts) runs Pseudocode 1 at once
//!    (before that it has no priority; an announcement at once gets it the
//!    interim priority `<1, d>` until its negotiation ends);
//! 2. protocol events due now, phase by phase: announcements reach
//!    receivers; receivers reply (after every announcement due now at that
//!    instant has updated the caches, so simultaneous announcements see each
//!    other, as in the paper's Fig. 2: one Ψ per receiver and coflow);
//!    feedback reaches senders (in the order receivers replied); senders
//!    whose negotiation ends now decide; the periodic tick runs Pseudocode 1
//!    for every subcoflow of every host (one that already ran at this
//!    instant does not run twice);
//! 3. rates are solved; a subcoflow is *served* while any of its flows has a
//!    rate above `EPS` × its sender's uplink capacity. "No service during
//!    the last T" is read by its sender's tick clock, as the host policy
//!    ([`crate::dcas::host`]) reads it from its acknowledged bytes: a run of
//!    Pseudocode 1 finds the subcoflow served if it had service at any time
//!    since its previous run (the previous tick, or its appearance), and
//!    it has then waited 0; else it has waited since the last run that
//!    found it served, or since its appearance, and it is starving when
//!    that is more than `T`. So a subcoflow served until just past a tick
//!    and not after waits from the next tick, not from the instant its
//!    service stopped (`Subcoflow::waited`). Service that ended no more
//!    than [`SNAP_NS`] after it began does not count: it is below the
//!    engine's resolution, most often one instant of exact arithmetic split
//!    in two (a start reached through rounded completions a nanosecond
//!    after an arrival), where a flow's rate for that nanosecond must not
//!    spare another subcoflow the starvation rule.
//!
//! Each run of Pseudocode 1 starts a new round: a negotiation still open
//! from an earlier round is dropped. `2 · msg_delay < delta` is required, so
//! a negotiation started at a tick ends before the next tick.
//!
//! Ties and tolerances: bytes left within [`BYTES_TIE`] of the threshold
//! count as not below it (the engine's integer-nanosecond rounding moves
//! bytes sent by fractions of a byte). Desired priorities are whole quanta,
//! so subcoflows whose remaining times round to the same quantum share
//! max-min.
//!
//! Messages name the sender's subcoflow by its slot and instance (a handle
//! the receiver echoes back, like a cookie), so a reply to a subcoflow
//! that is gone, or to an earlier round, is dropped in O(1).
//!
//! Correctness properties: every active flow's class is its subcoflow's
//! current priority (`Dcas::set_priority`, and new flows take it when they
//! join, after their subcoflow ran); a subcoflow's `n_served` counts its
//! flows with a rate above the floor (`solve_incremental` from the solver's
//! changed demands and at finishes; `solve_class` recounts a class's
//! subcoflows when it serves the class, and a class that keeps its turn
//! keeps its rates, hence their service); a class keeps its turn only when
//! its subcoflows, their change stamps (`changed_at`, moved by every join
//! and leave) and the residuals of the links it read are those of the turn
//! (`serve_classes`; `list_class` lists every link a member's path or a
//! blocked test reads); a class solved on the lists of its last turn has
//! the members a listing would give (`serve_class`: the same subcoflows
//! and every listed link full or open as then; checked against a listing
//! in debug builds); a class whose subcoflows changed, spliced from its
//! last turn's runs, has a listing's lists (`list_class` with the old
//! lists, checked against a listing in debug builds); a solve on kept
//! lists uses the demands a making would give (`PairSolver::serve`, against `PairSolver::make_setup` in
//! debug builds); a solved class's rates and residuals are
//! [`ClassServer::serve_flows`]'s to the bit (`PairSolver::serve`, checked
//! against [`coflowkit_alloc::MaxMin`] in debug builds, also where each
//! member is taken as its own demand, which checks that no path repeats;
//! the members' classes are their subcoflows' already, checked there too);
//! a solved class's service is counted from its members' rates as the
//! allocation holds them (`solve_class` reads them in a row from the solve,
//! checked against `Allocation::rate` in debug builds);
//! every flow with
//! a rate is a member of one current turn (members of a turn served again or gone are zeroed unless a class
//! gave them a rate in this round, `dropped`); a decision or feedback
//! applies only to the round that announced (`instance` and `round` checks
//! in `Dcas::live`, at decisions and when a receiver replies); a
//! subcoflow's cached bytes left are its flows' sum whenever none of them
//! had a rate since (`rem`, dropped at joins and leaves; `moved`, set
//! from the rates its class gives in `solve_class`). The
//! slow reference in `crates/sim/tests/reference/dcas.rs` implements the same
//! rules plainly and the engine is checked against it on random instances
//! (`crates/sim/tests/dcas.rs` checks each rule on cases computed by hand).

mod config;
pub mod host;
mod pair;
mod protocol;
mod rule;
mod serve;

pub use config::*;
use pair::*;
pub use protocol::MessageKind;
use protocol::*;
pub use rule::*;

use crate::class_server::ClassServer;
use crate::descriptor::{Kind, Needs, Param, Params, Parts, SchedulerDescriptor, SOLVER_PARAM};
use crate::spec::SchedulerError;
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_alloc::{IncrementalMaxMin, EPS};
use coflowkit_model::fabric::mix;
use coflowkit_model::parse;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::{CoflowId, Dur, HostId, Time, SNAP_NS};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};

/// `dcas`: senders negotiate subcoflow priorities with receivers.
pub const DCAS: SchedulerDescriptor = SchedulerDescriptor {
    cost: 77.0,
    parts: Parts {
        host: Some(crate::dcas::host::build),
        ..Parts::NONE
    },
    name: "dcas",
    description: "decentralized: senders negotiate subcoflow priorities with receivers (D-CAS)",
    paper: "Luo et al., ICC 2015, III-IV (Pseudocode 1 and 2), V-A for the defaults",
    params: &[
        dur_param("delta", "100ms", "how often senders run Pseudocode 1"),
        Param {
            key: "threshold",
            kind: Kind::Bytes,
            default: "1MiB",
            unit: "",
            help: "thresholdVolume: subcoflows with fewer bytes left are FIFO (0: none; inf: all)",
        },
        dur_param("t", "1s", "T: a subcoflow unserved for longer gets <1, 0>"),
        dur_param(
            "expiry",
            "2s",
            "how long a receiver keeps a desired priority",
        ),
        dur_param(
            "msg_delay",
            "100us",
            "one-way delay of a control message; 2 x msg_delay < delta",
        ),
        Param {
            key: "loss",
            kind: Kind::Number,
            default: "0",
            unit: "",
            help: "probability that a control message is lost",
        },
        Param {
            key: "seed",
            kind: Kind::Count,
            default: "0",
            unit: "",
            help: "seed of the loss draws",
        },
        Param {
            key: "psi",
            kind: Kind::Choice(COMBINE),
            default: "max",
            unit: "",
            help: "Psi, how receivers combine desired priorities",
        },
        Param {
            key: "phi",
            kind: Kind::Choice(COMBINE),
            default: "max",
            unit: "",
            help: "Phi, how senders combine granted priorities",
        },
        Param {
            key: "desired",
            kind: Kind::List,
            default: "bytes",
            unit: "",
            help: "bytes: bytes left / NIC rate; N: that constant; bands:B1/B2/..: bands reached",
        },
        dur_param(
            "quantum",
            "1us",
            "unit of desired priorities (rounded to the nearest)",
        ),
        SOLVER_PARAM,
        crate::host::AGE_PARAM,
        crate::dcas::host::HOST_PARAMS[0],
        crate::dcas::host::HOST_PARAMS[1],
        crate::dcas::host::HOST_PARAMS[2],
    ],
    needs: Needs::SIZES,
    build: |p, _| {
        let mut config = DcasConfig::default();
        config.apply(p)?;
        config
            .validate()
            .map_err(|(key, message)| p.bad(key, message))?;
        Ok(AnyScheduler::Clairvoyant(Box::new(Dcas::new(config))))
    },
};

/// Control-plane counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DcasStats {
    /// Announcements sent.
    pub announcements: u64,
    /// Feedback messages sent.
    pub feedbacks: u64,
    /// Messages lost (of both kinds).
    pub lost: u64,
    /// Negotiations that fell back to the desired priority.
    pub fallbacks: u64,
}

/// D-CAS; see the module doc.
#[derive(Debug)]
pub struct Dcas {
    config: DcasConfig,
    log: Option<DecisionLog>,
    hosts: Vec<Host>,
    subs: Vec<Subcoflow>,
    free_subs: Vec<u32>,
    sub_of: FxHashMap<(CoflowIdx, HostId), u32>,
    n_subs: usize,
    n_instances: u32,
    // Per flow: its subcoflow, whether it is served (incremental mode), and
    // its path's first and last links (big switch).
    flow_sub: Vec<u32>,
    flow_served: Vec<bool>,
    flow_ends: Vec<(u32, u32)>,
    // Per coflow: its arrival order, whether complete, receivers caching it.
    rank: Vec<u64>,
    n_ranked: u64,
    complete: Vec<bool>,
    cached_at: FxHashMap<CoflowIdx, Vec<HostId>>,
    // Per coflow, its last batch of announcements while its receivers
    // read them the same (no loss): see [`Board`].
    boards: FxHashMap<CoflowIdx, Board>,
    // The protocol's events. Every message takes the same delay and every
    // negotiation the same time, so each kind arrives in the order it was
    // sent: one FIFO queue per kind, merged by (instant, phase) with the
    // phases announcement < decision < tick (feedback, due with its
    // decision, is delivered when the receiver replies: `receive`).
    announcements: VecDeque<Announcement>,
    decisions: VecDeque<ForRound>,
    next_tick: Option<Time>,
    // The allocation: on the big switch the classes are walked in order at
    // every event that changes a priority or a flow (`ClassServer`, as
    // `fifo` does; unchanged classes reuse their turn), elsewhere (or with
    // `solver=incremental`) every flow is a demand of `IncrementalMaxMin`
    // in its subcoflow's class.
    always_incremental: bool,
    inc: Option<IncrementalMaxMin>,
    server: ClassServer,
    // Class solves on the big switch while every flow's path is two links
    // (`all_pairs`; else `server` solves).
    pairs: PairSolver,
    all_pairs: bool,
    // The subcoflows by class, as (class, slot, the one first link of all
    // its flows or NO_LINK), re-sorted only when a priority changed or a
    // flow joined (`order_stale`), filtered when subcoflows were forgotten.
    order: Vec<(u64, u32, u32)>,
    order_stale: bool,
    order_gone: bool,
    // Per class, by its first subcoflow's slot: its last turn (big switch);
    // the round; per flow, the last
    // round a class gave it a rate; flows a class gave a rate before it
    // was served again (zeroed unless given one in this round).
    turns: FxHashMap<u32, ClassTurn>,
    round: u64,
    flow_round: Vec<u64>,
    dropped: Vec<FlowIdx>,
    // The rates of the members of the class just solved, in their order.
    got: Vec<f64>,
    // Per link, the last class serve that listed it in its turn's links,
    // and the last that found it the open uplink of a subcoflow (serves
    // numbered by `n_serves`).
    link_listed: Vec<u64>,
    link_opened: Vec<u64>,
    n_serves: u64,
    // A class's lists as they are spliced (the turn's lists become this
    // after: swapped, not allocated per solve).
    relist: ClassLists,
    n_changes: u64,
    stats: DcasStats,
    // Scratch.
    released: Vec<CoflowIdx>,
    new_subs: Vec<u32>,
    new_flows: Vec<FlowIdx>,
    changed: Vec<u32>,
    batch: Vec<Announcement>,
    batch_order: Vec<u32>,
    batch_msgs: Vec<Received>,
    batch_coflows: Vec<CoflowIdx>,
    batch_starts: Vec<u32>,
    batch_merged: Vec<CacheEntry>,
    batch_coflow_no: Vec<(u32, u32)>,
    batch_replies: Vec<Option<u64>>,
    batch_runs: Vec<u32>,
    batch_held: Vec<bool>,
    batch_group: Vec<Received>,
    host_lists: Vec<Vec<u32>>,
}

/// The loss draw of a message, uniform in [0, 1) (lost when below `loss`):
/// splitmix64 chained over the seed, the kind, the coflow id, `(sender <<
/// 32) | receiver` and the sender's round for that subcoflow (1 for its
/// first run of Pseudocode 1, then one more per run). A feedback message's
/// sender is the receiver that replies, and its round the announcement's.
pub fn loss_draw(
    seed: u64,
    kind: MessageKind,
    coflow: CoflowId,
    from: HostId,
    to: HostId,
    round: u32,
) -> f64 {
    let mut h = mix(seed);
    h = mix(h ^ kind as u64);
    h = mix(h ^ coflow.0);
    h = mix(h ^ ((u64::from(from.0) << 32) | u64::from(to.0)));
    h = mix(h ^ u64::from(round));
    (h >> 11) as f64 / (1u64 << 53) as f64
}

impl Scheduler for Dcas {
    type Knows = KnowsSizes;

    fn name(&self) -> &str {
        "dcas"
    }

    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if self.hosts.is_empty() {
            let fabric = view.fabric();
            if self.always_incremental || !fabric.is_big_switch() {
                self.inc = Some(IncrementalMaxMin::new(view.capacities().to_vec()));
            }
            self.hosts = (0..fabric.n_hosts())
                .map(|h| Host {
                    nic_bps: view.capacity(fabric.uplink(HostId(h))).0,
                    ..Host::default()
                })
                .collect();
            self.host_lists = vec![vec![]; self.hosts.len()];
        }
        let n = view.n_flows();
        if self.flow_sub.len() < n {
            self.flow_sub.resize(n, NO_SUB);
            self.flow_served.resize(n, false);
            self.flow_ends.resize(n, (0, 0));
            self.flow_round.resize(n, 0);
        }
        // Arrival order: released now, after every earlier one, among
        // themselves by (arrival, id).
        self.released.clear();
        self.released.extend_from_slice(&changes.arrived);
        self.released
            .sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        for i in 0..self.released.len() {
            let c = self.released[i] as usize;
            if self.rank.len() <= c {
                self.rank.resize(c + 1, 0);
                self.complete.resize(c + 1, false);
            }
            self.rank[c] = self.n_ranked;
            self.n_ranked += 1;
        }
        // 1. Finished flows leave, started ones join; new subcoflows run
        // Pseudocode 1 at once; then the new flows enter the solver in
        // their subcoflow's class.
        for &f in &changes.finished {
            if let Some(inc) = &mut self.inc {
                inc.set_count(f, 0);
            }
            self.leave(f, now);
        }
        self.new_subs.clear();
        self.new_flows.clear();
        for &f in &changes.started {
            self.join(f, now, &view);
            self.new_flows.push(f);
        }
        for i in 0..self.new_subs.len() {
            let s = self.new_subs[i];
            self.run_sender(s, now, &view, out);
        }
        for i in 0..self.new_flows.len() {
            let f = self.new_flows[i];
            let p = self.subs[self.flow_sub[f as usize] as usize]
                .priority
                .expect("a subcoflow has a priority once it ran");
            if let Some(inc) = &mut self.inc {
                inc.declare_in(f, view.path(f).iter().copied(), 1.0, p.class());
                inc.set_count(f, 1);
            }
            out.set_class(f, p.queue_class());
        }
        for &c in &changes.finished_coflows {
            self.complete[c as usize] = true;
            for r in self.cached_at.remove(&c).unwrap_or_default() {
                self.hosts[r.0 as usize].cache.remove(&c);
            }
            self.boards.remove(&c);
        }
        if self.n_subs > 0 && self.next_tick.is_none() {
            let d = self.config.delta.0;
            self.next_tick = Some(Time((now.0 / d + 1) * d));
        }
        // 2. Protocol events due now.
        self.run_protocol(now, &view, out);
        // 3. Rates, and who is served.
        if self.inc.is_some() {
            self.solve_incremental(now, &view, out);
        } else if self.order_stale
            || self.order_gone
            || !changes.started.is_empty()
            || !changes.finished.is_empty()
        {
            self.serve_classes(now, &view, out);
        }
        self.next_event()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_order_as_tuples_and_classes_keep_the_order() {
        let ps = [
            Priority::fifo(0),
            Priority::fifo(7),
            Priority::STARVING,
            Priority::large(1),
            Priority::large(1 << 40),
        ];
        for w in ps.windows(2) {
            assert!(w[0] < w[1]);
            assert!(w[0].class() < w[1].class());
            assert!(w[0].queue_class() <= w[1].queue_class());
        }
        assert_eq!(Priority::large(4).to_string(), "<1, 4>");
    }

    #[test]
    fn combinations() {
        assert_eq!(Combine::Max.apply([4, 2, 1]), Some(4));
        assert_eq!(Combine::Min.apply([4, 2, 1]), Some(1));
        assert_eq!(Combine::Mean.apply([4, 2, 1]), Some(2));
        assert_eq!(Combine::Mean.apply([1, 2]), Some(2));
        assert_eq!(Combine::Max.apply([]), None);
    }

    #[test]
    fn config_keys_parse_and_validate() {
        let mut c = DcasConfig::default();
        c.set("delta", "10ms").unwrap();
        c.set("threshold", "1MB").unwrap();
        c.set("t", "1s").unwrap();
        c.set("desired", "1").unwrap();
        c.set("psi", "min").unwrap();
        assert_eq!(c.delta, Dur::from_millis(10));
        assert_eq!(c.threshold, 1e6);
        assert_eq!(c.desired, Desired::Constant(1));
        assert!(c.set("psi", "median").unwrap_err().contains("'median'"));
        assert!(c.set("delta", "10").unwrap_err().contains("unit"));
        assert!(c.set("desired", "x").unwrap_err().contains("'x'"));
        c.set("msg_delay", "5ms").unwrap();
        assert_eq!(c.validate().unwrap_err().0, "msg_delay");
        c.set("msg_delay", "1ms").unwrap();
        c.set("loss", "1.5").unwrap();
        assert_eq!(c.validate().unwrap_err().0, "loss");
        // Remaining time in quanta: 125,000 bytes at 1 Gbit/s is 1 ms.
        let d = DcasConfig::default();
        assert_eq!(d.desired_of(125_000.0, 1e9), 1000);
        // Bands: how many bounds the bytes left reach, whatever the NIC.
        let mut b = DcasConfig::default();
        b.set("desired", "bands:10KB/1MB/5MB").unwrap();
        assert_eq!(
            b.desired,
            Desired::Bands(vec![10_000, 1_000_000, 5_000_000])
        );
        let got: Vec<u64> = [9_000.0, 10_000.0, 999_000.0, 1e6, 5e6, 1e9]
            .iter()
            .map(|&r| b.desired_of(r, 1e9))
            .collect();
        assert_eq!(got, [0, 1, 1, 2, 3, 3]);
        for bad in ["bands:", "bands:5MB/1MB", "bands:1MB/1MB", "bands:x"] {
            assert!(
                b.set("desired", bad).unwrap_err().contains("bands"),
                "{bad}"
            );
        }
    }

    #[test]
    fn loss_draws_are_uniform_enough_and_fixed() {
        let n = 20_000;
        let lost = (0..n)
            .filter(|&i| {
                loss_draw(
                    7,
                    MessageKind::Announce,
                    CoflowId(i),
                    HostId(1),
                    HostId(2),
                    3,
                ) < 0.25
            })
            .count();
        assert!((lost as f64 / n as f64 - 0.25).abs() < 0.02, "{lost}");
        assert_eq!(
            loss_draw(
                7,
                MessageKind::Announce,
                CoflowId(1),
                HostId(1),
                HostId(2),
                3
            ),
            loss_draw(
                7,
                MessageKind::Announce,
                CoflowId(1),
                HostId(1),
                HostId(2),
                3
            )
        );
    }
}
