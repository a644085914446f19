//! The writer half of the client: [`CoflowWriter`] wraps an application's TCP stream and sends on
//! it as its flow's schedule says (counting what the kernel takes, pacing and marking the socket,
//! pausing, metering its writes to the rate with `Meter`), and [`FlowHandle`] tells afterwards
//! what the agent made of the flow. The client's connection to the agent ([`super::AgentClient`])
//! opens and closes the flows; the module doc of [`super`] says why each rule is there.

use super::{ClientError, FlowShared, Inner, Waiter, OPENED};
use crate::enforce;
use crate::proto::{self, client_request::Kind};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::warn;

/// Largest piece a writer hands the kernel at once, so that a pause or a
/// new rate is noticed within this many bytes.
const CHUNK: usize = 64 << 10;
/// The send buffer writers ask for (the kernel doubles it).
const SEND_BUFFER: usize = 64 << 10;
/// A writer with a rate is never more than this much of its rate, or
/// [`METER_MIN`], ahead of it ([`Meter`]).
const METER_AHEAD: Duration = crate::DEFAULT_DELTA;
/// The least a metered writer hands the kernel at once (unless it has less
/// to write): one 16 KiB write; fewer, larger writes wake the writer less.
const METER_MIN: usize = 16 << 10;
/// The longest a writer waits without looking at its schedule again.
const SCHEDULE_POLL: Duration = Duration::from_millis(50);

/// What a writer's agent made of its flow, still readable after the
/// writer closed ([`CoflowWriter::handle`]).
#[derive(Debug, Clone)]
pub struct FlowHandle(Arc<FlowShared>);

impl FlowHandle {
    /// Whether the agent took the flow (its open was answered with an id),
    /// so that the coordinator counts its bytes; false while an open sent
    /// without waiting is unanswered, and for good if it was refused.
    pub fn taken(&self) -> bool {
        self.0.state.load(Ordering::SeqCst) == OPENED
    }
}

#[derive(Debug)]
struct WriterFlow {
    shared: Arc<FlowShared>,
    inner: Arc<Inner>,
    /// Its close is sent without waiting for the answer.
    at_once: bool,
}

/// A coflow-aware writer; see the module doc. Dropping it (or
/// [`CoflowWriter::finish`]) closes its flow.
#[derive(Debug)]
pub struct CoflowWriter<S: Write + AsRawFd> {
    stream: S,
    flow: Option<WriterFlow>,
    /// Bytes the kernel took, counted whether or not an agent schedules.
    written: u64,
    /// What the flow's rate lets it write.
    meter: Meter,
}

/// A token bucket at a writer's rate: the writer hands the kernel at most
/// [`METER_AHEAD`] of its rate (or [`METER_MIN`], if more) beyond what the
/// rate has let through, and an empty writer waits for half of that (or
/// [`METER_MIN`]). So the bytes it counts are what left but for that much:
/// a coordinator that rates flows by what they have left to send (Varys)
/// sees it as it is, where a full send buffer (128 KiB) counted as sent
/// made a flow look up to 128 KiB nearer its end and be given less. Under
/// [`enforce::KERNEL_PACING_FLOOR_BPS`] the kernel paces at the floor and
/// the bucket alone holds the flow to its rate.
#[derive(Debug)]
pub(super) struct Meter {
    /// Bytes the rate has let through and the writer has not written.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at: Option<Instant>,
}

impl Meter {
    pub(super) fn new() -> Meter {
        Meter {
            tokens: 0.0,
            at: None,
        }
    }

    /// How much of `want` (> 0) bytes may be written at `now` at
    /// `rate_bps` (`None`: all of it), or how long until enough may.
    pub(super) fn allows(
        &mut self,
        rate_bps: Option<f64>,
        want: usize,
        now: Instant,
    ) -> Result<usize, Duration> {
        let Some(rate) = rate_bps.filter(|r| r.is_finite() && *r > 0.0) else {
            self.at = None;
            return Ok(want);
        };
        let per_s = rate / 8.0;
        let cap = (per_s * METER_AHEAD.as_secs_f64()).max(METER_MIN as f64);
        // The first write at a rate may take a full bucket.
        let since = self
            .at
            .map_or(f64::INFINITY, |t| now.duration_since(t).as_secs_f64());
        self.tokens = (self.tokens + per_s * since).min(cap);
        self.at = Some(now);
        // Waits for half the bucket (or METER_MIN) rather than for any byte:
        // fewer wake-ups, and the kernel still holds the rest meanwhile.
        let need = (want as f64).min((cap / 2.0).max(METER_MIN as f64));
        if self.tokens >= need {
            Ok((self.tokens as usize).clamp(1, want))
        } else {
            Err(Duration::from_secs_f64((need - self.tokens) / per_s))
        }
    }

    /// The kernel took `n` bytes.
    pub(super) fn took(&mut self, n: usize) {
        if self.at.is_some() {
            self.tokens = (self.tokens - n as f64).max(0.0);
        }
    }
}

impl<S: Write + AsRawFd> CoflowWriter<S> {
    /// A writer no agent schedules: plain TCP.
    pub(super) fn plain(stream: S) -> CoflowWriter<S> {
        CoflowWriter {
            stream,
            flow: None,
            written: 0,
            meter: Meter::new(),
        }
    }

    /// A writer of flow `shared`, with a small send buffer (see the module
    /// doc).
    pub(super) fn scheduled(
        stream: S,
        shared: Arc<FlowShared>,
        inner: Arc<Inner>,
        at_once: bool,
    ) -> CoflowWriter<S> {
        let mut w = CoflowWriter::plain(stream);
        if let Err(e) = enforce::set_send_buffer(w.stream.as_raw_fd(), SEND_BUFFER) {
            warn!(error = %e, "could not set the send buffer");
        }
        // Its schedule is applied at its first write (then as it changes).
        shared.socket.lock().expect("socket lock").fd = Some(w.stream.as_raw_fd());
        w.flow = Some(WriterFlow {
            shared,
            inner,
            at_once,
        });
        w
    }

    /// The writer's flow as its agent sees it, if an agent was reached.
    pub fn handle(&self) -> Option<FlowHandle> {
        self.flow.as_ref().map(|f| FlowHandle(f.shared.clone()))
    }

    /// Bytes written so far (scheduled or not).
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The writer's current rate (bits/s; `None`: unthrottled) and class.
    pub fn schedule(&self) -> (Option<f64>, u32) {
        match &self.flow {
            Some(f) => {
                let s = f.shared.sched.lock().expect("flow lock");
                (s.rate_bps, s.class)
            }
            None => (None, 0),
        }
    }

    /// Whether an agent schedules this writer (a writer opened with
    /// [`AgentClient::writer_at_once`]: once the agent has answered).
    pub fn is_scheduled(&self) -> bool {
        self.flow.as_ref().is_some_and(|f| {
            f.shared.state.load(Ordering::SeqCst) == OPENED && !f.inner.lost.load(Ordering::Relaxed)
        })
    }

    /// Waits while the flow must (paused, or ahead of its rate), applies a
    /// changed schedule, and says how much of `want` bytes may be written
    /// now (at least one byte).
    fn obey(&mut self, want: usize) -> usize {
        let Some(f) = &self.flow else { return want };
        let meter = &mut self.meter;
        let mut s = f.shared.sched.lock().expect("flow lock");
        loop {
            let wait = if s.paused {
                SCHEDULE_POLL
            } else {
                match meter.allows(s.rate_bps, want, Instant::now()) {
                    Ok(n) => {
                        f.shared.apply(&s);
                        return n;
                    }
                    Err(wait) => wait.min(SCHEDULE_POLL),
                }
            };
            s = f.shared.changed.wait_timeout(s, wait).expect("flow lock").0;
        }
    }

    /// Flushes, closes the flow, and gives the stream back.
    pub fn finish(mut self) -> io::Result<S> {
        self.stream.flush()?;
        self.close();
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; the stream is moved
        // out exactly once.
        Ok(unsafe { std::ptr::read(&this.stream) })
    }

    fn close(&mut self) {
        if let Some(f) = self.flow.take() {
            // The coordinator counts bytes as the kernel takes them, so it
            // takes the flow for done once closed while up to a send buffer
            // still drains: at line rate, not at the flow's last (stale)
            // pacing rate, which could be a small share or a pause's floor.
            // No schedule applied to the socket from here on.
            let applied = {
                let mut a = f.shared.socket.lock().expect("socket lock");
                a.fd = None;
                a.version.is_some()
            };
            if applied {
                if let Err(e) = enforce::set_pacing_rate(self.stream.as_raw_fd(), None) {
                    warn!(error = %e, "could not unpace the socket");
                }
            }
            // Marked first, so that neither a report nor a reconnection
            // takes it for open; if the agent is unreachable it stays listed
            // and the close is passed on when an agent answers again.
            f.shared.closed.store(true, Ordering::SeqCst);
            // Not opened yet: listed when the open's answer comes, and
            // closed then by the reporter (it is marked closed). Refused
            // or failed: the agent has nothing to close.
            let id = f.shared.id.load(Ordering::SeqCst);
            if id == 0 || f.shared.state.load(Ordering::SeqCst) != OPENED {
                return;
            }
            let close = Kind::CloseFlow(proto::CloseFlowRequest {
                flow_id: id,
                bytes_sent: f.shared.bytes.load(Ordering::Relaxed),
            });
            if f.at_once {
                f.shared.close_sent.store(true, Ordering::SeqCst);
                f.inner.send(close, Waiter::Close(id));
                return;
            }
            let r = f.inner.call(close);
            if !matches!(r, Err(ClientError::Unreachable)) {
                f.inner.closed_at_agent(id);
            }
        }
    }
}

impl<S: Write + AsRawFd> Write for CoflowWriter<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let allowed = self.obey(buf.len().min(CHUNK));
        let n = self.stream.write(&buf[..allowed])?;
        self.meter.took(n);
        self.written += n as u64;
        if let Some(f) = &self.flow {
            f.shared.bytes.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

impl<S: Write + AsRawFd> Drop for CoflowWriter<S> {
    fn drop(&mut self) {
        self.close();
    }
}
