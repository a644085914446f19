//! Two coflows through a rate-limited bottleneck on loopback: a coordinator
//! and three agents in this process, host 2 receiving at 200 Mbit/s (the
//! capacity the coordinator schedules, enforced by pacing the senders on
//! hosts 0 and 1).
//!
//! A large coflow (4 flows of 10 MB, two from each sender) starts alone;
//! when 36 MB of it have arrived (4 MB left), a small one (2 flows of 2 MB)
//! starts.
//! * `aalo:queues=strict`: the large coflow crossed Q1's 10 MiB and was
//!   demoted (its writers saw class 1), the small one is in Q1 and goes
//!   first: the small coflow finishes first.
//! * `fair` (per-flow max-min): the flows share, the large coflow's four
//!   flows get twice the small one's two, and its last 4 MB finish before
//!   the small coflow's 4 MB.
//!
//! * `varys` with size hints, the small coflow starting when the large one
//!   has 20 MB left: its effective bottleneck is the smaller, so it goes
//!   first.
//!
//! Only orders and byte counts are asserted, never durations; every byte is
//! checked against its flow's pattern at the receiver.

mod common;

use coflowkit_model::CoflowId;
use coflowkit_runtime::client::AgentClient;
use common::{connect, Cluster, Pattern, Receiver};
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LARGE_FLOW: u64 = 10_000_000;
const SMALL_FLOW: u64 = 2_000_000;

/// Sends `bytes` of flow `tag`'s pattern through a coflow writer; returns
/// the highest class its schedule gave it.
fn send(
    client: &AgentClient,
    coflow: CoflowId,
    tag: u64,
    bytes: u64,
    hint: bool,
    to: std::net::SocketAddr,
) -> u32 {
    let mut w = client.writer(coflow, 2, hint.then_some(bytes), connect(to, tag));
    assert!(w.is_scheduled(), "the agent schedules the writer");
    let mut pattern = Pattern::new(tag);
    let mut buf = vec![0u8; 64 << 10];
    let mut left = bytes;
    let mut max_class = 0;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        pattern.fill(&mut buf[..n]);
        w.write_all(&buf[..n]).unwrap();
        left -= n as u64;
        max_class = max_class.max(w.schedule().1);
    }
    assert_eq!(w.bytes_written(), bytes);
    w.finish().unwrap();
    max_class
}

struct Outcome {
    large_done: Instant,
    small_done: Instant,
    large_max_class: u32,
}

/// Runs the two coflows; the small one starts when the large one has
/// `left` bytes left to arrive; `hints`: writers give their sizes.
fn two_coflows(name: &str, scheduler: &str, left: u64, hints: bool) -> Outcome {
    let cluster = Cluster::start(name, scheduler, 3, 200e6);
    let rx = Receiver::start();
    let clients = [
        AgentClient::connect(cluster.socket(0)),
        AgentClient::connect(cluster.socket(1)),
    ];
    let start = Instant::now();
    let large = clients[0].register(&[]).unwrap();
    let large_tags = [1u64, 2, 3, 4];
    let max_class = Arc::new(AtomicU32::new(0));
    let mut senders = vec![];
    for (i, &tag) in large_tags.iter().enumerate() {
        let client = clients[i % 2].clone();
        let (to, max_class) = (rx.addr, max_class.clone());
        senders.push(std::thread::spawn(move || {
            let c = send(&client, large, tag, LARGE_FLOW, hints, to);
            max_class.fetch_max(c, Ordering::Relaxed);
        }));
    }
    let t0 = Instant::now();
    while rx.total(&large_tags) < 4 * LARGE_FLOW - left {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the large coflow stalled"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let trigger = start.elapsed();
    let small = clients[1].register(&[]).unwrap();
    let small_tags = [11u64, 12];
    for (i, &tag) in small_tags.iter().enumerate() {
        let client = clients[i % 2].clone();
        let to = rx.addr;
        senders.push(std::thread::spawn(move || {
            send(&client, small, tag, SMALL_FLOW, hints, to);
        }));
    }
    for s in senders {
        s.join().unwrap();
    }
    clients[0].unregister(large).unwrap();
    clients[1].unregister(small).unwrap();
    // Every byte arrived, intact.
    let t0 = Instant::now();
    let done = |tags: &[u64]| {
        let g = rx.flows.lock().unwrap();
        tags.iter()
            .all(|t| g.get(t).is_some_and(|r| r.done.is_some()))
    };
    while !(done(&large_tags) && done(&small_tags)) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "receivers did not see the ends"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let flows = rx.flows.lock().unwrap().clone();
    for &t in &large_tags {
        assert_eq!(flows[&t].bytes, LARGE_FLOW, "flow {t}");
        assert!(flows[&t].intact, "flow {t} corrupted");
    }
    for &t in &small_tags {
        assert_eq!(flows[&t].bytes, SMALL_FLOW, "flow {t}");
        assert!(flows[&t].intact, "flow {t} corrupted");
    }
    let last = |tags: &[u64]| tags.iter().map(|t| flows[t].done.unwrap()).max().unwrap();
    // For the record (not asserted): the bottleneck's average rate.
    let span = (last(&large_tags).max(last(&small_tags)) - start).as_secs_f64();
    eprintln!(
        "{scheduler}: small started at {:.2} s; large done at {:.2} s, small at {:.2} s; \
         44 MB in {span:.2} s = {:.0} Mbit/s",
        trigger.as_secs_f64(),
        (last(&large_tags) - start).as_secs_f64(),
        (last(&small_tags) - start).as_secs_f64(),
        (4 * LARGE_FLOW + 2 * SMALL_FLOW) as f64 * 8.0 / span / 1e6
    );
    // The coordinator cleans up: both coflows complete once unregistered.
    assert!(
        cluster.wait_idle(Duration::from_secs(10)),
        "coflows left active"
    );
    cluster.stop();
    Outcome {
        large_done: last(&large_tags),
        small_done: last(&small_tags),
        large_max_class: max_class.load(Ordering::Relaxed),
    }
}

#[test]
fn under_aalo_the_small_coflow_goes_first() {
    let o = two_coflows("aalo", "aalo:queues=strict", 4_000_000, false);
    assert!(
        o.small_done < o.large_done,
        "the small coflow finished {:?} after the large one",
        o.small_done - o.large_done
    );
    assert!(o.large_max_class >= 1, "the large coflow was never demoted");
}

#[test]
fn under_fair_sharing_both_progress_and_the_large_one_ends_first() {
    let o = two_coflows("fair", "fair", 4_000_000, false);
    assert!(
        o.large_done < o.small_done,
        "the large coflow finished {:?} after the small one",
        o.large_done - o.small_done
    );
    assert_eq!(o.large_max_class, 0, "fair sharing has one class");
}

#[test]
fn under_varys_with_size_hints_the_small_coflow_goes_first() {
    let o = two_coflows("varys", "varys", 20_000_000, true);
    assert!(
        o.small_done < o.large_done,
        "the small coflow finished {:?} after the large one",
        o.small_done - o.large_done
    );
}

/// The socket's `SO_MAX_PACING_RATE` (bytes/s; `u64::MAX`: unpaced).
fn pacing_rate(fd: RawFd) -> u64 {
    let mut v: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: `v` and `len` outlive the call, which writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            &mut v as *mut u64 as *mut libc::c_void,
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt SO_MAX_PACING_RATE");
    v
}

/// A finished writer gives its stream back unpaced: the coordinator takes
/// the flow for done once it is closed, so what is still in the send buffer
/// must not drain at the flow's last pacing rate.
#[test]
fn a_finished_writer_gives_its_stream_back_unpaced() {
    let cluster = Cluster::start("unpace", "fair", 3, 200e6);
    let rx = Receiver::start();
    let client = AgentClient::connect(cluster.socket(0));
    let coflow = client.register(&[]).unwrap();
    let stream = connect(rx.addr, 21);
    let fd = stream.as_raw_fd();
    let mut w = client.writer(coflow, 2, None, stream);
    assert!(w.is_scheduled(), "the agent schedules the writer");
    let mut buf = vec![0u8; 256 << 10];
    Pattern::new(21).fill(&mut buf);
    w.write_all(&buf).unwrap();
    assert!(
        w.schedule().0.is_some(),
        "the coordinator gives the flow a rate"
    );
    assert_ne!(pacing_rate(fd), u64::MAX, "the writer paces its socket");
    let stream = w.finish().unwrap();
    assert_eq!(pacing_rate(stream.as_raw_fd()), u64::MAX);
    drop(stream);
    let t0 = Instant::now();
    let done = || {
        rx.flows
            .lock()
            .unwrap()
            .get(&21)
            .and_then(|r| r.done)
            .is_some()
    };
    while !done() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the receiver did not see the end"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let flows = rx.flows.lock().unwrap().clone();
    assert_eq!(flows[&21].bytes, buf.len() as u64);
    assert!(flows[&21].intact);
    client.unregister(coflow).unwrap();
    cluster.stop();
}

/// A new schedule reaches the writer's socket as the client receives it,
/// not at the writer's next write: at a low rate a full send buffer holds a
/// write back for as long as its slice takes at that rate, and the flow
/// kept its old rate meanwhile. Here writer A, alone on host 0's NIC, is
/// paced at all of it; B opens beside it and A, writing nothing more, is
/// paced at half; B closes and A is back to all of it.
#[test]
fn a_new_rate_reaches_the_socket_without_a_write() {
    let cluster = Cluster::start("apply-now", "fair", 3, 200e6);
    let rx = Receiver::start();
    let client = AgentClient::connect(cluster.socket(0));
    let coflow = client.register(&[]).unwrap();
    let wait_rate = |fd: RawFd, lo: u64, hi: u64, what: &str| {
        let t0 = Instant::now();
        while !(lo..=hi).contains(&pacing_rate(fd)) {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{what}: paced at {} B/s, not in {lo}..={hi}",
                pacing_rate(fd)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let sa = connect(rx.addr, 31);
    let fa = sa.as_raw_fd();
    let mut a = client.writer(coflow, 2, None, sa);
    common::write_pattern(&mut a, &mut Pattern::new(31), 16 << 10);
    // 200 Mbit/s = 25 MB/s; half = 12.5 MB/s.
    wait_rate(fa, 24_000_000, 26_000_000, "A alone");
    let mut b = client.writer(coflow, 1, None, connect(rx.addr, 32));
    common::write_pattern(&mut b, &mut Pattern::new(32), 16 << 10);
    wait_rate(fa, 12_000_000, 13_000_000, "A beside B, without writing");
    drop(b.finish().unwrap());
    wait_rate(fa, 24_000_000, 26_000_000, "A alone again, without writing");
    drop(a.finish().unwrap());
    client.unregister(coflow).unwrap();
    cluster.stop();
}

/// 150 writers of one client's threads opened at once without waiting for
/// the agent (`writer_at_once`), the smallest closing before their open can
/// have been answered: each flow is taken by the agent, every byte arrives
/// intact, and the coordinator completes the coflow with each flow and
/// each byte counted once.
#[test]
fn writers_opened_without_waiting_are_each_counted_once() {
    const N: u64 = 150;
    let cluster = Cluster::start("at-once", "aalo", 3, 1e9);
    let rx = Receiver::start();
    let client = AgentClient::connect(cluster.socket(0));
    let coflow = client.register(&[]).unwrap();
    let go = Arc::new(std::sync::Barrier::new(N as usize));
    let threads: Vec<_> = (0..N)
        .map(|i| {
            let (client, go, addr) = (client.clone(), go.clone(), rx.addr);
            std::thread::spawn(move || {
                let tag = 1000 + i;
                let stream = connect(addr, tag);
                go.wait();
                let mut w = client.writer_at_once(coflow, 1 + (i % 2) as u32, None, stream);
                let handle = w.handle().expect("an agent was reached");
                let bytes = 8 * (1 + i * i * 5);
                common::write_pattern(&mut w, &mut Pattern::new(tag), bytes);
                drop(w.finish().unwrap());
                (tag, bytes, handle)
            })
        })
        .collect();
    let sent: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let t0 = Instant::now();
    while !sent.iter().all(|(_, _, h)| h.taken()) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "a flow was never taken by the agent"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let arrived = || {
        let g = rx.flows.lock().unwrap();
        sent.iter()
            .all(|(t, b, _)| g.get(t).is_some_and(|r| r.done.is_some() && r.bytes == *b))
    };
    while !arrived() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "not every byte arrived"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(rx.flows.lock().unwrap().values().all(|r| r.intact));
    client.unregister(coflow).unwrap();
    assert!(
        cluster.wait_core(Duration::from_secs(30), |c| c
            .completed_coflows()
            .iter()
            .any(|x| x.id == coflow.0)),
        "the coflow was never reported complete"
    );
    let total: u64 = sent.iter().map(|s| s.1).sum();
    let core = cluster.coordinator.as_ref().unwrap().core.lock().unwrap();
    let done = core.completed_coflows();
    assert_eq!(
        (done.len(), done[0].n_flows, done[0].bytes),
        (1, N as u32, total),
        "{done:?}"
    );
    drop(core);
    cluster.stop();
}
