//! The native clock of a replay worker's host policy: a thread of its own
//! that wakes the policy at the instants it names ([`HostPolicy::wake_at`]:
//! D-CAS's ticks on the `delta` grid and the ends of its rounds), answers
//! and applies D-CAS's control datagrams as they arrive, and enforces the
//! markings that those calls change, without the worker's Python event loop.
//!
//! Why a thread: a worker's event loop runs late when the host's cores are
//! busy, and a policy woken by the loop's timer then ticks off D-CAS's
//! `delta` grid (docs/lab/testbed-vs-simulation.md has the measurements). The
//! thread sleeps on a timer at the policy's instant (`timerfd`, absolute
//! wall clock: ns precision), the control socket and an `eventfd` that the
//! worker's calls use to say that the policy's next instant moved earlier.
//! It may ask for a niceness or a real-time priority (`SCHED_FIFO`) of its
//! own; the worker keeps it at its event loop's niceness, because at a
//! real-time priority the negotiation its ticks start takes the cores from
//! the event loops (docs/lab/testbed-vs-simulation.md).
//!
//! The policy is the one [`crate::host_policy::HostRunner`] holds, behind
//! one mutex: the worker's calls (a flow starts, bytes written, a flow ends)
//! and the thread's take turns, so the policy sees one sequence of calls as
//! before; its decisions are unchanged. The datagrams are the worker's
//! (python/coflowkit/testbed/replay/worker.py: `encode_control`,
//! `decode_control`): a head `!4sBBHH` (magic `CKDC`, version 2, kind, host,
//! entries) and 1-64 entries `!IQQ` (number, coflow, value), one datagram
//! per destination and kind after each wake-up or batch of arrivals.
//!
//! Correctness properties: a socket is touched (its queue read, its mark
//! set) only while its flow is attached, under the mutex, and the worker
//! detaches a flow before it closes its socket ([`Host::detach`]); a
//! datagram is applied only if it decodes whole and comes from the claimed
//! host's control port, else counted by why, as the worker's own loop does.

use coflowkit_model::Time;
use coflowkit_sched::host::{Control, ControlKind, Effects, HostPolicy, HostView};
use std::collections::HashMap;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

/// The control datagram's head: magic, version, kind, host, entries.
const MAGIC: &[u8; 4] = b"CKDC";
const VERSION: u8 = 2;
const HEAD_LEN: usize = 10;
const ENTRY_LEN: usize = 20;
/// Entries a datagram carries at most (the worker's `_CONTROL_MAX`).
pub const CONTROL_MAX: usize = 64;
/// SO_MAX_PACING_RATE (Linux; libc names it for few targets).
const SO_MAX_PACING_RATE: libc::c_int = 47;

/// One host's policy and what the clock needs of the worker's flows.
pub struct Host {
    /// The policy.
    pub policy: Box<dyn HostPolicy>,
    /// The effects of the current call (reused).
    pub out: Effects,
    /// Each attached flow's socket.
    fds: HashMap<u64, RawFd>,
    /// The instant the clock's thread sleeps until (ns since the origin), if one runs.
    planned: Option<u64>,
    /// The latest instant given to the policy while a clock runs.
    last: u64,
}

impl Host {
    /// A host with no flow attached and no clock.
    pub fn new(policy: Box<dyn HostPolicy>) -> Host {
        Host {
            policy,
            out: Effects::default(),
            fds: HashMap::new(),
            planned: None,
            last: 0,
        }
    }
    /// `now`, or the latest instant the policy saw if that is later: the
    /// policy's calls keep one order of time with two callers.
    pub fn at(&mut self, now: u64) -> u64 {
        self.last = self.last.max(now);
        self.last
    }
    /// Flow `fid` sends on socket `fd` (the clock may read its queue and mark it).
    pub fn attach(&mut self, fid: u64, fd: RawFd) {
        self.fds.insert(fid, fd);
    }
    /// Flow `fid`'s socket is no longer the clock's to touch (before it closes).
    pub fn detach(&mut self, fid: u64) {
        self.fds.remove(&fid);
    }
    /// Whether the clock must wake to see the policy's next instant: it sleeps
    /// until later than that instant, or not at all.
    pub fn wake_needed(&self) -> bool {
        match (self.policy.wake_at(), self.planned) {
            (Some(at), Some(planned)) => at.0 < planned,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// Bytes written and not acknowledged of each attached flow (SIOCOUTQ).
struct FdView<'a>(&'a HashMap<u64, RawFd>);

impl HostView for FdView<'_> {
    fn unacked(&self, flow: u64) -> u64 {
        let Some(&fd) = self.0.get(&flow) else {
            return 0;
        };
        let mut n: libc::c_int = 0;
        // SAFETY: `fd` is an open socket while its flow is attached (module doc).
        let r = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut n) };
        if r < 0 {
            0
        } else {
            u64::try_from(n).unwrap_or(0)
        }
    }
}

/// The socket option of an `int` value; errors ignored as the worker's marks
/// on a socket that just failed would be.
fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) {
    // SAFETY: `v` outlives the call; `fd` as for `FdView`.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Marks the attached flows `fids` as the policy says: the DSCP of its class
/// (CS(7 - class), the testbed's filters) and its pacing rate or `pace`.
fn mark(host: &Host, fids: &[u64], pace: Option<u64>) {
    for fid in fids {
        let Some(&fd) = host.fds.get(fid) else {
            continue;
        };
        let m = host.policy.marking(*fid);
        let tos = libc::c_int::from((7 - m.class.min(7)) << 5);
        set_int(fd, libc::IPPROTO_IP, libc::IP_TOS, tos);
        if let Some(rate) = m.pace.or(pace) {
            let rate = rate.min(u64::from(u32::MAX - 1)) as u32;
            // a u32 option, as the worker's `_u32`
            set_int(
                fd,
                libc::SOL_SOCKET,
                SO_MAX_PACING_RATE,
                rate as libc::c_int,
            );
        }
    }
}

/// A control datagram: `kind` (1 announce, 2 reply) from `host` with
/// `entries` (number, coflow, value), 1 to [`CONTROL_MAX`] of them.
pub fn encode(kind: u8, host: u16, entries: &[(u32, u64, u64)]) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEAD_LEN + ENTRY_LEN * entries.len());
    b.extend_from_slice(MAGIC);
    b.push(VERSION);
    b.push(kind);
    b.extend_from_slice(&host.to_be_bytes());
    b.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    for (number, coflow, value) in entries {
        b.extend_from_slice(&number.to_be_bytes());
        b.extend_from_slice(&coflow.to_be_bytes());
        b.extend_from_slice(&value.to_be_bytes());
    }
    b
}

/// [`encode`] for a caller outside the clock (the worker's event loop): checks first that
/// `kind` is 1 (announce) or 2 (reply) and that there are 1 to [`CONTROL_MAX`] entries, or says
/// which is not.
pub fn encode_checked(kind: u8, host: u16, entries: &[(u32, u64, u64)]) -> Result<Vec<u8>, String> {
    if !(1..=CONTROL_MAX).contains(&entries.len()) {
        return Err(format!(
            "a control datagram carries 1 to {CONTROL_MAX} entries, not {}",
            entries.len()
        ));
    }
    if kind != 1 && kind != 2 {
        return Err(format!(
            "a control datagram's kind is 1 (announce) or 2 (reply), not {kind}"
        ));
    }
    Ok(encode(kind, host, entries))
}

/// A datagram's entries: (number, coflow, value).
type Entries = Vec<(u32, u64, u64)>;

/// A decoded datagram: kind, host, entries.
type Decoded = (u8, u16, Entries);

/// `data` decoded, or why it is not a control datagram (the worker's
/// `decode_control` reasons: `size`, `magic`, `version`, `kind`, `host`).
pub fn decode(data: &[u8], n_hosts: usize) -> Result<Decoded, &'static str> {
    if data.len() < HEAD_LEN {
        return Err("size");
    }
    let be16 = |i: usize| u16::from_be_bytes([data[i], data[i + 1]]);
    let (kind, host, n) = (data[5], be16(6), usize::from(be16(8)));
    if &data[..4] != MAGIC {
        return Err("magic");
    }
    if data[4] != VERSION {
        return Err("version");
    }
    if !(1..=CONTROL_MAX).contains(&n) || data.len() != HEAD_LEN + n * ENTRY_LEN {
        return Err("size");
    }
    if kind != 1 && kind != 2 {
        return Err("kind");
    }
    if usize::from(host) >= n_hosts {
        return Err("host");
    }
    let entries = data[HEAD_LEN..]
        .chunks_exact(ENTRY_LEN)
        .map(|e| {
            let mut n4 = [0; 4];
            let (mut c8, mut v8) = ([0; 8], [0; 8]);
            n4.copy_from_slice(&e[..4]);
            c8.copy_from_slice(&e[4..12]);
            v8.copy_from_slice(&e[12..]);
            (
                u32::from_be_bytes(n4),
                u64::from_be_bytes(c8),
                u64::from_be_bytes(v8),
            )
        })
        .collect();
    Ok((kind, host, entries))
}

/// What a clock counted: datagrams sent, sends that failed, datagrams
/// ignored by why, and whether it ran at a real-time priority.
#[derive(Debug, Default, Clone)]
pub struct ClockStats {
    /// Datagrams sent.
    pub datagrams: u64,
    /// Sends that failed (D-CAS takes them as lost).
    pub send_failed: u64,
    /// Datagrams ignored, by why.
    pub ignored: HashMap<String, u64>,
    /// Whether the thread ran at a real-time priority.
    pub realtime: bool,
    /// Whether the thread runs at the niceness asked.
    pub nice: bool,
    /// Wake-ups of the thread.
    pub wakeups: u64,
}

/// What the clock's thread needs besides the policy.
pub struct ClockConfig {
    /// This host.
    pub host: u16,
    /// The run's origin: ns since the Unix epoch (the worker's `t0`).
    pub t0_ns: i128,
    /// The control socket (bound, non-blocking), or none (no negotiation).
    pub ctl_fd: Option<RawFd>,
    /// Every host's control address.
    pub peers: Vec<SocketAddr>,
    /// The plan's pacing rate for flows the policy does not pace (bytes/s).
    pub pace: Option<u64>,
    /// `SCHED_FIFO` priority to ask for (0: none).
    pub rt_priority: i32,
    /// The thread's niceness, if not its process's (below the process's needs root).
    pub nice: Option<i32>,
}

/// A running clock: its thread, how to wake it and its stop flag.
pub struct Clock {
    stop: Arc<AtomicBool>,
    event_fd: RawFd,
    thread: Option<JoinHandle<ClockStats>>,
}

/// The host, whoever holds it (a poisoned lock still holds a usable host:
/// the thread only panics on a bug, and the worker then reports it).
pub fn lock(host: &Mutex<Host>) -> MutexGuard<'_, Host> {
    host.lock().unwrap_or_else(|e| e.into_inner())
}

/// ns since the Unix epoch.
fn wall_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

impl Clock {
    /// Starts the thread for `host`'s policy.
    pub fn start(host: Arc<Mutex<Host>>, config: ClockConfig) -> std::io::Result<Clock> {
        // SAFETY: plain syscalls; the fds are checked and closed by the thread's owner.
        let event_fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if event_fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let timer_fd = unsafe {
            libc::timerfd_create(libc::CLOCK_REALTIME, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
        };
        if timer_fd < 0 {
            let e = std::io::Error::last_os_error();
            unsafe { libc::close(event_fd) };
            return Err(e);
        }
        // The thread's own handle on the control socket (the worker keeps its own).
        let ctl = match config.ctl_fd {
            Some(fd) => {
                let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
                if dup < 0 {
                    let e = std::io::Error::last_os_error();
                    unsafe {
                        libc::close(event_fd);
                        libc::close(timer_fd);
                    }
                    return Err(e);
                }
                // SAFETY: `dup` is a fresh descriptor of a UDP socket, owned from here on.
                Some(unsafe { UdpSocket::from_raw_fd(dup) })
            }
            None => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("host-clock".into())
            .spawn(move || {
                let stats = run(
                    &host,
                    &config,
                    ctl.as_ref(),
                    timer_fd,
                    event_fd,
                    &thread_stop,
                );
                unsafe { libc::close(timer_fd) };
                lock(&host).planned = None;
                stats
            })?;
        Ok(Clock {
            stop,
            event_fd,
            thread: Some(thread),
        })
    }

    /// Wakes the thread (the policy's next instant moved earlier).
    pub fn nudge(&self) {
        let one: u64 = 1;
        // SAFETY: an 8-byte write to our eventfd; a full counter (EAGAIN) still wakes it.
        unsafe { libc::write(self.event_fd, (&one as *const u64).cast(), 8) };
    }

    /// Stops the thread and returns what it counted.
    pub fn stop(mut self) -> ClockStats {
        self.finish()
    }

    fn finish(&mut self) -> ClockStats {
        self.stop.store(true, Ordering::SeqCst);
        self.nudge();
        let stats = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        if self.event_fd >= 0 {
            unsafe { libc::close(self.event_fd) };
            self.event_fd = -1;
        }
        stats
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.finish();
        }
    }
}

/// The thread: sleep until the policy's instant, a datagram or a nudge; then
/// apply what came and wake the policy if its instant came.
fn run(
    host: &Mutex<Host>,
    config: &ClockConfig,
    ctl: Option<&UdpSocket>,
    timer_fd: RawFd,
    event_fd: RawFd,
    stop: &AtomicBool,
) -> ClockStats {
    let mut stats = ClockStats::default();
    if let Some(nice) = config.nice {
        // SAFETY: this thread's own niceness (Linux: PRIO_PROCESS with a thread id).
        let tid = unsafe { libc::gettid() } as libc::id_t;
        stats.nice = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) } == 0;
    }
    if config.rt_priority > 0 {
        let param = libc::sched_param {
            sched_priority: config.rt_priority,
        };
        // SAFETY: this thread's own scheduling policy.
        stats.realtime = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0;
    }
    let now = || u64::try_from((wall_ns() - config.t0_ns).max(0)).unwrap_or(0);
    let mut buf = [0u8; 2048];
    let mut batch: Vec<((u32, u8), Entries)> = Vec::new();
    let mut armed: Option<u64> = None;
    while !stop.load(Ordering::SeqCst) {
        // Arm the timer for the policy's instant (absolute wall clock).
        let at = {
            let mut h = lock(host);
            let at = h.policy.wake_at().map(|t| t.0);
            h.planned = at;
            at
        };
        if at != armed {
            let abs = at.map_or(0, |a| config.t0_ns + i128::from(a));
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: if at.is_some() {
                    libc::timespec {
                        tv_sec: (abs / 1_000_000_000) as libc::time_t,
                        tv_nsec: (abs % 1_000_000_000).max(1) as libc::c_long,
                    }
                } else {
                    libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    } // disarmed
                },
            };
            // SAFETY: our timerfd and a valid itimerspec.
            unsafe {
                libc::timerfd_settime(
                    timer_fd,
                    libc::TFD_TIMER_ABSTIME,
                    &spec,
                    std::ptr::null_mut(),
                )
            };
            armed = at;
        }
        let mut fds = [
            libc::pollfd {
                fd: timer_fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: event_fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: ctl.map_or(-1, AsRawFd::as_raw_fd),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: three pollfds; a negative fd is ignored by poll.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 3, -1) };
        if r < 0 {
            continue; // EINTR
        }
        stats.wakeups += 1;
        let mut drain = [0u8; 8];
        for fd in [timer_fd, event_fd] {
            // SAFETY: 8-byte reads of our own non-blocking fds.
            unsafe { libc::read(fd, drain.as_mut_ptr().cast(), 8) };
        }
        if fds[0].revents != 0 {
            armed = None; // fired: arm again even if the instant is the same
        }
        // Every datagram waiting, decoded before the lock.
        let mut came: Vec<(u32, Entries, u8)> = Vec::new();
        if let Some(sock) = ctl {
            loop {
                match sock.recv_from(&mut buf) {
                    Ok((n, src)) => match decode(&buf[..n], config.peers.len()) {
                        Err(why) => *stats.ignored.entry(why.into()).or_default() += 1,
                        Ok((kind, from, entries)) => {
                            if config.peers[usize::from(from)] != src {
                                *stats.ignored.entry("source".into()).or_default() += 1;
                            } else {
                                came.push((u32::from(from), entries, kind));
                            }
                        }
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        // an ICMP error queued on the socket: counted, and read on
                        *stats.ignored.entry("recv_error".into()).or_default() += 1;
                    }
                }
            }
        }
        let mut h = lock(host);
        let h = &mut *h;
        h.out.clear();
        let t = h.at(now());
        for (from, entries, kind) in came {
            let kind = if kind == 1 {
                ControlKind::Announce
            } else {
                ControlKind::Reply
            };
            for (number, coflow, value) in entries {
                let Ok(coflow) = u32::try_from(coflow) else {
                    *stats.ignored.entry("error: coflow".into()).or_default() += 1;
                    continue;
                };
                let msg = Control {
                    kind,
                    number,
                    coflow,
                    value,
                };
                h.policy.receive(Time(t), from, &msg, &mut h.out);
            }
        }
        if h.policy.wake_at().is_some_and(|a| a.0 <= t) {
            let view = FdView(&h.fds);
            h.policy.wake(Time(t), &view, &mut h.out);
        }
        let mut changed = std::mem::take(&mut h.out.changed);
        let mut seen = std::collections::HashSet::new();
        changed.retain(|f| seen.insert(*f));
        mark(h, &changed, config.pace);
        for (dst, m) in h.out.send.drain(..) {
            let key = (
                dst,
                if m.kind == ControlKind::Announce {
                    1
                } else {
                    2
                },
            );
            let entry = (m.number, u64::from(m.coflow), m.value);
            match batch.iter_mut().find(|(k, _)| *k == key) {
                Some((_, es)) => es.push(entry),
                None => batch.push((key, vec![entry])),
            }
        }
        drop(changed);
        if let Some(sock) = ctl {
            for ((dst, kind), entries) in batch.drain(..) {
                for chunk in entries.chunks(CONTROL_MAX) {
                    stats.datagrams += 1;
                    let msg = encode(kind, config.host, chunk);
                    if sock.send_to(&msg, config.peers[dst as usize]).is_err() {
                        stats.send_failed += 1;
                    }
                }
            }
        } else {
            batch.clear();
        }
    }
    stats
}

/// `(address, port)` as a socket address (IPv4, the testbed's).
pub fn peer(addr: &str, port: u16) -> Result<SocketAddr, String> {
    addr.parse::<std::net::Ipv4Addr>()
        .map(|ip| SocketAddr::V4(SocketAddrV4::new(ip, port)))
        .map_err(|e| format!("control address {addr:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_round_trip_and_name_what_is_wrong() {
        let one = encode(1, 3, &[(7, 42, 123_456)]);
        assert_eq!(one.len(), 30);
        assert_eq!(decode(&one, 4), Ok((1, 3, vec![(7, 42, 123_456)])));
        assert_eq!(decode(&one, 3), Err("host"));
        assert_eq!(decode(&one[..29], 4), Err("size"));
        assert_eq!(decode(b"", 4), Err("size"));
        let mut bad = one.clone();
        bad[0] = b'X';
        assert_eq!(decode(&bad, 4), Err("magic"));
        let mut bad = one.clone();
        bad[4] = 1;
        assert_eq!(decode(&bad, 4), Err("version"));
        let mut bad = one.clone();
        bad[5] = 3;
        assert_eq!(decode(&bad, 4), Err("kind"));
        let mut bad = one;
        bad[8] = 0;
        bad[9] = 0;
        assert_eq!(decode(&bad, 4), Err("size"));
    }

    #[test]
    fn a_checked_datagram_has_a_known_kind_and_1_to_64_entries() {
        let entries = vec![(1, 2, 3); CONTROL_MAX];
        assert_eq!(encode_checked(2, 0, &entries), Ok(encode(2, 0, &entries)));
        for n in [0, CONTROL_MAX + 1] {
            let e = encode_checked(1, 0, &vec![(1, 2, 3); n]).unwrap_err();
            assert_eq!(
                e,
                format!("a control datagram carries 1 to 64 entries, not {n}")
            );
        }
        let e = encode_checked(3, 0, &entries[..1]).unwrap_err();
        assert_eq!(
            e,
            "a control datagram's kind is 1 (announce) or 2 (reply), not 3"
        );
    }
}
