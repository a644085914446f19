//! A cluster on loopback in one test process: a coordinator and agents on a
//! tokio runtime of their own, clients and TCP senders and receivers on
//! plain threads, as applications would be.

#![allow(dead_code)]

use coflowkit_runtime::agent::{self, AgentConfig, AgentHandle, AgentOptions};
use coflowkit_runtime::client::CoflowWriter;
use coflowkit_runtime::coordinator::{self, CoordinatorConfig, CoordinatorHandle};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const TOKEN: &str = "test-token-1234";

/// A coordinator and `n_hosts` agents.
pub struct Cluster {
    pub rt: tokio::runtime::Runtime,
    pub coordinator: Option<CoordinatorHandle>,
    /// `None` while killed.
    pub agents: Vec<Option<AgentHandle>>,
    pub dir: PathBuf,
    cfg: CoordinatorConfig,
    addr: std::net::SocketAddr,
    opts: AgentOptions,
}

impl Cluster {
    pub fn start(name: &str, scheduler: &str, n_hosts: u32, host_rate_bps: f64) -> Cluster {
        Cluster::start_with(
            name,
            scheduler,
            n_hosts,
            host_rate_bps,
            AgentOptions::default(),
        )
    }

    pub fn start_with(
        name: &str,
        scheduler: &str,
        n_hosts: u32,
        host_rate_bps: f64,
        opts: AgentOptions,
    ) -> Cluster {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = std::env::temp_dir().join(format!("coflowkit-rt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = CoordinatorConfig {
            n_hosts,
            host_rate_bps,
            delta: Duration::from_millis(10),
            scheduler: scheduler.into(),
            token: TOKEN.into(),
            mark_classes: true,
            hints: Default::default(),
            fabric: None,
            agent_timeout: coordinator::DEFAULT_AGENT_TIMEOUT,
        };
        let coordinator = rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            coordinator::spawn(cfg.clone(), listener).unwrap()
        });
        let addr = coordinator.addr;
        let mut cluster = Cluster {
            rt,
            coordinator: Some(coordinator),
            agents: vec![],
            dir,
            cfg,
            addr,
            opts,
        };
        for h in 0..n_hosts {
            let a = cluster.spawn_agent(h);
            cluster.agents.push(Some(a));
        }
        cluster
    }

    fn spawn_agent(&self, h: u32) -> AgentHandle {
        self.rt
            .block_on(agent::spawn_with(
                AgentConfig {
                    host: h,
                    coordinator: format!("http://{}", self.addr),
                    token: TOKEN.into(),
                    socket: self.socket(h),
                    socket_mode: 0o600,
                },
                self.opts,
            ))
            .unwrap()
    }

    /// Stops agent `h` as a crash would: its state is gone, its clients'
    /// connections close, it sends no last sync.
    pub fn kill_agent(&mut self, h: u32) {
        let a = self.agents[h as usize].take().expect("agent running");
        self.rt.block_on(a.shutdown());
    }

    /// Starts agent `h` again, with a fresh state, on the same socket.
    pub fn restart_agent(&mut self, h: u32) {
        assert!(self.agents[h as usize].is_none(), "agent {h} is running");
        let a = self.spawn_agent(h);
        self.agents[h as usize] = Some(a);
    }

    /// Stops the coordinator; its state is gone.
    pub fn kill_coordinator(&mut self) {
        let c = self.coordinator.take().expect("coordinator running");
        self.rt.block_on(c.shutdown());
    }

    /// Starts a coordinator again, with a fresh state, at the same address.
    pub fn restart_coordinator(&mut self) {
        assert!(self.coordinator.is_none(), "the coordinator is running");
        let (cfg, addr) = (self.cfg.clone(), self.addr);
        let c = self.rt.block_on(async move {
            let t0 = Instant::now();
            let listener = loop {
                match tokio::net::TcpListener::bind(addr).await {
                    Ok(l) => break l,
                    Err(e) if t0.elapsed() < Duration::from_secs(10) => {
                        eprintln!("rebinding {addr}: {e}; retrying");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(e) => panic!("rebinding {addr}: {e}"),
                }
            };
            coordinator::spawn(cfg, listener).unwrap()
        });
        self.coordinator = Some(c);
    }

    /// Waits (at most `limit`) until `what` holds of the coordinator's
    /// state; returns whether it did.
    pub fn wait_core(&self, limit: Duration, what: impl Fn(&coordinator::Core) -> bool) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if what(&self.coordinator.as_ref().unwrap().core.lock().unwrap()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    pub fn socket(&self, h: u32) -> PathBuf {
        self.dir.join(format!("agent{h}.sock"))
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.coordinator.as_ref().unwrap().addr)
    }

    /// Waits (at most `limit`) until the coordinator has no active coflow
    /// or flow; returns whether it got there.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            let counts = self
                .coordinator
                .as_ref()
                .unwrap()
                .core
                .lock()
                .unwrap()
                .counts();
            if counts == (0, 0) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn stop(mut self) {
        let agents = std::mem::take(&mut self.agents);
        let coordinator = self.coordinator.take();
        self.rt.block_on(async move {
            for a in agents.into_iter().flatten() {
                a.shutdown().await;
            }
            if let Some(c) = coordinator {
                c.shutdown().await;
            }
        });
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The byte stream of flow `tag`: xorshift64 from the tag, so the receiver
/// can check every byte.
pub struct Pattern(u64);

impl Pattern {
    pub fn new(tag: u64) -> Pattern {
        Pattern(tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
        }
    }
}

/// Writes the next `bytes` of `pattern` (a multiple of 8) through `w`.
pub fn write_pattern(w: &mut CoflowWriter<TcpStream>, pattern: &mut Pattern, bytes: u64) {
    let mut buf = vec![0u8; 64 << 10];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        pattern.fill(&mut buf[..n]);
        w.write_all(&buf[..n]).unwrap();
        left -= n as u64;
    }
}

/// What a receiver saw of one flow.
#[derive(Debug, Clone, Default)]
pub struct Received {
    pub bytes: u64,
    pub intact: bool,
    pub done: Option<Instant>,
}

/// A receiving host: accepts connections, each starting with its 8-byte
/// tag; checks every byte against the tag's pattern (writes are in whole
/// 8-byte words, so chunks align).
pub struct Receiver {
    pub addr: std::net::SocketAddr,
    pub flows: Arc<Mutex<HashMap<u64, Received>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let flows: Arc<Mutex<HashMap<u64, Received>>> = Arc::default();
        let f = flows.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let flows = f.clone();
                std::thread::spawn(move || {
                    let mut tag = [0u8; 8];
                    if conn.read_exact(&mut tag).is_err() {
                        return;
                    }
                    let tag = u64::from_le_bytes(tag);
                    flows.lock().unwrap().insert(
                        tag,
                        Received {
                            intact: true,
                            ..Received::default()
                        },
                    );
                    let mut pattern = Pattern::new(tag);
                    let mut buf = vec![0u8; 64 << 10];
                    let mut want = vec![0u8; 64 << 10];
                    // Bytes of the pattern's current word already matched.
                    let mut carry: Vec<u8> = vec![];
                    loop {
                        let n = match conn.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        // Compare through a byte queue of the expected stream.
                        carry.extend_from_slice(&buf[..n]);
                        let whole = carry.len() / 8 * 8;
                        let mut ok = true;
                        for piece in carry[..whole].chunks(want.len()) {
                            pattern.fill(&mut want[..piece.len()]);
                            ok &= want[..piece.len()] == *piece;
                        }
                        carry.drain(..whole);
                        let mut g = flows.lock().unwrap();
                        let r = g.get_mut(&tag).unwrap();
                        r.bytes += n as u64;
                        r.intact &= ok;
                    }
                    let mut g = flows.lock().unwrap();
                    let r = g.get_mut(&tag).unwrap();
                    r.intact &= carry.is_empty();
                    r.done = Some(Instant::now());
                });
            }
        });
        Receiver { addr, flows }
    }

    pub fn total(&self, tags: &[u64]) -> u64 {
        let g = self.flows.lock().unwrap();
        tags.iter().map(|t| g.get(t).map_or(0, |r| r.bytes)).sum()
    }
}

/// Opens a TCP connection to `addr` and sends the flow's tag.
pub fn connect(addr: std::net::SocketAddr, tag: u64) -> TcpStream {
    use std::io::Write;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(&tag.to_le_bytes()).unwrap();
    s
}

/// `GET path` on `addr` over HTTP/1.1 with the coordinator's token
/// ([`TOKEN`]): the status code and the body, or `None` if nothing answers.
pub fn http_get(addr: std::net::SocketAddr, path: &str) -> Option<(u16, String)> {
    http_request(addr, path, Some(&format!("Bearer {TOKEN}"))).map(|(code, _, body)| (code, body))
}

/// `GET path` on `addr` over HTTP/1.1 with this `Authorization` header (or
/// none): the status code, the head (status line and headers) and the body,
/// or `None` if nothing answers.
pub fn http_request(
    addr: std::net::SocketAddr,
    path: &str,
    authorization: Option<&str>,
) -> Option<(u16, String, String)> {
    use std::io::Write;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let auth = authorization.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.split(' ').nth(1)?.parse().ok()?;
    Some((code, head.to_string(), body.to_string()))
}

/// A free TCP port on loopback (free when this returns), below the kernel's
/// range of ephemeral ports: a port the kernel handed out itself (`bind` to
/// port 0) is free only until it hands it out again as the source port of
/// some connection, which the tests running alongside make by the hundred;
/// one below that range is taken only by an explicit `bind`.
pub fn free_port() -> u16 {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    // Start somewhere different in each process and call.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let span = u32::from(low.saturating_sub(10_000)).max(1);
    let seed = std::process::id()
        .wrapping_mul(7919)
        .wrapping_add(NEXT.fetch_add(101, std::sync::atomic::Ordering::Relaxed));
    for i in 0..span {
        let port = 10_000 + ((seed + i) % span) as u16;
        if port < low && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
