//! Transparent enforcement: the schedule of flows the agent does not write.
//!
//! An unmodified application (a Memcached server, say) sends on sockets no
//! `CoflowWriter` wraps. A client beside it names such a flow by its address
//! as this host sends it (`WatchFlow`: TCP from this host's `src_port` to
//! `dst_addr:dst_port`), and the agent holds it to its schedule in the
//! kernel, on the host's egress device, with what this kernel has:
//!
//! * **class and rate: one HTB class per flow**, a child of the device's
//!   `1:1` (the link's capacity, as the testbed shapes every host port,
//!   `coflowkit.testbed.net`), with `prio` = the flow's queue (its class up
//!   to 6 while it may send, 7 while paused: [`queue_of`]). HTB lends its
//!   parent's spare capacity to the lowest `prio` first, so classes are
//!   strict priorities among each other and among the testbed's own eight
//!   DSCP queues (`1:10`..`1:17`, prio 0..7). Under [`Ceiling::Rate`] the
//!   class has a token guaranteed rate and `ceil` = the scheduled rate (no
//!   flow exceeds its rate; a paused flow is held to the token rate, HTB
//!   having no zero rate); under [`Ceiling::Line`] the scheduled rate is
//!   guaranteed and `ceil` is the link's (work-conserving).
//! * **the class carried to the fabric**: the flow's packets get its
//!   queue's DSCP from an eBPF classifier at the device's egress ([`dscp`]),
//!   so that switches whose queue is the bottleneck order it too. The same
//!   classifier puts every TCP packet without payload (handshakes, pure
//!   ACKs, FIN, RST) of every connection of the host in queue 0, at the
//!   host and at the switches, so that a new connection's handshake is not
//!   lost behind the flows a schedule keeps waiting in the lowest queue.
//! * **classification: a `u32` filter per flow** at the root, matching the
//!   protocol, source port, destination address and destination port,
//!   `flowid` its class. The filter is put in the root's first filter list
//!   (`prio 1`) with an explicit node handle `800::M` below `0x800`: u32
//!   keeps a list's nodes in handle order and `tc` numbers its own from
//!   `0x800` up, so these are tried before the testbed's DSCP filters.
//! * **progress: the class's own byte and packet counters**, read every Δ
//!   in one netlink dump of the device's classes (`RTM_GETTCLASS`, no
//!   process started), less an estimate of the headers (66 bytes a packet:
//!   Ethernet 14, IPv4 20, TCP 20 with the timestamp option 12). Why these
//!   and not `ss -ti`'s `bytes_acked` or iptables' rule counters: the class
//!   is where the schedule is enforced, so its counters count exactly the
//!   packets the schedule let go, one dump reads every flow of the host at
//!   once without a lookup per socket, and iptables is not installed on
//!   these machines (nor needed). What they count that the flow's payload
//!   does not: retransmitted segments (a lossy flow looks further along
//!   than it is) and headers not of that size (an IP or TCP option; the
//!   estimate is within a fraction of a percent on the testbed's links).
//!
//! Changes to the classes are made with `tc -batch -` (one process for all
//! of a Δ's changes, on a thread of its own, never under the agent's lock);
//! the counters and the changes need `CAP_NET_ADMIN` (root).
//!
//! Correctness properties:
//! * a watched flow's reported count never goes back (the largest reading
//!   is kept: `Enforcer::bytes`);
//! * every class and filter the enforcer made is removed when its flow is
//!   forgotten and when the enforcer stops (`Enforcer::drop`).

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::process::{Command as Proc, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::{debug, warn};

use crate::proto::FlowRate;

mod dscp;

/// The bytes of headers per packet subtracted from a class's byte count:
/// Ethernet 14, IPv4 20, TCP 20 and its timestamp option 12.
pub const HEADER_BYTES: u64 = 66;

/// The lowest class minor the enforcer uses (the testbed's classes are
/// `1:1` and `1:10`..`1:17`, hex).
const FIRST_MINOR: u32 = 0x100;
/// One past the highest: u32 node handles below tc's own (0x800).
const END_MINOR: u32 = 0x800;

/// How a watched flow's HTB class treats the capacity its schedule leaves
/// idle (`coflowkit-runtime agent --transparent-ceil`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ceiling {
    /// Held to its scheduled rate (`ceil` = the rate): the schedule
    /// exactly, and capacity it does not give stays idle.
    #[default]
    Rate,
    /// Guaranteed its scheduled rate and free to borrow the link's idle
    /// capacity, highest class first (`ceil` = the NIC's rate):
    /// work-conserving, so a schedule that lags the traffic leaves no
    /// link idle while a flow waits.
    Line,
}

/// Transparent enforcement's settings (`--transparent-dev`,
/// `--transparent-ceil`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transparent {
    /// The egress device (root HTB `1:` with the link as `1:1`).
    pub dev: String,
    /// What a class may use above its scheduled rate.
    pub ceiling: Ceiling,
    /// Carry each flow's class to the fabric as its packets' DSCP.
    pub mark: bool,
    /// The scheduler's host policy marks the watched flows at this host
    /// (`--transparent-policy host`, [`super::local`]) instead of the
    /// coordinator's schedule.
    pub host_policy: bool,
}

/// A flow named by its address as this host sends it (TCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    /// This host's port.
    pub src_port: u16,
    /// The receiver's address.
    pub dst: Ipv4Addr,
    /// The receiver's port.
    pub dst_port: u16,
}

enum Command {
    Set(u64, Watch, FlowRate),
    Remove(u64),
    Stop,
}

#[derive(Debug, Default)]
struct Counts {
    /// Payload bytes (estimated) per flow, the largest reading.
    bytes: HashMap<u64, u64>,
}

/// The enforcer of one host's watched flows on one egress device.
pub struct Enforcer {
    tx: mpsc::Sender<Command>,
    counts: Arc<Mutex<Counts>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Enforcer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enforcer").finish_non_exhaustive()
    }
}

impl Enforcer {
    /// Starts enforcing on `dev`, whose root qdisc must be HTB `1:` with a
    /// class `1:1` (the link, whose rate is every class's ceiling under
    /// [`Ceiling::Line`]); `host_rate_bps` is the NIC's rate as the
    /// coordinator knows it (an unlimited flow's rate); counters are read
    /// every `delta`. Where this
    /// kernel cannot load the DSCP classifier ([`dscp`]), flows are
    /// enforced unmarked, with a warning; `mark` false: unmarked.
    pub fn start(
        dev: &str,
        host_rate_bps: f64,
        delta: Duration,
        ceiling: Ceiling,
        mark: bool,
    ) -> Result<Enforcer, String> {
        let ifindex = ifindex(dev)?;
        let mut sock = Netlink::open().map_err(|e| format!("netlink socket: {e}"))?;
        let link_bps = sock
            .htb_rate(ifindex, 0x1_0001)
            .map_err(|e| format!("reading the classes of {dev}: {e}"))?;
        let Some(link_bps) = link_bps.filter(|r| *r > 0.0) else {
            return Err(format!(
                "{dev} has no HTB class 1:1 under a root 1: (the link's capacity, as the testbed \
                 shapes a host's port): transparent enforcement adds its classes below it"
            ));
        };
        let marker = match mark.then(|| dscp::Marker::start(dev, ifindex, &mut sock)) {
            None => None,
            Some(Ok(m)) => Some(m),
            Some(Err(why)) => {
                warn!(dev, %why, "watched flows go unmarked (their class is not carried to the fabric's queues)");
                None
            }
        };
        let (tx, rx) = mpsc::channel();
        let counts = Arc::new(Mutex::new(Counts::default()));
        let mut worker = Worker {
            dev: dev.to_string(),
            ifindex,
            sock,
            host_rate_bps,
            link_bps,
            ceiling,
            marker,
            minors: HashMap::new(),
            free: (FIRST_MINOR..END_MINOR).rev().collect(),
            counts: counts.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("ck-transparent".into())
            .spawn(move || worker.run(rx, delta))
            .map_err(|e| format!("thread: {e}"))?;
        Ok(Enforcer {
            tx,
            counts,
            thread: Some(thread),
        })
    }

    /// An enforcer with no device, for the agent's own tests: its commands
    /// go nowhere and its counts are what [`Enforcer::count`] says.
    #[cfg(test)]
    pub(crate) fn detached() -> Enforcer {
        Enforcer {
            tx: mpsc::channel().0,
            counts: Arc::default(),
            thread: None,
        }
    }

    /// Sets flow `flow`'s count, as a reading of the kernel's would.
    #[cfg(test)]
    pub(crate) fn count(&self, flow: u64, bytes: u64) {
        self.counts
            .lock()
            .expect("counts lock")
            .bytes
            .insert(flow, bytes);
    }

    /// Holds flow `flow` (address `watch`) to `rate` (made or changed).
    pub fn set(&self, flow: u64, watch: Watch, rate: FlowRate) {
        let _ = self.tx.send(Command::Set(flow, watch, rate));
    }

    /// Removes flow `flow`'s class and filter.
    pub fn remove(&self, flow: u64) {
        let _ = self.tx.send(Command::Remove(flow));
    }

    /// Flow `flow`'s payload bytes so far, as the kernel counted them
    /// (never less than an earlier answer); `None` before its first reading.
    pub fn bytes(&self, flow: u64) -> Option<u64> {
        self.counts
            .lock()
            .expect("counts lock")
            .bytes
            .get(&flow)
            .copied()
    }
}

impl Drop for Enforcer {
    fn drop(&mut self) {
        let _ = self.tx.send(Command::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Worker {
    dev: String,
    ifindex: i32,
    sock: Netlink,
    host_rate_bps: f64,
    /// Class `1:1`'s rate: the link's, a borrowing class's ceiling.
    link_bps: f64,
    ceiling: Ceiling,
    /// Sets the flows' DSCP; `None` where the kernel would not load it.
    marker: Option<dscp::Marker>,
    /// flow -> (class minor, its address, its last rate)
    minors: HashMap<u64, (u32, Watch, Option<FlowRate>)>,
    free: Vec<u32>,
    counts: Arc<Mutex<Counts>>,
}

impl Worker {
    fn run(&mut self, rx: mpsc::Receiver<Command>, delta: Duration) {
        let mut next_read = Instant::now() + delta;
        loop {
            let mut batch: Vec<String> = vec![];
            let mut stop = false;
            let wait = next_read.saturating_duration_since(Instant::now());
            let first = rx.recv_timeout(wait);
            let mut cmds: Vec<Command> = match first {
                Ok(c) => vec![c],
                Err(mpsc::RecvTimeoutError::Timeout) => vec![],
                Err(mpsc::RecvTimeoutError::Disconnected) => vec![Command::Stop],
            };
            cmds.extend(rx.try_iter());
            for c in cmds {
                match c {
                    Command::Set(flow, w, r) => self.set(flow, w, r, &mut batch),
                    Command::Remove(flow) => self.remove(flow, &mut batch),
                    Command::Stop => stop = true,
                }
            }
            if stop {
                let flows: Vec<u64> = self.minors.keys().copied().collect();
                for f in flows {
                    self.remove(f, &mut batch);
                }
                // The classifier (and the clsact it made) goes with it.
                self.marker = None;
            }
            if !batch.is_empty() {
                if let Err(e) = tc_batch(&batch) {
                    warn!(dev = %self.dev, error = %e, "tc could not apply a schedule change");
                }
            }
            if stop {
                return;
            }
            if Instant::now() >= next_read {
                self.read();
                next_read = Instant::now() + delta;
            }
        }
    }

    fn class_line(&self, verb: &str, minor: u32, r: &FlowRate) -> String {
        let token = (self.host_rate_bps / 1000.0).max(8_000.0);
        // The scheduled rate (a paused flow's: the token).
        let scheduled = if r.paused {
            token
        } else if r.rate_bps > 0.0 {
            r.rate_bps.min(self.host_rate_bps).max(token)
        } else {
            self.host_rate_bps.max(token)
        };
        let prio = queue_of(r);
        let (rate, ceil) = match self.ceiling {
            Ceiling::Rate => (token, scheduled),
            Ceiling::Line => (scheduled.min(self.link_bps), self.link_bps),
        };
        // At least one of the testbed's GSO packets and two full frames,
        // else 1 ms at the ceiling.
        let burst = ((ceil / 8.0 / 1000.0) as u64).max(16_384 + 2 * 1514);
        format!(
            "class {verb} dev {} parent 1:1 classid 1:{minor:x} htb rate {}bit ceil {}bit \
             burst {burst} cburst {burst} prio {prio} quantum 1514",
            self.dev, rate as u64, ceil as u64
        )
    }

    /// Marks flow `w` with the DSCP of its queue (best effort when paused).
    fn mark(&self, flow: u64, w: &Watch, r: &FlowRate) {
        if let Some(m) = &self.marker {
            if let Err(e) = m.set(w, dscp::tos_of_class(queue_of(r))) {
                warn!(flow, error = %e, "could not mark a watched flow's DSCP");
            }
        }
    }

    fn set(&mut self, flow: u64, w: Watch, r: FlowRate, batch: &mut Vec<String>) {
        match self.minors.get(&flow) {
            Some(&(minor, w, last)) => {
                let same = last.is_some_and(|l| {
                    (l.rate_bps, l.class, l.paused) == (r.rate_bps, r.class, r.paused)
                });
                if !same {
                    batch.push(self.class_line("change", minor, &r));
                    self.mark(flow, &w, &r);
                    self.minors.insert(flow, (minor, w, Some(r)));
                }
            }
            None => {
                let Some(minor) = self.free.pop() else {
                    warn!(flow, "no class left for a watched flow (at most 1,792 at once); it goes unscheduled");
                    return;
                };
                batch.push(self.class_line("add", minor, &r));
                batch.push(format!(
                    "filter add dev {} parent 1: protocol ip prio 1 handle 800::{minor:x} u32 \
                     match ip protocol 6 0xff match ip sport {} 0xffff match ip dst {}/32 \
                     match ip dport {} 0xffff flowid 1:{minor:x}",
                    self.dev, w.src_port, w.dst, w.dst_port
                ));
                self.mark(flow, &w, &r);
                self.minors.insert(flow, (minor, w, Some(r)));
                debug!(flow, minor, "watched flow classified");
            }
        }
    }

    fn remove(&mut self, flow: u64, batch: &mut Vec<String>) {
        if let Some((minor, w, _)) = self.minors.remove(&flow) {
            if let Some(m) = &self.marker {
                m.remove(&w);
            }
            batch.push(format!(
                "filter del dev {} parent 1: protocol ip prio 1 handle 800::{minor:x} u32",
                self.dev
            ));
            batch.push(format!("class del dev {} classid 1:{minor:x}", self.dev));
            self.free.push(minor);
        }
        self.counts.lock().expect("counts lock").bytes.remove(&flow);
    }

    fn read(&mut self) {
        if self.minors.is_empty() {
            return;
        }
        let classes = match self.sock.class_counters(self.ifindex) {
            Ok(c) => c,
            Err(e) => {
                warn!(dev = %self.dev, error = %e, "could not read the class counters");
                return;
            }
        };
        let mut counts = self.counts.lock().expect("counts lock");
        for (&flow, &(minor, _, _)) in &self.minors {
            if let Some(&(bytes, packets)) = classes.get(&(0x1_0000 | minor)) {
                let payload = bytes.saturating_sub(packets * HEADER_BYTES);
                let e = counts.bytes.entry(flow).or_default();
                *e = (*e).max(payload);
            }
        }
    }
}

/// The priority queue (0..7, 0 highest) of a flow scheduled `r`: its
/// class, at most 6, while it may send, and 7 while it is paused. The
/// classes of a scheduler need not be ranks (`fifo-lm`'s is its run's task
/// id), and a flow that waits must be below every flow that is served, so
/// that what it borrows never slows them, at its sender (HTB `prio`) or at
/// a switch (its DSCP).
fn queue_of(r: &FlowRate) -> u32 {
    if r.paused {
        7
    } else {
        r.class.min(6)
    }
}

fn tc_batch(lines: &[String]) -> io::Result<()> {
    let mut child = Proc::new("tc")
        .args(["-force", "-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        for l in lines {
            writeln!(stdin, "{l}")?;
        }
    }
    let out = child.wait_with_output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "`tc -batch` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

fn ifindex(dev: &str) -> Result<i32, String> {
    let name =
        std::ffi::CString::new(dev).map_err(|_| format!("device {dev:?}: a NUL in its name"))?;
    // SAFETY: `name` is a valid NUL-terminated string for the call.
    let i = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if i == 0 {
        Err(format!("device {dev:?}: {}", io::Error::last_os_error()))
    } else {
        Ok(i as i32)
    }
}

/// A NETLINK_ROUTE socket: dumps of a device's traffic classes, and
/// requests answered with an acknowledgement.
struct Netlink {
    fd: std::os::fd::OwnedFd,
    seq: u32,
}

const RTM_GETTCLASS: u16 = 42;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const TCA_STATS2: u16 = 7;
const TCA_STATS_BASIC: u16 = 1;
const NLMSG_HDR: usize = 16;
const TCMSG: usize = 20;

impl Netlink {
    fn open() -> io::Result<Netlink> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain socket(2); the descriptor is owned from here on.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is not owned elsewhere.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        Ok(Netlink { fd, seq: 0 })
    }

    /// Sends one request (`kind`, `flags`, the message `body` after the
    /// netlink header) and waits for its acknowledgement.
    fn request_ack(&mut self, kind: u16, flags: u16, body: &[u8]) -> io::Result<()> {
        self.exchange(kind, flags, false, body, |_| {})
    }

    /// Sends one request (`kind`, `flags`, the message `body` after the
    /// netlink header) and reads its answers: `each(message body)` for
    /// every message of this request that is neither an error nor the end,
    /// until the end of a `dump` (`NLMSG_DONE`) or, for a request that is
    /// not one, its acknowledgement (an `NLMSG_ERROR` of code 0); an error
    /// of another code is returned. Whether it is a dump is said, not read
    /// from `flags`: a dump's bits (`NLM_F_ROOT | NLM_F_MATCH`) are also
    /// `NLM_F_REPLACE` and `NLM_F_EXCL` of a request that makes something.
    fn exchange(
        &mut self,
        kind: u16,
        flags: u16,
        dump: bool,
        body: &[u8],
        mut each: impl FnMut(&[u8]),
    ) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        self.seq = self.seq.wrapping_add(1);
        let mut req = Vec::with_capacity(NLMSG_HDR + body.len());
        req.extend_from_slice(&((NLMSG_HDR + body.len()) as u32).to_ne_bytes());
        req.extend_from_slice(&kind.to_ne_bytes());
        req.extend_from_slice(&flags.to_ne_bytes());
        req.extend_from_slice(&self.seq.to_ne_bytes());
        req.extend_from_slice(&0u32.to_ne_bytes());
        req.extend_from_slice(body);
        // SAFETY: the buffer is valid for its length; the kernel reads it.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                req.as_ptr() as *const libc::c_void,
                req.len(),
                0,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: the buffer is valid for writes of its length.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    0,
                )
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut msg = &buf[..n as usize];
            while msg.len() >= NLMSG_HDR {
                let len = u32::from_ne_bytes(msg[0..4].try_into().expect("4")) as usize;
                let kind = u16::from_ne_bytes(msg[4..6].try_into().expect("2"));
                let seq = u32::from_ne_bytes(msg[8..12].try_into().expect("4"));
                if len < NLMSG_HDR || len > msg.len() {
                    return Err(io::Error::other("a truncated netlink message"));
                }
                if seq == self.seq {
                    match kind {
                        NLMSG_DONE => return Ok(()),
                        NLMSG_ERROR if len >= NLMSG_HDR + 4 => {
                            let code = i32::from_ne_bytes(msg[16..20].try_into().expect("4"));
                            if code != 0 {
                                return Err(io::Error::from_raw_os_error(-code));
                            }
                            if !dump {
                                return Ok(());
                            }
                        }
                        _ => each(&msg[NLMSG_HDR..len]),
                    }
                }
                let step = (len + 3) & !3;
                msg = &msg[step.min(msg.len())..];
            }
        }
    }

    /// Every class of device `ifindex`: class id -> (bytes, packets).
    fn class_counters(&mut self, ifindex: i32) -> io::Result<HashMap<u32, (u64, u64)>> {
        let mut out = HashMap::new();
        self.dump_classes(ifindex, |handle, attrs| {
            if let Some(c) = basic_stats(attrs) {
                out.insert(handle, c);
            }
        })?;
        Ok(out)
    }

    /// The rate of HTB class `classid` of device `ifindex`, bits/s (`None`:
    /// no such HTB class).
    fn htb_rate(&mut self, ifindex: i32, classid: u32) -> io::Result<Option<f64>> {
        let mut out = None;
        self.dump_classes(ifindex, |handle, attrs| {
            if handle == classid {
                out = htb_rate_bps(attrs);
            }
        })?;
        Ok(out)
    }

    /// Calls `each(class id, its attributes)` for every class of device
    /// `ifindex` (one `RTM_GETTCLASS` dump).
    fn dump_classes(&mut self, ifindex: i32, mut each: impl FnMut(u32, &[u8])) -> io::Result<()> {
        // struct tcmsg: family, pad, pad, ifindex, handle, parent, info
        let mut tcmsg = [0u8; TCMSG];
        tcmsg[4..8].copy_from_slice(&ifindex.to_ne_bytes());
        self.exchange(
            RTM_GETTCLASS,
            NLM_F_REQUEST | NLM_F_DUMP,
            true,
            &tcmsg,
            |body| {
                if body.len() >= TCMSG {
                    let handle = u32::from_ne_bytes(body[8..12].try_into().expect("4"));
                    each(handle, &body[TCMSG..]);
                }
            },
        )
    }
}

const TCA_OPTIONS: u16 = 2;
const TCA_HTB_PARMS: u16 = 1;
const TCA_HTB_RATE64: u16 = 6;

/// The attributes of type `kind` (the first) among `attrs`.
fn find_attr(mut attrs: &[u8], kind: u16) -> Option<&[u8]> {
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes(attrs[0..2].try_into().ok()?) as usize;
        let k = u16::from_ne_bytes(attrs[2..4].try_into().ok()?) & 0x3fff;
        if len < 4 || len > attrs.len() {
            return None;
        }
        if k == kind {
            return Some(&attrs[4..len]);
        }
        attrs = &attrs[((len + 3) & !3).min(attrs.len())..];
    }
    None
}

/// An HTB class's rate in bits/s from its TCA_OPTIONS: TCA_HTB_RATE64
/// (bytes/s) where given, else the `tc_htb_opt`'s 32-bit rate (bytes/s,
/// bytes 8..12 of its `tc_ratespec`).
fn htb_rate_bps(attrs: &[u8]) -> Option<f64> {
    let opts = find_attr(attrs, TCA_OPTIONS)?;
    if let Some(r64) = find_attr(opts, TCA_HTB_RATE64) {
        let bytes = u64::from_ne_bytes(r64.get(0..8)?.try_into().ok()?);
        return Some(bytes as f64 * 8.0);
    }
    let parms = find_attr(opts, TCA_HTB_PARMS)?;
    let bytes = u32::from_ne_bytes(parms.get(8..12)?.try_into().ok()?);
    Some(f64::from(bytes) * 8.0)
}

/// The (bytes, packets) of TCA_STATS2/TCA_STATS_BASIC among `attrs`.
fn basic_stats(mut attrs: &[u8]) -> Option<(u64, u64)> {
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes(attrs[0..2].try_into().ok()?) as usize;
        let kind = u16::from_ne_bytes(attrs[2..4].try_into().ok()?) & 0x3fff;
        if len < 4 || len > attrs.len() {
            return None;
        }
        if kind == TCA_STATS2 {
            let mut inner = &attrs[4..len];
            while inner.len() >= 4 {
                let l = u16::from_ne_bytes(inner[0..2].try_into().ok()?) as usize;
                let k = u16::from_ne_bytes(inner[2..4].try_into().ok()?) & 0x3fff;
                if l < 4 || l > inner.len() {
                    return None;
                }
                if k == TCA_STATS_BASIC && l >= 4 + 12 {
                    let bytes = u64::from_ne_bytes(inner[4..12].try_into().ok()?);
                    let packets = u32::from_ne_bytes(inner[12..16].try_into().ok()?);
                    return Some((bytes, packets as u64));
                }
                inner = &inner[((l + 3) & !3).min(inner.len())..];
            }
        }
        attrs = &attrs[((len + 3) & !3).min(attrs.len())..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_stats_are_found_inside_stats2() {
        let mut a = vec![];
        // TCA_KIND "htb"
        a.extend_from_slice(&8u16.to_ne_bytes());
        a.extend_from_slice(&1u16.to_ne_bytes());
        a.extend_from_slice(b"htb\0");
        // TCA_STATS2 { TCA_STATS_BASIC { bytes 123456, packets 78 } }
        let mut basic = vec![];
        basic.extend_from_slice(&20u16.to_ne_bytes());
        basic.extend_from_slice(&TCA_STATS_BASIC.to_ne_bytes());
        basic.extend_from_slice(&123_456u64.to_ne_bytes());
        basic.extend_from_slice(&78u32.to_ne_bytes());
        basic.extend_from_slice(&[0u8; 4]);
        a.extend_from_slice(&((4 + basic.len()) as u16).to_ne_bytes());
        a.extend_from_slice(&(TCA_STATS2 | 0x8000).to_ne_bytes());
        a.extend_from_slice(&basic);
        assert_eq!(basic_stats(&a), Some((123_456, 78)));
        assert_eq!(basic_stats(&a[..10]), None);
    }

    #[test]
    fn an_htb_rate_is_read_from_its_options() {
        // TCA_OPTIONS { TCA_HTB_PARMS { rate { ..., rate 12,500,000 B/s }, ... } }
        let mut parms = vec![0u8; 44];
        parms[8..12].copy_from_slice(&12_500_000u32.to_ne_bytes());
        let mut opts = vec![];
        opts.extend_from_slice(&((4 + parms.len()) as u16).to_ne_bytes());
        opts.extend_from_slice(&TCA_HTB_PARMS.to_ne_bytes());
        opts.extend_from_slice(&parms);
        let mut a = vec![];
        a.extend_from_slice(&((4 + opts.len()) as u16).to_ne_bytes());
        a.extend_from_slice(&(TCA_OPTIONS | 0x8000).to_ne_bytes());
        a.extend_from_slice(&opts);
        assert_eq!(htb_rate_bps(&a), Some(100e6));
        assert_eq!(htb_rate_bps(&a[..6]), None);
    }
}
