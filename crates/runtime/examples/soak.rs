//! A long run of many small tasks through one coordinator on loopback: the
//! soak test of docs/benchmarks.md (its short form in CI is
//! `tests/soak.rs`).
//!
//! ```sh
//! cargo build --release -p coflowkit-runtime --bin coflowkit-runtime --example soak
//! nice -n 10 target/release/examples/soak --secs 1800 --every 60
//! ```
//!
//! It starts `coflowkit-runtime coordinator` (`--scheduler`, `aalo` by
//! default, with `--http-listen` for its state) and one `coflowkit-runtime
//! agent` per host (`--agents`, 3) as processes of their own (the binary
//! beside this example's, or `--runtime PATH`), a receiver per host that
//! counts what it reads, and `--threads` client threads (8). Each thread
//! keeps one TCP connection to the next host's receiver and, until the run
//! ends, registers a task (a coflow) on its own host's agent, writes
//! `--bytes` (20 KB) through a `CoflowWriter` with no size hint, closes the
//! writer and unregisters the task: the shape of the run that measured the
//! coordinator's memory growing by about 1.8 KB per finished task before it
//! pruned ended flows and coflows.
//!
//! Every `--every` seconds it prints one line: the time, tasks per second
//! over the interval, the coordinator's resident memory (VmRSS of its
//! process; at that instant, and the lowest and highest of the interval's
//! samples, taken five times a second) and the agents' summed, the latency of a scheduling round
//! (median and p99 of the coordinator's last tick duration, read from
//! `/state` five times a second: a sample of the rounds), the coordinator's
//! completed coflows and bytes, and the coflows and flows active. At the
//! end it stops the clients, waits for the receivers to drain and for the
//! coordinator to report every task complete, and prints bytes sent
//! (counted by the writers), received (counted by the receivers) and
//! accounted (the coordinator's completed bytes), whether any were
//! lost, and the coordinator's resident memory at the end against its value
//! at the line nearest 5 minutes, and the coordinator's fault counters
//! (`/state`'s `faults`: agents dropped and back, final reports and
//! unregistrations repeated, coflows reopened or completed with no flow).
//! Exit status 1 if any byte or task is missing or counted twice; the
//! processes' logs are then kept.
//!
//! `--stall-every SECS --stall-ms MS` stops the coordinator's process
//! (SIGSTOP, then SIGCONT) for MS every SECS: a starved machine on purpose,
//! the reproduction of docs/lab/runtime-soak.md's over-count (with
//! `--agent-timeout-ms` below MS).

use coflowkit_runtime::client::AgentClient;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    secs: u64,
    every: u64,
    agents: u32,
    threads: u32,
    bytes: usize,
    scheduler: String,
    runtime: PathBuf,
    agent_timeout_ms: u64,
    /// Stop the coordinator's process (SIGSTOP) every this many seconds
    /// (0: never), for `stall_ms` each time: a starved machine, on purpose.
    stall_every: u64,
    stall_ms: u64,
}

fn args() -> Args {
    let mut a = Args {
        secs: 60,
        every: 10,
        agents: 3,
        threads: 8,
        bytes: 20_000,
        scheduler: "aalo".into(),
        runtime: std::env::current_exe()
            .expect("the example's path")
            .parent()
            .and_then(Path::parent)
            .expect("target/PROFILE/examples")
            .join("coflowkit-runtime"),
        agent_timeout_ms: 30_000,
        stall_every: 0,
        stall_ms: 0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--secs" => a.secs = v().parse().expect("--secs N"),
            "--every" => a.every = v().parse().expect("--every N"),
            "--agents" => a.agents = v().parse().expect("--agents N"),
            "--threads" => a.threads = v().parse().expect("--threads N"),
            "--bytes" => a.bytes = v().parse().expect("--bytes N"),
            "--scheduler" => a.scheduler = v(),
            "--runtime" => a.runtime = v().into(),
            "--agent-timeout-ms" => a.agent_timeout_ms = v().parse().expect("--agent-timeout-ms N"),
            "--stall-every" => a.stall_every = v().parse().expect("--stall-every SECS"),
            "--stall-ms" => a.stall_ms = v().parse().expect("--stall-ms N"),
            _ => panic!(
                "unknown argument {k}: --secs --every --agents --threads --bytes --scheduler \
                 --runtime --agent-timeout-ms --stall-every --stall-ms"
            ),
        }
    }
    assert!(a.agents >= 2 && a.threads >= 1 && a.every >= 1 && a.bytes >= 1);
    a
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Resident memory of process `pid`, bytes.
fn rss(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// `GET path` on the coordinator's HTTP listener; the body.
fn http_get(addr: &str, path: &str, token: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

/// The number after `"key":` in a JSON text (the first one).
fn json_num(body: &str, key: &str) -> Option<f64> {
    let at = body.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &body[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// How many times `"key":` occurs in a JSON text (`open_flows` once per
/// active coflow, `flow_id` once per active flow).
fn json_count(body: &str, key: &str) -> usize {
    body.matches(&format!("\"{key}\":")).count()
}

fn pct(xs: &mut [f64], p: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[((xs.len() as f64 * p).ceil() as usize).clamp(1, xs.len()) - 1]
}

fn main() {
    let a = args();
    let dir = std::env::temp_dir().join(format!("coflowkit-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = "soak-token";
    let token_file = dir.join("token");
    std::fs::write(&token_file, token).unwrap();
    let (grpc, http) = (free_port(), free_port());
    let http_addr = format!("127.0.0.1:{http}");
    let log = |name: &str| {
        std::fs::File::create(dir.join(format!("{name}.log"))).expect("a log file in the temp dir")
    };
    let mut coord = Command::new(&a.runtime)
        .args(["coordinator", "--hosts", &a.agents.to_string()])
        .args([
            "--scheduler",
            &a.scheduler,
            "--listen",
            &format!("127.0.0.1:{grpc}"),
        ])
        .args(["--http-listen", &http_addr, "--token-file"])
        .arg(&token_file)
        .args(["--agent-timeout-ms", &a.agent_timeout_ms.to_string()])
        .stdout(Stdio::null())
        .stderr(log("coordinator"))
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", a.runtime.display()));
    std::thread::sleep(Duration::from_millis(500));
    let mut agents: Vec<Child> = (0..a.agents)
        .map(|h| {
            Command::new(&a.runtime)
                .args(["agent", "--host", &h.to_string()])
                .args([
                    "--coordinator",
                    &format!("http://127.0.0.1:{grpc}"),
                    "--socket",
                ])
                .arg(dir.join(format!("agent{h}.sock")))
                .arg("--token-file")
                .arg(&token_file)
                .stdout(Stdio::null())
                .stderr(log(&format!("agent{h}")))
                .spawn()
                .unwrap()
        })
        .collect();
    for h in 0..a.agents {
        let sock = dir.join(format!("agent{h}.sock"));
        let t0 = Instant::now();
        while !sock.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "agent {h} never made its socket"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // Receivers: one listener per host, a thread per connection.
    let received = Arc::new(AtomicU64::new(0));
    let sinks: Vec<u16> = (0..a.agents)
        .map(|_| {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = l.local_addr().unwrap().port();
            let received = received.clone();
            std::thread::spawn(move || {
                for c in l.incoming() {
                    let Ok(mut c) = c else { return };
                    let received = received.clone();
                    std::thread::spawn(move || {
                        let mut buf = vec![0u8; 1 << 16];
                        while let Ok(n) = c.read(&mut buf) {
                            if n == 0 {
                                return;
                            }
                            received.fetch_add(n as u64, Relaxed);
                        }
                    });
                }
            });
            port
        })
        .collect();
    // Clients.
    let stop = Arc::new(AtomicBool::new(false));
    let (sent, tasks, plain, errors) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let clients: Vec<_> = (0..a.threads)
        .map(|i| {
            let host = i % a.agents;
            let dst = (host + 1) % a.agents;
            let sock = dir.join(format!("agent{host}.sock"));
            let port = sinks[dst as usize];
            let (stop, sent, tasks, plain, errors) = (
                stop.clone(),
                sent.clone(),
                tasks.clone(),
                plain.clone(),
                errors.clone(),
            );
            let data = vec![7u8; a.bytes];
            std::thread::spawn(move || {
                let agent = AgentClient::connect(&sock);
                let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
                stream.set_nodelay(true).unwrap();
                while !stop.load(Relaxed) {
                    let Ok(task) = agent.register(&[]) else {
                        errors.fetch_add(1, Relaxed);
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    let mut w = agent.writer(task, dst, None, stream);
                    if !w.is_scheduled() {
                        plain.fetch_add(1, Relaxed);
                    }
                    w.write_all(&data).expect("writing to the receiver");
                    let n = w.bytes_written();
                    stream = w.finish().expect("closing the writer");
                    sent.fetch_add(n, Relaxed);
                    if agent.unregister(task).is_err() {
                        errors.fetch_add(1, Relaxed);
                    }
                    tasks.fetch_add(1, Relaxed);
                }
            })
        })
        .collect();
    // Round latency samples (the last tick's duration, 5 per second), and
    // the coordinator's resident memory at the same instants.
    let samples = Arc::new(Mutex::new(Vec::<f64>::new()));
    let rss_samples = Arc::new(Mutex::new(Vec::<u64>::new()));
    let sampling = {
        let (samples, rss_samples, stop, http_addr) = (
            samples.clone(),
            rss_samples.clone(),
            stop.clone(),
            http_addr.clone(),
        );
        let pid = coord.id();
        std::thread::spawn(move || {
            while !stop.load(Relaxed) {
                if let Some(t) =
                    http_get(&http_addr, "/state", token).and_then(|b| json_num(&b, "last_tick_s"))
                {
                    samples.lock().unwrap().push(t);
                }
                rss_samples.lock().unwrap().push(rss(pid));
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    println!(
        "# soak: {} agents, {} client threads, {} B per task, scheduler {}, {} s; coordinator pid {}",
        a.agents,
        a.threads,
        a.bytes,
        a.scheduler,
        a.secs,
        coord.id()
    );
    println!(
        "{:>6} {:>8} {:>9} {:>10} {:>13} {:>11} {:>11} {:>11} {:>11} {:>14} {:>7} {:>6}",
        "t_s",
        "tasks",
        "tasks/s",
        "coord_MB",
        "coord_min-max",
        "agents_MB",
        "round_p50ms",
        "round_p99ms",
        "completed",
        "completed_B",
        "coflows",
        "flows"
    );
    // Stalls of the coordinator, on purpose (`--stall-every`).
    let stalls = (a.stall_every > 0).then(|| {
        let (stop, pid, every, ms) = (stop.clone(), coord.id(), a.stall_every, a.stall_ms);
        std::thread::spawn(move || {
            let signal = |sig: &str| {
                let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
            };
            let mut n = 0u64;
            let t = Instant::now();
            while !stop.load(Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if t.elapsed() < Duration::from_secs(every * (n + 1)) {
                    continue;
                }
                n += 1;
                signal("-STOP");
                std::thread::sleep(Duration::from_millis(ms));
                signal("-CONT");
            }
            n
        })
    });
    let t0 = Instant::now();
    let (mut last_tasks, mut last_t) = (0u64, 0.0f64);
    let mut all_rounds: Vec<f64> = vec![];
    // The coordinator's resident memory at the line nearest 5 minutes.
    let mut at_5min: Option<(f64, u64)> = None;
    let mut tick = 1;
    while t0.elapsed() < Duration::from_secs(a.secs) {
        let next = Duration::from_secs((tick * a.every).min(a.secs));
        std::thread::sleep(next.saturating_sub(t0.elapsed()));
        tick += 1;
        let t = t0.elapsed().as_secs_f64();
        let n = tasks.load(Relaxed);
        let mut rounds = std::mem::take(&mut *samples.lock().unwrap());
        all_rounds.extend_from_slice(&rounds);
        let rss_in = std::mem::take(&mut *rss_samples.lock().unwrap());
        let body = http_get(&http_addr, "/state", token).unwrap_or_default();
        let coord_rss = rss(coord.id());
        if at_5min.is_none_or(|(t5, _)| (t - 300.0).abs() < (t5 - 300.0).abs()) {
            at_5min = Some((t, coord_rss));
        }
        let mb = |b: Option<&u64>| b.map_or(f64::NAN, |&b| b as f64 / 1e6);
        println!(
            "{:>6.0} {:>8} {:>9.0} {:>10.1} {:>13} {:>11.1} {:>11.3} {:>11.3} {:>11} {:>14} {:>7} {:>6}",
            t,
            n,
            (n - last_tasks) as f64 / (t - last_t),
            coord_rss as f64 / 1e6,
            format!(
                "{:.1}-{:.1}",
                mb(rss_in.iter().min()),
                mb(rss_in.iter().max())
            ),
            agents.iter().map(|c| rss(c.id())).sum::<u64>() as f64 / 1e6,
            pct(&mut rounds, 0.5) * 1e3,
            pct(&mut rounds, 0.99) * 1e3,
            json_num(&body, "completed_coflows").unwrap_or(f64::NAN),
            json_num(&body, "completed_bytes").unwrap_or(f64::NAN),
            json_count(&body, "open_flows"),
            json_count(&body, "flow_id"),
        );
        (last_tasks, last_t) = (n, t);
    }
    stop.store(true, Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let _ = sampling.join();
    if let Some(n) = stalls.and_then(|s| s.join().ok()) {
        println!(
            "# the coordinator was stopped {n} times for {} ms",
            a.stall_ms
        );
    }
    let (n_tasks, n_sent) = (tasks.load(Relaxed), sent.load(Relaxed));
    // Drain: every byte at the receivers, every task complete at the coordinator.
    let wait = Instant::now();
    let (mut done, mut accounted) = (0.0, 0.0);
    while wait.elapsed() < Duration::from_secs(30) {
        let body = http_get(&http_addr, "/state", token).unwrap_or_default();
        done = json_num(&body, "completed_coflows").unwrap_or(0.0);
        accounted = json_num(&body, "completed_bytes").unwrap_or(0.0);
        if received.load(Relaxed) >= n_sent && done as u64 >= n_tasks {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let got = received.load(Relaxed);
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "# tasks {n_tasks} ({:.0}/s over the run), completed at the coordinator {done}; \
         bytes sent {n_sent}, received {got}, accounted by the coordinator {accounted}; \
         writers unscheduled {}, client errors {}",
        n_tasks as f64 / a.secs as f64,
        plain.load(Relaxed),
        errors.load(Relaxed)
    );
    let end_rss = rss(coord.id());
    println!(
        "# round latency over the run: p50 {:.3} ms, p99 {:.3} ms ({} samples); coordinator \
         resident {:.1} MB at the end ({secs:.0} s)",
        pct(&mut all_rounds, 0.5) * 1e3,
        pct(&mut all_rounds, 0.99) * 1e3,
        all_rounds.len(),
        end_rss as f64 / 1e6
    );
    if let Some((t5, r5)) = at_5min {
        println!(
            "# coordinator resident {:.1} MB at {t5:.0} s, {:.1} MB at the end: {:+.1}%",
            r5 as f64 / 1e6,
            end_rss as f64 / 1e6,
            (end_rss as f64 / r5 as f64 - 1.0) * 100.0
        );
    }
    let body = http_get(&http_addr, "/state", token).unwrap_or_default();
    let faults = body
        .find("\"faults\":")
        .and_then(|i| body[i..].find('}').map(|j| &body[i + 9..=i + j]))
        .unwrap_or("{}");
    println!("# coordinator faults: {faults}");
    let lost = got != n_sent || accounted as u64 != n_sent || (done as u64) != n_tasks;
    println!(
        "# {}",
        if lost {
            "LOST: bytes or tasks missing, or counted twice"
        } else {
            "nothing lost"
        }
    );
    for c in agents.iter_mut().chain(std::iter::once(&mut coord)) {
        let _ = Command::new("kill")
            .args(["-INT", &c.id().to_string()])
            .status();
        let _ = c.wait();
    }
    if lost {
        // The coordinator's and agents' logs say which agents were dropped
        // and which coflows reopened.
        println!("# logs kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::process::exit(i32::from(lost));
}
