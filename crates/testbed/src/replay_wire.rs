//! What both ends of a replay's connection agree on (the native sender,
//! [`crate::replay_sender`], and the native receiver,
//! [`crate::replay_receiver`]; the Python worker's `_HEADER` and `_tos` are
//! the same): a flow is a 16-byte header (id, size), its bytes, then the
//! receiver's one-byte answer; both ends mark their sockets for queue 0
//! until data flows; records carry wall-clock instants.

use std::time::{SystemTime, UNIX_EPOCH};

/// A flow's header: its id and size, big-endian (Python's `struct` "!QQ").
pub const HEADER: usize = 16;
/// The receiver's answer once a flow's bytes are all in.
pub const ANSWER: u8 = b'k';
/// IP_TOS of queue 0 (DSCP CS7): handshakes, ACKs and answers travel in the
/// top queue (the simulator has none of them; a lost SYN costs a second, an
/// ACK behind data a third of one).
pub const TOS_TOP: u32 = 0xE0;

/// The header of flow `id` of `size` bytes.
pub fn header(id: u64, size: u64) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[..8].copy_from_slice(&id.to_be_bytes());
    h[8..].copy_from_slice(&size.to_be_bytes());
    h
}

/// The flow id and size a header carries.
pub fn parse_header(h: &[u8; HEADER]) -> (u64, u64) {
    let (id, size) = h.split_at(8);
    (
        u64::from_be_bytes(id.try_into().expect("8 bytes")),
        u64::from_be_bytes(size.try_into().expect("8 bytes")),
    )
}

/// The wall clock, seconds since the epoch (the workers' common clock).
pub fn epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_reads_back_as_written() {
        let h = header(0x0102_0304_0506_0708, 775_422);
        assert_eq!(h[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(parse_header(&h), (0x0102_0304_0506_0708, 775_422));
    }
}
