//! Sockets the caller owns, reached by their descriptor: a stream written with
//! `send(MSG_NOSIGNAL)` under a [`CoflowWriter`] (the binding's `CoflowWriter` over a Python
//! socket), a wait for room in its send buffer, and a listening socket taken over by a duplicate
//! of its descriptor (a replay worker's data port, served by [`crate::replay_receiver`]).
//!
//! Why by descriptor: the Python side keeps its socket objects (their timeouts, their closing);
//! the Rust side writes and reads the same kernel socket without taking it over. Correctness
//! property: the caller keeps the socket open while a [`FdStream`] of it is in use (the binding
//! holds the Python socket object for the writer's life).

use coflowkit_runtime::client::CoflowWriter;
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::time::{Duration, Instant};

/// A socket the caller owns, written through its descriptor. Sends with `MSG_NOSIGNAL`: a peer
/// that closed gives `BrokenPipe`, not a SIGPIPE.
#[derive(Debug)]
pub struct FdStream(pub RawFd);

impl Write for FdStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes for the call; the
            // kernel only reads it.
            let n = unsafe {
                libc::send(
                    self.0,
                    buf.as_ptr().cast::<libc::c_void>(),
                    buf.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsRawFd for FdStream {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// Waits until `fd` can take more bytes, at most `timeout` (`None`: no
/// limit). `Ok(false)` when the time ran out.
pub fn wait_writable(fd: RawFd, timeout: Option<Duration>) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as libc::c_int);
    loop {
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc >= 0 {
            return Ok(rc > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// One write through the writer: `Some(n)`, or `None` when the socket
/// could not take bytes before `deadline`.
pub fn write_some(
    w: &mut CoflowWriter<FdStream>,
    fd: RawFd,
    data: &[u8],
    deadline: Option<Instant>,
    nonblocking: bool,
) -> io::Result<Option<usize>> {
    loop {
        match w.write(data) {
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && !nonblocking => {
                let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                if !wait_writable(fd, left)? {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// A listening TCP socket of our own over a duplicate of `fd`, which the caller keeps open for
/// this call (and may close after it).
///
/// # Safety
/// `fd` must be an open descriptor of a listening TCP socket for the duration of the call.
pub unsafe fn listener_from_fd(fd: RawFd) -> io::Result<TcpListener> {
    // SAFETY: the caller's socket stays open for this call; we only dup it.
    let own = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()?;
    // SAFETY: `own` is a fresh descriptor of a listening TCP socket, ours alone.
    Ok(unsafe { TcpListener::from_raw_fd(own.into_raw_fd()) })
}
