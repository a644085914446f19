//! Framing of the client <-> agent conversation over a Unix socket: each
//! message is a 4-byte big-endian length followed by that many protobuf
//! bytes. A length above [`MAX_MESSAGE_BYTES`] or bytes that do not decode
//! are refused ([`FrameError`]) before anything is allocated for them.

use crate::validate::MAX_MESSAGE_BYTES;
use prost::Message;
use std::io::{Read, Write};
use thiserror::Error;
#[cfg(feature = "server")]
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Why a frame could not be read.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The peer closed the connection between frames.
    #[error("connection closed")]
    Closed,
    /// Reading or writing failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The length prefix is above the limit.
    #[error("frame of {0} bytes, at most {MAX_MESSAGE_BYTES}")]
    TooLarge(usize),
    /// The bytes are not a valid message.
    #[error("malformed message: {0}")]
    Decode(#[from] prost::DecodeError),
}

fn check_len(len: usize) -> Result<(), FrameError> {
    if len > MAX_MESSAGE_BYTES {
        Err(FrameError::TooLarge(len))
    } else {
        Ok(())
    }
}

/// Reads one message (async side: the agent).
#[cfg(feature = "server")]
pub async fn read_async<M: Message + Default, R: tokio::io::AsyncRead + Unpin>(
    r: &mut R,
) -> Result<M, FrameError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes(len) as usize;
    check_len(len)?;
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).await?;
    Ok(M::decode(buf.as_slice())?)
}

/// Writes one message (async side).
#[cfg(feature = "server")]
pub async fn write_async<M: Message, W: tokio::io::AsyncWrite + Unpin>(
    w: &mut W,
    m: &M,
) -> Result<(), FrameError> {
    let len = m.encoded_len();
    check_len(len)?;
    let mut buf = Vec::with_capacity(4 + len);
    buf.extend_from_slice(&(len as u32).to_be_bytes());
    m.encode(&mut buf).expect("a Vec grows");
    w.write_all(&buf).await?;
    Ok(())
}

/// Reads one message (blocking side: the client library).
pub fn read_blocking<M: Message + Default, R: Read>(r: &mut R) -> Result<M, FrameError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes(len) as usize;
    check_len(len)?;
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(M::decode(buf.as_slice())?)
}

/// Writes one message (blocking side).
pub fn write_blocking<M: Message, W: Write>(w: &mut W, m: &M) -> Result<(), FrameError> {
    let len = m.encoded_len();
    check_len(len)?;
    let mut buf = Vec::with_capacity(4 + len);
    buf.extend_from_slice(&(len as u32).to_be_bytes());
    m.encode(&mut buf).expect("a Vec grows");
    w.write_all(&buf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::ClientRequest;
    use proptest::prelude::*;

    proptest! {
        /// Any bytes a client sends give a message or a refusal, never a
        /// panic or an allocation beyond the limit.
        #[test]
        fn the_decoder_refuses_garbage_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut r = bytes.as_slice();
            while !r.is_empty() {
                match read_blocking::<ClientRequest, _>(&mut r) {
                    Ok(m) => { let _ = crate::validate::client_request(&m, 3, 0); }
                    Err(_) => break,
                }
            }
        }

        /// Valid messages survive the framing whole.
        #[test]
        fn frames_round_trip(parents in proptest::collection::vec(1u64.., 0..8)) {
            let m = ClientRequest {
                protocol_version: crate::PROTOCOL_VERSION,
                kind: Some(crate::proto::client_request::Kind::Register(
                    crate::proto::RegisterRequest { parents },
                )),
            };
            let mut buf = vec![];
            write_blocking(&mut buf, &m).unwrap();
            prop_assert_eq!(read_blocking::<ClientRequest, _>(&mut buf.as_slice()).unwrap(), m);
        }
    }

    #[test]
    fn an_oversized_length_is_refused_before_reading_the_body() {
        let bytes = u32::MAX.to_be_bytes();
        let r = read_blocking::<ClientRequest, _>(&mut bytes.as_slice());
        assert!(matches!(r, Err(FrameError::TooLarge(n)) if n == u32::MAX as usize));
    }
}
