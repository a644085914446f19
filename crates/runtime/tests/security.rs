//! Peers that should be refused are, with a reason, and nothing crashes:
//! a wrong or missing token, malformed and oversized gRPC messages,
//! garbage on a TCP connection to the coordinator, and malformed,
//! oversized or foreign requests on an agent's Unix socket.

mod common;

use coflowkit_runtime::agent::{self, coordinator_client, AgentConfig, AgentError};
use coflowkit_runtime::client::AgentClient;
use coflowkit_runtime::proto::client_request::Kind;
use coflowkit_runtime::proto::coordinator_client::CoordinatorClient;
use coflowkit_runtime::proto::{
    self, agent_reply, AgentReply, ClientRequest, FlowReport, SyncRequest,
};
use coflowkit_runtime::{wire, PROTOCOL_VERSION};
use common::{Cluster, TOKEN};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;

fn sync(host: u32, flows: Vec<FlowReport>) -> SyncRequest {
    SyncRequest {
        protocol_version: PROTOCOL_VERSION,
        host,
        coflows: vec![],
        flows,
        ..Default::default()
    }
}

fn flow(dst: u32, bytes: u64) -> FlowReport {
    FlowReport {
        flow_id: 1,
        coflow_id: 42,
        dst_host: dst,
        bytes_sent: bytes,
        size_hint: 0,
        finished: false,
    }
}

#[test]
fn agents_with_a_wrong_or_no_token_are_refused() {
    let cluster = Cluster::start("token", "fair", 2, 1e9);
    let url = cluster.url();
    let err = cluster
        .rt
        .block_on(agent::spawn(AgentConfig {
            host: 1,
            coordinator: url.clone(),
            token: "not-the-token".into(),
            socket: cluster.dir.join("intruder.sock"),
            socket_mode: 0o600,
        }))
        .err()
        .expect("a wrong token is refused");
    assert!(matches!(err, AgentError::Coordinator { .. }));
    assert!(
        err.to_string().contains("wrong authorization token"),
        "{err}"
    );
    assert!(!cluster.dir.join("intruder.sock").exists());
    cluster.rt.block_on(async {
        let mut bare = CoordinatorClient::connect(url.clone()).await.unwrap();
        let s = bare.sync(sync(0, vec![])).await.unwrap_err();
        assert_eq!(s.code(), tonic::Code::Unauthenticated);
        assert_eq!(s.message(), "no authorization token");
        // The right token still works.
        let mut ok = coordinator_client(&url, TOKEN).unwrap();
        ok.sync(sync(0, vec![])).await.unwrap();
    });
    cluster.stop();
}

#[test]
fn malformed_and_oversized_grpc_messages_are_refused_without_a_crash() {
    let cluster = Cluster::start("grpc", "aalo", 3, 1e9);
    let url = cluster.url();
    cluster.rt.block_on(async {
        let mut c = coordinator_client(&url, TOKEN).unwrap();
        let refused = |s: tonic::Status, want: &str| {
            assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
            assert!(
                s.message().contains(want),
                "{:?} lacks {want:?}",
                s.message()
            );
        };
        refused(
            c.sync(sync(0, vec![flow(9, 0)])).await.unwrap_err(),
            "flows[0].dst_host: host 9 outside the cluster of 3 hosts",
        );
        refused(c.sync(sync(5, vec![])).await.unwrap_err(), "host: host 5");
        let mut old = sync(0, vec![]);
        old.protocol_version = 0;
        refused(c.sync(old).await.unwrap_err(), "protocol version 0");
        let mut nan = sync(0, vec![flow(2, 0)]);
        nan.flows[0].coflow_id = 0;
        refused(c.sync(nan).await.unwrap_err(), "coflow id 0 is reserved");
        c.sync(sync(0, vec![flow(2, 100)])).await.unwrap();
        refused(
            c.sync(sync(0, vec![flow(2, 50)])).await.unwrap_err(),
            "bytes sent went back from 100 to 50",
        );
        // Over the 4 MiB limit: refused by the server's decoder.
        let add_token = |mut r: tonic::Request<()>| {
            r.metadata_mut()
                .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
            Ok(r)
        };
        let channel = tonic::transport::Endpoint::from_shared(url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut unlimited = CoordinatorClient::with_interceptor(channel, add_token);
        let mut big = sync(0, vec![]);
        big.coflows.push(proto::CoflowInfo {
            coflow_id: 7,
            parents: vec![u64::MAX / 3; 600_000],
            unregistered: false,
        });
        let s = unlimited.sync(big).await.unwrap_err();
        assert!(
            matches!(
                s.code(),
                tonic::Code::OutOfRange | tonic::Code::ResourceExhausted
            ),
            "{s:?}"
        );
        // Garbage on a raw TCP connection: the server drops it.
        let mut raw = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
        raw.write_all(&[0xde; 4096]).unwrap();
        let mut sink = vec![];
        let _ = raw.read_to_end(&mut sink);
        // Still serving.
        let reply = c
            .sync(sync(0, vec![flow(2, 200)]))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(reply.protocol_version, PROTOCOL_VERSION);
    });
    cluster.stop();
}

/// A sync stream of `c`: where its requests go, and its replies.
async fn open_stream(
    c: &mut coflowkit_runtime::agent::Client,
) -> (
    tokio::sync::mpsc::Sender<SyncRequest>,
    tonic::Streaming<proto::SyncReply>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let replies = c
        .sync_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    (tx, replies)
}

#[test]
fn the_sync_stream_checks_the_token_and_every_message() {
    use tokio_stream::wrappers::ReceiverStream;
    let cluster = Cluster::start("stream", "aalo", 3, 1e9);
    let url = cluster.url();
    cluster.rt.block_on(async {
        // No token: the stream is refused when it opens.
        let mut bare = CoordinatorClient::connect(url.clone()).await.unwrap();
        let (_tx, rx) = tokio::sync::mpsc::channel::<SyncRequest>(1);
        let s = bare.sync_stream(ReceiverStream::new(rx)).await.unwrap_err();
        assert_eq!(s.code(), tonic::Code::Unauthenticated);
        assert_eq!(s.message(), "no authorization token");
        // With the token: one reply per request, in order; the first refused
        // request ends the stream with its reason.
        let mut c = coordinator_client(&url, TOKEN).unwrap();
        let (tx, mut replies) = open_stream(&mut c).await;
        for bytes in [100, 200] {
            tx.send(sync(0, vec![flow(2, bytes)])).await.unwrap();
            let r = replies.message().await.unwrap().expect("a reply");
            assert_eq!(r.protocol_version, PROTOCOL_VERSION);
        }
        tx.send(sync(0, vec![flow(2, 50)])).await.unwrap();
        let s = replies.message().await.unwrap_err();
        assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
        assert!(
            s.message().contains("bytes sent went back from 200 to 50"),
            "{s:?}"
        );
        assert!(matches!(replies.message().await, Ok(None) | Err(_)));
        // Oversized: refused by the decoder; the coordinator serves on, and
        // the refused requests changed nothing (the count is still 200).
        let (tx, mut replies) = open_stream(&mut c).await;
        let mut big = sync(0, vec![]);
        big.coflows.push(proto::CoflowInfo {
            coflow_id: 7,
            parents: vec![u64::MAX / 3; 600_000],
            unregistered: false,
        });
        // (the client's own encoder may refuse it first; either way no reply)
        let _ = tx.send(big).await;
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), replies.message());
        assert!(got.await.expect("an answer, not a hang").is_err());
        let (tx, mut replies) = open_stream(&mut c).await;
        tx.send(sync(0, vec![flow(2, 150)])).await.unwrap();
        let s = replies.message().await.unwrap_err();
        assert!(
            s.message().contains("bytes sent went back from 200 to 150"),
            "{s:?}"
        );
    });
    cluster.stop();
}

fn ask(conn: &mut UnixStream, kind: Kind) -> AgentReply {
    let req = ClientRequest {
        protocol_version: PROTOCOL_VERSION,
        kind: Some(kind),
    };
    wire::write_blocking(conn, &req).unwrap();
    wire::read_blocking(conn).unwrap()
}

fn error_of(r: AgentReply) -> String {
    match r.kind {
        Some(agent_reply::Kind::Error(e)) => e,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_agent_refuses_bad_clients_and_keeps_serving() {
    let cluster = Cluster::start("socket", "fair", 3, 1e9);
    let path = cluster.socket(0);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "only the owner may reach the agent");
    // An oversized length: refused and closed.
    let mut c = UnixStream::connect(&path).unwrap();
    c.write_all(&u32::MAX.to_be_bytes()).unwrap();
    let e = error_of(wire::read_blocking(&mut c).unwrap());
    assert!(e.starts_with("frame of 4294967295 bytes"), "{e}");
    assert!(matches!(
        wire::read_blocking::<AgentReply, _>(&mut c),
        Err(wire::FrameError::Closed)
    ));
    // Bytes that are no message: refused and closed.
    let mut c = UnixStream::connect(&path).unwrap();
    c.write_all(&[0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff]).unwrap();
    let e = error_of(wire::read_blocking(&mut c).unwrap());
    assert!(e.starts_with("malformed message"), "{e}");
    // Valid frames with invalid contents: refused, the connection stays.
    let mut c = UnixStream::connect(&path).unwrap();
    let e = error_of(ask(
        &mut c,
        Kind::OpenFlow(proto::OpenFlowRequest {
            coflow_id: 5,
            dst_host: 0,
            size_hint: 0,
        }),
    ));
    assert_eq!(e, "dst_host: host 0 sends to itself");
    let e = error_of(ask(
        &mut c,
        Kind::Unregister(proto::UnregisterRequest { coflow_id: 99 }),
    ));
    assert_eq!(e, "coflow 99 was not registered at this agent");
    // Another connection's flow is not this one's to report or close.
    let mut other = UnixStream::connect(&path).unwrap();
    let opened = ask(
        &mut other,
        Kind::OpenFlow(proto::OpenFlowRequest {
            coflow_id: 5,
            dst_host: 2,
            size_hint: 0,
        }),
    );
    let Some(agent_reply::Kind::FlowOpened(o)) = opened.kind else {
        panic!("{opened:?}")
    };
    let e = error_of(ask(
        &mut c,
        Kind::CloseFlow(proto::CloseFlowRequest {
            flow_id: o.flow_id,
            bytes_sent: 0,
        }),
    ));
    assert_eq!(
        e,
        format!("flow {} is not open on this connection", o.flow_id)
    );
    // The agent still serves well-behaved clients.
    let client = AgentClient::connect(&path);
    let id = client.register(&[]).unwrap();
    client.unregister(id).unwrap();
    cluster.stop();
}

#[test]
fn without_an_agent_writers_send_plain_tcp() {
    let client = AgentClient::connect("/nonexistent/coflowkit-agent.sock");
    assert!(!client.is_connected());
    assert!(client.register(&[]).is_err());
    let rx = common::Receiver::start();
    let mut w = client.writer(
        coflowkit_model::CoflowId(1),
        1,
        None,
        common::connect(rx.addr, 5),
    );
    assert!(!w.is_scheduled());
    let mut buf = vec![0u8; 8000];
    common::Pattern::new(5).fill(&mut buf);
    w.write_all(&buf).unwrap();
    drop(w.finish().unwrap());
    let t0 = std::time::Instant::now();
    while rx
        .flows
        .lock()
        .unwrap()
        .get(&5)
        .is_none_or(|r| r.done.is_none())
    {
        assert!(t0.elapsed().as_secs() < 10);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let r = rx.flows.lock().unwrap()[&5].clone();
    assert_eq!((r.bytes, r.intact), (8000, true));
}
