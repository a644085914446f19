//! What the coordinator's memory is made of at steady state: its [`Core`]
//! driven in this process (no network) by the soak's task shape, with a
//! counting global allocator (here only, not in the shipped binary).
//!
//! ```sh
//! cargo run --release -p coflowkit-runtime --example coremem -- --rate 5000 --secs 120
//! ```
//!
//! Every tick (Δ = 10 ms of the coordinator's clock, advanced by the
//! program, not waited for) `--rate`/100 tasks start: each is a coflow
//! registered by host `i % 3` with one flow to the next host, reported at
//! 0 bytes, then at the next tick finished at 20,000 bytes and the coflow
//! unregistered; the agent repeats a final report until it is acknowledged,
//! as the agents do. From `--swing-at` seconds, for `--swing-secs`, the rate
//! is `--swing` times higher (a backlog let through after a stall). Every
//! simulated `--every` seconds it prints the live heap (bytes allocated and
//! not freed), its peak so far, and the coordinator's entry counts.

use coflowkit_model::Time;
use coflowkit_runtime::coordinator::{CoordinatorConfig, Core, DEFAULT_AGENT_TIMEOUT};
use coflowkit_runtime::proto::{CoflowInfo, FlowReport, SyncRequest};
use coflowkit_runtime::PROTOCOL_VERSION;
use coflowkit_sched::WorkloadHints;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
            let now = LIVE.fetch_add(new, Relaxed) + new;
            PEAK.fetch_max(now, Relaxed);
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

fn main() {
    let (mut rate, mut secs, mut every) = (5000u64, 120u64, 10u64);
    let (mut swing, mut swing_at, mut swing_secs) = (1u64, 0u64, 0u64);
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v: u64 = it
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} needs a number"));
        match k.as_str() {
            "--rate" => rate = v,
            "--secs" => secs = v,
            "--every" => every = v,
            "--swing" => swing = v,
            "--swing-at" => swing_at = v,
            "--swing-secs" => swing_secs = v,
            _ => panic!(
                "unknown argument {k}: --rate --secs --every --swing --swing-at --swing-secs"
            ),
        }
    }
    let mut core = Core::new(&CoordinatorConfig {
        n_hosts: 3,
        host_rate_bps: 10e9,
        delta: Duration::from_millis(10),
        scheduler: "aalo".into(),
        token: "t".into(),
        mark_classes: true,
        hints: WorkloadHints::default(),
        fabric: None,
        agent_timeout: DEFAULT_AGENT_TIMEOUT,
    })
    .expect("a valid configuration");
    let base = LIVE.load(Relaxed);
    println!(
        "{:>6} {:>9} {:>9} {:>9} {:>10}  entries",
        "t_s", "tasks", "live_MB", "peak_MB", "B/retained"
    );
    // Per host: (flow id, coflow id) reported at 0 bytes last tick; and
    // finished flows and unregistered coflows not yet acknowledged.
    let mut started: Vec<Vec<(u64, u64)>> = vec![vec![]; 3];
    let mut unacked: Vec<Vec<(u64, u64)>> = vec![vec![]; 3];
    let (mut next_id, mut tasks) = (1u64, 0u64);
    let ticks = secs * 100;
    for t in 1..=ticks {
        let s = t / 100;
        let per_tick = if s >= swing_at && s < swing_at + swing_secs {
            rate * swing / 100
        } else {
            rate / 100
        };
        let mut fresh: Vec<Vec<(u64, u64)>> = vec![vec![]; 3];
        for _ in 0..per_tick {
            let h = (next_id % 3) as usize;
            fresh[h].push((next_id, next_id));
            next_id += 1;
            tasks += 1;
        }
        for h in 0..3usize {
            let dst = ((h + 1) % 3) as u32;
            let mut r = SyncRequest {
                protocol_version: PROTOCOL_VERSION,
                host: h as u32,
                ..Default::default()
            };
            for &(f, c) in &fresh[h] {
                r.coflows.push(CoflowInfo {
                    coflow_id: c,
                    parents: vec![],
                    unregistered: false,
                });
                r.flows.push(FlowReport {
                    flow_id: f,
                    coflow_id: c,
                    dst_host: dst,
                    bytes_sent: 0,
                    size_hint: 0,
                    finished: false,
                });
            }
            for &(f, c) in started[h].iter().chain(&unacked[h]) {
                r.coflows.push(CoflowInfo {
                    coflow_id: c,
                    parents: vec![],
                    unregistered: true,
                });
                r.flows.push(FlowReport {
                    flow_id: f,
                    coflow_id: c,
                    dst_host: dst,
                    bytes_sent: 20_000,
                    size_hint: 0,
                    finished: true,
                });
            }
            let reply = core.sync(&r).expect("a valid sync");
            let mut pending: Vec<(u64, u64)> =
                started[h].drain(..).chain(unacked[h].drain(..)).collect();
            pending.retain(|&(f, c)| {
                !(reply.finished_acks.contains(&f) && reply.completed_coflows.contains(&c))
            });
            unacked[h] = pending;
            started[h] = std::mem::take(&mut fresh[h]);
        }
        core.tick(Time(t * 10_000_000));
        if t % (every * 100) == 0 {
            let e = core.entry_counts();
            let live = LIVE.load(Relaxed) - base;
            println!(
                "{:>6} {:>9} {:>9.1} {:>9.1} {:>10.0}  {e:?} compactions {} active {:?}",
                s,
                tasks,
                live as f64 / 1e6,
                (PEAK.load(Relaxed) - base) as f64 / 1e6,
                // Per task of the last 30 s (the retention) at the base rate.
                live as f64 / (rate * 30).min(tasks).max(1) as f64,
                core.compactions(),
                core.counts(),
            );
        }
    }
}
