//! The sending part of a replay through the runtime, natively: every flow
//! of one host sent at its start instant through a [`CoflowWriter`] of the
//! host's [`AgentClient`], on a thread of its own, without the GIL.
//!
//! Why threads outside Python: an FB2010 coflow starts hundreds of flows on
//! a host at once, and a writer blocks while the runtime paces or pauses
//! its flow. Python threads, one per flow, would queue for the GIL and start
//! flows late (measured on the 16-host testbed under `fair` through the
//! runtime: a mean start lag of 0.28-0.45 s, p99 4.6-6.3 s, against 8 ms for
//! plain TCP's event loop); threads that hold no lock start on time.
//!
//! The wire format is [`crate::replay_wire`]'s, the records are the ones the
//! replay's driver reads from every sender (`coflowkit.testbed.replay`), and
//! the payload is the replay's block, given by the caller, so the receiver's
//! checks are the same for every sender. A flow whose connection fails is
//! sent again from its first byte on another connection, up to three
//! attempts, as the Python worker does (`coflowkit.testbed.replay.worker`):
//! its start stays the first attempt's, and the lost connections are listed.

use crate::replay_wire::{epoch, header, ANSWER, HEADER, TOS_TOP};
use coflowkit_model::CoflowId;
use coflowkit_runtime::client::{AgentClient, FlowHandle};
use coflowkit_runtime::enforce;
use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Bytes per write: small enough to see a flow's schedule change between
/// writes (the records count the changes).
pub const SLICE: usize = 16 << 10;
/// Attempts at a flow whose connection fails (the first included).
const ATTEMPTS: u32 = 3;
/// How long the answers of opens sent without waiting are waited for at the
/// end (they end as soon as every flow is answered).
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// One flow to send.
#[derive(Debug, Clone)]
pub struct OutFlow {
    pub id: u64,
    pub dst: u32,
    pub size: u64,
    /// Seconds after `t0`.
    pub start: f64,
    pub coflow: u64,
}

/// Where and how to send.
#[derive(Debug, Clone)]
pub struct Plan {
    pub host: u32,
    pub addrs: Vec<SocketAddr>,
    /// TCP congestion control for the data sockets (empty: the host's).
    pub cc: String,
    /// The payload block twice (a window of up to a block is one slice).
    pub block2: Arc<[u8]>,
    /// The common start instant (seconds since the epoch).
    pub t0: f64,
    pub deadline_s: f64,
    /// Tests: flows whose first connection is reset once half is written.
    pub inject_reset: HashSet<u64>,
}

impl Plan {
    /// A plan of `host`'s flows to the data ports `addrs` (each an IP address and a port), or why
    /// there is none: `block2` must be a block of at least a [`SLICE`] twice, and every address
    /// an IP address.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        host: u32,
        addrs: &[(String, u16)],
        cc: String,
        block2: Vec<u8>,
        t0: f64,
        deadline_s: f64,
        inject_reset: Vec<u64>,
    ) -> Result<Plan, String> {
        if block2.is_empty() || !block2.len().is_multiple_of(2) || block2.len() / 2 < SLICE {
            return Err(format!(
                "block2: the payload block twice, at least 2 x {SLICE} bytes (got {})",
                block2.len()
            ));
        }
        let mut socks = Vec::with_capacity(addrs.len());
        for (i, (a, port)) in addrs.iter().enumerate() {
            let ip: std::net::IpAddr = a
                .parse()
                .map_err(|_| format!("addrs[{i}]: {a:?} is not an IP address"))?;
            socks.push(SocketAddr::new(ip, *port));
        }
        Ok(Plan {
            host,
            addrs: socks,
            cc,
            block2: block2.into(),
            t0,
            deadline_s,
            inject_reset: inject_reset.into_iter().collect(),
        })
    }
}

/// What one sent flow did: the Python sender's record.
#[derive(Debug, Clone)]
pub struct Record {
    pub t_start: f64,
    pub bytes: u64,
    pub crc: u32,
    pub t_conn: f64,
    pub fresh: bool,
    pub t_written: f64,
    pub taken: bool,
    pub first_rate: Option<f64>,
    pub first_class: u32,
    pub changes: u32,
    pub paused_s: f64,
    pub mean_given: Option<f64>,
    pub t_opened: f64,
    pub t_last: f64,
}

/// What the host's flows did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub sent: HashMap<u64, Record>,
    pub errors: Vec<String>,
    /// The congestion controls the data sockets ended up with.
    pub cc_seen: Vec<String>,
    /// Connections lost on the way (their flows sent again, or in `errors`).
    pub broken: Vec<String>,
    /// The attempts of each flow sent more than once.
    pub resent: HashMap<u64, u32>,
}

fn sleep_until(at: f64) {
    let wait = at - epoch();
    if wait > 0.0 {
        thread::sleep(Duration::from_secs_f64(wait));
    }
}

#[derive(Default)]
struct Shared {
    pool: Mutex<HashMap<u32, Vec<TcpStream>>>,
    out: Mutex<Outcome>,
    handles: Mutex<Vec<(u64, FlowHandle)>>,
    done: Mutex<usize>,
    all_done: Condvar,
}

/// The congestion control a socket uses ("" if it cannot be read).
fn congestion(s: &TcpStream) -> String {
    socket2::SockRef::from(s)
        .tcp_congestion()
        .map(|name| {
            String::from_utf8_lossy(&name)
                .trim_end_matches('\0')
                .to_owned()
        })
        .unwrap_or_default()
}

/// A new connection to `addr`: no Nagle, congestion control `cc`, and its
/// handshake marked for queue 0 (senders mark their data afterwards).
fn connect(addr: SocketAddr, cc: &str, timeout: Duration) -> io::Result<TcpStream> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    s.set_tcp_nodelay(true)?;
    if !cc.is_empty() {
        s.set_tcp_congestion(cc.as_bytes())
            .map_err(|e| io::Error::new(e.kind(), format!("congestion control {cc:?}: {e}")))?;
    }
    s.set_tos_v4(TOS_TOP)?;
    s.connect_timeout(&addr.into(), timeout)?;
    Ok(s.into())
}

/// Bytes `offset .. offset + n` of flow `id` (n at most a block): the
/// block, rotated by the flow (the Python `_payload`).
fn payload(block2: &[u8], id: u64, offset: u64, n: usize) -> &[u8] {
    let len = (block2.len() / 2) as u64;
    let start = (id.wrapping_mul(7919).wrapping_add(offset) % len) as usize;
    &block2[start..start + n]
}

/// Sends `flows` as `plan` says; returns once all are done, or at the
/// deadline (flows still going are named in the errors and left behind).
pub fn send_flows(client: &AgentClient, plan: Plan, mut flows: Vec<OutFlow>) -> Outcome {
    let shared = Arc::new(Shared::default());
    let plan = Arc::new(plan);
    flows.sort_by(|a, b| a.start.total_cmp(&b.start));
    let end = plan.t0 + plan.deadline_s;
    let total = flows.len();
    let mut spawned = 0;
    for f in flows {
        sleep_until(plan.t0 + f.start);
        if epoch() > end {
            break;
        }
        let (id, dst) = (f.id, f.dst);
        let (client, plan2, shared2) = (client.clone(), plan.clone(), shared.clone());
        let spawn = thread::Builder::new()
            .name(format!("flow-{id}"))
            .stack_size(256 << 10)
            .spawn(move || {
                let (plan, shared) = (plan2, shared2);
                let t_start = epoch();
                for attempt in 1..=ATTEMPTS {
                    let Err(e) = send_one(&client, &plan, &shared, &f, t_start, attempt) else {
                        break;
                    };
                    let msg = format!(
                        "host {}: flow {id} to host {dst}, attempt {attempt}: {e}",
                        plan.host
                    );
                    let mut out = shared.out.lock().expect("outcome lock");
                    if attempt < ATTEMPTS && epoch() < end {
                        out.broken
                            .push(format!("{msg}; sent again on another connection"));
                        out.resent.insert(id, attempt + 1);
                    } else {
                        out.errors.push(msg);
                        break;
                    }
                }
                *shared.done.lock().expect("done lock") += 1;
                shared.all_done.notify_all();
            });
        match spawn {
            Ok(_) => spawned += 1,
            Err(e) => {
                let msg = format!(
                    "host {}: flow {id} to host {dst}: no thread: {e}",
                    plan.host
                );
                shared.out.lock().expect("outcome lock").errors.push(msg);
                break;
            }
        }
    }
    // Wait for the flows, until the deadline.
    {
        let mut done = shared.done.lock().expect("done lock");
        while *done < spawned {
            let left = end - epoch();
            if left <= 0.0 {
                break;
            }
            done = shared
                .all_done
                .wait_timeout(done, Duration::from_secs_f64(left.min(1.0)))
                .expect("done lock")
                .0;
        }
    }
    // An answer that comes after the flow's last byte still counts its
    // bytes (the client's next report): on a loaded host it may still be on
    // its way, so wait for it.
    let limit = Instant::now() + ANSWER_WAIT;
    let handles = std::mem::take(&mut *shared.handles.lock().expect("handles lock"));
    while Instant::now() < limit && !handles.iter().all(|(_, h)| h.taken()) {
        thread::sleep(Duration::from_millis(10));
    }
    let mut out = std::mem::take(&mut *shared.out.lock().expect("outcome lock"));
    for (id, h) in &handles {
        if let Some(r) = out.sent.get_mut(id) {
            r.taken = h.taken();
        }
    }
    if out.sent.len() + out.errors.len() < total {
        out.errors.push(format!(
            "host {}: not done by the deadline: sent {} of {total} flows",
            plan.host,
            out.sent.len()
        ));
    }
    let mut cc: Vec<String> = shared
        .pool
        .lock()
        .expect("pool lock")
        .values()
        .flatten()
        .map(congestion)
        .collect();
    cc.sort();
    cc.dedup();
    out.cc_seen = cc;
    out
}

fn send_one(
    client: &AgentClient,
    plan: &Plan,
    shared: &Shared,
    f: &OutFlow,
    t_start: f64,
    attempt: u32,
) -> io::Result<()> {
    let left = Duration::from_secs_f64((plan.t0 + plan.deadline_s - t_start).max(1.0));
    let dst = f.dst as usize;
    let addr = *plan
        .addrs
        .get(dst)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such host in the plan"))?;
    let idle = shared
        .pool
        .lock()
        .expect("pool lock")
        .get_mut(&f.dst)
        .and_then(Vec::pop);
    let (stream, fresh) = match idle {
        Some(s) => (s, false),
        None => (connect(addr, &plan.cc, left)?, true),
    };
    stream.set_write_timeout(Some(left))?;
    stream.set_read_timeout(Some(left))?;
    let fd = stream.as_raw_fd();
    let cut = attempt == 1 && plan.inject_reset.contains(&f.id);
    let t_conn = epoch();
    // Not waiting for the agent (Aalo 6.1): the flow starts with its
    // coflow's schedule in this process, or unpaced in class 0, and takes
    // the agent's once it answers.
    let mut w = client.writer_at_once(
        CoflowId(f.coflow),
        f.dst,
        Some(f.size + HEADER as u64),
        stream,
    );
    let t_opened = epoch();
    let handle = w.handle();
    let first = w.schedule();
    let paused = |s: (Option<f64>, u32)| s.0.is_some_and(|r| r < 1.0);
    let (mut changes, mut paused_s, mut given, mut timed) = (0u32, 0.0, 0.0, 0.0);
    let t = epoch();
    w.write_all(&header(f.id, f.size))?;
    if paused(first) {
        paused_s += epoch() - t;
    }
    let mut last = w.schedule();
    let mut crc = crc32fast::Hasher::new();
    let mut n = 0u64;
    while n < f.size {
        let mut k = (f.size - n).min(SLICE as u64) as usize;
        if cut {
            k = k.min((f.size / 2).saturating_sub(n).max(1) as usize);
        }
        let chunk = payload(&plan.block2, f.id, n, k);
        let t = epoch();
        w.write_all(chunk)?;
        let dt = epoch() - t;
        let now = w.schedule();
        changes += u32::from(now != last);
        // What the schedule said before and after this write, averaged; a
        // write begun while the schedule said paused waited for the
        // resumption.
        let rates: Vec<f64> = [last.0, now.0].into_iter().flatten().collect();
        if !rates.is_empty() {
            given += rates.iter().sum::<f64>() / rates.len() as f64 * dt;
            timed += dt;
        }
        if paused(last) {
            paused_s += dt;
        }
        last = now;
        crc.update(chunk);
        n += k as u64;
        if cut && 2 * n >= f.size {
            // SAFETY: the writer owns the open socket `fd` for this call.
            let sock = unsafe { BorrowedFd::borrow_raw(fd) };
            socket2::SockRef::from(&sock).set_linger(Some(Duration::ZERO))?;
            return Err(io::Error::other(format!(
                "reset on purpose after {n} of {} bytes (inject_reset)",
                f.size
            )));
        }
    }
    let t_last = epoch();
    let mut stream = w.finish()?;
    let t_written = epoch();
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack)?;
    if ack[0] != ANSWER {
        return Err(io::Error::other("no acknowledgement from the receiver"));
    }
    let _ = enforce::set_pacing_rate(stream.as_raw_fd(), None);
    let record = Record {
        t_start,
        bytes: n,
        crc: crc.finalize(),
        t_conn,
        fresh,
        t_written,
        taken: false,
        first_rate: first.0,
        first_class: first.1,
        changes,
        paused_s,
        mean_given: (timed > 0.0).then(|| given / timed),
        t_opened,
        t_last,
    };
    shared
        .out
        .lock()
        .expect("outcome lock")
        .sent
        .insert(f.id, record);
    if let Some(h) = handle {
        shared.handles.lock().expect("handles lock").push((f.id, h));
    }
    shared
        .pool
        .lock()
        .expect("pool lock")
        .entry(f.dst)
        .or_default()
        .push(stream);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_is_the_block_rotated_by_flow_and_offset() {
        let block: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let block2: Vec<u8> = block.iter().chain(block.iter()).copied().collect();
        let p = payload(&block2, 3, 10, 50);
        let start = (3 * 7919 + 10) % 1000;
        let want: Vec<u8> = (0..50).map(|i| block[(start + i) % 1000]).collect();
        assert_eq!(p, &want[..]);
    }

    #[test]
    fn a_plan_needs_a_block_of_a_slice_twice_and_ip_addresses() {
        let addrs = [("10.0.0.1".to_owned(), 5000), ("::1".to_owned(), 5001)];
        let plan = |block2: usize, addrs: &[(String, u16)]| {
            Plan::new(0, addrs, String::new(), vec![0; block2], 0.0, 1.0, vec![3])
        };
        let p = plan(2 * SLICE, &addrs).unwrap();
        assert_eq!(p.addrs[1], "[::1]:5001".parse().unwrap());
        assert!(p.inject_reset.contains(&3));
        for n in [0, 2 * SLICE - 2, 2 * SLICE + 1] {
            let e = plan(n, &addrs).unwrap_err();
            assert!(e.starts_with("block2: the payload block twice"), "{e}");
        }
        let e = plan(2 * SLICE, &[("host-a".to_owned(), 1)]).unwrap_err();
        assert_eq!(e, "addrs[0]: \"host-a\" is not an IP address");
    }
}
