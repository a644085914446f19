use super::*;

fn params(transport: TransportKind) -> SenderParams {
    SenderParams {
        mss: 1000,
        init_cwnd: 2,
        min_rto_ps: 1_000,
        initial_rto_ps: 10_000,
        max_rto_ps: 60_000_000_000_000,
        transport,
        g: 1.0 / 16.0,
        paced: false,
        rate_based: false,
        deadline_ps: None,
        late: LateRule::Max,
        mcp_ecn: false,
        limited_transmit: false,
        probe_after: 5,
        timestamps: true,
        rto_reset_on_ack: false,
        sack: false,
        rto_undo: false,
        reorder_adaptive: false,
    }
}

fn seqs(out: &[Segment]) -> Vec<u64> {
    out.iter().map(|x| x.seq).collect()
}

fn seq_lens(out: &[Segment]) -> Vec<(u64, u32)> {
    out.iter().map(|s| (s.seq, s.len)).collect()
}

#[test]
fn pfabric_starts_at_its_window_and_ignores_dupacks_and_ecn() {
    // A window of 4 segments (the path's BDP), ssthresh there too.
    let mut s = Sender::new(
        SenderParams {
            init_cwnd: 4,
            min_rto_ps: 3_000,
            initial_rto_ps: 3_000,
            max_rto_ps: 60_000_000_000_000,
            ..params(TransportKind::Pfabric)
        },
        20_000,
    );
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(out.len(), 4);
    assert_eq!(s.remaining(), 20_000);
    assert_eq!(s.rto_at, Some(3_000));
    out.clear();
    // A new ACK of one segment: additive increase, 4000 + 1000²/4000.
    s.on_ack(10, 1000, true, 0, &mut out);
    assert!((s.cwnd - 4250.0).abs() < 1e-9, "{}", s.cwnd);
    assert_eq!(seq_lens(&out), vec![(4000, 1000)]);
    assert_eq!(s.remaining(), 19_000);
    // Ten duplicate ACKs with ECN echoes: no retransmission, no cut,
    // and the timer is not pushed back (RTT samples leave it fixed).
    out.clear();
    for t in 0..10 {
        s.on_ack(20 + t, 1000, true, 0, &mut out);
    }
    assert!(out.is_empty());
    assert!((s.cwnd - 4250.0).abs() < 1e-9);
    assert_eq!((s.rto, s.rto_at), (3_000, Some(3_010)));
}

#[test]
fn pfabric_times_out_to_slow_start_then_probes() {
    let mut s = Sender::new(
        SenderParams {
            init_cwnd: 4,
            min_rto_ps: 3_000,
            initial_rto_ps: 3_000,
            max_rto_ps: 60_000_000_000_000,
            probe_after: 3,
            ..params(TransportKind::Pfabric)
        },
        20_000,
    );
    let mut out = vec![];
    s.send(0, &mut out);
    out.clear();
    // First timeout: ssthresh = 4000 / 2, one segment from una, the
    // same fixed timeout.
    s.on_timeout(3_000, &mut out);
    assert_eq!(seq_lens(&out), vec![(0, 1000)]);
    assert_eq!((s.cwnd, s.ssthresh), (1000.0, 2000.0));
    assert_eq!((s.rto, s.rto_at), (3_000, Some(6_000)));
    out.clear();
    s.on_timeout(6_000, &mut out);
    assert_eq!((s.cwnd, s.ssthresh), (1000.0, 1000.0));
    out.clear();
    // Third in a row: probe mode, a 1-byte segment, nothing else.
    s.on_timeout(9_000, &mut out);
    assert!(s.probing);
    assert_eq!(seq_lens(&out), vec![(0, 1)]);
    out.clear();
    s.send(9_500, &mut out);
    assert!(out.is_empty());
    s.on_timeout(12_000, &mut out);
    assert_eq!(seq_lens(&out), vec![(0, 1)]);
    assert_eq!(s.timeouts, 4);
    out.clear();
    // Any ACK, even a duplicate, ends probe mode: slow start from one
    // segment.
    s.on_ack(12_500, 0, false, 0, &mut out);
    assert!(!s.probing);
    assert_eq!(seq_lens(&out), vec![(0, 1000)]);
    out.clear();
    // A new ACK resets the run of timeouts and grows in slow start.
    s.on_ack(13_000, 1000, false, 0, &mut out);
    assert_eq!(s.cwnd, 2000.0);
    assert_eq!(seq_lens(&out), vec![(1000, 1000), (2000, 1000)]);
    out.clear();
    s.on_timeout(16_000, &mut out);
    assert!(!s.probing, "the run of timeouts restarted");
}

#[test]
fn slow_start_then_fast_retransmit() {
    let mut s = Sender::new(params(TransportKind::Tcp), 20_000);
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(out.len(), 2);
    out.clear();
    s.on_ack(10, 1000, false, 0, &mut out);
    // cwnd 3000: two more segments.
    assert_eq!(seqs(&out), vec![2000, 3000]);
    out.clear();
    for _ in 0..3 {
        s.on_ack(20, 1000, false, 0, &mut out);
    }
    assert_eq!(
        out[0],
        Segment {
            seq: 1000,
            len: 1000,
            retransmit: true
        }
    );
    assert_eq!(s.retransmits, 1);
}

#[test]
fn only_the_first_partial_ack_restarts_the_timer() {
    // RFC 6582 §3.2 step 4 (Impatient): segments 1000, 3000 and 5000
    // of a 10-segment window are lost.
    let p = SenderParams {
        init_cwnd: 10,
        ..params(TransportKind::Tcp)
    };
    let mut s = Sender::new(p, 100_000);
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(out.len(), 10);
    s.on_ack(10, 1000, false, 0, &mut out);
    // Segments 2000, 4000, 6000, 7000 arrive: three duplicates start
    // the recovery (and a fourth inflates the window).
    for t in 11..15 {
        s.on_ack(t, 1000, false, 0, &mut out);
    }
    assert!(s.in_recovery);
    let at_fast_retransmit = s.rto_at.expect("armed");
    assert_eq!(at_fast_retransmit, 13 + s.rto);
    // The first partial ACK restarts the timer...
    s.on_ack(100, 3000, false, 90, &mut out);
    let first = s.rto_at.expect("armed");
    assert_eq!(first, 100 + s.rto);
    // ...a second one does not.
    s.on_ack(200, 5000, false, 190, &mut out);
    assert!(s.in_recovery);
    assert_eq!(s.rto_at, Some(first));
    // The full acknowledgement ends the recovery and restarts it.
    let recover = s.recover;
    s.on_ack(300, recover, false, 290, &mut out);
    assert!(!s.in_recovery);
    assert_eq!(s.rto_at, Some(300 + s.rto));
}

#[test]
fn limited_transmit_sends_one_new_segment_per_early_duplicate() {
    // RFC 3042 §2: 8 segments out, the first is lost.
    let p = SenderParams {
        init_cwnd: 8,
        limited_transmit: true,
        ..params(TransportKind::Tcp)
    };
    let mut s = Sender::new(p, 100_000);
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(out.len(), 8);
    let mut seqs = vec![];
    for t in 1..=2 {
        out.clear();
        s.on_ack(t, 0, false, 0, &mut out);
        seqs.extend(out.iter().map(|x| (x.seq, x.retransmit)));
    }
    // Two new segments, the window unchanged.
    assert_eq!(seqs, vec![(8000, false), (9000, false)]);
    assert_eq!(s.cwnd, 8000.0);
    out.clear();
    s.on_ack(3, 0, false, 0, &mut out);
    assert_eq!(out[0].seq, 0);
    assert!(out[0].retransmit);
    // ssthresh = FlightSize / 2 without the two limited-transmit
    // segments: (10 - 2) * 1000 / 2.
    assert_eq!(s.ssthresh, 4000.0);
    // Off: the duplicates send nothing.
    let mut s = Sender::new(params(TransportKind::Tcp), 100_000);
    s.send(0, &mut out);
    out.clear();
    s.on_ack(1, 0, false, 0, &mut out);
    assert!(out.is_empty());
}

#[test]
fn karn_samples_only_segments_sent_once_and_keeps_the_backoff() {
    // RFC 6298 §3 and §5: timestamps off, mss 1000, init_cwnd 2.
    let p = SenderParams {
        timestamps: false,
        ..params(TransportKind::Tcp)
    };
    let mut s = Sender::new(p, 100_000);
    let mut out = vec![];
    s.send(0, &mut out); // 0 and 1000 at t = 0
                         // The echoed timestamp is ignored: the sample is 100 - 0.
    s.on_ack(100, 1000, false, 77, &mut out);
    assert_eq!(s.srtt_ps(), Some(100.0));
    // RTO = 100 + 4 * 50 = 300, floored at min_rto 1000.
    assert_eq!(s.rto, 1000);
    // Segments 2000 and 3000 go at t = 100; the timer expires at
    // 1100: go-back-N from 1000, the RTO doubled to 2000.
    out.clear();
    s.on_timeout(1100, &mut out);
    assert_eq!(seqs(&out), vec![1000]);
    assert_eq!(s.rto, 2000);
    // The ACK of the resent segment (and of 2000..4000, sent before)
    // is ambiguous: no sample, SRTT unchanged and the backed-off RTO
    // kept for what is sent next.
    out.clear();
    s.on_ack(1150, 4000, false, 1100, &mut out);
    assert_eq!(s.srtt_ps(), Some(100.0));
    assert_eq!(s.rto, 2000);
    assert_eq!(s.rto_at, Some(1150 + 2000));
    // Segments first sent at 1150 give the next sample, 1400 - 1150:
    // SRTT = 7/8 * 100 + 1/8 * 250, RTTVAR = 3/4 * 50 + 1/4 * 150.
    let first = out[0].seq;
    assert!(!out[0].retransmit);
    s.on_ack(1400, first + 1000, false, 0, &mut out);
    assert_eq!(s.srtt_ps(), Some(118.75));
    assert_eq!(s.rto, 1000, "collapsed by the new sample");
    // As ns-3 (rto_reset=ack): the ambiguous ACK gives no sample but
    // recomputes the RTO, 100 + 4 * 50 floored at 1000.
    let mut s = Sender::new(
        SenderParams {
            rto_reset_on_ack: true,
            ..p
        },
        100_000,
    );
    s.send(0, &mut out);
    s.on_ack(100, 1000, false, 0, &mut out);
    s.on_timeout(1100, &mut out);
    assert_eq!(s.rto, 2000);
    s.on_ack(1150, 4000, false, 1100, &mut out);
    assert_eq!(s.srtt_ps(), Some(100.0));
    assert_eq!(s.rto, 1000);
    // With timestamps on, the resent segment's ACK gives a sample.
    let mut s = Sender::new(params(TransportKind::Tcp), 100_000);
    s.send(0, &mut out);
    s.on_ack(100, 1000, false, 0, &mut out);
    s.on_timeout(1100, &mut out);
    s.on_ack(1150, 4000, false, 1100, &mut out);
    assert_eq!(s.srtt_ps(), Some(0.875 * 100.0 + 0.125 * 50.0));
    assert_eq!(s.rto, 1000);
}

#[test]
fn karn_skips_a_fast_retransmitted_segment() {
    // Segment 0 of 4 is lost and fast-retransmitted at t = 30: the
    // full ACK at 60 covers it first, so it gives no sample.
    let p = SenderParams {
        init_cwnd: 4,
        timestamps: false,
        ..params(TransportKind::Tcp)
    };
    let mut s = Sender::new(p, 100_000);
    let mut out = vec![];
    s.send(0, &mut out);
    for t in [10, 20, 30] {
        s.on_ack(t, 0, false, 0, &mut out);
    }
    assert!(s.in_recovery);
    s.on_ack(60, 4000, false, 0, &mut out);
    assert_eq!(s.srtt_ps(), None);
    assert_eq!(s.rto, 10_000, "still the initial RTO");
}

#[test]
fn timeout_goes_back_and_backs_off() {
    let mut s = Sender::new(params(TransportKind::Tcp), 5_000);
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(s.rto_at, Some(10_000));
    out.clear();
    s.on_timeout(10_000, &mut out);
    assert_eq!(
        out,
        vec![Segment {
            seq: 0,
            len: 1000,
            retransmit: true
        }]
    );
    assert_eq!((s.timeouts, s.rto, s.cwnd), (1, 20_000, 1000.0));
}

#[test]
fn backoff_stops_at_max_rto() {
    // initial RTO 10,000, ceiling 35,000: 20,000, then 35,000, and it
    // stays there however often the segment is lost again.
    let p = SenderParams {
        max_rto_ps: 35_000,
        ..params(TransportKind::Tcp)
    };
    let mut s = Sender::new(p, 5_000);
    let mut out = vec![];
    s.send(0, &mut out);
    let mut now = 0;
    let mut seen = vec![];
    for _ in 0..4 {
        now = s.rto_at.unwrap();
        s.on_timeout(now, &mut out);
        seen.push(s.rto);
    }
    assert_eq!(seen, vec![20_000, 35_000, 35_000, 35_000]);
    assert_eq!(s.rto_at, Some(now + 35_000));
}

#[test]
fn a_second_timeout_of_the_same_segment_keeps_ssthresh() {
    // RFC 5681 §3.1: 5 segments out (init_cwnd 5), all lost.
    let p = SenderParams {
        init_cwnd: 5,
        ..params(TransportKind::Tcp)
    };
    let mut s = Sender::new(p, 100_000);
    let mut out = vec![];
    s.send(0, &mut out);
    s.on_timeout(10_000, &mut out);
    // FlightSize 5000: ssthresh 2500.
    assert_eq!(s.ssthresh, 2500.0);
    // The resent segment is lost too: the second expiry keeps it
    // (Eq. 4 would give 5000 / 2 again, and after a partial ACK less).
    s.on_ack(15_000, 1000, false, 10_000, &mut out);
    s.on_timeout(40_000, &mut out);
    assert_eq!(s.ssthresh, 2500.0);
    assert_eq!(s.timeouts, 2);
    // Once the loss episode is over (una >= recover, 5000), a new
    // timeout computes it afresh from FlightSize.
    s.on_ack(50_000, 5000, false, 45_000, &mut out);
    let flight = s.max_sent - s.una;
    s.on_timeout(90_000, &mut out);
    assert_eq!(s.ssthresh, (flight as f64 / 2.0).max(2000.0));
}

#[test]
fn dctcp_cuts_by_half_alpha_once_per_window() {
    let mut s = Sender::new(params(TransportKind::Dctcp), 1_000_000);
    let mut out = vec![];
    s.send(0, &mut out);
    let before = s.cwnd;
    s.on_ack(10, 1000, true, 0, &mut out);
    // alpha starts at 1 and the first window (1 segment) was all marked.
    assert!((s.alpha - 1.0).abs() < 1e-12);
    // Halved, but never below 2 segments.
    let want = ((before + 1000.0) * 0.5).max(2000.0);
    assert!((s.cwnd - want).abs() < 1e-9, "{}", s.cwnd);
    let after = s.cwnd;
    s.on_ack(11, 2000, true, 0, &mut out);
    assert!(s.cwnd >= after, "a second cut in the same window");
}

#[test]
fn a_paced_sender_waits_for_its_slots() {
    let mut s = Sender::new(
        SenderParams {
            paced: true,
            ..params(TransportKind::Tcp)
        },
        20_000,
    );
    let mut out = vec![];
    s.send_up_to(0, 1, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(s.rto_at, Some(10_000));
    s.send_up_to(5, 1, &mut out);
    out.clear();
    // An ACK sends nothing by itself.
    s.on_ack(10, 1000, false, 0, &mut out);
    assert!(out.is_empty());
    s.send_up_to(10, 1, &mut out);
    s.send_up_to(10, 1, &mut out);
    assert_eq!(seqs(&out), vec![2000, 3000]);
    out.clear();
    // Three duplicate ACKs: the retransmission waits for the next slot
    // and goes before new data.
    for _ in 0..3 {
        s.on_ack(20, 1000, false, 0, &mut out);
    }
    assert!(out.is_empty());
    s.send_up_to(21, 1, &mut out);
    assert_eq!(out[0].seq, 1000);
    assert!(out[0].retransmit);
}

#[test]
fn a_rate_based_sender_has_no_window() {
    let mut s = Sender::new(
        SenderParams {
            paced: true,
            rate_based: true,
            ..params(TransportKind::Tcp)
        },
        20_000,
    );
    let mut out = vec![];
    // Far past the initial window of 2 segments, nothing acknowledged.
    s.send_up_to(0, 15, &mut out);
    assert_eq!(out.len(), 15);
    // A timeout goes back to una, one segment per slot, still unlimited.
    out.clear();
    s.on_timeout(10_000, &mut out);
    assert!(out.is_empty());
    s.send_up_to(10_000, 3, &mut out);
    assert_eq!(seqs(&out), vec![0, 1000, 2000]);
}

#[test]
fn d2tcp_penalty_and_imminence_by_hand() {
    // p = α^d: α = 1/4 gives 1/16 at d = 2, 1/2 at d = 0.5, α at d = 1.
    assert_eq!(penalty(0.25, 2.0), 0.0625);
    assert_eq!(penalty(0.25, 0.5), 0.5);
    assert_eq!(penalty(0.25, 1.0), 0.25);
    // Tc = 300 KB at 3/4 of a 100 KB window per 100 us RTT = 400 us.
    let d = |left_us: i128| {
        imminence(
            300_000,
            100_000.0,
            100e6,
            left_us * 1_000_000,
            LateRule::Max,
        )
    };
    assert_eq!(d(800), 0.5);
    assert_eq!(d(400), 1.0);
    assert_eq!(d(320), 1.25);
    assert_eq!(d(100), 2.0, "held to 2");
    assert_eq!(d(1000), 0.5, "held to 0.5");
    assert_eq!(d(0), 2.0, "missed: max");
    assert_eq!(imminence(1, 1.0, 1.0, -5, LateRule::Dctcp), 1.0);
}

#[test]
fn d2tcp_near_deadline_cuts_less_than_dctcp() {
    // 10 KB, 2-segment window; the first ACK (1000 bytes, marked) comes
    // at 10 ns for a packet sent at 0: SRTT 10,000 ps, cwnd 3000 after
    // slow start, α = (15/16)·1/4 + 1/16 = 0.296875 (F = 1).
    // Tc = 9000·10,000/(0.75·3000) = 40,000 ps; D = 30,000 − 10,000 =
    // 20,000 ps: d = 2, p = α² = 0.088134765625.
    let run = |deadline_ps| {
        let mut s = Sender::new(
            SenderParams {
                deadline_ps,
                ..params(TransportKind::D2tcp)
            },
            10_000,
        );
        let mut out = vec![];
        s.send(0, &mut out);
        s.alpha = 0.25;
        s.on_ack(10_000, 1000, true, 0, &mut out);
        assert_eq!(s.alpha, 0.296875);
        s.cwnd
    };
    let near = run(Some(30_000));
    assert!(
        (near - 3000.0 * (1.0 - 0.088134765625 / 2.0)).abs() < 1e-9,
        "{near}"
    );
    // Without a deadline: DCTCP's cut, 3000·(1 − α/2).
    let plain = run(None);
    assert!(
        (plain - 3000.0 * (1.0 - 0.296875 / 2.0)).abs() < 1e-9,
        "{plain}"
    );
    // Far (D = 1 s): d = 0.5, p = √α, a deeper cut than DCTCP's.
    let far = run(Some(1_000_000_000_000));
    assert!(
        (far - 3000.0 * (1.0 - 0.296875f64.sqrt() / 2.0)).abs() < 1e-9,
        "{far}"
    );
}

#[test]
fn mcp_ecn_window_by_hand() {
    // No marks: the need itself; α = 1: half of it; never below 2 MSS.
    assert_eq!(mcp_ecn_window(8000.0, 0.0, 1000), 8000.0);
    assert_eq!(mcp_ecn_window(8000.0, 1.0, 1000), 4000.0);
    assert_eq!(mcp_ecn_window(8000.0, 0.5, 1000), 6000.0);
    assert_eq!(mcp_ecn_window(3000.0, 1.0, 1000), 2000.0);
}

#[test]
fn mcp_window_by_hand() {
    // R = 300 KB, SRTT 100 us, D = 10 ms: R·SRTT/D = 3000 bytes, 3
    // segments of 1000, plus one: 4000. The rate 4000 B/100 us is
    // 40 MB/s against the 30 MB/s the deadline needs.
    let us = 1_000_000i128;
    assert_eq!(mcp_window(300_000, 100e6, 10_000 * us, 1000), 4000.0);
    // 2500 bytes per RTT: ⌊2.5⌋ + 1 = 3 segments.
    assert_eq!(mcp_window(250_000, 100e6, 10_000 * us, 1000), 3000.0);
    // The deadline term: the same bytes with half the time left need
    // twice the window (5000 bytes: 6 segments).
    assert_eq!(mcp_window(250_000, 100e6, 5_000 * us, 1000), 6000.0);
    // 100 bytes per RTT: one segment, held to the 2-segment floor.
    assert_eq!(mcp_window(10_000, 100e6, 10_000 * us, 1000), 2000.0);
    // Past (or at) the deadline: the floor, whatever is left.
    assert_eq!(mcp_window(300_000, 100e6, 0, 1000), 2000.0);
    assert_eq!(mcp_window(300_000, 100e6, -us, 1000), 2000.0);
}

fn mcp(deadline_ps: u64) -> Sender {
    Sender::new(
        SenderParams {
            deadline_ps: Some(deadline_ps),
            ..params(TransportKind::Mcp)
        },
        100_000,
    )
}

#[test]
fn mcp_steps_one_segment_per_ack_toward_its_target_once_per_rtt() {
    // 100 KB, deadline at 210 ns. The first ACK (1000 bytes at 10 ns,
    // a packet sent at 0) gives SRTT 10,000 ps; R = 99,000, D =
    // 200,000 ps: R·SRTT/D = 4950 bytes, target 5000; the window moves
    // from 2000 to 3000, not by slow start's 2 segments.
    let mut s = mcp(210_000);
    let mut out = vec![];
    s.send(0, &mut out);
    s.on_ack(10_000, 1000, false, 0, &mut out);
    assert_eq!(s.mcp_target, Some(5000.0));
    assert_eq!(s.cwnd, 3000.0);
    // Within the RTT the target holds: one more segment.
    s.on_ack(12_000, 3000, false, 2_000, &mut out);
    assert_eq!(s.mcp_target, Some(5000.0));
    assert_eq!(s.cwnd, 4000.0);
    // One SRTT after the update (20 ns, SRTT still 10,000 ps): R =
    // 96,000, D = 190,000 ps: 5052.6 bytes, target 6000.
    s.on_ack(20_000, 4000, false, 10_000, &mut out);
    assert_eq!(s.mcp_target, Some(6000.0));
    assert_eq!(s.cwnd, 5000.0);
    // Above its target it comes down one segment per ACK, to it.
    s.cwnd = 7500.0;
    s.on_ack(21_000, 5000, false, 11_000, &mut out);
    assert_eq!(s.cwnd, 6500.0);
    s.on_ack(22_000, 6000, false, 12_000, &mut out);
    assert_eq!(s.cwnd, 6000.0);
    s.on_ack(23_000, 7000, false, 13_000, &mut out);
    assert_eq!(s.cwnd, 6000.0);
}

#[test]
fn mcp_ignores_ecn_marks() {
    // A marked ACK neither cuts the window nor moves α.
    let mut s = mcp(210_000);
    let mut out = vec![];
    s.send(0, &mut out);
    s.on_ack(10_000, 1000, true, 0, &mut out);
    assert_eq!(s.cwnd, 3000.0);
    assert_eq!(s.alpha, 1.0);
    assert!(!TransportKind::Mcp.uses_alpha(), "its packets are not ECT");
}

#[test]
fn mcp_ecn_term_scales_its_target_by_alpha() {
    let p = SenderParams {
        deadline_ps: Some(210_000),
        mcp_ecn: true,
        ..params(TransportKind::Mcp)
    };
    assert!(p.ecn_capable());
    let mut s = Sender::new(p, 100_000);
    assert_eq!(s.alpha, 0.0, "no mark seen yet");
    s.alpha = 0.5;
    let mut out = vec![];
    s.send(0, &mut out);
    // The need is 5000 bytes (as in the test above), times 1 - 0.5/2:
    // 3750. The window steps one segment toward it; the marked ACK
    // cuts nothing by itself, and moves α: (15/16)·0.5 + 1/16.
    s.on_ack(10_000, 1000, true, 0, &mut out);
    assert_eq!(s.mcp_target, Some(3750.0));
    assert_eq!(s.cwnd, 3000.0);
    assert!((s.alpha - 0.53125).abs() < 1e-12);
}

#[test]
fn mcp_past_its_deadline_falls_to_the_floor() {
    // Deadline at 5 ns, before the first ACK: the target is the
    // 2-segment floor; a 6000-byte window comes down one segment per
    // ACK and stays there.
    let mut s = mcp(5_000);
    let mut out = vec![];
    s.send(0, &mut out);
    s.cwnd = 6000.0;
    let mut windows = vec![];
    for k in 1..=6u64 {
        s.on_ack(10_000 + k * 1000, k * 1000, false, k * 1000, &mut out);
        windows.push(s.cwnd);
    }
    assert_eq!(s.mcp_target, Some(2000.0));
    assert_eq!(windows, [5000.0, 4000.0, 3000.0, 2000.0, 2000.0, 2000.0]);
    // It keeps sending: the flow is not dropped.
    assert!(!out.is_empty());
}

#[test]
fn mcp_without_a_deadline_grows_as_newreno() {
    let mut s = Sender::new(params(TransportKind::Mcp), 100_000);
    let mut out = vec![];
    s.send(0, &mut out);
    s.on_ack(10_000, 1000, false, 0, &mut out);
    assert_eq!(s.cwnd, 3000.0, "slow start");
    assert_eq!(s.mcp_target, None);
}

fn sack_sender(init_cwnd: u32) -> Sender {
    let p = SenderParams {
        init_cwnd,
        sack: true,
        ..params(TransportKind::Tcp)
    };
    Sender::new(p, 100_000)
}

/// An ACK of `ack` with `blocks` at `t`: what it sent, (seq, resent).
fn sack_ack(s: &mut Sender, t: u64, ack: u64, blocks: &[(u64, u64)]) -> Vec<(u64, bool)> {
    let mut out = vec![];
    s.on_ack_sacks(t, ack, false, 0, blocks, &mut out);
    out.iter().map(|x| (x.seq, x.retransmit)).collect()
}

#[test]
fn sack_recovers_one_lost_segment() {
    // 8 segments, the first lost. SACKed bytes leave pipe, so each of
    // the first two duplicates lets one new segment out (cwnd 8000).
    let mut s = sack_sender(8);
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(out.len(), 8);
    assert_eq!(sack_ack(&mut s, 1, 0, &[(1000, 2000)]), [(8000, false)]);
    assert_eq!(sack_ack(&mut s, 2, 0, &[(1000, 3000)]), [(9000, false)]);
    // Third SACKed segment: segment 0 is lost (3 SACKed above it);
    // pipe = 10 sent - 3 SACKed - 1 lost = 6000: ssthresh = cwnd =
    // 3000, the head resent at once, outside the window.
    assert_eq!(sack_ack(&mut s, 3, 0, &[(1000, 4000)]), [(0, true)]);
    assert!(s.in_recovery);
    assert_eq!((s.ssthresh, s.cwnd), (3000.0, 3000.0));
    // pipe: 4 unSACKed not lost + the resent one = 5000, then down.
    for (t, e) in [(4, 5000), (5, 6000), (6, 7000), (7, 8000)] {
        assert!(sack_ack(&mut s, t, 0, &[(1000, e)]).is_empty());
    }
    // pipe 2000 (segment 9 and the resent 0): one new segment.
    assert_eq!(sack_ack(&mut s, 8, 0, &[(1000, 9000)]), [(10_000, false)]);
    assert_eq!(sack_ack(&mut s, 9, 0, &[(1000, 10_000)]), [(11_000, false)]);
    // The resent segment arrives: RecoveryPoint (10,000) reached.
    assert_eq!(
        sack_ack(&mut s, 10, 10_000, &[]),
        [(12_000, false)],
        "cwnd 3000, pipe 2000"
    );
    assert!(!s.in_recovery);
    assert_eq!((s.cwnd, s.retransmits, s.timeouts), (3000.0, 1, 0));
}

#[test]
fn sack_recovers_two_holes_in_one_round_trip() {
    // 10 segments, 0 and 5 lost: NewReno needs a partial ACK for the
    // second; SACK resends it as soon as 3 SACKed segments lie above.
    let mut s = sack_sender(10);
    let mut out = vec![];
    s.send(0, &mut out);
    let resent = std::cell::RefCell::new(vec![]);
    let t = std::cell::Cell::new(0);
    let ack = |s: &mut Sender, a: u64, b: &[(u64, u64)]| {
        t.set(t.get() + 1);
        for (seq, r) in sack_ack(s, t.get(), a, b) {
            if r {
                resent.borrow_mut().push(seq);
            }
        }
    };
    ack(&mut s, 0, &[(1000, 2000)]);
    ack(&mut s, 0, &[(1000, 3000)]);
    ack(&mut s, 0, &[(1000, 4000)]);
    assert!(s.in_recovery);
    // 12 sent, 3 SACKed, 0 lost: pipe 8000, ssthresh 4000.
    assert_eq!(s.ssthresh, 4000.0);
    ack(&mut s, 0, &[(1000, 5000)]);
    ack(&mut s, 0, &[(6000, 7000), (1000, 5000)]);
    ack(&mut s, 0, &[(6000, 8000), (1000, 5000)]);
    assert_eq!(*resent.borrow(), [0], "5 not lost yet: 2 SACKed above it");
    ack(&mut s, 0, &[(6000, 9000), (1000, 5000)]);
    // 5 is lost now; pipe is 4000 = cwnd until segment 9 is SACKed.
    ack(&mut s, 0, &[(6000, 10_000), (1000, 5000)]);
    assert_eq!(*resent.borrow(), [0, 5000]);
    // The resent 0 arrives: a partial ACK, still in recovery; then 5.
    ack(&mut s, 5000, &[(6000, 12_000)]);
    assert!(s.in_recovery);
    ack(&mut s, 12_000, &[]);
    assert!(!s.in_recovery);
    assert_eq!((s.retransmits, s.timeouts, s.cwnd), (2, 0, 4000.0));
}

#[test]
fn sack_a_hole_lost_twice_waits_for_the_timer() {
    let mut s = sack_sender(4);
    let mut out = vec![];
    s.send(0, &mut out);
    sack_ack(&mut s, 1, 0, &[(1000, 2000)]);
    sack_ack(&mut s, 2, 0, &[(1000, 3000)]);
    assert_eq!(sack_ack(&mut s, 3, 0, &[(1000, 4000)]), [(0, true)]);
    // The resent 0 is lost too: the SACKs of 4000 and 5000 never
    // resend it (once per recovery, RFC 6675 HighRxt).
    let later = [
        sack_ack(&mut s, 4, 0, &[(1000, 5000)]),
        sack_ack(&mut s, 5, 0, &[(1000, 6000)]),
    ];
    assert!(later.iter().flatten().all(|&(_, r)| !r), "{later:?}");
    let sent = s.max_sent;
    // The timer: every byte not SACKed is lost, the SACKs are kept,
    // and only the hole goes out (cwnd 1 segment).
    out.clear();
    let at = s.rto_at.expect("armed");
    s.on_timeout(at, &mut out);
    assert_eq!(seqs(&out), [0]);
    assert!(out[0].retransmit);
    assert_eq!(s.sacked_bytes(), 5000);
    assert_eq!((s.timeouts, s.cwnd), (1, 1000.0));
    // It arrives: everything up to what was sent is acknowledged.
    sack_ack(&mut s, at + 10, sent, &[]);
    assert_eq!(s.una, sent);
    assert_eq!(s.sacked_bytes(), 0);
}

#[test]
fn sack_timeout_resends_holes_not_sacked_data() {
    // 5 segments; 0, 2 and 4 lost; 1 and 3 SACKed by two duplicates
    // (too few for a recovery); each duplicate let one new segment
    // out (5000, 6000: lost too).
    let mut s = sack_sender(5);
    let mut out = vec![];
    s.send(0, &mut out);
    assert_eq!(sack_ack(&mut s, 1, 0, &[(1000, 2000)]), [(5000, false)]);
    assert_eq!(
        sack_ack(&mut s, 2, 0, &[(3000, 4000), (1000, 2000)]),
        [(6000, false)]
    );
    assert!(!s.in_recovery);
    out.clear();
    s.on_timeout(10_000, &mut out);
    // pipe was 7 - 2 SACKed = 5000: ssthresh 2500.
    assert_eq!(s.ssthresh, 2500.0);
    assert_eq!(seqs(&out), [0]);
    // 0 arrives: ACK 2000. Slow start (cwnd 3000) resends the hole at
    // 2000, skips the SACKed 3000; 4000 up lie above the highest SACK,
    // so new data goes first (NextSeg rule 2, as ns-3 reads rule 1.b).
    assert_eq!(
        sack_ack(&mut s, 10_010, 2000, &[(3000, 4000)]),
        [(2000, true), (7000, false), (8000, false)]
    );
    // 2000 arrives: the ACK passes the highest SACK, and the bytes
    // lost at the timeout go out, lowest first.
    let got = sack_ack(&mut s, 10_020, 4000, &[]);
    assert_eq!(got[0], (4000, true));
    assert_eq!(s.retransmits, 3);
    assert_eq!(s.timeouts, 1);
}

#[test]
fn rto_undo_restores_the_window_when_the_original_was_only_late() {
    // 4 segments at t = 0 (timestamp 0), the timer fires at 10_000:
    // cwnd one segment, ssthresh pipe/2 = 2000, the head resent, every
    // byte lost. Then ACK 1000 arrives at 10_010.
    let run = |undo: bool, echo: u64| {
        let p = SenderParams {
            init_cwnd: 4,
            sack: true,
            rto_undo: undo,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        out.clear();
        s.on_timeout(10_000, &mut out);
        assert_eq!((seqs(&out), s.cwnd, s.ssthresh), (vec![0], 1000.0, 2000.0));
        out.clear();
        s.on_ack_sacks(10_010, 1000, false, echo, &[], &mut out);
        let sent: Vec<_> = out.iter().map(|x| (x.seq, x.retransmit)).collect();
        (sent, s.cwnd, s.undone)
    };
    // Echoing 0, the ACK answers the original: the timeout was
    // spurious. Undone: cwnd 4000 again, 1000-3999 in flight (not
    // lost), so one new segment fills the window.
    assert_eq!(run(true, 0), (vec![(4000, false)], 4000.0, 1));
    // Echoing the retransmission's 10_000: a real loss, as without
    // the knob: slow start from one segment (2000) resends the holes.
    let lost = (vec![(1000, true), (2000, true)], 2000.0, 0);
    assert_eq!(run(true, 10_000), lost);
    assert_eq!(run(false, 0), lost);
}

#[test]
fn reordering_adaptive_undoes_a_fast_recovery_the_original_ends() {
    // As `sack_recovers_one_lost_segment` up to the third SACK (t = 3):
    // recovery, cwnd 8000 cut to 3000, segment 0 resent at t = 3.
    // Then ACK 4000 at t = 4, echoing `echo`.
    let run = |adaptive: bool, echo: u64| {
        let p = SenderParams {
            init_cwnd: 8,
            sack: true,
            reorder_adaptive: adaptive,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        sack_ack(&mut s, 1, 0, &[(1000, 2000)]);
        sack_ack(&mut s, 2, 0, &[(1000, 3000)]);
        assert_eq!(sack_ack(&mut s, 3, 0, &[(1000, 4000)]), [(0, true)]);
        assert_eq!(s.cwnd, 3000.0);
        out.clear();
        s.on_ack_sacks(4, 4000, false, echo, &[], &mut out);
        let sent: Vec<_> = out.iter().map(|x| (x.seq, x.retransmit)).collect();
        (
            sent,
            s.cwnd,
            s.in_recovery,
            s.fast_undone,
            s.board.dup_thresh(),
        )
    };
    // Echoing 0: segment 0's original filled the hole, nothing was
    // lost. Undone: cwnd 8000 again, out of recovery; 4000-9999 in
    // flight (pipe 6000), so two new segments; the hole lay 4000 bytes
    // below the highest SACKed byte, so DupThresh becomes 4 segments.
    let undone = (vec![(10_000, false), (11_000, false)], 8000.0, false, 1, 4);
    assert_eq!(run(true, 0), undone);
    // Echoing the retransmission's 3: a real loss, as without the
    // knob: a partial ACK in recovery, pipe 6000 over cwnd 3000.
    let kept = (vec![], 3000.0, true, 0, 3);
    assert_eq!(run(true, 3), kept);
    assert_eq!(run(false, 0), kept);
}

#[test]
fn receiver_reports_sack_blocks() {
    let mut r = Receiver::with_sack(10_000);
    r.on_data(0, 1000, false);
    assert_eq!(r.sack_blocks(3).n, 0, "nothing above the ACK");
    r.on_data(2000, 1000, false);
    r.on_data(4000, 1000, false);
    assert_eq!(r.sack_blocks(3).as_slice(), &[(4000, 5000), (2000, 3000)]);
    // A copy of held bytes changes nothing; the hole at 1000 filled
    // moves the ACK past the first block.
    r.on_data(2000, 1000, false);
    assert_eq!(r.sack_blocks(3).as_slice(), &[(4000, 5000), (2000, 3000)]);
    r.on_data(1000, 1000, false);
    assert_eq!(r.nxt, 3000);
    assert_eq!(r.sack_blocks(3).as_slice(), &[(4000, 5000)]);
    assert_eq!(Receiver::new(10).sack_blocks(3).n, 0);
}

#[test]
fn receiver_reorders() {
    let mut r = Receiver::new(3000);
    assert_eq!(r.on_data(1000, 1000, false), (false, false));
    assert_eq!(r.nxt, 0);
    // Filling a hole is acknowledged at once (RFC 5681 §4.2): not "in order".
    assert_eq!(r.on_data(0, 1000, true), (false, true));
    assert_eq!(r.nxt, 2000);
    r.on_data(2000, 1000, true);
    assert!(r.complete());
}

#[test]
fn only_window_transports_switch_mid_flow() {
    type T = TransportKind;
    assert!(T::Dctcp.switchable_to(T::D2tcp));
    assert!(T::Mcp.switchable_to(T::Dctcp));
    assert!(T::Tcp.switchable_to(T::Dctcp));
    assert!(T::Rcp.switchable_to(T::Rcp));
    assert!(!T::Rcp.switchable_to(T::Dctcp));
    assert!(!T::Dctcp.switchable_to(T::Pfabric));
}

#[test]
fn every_transport_is_listed_under_its_own_name() {
    let all = crate::transports::ALL;
    let mut names: Vec<&str> = all.iter().map(|t| t.kind.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len());
    let options: Vec<&str> = crate::transports::options().map(|t| t.name()).collect();
    assert_eq!(options, ["tcp", "dctcp", "rcp", "d2tcp", "pfabric"]);
}
