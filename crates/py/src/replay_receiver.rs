//! The receiving part of a replay, natively: every connection to one
//! host's data port served by a thread of its own, without the GIL.
//!
//! It was Python (`coflowkit._replay_worker`'s asyncio `serve`): one event
//! loop per host read every connection in 256 KiB slices through
//! `sock_recv_into`, and at 25 Mbit/s per port the data came in small
//! pieces, so each read cost a wake-up, a reader registered and removed and
//! a coroutine step. On the 16-host testbed the receivers of one replay
//! took about 57 s of CPU in 90 s (two cores in all, shared with senders,
//! agents and coordinator). Here a connection's thread blocks in `read`.
//!
//! The wire format is the replay's: a 16-byte header (flow id, size,
//! big-endian), the flow's bytes, then our one-byte answer `k` once all of
//! them are in; the next flow may follow on the same connection. Records
//! are the Python receiver's: per flow, the instant its last byte came
//! (seconds since the epoch), the bytes and their CRC-32. A flow counts in
//! only when it has arrived whole; a connection closed or reset mid-flow
//! leaves that flow's partial record (unless it already arrived whole on
//! another connection, the sender having sent it again) and a line in
//! `broken`, not an error: the driver finds any flow that never arrived
//! whole.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use crate::replay_wire::{epoch, parse_header, ANSWER, HEADER, TOS_TOP};

/// Bytes per read.
const CHUNK: usize = 256 << 10;
/// How often an idle connection's thread looks at the stop flag (a
/// thousand threads per host wake this often, so not often: one left when
/// the replay ends goes at its peer's close or at its next timeout).
const READ_POLL: Duration = Duration::from_secs(5);
/// How often the accept loop, blocked in `poll`, looks at the stop flag.
const ACCEPT_POLL_MS: i32 = 200;

/// One flow received: the instant of its last byte (seconds since the
/// epoch), its bytes and their CRC-32.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Received {
    pub t: f64,
    pub bytes: u64,
    pub crc: u32,
}

/// What one host received.
#[derive(Debug, Default)]
pub struct Inbound {
    pub received: HashMap<u64, Received>,
    /// Connections lost (closed or reset mid-flow, or failing between flows).
    pub broken: Vec<String>,
    /// Flows that arrived whole.
    pub whole: usize,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
}

#[derive(Default)]
struct State {
    received: HashMap<u64, Received>,
    whole: HashSet<u64>,
    broken: Vec<String>,
}

/// Serves `listener` until `n_in` distinct flows have arrived whole or the
/// wall clock passes `deadline` (seconds since the epoch); returns what
/// came. Connection threads still open then are told to stop and left to
/// end on their own (at their next read timeout).
pub fn receive_flows(listener: TcpListener, host: u32, n_in: usize, deadline: f64) -> Inbound {
    let shared = Arc::new(Shared::default());
    let acceptor = {
        let shared = shared.clone();
        thread::Builder::new()
            .name(format!("accept-{host}"))
            .spawn(move || accept_loop(&listener, host, &shared))
    };
    if let Err(e) = acceptor {
        let mut out = Inbound::default();
        out.broken
            .push(format!("host {host}: no accepting thread: {e}"));
        return out;
    }
    {
        let mut st = shared.state.lock().expect("receiver lock");
        while st.whole.len() < n_in {
            let left = deadline - epoch();
            if left <= 0.0 {
                break;
            }
            st = shared
                .changed
                .wait_timeout(st, Duration::from_secs_f64(left.min(1.0)))
                .expect("receiver lock")
                .0;
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    let mut st = shared.state.lock().expect("receiver lock");
    Inbound {
        received: std::mem::take(&mut st.received),
        broken: std::mem::take(&mut st.broken),
        whole: st.whole.len(),
    }
}

/// Whether `fd` became readable within `timeout_ms` (false on a signal).
fn readable(fd: RawFd, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(r > 0)
}

fn accept_loop(listener: &TcpListener, host: u32, shared: &Arc<Shared>) {
    if let Err(e) = listener.set_nonblocking(true) {
        let msg = format!("host {host}: the data port cannot be polled: {e}");
        shared.state.lock().expect("receiver lock").broken.push(msg);
        return;
    }
    while !shared.stop.load(Ordering::SeqCst) {
        match readable(listener.as_raw_fd(), ACCEPT_POLL_MS) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                let msg = format!("host {host}: waiting for connections: {e}");
                shared.state.lock().expect("receiver lock").broken.push(msg);
                return;
            }
        }
        match listener.accept() {
            Ok((conn, _)) => {
                let shared2 = shared.clone();
                let spawned = thread::Builder::new()
                    .name(format!("rx-{host}"))
                    .stack_size(256 << 10)
                    .spawn(move || serve(conn, host, &shared2));
                if let Err(e) = spawned {
                    let msg = format!("host {host}: a connection got no thread: {e}");
                    shared.state.lock().expect("receiver lock").broken.push(msg);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                // A connection that failed before we took it (reset in the
                // backlog) or a lack of descriptors: noted, and go on.
                let msg = format!("host {host}: accepting: {e}");
                shared.state.lock().expect("receiver lock").broken.push(msg);
                thread::sleep(Duration::from_millis(10)); // not a busy loop if it persists
            }
        }
    }
}

/// Reads until `buf` is full; `Ok(n)` short of it only at end of stream.
/// Read timeouts only look at the stop flag.
fn fill(conn: &mut TcpStream, buf: &mut [u8], stop: &AtomicBool) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match conn.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                if stop.load(Ordering::SeqCst) {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "the replay ended"));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// One connection: flows one after another, each a header, its bytes and
/// our answer.
fn serve(mut conn: TcpStream, host: u32, shared: &Shared) {
    let setup = conn.set_nonblocking(false).and_then(|()| {
        socket2::SockRef::from(&conn).set_tos_v4(TOS_TOP)?;
        conn.set_read_timeout(Some(READ_POLL))
    });
    if let Err(e) = setup {
        let msg = format!("host {host}: setting up a connection: {e}");
        shared.state.lock().expect("receiver lock").broken.push(msg);
        return;
    }
    let mut buf = vec![0u8; CHUNK];
    let mut current: Option<u64> = None;
    let outcome = (|| -> io::Result<()> {
        loop {
            current = None;
            let mut header = [0u8; HEADER];
            let got = fill(&mut conn, &mut header, &shared.stop)?;
            if got == 0 {
                return Ok(()); // the sender closed between flows
            }
            if got < HEADER {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("closed after {got} of {HEADER} header bytes"),
                ));
            }
            let (fid, size) = parse_header(&header);
            current = Some(fid);
            let mut crc = crc32fast::Hasher::new();
            let mut n = 0u64;
            while n < size {
                let want = (size - n).min(CHUNK as u64) as usize;
                let k = fill(&mut conn, &mut buf[..want], &shared.stop)?;
                crc.update(&buf[..k]);
                n += k as u64;
                if k < want {
                    break;
                }
            }
            let rec = Received {
                t: epoch(),
                bytes: n,
                crc: crc.finalize(),
            };
            let mut st = shared.state.lock().expect("receiver lock");
            if n < size {
                // Closed mid-flow: the partial record stays unless the flow,
                // sent again, already arrived whole on another connection.
                if !st.whole.contains(&fid) {
                    st.received.insert(fid, rec);
                }
                st.broken.push(format!(
                    "host {host}: receiving flow {fid}: closed after {n} of {size} bytes"
                ));
                return Ok(());
            }
            st.received.insert(fid, rec);
            st.whole.insert(fid);
            drop(st);
            shared.changed.notify_all();
            conn.write_all(&[ANSWER])?;
        }
    })();
    if let Err(e) = outcome {
        if shared.stop.load(Ordering::SeqCst) {
            return; // the replay is over: nothing more is waited for
        }
        let what = current.map_or_else(|| "between flows".to_owned(), |f| format!("flow {f}"));
        let msg = format!("host {host}: receiving {what}: {e}");
        shared.state.lock().expect("receiver lock").broken.push(msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay_wire::header;
    use std::net::Shutdown;

    fn flow(conn: &mut TcpStream, fid: u64, body: &[u8]) {
        conn.write_all(&header(fid, body.len() as u64)).unwrap();
        conn.write_all(body).unwrap();
    }

    #[test]
    fn flows_arrive_whole_with_their_crc_and_are_answered() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let body: Vec<u8> = (0..700_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let sender = thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            for fid in [7u64, 9] {
                flow(&mut c, fid, &body[..(fid as usize) * 50_000]);
                let mut ack = [0u8; 1];
                c.read_exact(&mut ack).unwrap();
                assert_eq!(&ack, b"k");
            }
            // A third flow cut short: a partial record and a broken line.
            c.write_all(&11u64.to_be_bytes()).unwrap();
            c.write_all(&1000u64.to_be_bytes()).unwrap();
            c.write_all(&[1u8; 10]).unwrap();
            c.shutdown(Shutdown::Both).unwrap();
        });
        let got = receive_flows(listener, 3, 3, epoch() + 5.0);
        sender.join().unwrap();
        assert_eq!(got.whole, 2);
        for fid in [7u64, 9] {
            let n = fid as usize * 50_000;
            let want: Vec<u8> = (0..n as u32).map(|i| (i * 31 % 251) as u8).collect();
            let r = got.received[&fid];
            assert_eq!((r.bytes, r.crc), (n as u64, crc32fast::hash(&want)));
        }
        assert_eq!(got.received[&11].bytes, 10);
        assert!(got
            .broken
            .iter()
            .any(|b| b.contains("flow 11: closed after 10 of 1000")));
    }

    #[test]
    fn a_flow_sent_again_keeps_its_whole_record() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let sender = thread::spawn(move || {
            let mut a = TcpStream::connect(addr).unwrap();
            flow(&mut a, 5, &[2u8; 3000]);
            let mut ack = [0u8; 1];
            a.read_exact(&mut ack).unwrap();
            // The same flow again, cut short: the whole record stands.
            let mut b = TcpStream::connect(addr).unwrap();
            b.write_all(&5u64.to_be_bytes()).unwrap();
            b.write_all(&3000u64.to_be_bytes()).unwrap();
            b.write_all(&[2u8; 100]).unwrap();
            drop(b);
            thread::sleep(Duration::from_millis(300));
            flow(&mut a, 6, &[3u8; 10]);
            a.read_exact(&mut ack).unwrap();
        });
        let got = receive_flows(listener, 0, 2, epoch() + 5.0);
        sender.join().unwrap();
        assert_eq!(got.whole, 2);
        assert_eq!(got.received[&5].bytes, 3000);
        assert_eq!(got.received[&5].crc, crc32fast::hash(&[2u8; 3000]));
    }

    #[test]
    fn the_deadline_ends_a_replay_that_misses_flows() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let t = epoch();
        let got = receive_flows(listener, 0, 1, t + 0.3);
        assert_eq!(got.whole, 0);
        assert!(epoch() - t < 3.0);
    }
}
