//! Host policies in the loop (`crate::host`): a policy hears of its
//! flows' starts and bytes, marks them (class, transport, pacing, limit),
//! wakes when it asks to (its own `Wake` event), and talks to the other
//! hosts' policies by control packets on channels of their own.

use super::{ps, Engine, Ev, Flow, FlowEv, PS_PER_NS};
use crate::host::{Channel, EngineView, Held, Hosts, Settings, CONTROL_PAYLOAD};
use crate::host::{CONTROL_BATCH_HEAD, CONTROL_BATCH_MAX};
use crate::pacing::Pacing;
use crate::packet::{Kind, Packet};
use crate::transport::Segment;
use coflowkit_model::{FlowKey, Time};
use coflowkit_sched::host::{Control, HostFlow};

impl Engine<'_> {
    /// Runs `policies` (one per host, in host order) on the hosts.
    pub fn with_hosts(mut self, policies: Vec<Box<dyn coflowkit_sched::host::HostPolicy>>) -> Self {
        self.hosts = Some(Box::new(Hosts::new(policies)));
        self
    }

    pub(super) fn now_ns(&self) -> Time {
        Time(self.now / PS_PER_NS)
    }

    /// Calls host `h`'s policy with `call`, then applies what it did.
    pub(super) fn host_call(
        &mut self,
        h: u32,
        call: impl FnOnce(
            &mut dyn coflowkit_sched::host::HostPolicy,
            &mut coflowkit_sched::host::Effects,
        ),
    ) {
        let hosts = self.hosts.as_mut().expect("hosts");
        let mut out = std::mem::take(&mut hosts.out);
        out.clear();
        call(hosts.policies[h as usize].as_mut(), &mut out);
        self.apply_effects(h, out);
    }

    /// Enforces what host `h`'s policy did: changed markings, messages.
    pub(super) fn apply_effects(&mut self, h: u32, out: coflowkit_sched::host::Effects) {
        for &g in &out.changed {
            self.apply_marking(g as u32);
        }
        if self.cfg.control_batch {
            self.send_batches(h, &out.send);
        } else {
            for &(to, msg) in &out.send {
                self.send_control(h, to, Held::One(msg), CONTROL_PAYLOAD);
            }
        }
        self.schedule_wake(h);
        self.hosts.as_mut().expect("hosts").out = out;
    }

    /// Flow `f` starts: its policy hears of it and marks it.
    pub(super) fn host_start(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        let c = &self.workload.coflows()[fl.coflow as usize];
        let spec = &c.flows[(f - self.first_flow[fl.coflow as usize]) as usize];
        let flow = HostFlow {
            id: f as u64,
            coflow: fl.coflow,
            coflow_arrival: c.arrival,
            dst: fl.dst,
            size: fl.bytes,
            size_known: spec.size_known,
            deadline: fl.deadline,
        };
        let (src, now, c) = (fl.src, self.now_ns(), fl.coflow);
        self.host_call(src, |p, out| p.start(now, &flow, out));
        if let Some(&total) = self.task_bytes.get(c as usize).filter(|&&b| b > 0) {
            self.host_call(src, |p, out| p.task_sent(now, c, total, out));
            self.move_limit(f);
        }
        self.apply_marking(f);
    }

    /// TAFE: `new` bytes of flow `f`'s task went out; every host with an
    /// active flow of the task hears the task's total (`task_sent`), and
    /// its flows of the task get their limits and tags again. Whether a
    /// flow other than `f` may now send (its limit moved past it).
    pub(super) fn share_task_bytes(&mut self, f: u32, new: u64) {
        let c = self.flows[f as usize].coflow as usize;
        let Some(total) = self.task_bytes.get_mut(c) else {
            return;
        };
        *total += new;
        let (total, now) = (*total, self.now_ns());
        let first = self.first_flow[c];
        let n = self.workload.coflows()[c].flows.len() as u32;
        let active = |fl: &Flow| fl.sender.is_some() && fl.finish.is_none();
        let mut hosts: Vec<u32> = vec![];
        for g in first..first + n {
            let fl = &self.flows[g as usize];
            if active(fl) && !hosts.contains(&fl.src) {
                hosts.push(fl.src);
            }
        }
        for h in hosts {
            self.host_call(h, |p, out| p.task_sent(now, c as u32, total, out));
        }
        for g in first..first + n {
            let fl = &self.flows[g as usize];
            if !active(fl) {
                continue;
            }
            let stopped = fl.sender.as_ref().is_some_and(|s| s.nxt >= s.limit_end);
            self.move_limit(g);
            let fl = &mut self.flows[g as usize];
            if let Some(h) = &self.hosts {
                fl.task = h.policies[fl.src as usize].marking(g as u64).task;
            }
            if g != f && stopped && fl.sender.as_ref().is_some_and(|s| s.nxt < s.limit_end) {
                self.push(self.now, Ev::Flow(FlowEv::Kick(g)));
            }
        }
    }

    /// New bytes of `s` went out: the policy counts them and the sender's
    /// limit moves. Whether the sender stopped at its old limit and may now
    /// go on.
    pub(super) fn host_sent(&mut self, f: u32, seg: &Segment) -> bool {
        let fl = &mut self.flows[f as usize];
        let end = seg.seq + seg.len as u64;
        if end <= fl.host_sent {
            return false;
        }
        let new = end - fl.host_sent;
        fl.host_sent = end;
        let stopped = fl.sender.as_ref().is_some_and(|s| s.nxt >= s.limit_end);
        let (src, now) = (fl.src, self.now_ns());
        self.host_call(src, |p, out| p.sent(now, f as u64, new, out));
        if self.tafe.is_some() {
            self.share_task_bytes(f, new);
        }
        self.move_limit(f);
        let fl = &self.flows[f as usize];
        stopped && fl.sender.as_ref().is_some_and(|s| s.nxt < s.limit_end)
    }

    /// Sets `f`'s sender's limit from its policy: bytes sent + `limit`.
    pub(super) fn move_limit(&mut self, f: u32) {
        let Some(h) = &self.hosts else { return };
        let fl = &mut self.flows[f as usize];
        let limit = h.policies[fl.src as usize].limit(f as u64).max(1);
        if let Some(s) = fl.sender.as_mut() {
            s.limit_end = fl.host_sent.saturating_add(limit);
        }
    }

    /// Applies `f`'s marking: class, transport, pacing.
    pub(super) fn apply_marking(&mut self, f: u32) {
        let Some(h) = &self.hosts else { return };
        let fl = &mut self.flows[f as usize];
        if fl.finish.is_some() || fl.receiver.is_none() {
            return;
        }
        let m = h.policies[fl.src as usize].marking(f as u64);
        fl.task = m.task;
        let new = Settings::of(&m, self.cfg.transport, self.cfg.pacing);
        let old = Settings {
            class: fl.class,
            transport: fl.transport,
            deadline_ps: fl.cc_deadline_ps,
            tafe_share: fl.tafe_share,
            pacing: fl.pacing,
        };
        if new == old {
            return;
        }
        self.hosts.as_mut().expect("hosts").stats.marking_changes += 1;
        let fl = &mut self.flows[f as usize];
        if new.class != fl.class && fl.sender.is_some() {
            fl.stats.class_changes += 1;
            fl.stats.promotions += u64::from(new.class < fl.class);
        }
        fl.class = new.class;
        let Some(s) = fl.sender.as_mut() else {
            // Before its sender: `start` builds it from these.
            fl.transport = new.transport;
            fl.cc_deadline_ps = new.deadline_ps;
            fl.tafe_share = new.tafe_share;
            fl.pacing = new.pacing;
            return;
        };
        if fl.transport.switchable_to(new.transport) {
            let deadline = new.transport.deadline_ps(new.deadline_ps, || {
                fl.deadline.map(|d| fl.start + ps(Time(d.0)))
            });
            s.set_cc(new.transport, deadline, new.tafe_share);
            fl.transport = new.transport;
            fl.cc_deadline_ps = new.deadline_ps;
            fl.tafe_share = new.tafe_share;
        }
        if new.pacing != fl.pacing && !fl.transport.rules().rate_based {
            fl.pacing = new.pacing;
            fl.pacer.set_rate(match new.pacing {
                Pacing::Rate(r) => r,
                Pacing::Off | Pacing::Cwnd => 0,
            });
            s.set_paced(new.pacing != Pacing::Off || self.cfg.tsq.is_some());
            self.push(self.now, Ev::Flow(FlowEv::Kick(f)));
        }
    }

    /// Arms host `h`'s wake-up at what its policy asks (lazily: an old
    /// event finds it not due).
    pub(super) fn schedule_wake(&mut self, h: u32) {
        let hosts = self.hosts.as_mut().expect("hosts");
        let at = hosts.policies[h as usize]
            .wake_at()
            .map(|t| ps(t).max(self.now));
        if at != hosts.wake_due[h as usize] {
            hosts.wake_due[h as usize] = at;
            if let Some(at) = at {
                self.push(at, Ev::Wake(h));
            }
        }
    }

    pub(super) fn wake(&mut self, h: u32) {
        let hosts = self.hosts.as_mut().expect("hosts");
        if hosts.wake_due[h as usize] != Some(self.now) {
            return;
        }
        hosts.wake_due[h as usize] = None;
        hosts.stats.wakes += 1;
        let now = self.now_ns();
        let flows = &self.flows;
        let unacked = |g: u64| {
            flows
                .get(g as usize)
                .and_then(|fl| fl.sender.as_ref())
                .map_or(0, |s| s.remaining())
        };
        let view = EngineView { unacked: &unacked };
        let hosts = self.hosts.as_mut().expect("hosts");
        let mut out = std::mem::take(&mut hosts.out);
        out.clear();
        hosts.policies[h as usize].wake(now, &view, &mut out);
        self.apply_effects(h, out);
    }

    /// The channel from host `from` to host `to` (made on first use).
    pub(super) fn channel(&mut self, from: u32, to: u32) -> u32 {
        let hosts = self.hosts.as_mut().expect("hosts");
        if let Some(&c) = hosts.channel_of.get(&(from, to)) {
            return c;
        }
        let (a, b) = (coflowkit_model::HostId(from), coflowkit_model::HostId(to));
        let key = FlowKey {
            coflow: u64::MAX,
            index: from,
        };
        let mut path = vec![];
        if from != to {
            self.fabric
                .path_into(a, b, self.fabric.path_choice(a, b, key), &mut path);
        }
        let start = self.hops.len() as u32;
        self.hops.extend(path.iter().map(|l| l.0));
        let hosts = self.hosts.as_mut().expect("hosts");
        hosts.channels.push(Channel {
            from,
            to,
            hops: (start, self.hops.len() as u32),
        });
        let c = (hosts.channels.len() - 1) as u32;
        hosts.channel_of.insert((from, to), c);
        c
    }

    /// `control_batch=on`: host `from`'s messages of one call, one packet
    /// per destination (in the order each first appears) of at most
    /// [`CONTROL_BATCH_MAX`], as the testbed's datagrams.
    pub(super) fn send_batches(&mut self, from: u32, send: &[(u32, Control)]) {
        let mut done: Vec<u32> = vec![];
        for &(to, _) in send {
            if done.contains(&to) {
                continue;
            }
            done.push(to);
            let msgs: Vec<Control> = send.iter().filter(|m| m.0 == to).map(|m| m.1).collect();
            for chunk in msgs.chunks(CONTROL_BATCH_MAX) {
                let len = CONTROL_BATCH_HEAD + CONTROL_PAYLOAD * chunk.len() as u32;
                self.send_control(from, to, Held::Many(chunk.to_vec()), len);
            }
        }
    }

    /// Host `from`'s policy sends `msg` to host `to`'s: a class-0 packet
    /// of `len` payload bytes.
    pub(super) fn send_control(&mut self, from: u32, to: u32, msg: Held, len: u32) {
        if to as usize >= self.hosts.as_ref().expect("hosts").policies.len() {
            return;
        }
        let c = self.channel(from, to);
        let hosts = self.hosts.as_mut().expect("hosts");
        hosts.stats.control_sent += msg.len() as u64;
        let slot = hosts.hold(msg);
        let pkt = Packet {
            flow: c,
            seq: slot as u64,
            len,
            wire: len + self.cfg.header_bytes,
            kind: Kind::Control,
            hop: 0,
            class: 0,
            ect: false,
            ce: false,
            ece: false,
            ts: self.now,
            rate: f32::INFINITY,
            rtt_ns: 0,
            prio: 0,
            spc: false,
        };
        if from == to {
            self.push(self.now, Ev::Arrive(super::events::NO_HINT, pkt));
        } else {
            self.send(pkt);
        }
    }

    pub(super) fn receive_control(&mut self, pkt: &Packet) {
        let hosts = self.hosts.as_mut().expect("hosts");
        let ch = hosts.channels[pkt.flow as usize];
        let Some(held) = hosts.take(pkt.seq as u32) else {
            return;
        };
        hosts.stats.control_delivered += held.len() as u64;
        let now = self.now_ns();
        // A packet's messages in one call: its replies share packets too.
        self.host_call(ch.to, |p, out| {
            for msg in held.as_slice() {
                p.receive(now, ch.from, msg, out);
            }
        });
    }
}
