use super::*;
use coflowkit_model::Dur;
use coflowkit_sched::baraat::{demand, virtual_capacity};
use std::collections::BTreeMap;

const G: u64 = 1_000_000_000;
const M: u64 = 1_000_000;
/// 100 us, in ps.
const T: u64 = 100_000_000;

/// Heavy at `heavy_bytes` granted (the hand-worked cases count grants;
/// `task_size_sent_counts_data_not_grants` the default).
fn params(heavy_bytes: u64) -> SpcParams {
    SpcParams {
        interval_ps: T,
        heavy_bytes,
        task_size: TaskSize::Granted,
        share: Share::Equal,
        vc_gain: 0.0,
        vc_max: 10.0,
        stale_intervals: STALE_INTERVALS,
    }
}

/// `h` through `ports` in order; returns it.
fn through(ports: &mut [&mut SpcPort], mut h: SpcHeader, p: &SpcParams) -> SpcHeader {
    for port in ports.iter_mut() {
        port.on_request(&mut h, p);
    }
    h
}

#[test]
fn two_tasks_on_one_port_by_hand() {
    // C = 10 Gbit/s; flow a of task 1 and flow b of task 2 both demand
    // C every round; heavy at 250,000 bytes (two rounds at C for 100 us).
    let p = params(250_000);
    let mut port = SpcPort::new(10 * G);
    // Round 1, b first. b alone: ClassAvlBW = 10G, AvailShare = 10G is
    // not > D = 10G, so NR = 10G / 1; AR = min(10G, 10G - 0) = 10G.
    let b = through(&mut [&mut port], SpcHeader::first(2, false, 10 * G), &p);
    assert_eq!((b.ar[0], b.nr[0]), (10 * G, 10 * G));
    // a (task 1) comes before task 2: class 0 of its own, NR = 10G, but
    // b holds all of C: AR = min(10G, 10G - 10G) = 0.
    let a = through(&mut [&mut port], SpcHeader::first(1, false, 10 * G), &p);
    assert_eq!((a.ar[0], a.nr[0]), (0, 10 * G));
    assert_eq!((port.class_of(1), port.class_of(2)), (Some(0), Some(1)));
    assert!(!port.tick(T, 0, &p));
    // Round 2, b first again. b returns (10G, 10G); task 1 asks 10G
    // before it: ClassAvlBW = 0, NR = 0 / 1 = 0, AR = 0. Then a returns
    // (10G, 0): NR = 10G, AR = 10G - 0 = 10G. Preempted in one round.
    let b = through(&mut [&mut port], b.next(10 * G), &p);
    assert_eq!((b.ar[0], b.nr[0]), (0, 0));
    let a = through(&mut [&mut port], a.next(10 * G), &p);
    assert_eq!((a.ar[0], a.nr[0]), (10 * G, 10 * G));
    assert_eq!(port.allocated(), 10 * G);
    port.tick(T, 0, &p);
    // Round 3: the same, and a has reserved 2 x 10G x 100 us / 8 =
    // 250,000 bytes: heavy, so task 2 joins its class.
    let b = through(&mut [&mut port], b.next(10 * G), &p);
    let a = through(&mut [&mut port], a.next(10 * G), &p);
    assert_eq!((a.ar[0], b.ar[0]), (10 * G, 0));
    assert!(port.is_heavy(1) && !port.is_heavy(2));
    assert_eq!((port.class_of(1), port.class_of(2)), (Some(0), Some(0)));
    port.tick(T, 0, &p);
    // Round 4, a first: class 0 = {1, 2}, D_k = b's 10G, AvailShare = 0:
    // NR = 10G / 2 = 5G, AR = 5G. b: D_k = a's 10G, NR = 5G, AR =
    // min(5G, 10G - 5G) = 5G. FIFO-LM: the two are multiplexed.
    let a = through(&mut [&mut port], a.next(10 * G), &p);
    let b = through(&mut [&mut port], b.next(10 * G), &p);
    assert_eq!((a.ar[0], a.nr[0]), (5 * G, 5 * G));
    assert_eq!((b.ar[0], b.nr[0]), (5 * G, 5 * G));
    // FINs return everything; the port empties and idles.
    through(&mut [&mut port], a.fin(), &p);
    through(&mut [&mut port], b.fin(), &p);
    assert_eq!((port.n_tasks(), port.allocated()), (0, 0));
    assert!(port.tick(T, 0, &p));
}

#[test]
fn a_request_lost_part_way_is_returned_exactly_by_the_next() {
    // Two ports in a row, 10G each; flow a of task 1 and flow b of task 2.
    let p = params(u64::MAX);
    let (mut up, mut down) = (SpcPort::new(10 * G), SpcPort::new(10 * G));
    let a = through(
        &mut [&mut up, &mut down],
        SpcHeader::first(1, false, 4 * G),
        &p,
    );
    let b = through(
        &mut [&mut up, &mut down],
        SpcHeader::first(2, false, 2 * G),
        &p,
    );
    assert_eq!(
        (a.ar, b.ar),
        ([4 * G, 4 * G, 0, 0, 0, 0], [2 * G, 2 * G, 0, 0, 0, 0])
    );
    // a's next request (6G) crosses `up` and is lost before `down`: `up`
    // holds 6G for it, `down` still 4G.
    let lost = through(&mut [&mut up], a.next(6 * G), &p);
    assert_eq!(lost.hop, 1);
    assert_eq!((up.allocated(), down.allocated()), (8 * G, 6 * G));
    // The one after returns to each port what it holds: 6G to `up`, 4G to
    // `down` (a header with one previous demand would return 6G to both).
    let again = lost.next(3 * G);
    assert_eq!(again.prev_demand[..2], [6 * G, 4 * G]);
    assert_eq!(again.prev_ar[..2], [6 * G, 4 * G]);
    let a = through(&mut [&mut up, &mut down], again, &p);
    assert_eq!(a.ar[..2], [3 * G, 3 * G]);
    assert_eq!((up.allocated(), down.allocated()), (5 * G, 5 * G));
    // Both FINs empty both ports: nothing leaked.
    through(&mut [&mut up, &mut down], a.fin(), &p);
    through(&mut [&mut up, &mut down], b.fin(), &p);
    assert_eq!((up.n_tasks(), down.n_tasks()), (0, 0));
    assert_eq!((up.allocated(), down.allocated()), (0, 0));
}

/// Registers a flow of each task in `ids` (demand 0).
fn arrive(port: &mut SpcPort, ids: &[u64], p: &SpcParams) -> Vec<SpcHeader> {
    ids.iter()
        .map(|&id| through(&mut [&mut *port], SpcHeader::first(id, false, 0), p))
        .collect()
}

fn classes(port: &SpcPort, ids: &[u64]) -> Vec<Option<u32>> {
    ids.iter().map(|&id| port.class_of(id)).collect()
}

#[test]
fn classes_as_tasks_arrive_finish_and_turn_heavy() {
    // Heavy at 100,000 bytes: one round at 8 Gbit/s.
    let p = params(100_000);
    let mut port = SpcPort::new(10 * G);
    let hs = arrive(&mut port, &[1, 2, 3], &p);
    assert_eq!(classes(&port, &[1, 2, 3]), [Some(0), Some(1), Some(2)]);
    // The host says task 1 is heavy: it shares class 0 with task 2.
    let mut h1 = hs[0].next(0);
    h1.heavy = true;
    let h1 = through(&mut [&mut port], h1, &p);
    assert_eq!(classes(&port, &[1, 2, 3]), [Some(0), Some(0), Some(1)]);
    // Task 2 finishes: task 3 moves up to share class 0 with task 1.
    through(&mut [&mut port], hs[1].fin(), &p);
    assert_eq!(classes(&port, &[1, 2, 3]), [Some(0), None, Some(0)]);
    // Task 3 asks 9G in class {1, 3}: AvailShare = 10G - 0 > 9G, so NR =
    // AR = 9G, which reserves 9G x 100 us / 8 = 112,500 bytes: heavy too,
    // and task 4, arriving, joins the run {1, 3, 4}; task 5 after the
    // light 4 is class 1.
    let h3 = through(&mut [&mut port], hs[2].next(9 * G), &p);
    assert_eq!((h3.ar[0], h3.nr[0]), (9 * G, 9 * G));
    assert!(port.is_heavy(3));
    arrive(&mut port, &[4, 5], &p);
    assert_eq!(
        classes(&port, &[1, 3, 4, 5]),
        [Some(0), Some(0), Some(0), Some(1)]
    );
    // Task 1 finishes: {3, 4}, {5}.
    through(&mut [&mut port], h1.fin(), &p);
    assert_eq!(classes(&port, &[3, 4, 5]), [Some(0), Some(0), Some(1)]);
    // Ten more light tasks: classes 2..11.
    arrive(&mut port, &(10..20).collect::<Vec<_>>(), &p);
    assert_eq!(port.class_of(19), Some(11));
    assert_eq!(port.class_of(10), Some(2));
    assert_eq!(port.class_of(99), None);
}

#[test]
fn a_flow_bottlenecked_downstream_frees_upstream_bandwidth() {
    // Algorithm 2 closing the loop (4.3.3): flow a (task 1) crosses P1
    // then P2; flow c (task 0) takes all of P2; flow b (task 2) shares P1
    // with a. delta = 10 Mbit/s; demands follow Algorithm 2 (NIC 10G,
    // plenty buffered).
    let p = params(u64::MAX);
    let delta = 10e6;
    let next = |h: &SpcHeader| {
        let d = demand(
            10e9,
            f64::INFINITY,
            Some((h.demand as f64, h.min_nr() as f64)),
            delta,
        );
        h.next(d as u64)
    };
    let (mut p1, mut p2) = (SpcPort::new(10 * G), SpcPort::new(10 * G));
    // Round 1. c: 10G at P2. a: 10G at P1, but at P2 task 0's 10G comes
    // first: NR = AR = 0. b: after a's 10G at P1, nothing.
    let c = through(&mut [&mut p2], SpcHeader::first(0, false, 10 * G), &p);
    let a = through(
        &mut [&mut p1, &mut p2],
        SpcHeader::first(1, false, 10 * G),
        &p,
    );
    let b = through(&mut [&mut p1], SpcHeader::first(2, false, 10 * G), &p);
    assert_eq!(
        (a.ar, a.nr),
        ([10 * G, 0, 0, 0, 0, 0], [10 * G, 0, 0, 0, 0, 0])
    );
    assert_eq!(
        (a.min_ar(), a.min_nr(), b.min_ar(), c.min_ar()),
        (0, 0, 0, 10 * G)
    );
    // Round 2. a and b were bottlenecked (least NR 0 < 10G): demand 0 +
    // delta = 10M. At P1 a's 10M fits (NR = D = 10M); b, after a's 10M,
    // has AvailShare = 9.99G > 10M: NR = AR = its own 10M.
    let c = through(&mut [&mut p2], next(&c), &p);
    let a = through(&mut [&mut p1, &mut p2], next(&a), &p);
    let b = through(&mut [&mut p1], next(&b), &p);
    assert_eq!((a.demand, b.demand, c.demand), (10 * M, 10 * M, 10 * G));
    assert_eq!((a.ar[0], a.nr[0], a.ar[1]), (10 * M, 10 * M, 0));
    assert_eq!((b.ar[0], b.nr[0]), (10 * M, 10 * M));
    // Round 3. b's least NR equals its demand: back to the NIC's 10G. P1
    // gives it ClassAvlBW = 10G - 10M = 9.99G (work conservation: a asks
    // only what P2 lets it send, plus delta); a stays at 10M.
    through(&mut [&mut p2], next(&c), &p);
    let a = through(&mut [&mut p1, &mut p2], next(&a), &p);
    let b = through(&mut [&mut p1], next(&b), &p);
    assert_eq!(a.demand, 10 * M);
    assert_eq!((b.demand, b.ar[0], b.nr[0]), (10 * G, 9_990 * M, 9_990 * M));
    assert_eq!(p1.allocated(), 10 * G);
}

#[test]
fn stale_tasks_leave_and_the_port_idles() {
    let p = params(u64::MAX);
    let mut port = SpcPort::new(10 * G);
    let a = through(&mut [&mut port], SpcHeader::first(1, false, 4 * G), &p);
    let b = through(&mut [&mut port], SpcHeader::first(2, false, 4 * G), &p);
    assert_eq!((a.ar[0], b.ar[0]), (4 * G, 4 * G));
    // Task 1 refreshes every interval; task 2's FIN is lost. After two
    // whole intervals without a request task 2 is dropped, its 4G freed.
    port.on_arrival(1500);
    assert!(!port.tick(T, 0, &p));
    let a = through(&mut [&mut port], a.next(4 * G), &p);
    assert!(!port.tick(T, 0, &p));
    assert_eq!(port.n_tasks(), 2);
    let a = through(&mut [&mut port], a.next(4 * G), &p);
    assert!(!port.tick(T, 0, &p));
    assert_eq!((port.n_tasks(), port.stats.expired), (1, 1));
    assert_eq!(port.allocated(), 4 * G);
    // A late request of task 2 counts as its flow's first again (nothing
    // returned): it gets what task 1 leaves.
    let b = through(&mut [&mut port], b.next(8 * G), &p);
    assert_eq!((b.ar[0], b.nr[0]), (6 * G, 6 * G));
    through(&mut [&mut port], a.fin(), &p);
    through(&mut [&mut port], b.fin(), &p);
    // Idle needs a whole interval with nothing arriving and no queue.
    port.on_arrival(40);
    assert!(!port.tick(T, 0, &p));
    assert!(!port.tick(T, 1500, &p));
    assert!(port.tick(T, 0, &p));
}

#[test]
fn virtual_capacity_by_hand() {
    // C = 10G, gain 0.5, at most 2C; intervals of 100 us.
    let p = SpcParams {
        vc_gain: 0.5,
        vc_max: 2.0,
        ..params(u64::MAX)
    };
    let mut port = SpcPort::new(10 * G);
    // A flow of task 1 asks 12G and gets C (with no task, Cv stays C).
    let h = through(&mut [&mut port], SpcHeader::first(1, false, 12 * G), &p);
    assert_eq!((h.ar[0], h.nr[0]), (10 * G, 10 * G));
    // 62,500 bytes in 100 us = 5 Gbit/s, no queue: Cv = 10 + 0.5 x 5.
    port.on_arrival(62_500);
    port.tick(T, 0, &p);
    assert_eq!(port.vcap, 12_500 * M);
    // 150,000 bytes (12G) and 12,500 queued (1G over T): spare = -3G,
    // Cv = 12.5 - 1.5 = 11G.
    port.on_arrival(150_000);
    port.tick(T, 12_500, &p);
    assert_eq!(port.vcap, 11 * G);
    // Algorithm 1 uses Cv: the flow asking 12G again gets 11G.
    let h = through(&mut [&mut port], h.next(12 * G), &p);
    assert_eq!((h.ar[0], h.nr[0]), (11 * G, 11 * G));
    // 20G offered: Cv = 11 - 5 = 6, floored at C.
    port.on_arrival(250_000);
    port.tick(T, 0, &p);
    assert_eq!(port.vcap, 10 * G);
    // An interval in which the task's flow sent nothing raises it again,
    // at most to 2C.
    let mut h = h;
    for _ in 0..10 {
        h = through(&mut [&mut port], h.next(12 * G), &p);
        port.tick(T, 0, &p);
    }
    assert_eq!(port.vcap, 20 * G);
    // Once the port holds no task it is back at C, and idle.
    through(&mut [&mut port], h.fin(), &p);
    assert!(port.tick(T, 0, &p));
    assert_eq!((port.vcap, port.virtual_capacity()), (10 * G, 1e10));
}

#[test]
fn an_idle_port_returns_to_c_and_stops_its_timer() {
    let p = SpcParams {
        vc_gain: 0.5,
        ..params(u64::MAX)
    };
    let mut port = SpcPort::new(10 * G);
    // A task whose flow is held elsewhere sends nothing: Cv winds up to
    // vc_max x C while the port holds it.
    let mut h = through(&mut [&mut port], SpcHeader::first(1, false, G), &p);
    for _ in 0..20 {
        assert!(!port.tick(T, 0, &p));
        h = through(&mut [&mut port], h.next(G), &p);
    }
    assert_eq!(port.vcap, 100 * G);
    // Its FIN leaves the port with no task: at the next tick Cv = C and
    // the port is idle, so the engine stops its timer.
    through(&mut [&mut port], h.fin(), &p);
    assert!(port.tick(T, 0, &p));
    assert_eq!(port.vcap, 10 * G);
    // Idle ticks keep it there (before, an idle port rose to 10 C and
    // never reported idle).
    for _ in 0..5 {
        assert!(port.tick(T, 0, &p));
    }
    assert_eq!(port.vcap, 10 * G);
    // A lost FIN: the task goes stale, and the port resets as it drops it.
    let h = through(&mut [&mut port], SpcHeader::first(2, false, G), &p);
    assert_eq!(h.ar[0], G);
    for _ in 0..STALE_INTERVALS {
        assert!(!port.tick(T, 0, &p));
    }
    assert!(port.vcap > 10 * G);
    assert!(port.tick(T, 0, &p));
    assert_eq!((port.n_tasks(), port.vcap), (0, 10 * G));
}

/// The port and the flow level (`coflowkit_sched::baraat`, which calls
/// `virtual_capacity` after each round with the rate offered to a link, and
/// with `None` for a link with no flow) give the same `Cv` sequence for
/// the same inputs: per interval, whether the link carries a task and the
/// rate offered to it.
#[test]
fn the_port_and_the_flow_level_compute_one_cv_sequence() {
    let p = SpcParams {
        vc_gain: 0.3,
        vc_max: 4.0,
        ..params(u64::MAX)
    };
    let c = 10 * G;
    let mut port = SpcPort::new(c);
    let mut flow_level = c as f64;
    let mut h: Option<SpcHeader> = None;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut seen = [0u32; 3];
    for i in 0..400 {
        // Some intervals with no task at all (the link has no flow).
        let busy = rng.below(8) != 0;
        h = match (h, busy) {
            (None, true) => Some(through(&mut [&mut port], SpcHeader::first(1, false, G), &p)),
            (Some(x), true) => Some(through(&mut [&mut port], x.next(G), &p)),
            (Some(x), false) => {
                through(&mut [&mut port], x.fin(), &p);
                None
            }
            (None, false) => None,
        };
        // Offered: 0 to 25 Gbit/s, in whole bytes per interval.
        let bytes = if busy { rng.below(312_500) } else { 0 };
        port.on_arrival(bytes as u32);
        port.tick(T, 0, &p);
        let offered = busy.then_some((bytes * 8 * 10_000) as f64);
        flow_level = virtual_capacity(flow_level, c as f64, offered, p.vc_gain, p.vc_max);
        assert_eq!(port.virtual_capacity(), flow_level, "interval {i}");
        assert_eq!(port.vcap, flow_level.round() as u64, "interval {i}");
        seen[if !busy {
            0
        } else if flow_level > c as f64 {
            1
        } else {
            2
        }] += 1;
    }
    // Idle resets, raised capacities and floors at C were all exercised.
    assert!(seen.iter().all(|&n| n > 20), "{seen:?}");
}

#[test]
fn task_size_sent_counts_data_not_grants() {
    let p = SpcParams {
        task_size: TaskSize::Sent,
        ..params(1_000_000)
    };
    let mut port = SpcPort::new(10 * G);
    // Task 1 is granted 10G a request, 125 KB an interval, for 20
    // intervals (2.5 MB): not heavy, as its flow sent nothing here.
    let mut h = through(&mut [&mut port], SpcHeader::first(1, false, 10 * G), &p);
    for _ in 0..20 {
        port.tick(T, 0, &p);
        h = through(&mut [&mut port], h.next(10 * G), &p);
    }
    assert!(!port.is_heavy(1));
    // Its data: heavy once the payload reaches 1 MB; a task the port does
    // not hold is not counted.
    for _ in 0..684 {
        port.on_data(1, 1460, &p);
        port.on_data(7, 1460, &p);
    }
    assert!(!port.is_heavy(1));
    port.on_data(1, 1460, &p);
    assert!(port.is_heavy(1));
    assert_eq!(port.n_tasks(), 1);
    // With `granted` the grants count and data does not: 8 grants of
    // 125 KB make it heavy.
    let p = SpcParams {
        task_size: TaskSize::Granted,
        ..p
    };
    let mut port = SpcPort::new(10 * G);
    let mut h = through(&mut [&mut port], SpcHeader::first(1, false, 10 * G), &p);
    port.on_data(1, 1_000_000, &p);
    for _ in 0..6 {
        h = through(&mut [&mut port], h.next(10 * G), &p);
    }
    assert!(!port.is_heavy(1));
    through(&mut [&mut port], h.next(10 * G), &p);
    assert!(port.is_heavy(1));
}

#[test]
fn header_beyond_six_switches_passes_unstamped() {
    let p = params(u64::MAX);
    let mut ports: Vec<SpcPort> = (0..7).map(|_| SpcPort::new(10 * G)).collect();
    let mut refs: Vec<&mut SpcPort> = ports.iter_mut().collect();
    let h = through(&mut refs, SpcHeader::first(1, false, G), &p);
    assert_eq!((h.hop, h.min_ar(), h.min_nr()), (7, G, G));
    assert_eq!(ports[6].stats.unstamped, 1);
    assert_eq!(ports[6].n_tasks(), 0);
    // Absurd demands are capped, so sums cannot overflow: two flows of
    // one task asking u64::MAX share C (AvailShare = C - 2^48 is 0).
    let mut port = SpcPort::new(10 * G);
    let a = through(&mut [&mut port], SpcHeader::first(1, false, u64::MAX), &p);
    let b = through(&mut [&mut port], SpcHeader::first(1, false, u64::MAX), &p);
    assert_eq!((a.ar[0], b.ar[0], b.nr[0]), (10 * G, 0, 5 * G));
    // a asks again: it returns u64::MAX capped, 2^48, leaving b's 2^48:
    // AvailShare = 0, NR = C / 2, AR = C / 2 (b holds nothing).
    let a = through(&mut [&mut port], a.next(u64::MAX), &p);
    assert_eq!((a.ar[0], port.allocated()), (5 * G, 5 * G));
    // No feedback at all: the sender keeps its rate.
    let none = SpcHeader::first(1, false, G);
    assert_eq!((none.min_ar(), none.min_nr()), (u64::MAX, u64::MAX));
}

#[test]
fn parameters_from_the_baraat_spec() {
    let c = BaraatConfig {
        threshold: 1e6 + 0.5,
        rtt: Dur::from_micros(100),
        ..BaraatConfig::default()
    };
    let p = SpcParams::of_baraat(&c);
    assert_eq!((p.interval_ps, p.heavy_bytes), (T, 1_000_001));
    assert_eq!(p.share, Share::Equal);
    let p = SpcParams::of_baraat(&BaraatConfig::default());
    assert_eq!(p.heavy_bytes, u64::MAX);
}

/// The slow reference: the same rules over a map of tasks, every sum by a
/// scan.
#[derive(Default)]
struct Reference {
    /// id -> (demand, alloc, flows, reserved, heavy, seen).
    tasks: BTreeMap<u64, (u64, u64, u32, u64, bool, u64)>,
    epoch: u64,
}

impl Reference {
    fn classes(&self) -> BTreeMap<u64, u32> {
        let mut out = BTreeMap::new();
        let (mut k, mut first, mut after_heavy) = (0u32, true, false);
        for (&id, t) in &self.tasks {
            if !first && !after_heavy {
                k += 1;
            }
            first = false;
            out.insert(id, k);
            after_heavy = t.4;
        }
        out
    }

    fn allocated(&self) -> u64 {
        self.tasks.values().map(|t| t.1).sum()
    }

    fn request(&mut self, cap: u64, h: &mut SpcHeader, p: &SpcParams) {
        let hop = h.hop as usize;
        h.hop += 1;
        let known = self.tasks.contains_key(&h.task);
        if h.request == Request::Fin {
            if let Some(t) = self.tasks.get_mut(&h.task) {
                t.0 -= h.prev_demand[hop].min(t.0);
                t.1 -= h.prev_ar[hop].min(t.1);
                t.2 -= 1;
                if t.2 == 0 {
                    self.tasks.remove(&h.task);
                }
            }
            h.ar[hop] = 0;
            h.nr[hop] = 0;
            return;
        }
        let epoch = self.epoch;
        let t = self
            .tasks
            .entry(h.task)
            .or_insert((0, 0, 0, 0, false, epoch));
        if known && h.request == Request::Refresh {
            t.0 -= h.prev_demand[hop].min(t.0);
            t.1 -= h.prev_ar[hop].min(t.1);
        } else {
            t.2 += 1;
        }
        t.5 = epoch;
        t.4 |= h.heavy;
        let classes = self.classes();
        let k = classes[&h.task];
        let sum = |f: &dyn Fn(u32) -> bool| -> (u64, u32) {
            self.tasks
                .iter()
                .filter(|(id, _)| f(classes[id]))
                .fold((0, 0), |(d, n), (_, t)| (d + t.0, n + t.2))
        };
        let (higher, _) = sum(&|c| c < k);
        let (class_demand, class_flows) = sum(&|c| c == k);
        let (ar, nr) = feedback(
            FeedbackInput {
                capacity: cap as f64,
                higher_demand: higher as f64,
                class_demand: class_demand as f64,
                class_flows,
                allocated: self.allocated() as f64,
                demand: h.demand as f64,
            },
            p.share,
        );
        let (ar, nr) = (ar as u64, nr as u64);
        h.ar[hop] = ar;
        h.nr[hop] = nr;
        let t = self.tasks.get_mut(&h.task).expect("inserted above");
        t.0 += h.demand;
        t.1 += ar;
        if p.task_size == TaskSize::Granted {
            t.3 += (ar as u128 * p.interval_ps as u128 / 8_000_000_000_000) as u64;
            t.4 |= t.3 >= p.heavy_bytes;
        }
    }

    /// `bytes` of task `task`'s data arrive.
    fn data(&mut self, task: u64, bytes: u64, p: &SpcParams) {
        if let (TaskSize::Sent, Some(t)) = (p.task_size, self.tasks.get_mut(&task)) {
            t.3 += bytes;
            t.4 |= t.3 >= p.heavy_bytes;
        }
    }

    fn tick(&mut self) {
        let now = self.epoch;
        self.tasks.retain(|_, t| now - t.5 < STALE_INTERVALS);
        self.epoch += 1;
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
    }
}

#[test]
fn matches_the_slow_reference() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // What the cases exercised: heavy turns, expiries, shared classes,
    // partial ARs (AR < NR).
    let (mut heavy, mut expired, mut shared, mut partial) = (0, 0, 0, 0);
    for case in 0..2_000 {
        let share = if case % 2 == 0 {
            Share::Equal
        } else {
            Share::Fill
        };
        let task_size = if case % 4 < 2 {
            TaskSize::Granted
        } else {
            TaskSize::Sent
        };
        let p = SpcParams {
            share,
            task_size,
            ..params(100_000 + rng.below(400_000))
        };
        let cap = (1 + rng.below(40)) * G;
        let mut port = SpcPort::new(cap);
        let mut reference = Reference::default();
        // (task, flow) -> its last header.
        let mut flows: BTreeMap<(u64, u64), SpcHeader> = BTreeMap::new();
        for _ in 0..60 {
            let key = (rng.below(8), rng.below(3));
            let d = rng.below(3) * cap / 2 + rng.below(cap);
            let mut h = match (flows.get(&key), rng.below(10)) {
                (_, 0) => {
                    port.tick(T, 0, &p);
                    reference.tick();
                    continue;
                }
                (_, 1) if task_size == TaskSize::Sent => {
                    let bytes = rng.below(200_000);
                    port.on_data(key.0, bytes as u32, &p);
                    reference.data(key.0, bytes, &p);
                    continue;
                }
                (Some(last), 2) => last.fin(),
                (Some(last), _) => last.next(d),
                (None, _) => SpcHeader::first(key.0, false, d),
            };
            h.heavy = rng.below(40) == 0;
            let mut r = h;
            port.on_request(&mut h, &p);
            reference.request(cap, &mut r, &p);
            assert_eq!(h, r, "case {case}");
            partial += (h.ar[0] < h.nr[0]) as u32;
            if h.request == Request::Fin {
                flows.remove(&key);
            } else {
                flows.insert(key, h);
            }
            assert_eq!(port.allocated(), reference.allocated(), "case {case}");
            assert!(port.allocated() <= cap, "case {case}");
            for (id, k) in reference.classes() {
                assert_eq!(port.class_of(id), Some(k), "case {case} task {id}");
            }
            assert_eq!(port.n_tasks(), reference.tasks.len(), "case {case}");
            let classes = reference.classes();
            shared += (classes.len() > 1 + *classes.values().max().unwrap_or(&0) as usize) as u32;
        }
        heavy += port.stats.heavy;
        expired += port.stats.expired;
    }
    assert!(heavy > 1000 && expired > 1000, "{heavy} {expired}");
    assert!(shared > 1000 && partial > 1000, "{shared} {partial}");
}
