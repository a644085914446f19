//! A packet as the engine moves it: a plain `Copy` struct that ports queue
//! and links carry, with no heap data of its own (a SACK option lives in
//! the engine's store and the packet holds its slot). Below the ports, the
//! queue kinds and the end points, which all read it.

/// Number of strict-priority classes (a packet's class is below it);
/// class 0 is served first.
pub const N_QUEUES: usize = 8;

/// What a packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Payload bytes `seq..seq + len`.
    Data,
    /// A cumulative acknowledgement of every byte before `seq`.
    Ack,
    /// A connection request.
    Syn,
    /// Its answer.
    SynAck,
    /// A message between two hosts' policies (`crate::host`): `flow` is
    /// its channel, `seq` its slot in the engine's table of messages.
    Control,
    /// A flow's rate request to the switches on its path (Baraat's SPC
    /// header, `crate::spc`; the header is in the engine's slot for the
    /// flow, one request in flight per flow).
    Request,
    /// The request's header echoed by the receiver back to the sender.
    Echo,
}

/// One packet in flight or in a queue.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// The flow (index in the workload's flow order).
    pub flow: u32,
    /// Data: the first byte; ACK: the next byte expected.
    pub seq: u64,
    /// Payload bytes; an ACK, which has none, holds here the slot of its
    /// SACK blocks in the engine's store (from 1; 0 for none): the option
    /// costs SACK-less packets nothing ([`Packet::sack_slot`]).
    pub len: u32,
    /// Bytes on the wire.
    pub wire: u32,
    /// What it is.
    pub kind: Kind,
    /// The next link of its path to cross (index into the path).
    pub hop: u8,
    /// Its strict-priority class, 0 highest.
    pub class: u8,
    /// ECN-capable transport.
    pub ect: bool,
    /// Congestion experienced (marked by a queue).
    pub ce: bool,
    /// ECN echo, on ACKs.
    pub ece: bool,
    /// The sender's clock when it left (ps), echoed by the ACK (a
    /// timestamp option: RTT samples need no Karn rule).
    pub ts: u64,
    /// RCP's rate field Rp, bits/s: the least rate offered on the path so
    /// far (data, SYN), or the one echoed back (ACK, SYN-ACK); infinite
    /// when unset.
    pub rate: f32,
    /// RCP: the sender's RTT estimate, ns (0 before it has one).
    pub rtt_ns: u32,
    /// pFabric's priority (§3): the flow's unacknowledged bytes when it
    /// was sent (32 bits, saturating: the packet does not grow), 0 for
    /// ACKs and handshake packets; lower is more urgent.
    pub prio: u32,
    /// It carries its flow's Baraat SPC header (`crate::spc`): a data packet
    /// the flow's request, an ACK the switches' answer to it.
    pub spc: bool,
}

impl Packet {
    /// An ACK's SACK blocks' slot (`crate::sack::SackStore`), 0 for none
    /// and for every other kind.
    pub fn sack_slot(&self) -> u32 {
        if self.kind == Kind::Ack {
            self.len
        } else {
            0
        }
    }

    /// Whether it travels from the flow's receiver to its sender.
    pub fn reverse(&self) -> bool {
        matches!(self.kind, Kind::Ack | Kind::SynAck | Kind::Echo)
    }

    /// Whether a full buffer lets it in anyway: Baraat's requests and
    /// echoes (a few bytes each, one per flow per interval). A request lost
    /// part way would leave the ports behind it holding rates the sender
    /// can no longer return, since the header carries one previous demand
    /// for all of them; the paper's headers ride on data packets and say
    /// nothing of loss (`crate::spc`, "Our readings").
    pub fn lossless(&self) -> bool {
        matches!(self.kind, Kind::Request | Kind::Echo)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A data packet of `wire` bytes in class `class` (for other units'
    /// tests too).
    pub(crate) fn pkt(class: u8, wire: u32, ect: bool) -> Packet {
        Packet {
            flow: 0,
            seq: 0,
            len: wire - 40,
            wire,
            kind: Kind::Data,
            hop: 0,
            class,
            ect,
            ce: false,
            ece: false,
            ts: 0,
            rate: f32::INFINITY,
            rtt_ns: 0,
            prio: 0,
            spc: false,
        }
    }
}
