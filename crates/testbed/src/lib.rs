//! The testbed's data plane: what a replay worker does with sockets and time, in Rust and
//! without Python, so that the binding (`coflowkit._core`, crates/py) only converts values and
//! releases the GIL.
//!
//! A replay (python/coflowkit/testbed/replay) runs one worker per host of the emulated cluster;
//! the worker's Python event loop plans, and these parts move the bytes and keep the clock:
//!
//! - [`replay_wire`]: what both ends of a replay's connection agree on (the flow header, the
//!   receiver's answer, the queue-0 mark, the wall clock);
//! - [`replay_sender`]: a host's flows sent at their start instants through the runtime's
//!   [`coflowkit_runtime::client::CoflowWriter`], one thread per flow;
//! - [`replay_receiver`]: a host's data port served by one epoll loop, each flow checked by its
//!   CRC-32 and answered;
//! - [`host_policy`]: one host's policy ([`coflowkit_sched::host`]) as the worker calls it, with
//!   its effects as the worker's wire numbers;
//! - [`host_clock`]: the policy's native clock (a `timerfd` thread), the D-CAS control datagrams it
//!   reads and sends, and the marks it sets on the flows' sockets;
//! - [`fd`]: sockets the caller owns, reached by descriptor (a `CoflowWriter` over a Python
//!   socket, a listening socket handed over by its descriptor).
//!
//! Linux only, as the testbed is (`timerfd`, `eventfd`, `SO_MAX_PACING_RATE`, `TCP_CONGESTION`).

pub mod fd;
pub mod host_clock;
pub mod host_policy;
pub mod replay_receiver;
pub mod replay_sender;
pub mod replay_wire;
