//! The coordinator's state over HTTP: `/state` (JSON) and `/metrics`
//! (Prometheus text format), fetched while a coflow is mid-transfer and
//! after it completed; both refused (401) without the coordinator's token,
//! the live view's files served without it; and the `coflowkit-runtime` binary's coordinator,
//! killed with SIGKILL mid-transfer and started again on the same port,
//! watched through its `/state`.

mod common;

use coflowkit_runtime::agent::{self, AgentConfig, AgentOptions};
use coflowkit_runtime::client::AgentClient;
use common::{
    connect, free_port, http_get, http_request, write_pattern, Cluster, Pattern, Receiver, TOKEN,
};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const MB: u64 = 1_000_000;
const WAIT: Duration = Duration::from_secs(30);

/// Polls `GET path` until the body satisfies `cond`; returns the body.
fn wait_body(addr: SocketAddr, path: &str, what: &str, cond: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        if let Some((200, body)) = http_get(addr, path) {
            if cond(&body) {
                return body;
            }
            assert!(
                t0.elapsed() < WAIT,
                "waited {WAIT:?} for {what}; last {path}: {body}"
            );
        } else {
            assert!(
                t0.elapsed() < WAIT,
                "waited {WAIT:?} for {what}; {path} unreachable"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Braces and brackets outside strings balance, and the text is one object.
fn balanced_object(json: &str) -> bool {
    let (mut depth, mut in_str, mut esc) = (0i64, false, false);
    for c in json.chars() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0 && !in_str && json.starts_with('{') && json.ends_with('}')
}

#[test]
fn the_coordinator_serves_its_state_as_json_and_prometheus_metrics() {
    let mut cluster = Cluster::start("status", "aalo", 3, 200e6);
    let http = {
        let c = cluster.coordinator.as_mut().unwrap();
        cluster.rt.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            c.serve_status(l).unwrap()
        })
    };
    let rx = Receiver::start();
    let c0 = AgentClient::connect(cluster.socket(0));
    let a = c0.register(&[]).unwrap();
    let (reached_tx, reached) = mpsc::channel();
    let (go, go_rx) = mpsc::channel::<()>();
    let to = rx.addr;
    let client = c0.clone();
    let sender = std::thread::spawn(move || {
        let mut w = client.writer(a, 2, None, connect(to, 1));
        let mut p = Pattern::new(1);
        write_pattern(&mut w, &mut p, MB);
        reached_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        write_pattern(&mut w, &mut p, MB);
        w.finish().unwrap();
    });
    reached.recv_timeout(WAIT).unwrap();
    // Mid-transfer: the coflow, its flow with its bytes and schedule.
    let needle = "\"flows\":[{\"host\":0,";
    let state = wait_body(http, "/state", "the flow's bytes and schedule", |b| {
        b.contains(needle) && b.contains(&format!("\"bytes\":{MB}")) && b.contains("\"class\":0")
    });
    assert!(balanced_object(&state), "{state}");
    assert!(
        state.starts_with("{\"scheduler\":\"aalo\",\"n_hosts\":3,"),
        "{state}"
    );
    assert!(
        state.contains(&format!("\"coflows\":[{{\"id\":{},", a.0)),
        "{state}"
    );
    assert!(state.contains("\"queue\":0"), "{state}");
    let (code, metrics) = http_get(http, "/metrics").unwrap();
    assert_eq!(code, 200);
    for line in [
        "# TYPE coflowkit_coordinator_ticks_total counter",
        "coflowkit_coordinator_info{scheduler=\"aalo\",hosts=\"3\"} 1",
        "coflowkit_coordinator_active_coflows 1",
        "coflowkit_coordinator_active_flows 1",
        "coflowkit_coordinator_queue_coflows{queue=\"0\"} 1",
        "coflowkit_coordinator_completed_coflows_total 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no {line:?} in\n{metrics}"
        );
    }
    for h in 0..3 {
        let p = format!("coflowkit_agent_syncs_total{{host=\"{h}\"}} ");
        let n: u64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix(&p))
            .unwrap_or_else(|| panic!("no {p} in\n{metrics}"))
            .parse()
            .unwrap();
        assert!(n > 0, "agent {h} never synced");
    }
    // Every sample line is `name{labels} value` with a number for a value.
    for l in metrics.lines().filter(|l| !l.starts_with('#')) {
        let v = l.rsplit(' ').next().unwrap();
        assert!(v.parse::<f64>().is_ok(), "{l}");
    }
    assert_eq!(http_get(http, "/nothing").unwrap().0, 404);
    // Completed: reported, and nothing active.
    go.send(()).unwrap();
    sender.join().unwrap();
    c0.unregister(a).unwrap();
    let done = wait_body(http, "/metrics", "the coflow to complete", |b| {
        b.contains("coflowkit_coordinator_completed_coflows_total 1")
    });
    assert!(
        done.contains(&format!(
            "coflowkit_coordinator_completed_bytes_total {}",
            2 * MB
        )),
        "{done}"
    );
    let state = http_get(http, "/state").unwrap().1;
    assert!(state.contains("\"coflows\":[],\"flows\":[]"), "{state}");
    cluster.stop();
}

#[test]
fn state_and_metrics_need_the_token_and_the_page_does_not() {
    let mut cluster = Cluster::start("status-token", "fair", 2, 100e6);
    let http = {
        let c = cluster.coordinator.as_mut().unwrap();
        cluster.rt.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            c.serve_status(l).unwrap()
        })
    };
    let good = format!("Bearer {TOKEN}");
    for path in ["/state", "/metrics"] {
        let (code, head, body) = http_request(http, path, None).unwrap();
        assert_eq!(code, 401, "{path} without a token: {head}\n{body}");
        assert!(
            head.to_ascii_lowercase()
                .contains("www-authenticate: bearer realm=\"coflowkit coordinator\""),
            "{head}"
        );
        assert_eq!(
            body,
            format!(
                "401 Unauthorized: no authorization token for {path}: send the coordinator's \
                 token (the contents of its --token-file) as the header \
                 'Authorization: Bearer TOKEN'\n"
            )
        );
        for wrong in [
            format!("Bearer {TOKEN}x"),
            format!("Bearer {}", &TOKEN[1..]),
            TOKEN.to_string(),
            format!("Basic {TOKEN}"),
            "Bearer".to_string(),
        ] {
            let (code, _, body) = http_request(http, path, Some(&wrong)).unwrap();
            assert_eq!(code, 401, "{path} with {wrong:?}");
            assert!(body.contains("wrong authorization token"), "{body}");
            assert!(!body.contains(TOKEN), "the refusal shows the token: {body}");
        }
        let (code, head, body) = http_request(http, path, Some(&good)).unwrap();
        assert_eq!(code, 200, "{path} with the token: {body}");
        assert!(
            head.to_ascii_lowercase()
                .contains("cache-control: no-store"),
            "{head}"
        );
    }
    // The live view's files: no data, no token needed, and a policy that
    // keeps the token on this page.
    for (path, kind) in [
        ("/", "text/html"),
        ("/live.js", "text/javascript"),
        ("/live.css", "text/css"),
    ] {
        let (code, head, body) = http_request(http, path, None).unwrap();
        assert_eq!(code, 200, "{path}: {head}");
        let head = head.to_ascii_lowercase();
        assert!(head.contains(&format!("content-type: {kind}")), "{head}");
        assert!(head.contains("referrer-policy: no-referrer"), "{head}");
        assert!(
            head.contains("content-security-policy: default-src 'none'; script-src 'self';"),
            "{head}"
        );
        assert!(!head.contains("access-control-allow-origin"), "{head}");
        assert!(!body.is_empty());
    }
    let (code, _, body) = http_request(http, "/state?token=x", None).unwrap();
    assert_eq!(code, 401, "a query string is not a token: {body}");
    cluster.stop();
}

/// The `coflowkit-runtime coordinator` process.
struct CoordinatorProcess {
    child: Child,
}

impl CoordinatorProcess {
    fn start(dir: &std::path::Path, port: u16, http: u16) -> CoordinatorProcess {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("coordinator.log"))
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_coflowkit-runtime"))
            .args([
                "coordinator",
                "--hosts",
                "3",
                "--host-rate",
                "100Mbps",
                "--scheduler",
                "fair",
            ])
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--http-listen")
            .arg(format!("127.0.0.1:{http}"))
            .arg("--token-file")
            .arg(dir.join("token"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        CoordinatorProcess { child }
    }

    /// SIGKILL: no shutdown of any kind.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for CoordinatorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_coordinator_process_killed_with_sigkill_mid_transfer_is_rebuilt_by_a_new_one() {
    let dir = std::env::temp_dir().join(format!("coflowkit-rt-{}-sigkill", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("token"), TOKEN).unwrap();
    let (port, http_port) = (free_port(), free_port());
    let http: SocketAddr = format!("127.0.0.1:{http_port}").parse().unwrap();
    let coord = CoordinatorProcess::start(&dir, port, http_port);
    wait_body(http, "/state", "the coordinator to start", |_| true);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let agents: Vec<_> = (0..3u32)
        .map(|h| {
            rt.block_on(agent::spawn_with(
                AgentConfig {
                    host: h,
                    coordinator: format!("http://127.0.0.1:{port}"),
                    token: TOKEN.into(),
                    socket: dir.join(format!("agent{h}.sock")),
                    socket_mode: 0o600,
                },
                AgentOptions::default(),
            ))
            .unwrap()
        })
        .collect();
    let rx = Receiver::start();
    let clients: Vec<_> = (0..2)
        .map(|h| AgentClient::connect(dir.join(format!("agent{h}.sock"))))
        .collect();
    let a = clients[0].register(&[]).unwrap();
    let (reached_tx, reached) = mpsc::channel();
    let mut gos = vec![];
    let mut senders = vec![];
    for (h, client) in clients.iter().enumerate() {
        let (go, go_rx) = mpsc::channel::<()>();
        gos.push(go);
        let (client, reached_tx, to) = (client.clone(), reached_tx.clone(), rx.addr);
        senders.push(std::thread::spawn(move || {
            let tag = h as u64 + 1;
            let mut w = client.writer(a, 2, None, connect(to, tag));
            let mut p = Pattern::new(tag);
            write_pattern(&mut w, &mut p, MB);
            reached_tx.send(()).unwrap();
            go_rx.recv().unwrap(); // the coordinator was killed
            write_pattern(&mut w, &mut p, MB);
            reached_tx.send(()).unwrap();
            go_rx.recv().unwrap(); // a new one runs
            write_pattern(&mut w, &mut p, 2 * MB);
            w.finish().unwrap();
        }));
    }
    for _ in 0..2 {
        reached.recv_timeout(WAIT).unwrap();
    }
    wait_body(http, "/state", "both flows", |b| {
        b.matches("\"flow_id\"").count() == 2
    });
    coord.kill();
    assert!(
        http_get(http, "/state").is_none(),
        "the coordinator still answers"
    );
    for g in &gos {
        g.send(()).unwrap();
    }
    for _ in 0..2 {
        reached.recv_timeout(WAIT).unwrap();
    }
    let coord = CoordinatorProcess::start(&dir, port, http_port);
    // The new coordinator learns both flows, with their bytes so far, from
    // the agents' next syncs.
    wait_body(
        http,
        "/state",
        "the new coordinator to rebuild the flows",
        |b| b.matches(&format!("\"bytes\":{}", 2 * MB)).count() == 2,
    );
    for g in &gos {
        g.send(()).unwrap();
    }
    for s in senders {
        s.join().unwrap();
    }
    clients[0].unregister(a).unwrap();
    let metrics = wait_body(http, "/metrics", "the coflow to complete", |b| {
        b.contains("coflowkit_coordinator_completed_coflows_total 1")
    });
    assert!(
        metrics.contains(&format!(
            "coflowkit_coordinator_completed_bytes_total {}",
            8 * MB
        )),
        "{metrics}"
    );
    let t0 = Instant::now();
    while ![1u64, 2].iter().all(|t| {
        rx.flows
            .lock()
            .unwrap()
            .get(t)
            .is_some_and(|r| r.done.is_some())
    }) {
        assert!(t0.elapsed() < WAIT, "the receivers did not see the ends");
        std::thread::sleep(Duration::from_millis(5));
    }
    let g = rx.flows.lock().unwrap().clone();
    for t in [1u64, 2] {
        assert_eq!(g[&t].bytes, 4 * MB, "flow {t}");
        assert!(g[&t].intact, "flow {t} corrupted");
    }
    drop(coord);
    rt.block_on(async move {
        for a in agents {
            a.shutdown().await;
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}
