//! Queue kinds: what a port does with the packets that wait for its link.
//! A kind decides what it admits, marks and drops, and which packet goes
//! next; the port around it ([`crate::port::Port`]) serializes onto the
//! link and counts. Each kind is one file:
//!
//! * [`strict`]: up to 8 strict-priority FIFO queues with a drop-tail
//!   buffer and ECN marking at an instantaneous threshold (DCTCP §3.1),
//!   with the options the knobs give it (a buffer per queue, per-queue K,
//!   guaranteed rates per class, one FIFO for a NIC, TAFE's order of flows
//!   inside a class);
//! * [`pfabric`]: pFabric's one priority queue with priority dropping;
//! * [`shared`]: a switch's buffer shared by its ports with dynamic
//!   thresholds, an admission check in front of any kind.
//!
//! The switch mechanisms of the seed systems that read or stamp packets as
//! they pass, and keep per-port state of their own, stay beside the
//! queue: RCP's rate (`crate::rcp`), Baraat's classes (`crate::spc`) and
//! TAFE's marking by task bytes (`crate::tafe`); the engine calls them on
//! a packet's arrival at a port (`engine/rcp.rs`, `engine/baraat.rs`,
//! `engine/tafe.rs`).
//!
//! Adding a queue kind: a file here with a type that implements
//! [`QueueDisc`] (and its knobs, a `KNOBS` table listed in `crate::knobs`),
//! a `pub mod` line below, and the place in `engine/build.rs` that gives
//! ports their kind from the knobs (as `Box<dyn QueueDisc>`, which a port
//! holds as `crate::port::Queue::Other`; a kind on the hot path of many
//! runs gets a variant of its own there, called without the indirection).

pub mod pfabric;
pub mod shared;
pub mod strict;

use crate::packet::Packet;
use std::fmt;

/// The queue discipline of every switch port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// 8 strict-priority FIFO queues, drop-tail, ECN at K ([`crate::port`]).
    Strict,
    /// pFabric's priority queue (Alizadeh et al. 2013, §4.1): serve the
    /// flow of the most urgent packet, earliest packet first; on overflow
    /// drop the least urgent packet ([`crate::queue::pfabric`]).
    Pfabric,
}

impl QueueKind {
    /// Its name in options.
    pub fn name(self) -> &'static str {
        match self {
            QueueKind::Strict => "strict",
            QueueKind::Pfabric => "pfabric",
        }
    }
    /// Every discipline, in listing order.
    pub const ALL: [QueueKind; 2] = [QueueKind::Strict, QueueKind::Pfabric];
}

/// What happened to a packet offered to a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Queued as it came.
    Queued,
    /// Queued with its CE bit set.
    Marked,
    /// Dropped: the buffer is full.
    Dropped,
}

/// A port's queue discipline.
///
/// Correctness properties, for every kind: [`QueueDisc::bytes`] is the sum
/// of the wire bytes of the packets it holds after every admit and pop; a
/// packet it admits leaves by [`QueueDisc::pop`] or into `evicted`,
/// exactly once.
pub trait QueueDisc: fmt::Debug {
    /// Offers `p`: queued (as it came or marked CE) or dropped; packets
    /// already queued that it drops to make room go to `evicted`.
    fn admit(&mut self, p: Packet, evicted: &mut Vec<Packet>) -> Admit;

    /// The next packet to send at `now` (ps), taken out.
    fn pop(&mut self, now: u64) -> Option<Packet>;

    /// Bytes queued.
    fn bytes(&self) -> u64;

    /// Whether a data packet of `flow` carrying byte `byte` waits here: a
    /// scan, the slow reference for the engine's index of queued data.
    fn holds(&self, flow: u32, byte: u64) -> bool;

    /// Whether it keeps each flow's packets of a class in order and never
    /// drops one it queued, so that the engine's index of each flow's
    /// queued data (`engine/queued.rs`) can follow it.
    fn indexed(&self) -> bool {
        true
    }

    /// Whether its buffer has a limit of its own (a switch port's; a
    /// host's NIC queue has none).
    fn bounded(&self) -> bool {
        true
    }

    /// Serves the flows of a class first come, first served by `order_of`
    /// (TAFE; see [`strict::StrictQueues::set_task_fifo`]); a kind without
    /// classes ignores it. An empty queue only.
    fn serve_by_order(&mut self, _order_of: fn(&Packet) -> u32) {}
}
