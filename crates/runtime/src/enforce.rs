//! Enforcement with the kernel's own tools, per socket:
//!
//! * rate: `SO_MAX_PACING_RATE` (bytes/s), the kernel's TCP pacing, which
//!   works without the fq qdisc (see ../shared/ENVIRONMENT.md), never below
//!   [`KERNEL_PACING_FLOOR_BPS`]; under it the writer meters its writes;
//! * priority: the class becomes a DSCP in `IP_TOS` (class 0 is CS7 down to
//!   class 7 and beyond as best effort, so strict-priority queues in
//!   switches or tc on an emulated fabric can act on it) and `SO_PRIORITY`
//!   (6 for class 0 down to 0: values above 6 need CAP_NET_ADMIN), which
//!   selects a local qdisc band;
//! * a small send buffer, so that bytes counted as written are close to
//!   bytes on the wire and a paused writer stops within a buffer's worth.

use std::io;
use std::os::fd::RawFd;

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: T) -> io::Result<()> {
    // SAFETY: `value` lives for the call and its size is passed with it; the
    // kernel only reads it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The lowest rate a writer's socket is paced at by the kernel, bits/s.
///
/// The kernel spaces each packet it sends by the packet's length over the
/// pacing rate when it sends it, and a new rate does not move a departure
/// already set: at a rate `r`, a packet of two full segments (the smallest
/// the kernel forms when it paces) holds the socket back for `2 MSS / r`
/// however the rate changes meanwhile. At 8 kbit/s that was 2.9 s per
/// packet, and a flow raised from there to megabits per second sent
/// nothing for seconds (measured on the testbed: `ss` showed sockets paced
/// at 8 kbit/s, last send 5-14 s earlier, 80-130 KB queued). At this
/// floor a packet holds the socket back at most 50 ms. A writer given less
/// meters its own writes to its rate ([`crate::client`]).
pub const KERNEL_PACING_FLOOR_BPS: f64 = 2.0 * 1448.0 * 8.0 / 0.05;

/// The rate the kernel paces a writer's socket at for a flow rate of
/// `bits_per_sec` (`None`: unlimited): the rate, or
/// [`KERNEL_PACING_FLOOR_BPS`] if it is lower.
pub fn kernel_pacing(bits_per_sec: Option<f64>) -> Option<f64> {
    bits_per_sec.map(|b| b.max(KERNEL_PACING_FLOOR_BPS))
}

/// Paces the socket to `bits_per_sec` (`None`: unlimited), never below
/// [`KERNEL_PACING_FLOOR_BPS`] ([`kernel_pacing`]; a rate of 0 is the
/// writer's pause, not the kernel's).
pub fn set_pacing_rate(fd: RawFd, bits_per_sec: Option<f64>) -> io::Result<()> {
    let bytes_per_sec: u64 = match kernel_pacing(bits_per_sec) {
        Some(b) if b.is_finite() => (b / 8.0) as u64,
        _ => u64::MAX,
    };
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_MAX_PACING_RATE,
        bytes_per_sec,
    )
}

/// The DSCP of a priority class: CS7 (56) for class 0, one class selector
/// lower per class, best effort (0) from class 7 on.
pub fn dscp_of_class(class: u32) -> u8 {
    (7u32.saturating_sub(class) * 8) as u8
}

/// Marks the socket with priority class `class` (0 highest): DSCP in
/// `IP_TOS` and `SO_PRIORITY` `6 - class` (0 from class 6 on).
pub fn set_class(fd: RawFd, class: u32) -> io::Result<()> {
    let tos = (dscp_of_class(class) as libc::c_int) << 2;
    // IPv4 sockets take IP_TOS; an IPv6 socket would need IPV6_TCLASS.
    let _ = setsockopt(fd, libc::IPPROTO_IP, libc::IP_TOS, tos);
    let prio = 6u32.saturating_sub(class) as libc::c_int;
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_PRIORITY, prio)
}

/// Sets the socket's send buffer (the kernel doubles it).
pub fn set_send_buffer(fd: RawFd, bytes: usize) -> io::Result<()> {
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, bytes as libc::c_int)
}
