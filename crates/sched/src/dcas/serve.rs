//! The allocation: strict priority between classes, max-min inside one,
//! by walking the classes ([`ClassServer`]) on the big switch or by
//! [`IncrementalMaxMin`] elsewhere; each class's service from the rates it
//! got.

use super::*;

impl Dcas {
    /// Rates by [`IncrementalMaxMin`]; service from the demands it changed.
    pub(super) fn solve_incremental(
        &mut self,
        now: Time,
        view: &Clairvoyant<'_>,
        out: &mut Allocation,
    ) {
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        let inc = self.inc.as_mut().expect("incremental mode");
        inc.solve(&mut changed);
        for &f in &changed {
            if !view.is_active(f) {
                continue;
            }
            let r = inc.rate(f);
            out.set_rate(f, r);
            let sub = &mut self.subs[self.flow_sub[f as usize] as usize];
            let served = r > EPS * self.hosts[sub.host.0 as usize].nic_bps;
            if served != self.flow_served[f as usize] {
                self.flow_served[f as usize] = served;
                if served {
                    sub.n_served += 1;
                    sub.served(now);
                } else {
                    sub.n_served -= 1;
                    if sub.n_served == 0 {
                        sub.unserved(now);
                    }
                }
            }
        }
        self.changed = changed;
    }

    /// Rates on the big switch: subcoflows by priority, each run of equal
    /// priorities one class served max-min on what the classes before it
    /// left ([`ClassServer`]); a class whose every subcoflow has its first
    /// or last links full is skipped. A class whose subcoflows did not
    /// change and whose links show, bit for bit, the residual of its last
    /// turn gets what it got then, without a solve ([`ClassTurn`]); the
    /// service of a class's subcoflows is recounted when it is served.
    pub(super) fn serve_classes(
        &mut self,
        now: Time,
        view: &Clairvoyant<'_>,
        out: &mut Allocation,
    ) {
        let obs = view.observed();
        if self.order_stale {
            self.order.clear();
            for host in &self.hosts {
                for &s in &host.subcoflows {
                    let sub = &mut self.subs[s as usize];
                    if sub.ends.is_none() {
                        let (mut first, mut last) = (vec![], sub.lasts.clone());
                        for &f in &sub.flows {
                            first.push(self.flow_ends[f as usize].0);
                        }
                        first.sort_unstable();
                        first.dedup();
                        last.sort_unstable();
                        last.dedup();
                        sub.distinct = last.len() == sub.flows.len();
                        sub.ends = Some((first, last));
                    }
                    let ends = sub.ends.as_ref().expect("just made");
                    let first = if ends.0.len() == 1 {
                        ends.0[0]
                    } else {
                        NO_LINK
                    };
                    let p = sub.priority.expect("ran at once");
                    self.order.push((p.class(), s, first));
                }
            }
            self.order.sort_unstable();
        } else if self.order_gone {
            let subs = &self.subs;
            self.order
                .retain(|&(_, s, _)| subs[s as usize].instance != GONE);
        }
        (self.order_stale, self.order_gone) = (false, false);
        self.round += 1;
        let round = self.round;
        self.server.begin(&obs);
        let mut turns = std::mem::take(&mut self.turns);
        let mut i = 0;
        while i < self.order.len() {
            let class = self.order[i].0;
            let mut j = i;
            while j < self.order.len() && self.order[j].0 == class {
                j += 1;
            }
            let turn = turns.entry(self.order[i].1).or_default();
            let subs = &self.subs;
            let same_subs = turn.subs.len() == j - i
                && self.order[i..j]
                    .iter()
                    .zip(&turn.subs)
                    .all(|(&(_, s, _), &(t, at))| s == t && subs[s as usize].changed_at == at);
            if same_subs && self.server.residual_is(&turn.links, &turn.before) {
                self.server.set_residual(&turn.links, &turn.after);
                turn.round = round;
                i = j;
                continue;
            }
            self.serve_class(i..j, same_subs, turn, now, &obs, out);
            i = j;
        }
        // Classes no subcoflow is in any more.
        let dropped = &mut self.dropped;
        turns.retain(|_, t| {
            if t.round != round {
                dropped.append(&mut t.members);
            }
            t.round == round
        });
        self.turns = turns;
        // A flow a class gave a rate before and no class gave one now.
        for &f in &self.dropped {
            if self.flow_round[f as usize] != round && view.is_active(f) {
                out.set_rate(f, 0.0);
            }
        }
        self.dropped.clear();
    }

    /// Serves the class of the subcoflows `self.order[range]` into `turn`
    /// (`same_subs`: they are the subcoflows of its last turn, with the
    /// same flows): a subcoflow whose first or last links are all full is
    /// left out, and so is a flow that meets a full link (it would get
    /// nothing and take nothing: leaving it out changes no other rate).
    /// Then recounts the service of the class's subcoflows.
    ///
    /// The lists of the last turn stay when its subcoflows are the same and
    /// every link it listed is full or open as it was then: a flow is a
    /// member while its first and last links are open, and the links a
    /// turn lists decide that for each of its subcoflows, so a listing now
    /// would give the same members (debug builds list anew and compare).
    pub(super) fn serve_class(
        &mut self,
        range: std::ops::Range<usize>,
        same_subs: bool,
        turn: &mut ClassTurn,
        now: Time,
        obs: &crate::Observed<'_>,
        out: &mut Allocation,
    ) {
        let server = &self.server;
        let links_as_then = turn.listed
            && (turn.links.iter())
                .zip(&turn.full)
                .all(|(&l, &full)| server.is_full(l) == full);
        let keep_lists = same_subs && links_as_then;
        #[cfg(debug_assertions)]
        if keep_lists {
            let mut lists = ClassLists::default();
            let distinct = self.list_class(range.clone(), &mut lists, None, obs);
            assert_eq!(
                lists.members, turn.members,
                "members of a class kept listed"
            );
            assert_eq!(lists.ends, turn.ends, "members' links kept listed");
            assert_eq!(lists.member_ends, turn.member_ends, "members' runs");
            assert!(distinct || !turn.distinct, "paths of a class kept listed");
        }
        if !keep_lists {
            // With every listed link full or open as then, a subcoflow of
            // the last turn with the same flows has the same members: its
            // run is spliced in and only the others are listed.
            let splice = links_as_then;
            let mut old = ClassLists {
                links: std::mem::take(&mut turn.links),
                members: std::mem::take(&mut turn.members),
                ends: std::mem::take(&mut turn.ends),
                member_ends: std::mem::take(&mut turn.member_ends),
            };
            let mut lists = std::mem::take(&mut self.relist);
            if splice {
                turn.distinct =
                    self.list_class(range.clone(), &mut lists, Some((&turn.subs[..], &old)), obs);
            } else {
                self.dropped.append(&mut old.members);
                turn.distinct = self.list_class(range.clone(), &mut lists, None, obs);
            }
            #[cfg(debug_assertions)]
            if splice {
                let mut anew = ClassLists::default();
                let distinct = self.list_class(range.clone(), &mut anew, None, obs);
                assert_eq!(anew.links, lists.links, "links of a spliced class");
                assert_eq!(anew.members, lists.members, "members of a spliced class");
                assert_eq!(anew.ends, lists.ends, "members' links spliced");
                assert_eq!(anew.member_ends, lists.member_ends, "spliced runs");
                assert_eq!(distinct, turn.distinct, "paths of a spliced class");
            }
            (turn.links, turn.members, turn.ends, turn.member_ends) =
                (lists.links, lists.members, lists.ends, lists.member_ends);
            self.relist = old;
            turn.subs.clear();
            let subs = &self.subs;
            turn.subs.extend(
                self.order[range.clone()]
                    .iter()
                    .map(|&(_, s, _)| (s, subs[s as usize].changed_at)),
            );
            turn.setup.valid = false;
            let server = &self.server;
            turn.full.clear();
            turn.full
                .extend(turn.links.iter().map(|&l| server.is_full(l)));
            turn.listed = true;
        }
        self.solve_class(range, turn, now, obs, out);
    }

    /// Lists the class of the subcoflows `self.order[range]` into `lists`
    /// (cleared first); true when no two of its members share a path.
    ///
    /// The lists hold the links the class reads before its solve, each
    /// once: a blocked subcoflow's are those that showed it blocked (its
    /// one first link, or all its first or all its last links; while they
    /// show the same residual it stays blocked, whatever its other links
    /// show), the others' are all their first and last links (the solve
    /// reads and takes from no other). Each subcoflow's members are a run
    /// of `lists.members`, ending at `lists.member_ends[k]` for its k-th one.
    ///
    /// With `old` (the subcoflows of the class's last turn, slot and change
    /// stamp, and its lists; every link listed then full or open as then),
    /// a subcoflow of that turn with the same stamp takes its run of
    /// members from there, reading its links but not its flows' (the same
    /// links decide the same members); the runs of the others go to
    /// `dropped`. The lists come out as a listing makes them.
    pub(super) fn list_class(
        &mut self,
        range: std::ops::Range<usize>,
        lists: &mut ClassLists,
        old: Option<(&[(u32, u64)], &ClassLists)>,
        obs: &crate::Observed<'_>,
    ) -> bool {
        lists.links.clear();
        lists.members.clear();
        lists.ends.clear();
        lists.member_ends.clear();
        // Each link once, marked with this listing's number.
        self.n_serves += 1;
        let stamp = self.n_serves;
        let n_links = obs.capacities().len();
        if self.link_listed.len() < n_links {
            self.link_listed.resize(n_links, 0);
            self.link_opened.resize(n_links, 0);
        }
        let server = &self.server;
        let listed = &mut self.link_listed;
        // Whether no two members share a path: each open subcoflow's flows
        // go to distinct last links, and no two open ones share their uplink.
        let mut distinct = true;
        let opened = &mut self.link_opened;
        let links = &mut lists.links;
        let mut list = |ls: &[u32]| {
            for &l in ls {
                if std::mem::replace(&mut listed[l as usize], stamp) != stamp {
                    links.push(l);
                }
            }
        };
        let (members, member_links) = (&mut lists.members, &mut lists.ends);
        let (old_subs, old) = match old {
            Some((subs, lists)) => (subs, Some(lists)),
            None => (&[][..], None),
        };
        // The next subcoflow of the last turn, and where its run starts.
        let (mut k, mut run_start) = (0, 0);
        let dropped = &mut self.dropped;
        for &(_, s, first) in &self.order[range] {
            let sub = &self.subs[s as usize];
            let ends = sub.ends.as_ref().expect("made with the order");
            let full = |l: &u32| server.is_full(*l);
            // Its run in the last turn, when it was there with these flows
            // (both turns' subcoflows are in slot order).
            let mut run = None;
            if let Some(old) = old {
                while k < old_subs.len() && old_subs[k].0 <= s {
                    let run_end = old.member_ends[k] as usize;
                    if old_subs[k] == (s, sub.changed_at) {
                        run = Some(run_start..run_end);
                    } else {
                        dropped.extend_from_slice(&old.members[run_start..run_end]);
                    }
                    (k, run_start) = (k + 1, run_end);
                }
            }
            // Most subcoflows wait behind a full uplink: one look.
            if first != NO_LINK && server.is_full(first) {
                list(&[first]);
            } else if ends.0.iter().all(full) {
                list(&ends.0);
            } else if ends.1.iter().all(full) {
                list(&ends.1);
            } else if first != NO_LINK {
                // Its one uplink is open: one pass over its flows' last
                // links (downlinks) lists them and keeps as members the
                // flows whose downlink is open.
                list(&[first]);
                distinct &=
                    sub.distinct && std::mem::replace(&mut opened[first as usize], stamp) != stamp;
                if let (Some(run), Some(old)) = (run, old) {
                    list(&sub.lasts);
                    members.extend_from_slice(&old.members[run.clone()]);
                    member_links.extend_from_slice(&old.ends[run]);
                } else {
                    for (&f, &b) in sub.flows.iter().zip(&sub.lasts) {
                        list(&[b]);
                        if !server.is_full(b) {
                            members.push(f);
                            member_links.push((first, b));
                        }
                    }
                }
            } else if let (Some(run), Some(old)) = (run, old) {
                distinct = false;
                list(&ends.0);
                list(&ends.1);
                members.extend_from_slice(&old.members[run.clone()]);
                member_links.extend_from_slice(&old.ends[run]);
            } else {
                distinct = false;
                list(&ends.0);
                list(&ends.1);
                for &f in &sub.flows {
                    let (a, b) = self.flow_ends[f as usize];
                    if !server.is_full(a) && !server.is_full(b) {
                        members.push(f);
                        member_links.push((a, b));
                    }
                }
            }
            lists.member_ends.push(members.len() as u32);
        }
        // Subcoflows of the last turn after this one's.
        if let Some(old) = old {
            dropped.extend_from_slice(&old.members[run_start..]);
        }
        distinct
    }

    /// Solves the class of the subcoflows `self.order[range]` on the
    /// members `turn` lists, then recounts their service.
    pub(super) fn solve_class(
        &mut self,
        range: std::ops::Range<usize>,
        turn: &mut ClassTurn,
        now: Time,
        obs: &crate::Observed<'_>,
        out: &mut Allocation,
    ) {
        let round = self.round;
        self.server.residual_of(&turn.links, &mut turn.before);
        if !turn.members.is_empty() {
            let p = self.subs[self.order[range.start].1 as usize]
                .priority
                .expect("ran");
            let solved = self.all_pairs
                && self.pairs.serve(
                    obs,
                    &turn.members,
                    &turn.ends,
                    turn.distinct,
                    self.server.residual_mut(),
                    p.queue_class(),
                    out,
                    &mut turn.setup,
                    (&mut self.flow_round, round, &mut self.got),
                );
            if !solved {
                self.server
                    .serve_flows(obs, turn.members.iter().copied(), p.queue_class(), out);
                self.got.clear();
                for &f in &turn.members {
                    self.flow_round[f as usize] = round;
                    self.got.push(out.rate(f));
                }
            }
        } else {
            self.got.clear();
        }
        self.server.residual_of(&turn.links, &mut turn.after);
        turn.round = round;
        // Service: a subcoflow is served while a flow of it has a rate
        // above the floor; one that was and is not any more is unserved
        // from now. Only members have a rate (and are marked given one in
        // this round); their rates are in a row in `got`.
        let mut start = 0;
        let got = &self.got;
        for (&(_, s, _), &end) in self.order[range].iter().zip(&turn.member_ends) {
            let sub = &mut self.subs[s as usize];
            let floor = EPS * self.hosts[sub.host.0 as usize].nic_bps;
            let was = sub.n_served > 0;
            let (mut n_served, mut sending) = (0, false);
            for (i, &r) in got[start..end as usize].iter().enumerate() {
                debug_assert_eq!(
                    r.to_bits(),
                    out.rate(turn.members[start + i]).to_bits(),
                    "a member's rate in a row"
                );
                n_served += u32::from(r > floor);
                sending |= r > 0.0;
            }
            start = end as usize;
            sub.n_served = n_served;
            sub.sending = sending;
            sub.moved |= sending;
            if sub.n_served > 0 {
                sub.served(now);
            } else if was {
                sub.unserved(now);
            }
        }
    }
}
