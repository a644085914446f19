use super::*;

fn state() -> State {
    let (next_coflow, next_flow) = id_seeds();
    State {
        host: 0,
        n_hosts: 3,
        host_rate_bps: 1e9,
        next_coflow,
        next_flow,
        coflows: HashMap::new(),
        flows: HashMap::new(),
        thresholds: vec![1000.0, 10_000.0],
        enforcer: None,
        orphan_syncs: 10,
        local: None,
    }
}

fn opened(r: AgentReply) -> u64 {
    match r.kind {
        Some(agent_reply::Kind::FlowOpened(o)) => o.flow_id,
        other => panic!("{other:?}"),
    }
}

#[test]
fn falling_back_unpauses_every_open_flow_and_keeps_its_class() {
    let mut s = state();
    let open = |s: &mut State| {
        opened(s.handle(
            1,
            Kind::OpenFlow(proto::OpenFlowRequest {
                coflow_id: 5,
                dst_host: 1,
                size_hint: 0,
            }),
        ))
    };
    let (f1, f2) = (open(&mut s), open(&mut s));
    s.flows.get_mut(&f1).unwrap().rate = Some(FlowRate {
        flow_id: f1,
        rate_bps: 0.0,
        class: 3,
        paused: true,
    });
    s.fall_back();
    for (f, class) in [(f1, 3), (f2, 0)] {
        let r = s.flows[&f].rate.unwrap();
        assert!(!r.paused && r.rate_bps == 5e8 && r.class == class, "{r:?}");
    }
}

#[test]
fn reopened_flows_keep_their_id_and_bytes_and_adopted_coflows_must_be_this_hosts() {
    let mut s = state();
    let old = s.next_flow - 7;
    let f = opened(s.handle(
        2,
        Kind::ReopenFlow(proto::ReopenFlowRequest {
            flow_id: old,
            coflow_id: 5,
            dst_host: 1,
            size_hint: 0,
            bytes_sent: 777,
            watch: None,
        }),
    ));
    assert_eq!(f, old);
    assert_eq!(s.flows[&old].bytes, 777);
    // Known already: refused, the first one untouched.
    let again = s.handle(
        3,
        Kind::ReopenFlow(proto::ReopenFlowRequest {
            flow_id: old,
            coflow_id: 6,
            dst_host: 2,
            size_hint: 0,
            bytes_sent: 1,
            watch: None,
        }),
    );
    assert!(matches!(again.kind, Some(agent_reply::Kind::Error(_))));
    assert_eq!((s.flows[&old].coflow, s.flows[&old].conn), (5, 2));
    // New flows never take an earlier incarnation's id.
    let new = opened(s.handle(
        2,
        Kind::OpenFlow(proto::OpenFlowRequest {
            coflow_id: 5,
            dst_host: 1,
            size_hint: 0,
        }),
    ));
    assert!(new > old);
    let mine = (1u64 << 40) | 9;
    let adopt = |s: &mut State, id: u64, unregistered: bool| {
        s.handle(
            2,
            Kind::AdoptCoflow(proto::AdoptCoflowRequest {
                coflow_id: id,
                parents: vec![],
                unregistered,
            }),
        )
        .kind
    };
    assert!(matches!(
        adopt(&mut s, mine, false),
        Some(agent_reply::Kind::Ok(_))
    ));
    assert!(matches!(
        adopt(&mut s, mine, true),
        Some(agent_reply::Kind::Ok(_))
    ));
    assert!(s.coflows[&mine].unregistered);
    let theirs = (2u64 << 40) | 9;
    assert!(matches!(
        adopt(&mut s, theirs, false),
        Some(agent_reply::Kind::Error(_))
    ));
}

fn open(s: &mut State, coflow: u64, dst: u32) -> (u64, FlowRate) {
    match s
        .handle(
            1,
            Kind::OpenFlow(proto::OpenFlowRequest {
                coflow_id: coflow,
                dst_host: dst,
                size_hint: 0,
            }),
        )
        .kind
    {
        Some(agent_reply::Kind::FlowOpened(o)) => (o.flow_id, o.initial.unwrap()),
        other => panic!("{other:?}"),
    }
}

fn report(s: &mut State, flows: &[(u64, u64)]) -> Vec<FlowRate> {
    match s
        .handle(
            1,
            Kind::Report(proto::ReportRequest {
                flows: flows
                    .iter()
                    .map(|&(flow_id, bytes_sent)| proto::FlowBytes {
                        flow_id,
                        bytes_sent,
                    })
                    .collect(),
            }),
        )
        .kind
    {
        Some(agent_reply::Kind::Schedule(x)) => x.rates,
        other => panic!("{other:?}"),
    }
}

fn global(s: &mut State, rates: &[(u64, f64, u32, bool)]) {
    s.apply(proto::SyncReply {
        protocol_version: PROTOCOL_VERSION,
        rates: rates
            .iter()
            .map(|&(flow_id, rate_bps, class, paused)| FlowRate {
                flow_id,
                rate_bps,
                class,
                paused,
            })
            .collect(),
        finished_acks: vec![],
        completed_coflows: vec![],
    });
}

fn sched(r: &FlowRate) -> (f64, u32, bool) {
    (r.rate_bps, r.class, r.paused)
}

#[test]
fn flows_not_scheduled_yet_are_scheduled_locally_with_no_round_trip() {
    // Local queues at 1000 and 10,000 bytes; a 1 Gbit/s NIC.
    let mut s = state();
    let (a1, init) = open(&mut s, 5, 1);
    assert_eq!(sched(&init), (1e9, 0, false), "alone and new: Q1, the NIC");
    let (b1, init) = open(&mut s, 6, 2);
    assert_eq!(sched(&init), (5e8, 0, false), "two flows share the NIC");
    // Coflow 5 crosses the first threshold locally: demoted, locally.
    let r = report(&mut s, &[(a1, 1500), (b1, 10)]);
    assert_eq!(sched(&r[0]), (5e8, 1, false));
    assert_eq!(sched(&r[1]), (5e8, 0, false));
    // The coordinator schedules coflow 5's flow; a new flow of coflow 5
    // takes its place in the global order at once.
    global(&mut s, &[(a1, 3e8, 2, true)]);
    let (a2, init) = open(&mut s, 5, 2);
    assert_eq!(
        sched(&init),
        (3e8, 2, true),
        "a paused coflow's new flow waits"
    );
    let (c1, init) = open(&mut s, 7, 1);
    assert_eq!(
        sched(&init),
        (2.5e8, 0, false),
        "a tiny new coflow goes at once, in Q1, at an even share of the NIC"
    );
    let r = report(&mut s, &[(a1, 1500), (a2, 0), (b1, 10), (c1, 0)]);
    let got: Vec<_> = r.iter().map(sched).collect();
    assert_eq!(
        got,
        vec![
            (3e8, 2, true),
            (3e8, 2, true),
            (2.5e8, 0, false),
            (2.5e8, 0, false)
        ]
    );
    // The coordinator's schedule replaces the local one.
    global(&mut s, &[(c1, 2e8, 4, false)]);
    assert_eq!(sched(&s.flows[&c1].rate.unwrap()), (2e8, 4, false));
    assert_eq!(sched(&s.flows[&b1].rate.unwrap()), (2.5e8, 0, false));
}

#[test]
fn a_finished_flows_rate_goes_to_the_next_flow_to_the_same_destination() {
    let mut s = state();
    let (x, _) = open(&mut s, 5, 1);
    let (y, _) = open(&mut s, 6, 1);
    let (z, _) = open(&mut s, 4, 2);
    let (w, _) = open(&mut s, 8, 1);
    let (v, _) = open(&mut s, 9, 1);
    global(
        &mut s,
        &[
            (x, 6e8, 0, false),
            (y, 0.0, 1, true),
            (z, 0.0, 0, true),
            (w, 0.0, 2, true),
            (v, 1e8, 3, false),
        ],
    );
    let close = |s: &mut State, id: u64| {
        s.handle(
            1,
            Kind::CloseFlow(proto::CloseFlowRequest {
                flow_id: id,
                bytes_sent: 100,
            }),
        )
    };
    close(&mut s, x);
    let of = |s: &State, id: u64| sched(&s.flows[&id].rate.unwrap());
    assert_eq!(
        of(&s, y),
        (6e8, 1, false),
        "next in order to host 1: resumed"
    );
    assert_eq!(of(&s, z), (0.0, 0, true), "another destination: untouched");
    assert_eq!(of(&s, w), (0.0, 2, true), "later in order: still waits");
    assert_eq!(of(&s, v), (1e8, 3, false));
    // y finishes too: its (borrowed) rate goes on to w.
    close(&mut s, y);
    assert_eq!(of(&s, w), (6e8, 2, false));
    // A flow the coordinator never scheduled passes nothing on.
    let (u, _) = open(&mut s, 10, 1);
    close(&mut s, u);
    assert_eq!(of(&s, v), (1e8, 3, false));
}

#[derive(Debug, Clone)]
enum Op {
    Req(u64, u8, u64, u32, u64),
    Reply(Vec<(u64, f64, u32, bool)>, Vec<u64>, Vec<u64>),
    Disconnect(u64),
    FallBack,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (1u64..4, 0u8..7, 0u64..8, 0u32..4, 0u64..30_000)
            .prop_map(|(c, k, id, dst, b)| Op::Req(c, k, id, dst, b)),
        2 => (
            proptest::collection::vec((0u64..8, 0.0f64..2e9, 0u32..5, any::<bool>()), 0..4),
            proptest::collection::vec(0u64..8, 0..2),
            proptest::collection::vec(0u64..8, 0..2),
        )
            .prop_map(|(r, a, c)| Op::Reply(r, a, c)),
        1 => (1u64..4).prop_map(Op::Disconnect),
        1 => Just(Op::FallBack),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
    /// Random (often invalid) requests from a few connections, replies,
    /// disconnects and fallbacks: no panic, every rate told to a client
    /// valid, and no flow's bytes ever go back.
    #[test]
    fn random_requests_never_break_the_agent(ops in proptest::collection::vec(op(), 1..60)) {
        let mut s = state();
        let base = s.next_flow;
        let mine = |id: u64| (1u64 << 40) | (id + 1);
        for o in ops {
            let before: HashMap<u64, u64> =
                s.flows.iter().map(|(&id, f)| (id, f.bytes)).collect();
            match o {
                Op::Req(conn, kind, id, dst, b) => {
                    // Flow ids near the agent's own, so that some exist.
                    let fid = base + id;
                    let k = match kind {
                        0 => Kind::Register(proto::RegisterRequest { parents: vec![] }),
                        1 => Kind::Unregister(proto::UnregisterRequest { coflow_id: mine(id) }),
                        2 => Kind::OpenFlow(proto::OpenFlowRequest { coflow_id: mine(id % 3), dst_host: dst, size_hint: b }),
                        3 => Kind::Report(proto::ReportRequest { flows: vec![proto::FlowBytes { flow_id: fid, bytes_sent: b }] }),
                        4 => Kind::CloseFlow(proto::CloseFlowRequest { flow_id: fid, bytes_sent: b }),
                        5 => Kind::AdoptCoflow(proto::AdoptCoflowRequest { coflow_id: mine(id), parents: vec![], unregistered: b % 2 == 0 }),
                        _ => Kind::ReopenFlow(proto::ReopenFlowRequest { flow_id: fid, coflow_id: mine(id % 3), dst_host: dst, size_hint: 0, bytes_sent: b, watch: None }),
                    };
                    let req = ClientRequest { protocol_version: PROTOCOL_VERSION, kind: Some(k) };
                    if validate::client_request(&req, s.n_hosts, s.host).is_ok() {
                        let reply = s.handle(conn, req.kind.unwrap());
                        let rates: Vec<FlowRate> = match reply.kind {
                            Some(agent_reply::Kind::Schedule(x)) => x.rates,
                            Some(agent_reply::Kind::FlowOpened(o)) => o.initial.into_iter().collect(),
                            _ => vec![],
                        };
                        for r in &rates {
                            proptest::prop_assert!(validate::rate("r", r).is_ok(), "{r:?}");
                        }
                    }
                }
                Op::Reply(rates, acks, done) => {
                    let reply = proto::SyncReply {
                        protocol_version: PROTOCOL_VERSION,
                        rates: rates
                            .into_iter()
                            .map(|(id, rate_bps, class, paused)| FlowRate { flow_id: base + id, rate_bps, class, paused })
                            .collect(),
                        finished_acks: acks.into_iter().map(|id| base + id).collect(),
                        completed_coflows: done.into_iter().map(mine).collect(),
                    };
                    if validate::sync_reply(&reply).is_ok() {
                        s.apply(reply);
                    }
                }
                Op::Disconnect(conn) => s.disconnect(conn),
                Op::FallBack => s.fall_back(),
            }
            // An open's own local schedule (one pass) is the whole
            // local schedule's for that flow.
            let local: Vec<(u64, FlowRate)> = s
                .flows
                .iter()
                .filter(|(_, f)| !f.finished && !f.global)
                .map(|(&id, _)| (id, s.local_rate(id)))
                .collect();
            s.local_schedule();
            for (id, r) in local {
                let got = s.flows[&id].rate.expect("scheduled locally");
                proptest::prop_assert_eq!((r.rate_bps, r.class, r.paused), (got.rate_bps, got.class, got.paused));
            }
            for (id, f) in &s.flows {
                if let Some(&b) = before.get(id) {
                    proptest::prop_assert!(f.bytes >= b, "flow {id}: {b} -> {}", f.bytes);
                }
                if let Some(r) = &f.rate {
                    proptest::prop_assert!(validate::rate("r", r).is_ok(), "{r:?}");
                }
            }
            let _ = s.sync_request();
        }
    }
}

fn watched_state() -> State {
    State {
        enforcer: Some(Enforcer::detached()),
        ..state()
    }
}

fn address(src_port: u32) -> proto::FlowAddress {
    proto::FlowAddress {
        src_port,
        dst_addr: "10.0.0.2".into(),
        dst_port: 11211,
    }
}

fn watch(s: &mut State, conn: u64, coflow: u64, src_port: u32) -> u64 {
    let a = address(src_port);
    opened(s.handle(
        conn,
        Kind::WatchFlow(proto::WatchFlowRequest {
            coflow_id: coflow,
            dst_host: 1,
            size_hint: 0,
            src_port: a.src_port,
            dst_addr: a.dst_addr,
            dst_port: a.dst_port,
        }),
    ))
}

fn reopen_watched(s: &mut State, conn: u64, flow: u64, coflow: u64, src_port: u32) -> AgentReply {
    s.handle(
        conn,
        Kind::ReopenFlow(proto::ReopenFlowRequest {
            flow_id: flow,
            coflow_id: coflow,
            dst_host: 1,
            size_hint: 0,
            bytes_sent: 0,
            watch: Some(address(src_port)),
        }),
    )
}

fn close(s: &mut State, conn: u64, flow: u64, bytes: u64) -> AgentReply {
    s.handle(
        conn,
        Kind::CloseFlow(proto::CloseFlowRequest {
            flow_id: flow,
            bytes_sent: bytes,
        }),
    )
}

fn counted(s: &mut State, flow: u64, bytes: u64) {
    s.enforcer.as_ref().expect("enforcer").count(flow, bytes);
    let _ = s.sync_request();
}

/// The application's bytes go on when the client that named them loses its
/// connection: the watched flow stays open and enforced, keeps counting,
/// and the client's next connection takes it back and closes it.
#[test]
fn a_watched_flow_outlives_its_client_s_connection_and_is_taken_back() {
    let mut s = watched_state();
    let f = watch(&mut s, 1, 5, 40_000);
    counted(&mut s, f, 1_000);
    s.disconnect(1);
    assert!(!s.flows[&f].finished);
    counted(&mut s, f, 5_000);
    // Another connection cannot close it before taking it back, nor take
    // back something else under its id.
    assert!(matches!(
        close(&mut s, 2, f, 0).kind,
        Some(agent_reply::Kind::Error(_))
    ));
    let wrong = reopen_watched(&mut s, 2, f, 5, 40_001);
    assert!(matches!(wrong.kind, Some(agent_reply::Kind::Error(_))));
    let wrong = reopen_watched(&mut s, 2, f, 6, 40_000);
    assert!(matches!(wrong.kind, Some(agent_reply::Kind::Error(_))));
    assert_eq!(opened(reopen_watched(&mut s, 2, f, 5, 40_000)), f);
    assert!(matches!(
        close(&mut s, 2, f, 8_000).kind,
        Some(agent_reply::Kind::Ok(_))
    ));
    assert!(s.flows[&f].finished);
    assert_eq!(s.flows[&f].bytes, 8_000);
}

/// A watched flow nobody takes back closes at its kernel count once its
/// count has not moved for the client timeout; while it moves it stays.
#[test]
fn an_orphaned_watched_flow_closes_once_idle_for_the_client_timeout() {
    let mut s = watched_state();
    let f = watch(&mut s, 1, 5, 40_000);
    s.disconnect(1);
    for k in 1..=3 * s.orphan_syncs as u64 {
        counted(&mut s, f, 100 * k);
        assert!(!s.flows[&f].finished);
    }
    let last = 300 * s.orphan_syncs as u64;
    for _ in 0..s.orphan_syncs {
        counted(&mut s, f, last);
        assert!(!s.flows[&f].finished);
    }
    counted(&mut s, f, last);
    assert!(s.flows[&f].finished);
    assert_eq!(s.flows[&f].bytes, last);
    // Its client comes back too late: refused, the final count kept.
    let late = reopen_watched(&mut s, 2, f, 5, 40_000);
    assert!(matches!(late.kind, Some(agent_reply::Kind::Error(_))));
    assert_eq!(s.flows[&f].bytes, last);
}

/// A restarted agent (one that never saw the flow) watches a flow announced
/// again with its address; one without a device refuses it by name.
#[test]
fn a_restarted_agent_watches_a_flow_announced_again() {
    let mut s = watched_state();
    let old = s.next_flow - 9;
    assert_eq!(opened(reopen_watched(&mut s, 1, old, 5, 40_000)), old);
    assert!(s.flows[&old].watch.is_some());
    let mut plain = state();
    match reopen_watched(&mut plain, 1, old, 5, 40_000).kind {
        Some(agent_reply::Kind::Error(e)) => assert!(e.contains("--transparent-dev"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// With `--transparent-policy host` the scheduler's host policy marks the
/// watched flows: `fifo-lm` puts a task in its lowest light class (6) and
/// raises it with its age, so an older task's flow is never below a newer
/// one's; the coordinator's rates do not touch a marked flow; and the
/// policy forgets a task with its last flow.
#[test]
fn a_host_policy_marks_watched_flows_by_their_task_s_age() {
    let mut s = State {
        local: Some(local::Local::build("fifo-lm:threshold=100MB;age=1ms", 0, 3, 1e9).unwrap()),
        ..watched_state()
    };
    let old = watch(&mut s, 1, 5, 40_000);
    assert_eq!(s.flows[&old].rate.unwrap().class, 6);
    std::thread::sleep(Duration::from_millis(3));
    let new = watch(&mut s, 1, 6, 40_001);
    counted(&mut s, old, 1_000);
    let class = |s: &State, f: u64| s.flows[&f].rate.unwrap().class;
    assert!(class(&s, old) <= 3, "{}", class(&s, old));
    assert!(class(&s, old) <= class(&s, new));
    assert_eq!(s.flows[&old].rate.unwrap().rate_bps, 1e9);
    s.apply(proto::SyncReply {
        rates: vec![FlowRate {
            flow_id: new,
            rate_bps: 1.0,
            class: 7,
            paused: true,
        }],
        ..Default::default()
    });
    assert!(!s.flows[&new].rate.unwrap().paused);
    assert_eq!(s.local.as_ref().unwrap().coflows(), 2);
    close(&mut s, 1, old, 0);
    close(&mut s, 1, new, 0);
    assert_eq!(s.local.as_ref().unwrap().coflows(), 0);
    // A spec whose threshold is a percentile needs the workload: refused
    // by name.
    let e = local::Local::build("fifo-lm:threshold=p80", 0, 3, 1e9).unwrap_err();
    assert!(e.contains("fifo-lm"), "{e}");
}

/// A backlog of finished flows and unregistered coflows past what a sync
/// may carry (replies missed while the coordinator was stalled) goes out
/// in bounded parts: each sync within [`SYNC_BATCH`] of each, every open
/// flow and registered coflow in every one, an unregistered coflow only
/// with all of its flows here; acknowledging each part drains the backlog.
#[test]
fn a_backlog_past_the_message_limit_is_synced_in_bounded_parts() {
    let mut s = state();
    let n = 3 * SYNC_BATCH + 17;
    for k in 0..n as u64 {
        let coflow = (1 << 40) | (k + 1);
        s.coflows.insert(
            coflow,
            OwnCoflow {
                parents: vec![],
                unregistered: true,
                conn: 1,
            },
        );
        for j in 0..(1 + k % 2) {
            s.flows.insert(
                10 * (k + 1) + j,
                AgentFlow {
                    coflow,
                    dst: 1,
                    size_hint: 0,
                    bytes: 100,
                    finished: true,
                    conn: 1,
                    rate: None,
                    global: false,
                    watch: None,
                    orphan: None,
                    marked: false,
                },
            );
        }
    }
    // One coflow still registered, with an open flow: in every sync.
    let live = (1 << 40) | (n as u64 + 1);
    s.coflows.insert(
        live,
        OwnCoflow {
            parents: vec![],
            unregistered: false,
            conn: 1,
        },
    );
    let open = opened(s.handle(
        1,
        Kind::OpenFlow(proto::OpenFlowRequest {
            coflow_id: live,
            dst_host: 1,
            size_hint: 0,
        }),
    ));
    let mut rounds = 0;
    while s.flows.len() > 1 || s.coflows.len() > 1 {
        rounds += 1;
        assert!(rounds < 20, "the backlog does not drain");
        let req = s.sync_request();
        assert!(req.flows.len() <= SYNC_BATCH && req.coflows.len() <= SYNC_BATCH);
        assert!(req.flows.iter().any(|f| f.flow_id == open));
        assert!(req.coflows.iter().any(|c| c.coflow_id == live));
        let sent: std::collections::HashSet<u64> = req.flows.iter().map(|f| f.flow_id).collect();
        let unregistered: std::collections::HashSet<u64> = req
            .coflows
            .iter()
            .filter(|c| c.unregistered)
            .map(|c| c.coflow_id)
            .collect();
        for (id, f) in &s.flows {
            if unregistered.contains(&f.coflow) {
                assert!(
                    sent.contains(id),
                    "coflow {} sent without flow {id}",
                    f.coflow
                );
            }
        }
        s.apply(proto::SyncReply {
            finished_acks: req
                .flows
                .iter()
                .filter(|f| f.finished)
                .map(|f| f.flow_id)
                .collect(),
            completed_coflows: req
                .coflows
                .iter()
                .filter(|c| c.unregistered)
                .map(|c| c.coflow_id)
                .collect(),
            ..Default::default()
        });
    }
    assert!(rounds >= 4, "{rounds}");
    assert!(s.flows.contains_key(&open) && s.coflows.contains_key(&live));
}
