//! A packet as the engine moves it: a plain `Copy` struct that ports queue
//! and links carry, with no heap data of its own (a SACK option lives in
//! the engine's store and the packet holds its slot). Below the ports, the
//! queue kinds and the end points, which all read it. A strict-priority
//! queue keeps it in 32 bytes instead of 48 ([`Packed`]).

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

/// The kinds in the order of their discriminants ([`Packed`]'s 3 bits).
const KINDS: [Kind; 7] = [
    Kind::Data,
    Kind::Ack,
    Kind::Syn,
    Kind::SynAck,
    Kind::Control,
    Kind::Request,
    Kind::Echo,
];

/// A packet as a queue keeps it: the same fields in 32 bytes, so that a
/// standing queue of a large fabric, which is cold in cache by the time
/// its packets leave, costs half a cache line per packet instead of the
/// 48-byte [`Packet`]'s three quarters (one in two of which straddles two
/// lines). The sequence number and the timestamp take 48 bits each
/// (2^48 bytes, 2^48 ps = 281 s), the wire size 16, the kind, class, hop
/// and flags 15 bits beside the sequence number; there is no room for
/// RCP's RTT field. A packet that does not fit (an RCP packet with an RTT,
/// a sequence number or instant beyond 48 bits, ...) is kept whole by a
/// [`Packer`] and its `Packed` only names where ([`Packed::wide`]): the
/// round trip is exact for every packet. On the 1,024-host fat-tree
/// (16,000 web-search flows, DCTCP) a run takes about 5% less time than
/// with whole packets queued, the same completion times to the
/// picosecond (docs/benchmarks.md row 25).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packed {
    /// The sequence number (48 bits) and the other fields' bits above it,
    /// or [`Packed::WIDE`].
    seq_meta: u64,
    /// The timestamp (48 bits) and the wire size above it.
    ts_wire: u64,
    /// The flow, or a wide packet's slot.
    flow: u32,
    len: u32,
    prio: u32,
    /// RCP's rate field's bits.
    rate: u32,
}

impl Packed {
    /// The mark of a packet kept whole, its slot in `flow`.
    const WIDE: u64 = u64::MAX;
    const LOW: u64 = (1 << 48) - 1;

    /// `p` in 32 bytes, or `None` when it does not fit.
    #[inline]
    pub(crate) fn new(p: &Packet) -> Option<Packed> {
        if (p.seq | p.ts) > Self::LOW
            || p.wire > u16::MAX as u32
            || p.hop >= 32
            || p.class >= 8
            || p.rtt_ns != 0
        {
            return None;
        }
        let meta = p.kind as u64
            | (p.class as u64) << 3
            | (p.hop as u64) << 6
            | (p.ect as u64) << 11
            | (p.ce as u64) << 12
            | (p.ece as u64) << 13
            | (p.spc as u64) << 14;
        Some(Packed {
            seq_meta: p.seq | meta << 48,
            ts_wire: p.ts | (p.wire as u64) << 48,
            flow: p.flow,
            len: p.len,
            prio: p.prio,
            rate: p.rate.to_bits(),
        })
    }

    /// The mark of a packet kept whole in slot `slot`.
    pub(crate) fn wide(slot: u32) -> Packed {
        Packed {
            seq_meta: Self::WIDE,
            ts_wire: 0,
            flow: slot,
            len: 0,
            prio: 0,
            rate: 0,
        }
    }

    /// The slot of a packet kept whole, `None` for one packed here.
    #[inline]
    pub(crate) fn slot(&self) -> Option<u32> {
        (self.seq_meta == Self::WIDE).then_some(self.flow)
    }

    /// The packet packed here (not a wide one's mark).
    #[inline]
    pub(crate) fn unpack(&self) -> Packet {
        debug_assert!(self.slot().is_none(), "a wide packet's mark");
        let meta = self.seq_meta >> 48;
        Packet {
            flow: self.flow,
            seq: self.seq_meta & Self::LOW,
            len: self.len,
            wire: (self.ts_wire >> 48) as u32,
            kind: KINDS[(meta & 7) as usize],
            hop: (meta >> 6 & 31) as u8,
            class: (meta >> 3 & 7) as u8,
            ect: meta >> 11 & 1 != 0,
            ce: meta >> 12 & 1 != 0,
            ece: meta >> 13 & 1 != 0,
            ts: self.ts_wire & Self::LOW,
            rate: f32::from_bits(self.rate),
            rtt_ns: 0,
            prio: self.prio,
            spc: meta >> 14 & 1 != 0,
        }
    }
}

/// Packs packets ([`Packed`]) and keeps whole those that do not fit,
/// until they are taken back out.
#[derive(Debug, Default)]
pub(crate) struct Packer {
    /// The packets kept whole.
    wide: crate::slots::Slots<Packet>,
}

impl Packer {
    /// `p` packed, or kept here and named.
    #[inline]
    pub(crate) fn pack(&mut self, p: Packet) -> Packed {
        Packed::new(&p).unwrap_or_else(|| Packed::wide(self.wide.insert(p)))
    }

    /// The packet `k` stands for, still kept.
    #[inline]
    pub(crate) fn peek(&self, k: &Packed) -> Packet {
        match k.slot() {
            Some(s) => *self.wide.get(s),
            None => k.unpack(),
        }
    }

    /// The packet `k` stands for, its slot freed.
    #[inline]
    pub(crate) fn take(&mut self, k: &Packed) -> Packet {
        match k.slot() {
            Some(s) => self.wide.remove(s),
            None => k.unpack(),
        }
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

    use proptest::prelude::*;

    /// Any packet: each field over its whole range, with weight on the
    /// edges of what packs (48-bit sequence numbers and instants, 16-bit
    /// wire sizes, hops below 32, classes below 8, no RCP RTT).
    fn any_packet() -> impl Strategy<Value = Packet> {
        let wide64 = || {
            prop_oneof![
                0u64..1 << 48,
                Just((1 << 48) - 1),
                Just(1 << 48),
                any::<u64>()
            ]
        };
        (
            (
                any::<u32>(),
                wide64(),
                any::<u32>(),
                prop_oneof![0u32..=65_535, any::<u32>()],
            ),
            (
                0..KINDS.len(),
                prop_oneof![0u8..32, any::<u8>()],
                prop_oneof![0u8..8, any::<u8>()],
            ),
            (any::<[bool; 4]>(), wide64()),
            (
                prop_oneof![Just(f32::INFINITY), any::<f32>()],
                prop_oneof![Just(0u32), any::<u32>()],
                any::<u32>(),
            ),
        )
            .prop_map(
                |(
                    (flow, seq, len, wire),
                    (kind, hop, class),
                    (flags, ts),
                    (rate, rtt_ns, prio),
                )| Packet {
                    flow,
                    seq,
                    len,
                    wire,
                    kind: KINDS[kind],
                    hop,
                    class,
                    ect: flags[0],
                    ce: flags[1],
                    ece: flags[2],
                    ts,
                    rate,
                    rtt_ns,
                    prio,
                    spc: flags[3],
                },
            )
    }

    /// Every field, the rate by its bits.
    fn fields(p: &Packet) -> String {
        format!("{p:?} {}", p.rate.to_bits())
    }

    #[test]
    fn a_packed_packet_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Packed>(), 32);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Packed and taken back, in any order, each packet comes back
        /// field for field, those that fit and those kept whole.
        #[test]
        fn packing_gives_back_every_packet(ps in proptest::collection::vec(any_packet(), 1..40)) {
            let mut packer = Packer::default();
            let keys: Vec<Packed> = ps.iter().map(|p| packer.pack(*p)).collect();
            for (p, k) in ps.iter().zip(&keys).rev() {
                prop_assert_eq!(fields(&packer.peek(k)), fields(p));
                prop_assert_eq!(fields(&packer.take(k)), fields(p));
                prop_assert_eq!(k.slot().is_none(), Packed::new(p).is_some());
            }
            // Freed slots are reused.
            let again: Vec<Packed> = ps.iter().map(|p| packer.pack(*p)).collect();
            for (p, k) in ps.iter().zip(&again) {
                prop_assert_eq!(fields(&packer.take(k)), fields(p));
            }
            prop_assert!(packer.wide.made() <= ps.len());
        }
    }
}
