//! A watched flow's priority class carried to the fabric: its packets'
//! DSCP, set in the kernel by a small eBPF classifier.
//!
//! The HTB class of a watched flow orders it against others only at its
//! sender's port; where the bottleneck is another port (three servers
//! answering one client: the client's downlink), the switch's queues see
//! only the packets' DSCP, and an unmodified server sends them all as best
//! effort. This kernel has no `pedit`, `skbedit` or `csum` action and no
//! iptables here, but it has eBPF and the `bpf` classifier: the marker
//! loads one program (`BPF_PROG_TYPE_SCHED_CLS`, built below instruction by
//! instruction, no compiler needed) and attaches it, direct-action, at the
//! device's `clsact` egress hook, which runs before the root qdisc. For each
//! IPv4 TCP packet it looks up (destination address, source port,
//! destination port) in a hash map; on a hit it rewrites the DS field's
//! six DSCP bits (keeping the two ECN bits) and patches the IP header
//! checksum (`bpf_l3_csum_replace`). A miss leaves the packet alone. The
//! agent changes a flow's mark with one map update (a syscall; no process).
//!
//! The map's key is the packet's own bytes: the destination address (4),
//! the source port (2) and the destination port (2), in network order; its
//! value the DS byte to set (DSCP << 2) in a `u32`.
//!
//! **TCP control packets go first.** A TCP packet that carries no payload
//! (SYN, SYN-ACK, a pure ACK, FIN, RST) gets queue 0's DSCP (CS7) and, as
//! its skb priority, the host's queue-0 HTB class (`1:10`, which HTB takes
//! before any filter, so a watched flow's own filter does not hold its
//! handshake in the flow's class), whether or not its connection is
//! watched. Why: a new connection's SYN-ACK leaves its server before the
//! agent knows the flow (the client names it alongside its request), so it
//! went unmarked into the bottleneck's lowest queue, which the paused flows
//! of a strict-priority schedule keep full (they borrow line rate at their
//! idle senders and are never served there); the SYN-ACK was dropped and
//! the connection waited out TCP's 1 s initial timeout. On the Memcached
//! testbed 114-155 handshakes a run were lost so (18 under plain TCP, where
//! every packet shares one queue), about 3% of the requests, which was the
//! p99 of every scheduler. The same holds for the ACKs and FINs of any flow
//! whose return path crosses a port where a schedule starves the lowest
//! queue. Such packets are a few dozen bytes against a data packet's 1,514
//! (at most one per two data segments with delayed ACKs), so queue 0 stays
//! the scheduled flows' as good as unshared. A packet with payload is
//! looked up by its address as before.
//!
//! Correctness properties:
//! * only the DSCP bits of a matching packet change, and its header
//!   checksum stays valid (`program`: the old 16-bit word out, the new in);
//! * a TCP packet is a control packet exactly when the IPv4 total length
//!   is the IPv4 header's length plus the TCP header's (data offset), so
//!   a GSO packet, whose total length covers its payload, never is one
//!   (`program`, before the map lookup);
//! * the filter and, when the marker made it, the `clsact` qdisc are
//!   removed when the marker is dropped (`Drop for Marker`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{tc_batch, Netlink, Watch};

/// The filter's preference (priority) at the egress hook.
const PREF: u16 = 0xc0;
/// The most flows marked at once (the enforcer's class minors, and spare).
const MAX_FLOWS: u32 = 2048;

// bpf(2) commands and types.
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_MAP_TYPE_HASH: u32 = 1;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;

// Netlink: a new traffic filter.
const RTM_NEWTFILTER: u16 = 44;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const TCA_KIND: u16 = 1;
const TCA_OPTIONS: u16 = 2;
const TCA_BPF_FD: u16 = 6;
const TCA_BPF_NAME: u16 = 7;
const TCA_BPF_FLAGS: u16 = 8;
const TCA_BPF_FLAG_ACT_DIRECT: u32 = 1;
/// `TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)`.
const CLSACT_EGRESS: u32 = 0xffff_fff3;
const ETH_P_IP: u16 = 0x0800;

/// The DSCP marks of one device's watched flows.
pub(super) struct Marker {
    dev: String,
    map: OwnedFd,
    /// Kept open while the filter holds it (the kernel holds its own
    /// reference too).
    _prog: OwnedFd,
    made_clsact: bool,
}

impl Marker {
    /// Loads the program and attaches it at `dev`'s egress (making a
    /// `clsact` qdisc there if it has none).
    pub(super) fn start(dev: &str, ifindex: i32, sock: &mut Netlink) -> Result<Marker, String> {
        let map = map_create().map_err(|e| format!("creating the DSCP map (bpf): {e}"))?;
        let prog = prog_load(map.as_raw_fd())?;
        let made_clsact = tc_batch(&[format!("qdisc add dev {dev} clsact")]).is_ok();
        let m = Marker {
            dev: dev.to_string(),
            map,
            _prog: prog,
            made_clsact,
        };
        attach(sock, ifindex, m._prog.as_raw_fd())
            .map_err(|e| format!("attaching the DSCP classifier at {dev}'s egress: {e}"))?;
        Ok(m)
    }

    /// Marks flow `w`'s packets with DS byte `tos` (DSCP << 2).
    pub(super) fn set(&self, w: &Watch, tos: u8) -> io::Result<()> {
        let key = key(w);
        let value = u32::from(tos).to_ne_bytes();
        let mut attr = [0u8; 32];
        attr[0..4].copy_from_slice(&(self.map.as_raw_fd() as u32).to_ne_bytes());
        attr[8..16].copy_from_slice(&(key.as_ptr() as u64).to_ne_bytes());
        attr[16..24].copy_from_slice(&(value.as_ptr() as u64).to_ne_bytes());
        bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(|_| ())
    }

    /// Stops marking flow `w`.
    pub(super) fn remove(&self, w: &Watch) {
        let key = key(w);
        let mut attr = [0u8; 32];
        attr[0..4].copy_from_slice(&(self.map.as_raw_fd() as u32).to_ne_bytes());
        attr[8..16].copy_from_slice(&(key.as_ptr() as u64).to_ne_bytes());
        let _ = bpf(BPF_MAP_DELETE_ELEM, &mut attr);
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        let line = if self.made_clsact {
            format!("qdisc del dev {} clsact", self.dev)
        } else {
            format!("filter del dev {} egress pref {PREF}", self.dev)
        };
        let _ = tc_batch(&[line]);
    }
}

/// The map key of flow `w`, as the program builds it from a packet.
fn key(w: &Watch) -> [u8; 8] {
    let mut k = [0u8; 8];
    k[0..4].copy_from_slice(&w.dst.octets());
    k[4..6].copy_from_slice(&w.src_port.to_be_bytes());
    k[6..8].copy_from_slice(&w.dst_port.to_be_bytes());
    k
}

/// The DS byte (DSCP << 2) that selects strict-priority class `class` on
/// the fabric (`crate::enforce::dscp_of_class`: CS7 for class 0).
pub(super) fn tos_of_class(class: u32) -> u8 {
    crate::enforce::dscp_of_class(class) << 2
}

fn bpf(cmd: libc::c_long, attr: &mut [u8]) -> io::Result<i64> {
    // SAFETY: `attr` is a valid, zero-padded `union bpf_attr` prefix of
    // its length, and every pointer in it points to live buffers.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn owned(fd: i64) -> OwnedFd {
    // SAFETY: `fd` was just returned by bpf(2) and is owned by no one else.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

fn map_create() -> io::Result<OwnedFd> {
    let mut attr = [0u8; 48];
    attr[0..4].copy_from_slice(&BPF_MAP_TYPE_HASH.to_ne_bytes());
    attr[4..8].copy_from_slice(&8u32.to_ne_bytes()); // key size
    attr[8..12].copy_from_slice(&4u32.to_ne_bytes()); // value size
    attr[12..16].copy_from_slice(&MAX_FLOWS.to_ne_bytes());
    bpf(BPF_MAP_CREATE, &mut attr).map(owned)
}

fn prog_load(map_fd: i32) -> Result<OwnedFd, String> {
    let insns = program(map_fd);
    let code: Vec<u8> = insns.iter().flat_map(|i| i.bytes()).collect();
    let license = b"Apache-2.0\0";
    let mut log = vec![0u8; 64 * 1024];
    let mut attr = [0u8; 72];
    attr[0..4].copy_from_slice(&BPF_PROG_TYPE_SCHED_CLS.to_ne_bytes());
    attr[4..8].copy_from_slice(&(insns.len() as u32).to_ne_bytes());
    attr[8..16].copy_from_slice(&(code.as_ptr() as u64).to_ne_bytes());
    attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
    attr[24..28].copy_from_slice(&1u32.to_ne_bytes()); // log level
    attr[28..32].copy_from_slice(&(log.len() as u32).to_ne_bytes());
    attr[32..40].copy_from_slice(&(log.as_mut_ptr() as u64).to_ne_bytes());
    attr[48..55].copy_from_slice(b"ck_dscp");
    bpf(BPF_PROG_LOAD, &mut attr).map(owned).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let why = String::from_utf8_lossy(&log[..end]);
        let tail: Vec<&str> = why.lines().rev().take(4).collect();
        format!(
            "loading the DSCP program (bpf): {e}; the verifier said: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )
    })
}

/// RTM_NEWTFILTER: the program as a direct-action `bpf` filter at the
/// egress hook.
fn attach(sock: &mut Netlink, ifindex: i32, prog_fd: i32) -> io::Result<()> {
    let mut opts = vec![];
    attr(&mut opts, TCA_BPF_FD, &(prog_fd as u32).to_ne_bytes());
    attr(&mut opts, TCA_BPF_NAME, b"ck_dscp\0");
    attr(
        &mut opts,
        TCA_BPF_FLAGS,
        &TCA_BPF_FLAG_ACT_DIRECT.to_ne_bytes(),
    );
    let mut body = vec![];
    // struct tcmsg: family, pad, pad, ifindex, handle, parent, info
    body.extend_from_slice(&[0u8; 4]);
    body.extend_from_slice(&ifindex.to_ne_bytes());
    body.extend_from_slice(&1u32.to_ne_bytes());
    body.extend_from_slice(&CLSACT_EGRESS.to_ne_bytes());
    let info = (u32::from(PREF) << 16) | u32::from(ETH_P_IP.to_be());
    body.extend_from_slice(&info.to_ne_bytes());
    attr(&mut body, TCA_KIND, b"bpf\0");
    attr(&mut body, TCA_OPTIONS | 0x8000, &opts);
    sock.request_ack(
        RTM_NEWTFILTER,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        &body,
    )
}

fn attr(buf: &mut Vec<u8>, kind: u16, data: &[u8]) {
    buf.extend_from_slice(&((4 + data.len()) as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(data);
    while !buf.len().is_multiple_of(4) {
        buf.push(0);
    }
}

/// One eBPF instruction.
#[derive(Debug, Clone, Copy)]
struct Insn {
    code: u8,
    dst: u8,
    src: u8,
    off: i16,
    imm: i32,
}

impl Insn {
    fn bytes(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.dst | (self.src << 4);
        b[2..4].copy_from_slice(&self.off.to_le_bytes());
        b[4..8].copy_from_slice(&self.imm.to_le_bytes());
        b
    }
}

// Opcodes (linux/bpf.h, linux/bpf_common.h).
const MOV64_K: u8 = 0xb7;
const MOV64_X: u8 = 0xbf;
const ADD64_K: u8 = 0x07;
const ADD64_X: u8 = 0x0f;
const AND64_K: u8 = 0x57;
const LSH64_K: u8 = 0x67;
const RSH64_K: u8 = 0x77;
const OR64_X: u8 = 0x4f;
const LDX_B: u8 = 0x71;
const LDX_H: u8 = 0x69;
const LDX_W: u8 = 0x61;
const STX_B: u8 = 0x73;
const STX_W: u8 = 0x63;
const JA: u8 = 0x05;
const JNE_K: u8 = 0x55;
const JNE_X: u8 = 0x5d;
const JEQ_K: u8 = 0x15;
const JEQ_X: u8 = 0x1d;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const LD_IMM64: u8 = 0x18;
const PSEUDO_MAP_FD: u8 = 1;
// Helpers.
const MAP_LOOKUP_ELEM: i32 = 1;
const SKB_STORE_BYTES: i32 = 9;
const L3_CSUM_REPLACE: i32 = 10;
const SKB_LOAD_BYTES: i32 = 26;
/// Return codes: leave the packet to the qdisc, marked or not.
const TC_ACT_OK: i32 = 0;
const TC_ACT_UNSPEC: i32 = -1;
/// `offsetof(struct __sk_buff, priority)`: the skb's priority, which HTB
/// takes as the class to enqueue to when it names one of its leaves.
const SKB_PRIORITY: i16 = 32;

/// Builds a program with forward jumps to labels.
#[derive(Default)]
struct Asm {
    insns: Vec<Insn>,
    /// (index of a jump, its label)
    fixups: Vec<(usize, Label)>,
    /// (label, the index of the instruction it names)
    labels: Vec<(Label, usize)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// A packet with data: looked up in the map.
    Data,
    /// Set the DS byte in r8 (a control packet's or a watched flow's).
    Mark,
    /// Marked (or already so).
    Done,
    /// Leave the packet as it is (a miss or something not IPv4 TCP).
    Pass,
}

impl Asm {
    fn i(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) -> &mut Self {
        self.insns.push(Insn {
            code,
            dst,
            src,
            off,
            imm,
        });
        self
    }
    fn jump(&mut self, code: u8, dst: u8, src: u8, imm: i32, to: Label) -> &mut Self {
        self.fixups.push((self.insns.len(), to));
        self.i(code, dst, src, 0, imm)
    }
    fn call(&mut self, helper: i32) -> &mut Self {
        self.i(CALL, 0, 0, 0, helper)
    }
    /// Names the next instruction `l`.
    fn label(&mut self, l: Label) -> &mut Self {
        self.labels.push((l, self.insns.len()));
        self
    }
    /// The instructions, every jump resolved (forward only, each label
    /// placed once).
    fn finish(mut self) -> Vec<Insn> {
        for (at, to) in std::mem::take(&mut self.fixups) {
            let target = self
                .labels
                .iter()
                .find(|(l, _)| *l == to)
                .map(|&(_, k)| k)
                .expect("every label a jump names is placed");
            assert!(target > at, "jumps go forward");
            self.insns[at].off = (target - at - 1) as i16;
        }
        self.insns
    }
}

/// The DS byte a TCP control packet (no payload) gets: queue 0's, CS7.
const CONTROL_TOS: u8 = 0xe0;
/// The HTB class a control packet is put in at the host: `1:10`, queue 0
/// of the testbed's port (`coflowkit.testbed.net`, prio 0). Set as the
/// skb's priority, which HTB reads before its filters, so that a watched
/// flow's own `u32` filter does not take its control packets into the
/// flow's class; on a device without that class HTB falls back to its
/// filters, which pick queue 0 by the CS7 just set.
const CONTROL_CLASS: u32 = 0x0001_0010;

/// The classifier. Registers: r6 the packet (`__sk_buff`), r7 the DS
/// field's old 16-bit word, r8 the DS byte to set, r9 the IPv4 header's
/// length. Stack: the IPv4 header at fp-40 (20 bytes), the TCP header's
/// first 16 bytes at fp-64, the map key at fp-72. The packet's data
/// begins at its Ethernet header (14 bytes) at egress.
///
/// A TCP packet without payload (IPv4 total length = IPv4 header + TCP
/// header: SYN, SYN-ACK, a pure ACK, FIN, RST) is a control packet: it
/// gets [`CONTROL_TOS`] and the host class [`CONTROL_CLASS`], whoever
/// sends it, watched or not. Any other is looked up by its address and, on
/// a hit, gets its flow's DS byte.
fn program(map_fd: i32) -> Vec<Insn> {
    const IP: i32 = 14;
    let mut a = Asm::default();
    a.i(MOV64_X, 6, 1, 0, 0);
    // The IPv4 header: bpf_skb_load_bytes(skb, 14, fp-40, 20).
    a.i(MOV64_X, 1, 6, 0, 0)
        .i(MOV64_K, 2, 0, 0, IP)
        .i(MOV64_X, 3, 10, 0, 0)
        .i(ADD64_K, 3, 0, 0, -40)
        .i(MOV64_K, 4, 0, 0, 20)
        .call(SKB_LOAD_BYTES)
        .jump(JNE_K, 0, 0, 0, Label::Pass);
    // TCP only (protocol, byte 9).
    a.i(LDX_B, 1, 10, -31, 0).jump(JNE_K, 1, 0, 6, Label::Pass);
    // r9 = 4 * ihl; the TCP header: bpf_skb_load_bytes(skb, 14 + r9, fp-64, 16).
    a.i(LDX_B, 9, 10, -40, 0)
        .i(AND64_K, 9, 0, 0, 0x0f)
        .i(LSH64_K, 9, 0, 0, 2)
        .i(MOV64_X, 2, 9, 0, 0)
        .i(ADD64_K, 2, 0, 0, IP)
        .i(MOV64_X, 1, 6, 0, 0)
        .i(MOV64_X, 3, 10, 0, 0)
        .i(ADD64_K, 3, 0, 0, -64)
        .i(MOV64_K, 4, 0, 0, 16)
        .call(SKB_LOAD_BYTES)
        .jump(JNE_K, 0, 0, 0, Label::Pass);
    // r1 = the total length (bytes 2-3, big-endian); r2 = r9 + 4 * the TCP
    // data offset (the high nibble of TCP byte 12). Unequal: data.
    a.i(LDX_B, 1, 10, -38, 0)
        .i(LSH64_K, 1, 0, 0, 8)
        .i(LDX_B, 2, 10, -37, 0)
        .i(OR64_X, 1, 2, 0, 0)
        .i(LDX_B, 2, 10, -52, 0)
        .i(RSH64_K, 2, 0, 0, 2)
        .i(AND64_K, 2, 0, 0, 0x3c)
        .i(ADD64_X, 2, 9, 0, 0)
        .jump(JNE_X, 1, 2, 0, Label::Data);
    // A control packet: the host's queue-0 class and CS7.
    a.i(MOV64_K, 1, 0, 0, CONTROL_CLASS as i32)
        .i(STX_W, 6, 1, SKB_PRIORITY, 0)
        .i(MOV64_K, 8, 0, 0, i32::from(CONTROL_TOS))
        .jump(JA, 0, 0, 0, Label::Mark);
    // The key: destination address (header byte 16), then both ports.
    a.label(Label::Data)
        .i(LDX_W, 1, 10, -24, 0)
        .i(STX_W, 10, 1, -72, 0)
        .i(LDX_W, 1, 10, -64, 0)
        .i(STX_W, 10, 1, -68, 0);
    // bpf_map_lookup_elem(map, fp-72); a miss passes.
    a.i(LD_IMM64, 1, PSEUDO_MAP_FD, 0, map_fd)
        .i(0, 0, 0, 0, 0)
        .i(MOV64_X, 2, 10, 0, 0)
        .i(ADD64_K, 2, 0, 0, -72)
        .call(MAP_LOOKUP_ELEM)
        .jump(JEQ_K, 0, 0, 0, Label::Pass);
    a.i(LDX_W, 8, 0, 0, 0);
    // r7: the old word (version/IHL, DS field); unchanged if already r8.
    a.label(Label::Mark)
        .i(LDX_H, 7, 10, -40, 0)
        .i(LDX_B, 1, 10, -39, 0)
        .i(MOV64_X, 2, 1, 0, 0)
        .i(AND64_K, 2, 0, 0, 0xfc)
        .jump(JEQ_X, 2, 8, 0, Label::Done);
    // The new DS byte, ECN bits kept, written to the copy and the packet.
    a.i(AND64_K, 1, 0, 0, 0x03)
        .i(OR64_X, 1, 8, 0, 0)
        .i(STX_B, 10, 1, -39, 0)
        .i(MOV64_X, 1, 6, 0, 0)
        .i(MOV64_K, 2, 0, 0, IP + 1)
        .i(MOV64_X, 3, 10, 0, 0)
        .i(ADD64_K, 3, 0, 0, -39)
        .i(MOV64_K, 4, 0, 0, 1)
        .i(MOV64_K, 5, 0, 0, 0)
        .call(SKB_STORE_BYTES)
        .jump(JNE_K, 0, 0, 0, Label::Done);
    // The header checksum: bpf_l3_csum_replace(skb, 24, old word, new word, 2).
    a.i(MOV64_X, 1, 6, 0, 0)
        .i(MOV64_K, 2, 0, 0, IP + 10)
        .i(MOV64_X, 3, 7, 0, 0)
        .i(LDX_H, 4, 10, -40, 0)
        .i(MOV64_K, 5, 0, 0, 2)
        .call(L3_CSUM_REPLACE);
    a.label(Label::Done)
        .i(MOV64_K, 0, 0, 0, TC_ACT_OK)
        .i(EXIT, 0, 0, 0, 0);
    a.label(Label::Pass)
        .i(MOV64_K, 0, 0, 0, TC_ACT_UNSPEC)
        .i(EXIT, 0, 0, 0, 0);
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn jumps_land_on_their_labels() {
        let p = program(3);
        let n = p.len();
        // The last four: OK, exit, UNSPEC, exit.
        assert_eq!((p[n - 4].code, p[n - 4].imm), (MOV64_K, TC_ACT_OK));
        assert_eq!((p[n - 2].code, p[n - 2].imm), (MOV64_K, TC_ACT_UNSPEC));
        let mut targets = std::collections::BTreeSet::new();
        for (k, i) in p.iter().enumerate() {
            if matches!(i.code, JA | JNE_K | JNE_X | JEQ_K | JEQ_X) {
                let to = (k as i64 + 1 + i64::from(i.off)) as usize;
                assert!(to > k && to < n, "jump at {k} lands at {to}");
                targets.insert(to);
            }
        }
        // Data, Mark, Done and Pass.
        assert_eq!(targets.len(), 4, "{targets:?}");
        assert!(targets.contains(&(n - 4)) && targets.contains(&(n - 2)));
    }

    #[test]
    fn a_control_packet_gets_queue_0_at_the_host_and_the_switch() {
        let p = program(3);
        // The one store to the context: the skb's priority, 1:10.
        let k = p
            .iter()
            .position(|i| i.code == STX_W && i.dst == 6)
            .expect("a store to the skb");
        assert_eq!(p[k].off, SKB_PRIORITY);
        assert_eq!((p[k - 1].code, p[k - 1].imm), (MOV64_K, 0x0001_0010));
        assert_eq!((p[k + 1].code, p[k + 1].dst), (MOV64_K, 8));
        assert_eq!(p[k + 1].imm, i32::from(tos_of_class(0)));
    }

    #[test]
    fn the_key_is_the_packets_bytes() {
        let w = Watch {
            src_port: 11211,
            dst: Ipv4Addr::new(10, 0, 0, 1),
            dst_port: 0x1234,
        };
        assert_eq!(key(&w), [10, 0, 0, 1, 0x2b, 0xcb, 0x12, 0x34]);
        assert_eq!(tos_of_class(0), 0xe0);
        assert_eq!(tos_of_class(7), 0);
    }
}
