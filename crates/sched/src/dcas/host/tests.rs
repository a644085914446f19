//! D-CAS at a host, by hand: the cases of the testbed's Python policy
//! (tests/test_dcas_negotiation.py and tests/test_testbed.py before the
//! policies moved here), times in ns since the origin (the Python's
//! `t0 = 100.0` is 0 here).

use super::*;
use crate::host::NoView;

const MS: u64 = 1_000_000;

fn t(ms_tenths: u64) -> Time {
    // Instants in tenths of a millisecond, to write 100.051 s as 0.51 ms x 100.
    Time(ms_tenths * MS / 10)
}

/// threshold 1,000 bytes: `<1, P>` is class 4 below 4,000, 5 below 16,000,
/// 6 below 64,000, else 7; quantum 100 ms, delta 10 ms, T 500 ms, expiry
/// 40 ms, wait 5 ms.
fn policy(negotiate: bool, keep_own: bool, wire: bool) -> DcasHost {
    let config = DcasConfig {
        delta: Dur(10 * MS),
        threshold: 1000.0,
        starvation: Dur(500 * MS),
        expiry: Dur(40 * MS),
        ..DcasConfig::default()
    };
    DcasHost::new(
        &config,
        &DcasHostConfig {
            wait: Dur(5 * MS),
            quantum: Dur(100 * MS),
            bands: [4000, 16_000, 64_000],
            negotiate,
            keep_own,
            wire,
        },
    )
}

fn flow(id: u64, dst: u32, size: u64, coflow: u32) -> HostFlow {
    HostFlow {
        id,
        coflow,
        coflow_arrival: Time::ZERO,
        dst,
        size,
        size_known: true,
        deadline: None,
    }
}

fn announce(number: u32, coflow: u32, value: u64) -> Control {
    Control {
        kind: ControlKind::Announce,
        number,
        coflow,
        value,
    }
}

fn reply(number: u32, coflow: u32, value: u64) -> Control {
    Control {
        kind: ControlKind::Reply,
        number,
        coflow,
        value,
    }
}

fn count(p: &DcasHost, name: &str) -> u64 {
    p.counts().find(|(n, _)| *n == name).map_or(0, |(_, v)| v)
}

fn class(p: &DcasHost, f: u64) -> u8 {
    p.marking(f).class
}

#[test]
fn the_receiver_replies_psi_of_the_cached_senders_and_forgets_expired_ones() {
    let mut r = policy(true, false, true);
    let mut out = Effects::default();
    r.receive(Time::ZERO, 1, &announce(1, 7, 3000), &mut out);
    assert_eq!(out.send, vec![(1, reply(1, 7, 3000))]);
    out.clear();
    r.receive(Time(MS), 2, &announce(1, 7, 9000), &mut out);
    assert_eq!(out.send, vec![(2, reply(1, 7, 9000))]);
    out.clear();
    // The latest per sender replaces the older; Psi = max over both.
    r.receive(Time(2 * MS), 1, &announce(2, 7, 2500), &mut out);
    assert_eq!(out.send, vec![(1, reply(2, 7, 9000))]);
    out.clear();
    r.receive(Time(3 * MS), 3, &announce(1, 8, 100_000), &mut out);
    assert_eq!(out.send, vec![(3, reply(1, 8, 100_000))]);
    out.clear();
    // Sender 2's entry (at 1 ms) expires 40 ms later: kept before, gone after.
    r.receive(Time(40 * MS), 1, &announce(3, 7, 2000), &mut out);
    assert_eq!(out.send[0].1.value, 9000);
    out.clear();
    r.receive(Time(42 * MS), 1, &announce(4, 7, 2000), &mut out);
    assert_eq!(out.send[0].1.value, 2000);
    // The tick's sweep forgets every coflow whose entries all expired.
    r.wake(Time(200 * MS), &NoView, &mut out);
    assert!(r.cache.is_empty());
    assert_eq!(count(&r, "replies_sent"), 6);
}

#[test]
fn the_sender_negotiates_with_its_receivers_and_takes_phi() {
    let mut s = policy(true, false, true);
    let mut out = Effects::default();
    // Coflow 3: 10,000 bytes to host 2 and (later) 2,000 to host 4.
    s.start(t(500), &flow(1, 2, 10_000, 3), &mut out);
    assert_eq!(out.send, vec![(2, announce(1, 3, 10_000))]);
    assert_eq!(class(&s, 1), 5);
    // The next tick (10 ms) before the round's end (55 ms).
    assert_eq!(s.wake_at(), Some(Time(10 * MS)));
    out.clear();
    s.start(t(500), &flow(2, 4, 2_000, 3), &mut out);
    assert!(out.send.is_empty());
    assert_eq!(class(&s, 2), 5);
    // The 60 ms tick: round 1 is past its wait with no reply: <1, d>.
    s.wake(t(600), &NoView, &mut out);
    assert!(out.changed.is_empty());
    assert_eq!(
        (count(&s, "fallback"), count(&s, "replies_missing")),
        (1, 1)
    );
    assert_eq!(
        out.send,
        vec![(2, announce(2, 3, 12_000)), (4, announce(2, 3, 12_000))]
    );
    out.clear();
    s.receive(t(610), 2, &reply(2, 3, 12_000), &mut out);
    assert!(out.changed.is_empty());
    // Host 4 caches another sender with 70,000 left: max, class 7.
    s.receive(t(620), 4, &reply(2, 3, 70_000), &mut out);
    assert_eq!(out.changed, vec![1, 2]);
    assert_eq!((class(&s, 1), class(&s, 2)), (7, 7));
    assert_eq!(
        (count(&s, "negotiated"), count(&s, "changed_queue")),
        (1, 1)
    );
    assert_eq!(
        s.raised(),
        &[Raised {
            at: t(620),
            coflow: 3,
            d: 12_000,
            p: 70_000,
            class: 7
        }]
    );
    assert_eq!(s.rounds(), &[Dur(10 * MS), Dur(2 * MS)]);
    out.clear();
    // Decided: a later reply and one to an older round are late.
    s.receive(t(630), 4, &reply(2, 3, 1), &mut out);
    s.receive(t(630), 4, &reply(1, 3, 1), &mut out);
    assert_eq!(count(&s, "replies_late"), 2);
    assert_eq!(class(&s, 1), 7);
    // The 70 ms tick: only host 2 answers before the wait is over.
    s.wake(t(700), &NoView, &mut out);
    assert_eq!(out.send.len(), 2);
    assert_eq!(s.wake_at(), Some(t(750)));
    s.receive(t(710), 2, &reply(3, 3, 15_000), &mut out);
    out.clear();
    s.wake(t(740), &NoView, &mut out);
    assert!(out.changed.is_empty());
    assert_eq!(class(&s, 1), 7);
    s.wake(t(750), &NoView, &mut out);
    assert_eq!(out.changed, vec![1, 2]);
    assert_eq!(class(&s, 1), 5);
    assert_eq!(
        (count(&s, "replies_missing"), count(&s, "negotiated")),
        (2, 2)
    );
}

#[test]
fn lost_replies_keep_the_senders_own_class_and_small_ones_go_fifo() {
    let mut s = policy(true, false, true);
    let mut out = Effects::default();
    s.start(Time::ZERO, &flow(1, 0, 20_000, 0), &mut out);
    assert_eq!((class(&s, 1), out.send.len()), (6, 1));
    for k in 1..=3 {
        out.clear();
        s.wake(Time(10 * MS * k), &NoView, &mut out);
        assert_eq!((class(&s, 1), out.send.len()), (6, 1));
    }
    s.wake(Time(100 * MS), &NoView, &mut out);
    assert!(count(&s, "fallback") >= 4);
    assert_eq!(count(&s, "negotiated"), 0);
    // The subcoflow ends with a round open: dropped, its reply late.
    out.clear();
    s.wake(Time(110 * MS), &NoView, &mut out);
    assert_eq!(out.send.len(), 1);
    s.finish(Time(110 * MS), 1, &mut out);
    assert_eq!(count(&s, "dropped_rounds"), 1);
    s.receive(Time(111 * MS), 0, &reply(12, 0, 99_999), &mut out);
    assert_eq!(count(&s, "replies_late"), 1);
    // Small subcoflows are FIFO by age and do not negotiate.
    out.clear();
    s.start(Time(200 * MS), &flow(2, 0, 500, 1), &mut out);
    assert_eq!((class(&s, 2), out.send.len()), (1, 0));
    // Without negotiation: the sender's own <1, d>, no message.
    let mut off = policy(false, false, true);
    off.start(Time::ZERO, &flow(1, 0, 20_000, 0), &mut out);
    out.clear();
    off.wake(Time(10 * MS), &NoView, &mut out);
    assert_eq!(out, Effects::default());
    assert_eq!(class(&off, 1), 6);
}

#[test]
fn keep_own_negotiates_but_keeps_the_senders_class() {
    let mut s = policy(true, true, true);
    let mut out = Effects::default();
    s.start(t(500), &flow(1, 2, 10_000, 3), &mut out);
    assert_eq!((out.send.len(), class(&s, 1)), (1, 5));
    out.clear();
    s.receive(t(510), 2, &reply(1, 3, 70_000), &mut out);
    assert!(out.changed.is_empty());
    assert_eq!(class(&s, 1), 5);
    assert_eq!((count(&s, "negotiated"), count(&s, "raised_value")), (1, 1));
}

/// A socket that holds `n` bytes of every flow.
struct Holds(u64);
impl HostView for Holds {
    fn unacked(&self, _flow: u64) -> u64 {
        self.0
    }
}

#[test]
fn bytes_left_and_service_are_counted_on_the_wire() {
    let mut wire = policy(false, false, true);
    let mut written = policy(false, false, false);
    let mut out = Effects::default();
    for p in [&mut wire, &mut written] {
        p.start(Time::ZERO, &flow(1, 2, 10_000, 3), &mut out);
        assert_eq!(class(p, 1), 5);
        p.sent(Time::ZERO, 1, 9_500, &mut out);
        p.wake(Time(10 * MS), &Holds(9_000), &mut out);
    }
    // 500 to write and 9,000 in the socket: still large.
    assert_eq!(class(&wire, 1), 5);
    // 500 left at the socket: small, FIFO by age.
    assert_eq!(class(&written, 1), 3);
    // Nothing acknowledged since 10 ms: starved after T = 500 ms.
    wire.wake(Time(300 * MS), &Holds(9_000), &mut out);
    assert_eq!(class(&wire, 1), 5);
    wire.wake(Time(520 * MS), &Holds(9_000), &mut out);
    assert_eq!(class(&wire, 1), 4);
    wire.wake(Time(530 * MS), &Holds(8_000), &mut out);
    assert_eq!(class(&wire, 1), 5);
    assert_eq!(wire.runs()[&3], [5, 1]);
    assert_eq!(written.runs()[&3], [1, 0]);
}

#[test]
fn small_fifo_by_age_and_large_by_bytes_left_without_negotiation() {
    let mut p = policy(false, false, true);
    let mut out = Effects::default();
    p.start(t(500), &flow(1, 1, 500, 0), &mut out);
    p.start(t(500), &flow(2, 2, 20_000, 1), &mut out);
    assert_eq!((class(&p, 1), class(&p, 2)), (3, 6));
    p.sent(t(500), 2, 16_000, &mut out);
    p.wake(t(1500), &NoView, &mut out);
    assert_eq!(out.changed, vec![1, 2]);
    assert_eq!((class(&p, 1), class(&p, 2)), (2, 5));
    out.clear();
    p.sent(t(1500), 2, 3_500, &mut out);
    p.wake(t(1600), &NoView, &mut out);
    assert_eq!(out.changed, vec![2]);
    assert_eq!((class(&p, 1), class(&p, 2)), (2, 2));
    let mut p2 = policy(false, false, true);
    p2.start(Time::ZERO, &flow(3, 2, 1_000_000, 2), &mut out);
    assert_eq!(class(&p2, 3), 7);
    // No byte acknowledged for longer than T: <1, 0>, class 4.
    p2.wake(Time(600 * MS), &Holds(0), &mut out);
    assert_eq!(class(&p2, 3), 4);
    p2.finish(Time(600 * MS), 3, &mut out);
    assert!(p2.subs.is_empty());
}

#[test]
fn the_registry_builds_it_from_the_dcas_spec_and_checks_the_host_keys() {
    use crate::registry::build_host;
    use crate::spec::SchedulerSpec;
    let ctx = HostContext {
        host: 0,
        n_hosts: 4,
        nic_bps: 1e9,
        rtt: Dur(100_000),
    };
    let hints = WorkloadHints::default();
    let spec = "dcas:threshold=1000;delta=10ms;t=20ms;expiry=40ms;wait=8ms;age=5ms;\
                desired=bands:2000/50000/1000000";
    let p = build_host(&SchedulerSpec::parse(spec).unwrap(), &hints, &ctx).unwrap();
    let d = p.as_any().downcast_ref::<DcasHost>().unwrap();
    assert!(d.negotiates());
    assert_eq!(
        [1999, 2000, 49_999, 50_000, 1_000_000].map(|v| d.large(v)),
        [4, 5, 5, 6, 7]
    );
    let p = build_host(
        &SchedulerSpec::parse("dcas:threshold=1000;loss=1").unwrap(),
        &hints,
        &ctx,
    )
    .unwrap();
    let d = p.as_any().downcast_ref::<DcasHost>().unwrap();
    assert!(!d.negotiates());
    assert_eq!([3999, 4000, 64_000].map(|v| d.large(v)), [4, 5, 7]);
    for (spec, says) in [
        (
            "dcas:delta=10ms;wait=20ms",
            "a round must end before the next tick",
        ),
        ("dcas:desired=bands:1/2", "give 3"),
        ("dcas:count=acked", "'acked' is not wire or written"),
        ("dcas:phi=median", "'median' is not max, min or mean"),
    ] {
        let e = build_host(&SchedulerSpec::parse(spec).unwrap(), &hints, &ctx)
            .err()
            .unwrap();
        assert!(e.to_string().contains(says), "{spec}: {e}");
    }
}

#[test]
fn the_sender_s_clock_is_counted_and_not_read() {
    // Ticks at 10 ms (on time), 34 ms (due at 20: 14 ms late, the 30 ms
    // grid point missed), 40 ms; a large subcoflow from 0 to 45 ms, ending
    // with its one flow, and no byte acknowledged for T = 500 ms: never
    // starving, a round at its start and at each tick.
    let mut p = policy(true, false, true);
    let mut q = policy(true, false, true);
    let mut out = Effects::default();
    // The same subcoflow ticked on time (q): the same decisions.
    for (x, ticks) in [(&mut p, [10, 34, 40]), (&mut q, [10, 20, 30])] {
        x.start(Time::ZERO, &flow(1, 2, 1_000_000, 3), &mut out);
        for at in ticks {
            x.wake(Time(at * MS), &Holds(0), &mut out);
        }
        x.finish(Time(45 * MS), 1, &mut out);
    }
    assert_eq!(p.runs(), q.runs());
    let c = |name| count(&p, name);
    assert_eq!(
        (c("ticks"), c("ticks_late_ns"), c("grid_missed")),
        (3, 14 * MS, 1)
    );
    assert_eq!(c("sub_ticks"), 3);
    // Gaps 24 ms (2.4 x delta) and 6 ms.
    assert_eq!(
        (c("gaps_1"), c("gaps_2"), c("gaps_3"), c("gaps_4plus")),
        (1, 1, 0, 0)
    );
    assert_eq!(c("gap_ns"), 30 * MS);
    assert_eq!((c("large_subs"), c("large_life_ns")), (1, 45 * MS));
    assert_eq!((c("large_life_ticks"), c("large_life_starving")), (3, 0));
    assert_eq!(
        (c("large_life_rounds"), c("large_life_gap_ns")),
        (4, 30 * MS)
    );
    assert_eq!((count(&q, "grid_missed"), count(&q, "gaps_1")), (0, 2));
}
