//! The negotiation (paper IV, Pseudocode 1-2): senders announce, the
//! receivers' board gathers announcements and answers, messages are
//! delayed or lost by the configured model, and each sender decides its
//! subcoflows' priorities at its ticks.

use super::*;

/// A receiver's cached desired priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CacheEntry {
    pub(super) sender: HostId,
    pub(super) value: u64,
    pub(super) at: Time,
}

/// Per host: its sender's subcoflows, its receiver's cache (per coflow,
/// entries sorted by sender).
#[derive(Debug, Default)]
pub(super) struct Host {
    pub(super) subcoflows: Vec<u32>,
    pub(super) cache: FxHashMap<CoflowIdx, Vec<CacheEntry>>,
    pub(super) nic_bps: f64,
}

/// One run of Pseudocode 1's announcement in flight: the same message to
/// every receiver in `to` (those whose copy is not lost; shared with the
/// subcoflow's receiver list when none is). `sub` and `instance` name the
/// sender's subcoflow (a handle the receiver echoes back, as a cookie).
#[derive(Debug, Clone)]
pub(super) struct Announcement {
    pub(super) at: Time,
    pub(super) to: Arc<[HostId]>,
    pub(super) from: HostId,
    pub(super) coflow: CoflowIdx,
    pub(super) sub: u32,
    pub(super) instance: u32,
    pub(super) round: u32,
    pub(super) value: u64,
}

/// One receiver's copy of an announcement, as [`Dcas::receive`] groups
/// them: the batch's number of its coflow, its sender and value.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Received {
    pub(super) no: u32,
    pub(super) from: HostId,
    pub(super) value: u64,
}

/// A coflow's last batch of announcements as its receivers read it, kept
/// while the same senders announce to the same receivers (the same lists,
/// shared with the subcoflows: a join or leave makes a new one), as they
/// do tick after tick. A receiver whose cache held exactly what the batch
/// told it (one entry per sender that announced to it, all set then) is a
/// *follower*: its cache is the board's values of its senders, not kept
/// in the host's cache until the board goes (`into_caches`), so a batch
/// that matches costs one Ψ per group of followers with the same senders
/// instead of a copy per receiver. Other receivers (a stale entry left by
/// a sender that no longer reaches them, most often) keep their caches
/// and read their groups as without a board.
#[derive(Debug, Default)]
pub(super) struct Board {
    // The last batch, by sender: sender, its receivers, its value; when.
    pub(super) from: Vec<HostId>,
    pub(super) to: Vec<Arc<[HostId]>>,
    pub(super) values: Vec<u64>,
    pub(super) at: Time,
    // Groups: the senders (indices into `from`, in order) of group `g` are
    // `senders[starts[g]..starts[g + 1]]`; `own[g]` is the receiver of a
    // group that keeps its cache (NO_HOST for a group of followers);
    // `reply[g]` its last Ψ.
    pub(super) starts: Vec<u32>,
    pub(super) senders: Vec<u32>,
    pub(super) own: Vec<u32>,
    pub(super) reply: Vec<Option<u64>>,
    // The followers with their groups; each receiver's group by host id
    // (NO_GROUP: not a receiver); each announcement's groups, once each
    // (of announcement `i`: `touched[touch_starts[i]..touch_starts[i + 1]]`).
    pub(super) followers: Vec<(HostId, u32)>,
    pub(super) group_of: Vec<u32>,
    pub(super) touch_starts: Vec<u32>,
    pub(super) touched: Vec<u32>,
}

pub(super) const NO_HOST: u32 = u32::MAX;
pub(super) const NO_GROUP: u32 = u32::MAX;

impl Board {
    /// Whether announcements `run` (of one coflow, by sender) are the
    /// board's senders with the same receiver lists.
    pub(super) fn matches(&self, batch: &[Announcement], run: &[u32]) -> bool {
        run.len() == self.from.len()
            && run
                .iter()
                .zip(self.from.iter().zip(&self.to))
                .all(|(&a, (&f, to))| {
                    let m = &batch[a as usize];
                    m.from == f && Arc::ptr_eq(&m.to, to)
                })
    }

    /// The senders of group `g`.
    pub(super) fn group(&self, g: u32) -> &[u32] {
        &self.senders[self.starts[g as usize] as usize..self.starts[g as usize + 1] as usize]
    }

    /// Receiver `r`'s last reply.
    pub(super) fn reply_to(&self, r: HostId) -> Option<u64> {
        self.reply[self.group_of[r.0 as usize] as usize]
    }

    /// Group `g`'s cache as the board holds it: one entry per sender.
    pub(super) fn cache_of(&self, g: u32) -> impl Iterator<Item = CacheEntry> + '_ {
        self.group(g).iter().map(|&i| CacheEntry {
            sender: self.from[i as usize],
            value: self.values[i as usize],
            at: self.at,
        })
    }

    /// Group `g`'s messages at a batch that matches: its senders' values.
    pub(super) fn messages_of(&self, g: u32) -> impl Iterator<Item = Received> + '_ {
        self.group(g).iter().map(|&i| Received {
            no: 0,
            from: self.from[i as usize],
            value: self.values[i as usize],
        })
    }

    /// The followers' caches written back to their hosts (the board goes).
    pub(super) fn into_caches(self, c: CoflowIdx, hosts: &mut [Host]) {
        for &(r, g) in &self.followers {
            let cache = hosts[r.0 as usize].cache.entry(c).or_default();
            cache.clear();
            cache.extend(self.cache_of(g));
        }
    }

    /// The board of coflow `c`'s announcements `run` (by sender), read now
    /// by the receivers' caches in `hosts`; `lists` is scratch (a list per
    /// host, left empty).
    pub(super) fn new(
        c: CoflowIdx,
        batch: &[Announcement],
        run: &[u32],
        now: Time,
        hosts: &[Host],
        lists: &mut [Vec<u32>],
    ) -> Board {
        let mut b = Board {
            at: now,
            starts: vec![0],
            group_of: vec![NO_GROUP; hosts.len()],
            ..Board::default()
        };
        let mut receivers = vec![];
        for (i, &a) in run.iter().enumerate() {
            let m = &batch[a as usize];
            b.from.push(m.from);
            b.to.push(m.to.clone());
            b.values.push(m.value);
            for r in m.to.iter() {
                let list = &mut lists[r.0 as usize];
                if list.is_empty() {
                    receivers.push(*r);
                }
                list.push(i as u32);
            }
        }
        let mut groups: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
        for r in receivers {
            let list = std::mem::take(&mut lists[r.0 as usize]);
            let cache = hosts[r.0 as usize].cache.get(&c);
            let follows = cache.is_some_and(|e| e.len() == list.len());
            let n = b.own.len() as u32;
            let g = if follows {
                *groups.entry(list.clone()).or_insert(n)
            } else {
                n
            };
            if g == n {
                b.senders.extend_from_slice(&list);
                b.starts.push(b.senders.len() as u32);
                b.own.push(if follows { NO_HOST } else { r.0 });
                b.reply.push(None);
            }
            if follows {
                b.followers.push((r, g));
            }
            b.group_of[r.0 as usize] = g;
            lists[r.0 as usize] = list;
            lists[r.0 as usize].clear();
        }
        let mut seen = vec![u32::MAX; b.own.len()];
        b.touch_starts.push(0);
        for (i, to) in b.to.iter().enumerate() {
            for r in to.iter() {
                let g = b.group_of[r.0 as usize];
                if seen[g as usize] != i as u32 {
                    seen[g as usize] = i as u32;
                    b.touched.push(g);
                }
            }
            b.touch_starts.push(b.touched.len() as u32);
        }
        b
    }
}

/// Pseudocode 2 at one receiver for one coflow: the announcements due now
/// (`group`, by sender) update `cache` (live entries, one per sender, by
/// sender): expired entries go, announced ones are set or added: in place
/// while the group's senders are the cache's (the same senders announce
/// every tick), then by one merge of the rest (entries set in place are
/// what the merge would make). Returns the reply, `psi` of the cache's
/// values (with Ψ = max and every entry set in place, the largest value
/// set). `merged` is scratch.
pub(super) fn read_group(
    cache: &mut Vec<CacheEntry>,
    group: &[Received],
    now: Time,
    expiry: Dur,
    psi: Combine,
    merged: &mut Vec<CacheEntry>,
) -> Option<u64> {
    let mut k = 0;
    let mut top = 0;
    for (m, e) in group.iter().zip(cache.iter_mut()) {
        if m.from != e.sender {
            break;
        }
        (e.value, e.at) = (m.value, now);
        top = top.max(m.value);
        k += 1;
    }
    let in_place = k == group.len() && k == cache.len();
    if !in_place {
        merged.clear();
        merged.extend_from_slice(&cache[..k]);
        let live = |e: &&CacheEntry| e.at + expiry > now;
        for m in &group[k..] {
            let passed = cache[k..].iter().take_while(|e| e.sender < m.from).count();
            merged.extend(cache[k..k + passed].iter().filter(live));
            k += passed;
            k += usize::from(cache.get(k).is_some_and(|e| e.sender == m.from));
            merged.push(CacheEntry {
                sender: m.from,
                value: m.value,
                at: now,
            });
        }
        merged.extend(cache[k..].iter().filter(live));
        std::mem::swap(cache, merged);
    }
    debug_assert!(
        cache.windows(2).all(|w| w[0].sender < w[1].sender)
            && cache.iter().all(|e| e.at + expiry > now),
        "a receiver's cache: live entries, one per sender, in order"
    );
    if in_place && psi == Combine::Max {
        debug_assert_eq!(Some(top), Combine::Max.apply(cache.iter().map(|e| e.value)));
        Some(top)
    } else {
        psi.apply(cache.iter().map(|e| e.value))
    }
}

/// Debug builds: what each receiver of a held board would read of
/// announcements `run` with its cache kept in full (the copying path):
/// each receiver's reply and cache after.
#[cfg(debug_assertions)]
#[allow(clippy::too_many_arguments)]
pub(super) fn board_read_afresh(
    b: &Board,
    c: CoflowIdx,
    batch: &[Announcement],
    run: &[u32],
    now: Time,
    expiry: Dur,
    psi: Combine,
    hosts: &[Host],
) -> Vec<(HostId, Option<u64>, Vec<CacheEntry>)> {
    let mut out = vec![];
    let mut merged = vec![];
    for (r, &g) in b.group_of.iter().enumerate() {
        if g == NO_GROUP {
            continue;
        }
        let r = HostId(r as u32);
        let mut cache: Vec<CacheEntry> = if b.own[g as usize] == NO_HOST {
            b.cache_of(g).collect()
        } else {
            hosts[r.0 as usize].cache[&c].clone()
        };
        let group: Vec<Received> = run
            .iter()
            .map(|&a| &batch[a as usize])
            .filter(|m| m.to.contains(&r))
            .map(|m| Received {
                no: 0,
                from: m.from,
                value: m.value,
            })
            .collect();
        let reply = read_group(&mut cache, &group, now, expiry, psi, &mut merged);
        out.push((r, reply, cache));
    }
    out
}

/// The end of a negotiation: one round of one subcoflow.
#[derive(Debug, Clone, Copy)]
pub(super) struct ForRound {
    pub(super) at: Time,
    pub(super) sub: u32,
    pub(super) instance: u32,
    pub(super) round: u32,
}

/// The two control messages, as the loss hash names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A sender's desired priority, to a receiver.
    Announce = 1,
    /// A receiver's feedback priority, to a sender.
    Feedback = 2,
}

pub(super) const NO_SUB: u32 = u32::MAX;
pub(super) const NO_LINK: u32 = u32::MAX;
/// The instance of a forgotten subcoflow's slot.
pub(super) const GONE: u32 = u32::MAX;

impl Dcas {
    /// A D-CAS scheduler; `config` must be valid ([`DcasConfig::validate`]).
    pub fn new(config: DcasConfig) -> Dcas {
        Dcas {
            log: None,
            hosts: vec![],
            subs: vec![],
            free_subs: vec![],
            sub_of: FxHashMap::default(),
            n_subs: 0,
            n_instances: 0,
            flow_sub: vec![],
            flow_served: vec![],
            flow_ends: vec![],
            rank: vec![],
            n_ranked: 0,
            complete: vec![],
            cached_at: FxHashMap::default(),
            boards: FxHashMap::default(),
            announcements: VecDeque::new(),
            decisions: VecDeque::new(),
            next_tick: None,
            always_incremental: config.incremental,
            inc: None,
            server: ClassServer::default(),
            pairs: PairSolver::default(),
            all_pairs: true,
            order: vec![],
            order_stale: false,
            order_gone: false,
            turns: FxHashMap::default(),
            round: 0,
            flow_round: vec![],
            dropped: vec![],
            got: vec![],
            link_listed: vec![],
            link_opened: vec![],
            n_serves: 0,
            relist: ClassLists::default(),
            n_changes: 0,
            stats: DcasStats::default(),
            config,
            released: vec![],
            new_subs: vec![],
            new_flows: vec![],
            changed: vec![],
            batch: vec![],
            batch_order: vec![],
            batch_msgs: vec![],
            batch_coflows: vec![],
            batch_merged: vec![],
            batch_coflow_no: vec![],
            batch_replies: vec![],
            batch_runs: vec![],
            batch_held: vec![],
            batch_group: vec![],
            host_lists: vec![],
            batch_starts: vec![],
        }
    }

    /// Also writes every decision to `log`.
    pub fn with_log(mut self, log: DecisionLog) -> Dcas {
        self.log = Some(log);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &DcasConfig {
        &self.config
    }

    /// Control-plane counts so far.
    pub fn stats(&self) -> DcasStats {
        self.stats
    }

    /// The current priority of coflow `c`'s subcoflow at host `h`, if it
    /// has one.
    pub fn priority(&self, c: CoflowIdx, h: HostId) -> Option<Priority> {
        self.sub_of
            .get(&(c, h))
            .and_then(|&s| self.subs[s as usize].priority)
    }

    /// Whether the message of `kind` for `coflow` from `from` to `to` in the
    /// sender's round `round` is lost.
    pub(super) fn lost(
        &mut self,
        kind: MessageKind,
        coflow: CoflowId,
        from: HostId,
        to: HostId,
        round: u32,
    ) -> bool {
        if self.config.loss <= 0.0 {
            return false;
        }
        let lost = loss_draw(self.config.seed, kind, coflow, from, to, round) < self.config.loss;
        self.stats.lost += u64::from(lost);
        lost
    }

    /// The subcoflow in slot `s` if it is still `instance` and in `round`.
    pub(super) fn live(&self, s: u32, instance: u32, round: u32) -> Option<&Subcoflow> {
        let sub = &self.subs[s as usize];
        (sub.instance == instance && sub.round == round).then_some(sub)
    }

    /// Gives subcoflow `s` priority `p` (its flows move to `p`'s class).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_priority(
        &mut self,
        s: u32,
        p: Priority,
        rule: Rule,
        desired: u64,
        now: Time,
        view: &Clairvoyant<'_>,
        out: &mut Allocation,
    ) {
        let sub = &mut self.subs[s as usize];
        if let Some(log) = &self.log {
            log.lock().expect("decision log").push(Decision {
                at: now,
                coflow: view.coflow_id(sub.coflow),
                host: sub.host,
                rule,
                priority: p,
                desired,
                feedback: sub.feedback.clone(),
            });
        }
        if sub.priority == Some(p) {
            return;
        }
        sub.priority = Some(p);
        self.order_stale = true;
        for &f in &sub.flows {
            if let Some(inc) = self.inc.as_mut().filter(|inc| inc.is_declared(f)) {
                inc.set_class(f, p.class());
            }
            out.set_class(f, p.queue_class());
        }
    }

    /// Pseudocode 1 for subcoflow `s`, now.
    pub(super) fn run_sender(
        &mut self,
        s: u32,
        now: Time,
        view: &Clairvoyant<'_>,
        out: &mut Allocation,
    ) {
        let (threshold, starvation) = (self.config.threshold, self.config.starvation);
        let sub = &mut self.subs[s as usize];
        let waited = sub.waited(now);
        sub.last_run = now;
        sub.round += 1;
        sub.pending = None;
        sub.feedback.clear();
        let (c, h) = (sub.coflow, sub.host);
        let local = Local::new(*view, h);
        // Bytes left move only while a flow of it has a rate: otherwise the
        // sum of the last run is read again (the same sum, to the bit).
        let rem = match sub.rem.filter(|_| !sub.moved) {
            Some(rem) => {
                debug_assert_eq!(
                    rem.to_bits(),
                    sub.flows
                        .iter()
                        .map(|&f| local.remaining(f))
                        .sum::<f64>()
                        .to_bits(),
                    "cached bytes left of a subcoflow whose flows moved"
                );
                rem
            }
            None => {
                let rem: f64 = sub.flows.iter().map(|&f| local.remaining(f)).sum();
                sub.rem = Some(rem);
                rem
            }
        };
        sub.moved = sub.sending || self.inc.is_some();
        let d = self
            .config
            .desired_of(rem, self.hosts[h.0 as usize].nic_bps);
        let rule = pseudocode1(rem, threshold, waited, starvation);
        if rule == Rule::Fifo {
            let p = Priority::fifo(self.rank[c as usize]);
            self.set_priority(s, p, Rule::Fifo, d, now, view, out);
        } else if rule == Rule::Starving {
            self.set_priority(s, Priority::STARVING, Rule::Starving, d, now, view, out);
        } else {
            let (instance, round) = (sub.instance, sub.round);
            sub.pending = Some(d);
            let receivers = sub
                .receivers
                .get_or_insert_with(|| {
                    let mut r: Vec<HostId> = sub.flows.iter().map(|&f| local.dst(f)).collect();
                    r.sort_unstable();
                    r.dedup();
                    r.into()
                })
                .clone();
            let id = view.coflow_id(c);
            self.stats.announcements += receivers.len() as u64;
            let to = if self.config.loss > 0.0 {
                let kept: Vec<HostId> = receivers
                    .iter()
                    .copied()
                    .filter(|&r| !self.lost(MessageKind::Announce, id, h, r, round))
                    .collect();
                kept.into()
            } else {
                receivers
            };
            if !to.is_empty() {
                self.announcements.push_back(Announcement {
                    at: now + self.config.msg_delay,
                    to,
                    from: h,
                    coflow: c,
                    sub: s,
                    instance,
                    round,
                    value: d,
                });
            }
            self.decisions.push_back(ForRound {
                at: now + Dur(2 * self.config.msg_delay.0),
                sub: s,
                instance,
                round,
            });
            if self.subs[s as usize].priority.is_none() {
                self.set_priority(s, Priority::large(d), Rule::Interim, d, now, view, out);
            }
        }
    }

    /// Pseudocode 2 for every announcement due now (in `batch`): each
    /// receiver updates its cache with all of them first, then replies
    /// `Ψ(cached values of the coflow)` to each announcer (one value per
    /// receiver and coflow at one instant). A reply reaches its sender
    /// `msg_delay` later, the instant its negotiation ends, before the
    /// decision (phase order), and counts only for the round that
    /// announced, still open: nothing can end or replace that round in
    /// between but a run of Pseudocode 1, which drops the feedback it holds.
    /// So a reply goes into its round's feedback now, not into a queue.
    /// A coflow whose batch matches its [`Board`] is read by the board;
    /// the others by copies laid out per receiver, and make a board.
    pub(super) fn receive(&mut self, now: Time, view: &Clairvoyant<'_>) {
        let batch = std::mem::take(&mut self.batch);
        // Messages grouped by (receiver, coflow), in (receiver, coflow,
        // sender) order: the announcements by (coflow, sender), one each at
        // an instant, then their messages counted out by receiver (a
        // receiver gets at most one message of each). A group's senders in
        // the cache's order update it in place or by one merge; the order
        // inside a group reaches no sender (each gets one reply per
        // receiver, by receiver).
        let mut order = std::mem::take(&mut self.batch_order);
        order.clear();
        order.extend(0..batch.len() as u32);
        order.sort_unstable_by_key(|&a| (batch[a as usize].coflow, batch[a as usize].from));
        // The coflows of the batch numbered in order, each with its run of
        // announcements in `order` and whether its board holds; each
        // announcement's coflow number and place in its run; each
        // receiver's reply for each (None: a complete coflow's
        // announcements are not read).
        let n_hosts = self.hosts.len();
        let mut coflow_no = std::mem::take(&mut self.batch_coflow_no);
        let mut coflows = std::mem::take(&mut self.batch_coflows);
        let mut runs = std::mem::take(&mut self.batch_runs);
        let mut held = std::mem::take(&mut self.batch_held);
        coflow_no.clear();
        coflow_no.resize(batch.len(), (0, 0));
        coflows.clear();
        runs.clear();
        for (at, &a) in order.iter().enumerate() {
            let c = batch[a as usize].coflow;
            if coflows.last() != Some(&c) {
                coflows.push(c);
                runs.push(at as u32);
            }
            let no = coflows.len() as u32 - 1;
            coflow_no[a as usize] = (no, at as u32 - runs[no as usize]);
        }
        runs.push(order.len() as u32);
        // Boards (with no loss: lists drawn per message never match).
        let boards = self.config.loss <= 0.0;
        held.clear();
        for (no, &c) in coflows.iter().enumerate() {
            let run = &order[runs[no] as usize..runs[no + 1] as usize];
            let holds = boards
                && !self.complete[c as usize]
                && self.boards.get(&c).is_some_and(|b| b.matches(&batch, run));
            if !holds {
                if let Some(b) = self.boards.remove(&c) {
                    b.into_caches(c, &mut self.hosts);
                }
            }
            held.push(holds);
        }
        // Each receiver's copies of the rest (what a group reads, in a row).
        let mut msgs = std::mem::take(&mut self.batch_msgs);
        let mut starts = std::mem::take(&mut self.batch_starts);
        starts.clear();
        starts.resize(self.hosts.len() + 1, 0);
        for (a, m) in batch.iter().enumerate() {
            if held[coflow_no[a].0 as usize] {
                continue;
            }
            for r in m.to.iter() {
                starts[r.0 as usize + 1] += 1;
            }
        }
        for h in 0..self.hosts.len() {
            starts[h + 1] += starts[h];
        }
        msgs.clear();
        msgs.resize(starts[self.hosts.len()] as usize, Received::default());
        for &a in &order {
            let (no, _) = coflow_no[a as usize];
            if held[no as usize] {
                continue;
            }
            let m = &batch[a as usize];
            let copy = Received {
                no,
                from: m.from,
                value: m.value,
            };
            for r in m.to.iter() {
                let at = &mut starts[r.0 as usize];
                msgs[*at as usize] = copy;
                *at += 1;
            }
        }
        // (Each start has moved to its bucket's end, the next one's start.)
        let mut replies = std::mem::take(&mut self.batch_replies);
        replies.clear();
        replies.resize(coflows.len().max(1) * n_hosts, None);
        let (expiry, psi) = (self.config.expiry, self.config.psi);
        let mut merged = std::mem::take(&mut self.batch_merged);
        let mut i = 0;
        for (to, &end) in starts[..self.hosts.len()].iter().enumerate() {
            let (to, end) = (HostId(to as u32), end as usize);
            while i < end {
                let no = msgs[i].no;
                let c = coflows[no as usize];
                let mut j = i + 1;
                while j < end && msgs[j].no == no {
                    j += 1;
                }
                let group = &msgs[i..j];
                i = j;
                if self.complete[c as usize] {
                    continue; // nothing of a complete coflow is read again
                }
                let cache = self.hosts[to.0 as usize].cache.entry(c).or_default();
                if cache.is_empty() {
                    self.cached_at.entry(c).or_default().push(to);
                }
                replies[no as usize * n_hosts + to.0 as usize] =
                    read_group(cache, group, now, expiry, psi, &mut merged);
            }
        }
        // The held boards read their batch: the values set, one Ψ per
        // group of followers, the others' groups read into their caches;
        // the other coflows (not complete) get a board of this batch.
        let mut group = std::mem::take(&mut self.batch_group);
        for (no, &c) in coflows.iter().enumerate() {
            let run = &order[runs[no] as usize..runs[no + 1] as usize];
            if !held[no] {
                if boards && !self.complete[c as usize] {
                    let b = Board::new(c, &batch, run, now, &self.hosts, &mut self.host_lists);
                    self.boards.insert(c, b);
                }
                continue;
            }
            let b = self.boards.get_mut(&c).expect("a held board");
            #[cfg(debug_assertions)]
            let expected = board_read_afresh(b, c, &batch, run, now, expiry, psi, &self.hosts);
            b.at = now;
            for (v, &a) in b.values.iter_mut().zip(run) {
                *v = batch[a as usize].value;
            }
            for g in 0..b.own.len() as u32 {
                let r = b.own[g as usize];
                b.reply[g as usize] = if r == NO_HOST {
                    psi.apply(b.group(g).iter().map(|&i| b.values[i as usize]))
                } else {
                    group.clear();
                    group.extend(b.messages_of(g));
                    let cache = self.hosts[r as usize].cache.entry(c).or_default();
                    read_group(cache, &group, now, expiry, psi, &mut merged)
                };
            }
            #[cfg(debug_assertions)]
            for (r, reply, cache) in expected {
                let g = b.group_of[r.0 as usize];
                assert_eq!(b.reply[g as usize], reply, "a board's reply, read afresh");
                if b.own[g as usize] == NO_HOST {
                    assert!(b.cache_of(g).eq(cache), "a follower's cache, read afresh");
                } else {
                    assert!(self.hosts[r.0 as usize].cache[&c].iter().copied().eq(cache));
                }
            }
        }
        self.batch_group = group;
        // The replies, each announcement's in its receivers' order: a
        // sender's feedback arrives by receiver (with no loss, straight
        // into it: none is lost and nothing else is drawn).
        // With Φ = max and no log to show them, a round's feedback is kept
        // as its largest value alone (what the decision reads of it): of a
        // held board, the largest reply of the groups it reached.
        let lossless = self.config.loss <= 0.0;
        let only_max = self.config.phi == Combine::Max && self.log.is_none();
        for (a, m) in batch.iter().enumerate() {
            let open = self
                .live(m.sub, m.instance, m.round)
                .is_some_and(|s| s.pending.is_some());
            let (no, at) = coflow_no[a];
            if held[no as usize] {
                let b = &self.boards[&m.coflow];
                let feedback = &mut self.subs[m.sub as usize].feedback;
                if open && only_max {
                    let at = at as usize;
                    let groups =
                        &b.touched[b.touch_starts[at] as usize..b.touch_starts[at + 1] as usize];
                    let top = groups.iter().map(|&g| b.reply[g as usize]).max().flatten();
                    debug_assert!(feedback.is_empty(), "one announcement per round");
                    debug_assert_eq!(top, m.to.iter().filter_map(|&r| b.reply_to(r)).max());
                    feedback.extend(top);
                } else if open {
                    feedback.extend(m.to.iter().filter_map(|&r| b.reply_to(r)));
                }
                debug_assert!(m.to.iter().all(|&r| b.reply_to(r).is_some()));
                self.stats.feedbacks += m.to.len() as u64;
                continue;
            }
            let row = &replies[no as usize * n_hosts..][..n_hosts];
            if lossless {
                let values = m.to.iter().filter_map(|r| row[r.0 as usize]);
                let n = if open && only_max {
                    let (mut n, mut top) = (0, None);
                    for v in values {
                        n += 1;
                        top = top.max(Some(v));
                    }
                    let feedback = &mut self.subs[m.sub as usize].feedback;
                    debug_assert!(feedback.is_empty(), "one announcement per round");
                    feedback.extend(top);
                    n
                } else if open {
                    let feedback = &mut self.subs[m.sub as usize].feedback;
                    let before = feedback.len();
                    feedback.extend(values);
                    feedback.len() - before
                } else {
                    values.count()
                };
                self.stats.feedbacks += n as u64;
                continue;
            }
            let id = view.coflow_id(m.coflow);
            for &r in m.to.iter() {
                let Some(value) = row[r.0 as usize] else {
                    continue;
                };
                self.stats.feedbacks += 1;
                if !self.lost(MessageKind::Feedback, id, r, m.from, m.round) && open {
                    self.subs[m.sub as usize].feedback.push(value);
                }
            }
        }
        self.batch = batch;
        self.batch.clear();
        self.batch_merged = merged;
        (self.batch_order, self.batch_msgs, self.batch_starts) = (order, msgs, starts);
        (self.batch_coflow_no, self.batch_replies) = (coflow_no, replies);
        (self.batch_coflows, self.batch_runs, self.batch_held) = (coflows, runs, held);
    }

    /// The end of a negotiation: `<1, Φ(M)>`, or `<1, d>` with no feedback.
    pub(super) fn decide(
        &mut self,
        now: Time,
        e: ForRound,
        view: &Clairvoyant<'_>,
        out: &mut Allocation,
    ) {
        let Some(d) = self
            .live(e.sub, e.instance, e.round)
            .and_then(|s| s.pending)
        else {
            return;
        };
        let sub = &mut self.subs[e.sub as usize];
        sub.pending = None;
        let (p, rule) = match self.config.phi.apply(sub.feedback.iter().copied()) {
            Some(m) => (Priority::large(m), Rule::Negotiated),
            None => {
                self.stats.fallbacks += 1;
                (Priority::large(d), Rule::Fallback)
            }
        };
        self.set_priority(e.sub, p, rule, d, now, view, out);
    }

    /// Every sender runs Pseudocode 1 for each of its subcoflows (except
    /// those that already ran at this instant).
    pub(super) fn tick(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        for h in 0..self.hosts.len() {
            for i in 0..self.hosts[h].subcoflows.len() {
                let s = self.hosts[h].subcoflows[i];
                if self.subs[s as usize].last_run != now {
                    self.run_sender(s, now, view, out);
                }
            }
        }
        self.next_tick = (self.n_subs > 0).then(|| now + self.config.delta);
    }

    /// The protocol's events due by `now`, in (instant, phase) order.
    pub(super) fn run_protocol(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        loop {
            let heads = [
                self.announcements.front().map(|m| m.at),
                self.decisions.front().map(|m| m.at),
                self.next_tick,
            ];
            let Some((t, phase)) = heads
                .iter()
                .enumerate()
                .filter_map(|(k, t)| t.map(|t| (t, k)))
                .filter(|&(t, _)| t <= now)
                .min()
            else {
                return;
            };
            match phase {
                0 => {
                    while self.announcements.front().is_some_and(|m| m.at == t) {
                        let m = self.announcements.pop_front().expect("a head");
                        self.batch.push(m);
                    }
                    self.receive(t, view);
                }
                1 => {
                    while let Some(&e) = self.decisions.front().filter(|m| m.at == t) {
                        self.decisions.pop_front();
                        self.decide(t, e, view, out);
                    }
                }
                _ => self.tick(t, view, out),
            }
        }
    }

    /// When the protocol next needs the driver.
    pub(super) fn next_event(&self) -> Option<Time> {
        [
            self.announcements.front().map(|m| m.at),
            self.decisions.front().map(|m| m.at),
            self.next_tick,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Flow `f` joins its subcoflow (made if new; listed in `new_subs`).
    pub(super) fn join(&mut self, f: FlowIdx, now: Time, view: &Clairvoyant<'_>) {
        let (c, h) = (view.coflow_of(f), view.src(f));
        let s = match self.sub_of.get(&(c, h)) {
            Some(&s) => s,
            None => {
                let sub = Subcoflow {
                    coflow: c,
                    host: h,
                    instance: self.n_instances,
                    flows: vec![],
                    lasts: vec![],
                    priority: None,
                    n_served: 0,
                    served_at: now,
                    served_from: None,
                    served_until: None,
                    last_run: Time::NEVER,
                    round: 0,
                    pending: None,
                    feedback: vec![],
                    receivers: None,
                    ends: None,
                    distinct: false,
                    changed_at: 0,
                    rem: None,
                    moved: false,
                    sending: false,
                };
                self.n_instances = (self.n_instances + 1) % GONE;
                let s = match self.free_subs.pop() {
                    Some(s) => {
                        self.subs[s as usize] = sub;
                        s
                    }
                    None => {
                        self.subs.push(sub);
                        (self.subs.len() - 1) as u32
                    }
                };
                self.sub_of.insert((c, h), s);
                self.hosts[h.0 as usize].subcoflows.push(s);
                self.n_subs += 1;
                self.new_subs.push(s);
                s
            }
        };
        let p = view.path(f);
        let ends = (p[0].0, p[p.len() - 1].0);
        let sub = &mut self.subs[s as usize];
        sub.flows.push(f);
        sub.lasts.push(ends.1);
        sub.receivers = None;
        sub.ends = None;
        sub.rem = None;
        self.n_changes += 1;
        sub.changed_at = self.n_changes;
        self.order_stale = true;
        self.flow_sub[f as usize] = s;
        self.flow_ends[f as usize] = ends;
        self.all_pairs &= p.len() == 2 && p[0] != p[1];
    }

    /// Finished flow `f` leaves its subcoflow (forgotten when empty).
    pub(super) fn leave(&mut self, f: FlowIdx, now: Time) {
        let s = std::mem::replace(&mut self.flow_sub[f as usize], NO_SUB);
        let sub = &mut self.subs[s as usize];
        let at = sub.flows.iter().position(|&x| x == f).expect("flow listed");
        sub.flows.swap_remove(at);
        sub.lasts.swap_remove(at);
        sub.receivers = None;
        sub.rem = None;
        self.n_changes += 1;
        sub.changed_at = self.n_changes;
        // (Incremental mode; on the big switch service is recounted at
        // every event.)
        if std::mem::take(&mut self.flow_served[f as usize]) {
            sub.n_served -= 1;
            if sub.n_served == 0 {
                sub.unserved(now);
            }
        }
        if sub.flows.is_empty() {
            let (c, h) = (sub.coflow, sub.host);
            sub.instance = GONE;
            self.sub_of.remove(&(c, h));
            let list = &mut self.hosts[h.0 as usize].subcoflows;
            let at = list.iter().position(|&x| x == s).expect("subcoflow listed");
            list.swap_remove(at);
            self.free_subs.push(s);
            self.n_subs -= 1;
            self.order_gone = true;
        }
    }
}
