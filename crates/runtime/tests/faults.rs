//! Faults on loopback, in one process: an agent killed and restarted
//! mid-transfer, the coordinator killed and restarted mid-transfer (with a
//! writer paused by the schedule when it dies), a client that goes
//! silent without closing, and an agent whose coordinator predates the
//! sync stream (it syncs by unary calls). "Killed" means stopped with its state dropped
//! and no last word: an agent's clients see their connection close, a
//! coordinator's agents see their syncs fail.
//!
//! Every byte is checked against its flow's pattern at the receiver; the
//! coordinator must report each coflow complete with each flow counted once
//! and every byte counted once. Senders wait at gates between phases, so
//! that what happens "mid-transfer" does not depend on timing; the only
//! time limits are generous ones on waiting.

mod common;

use coflowkit_runtime::agent::AgentOptions;
use coflowkit_runtime::client::AgentClient;
use coflowkit_runtime::proto;
use coflowkit_runtime::proto::client_request::Kind;
use coflowkit_runtime::{wire, PROTOCOL_VERSION};
use common::{connect, write_pattern, Cluster, Pattern, Receiver};
use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const MB: u64 = 1_000_000;
const WAIT: Duration = Duration::from_secs(30);

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < WAIT, "waited {WAIT:?} for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until every flow in `want` (tag, bytes) has ended at the receiver
/// with exactly its bytes, all intact.
fn all_arrived(rx: &Receiver, want: &[(u64, u64)]) {
    wait_until("the receivers to see every flow end", || {
        let g = rx.flows.lock().unwrap();
        want.iter()
            .all(|(t, _)| g.get(t).is_some_and(|r| r.done.is_some()))
    });
    let g = rx.flows.lock().unwrap();
    for &(t, bytes) in want {
        assert_eq!(g[&t].bytes, bytes, "flow {t}: bytes at the receiver");
        assert!(g[&t].intact, "flow {t} corrupted");
    }
}

/// One gate: the sender says it reached a phase's end and waits to be let
/// on.
struct Gate {
    reached: mpsc::Receiver<()>,
    go: mpsc::Sender<()>,
}

struct GateSide {
    reached: mpsc::Sender<()>,
    go: mpsc::Receiver<()>,
}

fn gate() -> (Gate, GateSide) {
    let (rt, rr) = mpsc::channel();
    let (gt, gr) = mpsc::channel();
    (
        Gate {
            reached: rr,
            go: gt,
        },
        GateSide {
            reached: rt,
            go: gr,
        },
    )
}

impl GateSide {
    fn wait(&self) {
        self.reached.send(()).unwrap();
        self.go.recv().unwrap();
    }
}

impl Gate {
    fn reached(&self) {
        self.reached.recv_timeout(WAIT).expect("the sender stalled");
    }
    fn open(&self) {
        self.go.send(()).unwrap();
    }
}

/// Agent 0 dies while its writer is mid-transfer: the writer goes on as
/// plain TCP; the agent comes back, the client reconnects on its own, the
/// writer is scheduled again and its flow goes on with the bytes written so
/// far. The coordinator reports the coflow with its two flows and exactly
/// their bytes.
#[test]
fn an_agent_killed_and_restarted_mid_transfer_loses_and_double_counts_nothing() {
    let mut cluster = Cluster::start("agent-restart", "fair", 3, 100e6);
    let rx = Receiver::start();
    let c0 = AgentClient::connect(cluster.socket(0));
    let c1 = AgentClient::connect(cluster.socket(1));
    let a = c0.register(&[]).unwrap();
    let (g, side) = gate();
    let to = rx.addr;
    let client = c0.clone();
    let s0 = std::thread::spawn(move || {
        let mut w = client.writer(a, 2, None, connect(to, 1));
        let mut p = Pattern::new(1);
        assert!(w.is_scheduled());
        write_pattern(&mut w, &mut p, MB);
        side.wait(); // the agent is killed
        assert!(!w.is_scheduled(), "no agent: plain TCP");
        write_pattern(&mut w, &mut p, MB);
        side.wait(); // the agent is back and the client reconnected
        assert!(w.is_scheduled(), "scheduled again after the reconnection");
        write_pattern(&mut w, &mut p, 2 * MB);
        assert_eq!(w.bytes_written(), 4 * MB);
        w.finish().unwrap();
    });
    let client = c1.clone();
    let s1 = std::thread::spawn(move || {
        let mut w = client.writer(a, 2, None, connect(to, 2));
        write_pattern(&mut w, &mut Pattern::new(2), 4 * MB);
        w.finish().unwrap();
    });
    g.reached();
    let t_kill = Instant::now();
    cluster.kill_agent(0);
    wait_until("the client to notice its agent died", || !c0.is_connected());
    let noticed = t_kill.elapsed();
    assert!(c0.register(&[]).is_err(), "no agent to mint an id");
    g.open();
    g.reached();
    let t_restart = Instant::now();
    cluster.restart_agent(0);
    wait_until("the client to reconnect", || c0.is_connected());
    // For the record (not asserted).
    eprintln!(
        "agent restart: loss noticed after {:.1} ms; client reconnected {:.1} ms after the restart",
        noticed.as_secs_f64() * 1e3,
        t_restart.elapsed().as_secs_f64() * 1e3
    );
    g.open();
    s0.join().unwrap();
    s1.join().unwrap();
    c0.unregister(a).unwrap();
    all_arrived(&rx, &[(1, 4 * MB), (2, 4 * MB)]);
    assert!(
        cluster.wait_core(WAIT, |c| c.completed_coflows().iter().any(|x| x.id == a.0)),
        "the coflow was never reported complete"
    );
    assert!(cluster.wait_idle(WAIT), "coflows left active");
    let core = cluster.coordinator.as_ref().unwrap().core.lock().unwrap();
    let done = core.completed_coflows();
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!((done[0].n_flows, done[0].bytes), (2, 8 * MB), "{done:?}");
    drop(core);
    cluster.stop();
}

/// The coordinator dies while coflow A is mid-transfer and coflow B's
/// writer is paused behind it (strict FIFO under `aalo:queues=strict`):
/// B's writer falls back and finishes while the coordinator is down, A
/// goes on at its last rate; a new coordinator at the same address
/// rebuilds its state from the agents' syncs and reports both coflows
/// complete, with every byte counted once.
#[test]
fn the_coordinator_killed_and_restarted_mid_transfer_rebuilds_its_state() {
    let mut cluster = Cluster::start("coord-restart", "aalo:queues=strict", 3, 100e6);
    let rx = Receiver::start();
    let c0 = AgentClient::connect(cluster.socket(0));
    let c1 = AgentClient::connect(cluster.socket(1));
    let a = c0.register(&[]).unwrap();
    let (g, side) = gate();
    let to = rx.addr;
    let client = c0.clone();
    let sa = std::thread::spawn(move || {
        let mut w = client.writer(a, 2, None, connect(to, 1));
        let mut p = Pattern::new(1);
        write_pattern(&mut w, &mut p, MB);
        side.wait(); // B is paused, the coordinator killed, B done
        write_pattern(&mut w, &mut p, 3 * MB);
        side.wait(); // a new coordinator has rebuilt A
        write_pattern(&mut w, &mut p, 3 * MB);
        w.finish().unwrap();
    });
    g.reached();
    // A is active and ahead; B arrives behind it and is paused.
    let b = c1.register(&[]).unwrap();
    let client = c1.clone();
    let sb = std::thread::spawn(move || {
        let mut w = client.writer(b, 2, None, connect(to, 2));
        write_pattern(&mut w, &mut Pattern::new(2), 2 * MB);
        w.finish().unwrap();
    });
    assert!(
        cluster.wait_core(WAIT, |c| c.schedule_of(1).iter().any(|r| r.paused)),
        "B's flow was never paused behind A"
    );
    let t_kill = Instant::now();
    cluster.kill_coordinator();
    // B's writer must not stay paused: it finishes with no coordinator.
    all_arrived(&rx, &[(2, 2 * MB)]);
    let b_done = t_kill.elapsed();
    sb.join().unwrap();
    c1.unregister(b).unwrap();
    g.open();
    g.reached();
    let t_restart = Instant::now();
    cluster.restart_coordinator();
    assert!(
        cluster.wait_core(WAIT, |c| c.counts().0 >= 1
            && c.completed_coflows().iter().any(|x| x.id == b.0)),
        "the new coordinator did not rebuild A and complete B"
    );
    // For the record (not asserted).
    eprintln!(
        "coordinator restart: paused B (2 MB) done {:.0} ms after the kill; \
         the new coordinator had A back and B complete {:.0} ms after its start",
        b_done.as_secs_f64() * 1e3,
        t_restart.elapsed().as_secs_f64() * 1e3
    );
    g.open();
    sa.join().unwrap();
    c0.unregister(a).unwrap();
    all_arrived(&rx, &[(1, 7 * MB), (2, 2 * MB)]);
    assert!(
        cluster.wait_core(WAIT, |c| c.completed_coflows().iter().any(|x| x.id == a.0)),
        "A was never reported complete"
    );
    assert!(cluster.wait_idle(WAIT), "coflows left active");
    let core = cluster.coordinator.as_ref().unwrap().core.lock().unwrap();
    let mut done: Vec<_> = core
        .completed_coflows()
        .iter()
        .map(|x| (x.id, x.n_flows, x.bytes))
        .collect();
    done.sort_unstable();
    assert_eq!(done, vec![(a.0, 1, 7 * MB), (b.0, 1, 2 * MB)]);
    drop(core);
    cluster.stop();
}

/// A client that registers, opens a flow, reports, then goes silent with
/// its socket still open, is disconnected after the client timeout: its
/// flow closes at its last count and its coflow completes. A client that
/// is idle but alive (its reporter heartbeats) is not.
#[test]
fn a_silent_client_is_cleaned_up_after_the_timeout() {
    let opts = AgentOptions {
        client_timeout: Duration::from_millis(500),
        ..AgentOptions::default()
    };
    let cluster = Cluster::start_with("silent", "fair", 2, 1e9, opts);
    let idle = AgentClient::connect(cluster.socket(0));
    let mut raw = std::os::unix::net::UnixStream::connect(cluster.socket(0)).unwrap();
    let mut call = |kind: Kind| -> proto::AgentReply {
        let req = proto::ClientRequest {
            protocol_version: PROTOCOL_VERSION,
            kind: Some(kind),
        };
        wire::write_blocking(&mut raw, &req).unwrap();
        wire::read_blocking(&mut raw).unwrap()
    };
    let Some(proto::agent_reply::Kind::Registered(r)) =
        call(Kind::Register(proto::RegisterRequest { parents: vec![] })).kind
    else {
        panic!("not registered")
    };
    let coflow = r.coflow_id;
    let Some(proto::agent_reply::Kind::FlowOpened(o)) =
        call(Kind::OpenFlow(proto::OpenFlowRequest {
            coflow_id: coflow,
            dst_host: 1,
            size_hint: 0,
        }))
        .kind
    else {
        panic!("not opened")
    };
    call(Kind::Report(proto::ReportRequest {
        flows: vec![proto::FlowBytes {
            flow_id: o.flow_id,
            bytes_sent: 12_345,
        }],
    }));
    // Now silent. The agent gives up on it and the coflow completes.
    assert!(
        cluster.wait_core(WAIT, |c| c
            .completed_coflows()
            .iter()
            .any(|x| x.id == coflow)),
        "the silent client's coflow never completed"
    );
    let core = cluster.coordinator.as_ref().unwrap().core.lock().unwrap();
    let x = core.completed_coflows()[0].clone();
    drop(core);
    assert_eq!((x.n_flows, x.bytes), (1, 12_345));
    // Its connection was closed.
    raw.set_read_timeout(Some(WAIT)).unwrap();
    let mut byte = [0u8; 1];
    assert!(matches!(raw.read(&mut byte), Ok(0) | Err(_)));
    // The idle client heartbeated all along and is still served.
    assert!(idle.is_connected());
    idle.register(&[]).unwrap();
    cluster.stop();
}

/// An agent started while its coordinator is down waits for it (with
/// `hello_retry: None`, as the binary does) and comes up when it does; a
/// client started meanwhile connects by itself. With a bounded retry it
/// gives up, naming the coordinator.
#[test]
fn an_agent_started_before_its_coordinator_comes_up_with_it() {
    use coflowkit_runtime::agent::{self, AgentConfig};
    use coflowkit_runtime::coordinator::{self, CoordinatorConfig};
    let dir = std::env::temp_dir().join(format!("coflowkit-rt-{}-early", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let port = common::free_port();
    let cfg = |h: u32| AgentConfig {
        host: h,
        coordinator: format!("http://127.0.0.1:{port}"),
        token: common::TOKEN.into(),
        socket: dir.join(format!("agent{h}.sock")),
        socket_mode: 0o600,
    };
    let gives_up = rt.block_on(agent::spawn_with(
        cfg(1),
        AgentOptions {
            hello_retry: Some(Duration::from_millis(100)),
            ..AgentOptions::default()
        },
    ));
    let e = gives_up
        .err()
        .expect("no coordinator: a bounded retry gives up");
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    let waiting = rt.spawn(agent::spawn_with(
        cfg(0),
        AgentOptions {
            hello_retry: None,
            ..AgentOptions::default()
        },
    ));
    let client = AgentClient::connect(dir.join("agent0.sock"));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!client.is_connected() && !waiting.is_finished());
    let coord = rt.block_on(async {
        let l = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        coordinator::spawn(
            CoordinatorConfig {
                n_hosts: 2,
                host_rate_bps: 1e9,
                delta: Duration::from_millis(10),
                scheduler: "fair".into(),
                token: common::TOKEN.into(),
                mark_classes: true,
                hints: Default::default(),
                fabric: None,
                agent_timeout: coordinator::DEFAULT_AGENT_TIMEOUT,
            },
            l,
        )
        .unwrap()
    });
    let agent = rt
        .block_on(async { tokio::time::timeout(WAIT, waiting).await })
        .expect("the agent never came up")
        .unwrap()
        .unwrap();
    wait_until("the client to connect", || client.is_connected());
    client.register(&[]).unwrap();
    rt.block_on(async move {
        agent.shutdown().await;
        coord.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A coordinator of before the sync stream: it answers `Hello` and `Sync`
/// and says Unimplemented to `SyncStream`, counting the syncs it takes.
#[derive(Clone, Default)]
struct OldCoordinator {
    syncs: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

#[tonic::async_trait]
impl proto::coordinator_server::Coordinator for OldCoordinator {
    async fn hello(
        &self,
        _: tonic::Request<proto::HelloRequest>,
    ) -> Result<tonic::Response<proto::HelloReply>, tonic::Status> {
        Ok(tonic::Response::new(proto::HelloReply {
            protocol_version: PROTOCOL_VERSION,
            n_hosts: 2,
            host_rate_bps: 1e9,
            delta_us: 10_000,
            scheduler: "fair".into(),
            local_thresholds: vec![],
            // An older coordinator says no spec.
            scheduler_spec: String::new(),
        }))
    }

    async fn sync(
        &self,
        _: tonic::Request<proto::SyncRequest>,
    ) -> Result<tonic::Response<proto::SyncReply>, tonic::Status> {
        self.syncs
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(tonic::Response::new(proto::SyncReply {
            protocol_version: PROTOCOL_VERSION,
            ..Default::default()
        }))
    }

    type SyncStreamStream =
        tokio_stream::wrappers::ReceiverStream<Result<proto::SyncReply, tonic::Status>>;

    async fn sync_stream(
        &self,
        _: tonic::Request<tonic::Streaming<proto::SyncRequest>>,
    ) -> Result<tonic::Response<Self::SyncStreamStream>, tonic::Status> {
        Err(tonic::Status::unimplemented("no SyncStream here"))
    }
}

#[test]
fn against_a_coordinator_without_the_sync_stream_an_agent_syncs_by_calls() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("coflowkit-rt-{}-old", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let old = OldCoordinator::default();
    let syncs = old.syncs.clone();
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(tonic::transport::Server::builder().serve_with_incoming(
            proto::coordinator_server::CoordinatorServer::new(old),
            tonic::transport::server::TcpIncoming::from(listener),
        ));
        let agent = coflowkit_runtime::agent::spawn(coflowkit_runtime::agent::AgentConfig {
            host: 0,
            coordinator: url,
            token: common::TOKEN.into(),
            socket: dir.join("agent.sock"),
            socket_mode: 0o600,
        })
        .await
        .unwrap();
        let t0 = Instant::now();
        while syncs.load(std::sync::atomic::Ordering::Relaxed) < 5 {
            assert!(t0.elapsed() < WAIT, "the agent never synced by calls");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        agent.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client whose connection to its agent is lost while it watches a flow
/// (the agent timed it out, say) takes the flow back when it reconnects,
/// with the flow's address, and a close it made meanwhile reaches the agent
/// then, with the bytes it counted. The agent here is a stand-in on a Unix
/// socket that drops the first connection right after answering the watch.
#[test]
fn a_watched_flow_is_taken_back_and_closed_after_the_client_reconnects() {
    use coflowkit_model::CoflowId;
    use std::os::unix::net::UnixListener;
    let dir = std::env::temp_dir().join(format!("coflowkit-rt-{}-watch-back", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("agent.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).unwrap();
    let answer = |req: &proto::ClientRequest| -> proto::AgentReply {
        use proto::agent_reply::Kind as R;
        let kind = match req.kind.as_ref().expect("a request") {
            Kind::WatchFlow(_) => R::FlowOpened(proto::FlowOpened {
                flow_id: 42,
                initial: None,
            }),
            Kind::ReopenFlow(r) => R::FlowOpened(proto::FlowOpened {
                flow_id: r.flow_id,
                initial: None,
            }),
            Kind::Report(_) => R::Schedule(proto::Schedule { rates: vec![] }),
            _ => R::Ok(true),
        };
        proto::AgentReply { kind: Some(kind) }
    };
    let (seen_tx, seen) = mpsc::channel();
    let agent = std::thread::spawn(move || {
        // First connection: answer until the watch, then drop it.
        let (mut first, _) = listener.accept().unwrap();
        loop {
            let req: proto::ClientRequest = wire::read_blocking(&mut first).unwrap();
            wire::write_blocking(&mut first, &answer(&req)).unwrap();
            if matches!(req.kind, Some(Kind::WatchFlow(_))) {
                break;
            }
        }
        drop(first);
        // Second: record everything up to the watched flow's close.
        let (mut second, _) = listener.accept().unwrap();
        loop {
            let req: proto::ClientRequest = wire::read_blocking(&mut second).unwrap();
            wire::write_blocking(&mut second, &answer(&req)).unwrap();
            let done = matches!(req.kind, Some(Kind::CloseFlow(_)));
            seen_tx.send(req.kind.unwrap()).unwrap();
            if done {
                return;
            }
        }
    });
    let client = AgentClient::connect_every(&socket, Duration::from_millis(10));
    let dst = "10.0.0.2:11211".parse().unwrap();
    let flow = client.watch(CoflowId(7), 1, None, 40_000, dst).unwrap();
    assert_eq!(flow, 42);
    wait_until("the client to notice the lost connection", || {
        !client.is_connected()
    });
    // Closed while no agent can be reached: accepted, sent on reconnection.
    client.close_watched(flow, 1_234).unwrap();
    agent.join().unwrap();
    let seen: Vec<Kind> = seen.try_iter().collect();
    let reopened = seen
        .iter()
        .position(|k| matches!(k, Kind::ReopenFlow(r) if r.flow_id == 42))
        .expect("the watched flow announced again");
    let Kind::ReopenFlow(r) = &seen[reopened] else {
        unreachable!()
    };
    let w = r.watch.as_ref().expect("with its address");
    assert_eq!(
        (w.src_port, w.dst_addr.as_str(), w.dst_port),
        (40_000, "10.0.0.2", 11211)
    );
    assert_eq!((r.coflow_id, r.dst_host), (7, 1));
    let Some(Kind::CloseFlow(c)) = seen.last() else {
        panic!("no close: {seen:?}")
    };
    assert_eq!((c.flow_id, c.bytes_sent), (42, 1_234));
    assert!(
        seen.iter()
            .position(|k| matches!(k, Kind::CloseFlow(_)))
            .unwrap()
            > reopened
    );
    let _ = std::fs::remove_dir_all(&dir);
}
