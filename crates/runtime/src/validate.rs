//! Checks of every message at the door: a message that fails is refused as
//! a whole, with an error that names the field and the value.
//!
//! Limits (a peer that exceeds one is refused, not truncated):
//! [`MAX_MESSAGE_BYTES`] per message on either wire, [`MAX_FLOWS`] flows and
//! [`MAX_COFLOWS`] coflows per sync, [`MAX_PARENTS`] parents per coflow,
//! [`MAX_BYTES`] bytes per flow, and rates finite and in `0..=`[`MAX_RATE_BPS`].

use crate::proto;
use crate::PROTOCOL_VERSION;
use thiserror::Error;

/// Largest message accepted on the gRPC and Unix-socket wires.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;
/// Most flows one sync or report may carry.
pub const MAX_FLOWS: usize = 65_536;
/// Most coflows one sync may carry.
pub const MAX_COFLOWS: usize = 65_536;
/// Most parents a coflow may name.
pub const MAX_PARENTS: usize = 64;
/// Most bytes a flow may count or hint (2^50, 1 PiB).
pub const MAX_BYTES: u64 = 1 << 50;
/// Highest rate a schedule may carry, bits/s (10 Tbit/s).
pub const MAX_RATE_BPS: f64 = 1e13;

/// Why a message was refused.
#[derive(Debug, Error, PartialEq)]
pub enum Invalid {
    /// Another protocol version.
    #[error("protocol version {got}, this side speaks {PROTOCOL_VERSION}")]
    Version {
        /// The peer's.
        got: u32,
    },
    /// A host outside the cluster.
    #[error("{field}: host {host} outside the cluster of {n_hosts} hosts")]
    Host {
        /// Where.
        field: String,
        /// The value.
        host: u32,
        /// Hosts in the cluster.
        n_hosts: u32,
    },
    /// Too many entries.
    #[error("{field}: {n} entries, at most {max}")]
    TooMany {
        /// Where.
        field: &'static str,
        /// How many.
        n: usize,
        /// The limit.
        max: usize,
    },
    /// A value out of range or inconsistent.
    #[error("{field}: {why}")]
    Field {
        /// Where.
        field: String,
        /// What is wrong.
        why: String,
    },
}

fn version(v: u32) -> Result<(), Invalid> {
    if v == PROTOCOL_VERSION {
        Ok(())
    } else {
        Err(Invalid::Version { got: v })
    }
}

fn count(field: &'static str, n: usize, max: usize) -> Result<(), Invalid> {
    if n > max {
        Err(Invalid::TooMany { field, n, max })
    } else {
        Ok(())
    }
}

fn host(field: impl Into<String>, h: u32, n_hosts: u32) -> Result<(), Invalid> {
    if h < n_hosts {
        Ok(())
    } else {
        Err(Invalid::Host {
            field: field.into(),
            host: h,
            n_hosts,
        })
    }
}

fn field(field: impl Into<String>, why: impl Into<String>) -> Invalid {
    Invalid::Field {
        field: field.into(),
        why: why.into(),
    }
}

fn coflow_id(what: impl Into<String>, id: u64) -> Result<(), Invalid> {
    if id == 0 {
        Err(field(what, "coflow id 0 is reserved"))
    } else {
        Ok(())
    }
}

fn bytes(what: impl Into<String>, b: u64) -> Result<(), Invalid> {
    if b > MAX_BYTES {
        Err(field(what, format!("{b} bytes, at most {MAX_BYTES}")))
    } else {
        Ok(())
    }
}

/// Checks an agent's hello.
pub fn hello(r: &proto::HelloRequest, n_hosts: u32) -> Result<(), Invalid> {
    version(r.protocol_version)?;
    host("host", r.host, n_hosts)
}

/// Checks an agent's sync on its own (consistency with earlier syncs is the
/// coordinator's check).
pub fn sync(r: &proto::SyncRequest, n_hosts: u32) -> Result<(), Invalid> {
    version(r.protocol_version)?;
    host("host", r.host, n_hosts)?;
    count("coflows", r.coflows.len(), MAX_COFLOWS)?;
    count("flows", r.flows.len(), MAX_FLOWS)?;
    for (i, c) in r.coflows.iter().enumerate() {
        coflow_id(format!("coflows[{i}].coflow_id"), c.coflow_id)?;
        count("coflows[].parents", c.parents.len(), MAX_PARENTS)?;
        for (j, &p) in c.parents.iter().enumerate() {
            coflow_id(format!("coflows[{i}].parents[{j}]"), p)?;
            if p == c.coflow_id {
                return Err(field(
                    format!("coflows[{i}].parents[{j}]"),
                    "a coflow cannot depend on itself",
                ));
            }
        }
    }
    for (i, f) in r.flows.iter().enumerate() {
        coflow_id(format!("flows[{i}].coflow_id"), f.coflow_id)?;
        host(format!("flows[{i}].dst_host"), f.dst_host, n_hosts)?;
        if f.dst_host == r.host {
            return Err(field(
                format!("flows[{i}].dst_host"),
                format!("host {} sends to itself", r.host),
            ));
        }
        bytes(format!("flows[{i}].bytes_sent"), f.bytes_sent)?;
        bytes(format!("flows[{i}].size_hint"), f.size_hint)?;
    }
    Ok(())
}

/// Checks a schedule's rate.
pub fn rate(what: &str, r: &proto::FlowRate) -> Result<(), Invalid> {
    if !r.rate_bps.is_finite() || r.rate_bps < 0.0 || r.rate_bps > MAX_RATE_BPS {
        return Err(field(
            what,
            format!("rate {} bits/s, not in 0..={MAX_RATE_BPS}", r.rate_bps),
        ));
    }
    if r.class > 63 {
        return Err(field(what, format!("class {}, at most 63", r.class)));
    }
    Ok(())
}

/// Checks a coordinator's reply (the agent's side).
pub fn sync_reply(r: &proto::SyncReply) -> Result<(), Invalid> {
    version(r.protocol_version)?;
    count("rates", r.rates.len(), MAX_FLOWS)?;
    count("finished_acks", r.finished_acks.len(), MAX_FLOWS)?;
    count("completed_coflows", r.completed_coflows.len(), MAX_COFLOWS)?;
    for (i, x) in r.rates.iter().enumerate() {
        rate(&format!("rates[{i}]"), x)?;
    }
    Ok(())
}

/// Checks a client's request to its agent.
pub fn client_request(r: &proto::ClientRequest, n_hosts: u32, me: u32) -> Result<(), Invalid> {
    use proto::client_request::Kind;
    version(r.protocol_version)?;
    match &r.kind {
        None => Err(field("kind", "empty request")),
        Some(Kind::Register(x)) => {
            count("parents", x.parents.len(), MAX_PARENTS)?;
            for (j, &p) in x.parents.iter().enumerate() {
                coflow_id(format!("parents[{j}]"), p)?;
            }
            Ok(())
        }
        Some(Kind::Unregister(x)) => coflow_id("coflow_id", x.coflow_id),
        Some(Kind::OpenFlow(x)) => {
            coflow_id("coflow_id", x.coflow_id)?;
            host("dst_host", x.dst_host, n_hosts)?;
            if x.dst_host == me {
                return Err(field("dst_host", format!("host {me} sends to itself")));
            }
            bytes("size_hint", x.size_hint)
        }
        Some(Kind::Report(x)) => {
            count("flows", x.flows.len(), MAX_FLOWS)?;
            for (i, f) in x.flows.iter().enumerate() {
                bytes(format!("flows[{i}].bytes_sent"), f.bytes_sent)?;
            }
            Ok(())
        }
        Some(Kind::CloseFlow(x)) => bytes("bytes_sent", x.bytes_sent),
        Some(Kind::AdoptCoflow(x)) => {
            coflow_id("coflow_id", x.coflow_id)?;
            count("parents", x.parents.len(), MAX_PARENTS)?;
            for (j, &p) in x.parents.iter().enumerate() {
                coflow_id(format!("parents[{j}]"), p)?;
            }
            Ok(())
        }
        Some(Kind::WatchFlow(x)) => {
            coflow_id("coflow_id", x.coflow_id)?;
            host("dst_host", x.dst_host, n_hosts)?;
            if x.dst_host == me {
                return Err(field("dst_host", format!("host {me} sends to itself")));
            }
            bytes("size_hint", x.size_hint)?;
            address("", x.src_port, &x.dst_addr, x.dst_port)
        }
        Some(Kind::ReopenFlow(x)) => {
            if x.flow_id == 0 {
                return Err(field("flow_id", "flow id 0 is never given out"));
            }
            coflow_id("coflow_id", x.coflow_id)?;
            host("dst_host", x.dst_host, n_hosts)?;
            if x.dst_host == me {
                return Err(field("dst_host", format!("host {me} sends to itself")));
            }
            bytes("size_hint", x.size_hint)?;
            bytes("bytes_sent", x.bytes_sent)?;
            match &x.watch {
                Some(w) => address("watch.", w.src_port, &w.dst_addr, w.dst_port),
                None => Ok(()),
            }
        }
    }
}

/// Checks a watched flow's address: ports 1..65535 and an IPv4 destination;
/// `prefix` goes before the fields' names in an error.
fn address(prefix: &str, src_port: u32, dst_addr: &str, dst_port: u32) -> Result<(), Invalid> {
    for (name, port) in [("src_port", src_port), ("dst_port", dst_port)] {
        if port == 0 || port > u16::MAX as u32 {
            return Err(field(
                format!("{prefix}{name}"),
                format!("port {port}: must be 1..65535"),
            ));
        }
    }
    if dst_addr.parse::<std::net::Ipv4Addr>().is_err() {
        return Err(field(
            format!("{prefix}dst_addr"),
            format!(
                "{:?} is not an IPv4 address (a.b.c.d)",
                dst_addr.chars().take(64).collect::<String>()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_syncs_are_refused_with_the_field_named() {
        let ok = proto::SyncRequest {
            protocol_version: PROTOCOL_VERSION,
            host: 1,
            coflows: vec![proto::CoflowInfo {
                coflow_id: 5,
                parents: vec![4],
                unregistered: false,
            }],
            flows: vec![proto::FlowReport {
                flow_id: 1,
                coflow_id: 5,
                dst_host: 2,
                bytes_sent: 10,
                size_hint: 0,
                finished: false,
            }],
            ..Default::default()
        };
        assert_eq!(sync(&ok, 3), Ok(()));
        let mut r = ok.clone();
        r.protocol_version = 2;
        assert_eq!(sync(&r, 3), Err(Invalid::Version { got: 2 }));
        let mut r = ok.clone();
        r.flows[0].dst_host = 7;
        assert_eq!(
            sync(&r, 3).unwrap_err().to_string(),
            "flows[0].dst_host: host 7 outside the cluster of 3 hosts"
        );
        let mut r = ok.clone();
        r.flows[0].dst_host = 1;
        assert_eq!(
            sync(&r, 3).unwrap_err().to_string(),
            "flows[0].dst_host: host 1 sends to itself"
        );
        let mut r = ok.clone();
        r.coflows[0].parents = vec![5];
        assert!(sync(&r, 3).unwrap_err().to_string().contains("itself"));
        let mut r = ok.clone();
        r.flows[0].bytes_sent = u64::MAX;
        assert!(sync(&r, 3)
            .unwrap_err()
            .to_string()
            .starts_with("flows[0].bytes_sent"));
        let mut r = ok;
        r.flows[0].coflow_id = 0;
        assert!(sync(&r, 3).unwrap_err().to_string().contains("reserved"));
    }

    #[test]
    fn rates_must_be_finite_and_in_range() {
        let mut r = proto::FlowRate {
            flow_id: 1,
            rate_bps: 1e9,
            class: 0,
            paused: false,
        };
        assert!(rate("r", &r).is_ok());
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e14] {
            r.rate_bps = bad;
            assert!(rate("r", &r).is_err(), "{bad}");
        }
    }
}
