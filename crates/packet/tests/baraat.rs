//! Baraat at packet level (`--engine packet --scheduler baraat`): the host
//! policy (`coflowkit_sched::baraat::host`) and the Smart Priority Classes
//! at every port (`coflowkit_packet::spc`), wired by the engine
//! (`engine/baraat.rs`). By hand: two tasks on one bottleneck (FIFO, then
//! shared once the first turns heavy); Baraat's Fig. 7 batched requests
//! against fair sharing; a held flow's lost last bytes; and (property
//! test) every byte arrives exactly once, no run stalls, and a run is a
//! pure function of its inputs.

use coflowkit_model::{
    flow, BitsPerSec, CoflowSpec, Dur, Fabric, LeafSpineSpec, Time, TreeSpec, ValidWorkload,
    Workload,
};
use coflowkit_packet::{
    packet_schedulers, simulate, simulate_scheduled, PacketConfig, PacketResult, Via,
};
use coflowkit_sched::SchedulerSpec;
use proptest::prelude::*;

fn workload(fabric: &Fabric, coflows: Vec<CoflowSpec>) -> ValidWorkload {
    Workload {
        n_hosts: fabric.n_hosts(),
        coflows,
    }
    .validate(fabric)
    .unwrap()
}

fn cfg(text: &str) -> PacketConfig {
    let mut c = PacketConfig::default();
    c.set_all(text).unwrap();
    c
}

fn scheduled(fabric: &Fabric, w: &ValidWorkload, spec: &str, knobs: &str) -> PacketResult {
    let spec = SchedulerSpec::parse(spec).unwrap();
    simulate_scheduled(fabric, w, &spec, &[], &cfg(knobs), &mut |_| {}).unwrap()
}

/// Each coflow's completion time after its arrival, ms.
fn ccts_ms(r: &PacketResult) -> Vec<f64> {
    r.sim
        .coflows
        .iter()
        .map(|c| (c.finish - c.arrival).0 as f64 / 1e6)
        .collect()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Payload bytes at 1 Gbit/s on the wire, ms (1460 of every 1500 bytes).
fn wire_ms(bytes: u64) -> f64 {
    bytes as f64 * 1500.0 / 1460.0 * 8.0 / 1e6
}

#[test]
fn baraat_runs_by_its_host_policy() {
    assert!(packet_schedulers().contains(&("baraat", Via::HostPolicy)));
}

/// Two tasks into one 1 Gbit/s port, 100 us intervals: task 0 (5 MB from
/// host 0) at 0, task 1 (1 MB from host 1) at 1 ms, both to host 2.
///
/// With `threshold=inf` it is FIFO: task 0 holds the port (its 5 MB take
/// 41.1 ms on the wire at 1 Gbit/s, plus the first request's round trip
/// and the headers' share of the port), task 1 waits and then takes 8.2
/// ms, once its flow learns that its turn has come: held with no nominal
/// share, it asks after 1, 2, 4, 8 and then every 10 intervals
/// (`spc_probe_max=1ms`), so up to 1 ms late (measured: 41.23 and 50.14
/// ms; 41.55 and 49.97 when every request travelled alone and held flows
/// asked every interval). Task 0's requests ride on its data packets
/// (one per interval), task 1's go alone; with `spc_probe_max=0` task 1
/// asks every interval. With `threshold=2MB` task 0 turns heavy
/// at the port once it has reserved 2 MB there (160 grants of 12,500
/// bytes: 16 ms in), and shares its class with task 1 from then: both at
/// half the port, so task 1's 1 MB takes 16.4 ms more: about 32.6 ms, and
/// up to 1 ms more as task 1's held flow asks again (measured: 34.19 ms;
/// 32.93 when it asked every interval).
#[test]
fn the_earlier_task_holds_the_link_until_it_turns_heavy_then_shares() {
    let fabric = Fabric::big_switch(3, BitsPerSec(1e9)).unwrap();
    let w = workload(
        &fabric,
        vec![
            CoflowSpec::new(0, Time(0), vec![flow(0, 2, 5_000_000)]),
            CoflowSpec::new(1, Time::from_millis(1), vec![flow(1, 2, 1_000_000)]),
        ],
    );
    let finish = |r: &PacketResult| -> Vec<f64> {
        r.sim
            .flows
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.finish.0 as f64 / 1e6)
            .collect()
    };
    let fifo = scheduled(&fabric, &w, "baraat:threshold=inf", "buffer=1MB");
    let f = finish(&fifo);
    let t0 = wire_ms(5_000_000);
    assert!(f[0] > t0 && f[0] < t0 + 0.6, "task 0 alone: {f:?}");
    let t1 = f[0] + wire_ms(1_000_000);
    assert!(f[1] > t1 && f[1] < t1 + 1.2, "task 1 after it: {f:?}");
    let s = fifo.spc.unwrap();
    assert_eq!((s.heavy, s.expired, s.lost), (0, 0, 0));
    // Task 0 asks once per 100 us interval while it sends, on its data
    // (Algorithm 1 gets its demand from them: it holds the port); task 1,
    // held for about 40 ms, asks alone about once per ms.
    let alone = s.requests - s.carried;
    assert!(s.carried + 10 > (f[0] * 10.0) as u64, "{s:?}");
    assert!(s.carried < (f[1] * 10.0) as u64 + 20, "{s:?}");
    assert!(alone < 60, "{alone} requests alone: {s:?}");
    // Asking every interval while held, task 1 alone sends about 400.
    let every = scheduled(
        &fabric,
        &w,
        "baraat:threshold=inf",
        "buffer=1MB,spc_probe_max=0",
    );
    let s = every.spc.unwrap();
    let alone_every = s.requests - s.carried;
    assert!(alone_every > 380, "{alone_every} requests alone: {s:?}");
    let f_every = finish(&every);
    assert!(f_every[1] < f[1], "{f_every:?} against {f:?}");

    let lm = scheduled(&fabric, &w, "baraat:threshold=2MB", "buffer=1MB");
    let f = finish(&lm);
    // Task 1 shares from 16 ms, once it asks again (up to 1 ms later).
    assert!(
        f[1] > 32.0 && f[1] < 32.6 + 1.0 + 0.6,
        "task 1 shares from 16 ms: {f:?}"
    );
    // Task 0 ends with the port's total work, 6 MB on the wire.
    assert!(f[0] > wire_ms(6_000_000) && f[0] < wire_ms(6_000_000) + 1.0);
    let s = lm.spc.unwrap();
    // Heavy at host 0's NIC and at the switch's port to host 2.
    assert_eq!((s.heavy, s.expired, s.lost), (2, 0, 0));
    // The port never queued beyond a few packets: no ECN mark, no drop.
    let stats = &lm.flow_stats;
    assert!(stats
        .iter()
        .all(|s| s.drops == 0 && s.ecn_marks == 0 && s.retransmits == 0));
}

/// Flows far smaller than their requests (10 bytes over 100 us ask 0.8
/// Mbit/s; a request is 66 bytes per interval, 5.3 Mbit/s) still finish
/// within a few round trips.
#[test]
fn a_flow_smaller_than_its_requests_still_finishes() {
    let fabric = Fabric::big_switch(2, BitsPerSec(1e9)).unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(
            0,
            Time(0),
            vec![flow(0, 1, 10), flow(0, 1, 50)],
        )],
    );
    let r = scheduled(&fabric, &w, "baraat", "buffer=1MB");
    for f in r.sim.flows.as_ref().unwrap() {
        // The first request's round trip, then the data at its pace.
        assert!((f.finish - f.start).0 < 2_000_000, "{f:?}");
    }
}

/// An 8 x 8 shuffle on 1 Gbit/s, one task: 10 MB into host 0 from every
/// host, 2 to 8 MB elsewhere. Host 0's port carries 80 MB (658 ms on the
/// wire) while host 0 sends at its full share, so the ACKs and echoes of
/// what it sends come into the same port beside its flows' ARs: the ports
/// take them off the capacity they share (`engine/baraat.rs`, "Control
/// traffic"). Without that its queue reached the 1 MB buffer and the task
/// took 871 ms; now nothing is dropped, no queue passes 12 KB, and it
/// takes 715 ms (packet-level `fair`: 682 ms).
#[test]
fn a_shuffle_with_mixed_bottlenecks_does_not_overfill_the_ports() {
    let fabric = Fabric::big_switch(8, BitsPerSec(1e9)).unwrap();
    let mut flows = vec![];
    for s in 0..8u32 {
        for d in 0..8u32 {
            let b = if d == 0 {
                10_000_000
            } else {
                2_000_000 * (1 + u64::from((s + d) % 4))
            };
            flows.push(flow(s, d, b));
        }
    }
    let w = workload(&fabric, vec![CoflowSpec::new(0, Time(0), flows)]);
    let r = scheduled(&fabric, &w, "baraat", "buffer=1MB");
    let cct = ccts_ms(&r)[0];
    assert!(r.flow_stats.iter().all(|s| s.drops == 0));
    // The largest queue stayed below 20 packets (ECN's K at 1 Gbit/s).
    let most = r.ports.iter().map(|p| p.1.max_bytes).max().unwrap();
    assert!(most < 30_000, "{most} bytes queued");
    let wire = wire_ms(80_000_000);
    assert!(
        cct > wire && cct < 1.1 * wire,
        "{cct} ms against {wire} on the wire"
    );
}

/// Baraat's Fig. 7 (5.1, "Batched Requests"): one client reads 400 KB from
/// each of three servers of its rack per task, `n` tasks at once, on
/// 1 Gbit/s links with the testbed's 1 ms RTT (`rtt=1ms`, 250 us per link).
/// The paper: a single task takes about 12 ms (9.6 ms of transmission plus
/// 2 RTTs), the same under Baraat and RCP; with 8 tasks Baraat cuts the
/// mean task completion time by almost 40% against RCP, whose optimized
/// implementation the paper calls an upper bound for fair sharing.
///
/// Here: one task takes 13.2 ms (13.4 ms beside 7 waiting tasks, whose
/// requests take their share of the port); tasks finish one after another
/// (FIFO) 11.4 to 14.0 ms apart (9.9 ms on the wire and up to 4 RTTs to
/// switch). No task turns heavy before its last byte (each is the p80
/// size, 1.2 MB, and a task's size at the client's port counts the bytes
/// that reached it), so the next task's flows start only once they learn
/// of the freed port at their next request and its answer is back. With 8
/// tasks the mean is 59.9 ms, 25% below the fair-sharing bound (every task
/// finishing with the last, 8 x 9.9 ms on the wire, plus one RTT) and 23%
/// below DCTCP (77.4 ms); this engine's RCP (which drops and times out
/// under this incast) would flatter it.
#[test]
fn fig7_batched_requests_finish_in_task_order_near_the_fifo_optimum() {
    let fabric = Fabric::big_switch(4, BitsPerSec(1e9)).unwrap();
    let knobs = "buffer=1MB,host_link_delay=250us";
    let task = wire_ms(1_200_000);
    for n in [1u64, 2, 4, 8] {
        let coflows = (0..n)
            .map(|i| CoflowSpec::new(i, Time(0), (1..4).map(|s| flow(s, 0, 400_000)).collect()))
            .collect();
        let w = workload(&fabric, coflows);
        let b = ccts_ms(&scheduled(&fabric, &w, "baraat:rtt=1ms", knobs));
        // FIFO by task id: each task after the one before.
        assert!(b.windows(2).all(|p| p[0] < p[1]), "n={n}: {b:?}");
        // The paper's 12 ms for one task.
        assert!(b[0] > task + 2.0 && b[0] < task + 4.0, "n={n}: {b:?}");
        // Each later task within 4.5 RTTs of its transmission time.
        for p in b.windows(2) {
            assert!(p[1] - p[0] < task + 4.5, "n={n}: {b:?}");
        }
        let fair_bound = n as f64 * task + 1.0;
        let cut = 1.0 - mean(&b) / fair_bound;
        if n == 8 {
            assert!(cut > 0.24, "n=8: {:.1}% below fair sharing", cut * 100.0);
            let dctcp = ccts_ms(
                &simulate(
                    &fabric,
                    &w,
                    &[],
                    &[],
                    &cfg(&format!("transport=dctcp,{knobs}")),
                    &mut |_| {},
                )
                .unwrap(),
            );
            assert!(mean(&b) < 0.8 * mean(&dctcp), "{b:?} against {dctcp:?}");
        }
    }
}

/// `spc_control=free` takes Baraat's control bytes off the wire and
/// nothing else: on Fig. 7's one task (three 400 KB flows into host 0, no
/// loss) the port into host 0 sends exactly the data, 274 packets of 40
/// header bytes per flow and the payload, while with the default
/// (`wire`) the requests alone and the headers on data packets add their
/// bytes on top.
#[test]
fn spc_control_free_sends_no_control_bytes() {
    let fabric = Fabric::big_switch(4, BitsPerSec(1e9)).unwrap();
    let coflows = vec![CoflowSpec::new(
        0,
        Time(0),
        (1..4).map(|s| flow(s, 0, 400_000)).collect(),
    )];
    let w = workload(&fabric, coflows);
    let into_client = |knobs: &str| {
        let r = scheduled(&fabric, &w, "baraat:rtt=1ms", knobs);
        assert!(
            r.spc.is_some_and(|s| s.requests > 3 && s.carried > 0),
            "{:?}",
            r.spc
        );
        let (_, p) = r
            .ports
            .iter()
            .max_by_key(|(_, p)| p.class_payload.iter().sum::<u64>())
            .unwrap()
            .clone();
        assert_eq!(p.class_payload.iter().sum::<u64>(), 1_200_000);
        assert_eq!(p.drops, 0);
        p.tx_bytes
    };
    let data = 1_200_000 + 3 * 400_000u64.div_ceil(1460) * 40;
    let knobs = "buffer=1MB,host_link_delay=250us";
    assert_eq!(into_client(&format!("{knobs},spc_control=free")), data);
    assert!(into_client(knobs) > data + 3 * 26);
}

/// A flow's FIN left alone in queue 0 and overtook its last data packets
/// queued behind the packet on the wire: the next port returned the flow's
/// rates and, its task's last flow gone, dropped the task, and those
/// packets then reached a port that no longer held their task, went to
/// queue 7 behind every later task's data (ports then kept a queue per
/// class), and waited there until the retransmission timer fired (found by
/// the packet-level Fig. 7 with 100 us intervals, 4 us round trips and
/// held flows asking every interval: tasks 2 to 4 all ended at 44 ms, the
/// second 22 ms late). Now a FIN queues behind its flow's data, and the 8
/// tasks end in order, each within its transmission time and 1.5 ms of
/// the one before, the first within 2 ms of its own (its first packets
/// share the data queue with the other tasks' first, sent before the
/// rates told them apart; measured: 11.5, 22.5, 33.6, 44.1, ... 84.9 ms).
#[test]
fn a_fin_does_not_overtake_its_flows_last_data() {
    let fabric = Fabric::big_switch(4, BitsPerSec(1e9)).unwrap();
    let coflows = (0..8u64)
        .map(|i| CoflowSpec::new(i, Time(0), (1..4).map(|s| flow(s, 0, 400_000)).collect()))
        .collect();
    let w = workload(&fabric, coflows);
    let knobs = "buffer=1MB,host_link_delay=1us,spc_probe_max=0";
    let r = scheduled(&fabric, &w, "baraat:rtt=100us", knobs);
    let b = ccts_ms(&r);
    let task = wire_ms(1_200_000);
    assert!(b[0] < task + 2.0, "{b:?}");
    for p in b.windows(2) {
        assert!(p[1] > p[0] && p[1] - p[0] < task + 1.5, "{b:?}");
    }
}

/// A flow whose sender has sent its last new byte while a request is in
/// flight, and whose echo then says AR 0 (preempted), had its FIN leave at
/// once: its rates returned, it asked no more, so when its lost last
/// packets came due again they waited for a grant that never came, and the
/// run went on forever (found by the packet-level column of
/// docs/reproductions/baraat.md: 5 of 200 uniform tasks never finished).
/// Now such a flow keeps asking, and its FIN leaves with the first request
/// after a grant (or once its receiver has every byte). The case: the
/// tasks of Table 4's uniform run (first 51 of 200, seed 1) into one rack
/// of the 320-host tree, with virtual capacity and 30 KB switch buffers
/// (the overcommitted ARs make the losses: 655 drops); 8 tasks, 320 flows.
#[test]
fn a_held_flow_whose_last_bytes_were_lost_still_finishes() {
    let (fabric, w) = table4_tasks("uniform", 200, |c| {
        c.id.0 <= 50 && (240..280).contains(&c.flows[0].dst.0)
    });
    assert_eq!(w.coflows().len(), 8);
    let spec = SchedulerSpec::parse("baraat:threshold=p80;vc=0.5").unwrap();
    // A stalled run never ends: stop it once it passes a simulated second
    // (the tasks arrive within 2 ms and take about 12 ms each).
    let r = simulate_scheduled(&fabric, &w, &spec, &[], &cfg("buffer=30KB"), &mut |p| {
        assert!(p.now < Time::from_millis(1000), "stalled: {p:?}");
    })
    .unwrap();
    let lost: u64 = r.flow_stats.iter().map(|s| s.drops).sum();
    assert!(lost > 0, "the case needs losses");
    assert!(ccts_ms(&r).iter().all(|&c| c < 100.0), "{:?}", ccts_ms(&r));
}

/// The tasks of Table 4's `sizes` run (`n` tasks, seed 1, load 0.8) on its
/// 320-host tree (2:1 at the ToR) that `keep` keeps.
fn table4_tasks(
    sizes: &str,
    n: u32,
    keep: impl Fn(&CoflowSpec) -> bool,
) -> (Fabric, ValidWorkload) {
    let fabric = Fabric::tree(&TreeSpec {
        pods: 2,
        racks_per_pod: 4,
        hosts_per_rack: 40,
        host_rate: BitsPerSec(1e9),
        tor_oversub: 2.0,
        agg_oversub: 1.0,
    })
    .unwrap();
    let n = n.to_string();
    let params = [
        ("n_tasks", n.as_str()),
        ("sizes", sizes),
        ("load", "0.8"),
        ("pods", "2"),
        ("racks_per_pod", "4"),
        ("hosts_per_rack", "40"),
        ("seed", "1"),
    ];
    let mut all =
        coflowkit_workload::generate_named("baraat", Some("single-stage"), &params).unwrap();
    all.coflows.retain(|c| keep(c));
    let w = all.validate(&fabric).unwrap();
    (fabric, w)
}

/// The tasks of Table 4's analytics run (500 tasks) whose aggregator is in
/// rack `rack`.
fn analytics_rack(rack: u32) -> (Fabric, ValidWorkload) {
    let hosts = rack * 40..rack * 40 + 40;
    table4_tasks("analytics", 500, |c| hosts.contains(&c.flows[0].dst.0))
}

/// Baraat's data waited in a queue per class, chosen as each packet
/// arrived: a packet queued while its task was 8th at a port stayed in the
/// last queue when the tasks before it finished, behind newer tasks that
/// then took the queues above it, until its timer fired or the port
/// drained (found on the analytics run of Figs. 8-9 without loss: 13 of a
/// task's 40 flows waited 150 ms). Now a port keeps one queue of data,
/// first come first served, and the rates order the tasks. The case: the
/// tasks of Table 4's analytics run (500, seed 1) whose aggregator is in
/// rack 2 of the 320-host tree, without loss; no timer fires (nothing is
/// lost, so every timeout would be a packet that waited 10 ms in a queue).
#[test]
fn data_queued_behind_tasks_that_leave_does_not_wait_for_newer_ones() {
    let (fabric, w) = analytics_rack(5);
    let knobs = "buffer=inf,sack=on,rto_undo=on,min_rto=10ms,initial_rto=10ms";
    let r = scheduled(&fabric, &w, "baraat:threshold=p80", knobs);
    let timeouts: u64 = r.flow_stats.iter().map(|s| s.timeouts).sum();
    let stalled = r.flow_stats.iter().filter(|s| s.stalled_ps > 0).count();
    assert_eq!((timeouts, stalled), (0, 0), "{} tasks", w.coflows().len());
}

/// A flow's pacer timed the gap after its last packet again at each new
/// rate, lower ones included: a Baraat flow's last bytes ask for what they
/// need in one interval (118 bytes per 100 us: 9.4 Mbit/s), and the
/// 1,500-byte packet before them was spaced at that rate, 1.3 ms; with
/// 1-byte headers the last byte (80 kbit/s) waited 150 ms, and 15 flows of
/// one task into host 99 with it (found splitting the lossless gap). Now a
/// packet keeps the slot it left with and a lower rate paces the next on
/// (`Pacer::set_rate`). The case: the tasks of the analytics run into rack
/// 2, with 1-byte headers: no flow waits 50 ms for an ACK.
#[test]
fn a_flows_last_bytes_are_not_spaced_at_their_own_small_rate() {
    let (fabric, w) = analytics_rack(2);
    let knobs = "buffer=inf,sack=on,rto_undo=on,header_bytes=1,min_rto=10ms,initial_rto=10ms";
    let r = scheduled(&fabric, &w, "baraat:threshold=p80", knobs);
    let stalled = r.flow_stats.iter().filter(|s| s.stalled_ps > 0).count();
    assert_eq!(stalled, 0, "{} tasks", w.coflows().len());
}

/// A flow: source, destination, bytes, its task (0 to 2), its delay (ns).
type ArbFlow = (u32, u32, u64, u64, u64);

fn arb_flows() -> impl Strategy<Value = (u32, Vec<ArbFlow>)> {
    (2u32..6).prop_flat_map(|hosts| {
        let flows = prop::collection::vec(
            (0..hosts, 0..hosts, 0u64..200_000, 0u64..3, 0u64..2_000_000),
            1..10,
        );
        (Just(hosts), flows)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random tasks (up to 3, each flow in one) on a big switch or a
    /// leaf-spine, with buffers small enough to drop requests and data:
    /// every flow finishes with every byte, no faster than its NIC, and
    /// without loss every byte crosses its receiver's port exactly once;
    /// the same run twice gives the same result.
    #[test]
    fn every_byte_arrives_once_and_runs_repeat(
        (hosts, flows) in arb_flows(),
        leaf_spine in any::<bool>(),
        buffer in prop::sample::select(vec!["6p", "30KB", "1MB"]),
        spec in prop::sample::select(vec![
            "baraat:rtt=50us;threshold=50KB",
            "baraat:rtt=200us;threshold=inf;share=fill",
            "baraat:vc=0.2",
        ]),
    ) {
        let fabric = if leaf_spine {
            Fabric::leaf_spine(&LeafSpineSpec {
                leaves: 2,
                spines: 2,
                hosts_per_leaf: hosts.div_ceil(2),
                host_rate: BitsPerSec(1e9),
                spine_rate: Some(BitsPerSec(1e9)),
            })
            .unwrap()
        } else {
            Fabric::big_switch(hosts, BitsPerSec(1e9)).unwrap()
        };
        let coflows: Vec<CoflowSpec> = (0..3)
            .map(|c| {
                let specs = flows
                    .iter()
                    .filter(|f| f.3 == c)
                    .map(|&(s, d, b, _, t)| flow(s, d, b).delayed(Dur(t)))
                    .collect();
                CoflowSpec::new(c, Time(c * 300_000), specs)
            })
            .filter(|c| !c.flows.is_empty())
            .collect();
        let w = workload(&fabric, coflows);
        let knobs = format!("buffer={buffer},min_rto=1ms,initial_rto=1ms");
        let spec = SchedulerSpec::parse(spec).unwrap();
        let run = || simulate_scheduled(&fabric, &w, &spec, &[], &cfg(&knobs), &mut |_| {});
        let r = run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut total = 0;
        for (i, f) in r.sim.flows.as_ref().unwrap().iter().enumerate() {
            prop_assert!(f.finish >= f.start, "flow {} never finished", i);
            let min = (f.bytes as f64 * 8.0) as u64;
            prop_assert!((f.finish - f.start).0 >= min, "flow {} too fast", i);
            total += f.bytes;
        }
        // Payload that left the ports to hosts (every path ends at one, a
        // host's flow to itself too): every byte at least once, exactly
        // once when nothing was dropped.
        let to_hosts: u64 = (0..fabric.n_hosts())
            .map(|h| {
                let name = fabric.link_name(fabric.downlink(coflowkit_model::HostId(h)));
                let p = r.ports.iter().find(|p| p.0 == name).unwrap().1;
                p.class_payload.iter().sum::<u64>()
            })
            .sum();
        let lossless = r.flow_stats.iter().all(|s| s.drops == 0 && s.retransmits == 0);
        prop_assert!(to_hosts >= total, "{} < {}", to_hosts, total);
        if lossless {
            prop_assert_eq!(to_hosts, total);
        }
        let again = run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&again.sim.flows, &r.sim.flows);
        prop_assert_eq!(again.packets, r.packets);
        prop_assert_eq!(again.spc, r.spc);
    }
}

/// The `q` quantile of `x` (linear between order statistics, as numpy's
/// default).
fn quantile(x: &[f64], q: f64) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Baraat's flow-level model on the same workload: each coflow's
/// completion time after its arrival, ms.
fn flow_level_ccts_ms(fabric: &Fabric, w: &ValidWorkload, spec: &str) -> Vec<f64> {
    let r = coflowkit_sim::Simulation::new(
        fabric.clone(),
        w,
        coflowkit_sched::build(
            &SchedulerSpec::parse(spec).unwrap(),
            &coflowkit_sched::WorkloadHints::of(w),
        )
        .unwrap(),
        coflowkit_sim::SimOptions::default(),
    )
    .run(&mut |_| {})
    .unwrap();
    r.coflows
        .iter()
        .map(|c| (c.finish - c.arrival).0 as f64 / 1e6)
        .collect()
}

/// Partition-aggregate tasks on a 1 Gbit/s switch of 12 hosts: task `i`
/// arrives at `i` x 1.5 ms; its aggregator (host `i mod 12`) queries 5
/// other hosts, each flow 20 KB to 300 KB (a fixed pseudo-random
/// sequence), so about one task in five carries more than 1 MB and the
/// aggregators' downlinks are loaded to about 0.6.
fn aggregation_tasks(fabric: &Fabric, n: u64) -> ValidWorkload {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let coflows = (0..n)
        .map(|i| {
            let agg = (i % 12) as u32;
            let heavy = next() % 5 == 0;
            let flows = (1..6u32)
                .map(|k| {
                    let worker = (agg + k * (1 + (i as u32 % 2))) % 12;
                    let bytes = if heavy { 200_000 } else { 20_000 } + next() % 100_000;
                    flow(worker, agg, bytes)
                })
                .collect();
            CoflowSpec::new(i, Time(i * 1_500_000), flows)
        })
        .collect();
    workload(fabric, coflows)
}

/// Without loss (`buffer=inf`) and without virtual capacity, Baraat's two
/// levels run one model (`spc.rs` calls the flow level's Algorithm 1,
/// virtual capacity step and task-size count); the packet level adds what
/// packets cost. The target is agreement within 5% on the mean and p95
/// task completion time. Measured (flow level: mean 4.79 ms, p95 10.81
/// ms): by default the packet level's mean is 17% above and its p95 8%
/// (held flows that back off to 1 ms between requests learn late that
/// their turn has come, and the headers and requests take 3-4% of the
/// links); with held flows asking every interval 13% and 6%; with no
/// control bytes and 1-byte headers too 6% and 0.5%, which is what the
/// flow level leaves out (on the pages' workloads, the analytics tasks of
/// each rack: within 5%). The bounds pin these numbers so that a change to
/// either level that widens the gap fails here.
#[test]
fn without_loss_the_packet_level_stays_near_the_flow_level() {
    let fabric = Fabric::big_switch(12, BitsPerSec(1e9)).unwrap();
    let w = aggregation_tasks(&fabric, 60);
    let spec = "baraat:threshold=p80";
    let flow = flow_level_ccts_ms(&fabric, &w, spec);
    let (fm, f95) = (mean(&flow), quantile(&flow, 0.95));
    // (packet options, the most the mean and the p95 may be off, relative).
    let cases = [
        ("buffer=inf", 0.19, 0.09),
        ("buffer=inf,spc_probe_max=0", 0.14, 0.07),
        (
            "buffer=inf,spc_probe_max=0,spc_control=free,header_bytes=1",
            0.07,
            0.02,
        ),
    ];
    for (knobs, mean_tol, p95_tol) in cases {
        let packet = ccts_ms(&scheduled(&fabric, &w, spec, knobs));
        let (pm, p95) = (mean(&packet), quantile(&packet, 0.95));
        let off = (pm / fm - 1.0, p95 / f95 - 1.0);
        assert!(
            off.0.abs() < mean_tol && off.1.abs() < p95_tol,
            "{knobs}: mean {fm:.3} / {pm:.3} ms, p95 {f95:.3} / {p95:.3} ms"
        );
    }
}
