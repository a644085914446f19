//! The packet engine end to end: line rate, fair sharing against the
//! flow-level engine, strict priority, incast, pFabric's shortest-first
//! service, and (property test) that every byte arrives and no run stalls.

use coflowkit_model::{
    flow, BitsPerSec, CoflowSpec, Dur, Fabric, FlowSpec, LeafSpineSpec, Time, ValidWorkload,
    Workload,
};
use coflowkit_packet::{simulate, PacketConfig, PacketResult, PortStats};
use proptest::prelude::*;

fn workload(fabric: &Fabric, coflows: Vec<CoflowSpec>) -> ValidWorkload {
    Workload {
        n_hosts: fabric.n_hosts(),
        coflows,
    }
    .validate(fabric)
    .unwrap()
}

/// One coflow of `flows`, arriving at 0.
fn one_coflow(fabric: &Fabric, flows: Vec<FlowSpec>) -> ValidWorkload {
    workload(fabric, vec![CoflowSpec::new(0, Time(0), flows)])
}

fn run(fabric: &Fabric, w: &ValidWorkload, classes: &[u8], cfg: &str) -> PacketResult {
    let mut c = PacketConfig::default();
    c.set_all(cfg).unwrap();
    simulate(fabric, w, classes, &[], &c, &mut |_| {}).unwrap()
}

/// The counters of the port named `name` (its link's name).
fn port(r: &PacketResult, name: &str) -> PortStats {
    r.ports
        .iter()
        .find(|p| p.0 == name)
        .unwrap_or_else(|| panic!("no port {name}"))
        .1
}

fn drops(r: &PacketResult) -> u64 {
    r.flow_stats.iter().map(|s| s.drops).sum()
}

/// `n` senders of `bytes` each into host `n` of a 1 Gbit/s big switch.
fn incast(n: u32, bytes: u64) -> (Fabric, ValidWorkload) {
    let fabric = Fabric::big_switch(n + 1, BitsPerSec(1e9)).unwrap();
    let flows = (0..n).map(|h| flow(h, n, bytes)).collect();
    let w = workload(&fabric, vec![CoflowSpec::new(0, Time(0), flows)]);
    (fabric, w)
}

/// Prints each run's FCTs (seen with `--nocapture`: the numbers the docs quote).
fn print_fcts(runs: &[(&str, &PacketResult)]) {
    for (name, r) in runs {
        let n = r.flow_stats.len();
        eprintln!(
            "{name}: FCT ns {:?}",
            (0..n).map(|i| fct_ns(r, i)).collect::<Vec<_>>()
        );
    }
}

fn fct_ns(r: &PacketResult, i: usize) -> f64 {
    let f = &r.sim.flows.as_ref().unwrap()[i];
    (f.finish - f.start).0 as f64
}

#[test]
fn one_long_flow_runs_at_line_rate() {
    let fabric = Fabric::big_switch(2, BitsPerSec(10e9)).unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(0, Time(0), vec![flow(0, 1, 10_000_000)])],
    );
    for t in ["tcp", "dctcp"] {
        let r = run(&fabric, &w, &[], &format!("transport={t}"));
        // Goodput is line rate x 1460/1500; slow start costs a few RTTs.
        let ideal = 10_000_000.0 * 8.0 / 10.0 * 1500.0 / 1460.0;
        let fct = fct_ns(&r, 0);
        assert!(
            fct > ideal && fct < ideal * 1.05,
            "{t}: {fct} ns against {ideal}"
        );
        assert_eq!(r.flow_stats[0].drops, 0, "{t}");
    }
}

#[test]
fn long_dctcp_flows_share_like_the_flow_level_fair() {
    // Long flows into two hosts, arriving and leaving at different times:
    // DCTCP converges to max-min fair, so each coflow's CCT is within 5%
    // of `fair` at flow level (issue 33).
    let (fabric, w) = long_flows_at_different_times();
    let r = run(&fabric, &w, &[], "transport=dctcp,buffer=1MB");
    assert_ccts_near_fair(&fabric, &w, &r, 0.05);
}

/// Long flows into two hosts of a 10 Gbit/s big switch, arriving and
/// leaving at different times.
fn long_flows_at_different_times() -> (Fabric, ValidWorkload) {
    let fabric = Fabric::big_switch(7, BitsPerSec(10e9)).unwrap();
    let coflows = vec![
        CoflowSpec::new(
            0,
            Time(0),
            vec![flow(0, 5, 20_000_000), flow(1, 5, 20_000_000)],
        ),
        CoflowSpec::new(
            1,
            Time(0),
            vec![flow(2, 5, 30_000_000), flow(3, 6, 10_000_000)],
        ),
        CoflowSpec::new(2, Time(2_000_000), vec![flow(4, 6, 25_000_000)]),
    ];
    let w = workload(&fabric, coflows);
    (fabric, w)
}

/// Each coflow's CCT within `tol` of the flow-level `fair`.
fn assert_ccts_near_fair(fabric: &Fabric, w: &ValidWorkload, r: &PacketResult, tol: f64) {
    let fluid = fair(fabric, w);
    for (p, f) in r.sim.coflows.iter().zip(&fluid.coflows) {
        // The fluid model sends payload at line rate; packets carry 40
        // bytes of headers per 1460.
        let fluid = f.cct().0 as f64 * 1500.0 / 1460.0;
        let got = p.cct().0 as f64;
        assert!(
            (got / fluid - 1.0).abs() < tol,
            "coflow {}: packet {got} ns, fair {fluid} ns",
            p.id
        );
    }
}

#[test]
fn strict_priority_serves_class_0_first() {
    let fabric = Fabric::big_switch(3, BitsPerSec(1e9)).unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(
            0,
            Time(0),
            vec![flow(0, 2, 2_000_000), flow(1, 2, 2_000_000)],
        )],
    );
    let r = run(&fabric, &w, &[1, 0], "transport=dctcp,buffer=1MB");
    let (low, high) = (fct_ns(&r, 0), fct_ns(&r, 1));
    let alone = 2_000_000.0 * 8.0 * 1500.0 / 1460.0;
    assert!(high < alone * 1.1, "class 0: {high} ns, alone {alone}");
    assert!(low > alone * 1.8, "class 1 waited: {low} ns");
}

#[test]
fn a_restarted_timer_expires_rto_after_the_restart_not_at_its_backed_off_instant() {
    // bench/ns3's incast-tcp-64: 64 TCP senders of 64 KB into one 10 Gbit/s
    // port of 300 KB. Flows 13-16 time out at 1.66 ms and again at 3.66 ms
    // (their first resend is dropped; RTO backed off to 4 ms), then new
    // ACKs bring the timer back to 1 ms after the last of them (RFC 6298
    // §5.3, ns-3's rule: rto_reset=ack), and their lost tail needs a third
    // timeout: due at 4.96-5.36 ms. When the engine let the timer fire at
    // its backed-off instant, they finished at 7.66-7.68 ms.
    let fabric = Fabric::big_switch(65, BitsPerSec(10e9)).unwrap();
    let flows = (0..64).map(|h| flow(h, 64, 65_536)).collect();
    let w = workload(&fabric, vec![CoflowSpec::new(0, Time(0), flows)]);
    let cfg = "transport=tcp,min_rto=1ms,initial_rto=1ms,handshake=3s,buffer=300000B,\
               ecn_k=off,host_queue=droptail:200,timestamps=off,rto_reset=ack";
    let r = run(&fabric, &w, &[], cfg);
    let third: Vec<usize> = (0..64).filter(|&i| r.flow_stats[i].timeouts == 3).collect();
    assert_eq!(third, vec![13, 14, 15, 16], "{:?}", r.flow_stats);
    for &i in &third {
        let fct = fct_ns(&r, i);
        assert!(fct > 4.9e6 && fct < 5.4e6, "flow {i}: {fct} ns");
    }
}

#[test]
fn incast_tcp_overflows_the_buffer_dctcp_keeps_it_short() {
    // 16 senders of 300 KB into one 1 Gbit/s port with 100 packets of
    // buffer, first windows of 2 segments (32 packets fit): TCP's slow
    // start overflows the buffer and times out; DCTCP's marks at K = 20
    // keep the queue short and lose nothing (DCTCP §4.2.1-4.2.2).
    let n = 16;
    let (fabric, w) = incast(n, 300_000);
    let tcp = run(&fabric, &w, &[], "transport=tcp,buffer=100p,init_cwnd=2");
    let dctcp = run(&fabric, &w, &[], "transport=dctcp,buffer=100p,init_cwnd=2");
    assert!(drops(&tcp) > 0, "{:?}", tcp.flow_stats);
    assert_eq!(drops(&dctcp), 0, "{:?}", dctcp.flow_stats);
    let downlink = format!("host {n} downlink");
    let port = |r: &PacketResult| port(r, &downlink);
    assert!(port(&dctcp).max_bytes < port(&tcp).max_bytes);
    // Both keep the port busy to the end: with the RFC 6582 timer (reset
    // on the first partial ACK only) TCP's timeouts fall while the other
    // flows still fill the link, and both coflows take 16 x 300 KB at line
    // rate, 39.47 ms.
    assert!(dctcp.sim.coflows[0].cct() <= tcp.sim.coflows[0].cct());
}

#[test]
fn sack_resends_fewer_segments_than_newreno() {
    // bench/ns3's long-tcp-1 in small: one flow of 5 MB at 10 Gbit/s whose
    // own NIC holds 200 packets: slow start overshoots and loses many
    // segments of one window. NewReno finds one hole per round trip and
    // its timeouts resend from the first hole on, also what had arrived;
    // with SACK (RFC 6675) each hole is resent by itself (here 1082 drops
    // and 1861 retransmissions against 207 and 207).
    let fabric = Fabric::big_switch(2, BitsPerSec(10e9)).unwrap();
    let w = one_coflow(&fabric, vec![flow(0, 1, 5_000_000)]);
    let cfg = "transport=tcp,buffer=300KB,host_queue=droptail:200,min_rto=1ms,initial_rto=1ms";
    let newreno = run(&fabric, &w, &[], cfg);
    let sack = run(&fabric, &w, &[], &format!("{cfg},sack=on"));
    let retx = |r: &PacketResult| r.flow_stats.iter().map(|s| s.retransmits).sum::<u64>();
    println!(
        "newreno: {} drops, {} retransmits; sack: {} drops, {} retransmits",
        drops(&newreno),
        retx(&newreno),
        drops(&sack),
        retx(&sack)
    );
    assert!(drops(&sack) > 0, "{:?}", sack.flow_stats);
    assert!(retx(&sack) < retx(&newreno));
    assert!(sack.sim.coflows[0].cct() <= newreno.sim.coflows[0].cct());
    // Off is NewReno: the knob's default changes nothing.
    let off = run(&fabric, &w, &[], &format!("{cfg},sack=off"));
    assert_eq!(retx(&off), retx(&newreno));
    assert_eq!(off.sim.coflows[0].cct(), newreno.sim.coflows[0].cct());
}

#[test]
fn a_host_queue_with_a_bound_and_a_threshold_marks_like_ecn_and_drops_like_droptail() {
    // One 5 MB flow at 10 Gbit/s: its own NIC is its bottleneck (the switch
    // port has the same rate). With host_queue=droptail:40+ecn:10 the NIC
    // is a switch port's kind. DCTCP keeps that queue near K and never
    // reaches the bound: the run is the unbounded ecn:10's to the
    // picosecond. TCP's packets are not ECN-capable: the run is
    // droptail:40's, losses and all, the queue never above 40 packets.
    let fabric = Fabric::big_switch(2, BitsPerSec(10e9)).unwrap();
    let w = one_coflow(&fabric, vec![flow(0, 1, 5_000_000)]);
    let base = "buffer=300KB,min_rto=1ms,initial_rto=1ms";
    let both = "host_queue=droptail:40+ecn:10";
    let fcts = |r: &PacketResult| fct_ns(r, 0);
    let nic = |r: &PacketResult| port(r, "host 0 uplink");
    let dctcp = run(&fabric, &w, &[], &format!("transport=dctcp,{base},{both}"));
    let dctcp_ecn = run(
        &fabric,
        &w,
        &[],
        &format!("transport=dctcp,{base},host_queue=ecn:10"),
    );
    assert!(
        nic(&dctcp).marks > 0 && nic(&dctcp).drops == 0,
        "{:?}",
        nic(&dctcp)
    );
    assert!(nic(&dctcp).max_bytes < 40 * 1500, "{:?}", nic(&dctcp));
    assert_eq!(fcts(&dctcp), fcts(&dctcp_ecn));
    assert_eq!(nic(&dctcp).marks, nic(&dctcp_ecn).marks);
    let tcp = run(&fabric, &w, &[], &format!("transport=tcp,{base},{both}"));
    let tcp_droptail = run(
        &fabric,
        &w,
        &[],
        &format!("transport=tcp,{base},host_queue=droptail:40"),
    );
    assert!(
        nic(&tcp).drops > 0 && nic(&tcp).marks == 0,
        "{:?}",
        nic(&tcp)
    );
    assert!(nic(&tcp).max_bytes <= 40 * 1500, "{:?}", nic(&tcp));
    assert_eq!(fcts(&tcp), fcts(&tcp_droptail));
    assert_eq!(nic(&tcp).drops, nic(&tcp_droptail).drops);
    // A DCTCP sender with a first window over the bound loses at its NIC,
    // which the unbounded marker never does.
    let big = "init_cwnd=60,host_queue=droptail:40+ecn:10";
    let burst = run(&fabric, &w, &[], &format!("transport=dctcp,{base},{big}"));
    assert!(
        nic(&burst).drops > 0 && nic(&burst).marks > 0,
        "{:?}",
        nic(&burst)
    );
}

#[test]
fn tsq_keeps_a_flow_s_nic_queue_under_its_limit_at_the_same_fct() {
    // One flow of 1 MB at 1 Gbit/s: its first window (10 segments) waits
    // in its NIC; with TCP Small Queues of 3000 bytes (two packets, one of
    // them on the wire) at most one waits, and the link stays as busy.
    let fabric = Fabric::big_switch(2, BitsPerSec(1e9)).unwrap();
    let w = one_coflow(&fabric, vec![flow(0, 1, 1_000_000)]);
    let free = run(&fabric, &w, &[], "transport=tcp");
    let tsq = run(&fabric, &w, &[], "transport=tcp,tsq=3000B");
    let nic = |r: &PacketResult| port(r, "host 0 uplink").max_bytes;
    assert!(nic(&free) > 3000, "{}", nic(&free));
    assert!(nic(&tsq) <= 1500, "{}", nic(&tsq));
    let (a, b) = (fct_ns(&free, 0), fct_ns(&tsq, 0));
    assert!((b - a).abs() / a < 0.01, "{a} against {b}");
    let off = run(&fabric, &w, &[], "transport=tcp,tsq=off");
    assert_eq!(fct_ns(&off, 0), a);
}

#[test]
fn timeouts_split_into_lost_segments_and_waits_longer_than_the_timer() {
    let split = |r: &PacketResult| {
        let sum = |k: fn(&coflowkit_packet::FlowPacketStats) -> u64| {
            r.flow_stats.iter().map(k).sum::<u64>()
        };
        (
            sum(|s| s.timeouts),
            sum(|s| s.timeouts_lost),
            sum(|s| s.timeouts_spurious),
        )
    };
    // Lost: 4 TCP senders of 300 KB into one 1 Gbit/s port of 4 packets,
    // the timer at its 10 ms floor: the queue waits 48 us at most, so each
    // timeout is for a dropped segment.
    let (fabric, w) = incast(4, 300_000);
    let r = run(&fabric, &w, &[], "transport=tcp,buffer=4p,ecn_k=off");
    let (timeouts, lost, spurious) = split(&r);
    assert!(drops(&r) > 0 && timeouts > 0, "{:?}", r.flow_stats);
    assert_eq!((lost, spurious), (timeouts, 0), "{:?}", r.flow_stats);
    // Waited: 4 flows of 300 KB from one host to another, no loss (buffers
    // unbounded), the timer at 100 us before an RTT sample: the first
    // windows, 40 packets, queue at the sender's NIC for 480 us, so the
    // timers fire while their segments wait; every timeout is spurious.
    let fabric = Fabric::big_switch(2, BitsPerSec(1e9)).unwrap();
    let w = one_coflow(&fabric, (0..4).map(|_| flow(0, 1, 300_000)).collect());
    let r = run(
        &fabric,
        &w,
        &[],
        "transport=tcp,buffer=inf,min_rto=100us,initial_rto=100us",
    );
    let (timeouts, lost, spurious) = split(&r);
    assert!(drops(&r) == 0 && timeouts > 0, "{:?}", r.flow_stats);
    assert_eq!((lost, spurious), (0, timeouts), "{:?}", r.flow_stats);
}

#[test]
fn host_rtx_skip_resends_nothing_still_in_the_sender_s_nic() {
    // As the waits above: the timers fire while the segments wait in the
    // sender's NIC (counted there, not at the switch). With `host_rtx=skip`
    // those copies are not sent again, as Linux does not; every flow still
    // finishes, with fewer retransmissions.
    let fabric = Fabric::big_switch(2, BitsPerSec(1e9)).unwrap();
    let w = one_coflow(&fabric, (0..4).map(|_| flow(0, 1, 300_000)).collect());
    let knobs = "transport=tcp,sack=on,buffer=inf,min_rto=100us,initial_rto=100us";
    let sum = |r: &PacketResult, k: fn(&coflowkit_packet::FlowPacketStats) -> u64| {
        r.flow_stats.iter().map(k).sum::<u64>()
    };
    let resend = run(&fabric, &w, &[], knobs);
    let skip = run(&fabric, &w, &[], &format!("{knobs},host_rtx=skip"));
    let host = sum(&resend, |s| s.timeouts_host_queued);
    assert!(host > 0, "{:?}", resend.flow_stats);
    assert!(host <= sum(&resend, |s| s.timeouts_spurious));
    let rtx = |r: &PacketResult| sum(r, |s| s.retransmits);
    assert!(rtx(&skip) < rtx(&resend), "{} {}", rtx(&skip), rtx(&resend));
    assert!((0..4).all(|i| fct_ns(&skip, i) > 0.0));
}

#[test]
fn leaf_spine_paths_and_handshake() {
    let fabric = Fabric::leaf_spine(&LeafSpineSpec {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 2,
        host_rate: BitsPerSec(10e9),
        spine_rate: None,
    })
    .unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(
            0,
            Time(0),
            vec![flow(0, 3, 100_000), flow(1, 2, 100_000)],
        )],
    );
    let plain = run(&fabric, &w, &[], "transport=tcp");
    let shake = run(&fabric, &w, &[], "transport=tcp,handshake=1s");
    // A handshake adds one round trip: 4 hops of 1 us each way, plus
    // serialization of two 40-byte packets per hop.
    let extra = fct_ns(&shake, 0) - fct_ns(&plain, 0);
    assert!((8_000.0..9_000.0).contains(&extra), "{extra}");
}

#[test]
fn a_lone_flow_with_a_handshake_takes_one_and_a_half_round_trips_and_its_serialization() {
    // bench/ns3's lone-dctcp-2us (issue 67): 2 us links, 10 Gbit/s hosts,
    // a 40 Gbit/s fabric, the handshake counted. A check kept outside the
    // project saw ns-3 take one base RTT (8.3 us) longer at every size; the
    // bench's ns-3 runner takes 57-194 ns longer, its SYNs being 46 bytes
    // and its frames 2 bytes over coflowkit's. By hand, in ns: a SYN or
    // SYN-ACK is 40 B (32 ns at 10G, 8 at 40G) per hop plus 2000 ns of
    // wire; a full packet 1500 B (1200 ns at 10G, 300 at 40G); 1448 B of
    // data is a 1488-byte packet (1190.4 ns at 10G). The FCT is reported
    // in whole ns (rounded).
    let fabric = Fabric::leaf_spine(&LeafSpineSpec {
        leaves: 2,
        spines: 1,
        hosts_per_leaf: 2,
        host_rate: BitsPerSec(10e9),
        spine_rate: Some(BitsPerSec(40e9)),
    })
    .unwrap();
    let cfg = "transport=dctcp,link_delay=2us,handshake=3s,buffer=249332B,ecn_k=97500B,\
               host_queue=droptail:166+ecn:65";
    let same_shake = 2.0 * 2.0 * (2000.0 + 32.0);
    let cross_shake = 2.0 * (2.0 * (2000.0 + 32.0) + 2.0 * (2000.0 + 8.0));
    let cases = [
        // (dst, bytes, hand FCT): within the leaf (host 0 to 1), across (0 to 2)
        (1, 1448, same_shake + 2.0 * (2000.0 + 1190.4)),
        (
            2,
            1448,
            cross_shake + 2.0 * (2000.0 + 1190.4) + 2.0 * (2000.0 + 297.6),
        ),
        // 6 full segments in the first window: the last one 5 x 1200 ns
        // behind the first at the NIC, the bottleneck
        (1, 8760, same_shake + 2.0 * (2000.0 + 1200.0) + 5.0 * 1200.0),
        (
            2,
            8760,
            cross_shake + 2.0 * (2000.0 + 1200.0) + 2.0 * (2000.0 + 300.0) + 5.0 * 1200.0,
        ),
    ];
    for (dst, bytes, hand) in cases {
        let w = one_coflow(&fabric, vec![flow(0, dst, bytes)]);
        let r = run(&fabric, &w, &[], cfg);
        assert_eq!(fct_ns(&r, 0), f64::round(hand), "0 -> {dst}, {bytes} B");
    }
}

#[test]
fn same_inputs_same_result() {
    let fabric = Fabric::big_switch(9, BitsPerSec(1e9)).unwrap();
    let flows = (0..8)
        .map(|h| flow(h, 8, 100_000 + 1000 * h as u64))
        .collect();
    let w = workload(&fabric, vec![CoflowSpec::new(0, Time(0), flows)]);
    let a = run(
        &fabric,
        &w,
        &[],
        "transport=tcp,buffer=20p,delayed_ack=200us",
    );
    let b = run(
        &fabric,
        &w,
        &[],
        "transport=tcp,buffer=20p,delayed_ack=200us",
    );
    assert_eq!(a.sim.coflows, b.sim.coflows);
    assert_eq!(a.sim.flows, b.sim.flows);
    assert_eq!(a.flow_stats, b.flow_stats);
    assert_eq!(a.packets, b.packets);
}

#[test]
fn pfabric_serves_the_short_flow_first_dctcp_shares() {
    // A 200 KB and a 4 MB flow from two hosts into a third at 10 Gbit/s,
    // started together. pFabric's queues send the smaller remaining size
    // first (SRPT, pFabric §3): the short flow finishes in about its own
    // transmission time, the long one right after; DCTCP (with a buffer
    // its slow start does not overflow) shares the link, so the short flow
    // takes about twice as long.
    let fabric = Fabric::big_switch(3, BitsPerSec(10e9)).unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(
            0,
            Time(0),
            vec![flow(0, 2, 4_000_000), flow(1, 2, 200_000)],
        )],
    );
    let wire = |bytes: f64| bytes * 8.0 / 10.0 * 1500.0 / 1460.0;
    let alone = wire(200_000.0);
    let pf = run(&fabric, &w, &[], "transport=pfabric");
    let short = fct_ns(&pf, 1);
    assert!(
        short < alone * 1.1,
        "pfabric short flow {short} ns, alone {alone}"
    );
    let both = wire(4_200_000.0);
    let long = fct_ns(&pf, 0);
    assert!(
        long > both && long < both * 1.1,
        "pfabric long flow {long} ns, both {both}"
    );
    let dc = run(&fabric, &w, &[], "transport=dctcp,buffer=1MB");
    let shared = fct_ns(&dc, 1);
    assert!(
        shared > alone * 1.8 && shared < alone * 2.3,
        "dctcp short flow {shared} ns, alone {alone}"
    );
    assert_eq!(dc.flow_stats[1].timeouts, 0);
}

#[test]
fn pfabric_queues_drop_the_long_flows_packets_in_incast() {
    // 8 senders into one port with pFabric's 36 KB buffer: the queue never
    // holds more than its buffer, drops fall on the longer flows, every
    // flow finishes, and the flows finish in size order (SRPT).
    let n = 8;
    let fabric = Fabric::big_switch(n + 1, BitsPerSec(10e9)).unwrap();
    let flows = (0..n)
        .map(|h| flow(h, n, 50_000 * (h as u64 + 1)))
        .collect();
    let w = workload(&fabric, vec![CoflowSpec::new(0, Time(0), flows)]);
    let r = run(&fabric, &w, &[], "transport=pfabric");
    let port = r
        .ports
        .iter()
        .find(|p| p.0 == format!("host {n} downlink"))
        .unwrap()
        .1;
    assert!(port.max_bytes <= 36_000, "{}", port.max_bytes);
    assert_eq!(r.flow_stats[0].drops, 0, "{:?}", r.flow_stats);
    let fcts: Vec<f64> = (0..n as usize).map(|i| fct_ns(&r, i)).collect();
    assert!(fcts.windows(2).all(|p| p[0] < p[1]), "{fcts:?}");
}

#[test]
fn a_flow_paced_at_1_gbps_on_a_10_gbps_link_takes_size_over_rate() {
    // 1000 packets of 1500 bytes on the wire (1460 of payload), paced at
    // 1 Gbit/s: one leaves the host every 12 us, the last at 999 x 12 us
    // = 11,988 us, and reaches the receiver 4.4 us later (two 1.2 us
    // serializations at 10 Gbit/s and two 1 us links): 11,992.4 us, or
    // size x 8 / 1e9 less one slot plus one packet's latency.
    let fabric = Fabric::big_switch(2, BitsPerSec(10e9)).unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(0, Time(0), vec![flow(0, 1, 1_460_000)])],
    );
    for t in ["tcp", "dctcp"] {
        let r = run(&fabric, &w, &[], &format!("transport={t},pacing=1Gbps"));
        assert_eq!(fct_ns(&r, 0), 11_992_400.0, "{t}");
    }
    // Edges: one packet is not delayed (4.4 us); three packets, the last
    // of 80 bytes (120 on the wire), leave at 0, 12 and 24 us, the last
    // arriving 2 x 0.096 + 2 us later: 26.192 us.
    for (bytes, want) in [(1460, 4_400.0), (3000, 26_192.0)] {
        let w = workload(
            &fabric,
            vec![CoflowSpec::new(0, Time(0), vec![flow(0, 1, bytes)])],
        );
        let r = run(&fabric, &w, &[], "transport=tcp,pacing=1Gbps");
        assert_eq!(fct_ns(&r, 0), want, "{bytes} bytes");
    }
}

#[test]
fn pacing_faster_than_the_link_or_by_the_window_keeps_line_rate() {
    let fabric = Fabric::big_switch(2, BitsPerSec(10e9)).unwrap();
    let w = workload(
        &fabric,
        vec![CoflowSpec::new(0, Time(0), vec![flow(0, 1, 10_000_000)])],
    );
    let ideal = 10_000_000.0 * 8.0 / 10.0 * 1500.0 / 1460.0;
    for p in ["20Gbps", "cwnd"] {
        let r = run(&fabric, &w, &[], &format!("transport=dctcp,pacing={p}"));
        let fct = fct_ns(&r, 0);
        assert!(
            fct > ideal && fct < ideal * 1.05,
            "{p}: {fct} ns against {ideal}"
        );
    }
}

#[test]
fn long_rcp_flows_share_like_the_flow_level_fair() {
    // RCP emulates processor sharing: long flows arriving and leaving at
    // different times get the max-min fair rates, so each coflow's CCT is
    // within a few % of `fair` at flow level, with a short queue.
    let (fabric, w) = long_flows_at_different_times();
    let r = run(&fabric, &w, &[], "transport=rcp,queue_trace=100us");
    assert_ccts_near_fair(&fabric, &w, &r, 0.03);
    // Three flows start at C at once: the first round trip overflows the
    // 170 KB buffer (RCP's known transient), then R settles.
    let drops: u64 = r.flow_stats.iter().map(|s| s.drops).sum();
    assert!(drops < 100, "{drops} drops");
    let port = r
        .ports
        .iter()
        .position(|p| p.0 == "host 5 downlink")
        .unwrap() as u32;
    let q: Vec<u64> = r
        .queue_trace
        .iter()
        .filter(|s| s.port == port && s.at > Time(1_000_000) && s.at < Time(20_000_000))
        .map(|s| s.bytes)
        .collect();
    let mean = q.iter().sum::<u64>() as f64 / q.len() as f64;
    assert!(mean < 15_000.0, "mean queue {mean} bytes");
}

#[test]
fn a_short_rcp_flow_joining_finishes_in_about_an_rtt_plus_size_at_the_fair_rate() {
    // Four long flows into host 4; a 200 KB flow from host 5 joins at 5 ms.
    // Under processor sharing it gets C/5 = 2 Gbit/s at once: its FCT is
    // about the SYN's round trip plus its bytes on the wire at 2 Gbit/s.
    let fabric = Fabric::big_switch(6, BitsPerSec(10e9)).unwrap();
    let mut flows: Vec<_> = (0..4).map(|h| flow(h, 4, 30_000_000)).collect();
    flows.push(flow(5, 4, 200_000).delayed(Dur(5_000_000)));
    let w = workload(&fabric, vec![CoflowSpec::new(0, Time(0), flows)]);
    let r = run(&fabric, &w, &[], "transport=rcp");
    // The long flows share C: each ends within 3% of 4 x 30 MB at line
    // rate less headers (98.6 ms), the start-up burst and the short flow
    // included.
    let shared = 4.0 * 30_000_000.0 * 8.0 / 10.0 * 1500.0 / 1460.0;
    for i in 0..4 {
        let fct = fct_ns(&r, i);
        assert!(
            fct > shared && fct < shared * 1.03,
            "flow {i}: {fct} ns against {shared}"
        );
    }
    let wire = 200_000.0_f64 / 1460.0;
    let ps_share = wire.ceil() * 1500.0 * 8.0 / 2.0; // ns at 2 Gbit/s
    let rtt = 4_400.0 + 4_000.0; // a 1500-byte packet and a 40-byte one
    let want = rtt + ps_share;
    let got = fct_ns(&r, 4);
    // It starts at R = C/4 (the rate before it joined), the queue this
    // builds pulls R below C/5 for a few intervals (the beta term): 1.32
    // times processor sharing here (1,095,967 ns against 830,400 ns).
    assert!(
        got > want * 0.9 && got < want * 1.35,
        "short flow: {got} ns, processor sharing {want} ns"
    );
    // Against DCTCP, which starts it at 10 segments and grows it.
    let d = run(&fabric, &w, &[], "transport=dctcp");
    assert!(got < fct_ns(&d, 4), "rcp {got}, dctcp {}", fct_ns(&d, 4));
}

fn fair(fabric: &Fabric, w: &ValidWorkload) -> coflowkit_sim::SimResult {
    coflowkit_sim::Simulation::new(
        fabric.clone(),
        w,
        coflowkit_sched::build(
            &coflowkit_sched::SchedulerSpec::parse("fair").unwrap(),
            &coflowkit_sched::WorkloadHints::of(w),
        )
        .unwrap(),
        coflowkit_sim::SimOptions::default(),
    )
    .run(&mut |_| {})
    .unwrap()
}

/// (src, dst, bytes, start delay, class) of one flow.
type ArbFlow = (u32, u32, u64, u64, u8);

/// Runs `flows`, one coflow released at 0, under the packet settings
/// `cfg`: the settings and the run.
fn run_case(
    fabric: &Fabric,
    flows: &[ArbFlow],
    cfg: &str,
) -> (PacketConfig, Result<PacketResult, String>) {
    let specs: Vec<_> = flows
        .iter()
        .map(|&(s, d, b, t, _)| flow(s, d, b).delayed(Dur(t)))
        .collect();
    let classes: Vec<u8> = flows.iter().map(|f| f.4).collect();
    let w = workload(fabric, vec![CoflowSpec::new(0, Time(0), specs)]);
    let mut c = PacketConfig::default();
    c.set_all(cfg).unwrap();
    let r = simulate(fabric, &w, &classes, &[], &c, &mut |_| {}).map_err(|e| e.to_string());
    (c, r)
}

fn arb_case() -> impl Strategy<Value = (u32, Vec<ArbFlow>, String)> {
    (2u32..6).prop_flat_map(|hosts| {
        let flows = prop::collection::vec(
            (0..hosts, 0..hosts, 0u64..300_000, 0u64..2_000_000, 0u8..3),
            1..12,
        );
        let cfg = (
            prop::sample::select(vec!["tcp", "dctcp", "rcp", "d2tcp", "pfabric"]),
            prop::sample::select(vec!["4p", "10p", "30KB", "inf", "shared:30KB"]),
            prop::sample::select(vec!["off", "100us"]),
            prop::sample::select(vec!["off", "1ms"]),
            prop::sample::select(vec!["unbounded", "droptail:8", "ecn:4"]),
            prop::sample::select(vec!["off", "cwnd", "300Mbps"]),
            prop::sample::select(vec!["auto", "strict", "pfabric"]),
            prop::sample::select(vec!["4p", "36KB"]),
            prop::sample::select(vec!["off", "on"]),
        )
            .prop_map(|(t, b, d, h, q, p, s, pb, sack)| {
                format!(
                    "transport={t},buffer={b},delayed_ack={d},handshake={h},host_queue={q},pacing={p},min_rto=1ms,initial_rto=1ms,queues={s},pfabric_buffer={pb},sack={sack}"
                )
            });
        (Just(hosts), flows, cfg)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Every flow finishes with all its bytes (the receiver's cumulative
    /// ACK point is its size, so each byte arrived at least once and was
    /// counted once) and the run never stalls, with tiny buffers and
    /// losses, on the big switch and a leaf-spine.
    #[test]
    fn every_byte_arrives_and_nothing_stalls((hosts, flows, cfg) in arb_case(), leaf_spine in any::<bool>()) {
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
        let (c, r) = run_case(&fabric, &flows, &cfg);
        let r = r.map_err(TestCaseError::fail)?;
        for (i, f) in r.sim.flows.as_ref().unwrap().iter().enumerate() {
            prop_assert!(f.finish >= f.start, "flow {} never finished", i);
            // Every retransmission timeout of a finished flow is split (SYN
            // timeouts are not); a lost one needs a drop of its own.
            let s = r.flow_stats[i];
            let split = s.timeouts_lost + s.timeouts_spurious;
            prop_assert!(split <= s.timeouts && s.timeouts_lost <= s.drops, "flow {}: {:?}", i, s);
            // RCP sends a SYN (its rate request) even without a handshake.
            if c.handshake.is_none() && !cfg.contains("transport=rcp") {
                prop_assert_eq!(split, s.timeouts, "flow {}: {:?}", i, s);
            }
            // A flow cannot beat its serialization time on its first link.
            let min = (f.bytes as f64 * 8.0) as u64;
            prop_assert!((f.finish - f.start).0 >= min, "flow {} too fast", i);
        }
    }
}

#[test]
fn d2tcp_gives_the_near_deadline_flow_the_larger_share() {
    // Two 10 MB flows into one 10 Gbit/s port. Sharing fairly (DCTCP) both
    // need about 2 x 8.2 ms = 16.4 ms; the first has a 13 ms deadline
    // (it needs at least 63% of the link), the second 40 ms. D2TCP's
    // near-deadline flow (d > 1) backs off less than the far one (d = 0.5):
    // it meets its deadline, where under DCTCP it misses it.
    let fabric = Fabric::big_switch(3, BitsPerSec(10e9)).unwrap();
    let near = Dur(13_000_000);
    let w = one_coflow(
        &fabric,
        vec![
            flow(0, 2, 10_000_000).with_deadline(near),
            flow(1, 2, 10_000_000).with_deadline(Dur(40_000_000)),
        ],
    );
    let dctcp = run(&fabric, &w, &[], "transport=dctcp,buffer=1MB");
    let d2tcp = run(&fabric, &w, &[], "transport=d2tcp,buffer=1MB");
    print_fcts(&[("dctcp", &dctcp), ("d2tcp", &d2tcp)]);
    assert!(
        fct_ns(&dctcp, 0) > near.0 as f64,
        "DCTCP: {}",
        fct_ns(&dctcp, 0)
    );
    assert!(
        fct_ns(&d2tcp, 0) < near.0 as f64,
        "D2TCP: {}",
        fct_ns(&d2tcp, 0)
    );
    assert!(fct_ns(&d2tcp, 1) < 40_000_000.0);
    // Without deadlines D2TCP is DCTCP, packet for packet.
    let plain = one_coflow(&fabric, vec![flow(0, 2, 1_000_000), flow(1, 2, 1_000_000)]);
    let a = run(&fabric, &plain, &[], "transport=dctcp");
    let b = run(&fabric, &plain, &[], "transport=d2tcp");
    assert_eq!(a.sim.flows, b.sim.flows);
    assert_eq!(a.flow_stats, b.flow_stats);
}

#[test]
fn incast_shared_buffer_absorbs_what_a_static_per_port_one_drops() {
    // Incast: 16 TCP senders answer at once with 40 KB each (their first
    // windows of 10 segments: a 240 KB burst) into one 1 Gbit/s port of a
    // 17-port switch. Static: 150 KB (100 packets) per port, so the burst
    // overflows it. Shared: the same 17 x 150 KB in one pool, alpha = 1,
    // so the one congested port may hold half of it (Choudhury-Hahne:
    // alpha/(1 + alpha)), 1.275 MB: the whole 640 KB fits.
    let n = 16;
    let (fabric, w) = incast(n, 40_000);
    let total = 150_000 * (n as u64 + 1);
    let fixed = run(&fabric, &w, &[], "transport=tcp,buffer=150000");
    let shared = run(
        &fabric,
        &w,
        &[],
        &format!("transport=tcp,buffer=shared:{total},dt_alpha=1"),
    );
    let downlink = format!("host {n} downlink");
    let port = |r: &PacketResult| port(r, &downlink);
    eprintln!(
        "drops: static {} shared {}; max queue static {} shared {}; CCT static {} shared {}",
        drops(&fixed),
        drops(&shared),
        port(&fixed).max_bytes,
        port(&shared).max_bytes,
        fixed.sim.coflows[0].cct().0,
        shared.sim.coflows[0].cct().0
    );
    assert!(drops(&fixed) > 0);
    assert_eq!(drops(&shared), 0);
    assert!(port(&fixed).max_bytes <= 150_000);
    assert!(port(&shared).max_bytes > 150_000);
    assert!(port(&shared).max_bytes <= total / 2);
}

#[test]
fn pinned_paths_choose_the_spine() {
    // Two 2 MB flows from leaf 0 to leaf 1 over 1 Gbit/s spine links (the
    // ns-3 check of bench/ns3/README.md): on different spines each runs
    // alone (about 16.4 ms); on one spine they share it (about 32.9 ms
    // for the later one).
    let fabric = Fabric::leaf_spine(&LeafSpineSpec {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 2,
        host_rate: BitsPerSec(1e9),
        spine_rate: Some(BitsPerSec(1e9)),
    })
    .unwrap();
    let w = one_coflow(&fabric, vec![flow(0, 2, 2_000_000), flow(1, 3, 2_000_000)]);
    let c = PacketConfig::default();
    let go = |paths: &[Option<u32>]| simulate(&fabric, &w, &[], paths, &c, &mut |_| {});
    let apart = go(&[Some(0), Some(1)]).unwrap();
    let together = go(&[Some(1), Some(1)]).unwrap();
    let alone = 2_000_000.0 * 8.0 * 1500.0 / 1460.0;
    for i in 0..2 {
        assert!(
            fct_ns(&apart, i) < alone * 1.05,
            "apart {i}: {}",
            fct_ns(&apart, i)
        );
    }
    let last = fct_ns(&together, 0).max(fct_ns(&together, 1));
    assert!(last > alone * 1.9, "together: {last}");
    let tx =
        |r: &PacketResult, name: &str| r.ports.iter().find(|p| p.0 == name).unwrap().1.tx_packets;
    assert_eq!(tx(&together, "leaf 0 -> spine 0"), 0);
    // ACKs come back over the same spine.
    assert_eq!(tx(&together, "spine 0 -> leaf 0"), 0);
    assert!(tx(&together, "spine 1 -> leaf 0") > 0);
    print_fcts(&[("apart", &apart), ("together", &together)]);
    // A missing entry is hashed; an index out of range is one line naming
    // the flow and the range.
    assert!(go(&[Some(0)]).is_ok());
    assert_eq!(
        go(&[None, Some(2)]).unwrap_err().to_string(),
        "packet engine: coflow 0 flow 1: path 2 is out of range: host 1 to host 3 has 2 equal-cost paths (0 to 1)"
    );
    let local = one_coflow(&fabric, vec![flow(0, 1, 1000)]);
    let e = simulate(&fabric, &local, &[], &[Some(1)], &c, &mut |_| {}).unwrap_err();
    assert_eq!(
        e.to_string(),
        "packet engine: coflow 0 flow 0: path 1 is out of range: host 0 to host 1 has 1 equal-cost path (0 to 0)"
    );
}

#[test]
fn the_ecmp_seed_moves_hashed_flows() {
    // The fabric's ECMP seed (`ecmp_seed=N` in a topology spec) reaches the
    // packet engine's hash: some seed puts these 8 flows on other spines.
    let spec = LeafSpineSpec {
        leaves: 2,
        spines: 4,
        hosts_per_leaf: 8,
        host_rate: BitsPerSec(10e9),
        spine_rate: None,
    };
    let base = Fabric::leaf_spine(&spec).unwrap();
    let flows: Vec<_> = (0..8).map(|h| flow(h, 8 + h, 10_000)).collect();
    let spine_use = |f: &Fabric| {
        let w = one_coflow(f, flows.clone());
        let r = run(f, &w, &[], "");
        (0..4)
            .map(|s| port(&r, &format!("leaf 0 -> spine {s}")).tx_packets)
            .collect::<Vec<_>>()
    };
    let a = spine_use(&base);
    assert!((1..10).any(|seed| spine_use(&base.clone().with_ecmp_seed(seed)) != a));
}

/// Found by `make fuzz` (`every_byte_arrives_and_nothing_stalls`, fresh
/// seed): RCP opens every flow with a SYN (its rate request) even with
/// `handshake=off`, and a SYN's timeout counts in `timeouts` but in neither
/// split count; a data segment's timeout is split.
#[test]
fn an_rcp_syn_timeout_is_in_neither_split_count() {
    let fabric = Fabric::big_switch(3, BitsPerSec(1e9)).unwrap();
    let flows: Vec<ArbFlow> = vec![
        (0, 1, 8444, 506288, 2),
        (1, 2, 241100, 763903, 1),
        (0, 2, 294078, 332994, 2),
        (2, 2, 173599, 353211, 1),
        (1, 1, 240891, 69645, 2),
    ];
    let cfg = "transport=rcp,buffer=10p,delayed_ack=off,handshake=off,host_queue=unbounded,\
               pacing=cwnd,min_rto=1ms,initial_rto=1ms";
    let r = run_case(&fabric, &flows, cfg).1.unwrap();
    // Flow 1's one timeout is its SYN's (its data never timed out).
    let s = r.flow_stats[1];
    assert_eq!(
        (s.timeouts, s.timeouts_lost, s.timeouts_spurious),
        (1, 0, 0),
        "{s:?}"
    );
    // Flow 2's is a dropped data segment's.
    let s = r.flow_stats[2];
    assert_eq!(
        (s.timeouts, s.timeouts_lost, s.timeouts_spurious),
        (1, 1, 0),
        "{s:?}"
    );
}

/// `w` run with `knobs`, then with `direct` too: every flow's time the
/// same. Both runs.
fn same_times(
    fabric: &Fabric,
    w: &ValidWorkload,
    knobs: &str,
    direct: &str,
) -> (PacketResult, PacketResult) {
    let queued = run(fabric, w, &[], knobs);
    let with = run(fabric, w, &[], &format!("{knobs},{direct}"));
    for i in 0..queued.flow_stats.len() {
        assert_eq!(
            fct_ns(&queued, i),
            fct_ns(&with, i),
            "{knobs}, {direct}: flow {i}"
        );
    }
    (queued, with)
}

#[test]
fn direct_acks_give_the_same_times_where_nothing_else_goes_their_way() {
    // Incast: the reverse direction carries each sender's ACKs only, one
    // at a time per port, so `acks=direct` (no port on the way back) is
    // exact, and their per-hop packets are gone.
    let (fabric, w) = incast(4, 300_000);
    for knobs in [
        "transport=dctcp",
        "transport=tcp",
        "transport=dctcp,sack=on,timestamps=on",
    ] {
        let (queued, direct) = same_times(&fabric, &w, knobs, "acks=direct");
        // What the ACKs' ports sent (the receiver's NIC, the senders'
        // downlinks) is what no longer crosses a port.
        let acks: u64 = std::iter::once("host 4 uplink".to_string())
            .chain((0..4).map(|h| format!("host {h} downlink")))
            .map(|name| port(&queued, &name).tx_packets)
            .sum();
        assert_eq!(queued.packets - direct.packets, acks, "{knobs}");
        assert!(
            acks * 3 > queued.packets,
            "{knobs}: the ACKs were a third or more"
        );
    }
}

#[test]
fn a_direct_ack_never_arrives_before_the_one_sent_before_it() {
    // With SACK blocks ACKs differ in length; a later, shorter one would
    // be serialized sooner. Every byte still arrives, and no run stalls.
    let (fabric, w) = incast(8, 200_000);
    let r = run(
        &fabric,
        &w,
        &[],
        "transport=tcp,sack=on,acks=direct,buffer=30KB",
    );
    assert!(drops(&r) > 0, "the buffer overflows, so SACK blocks vary");
    assert_eq!(r.sim.flows.as_ref().unwrap().len(), 8);
}

/// Two senders through switch A, a 1 Gbit/s link to switch B and a
/// 10 Gbit/s link to the receiver: the last hop is fed by the slow link
/// only, so it never holds two packets.
fn fan_in_to_a_fast_last_hop() -> (Fabric, ValidWorkload) {
    use coflowkit_model::{CustomSpec, LinkSpec, NodeKind, NodeSpec};
    let node = |name: &str, kind| NodeSpec {
        name: name.into(),
        kind,
    };
    let link = |from: &str, to: &str, gbps: f64| LinkSpec {
        from: from.into(),
        to: to.into(),
        capacity: BitsPerSec(gbps * 1e9),
        duplex: true,
    };
    let fabric = Fabric::custom(&CustomSpec {
        nodes: vec![
            node("s0", NodeKind::Host),
            node("s1", NodeKind::Host),
            node("y", NodeKind::Host),
            node("A", NodeKind::Switch),
            node("B", NodeKind::Switch),
        ],
        links: vec![
            link("s0", "A", 10.0),
            link("s1", "A", 10.0),
            link("A", "B", 1.0),
            link("B", "y", 10.0),
        ],
    })
    .unwrap();
    let w = one_coflow(&fabric, vec![flow(0, 2, 400_000), flow(1, 2, 150_000)]);
    (fabric, w)
}

#[test]
fn a_direct_last_hop_gives_the_same_times_where_it_never_queues() {
    let (fabric, w) = fan_in_to_a_fast_last_hop();
    for knobs in [
        "transport=dctcp",
        "transport=tcp,buffer=20p",
        "transport=dctcp,acks=direct",
    ] {
        let (queued, direct) = same_times(&fabric, &w, knobs, "last_hop=direct");
        let last = port(&queued, "host 2 downlink (B -> y)").tx_packets;
        assert_eq!(
            port(&direct, "host 2 downlink (B -> y)").tx_packets,
            0,
            "{knobs}"
        );
        assert_eq!(queued.packets - direct.packets, last, "{knobs}");
    }
}
