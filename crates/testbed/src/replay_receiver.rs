//! The receiving part of a replay, natively: every connection to one
//! host's data port, and its listening socket, served by one event loop
//! (epoll, through `mio`) on one thread, without the GIL.
//!
//! Why one event loop in Rust: at the testbed's rates (25 Mbit/s a port)
//! data comes in small pieces, so a Python event loop pays a wake-up, a
//! reader registration and a coroutine step per read (measured: about 57 s
//! of CPU in a 90 s replay of 16 hosts, on two cores shared with senders,
//! agents and coordinator). A thread per connection is cheap per byte but
//! leaves the accept loop one thread among hundreds when a wide coflow's
//! data comes in, and new connections then wait in the kernel's queue for
//! up to 1.35 s (measured, 16-host testbed under `aalo` through the
//! runtime) with their small flows' bytes already sent. Here a connection
//! is taken the moment the loop sees it, and the record of each flow says
//! when its connection was taken (`Received::accepted`).
//!
//! The wire format is the replay's ([`crate::replay_wire`]): a 16-byte
//! header (flow id, size, big-endian), the flow's bytes, then our one-byte
//! answer `k` once all of them are in; the next flow may follow on the same
//! connection. Records are the ones the replay's driver reads from every
//! receiver: per flow, the instant its last byte came (seconds since the
//! epoch), the bytes and their CRC-32. A flow counts in only when it has
//! arrived whole; a connection closed or reset mid-flow leaves that flow's
//! partial record (unless it already arrived whole on another connection,
//! the sender having sent it again) and a line in `broken`, not an error:
//! the driver finds any flow that never arrived whole.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use mio::net::{TcpListener as Listener, TcpStream as Stream};
use mio::{Events, Interest, Poll, Token};

use crate::replay_wire::{epoch, parse_header, ANSWER, HEADER, TOS_TOP};

/// Bytes per read.
const CHUNK: usize = 256 << 10;
/// The listening socket's token (connections have their slot's index).
const LISTENER: Token = Token(usize::MAX);
/// The longest the loop sleeps before it looks at the deadline again.
const TICK: Duration = Duration::from_secs(1);

/// One flow received: the instant of its last byte (seconds since the
/// epoch), its bytes and their CRC-32, and when the connection that
/// carried it was accepted (to tell where a late flow waited).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Received {
    pub t: f64,
    pub bytes: u64,
    pub crc: u32,
    pub accepted: f64,
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
struct State {
    received: HashMap<u64, Received>,
    whole: HashSet<u64>,
    broken: Vec<String>,
}

/// The flow a connection is receiving: its header has come.
struct Flow {
    id: u64,
    size: u64,
    n: u64,
    crc: crc32fast::Hasher,
}

/// One connection: flows one after another, each a header, its bytes and
/// our answer.
struct Conn {
    stream: Stream,
    accepted: f64,
    header: [u8; HEADER],
    /// Header bytes in so far (while `flow` is `None`).
    got: usize,
    flow: Option<Flow>,
    /// Answers owed: flows in whole whose answer the socket has not taken.
    owed: usize,
}

impl Conn {
    /// Takes `data` off the wire: headers, bytes, and a record and an
    /// answer owed for each flow in whole.
    fn take(&mut self, mut data: &[u8], st: &mut State) {
        while !data.is_empty() {
            match &mut self.flow {
                None => {
                    let k = (HEADER - self.got).min(data.len());
                    self.header[self.got..self.got + k].copy_from_slice(&data[..k]);
                    self.got += k;
                    data = &data[k..];
                    if self.got == HEADER {
                        self.got = 0;
                        let (id, size) = parse_header(&self.header);
                        self.flow = Some(Flow {
                            id,
                            size,
                            n: 0,
                            crc: crc32fast::Hasher::new(),
                        });
                    }
                }
                Some(f) => {
                    let k = (f.size - f.n).min(data.len() as u64) as usize;
                    f.crc.update(&data[..k]);
                    f.n += k as u64;
                    data = &data[k..];
                }
            }
            if self.flow.as_ref().is_some_and(|f| f.n == f.size) {
                let f = self.flow.take().expect("a flow");
                st.received.insert(f.id, self.record(&f));
                st.whole.insert(f.id);
                self.owed += 1;
            }
        }
    }

    /// Flow `f`'s record as of now: what came of it.
    fn record(&self, f: &Flow) -> Received {
        Received {
            t: epoch(),
            bytes: f.n,
            crc: f.crc.clone().finalize(),
            accepted: self.accepted,
        }
    }

    /// Reads what has come and sends the answers owed, until the socket
    /// would block; false once the connection is done with (closed by the
    /// sender, or failed: noted in `st.broken`).
    fn pump(&mut self, host: u32, buf: &mut [u8], st: &mut State) -> bool {
        loop {
            match self.stream.read(buf) {
                Ok(0) => {
                    self.closed(host, st);
                    return false;
                }
                Ok(k) => self.take(&buf[..k], st),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed(host, &e, st);
                    return false;
                }
            }
        }
        while self.owed > 0 {
            let answers = [ANSWER; 16];
            match self.stream.write(&answers[..self.owed.min(answers.len())]) {
                Ok(k) => self.owed -= k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed(host, &e, st);
                    return false;
                }
            }
        }
        true
    }

    /// The sender closed: between flows that is the end; mid-flow the flow
    /// keeps a partial record (unless, sent again, it already arrived whole
    /// on another connection).
    fn closed(&mut self, host: u32, st: &mut State) {
        if let Some(f) = self.flow.take() {
            if !st.whole.contains(&f.id) {
                st.received.insert(f.id, self.record(&f));
            }
            st.broken.push(format!(
                "host {host}: receiving flow {}: closed after {} of {} bytes",
                f.id, f.n, f.size
            ));
        } else if self.got > 0 {
            st.broken.push(format!(
                "host {host}: receiving between flows: closed after {} of {HEADER} header bytes",
                self.got
            ));
        }
    }

    fn failed(&mut self, host: u32, e: &io::Error, st: &mut State) {
        let what = self
            .flow
            .as_ref()
            .map_or_else(|| "between flows".to_owned(), |f| format!("flow {}", f.id));
        st.broken
            .push(format!("host {host}: receiving {what}: {e}"));
    }
}

/// Serves `listener` until `n_in` distinct flows have arrived whole or the
/// wall clock passes `deadline` (seconds since the epoch); returns what
/// came. Connections still open then are closed.
pub fn receive_flows(listener: TcpListener, host: u32, n_in: usize, deadline: f64) -> Inbound {
    let mut st = State::default();
    if let Err(e) = serve(listener, host, n_in, deadline, &mut st) {
        st.broken
            .push(format!("host {host}: the data port cannot be served: {e}"));
    }
    Inbound {
        whole: st.whole.len(),
        received: st.received,
        broken: st.broken,
    }
}

fn serve(
    listener: TcpListener,
    host: u32,
    n_in: usize,
    deadline: f64,
    st: &mut State,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut listener = Listener::from_std(listener);
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut events = Events::with_capacity(1024);
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    while st.whole.len() < n_in {
        let left = deadline - epoch();
        if left <= 0.0 {
            break;
        }
        if let Err(e) = poll.poll(&mut events, Some(TICK.min(Duration::from_secs_f64(left)))) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for ev in &events {
            if ev.token() == LISTENER {
                accept_all(&mut listener, &poll, host, &mut conns, &mut free, st);
                continue;
            }
            let i = ev.token().0;
            let Some(conn) = conns.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            if !conn.pump(host, &mut buf, st) {
                let mut conn = conns[i].take().expect("a connection");
                let _ = poll.registry().deregister(&mut conn.stream);
                free.push(i);
            }
        }
    }
    Ok(())
}

/// Takes every connection waiting, marks it for queue 0 and serves it from
/// here on.
fn accept_all(
    listener: &mut Listener,
    poll: &Poll,
    host: u32,
    conns: &mut Vec<Option<Conn>>,
    free: &mut Vec<usize>,
    st: &mut State,
) {
    loop {
        let (mut stream, _) = match listener.accept() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // A connection that failed before we took it (reset in the
                // backlog) or a lack of descriptors: noted, and go on.
                st.broken.push(format!("host {host}: accepting: {e}"));
                return;
            }
        };
        let accepted = epoch();
        if let Err(e) = socket2::SockRef::from(&stream).set_tos_v4(TOS_TOP) {
            st.broken
                .push(format!("host {host}: setting up a connection: {e}"));
            continue;
        }
        let i = free.pop().unwrap_or_else(|| {
            conns.push(None);
            conns.len() - 1
        });
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = poll.registry().register(&mut stream, Token(i), interest) {
            st.broken
                .push(format!("host {host}: setting up a connection: {e}"));
            free.push(i);
            continue;
        }
        conns[i] = Some(Conn {
            stream,
            accepted,
            header: [0; HEADER],
            got: 0,
            flow: None,
            owed: 0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay_wire::header;
    use std::net::{Shutdown, TcpStream};
    use std::thread;

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

    /// Hundreds of connections open at once, each with a flow (one of them
    /// empty), all served by the one loop; each record says when its
    /// connection was taken, before its last byte came.
    #[test]
    fn many_connections_at_once_are_all_served() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let n = 300u64;
        let senders: Vec<_> = (0..4u64)
            .map(|k| {
                thread::spawn(move || {
                    let mut conns: Vec<(u64, TcpStream)> = (0..n)
                        .filter(|fid| fid % 4 == k)
                        .map(|fid| (fid, TcpStream::connect(addr).unwrap()))
                        .collect();
                    for (fid, c) in &mut conns {
                        flow(c, *fid, &vec![*fid as u8; (*fid as usize) * 97]);
                    }
                    for (_, c) in &mut conns {
                        let mut ack = [0u8; 1];
                        c.read_exact(&mut ack).unwrap();
                        assert_eq!(&ack, b"k");
                    }
                })
            })
            .collect();
        let got = receive_flows(listener, 1, n as usize, epoch() + 20.0);
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(got.whole, n as usize);
        assert!(got.broken.is_empty(), "{:?}", got.broken);
        for fid in 0..n {
            let r = got.received[&fid];
            let want = vec![fid as u8; fid as usize * 97];
            assert_eq!(
                (r.bytes, r.crc),
                (want.len() as u64, crc32fast::hash(&want))
            );
            assert!(r.accepted <= r.t);
        }
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
