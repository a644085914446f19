//! The coflow runtime: a coordinator, an agent per host and a client
//! library that schedule real TCP traffic with the simulator's schedulers.
//!
//! * [`coordinator`]: one per cluster. Keeps a [`coflowkit_sched::NetState`]
//!   of the coflows and flows the agents report, and every Δ (10 ms by
//!   default) replaces its progress by the reported bytes, calls a scheduler
//!   built by the registry through the same [`coflowkit_sched::Scheduler`]
//!   trait as the simulator, and keeps each flow's rate and priority class
//!   for its agent's next sync.
//! * [`agent`]: one per host. Applications reach it through a Unix socket;
//!   it hands out coflow ids (`register`), counts the bytes the client
//!   library reports for each writer, syncs with the coordinator every Δ
//!   (gRPC, a shared token on every call) and passes the schedule back.
//! * [`client`]: what an application links: `register(parents)`,
//!   `unregister`, and [`client::CoflowWriter`], which wraps a TCP stream,
//!   counts bytes as they are written, paces the socket to its rate with
//!   `SO_MAX_PACING_RATE`, marks it with its class (`IP_TOS`,
//!   `SO_PRIORITY`), blocks while its flow must wait, and falls back to
//!   plain unthrottled TCP when the agent is unreachable.
//!
//! * [`status`]: the coordinator's state as JSON and Prometheus metrics
//!   over HTTP.
//! * [`cli`]: the command line of both processes as a function, which the
//!   `coflowkit-runtime` binary and the Python extension both run.
//!
//! Cargo features: `server` (on by default) builds the coordinator, the
//! agent, the status server, their command line and the `coflowkit-runtime`
//! binary (tokio, tonic, hyper, clap); the Python extension
//! (`coflowkit._core`) links it too, so that the wheel runs both processes.
//! Without it the crate is the client library alone: blocking, with no
//! async runtime (the client never needs one, with or without `server`).
//! `tls` adds TLS between agents and coordinator.
//!
//! The wire protocol is `proto/runtime.proto` (package
//! `coflowkit.runtime.v1`, [`PROTOCOL_VERSION`]), compiled by protox and
//! tonic-prost-build at build time. Every message is checked at the door
//! ([`validate`]) and a peer that sends a malformed one is refused with a
//! logged reason; the runtime only ever delays data, never drops or
//! changes a byte.

#[cfg(feature = "server")]
pub mod agent;
#[cfg(feature = "server")]
pub mod cli;
pub mod client;
#[cfg(feature = "server")]
pub mod coordinator;
pub mod enforce;
#[cfg(feature = "server")]
pub mod status;
#[cfg(feature = "server")]
mod token;
pub mod validate;
pub mod wire;

/// The generated protocol types and (with the `server` feature) gRPC service.
///
/// With `server`, build.rs generates both from `proto/runtime.proto`;
/// without it, the messages are the checked-in `src/proto_messages.rs`
/// (the same generator's output, which a test keeps identical: after a
/// change to the `.proto`, copy `OUT_DIR/messages/coflowkit.runtime.v1.rs`
/// over it, as the test's failure says).
#[allow(missing_docs, clippy::all)]
pub mod proto {
    #[cfg(feature = "server")]
    include!(concat!(env!("OUT_DIR"), "/coflowkit.runtime.v1.rs"));
    #[cfg(not(feature = "server"))]
    include!("proto_messages.rs");
}

#[cfg(all(test, feature = "server"))]
mod tests {
    #[test]
    fn the_checked_in_messages_are_what_the_proto_generates() {
        let generated = concat!(env!("OUT_DIR"), "/messages/coflowkit.runtime.v1.rs");
        assert!(
            include_str!(concat!(
                env!("OUT_DIR"),
                "/messages/coflowkit.runtime.v1.rs"
            )) == include_str!("proto_messages.rs"),
            "crates/runtime/src/proto_messages.rs is stale: copy {generated} over it"
        );
    }
}

/// The protocol version both ends must speak.
pub const PROTOCOL_VERSION: u32 = 1;

/// The default coordination interval Δ (Aalo 6.2).
pub const DEFAULT_DELTA: std::time::Duration = std::time::Duration::from_millis(10);
