//! The runtime's overheads (their numbers: docs/benchmarks.md):
//!
//! ```sh
//! cargo run --release -p coflowkit-runtime --example overhead -- rounds --agents 100
//! cargo run --release -p coflowkit-runtime --example overhead -- rounds --agents 10000 --connections 100
//! cargo run --release -p coflowkit-runtime --example overhead -- writer --bytes 1073741824 --runs 7
//! cargo run --release -p coflowkit-runtime --example overhead -- opens --flows 1000 --rounds 5
//! ```
//!
//! `rounds`: a coordinator on loopback and `--agents` agents talking gRPC to
//! it, each with `--flows` flows of `--coflows` concurrent coflows (to other
//! hosts). One coordination round is what happens every Δ: every agent's
//! `Sync` (its coflows and flows with their byte counts in, the latest
//! schedule of its flows back), all at once, then the coordinator's tick
//! (the scheduler run on the reported bytes). The coordinator's own Δ timer
//! is set to an hour so the rounds are the bench's alone. It runs on a
//! thread of its own (a one-thread tokio runtime), whose CPU time per round
//! is printed too: what the coordinator itself spends serving the syncs,
//! apart from the emulated agents sharing the machine. With more agents
//! than `--connections`, agents share gRPC connections (HTTP/2 streams), as
//! Aalo emulated 100 daemons per machine; each still has its own host
//! number and state at the coordinator. `--transport stream` (the default,
//! what agents do) syncs each agent over one long-lived gRPC stream;
//! `--transport unary` makes one `Sync` call per agent per round.
//!
//! `opens`: `--flows` threads of one process open a writer each at once
//! through one `AgentClient` (as the testbed's runtime sender does: one
//! client per host process, a thread per flow), to an agent with a
//! coordinator on loopback; each writes a byte, waits until all are open,
//! then closes. Prints the open (OpenFlow) and close (CloseFlow) latency
//! per writer, p50 / p99 / max over `--rounds` bursts, and the burst's span
//! (first call to last open); `--at-once` opens with `writer_at_once`
//! (its open is the call, which does not wait for the agent; every writer
//! is checked to be scheduled by its agent before it closes).
//!
//! `writer`: bytes through a `CoflowWriter` (a coordinator with one fast
//! host pair, an agent, `fair`) against the same bytes through the raw
//! `TcpStream`, to a reader on loopback, runs interleaved; medians.

use coflowkit_model::Time;
use coflowkit_runtime::client::AgentClient;
use coflowkit_runtime::proto::coordinator_client::CoordinatorClient;
use coflowkit_runtime::proto::{CoflowInfo, FlowReport, SyncRequest};
use coflowkit_runtime::validate::MAX_MESSAGE_BYTES;
use coflowkit_runtime::{agent, coordinator, PROTOCOL_VERSION};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

const TOKEN: &str = "overhead-bench-token";

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    match args.iter().position(|a| a == name) {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: give a value")),
        None => default,
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn pct(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[((xs.len() as f64 * p).ceil() as usize).clamp(1, xs.len()) - 1]
}

/// Agent `a`'s sync in round `r`: its flows' bytes grow every round.
fn sync_of(a: u32, r: u64, n_agents: u32, flows: u32, coflows: u32) -> SyncRequest {
    let cf = |f: u32| (1u64 << 40) | u64::from((a * flows + f) % coflows + 1);
    SyncRequest {
        protocol_version: PROTOCOL_VERSION,
        host: a,
        coflows: (0..flows)
            .filter(|&f| (a * flows + f) < coflows)
            .map(|f| CoflowInfo {
                coflow_id: cf(f),
                parents: vec![],
                unregistered: false,
            })
            .collect(),
        flows: (0..flows)
            .map(|f| FlowReport {
                flow_id: u64::from(f) + 1,
                coflow_id: cf(f),
                dst_host: (a + 1 + f) % n_agents,
                bytes_sent: (r + 1) * 10_000 * (u64::from(f % 7) + 1),
                size_hint: 0,
                finished: false,
            })
            .collect(),
        ..Default::default()
    }
}

async fn rounds(args: &[String]) {
    let n_agents: u32 = arg(args, "--agents", 100);
    let flows: u32 = arg(args, "--flows", 4);
    let coflows: u32 = arg(args, "--coflows", 100);
    let n_rounds: u64 = arg(args, "--rounds", 100);
    let warmup: u64 = arg(args, "--warmup", 5);
    let conns: u32 = arg(args, "--connections", n_agents.min(100));
    // stream: each agent syncs over one long-lived stream (what the agent
    // does); unary: one `Sync` call per agent per round (as before).
    let transport: String = arg(args, "--transport", "stream".to_string());
    assert!(
        transport == "stream" || transport == "unary",
        "--transport: stream or unary"
    );
    let scheduler: String = arg(args, "--scheduler", "aalo".to_string());
    assert!(flows < n_agents, "--flows must be below --agents");
    let coord = CoordinatorThread::start(coordinator::CoordinatorConfig {
        n_hosts: n_agents,
        host_rate_bps: 10e9,
        delta: Duration::from_secs(3600),
        scheduler: scheduler.clone(),
        token: TOKEN.into(),
        mark_classes: true,
        hints: Default::default(),
        fabric: None,
        agent_timeout: coordinator::DEFAULT_AGENT_TIMEOUT,
    });
    let h = &coord;
    let url = format!("http://{}", h.addr);
    // The agent's own client (`agent::coordinator_client`) opens a
    // connection each; here `conns` connections are shared by the agents.
    let channels: Vec<tonic::transport::Channel> = (0..conns)
        .map(|_| {
            tonic::transport::Endpoint::from_shared(url.clone())
                .unwrap()
                .connect_lazy()
        })
        .collect();
    let bearer: tonic::metadata::MetadataValue<tonic::metadata::Ascii> =
        format!("Bearer {TOKEN}").parse().unwrap();
    let client_of = |a: u32| {
        let bearer = bearer.clone();
        CoordinatorClient::with_interceptor(
            channels[(a % conns) as usize].clone(),
            move |mut req: tonic::Request<()>| {
                req.metadata_mut().insert("authorization", bearer.clone());
                Ok(req)
            },
        )
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
    };
    // With streams: per agent a task holding its stream, which takes the
    // round's request from `to_agent[a]` and hands the reply's rate count
    // to `done` (the agent's own loop: a tick wakes it, it syncs).
    let (done_tx, mut done) = tokio::sync::mpsc::unbounded_channel::<usize>();
    let mut to_agent = vec![];
    if transport == "stream" {
        for a in 0..n_agents {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<SyncRequest>(1);
            let (req_tx, req_rx) = tokio::sync::mpsc::channel(1);
            let mut c = client_of(a);
            let done = done_tx.clone();
            tokio::spawn(async move {
                let mut replies = c
                    .sync_stream(tokio_stream::wrappers::ReceiverStream::new(req_rx))
                    .await
                    .expect("a sync stream")
                    .into_inner();
                while let Some(req) = rx.recv().await {
                    req_tx.send(req).await.expect("the stream takes a request");
                    let reply = replies.message().await.expect("a sync").expect("a reply");
                    let _ = done.send(reply.rates.len());
                }
            });
            to_agent.push(tx);
        }
    }
    let start = Instant::now();
    let (mut total, mut wire, mut tick) = (vec![], vec![], vec![]);
    let mut cpu0 = 0.0;
    let mut rates = 0usize;
    for r in 0..warmup + n_rounds {
        let reqs: Vec<SyncRequest> = (0..n_agents)
            .map(|a| sync_of(a, r, n_agents, flows, coflows))
            .collect();
        if r == warmup {
            cpu0 = coord.cpu_seconds();
        }
        let t0 = Instant::now();
        let mut got = 0;
        if transport == "stream" {
            for (a, req) in reqs.into_iter().enumerate() {
                to_agent[a].send(req).await.expect("an agent task");
            }
            for _ in 0..n_agents {
                got += done.recv().await.expect("an agent's reply");
            }
        } else {
            let mut set = tokio::task::JoinSet::new();
            for (a, req) in reqs.into_iter().enumerate() {
                let mut c = client_of(a as u32);
                set.spawn(async move { c.sync(req).await });
            }
            while let Some(reply) = set.join_next().await {
                got += reply
                    .expect("a sync task")
                    .expect("a sync")
                    .into_inner()
                    .rates
                    .len();
            }
        }
        let t1 = Instant::now();
        h.core
            .lock()
            .unwrap()
            .tick(Time(start.elapsed().as_nanos() as u64));
        let t2 = Instant::now();
        if r >= warmup {
            wire.push((t1 - t0).as_secs_f64() * 1e3);
            tick.push((t2 - t1).as_secs_f64() * 1e3);
            total.push((t2 - t0).as_secs_f64() * 1e3);
            rates = got;
        }
    }
    let served = (coord.cpu_seconds() - cpu0) / n_rounds as f64 * 1e3;
    let (n_coflows, n_flows) = h.core.lock().unwrap().counts();
    println!(
        "rounds: {n_agents} agents over {conns} connections ({transport}), {flows} flows each, \
         {n_coflows} active coflows, {n_flows} active flows, scheduler {scheduler}, \
         {n_rounds} rounds; {rates} rates sent back per round"
    );
    println!(
        "  round  median {:.3} ms  p99 {:.3} ms",
        median(&mut total),
        pct(&mut total, 0.99)
    );
    println!(
        "  syncs  median {:.3} ms  p99 {:.3} ms",
        median(&mut wire),
        pct(&mut wire, 0.99)
    );
    println!(
        "  tick   median {:.3} ms  p99 {:.3} ms",
        median(&mut tick),
        pct(&mut tick, 0.99)
    );
    println!(
        "  coordinator thread (serving the syncs): {served:.3} ms of CPU per round, \
         plus the tick"
    );
    coord.stop();
}

/// The coordinator on a thread of its own (a one-thread tokio runtime), so
/// that its CPU time can be told from the emulated agents'.
struct CoordinatorThread {
    addr: std::net::SocketAddr,
    core: std::sync::Arc<std::sync::Mutex<coordinator::Core>>,
    tid: i32,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CoordinatorThread {
    fn start(cfg: coordinator::CoordinatorConfig) -> CoordinatorThread {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let h = coordinator::spawn(cfg, listener).unwrap();
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                tx.send((h.addr, h.core.clone(), tid)).unwrap();
                let _ = stop_rx.await;
                h.shutdown().await;
            });
        });
        let (addr, core, tid) = rx.recv().unwrap();
        CoordinatorThread {
            addr,
            core,
            tid,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// The thread's user + system CPU so far (/proc, clock ticks of 10 ms).
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", self.tid)).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = after.split_whitespace().collect();
        // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the name.
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }

    fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.thread.take().unwrap().join().unwrap();
    }
}

/// Sends `bytes` through `send` to a reader on loopback; seconds.
fn one_transfer(bytes: u64, send: impl FnOnce(TcpStream, &mut dyn FnMut(&mut dyn Write))) -> f64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let reader = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 1 << 18];
        let mut n = 0u64;
        loop {
            match c.read(&mut buf).unwrap() {
                0 => break n,
                k => n += k as u64,
            }
        }
    });
    let block = vec![0x5au8; 1 << 20];
    let t0 = Instant::now();
    let stream = TcpStream::connect(addr).unwrap();
    send(stream, &mut |w: &mut dyn Write| {
        let mut left = bytes;
        while left > 0 {
            let k = left.min(block.len() as u64) as usize;
            w.write_all(&block[..k]).unwrap();
            left -= k as u64;
        }
    });
    let got = reader.join().unwrap();
    let s = t0.elapsed().as_secs_f64();
    assert_eq!(got, bytes);
    s
}

/// A coordinator of 2 hosts at `host_rate_bps` under `scheduler` and host
/// 0's agent on a socket in a fresh temporary folder (`coflowkit-NAME-PID`):
/// the coordinator, the agent, the folder and the socket.
fn one_host(
    rt: &tokio::runtime::Runtime,
    name: &str,
    host_rate_bps: f64,
    scheduler: String,
) -> (
    coordinator::CoordinatorHandle,
    agent::AgentHandle,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let dir = std::env::temp_dir().join(format!("coflowkit-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("agent.sock");
    let (coord, ag) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let coord = coordinator::spawn(
            coordinator::CoordinatorConfig {
                n_hosts: 2,
                host_rate_bps,
                delta: Duration::from_millis(10),
                scheduler,
                token: TOKEN.into(),
                mark_classes: true,
                hints: Default::default(),
                fabric: None,
                agent_timeout: coordinator::DEFAULT_AGENT_TIMEOUT,
            },
            listener,
        )
        .unwrap();
        let ag = agent::spawn(agent::AgentConfig {
            host: 0,
            coordinator: format!("http://{}", coord.addr),
            token: TOKEN.into(),
            socket: socket.clone(),
            socket_mode: 0o600,
        })
        .await
        .unwrap();
        (coord, ag)
    });
    (coord, ag, dir, socket)
}

fn writer(args: &[String], rt: &tokio::runtime::Runtime) {
    let bytes: u64 = arg(args, "--bytes", 1 << 30);
    let runs: usize = arg(args, "--runs", 7);
    // As fast as validation allows: the bench measures the writer's cost,
    // not a pacing limit.
    let (coord, ag, dir, socket) = one_host(rt, "overhead", 1e12, "fair".into());
    let client = AgentClient::connect(&socket);
    assert!(client.is_connected());
    let (mut raw, mut wrapped) = (vec![], vec![]);
    for _ in 0..runs {
        raw.push(one_transfer(bytes, |mut s, send| {
            send(&mut s);
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }));
        let coflow = client.register(&[]).unwrap();
        wrapped.push(one_transfer(bytes, |s, send| {
            let mut w = client.writer(coflow, 1, None, s);
            assert!(w.is_scheduled());
            send(&mut w);
            let s = w.finish().unwrap();
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }));
        client.unregister(coflow).unwrap();
    }
    let gbps = |s: f64| bytes as f64 * 8.0 / s / 1e9;
    let (r, w) = (median(&mut raw), median(&mut wrapped));
    println!(
        "writer: {bytes} bytes x {runs} runs each, interleaved; raw socket median {:.2} Gbit/s \
         (runs {:.2}-{:.2}), CoflowWriter median {:.2} Gbit/s (runs {:.2}-{:.2}); writer/raw {:.3}",
        gbps(r),
        gbps(raw[raw.len() - 1]),
        gbps(raw[0]),
        gbps(w),
        gbps(wrapped[wrapped.len() - 1]),
        gbps(wrapped[0]),
        r / w
    );
    rt.block_on(async {
        ag.shutdown().await;
        coord.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

fn opens(args: &[String], rt: &tokio::runtime::Runtime) {
    let n: usize = arg(args, "--flows", 100);
    let n_rounds: usize = arg(args, "--rounds", 5);
    let scheduler: String = arg(args, "--scheduler", "aalo".to_string());
    // `--at-once`: `AgentClient::writer_at_once` (no wait for the agent)
    // instead of `writer`.
    let at_once = args.iter().any(|a| a == "--at-once");
    let (coord, ag, dir, socket) = one_host(rt, "opens", 1e9, scheduler);
    // A sink that accepts every connection and reads it to its end.
    let sink = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = sink.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in sink.incoming() {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while matches!(c.read(&mut buf), Ok(k) if k > 0) {}
            });
        }
    });
    let client = AgentClient::connect(&socket);
    assert!(client.is_connected());
    let (mut open_s, mut close_s, mut spans) = (vec![], vec![], vec![]);
    for _ in 0..n_rounds {
        let coflow = client.register(&[]).unwrap();
        let streams: Vec<TcpStream> = (0..n).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let go = std::sync::Arc::new(std::sync::Barrier::new(n + 1));
        let all_open = std::sync::Arc::new(std::sync::Barrier::new(n + 1));
        let threads: Vec<_> = streams
            .into_iter()
            .map(|s| {
                let (client, go, all_open) = (client.clone(), go.clone(), all_open.clone());
                std::thread::spawn(move || {
                    go.wait();
                    let t = Instant::now();
                    let mut w = if at_once {
                        client.writer_at_once(coflow, 1, Some(1), s)
                    } else {
                        client.writer(coflow, 1, Some(1), s)
                    };
                    let opened = Instant::now();
                    w.write_all(b"x").unwrap();
                    all_open.wait();
                    // An open sent without waiting: scheduled once answered.
                    let limit = Instant::now() + Duration::from_secs(10);
                    while !w.is_scheduled() && Instant::now() < limit {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    assert!(w.is_scheduled());
                    let c = Instant::now();
                    drop(w.finish().unwrap());
                    (t, opened, c.elapsed().as_secs_f64())
                })
            })
            .collect();
        go.wait();
        all_open.wait();
        let got: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let first = got.iter().map(|g| g.0).min().unwrap();
        let last = got.iter().map(|g| g.1).max().unwrap();
        spans.push((last - first).as_secs_f64());
        open_s.extend(got.iter().map(|g| (g.1 - g.0).as_secs_f64()));
        close_s.extend(got.iter().map(|g| g.2));
        client.unregister(coflow).unwrap();
    }
    let ms = |x: f64| x * 1e3;
    println!(
        "opens{}: {n} writers at once through one client, {n_rounds} rounds; \
         open p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; close p50 {:.3} ms, p99 {:.3} ms, \
         max {:.3} ms; burst span (first call to last open) median {:.3} ms",
        if at_once { " (writer_at_once)" } else { "" },
        ms(pct(&mut open_s, 0.5)),
        ms(pct(&mut open_s, 0.99)),
        ms(pct(&mut open_s, 1.0)),
        ms(pct(&mut close_s, 0.5)),
        ms(pct(&mut close_s, 0.99)),
        ms(pct(&mut close_s, 1.0)),
        ms(median(&mut spans)),
    );
    rt.block_on(async {
        ag.shutdown().await;
        coord.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--threads 1`: one thread runs the coordinator and the emulated
    // agents (no cross-thread wake-ups); by default tokio's one per core.
    let threads: usize = arg(&args, "--threads", 0);
    let rt = match threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        0 => tokio::runtime::Builder::new_multi_thread(),
        n => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
    }
    .enable_all()
    .build()
    .unwrap();
    match args.first().map(String::as_str) {
        Some("rounds") => rt.block_on(rounds(&args)),
        Some("writer") => writer(&args, &rt),
        Some("opens") => opens(&args, &rt),
        _ => {
            eprintln!("usage: overhead rounds [--agents N] [--flows F] [--coflows C] [--rounds R] [--connections K] [--scheduler S] [--threads T]");
            eprintln!("       overhead writer [--bytes B] [--runs R]");
            eprintln!("       overhead opens [--flows N] [--rounds R] [--scheduler S] [--at-once]");
            std::process::exit(2);
        }
    }
}
