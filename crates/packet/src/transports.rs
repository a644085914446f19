//! The one list of transports ([`ALL`]): each one's kind (its rules, in its
//! file under `crate::transport`) with its knobs, which `crate::knobs`
//! assembles into the knob table, and the `transport` knob, which takes the
//! kinds whose rules say `option`. Adding a transport is its file, its
//! `pub mod` line in `crate::transport` and its line here.

use crate::config::values::by_name;
use crate::config::{bad, Knob};
use crate::transport::{d2tcp, dctcp, mcp, newreno, pfabric, TransportKind};

/// A transport and its knobs.
#[derive(Debug, Clone, Copy)]
pub struct Listed {
    /// The transport.
    pub kind: TransportKind,
    /// Its own knobs (declared in its file; none inherited from another).
    pub knobs: &'static [Knob],
}

/// Every transport, in listing order.
pub const ALL: &[Listed] = &[
    Listed {
        kind: TransportKind::Tcp,
        knobs: newreno::KNOBS,
    },
    Listed {
        kind: TransportKind::Dctcp,
        knobs: dctcp::KNOBS,
    },
    Listed {
        kind: TransportKind::Rcp,
        knobs: &[],
    },
    Listed {
        kind: TransportKind::D2tcp,
        knobs: d2tcp::KNOBS,
    },
    Listed {
        kind: TransportKind::Pfabric,
        knobs: pfabric::KNOBS,
    },
    Listed {
        kind: TransportKind::Mcp,
        knobs: mcp::KNOBS,
    },
];

/// The transports the `transport` knob takes, in listing order.
pub fn options() -> impl Iterator<Item = TransportKind> {
    ALL.iter().map(|t| t.kind).filter(|t| t.rules().option)
}

/// The `transport` knob: which transport a flow runs unless its host
/// policy says otherwise.
pub const KNOBS: &[Knob] = &[Knob {
    name: "transport",
    default: "dctcp",
    unit: "choice",
    help: "tcp, dctcp, rcp, d2tcp or pfabric (default dctcp)",
    set: |c, key, v| {
        let options: Vec<TransportKind> = options().collect();
        c.transport = by_name(&options, TransportKind::name, v).ok_or_else(|| {
            let names: Vec<_> = options.iter().map(|t| t.name()).collect();
            bad(
                key,
                format!("unknown transport '{v}': one of {}", names.join(", ")),
            )
        })?;
        Ok(())
    },
}];
