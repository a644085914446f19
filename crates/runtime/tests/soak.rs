//! The soak test's short form (the long one, outside CI, is
//! `examples/soak.rs`; its numbers are in docs/benchmarks.md): client
//! threads run small tasks back to back through three agents and one
//! coordinator for a few seconds, with the coordinator's retention cut to
//! 300 ms and its state compacted from 50 flows, so that a long run's
//! forgetting happens many times over. Checked: no byte or task lost (the
//! writers' counts, the receivers' and the coordinator's completed bytes
//! agree, every pattern intact), the state was compacted, and once the run
//! is idle past the retention the coordinator holds no entry for any ended
//! flow or coflow (counts, not timings).

mod common;

use coflowkit_runtime::client::AgentClient;
use common::{connect, write_pattern, Cluster, Pattern, Receiver};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn small_tasks_back_to_back_lose_nothing_and_leave_no_entries() {
    let cluster = Cluster::start("soak", "aalo", 3, 1e9);
    {
        let mut core = cluster.coordinator.as_ref().unwrap().core.lock().unwrap();
        core.set_agent_timeout(Duration::from_millis(300));
        core.set_compact_min(50);
    }
    let rx = Receiver::start();
    let stop = Arc::new(AtomicBool::new(false));
    let (sent, tasks) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let threads: Vec<_> = (0..6u32)
        .map(|i| {
            let host = i % 3;
            let sock = cluster.socket(host);
            let (stop, sent, tasks, addr) = (stop.clone(), sent.clone(), tasks.clone(), rx.addr);
            std::thread::spawn(move || {
                let agent = AgentClient::connect(&sock);
                let tag = 900 + u64::from(i);
                let mut stream = connect(addr, tag);
                let mut pattern = Pattern::new(tag);
                while !stop.load(Relaxed) {
                    let task = agent.register(&[]).expect("the agent registers");
                    let mut w = agent.writer(task, (host + 1) % 3, None, stream);
                    assert!(w.is_scheduled());
                    write_pattern(&mut w, &mut pattern, 20_000);
                    sent.fetch_add(w.bytes_written(), Relaxed);
                    stream = w.finish().unwrap();
                    agent.unregister(task).unwrap();
                    tasks.fetch_add(1, Relaxed);
                }
                tag
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(4));
    stop.store(true, Relaxed);
    let tags: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let (n, bytes) = (tasks.load(Relaxed), sent.load(Relaxed));
    assert!(n >= 60, "only {n} tasks");
    assert!(
        cluster.wait_core(Duration::from_secs(20), |c| c.completed_totals().0 >= n),
        "the coordinator completed {:?} of {n} tasks",
        cluster
            .coordinator
            .as_ref()
            .unwrap()
            .core
            .lock()
            .unwrap()
            .completed_totals()
    );
    let core = || cluster.coordinator.as_ref().unwrap().core.lock().unwrap();
    let faults = core().faults();
    assert_eq!(
        core().completed_totals(),
        (n, bytes),
        "tasks and bytes accounted ({faults:?})"
    );
    // Every task's flow came with its coflow, and none completed twice.
    assert_eq!(
        (
            faults.reopened_coflows,
            faults.empty_coflows,
            faults.orphan_flows
        ),
        (0, 0, 0),
        "{faults:?}"
    );
    let t0 = std::time::Instant::now();
    while rx.total(&tags) < bytes && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(rx.total(&tags), bytes, "bytes received");
    assert!(rx.flows.lock().unwrap().values().all(|r| r.intact));
    assert!(core().compactions() >= 1, "{n} tasks and no compaction");
    // Idle past the retention: nothing ended is kept.
    let gone = cluster.wait_core(Duration::from_secs(10), |c| {
        let e = c.entry_counts();
        (
            e.flows,
            e.coflows,
            e.ended_flows,
            e.completed,
            e.generations,
            e.dags,
        ) == (0, 0, 0, 0, 0, 0)
    });
    let e = core().entry_counts();
    assert!(gone, "{e:?}");
    assert!(e.state_flows < 50, "idle, the state is compacted: {e:?}");
    cluster.stop();
}
