//! The packet-level runs a decomposition needs, as they travel between
//! processes: every link's simulation ([`crate::linksim::Part`]) and every
//! path's measurement alone ([`AlonePath`]). Each needs nothing of the
//! whole run, so a Dask worker runs its share from bytes, with neither the
//! workload nor the plan, and sends back its times ([`crate::LinkRun`]);
//! the process that holds the plan combines them ([`crate::finish`]).
//!
//! The bytes are postcard's encoding of one [`Wire`], for another process
//! of the same coflowkit (an experiment's Dask workers run the client's
//! version); what does not decode, or decodes to a fabric or workload that
//! does not check, is refused with an error, never run.

use crate::alone::AlonePath;
use crate::linksim::{self, Part};
use crate::{DecomposeError, LinkRun, Run};
use coflowkit_packet::PacketConfig;
use serde::{Deserialize, Serialize};

/// One run of a plan, borrowed from it.
pub enum Job<'a> {
    /// A link's simulation.
    Link(&'a Part),
    /// A path's times alone.
    Alone(&'a AlonePath),
}

/// A job's bytes: the one type written and read, so the two cannot drift.
#[derive(Serialize, Deserialize)]
enum Wire<L, A> {
    Link(L),
    Alone(A),
}

impl Job<'_> {
    /// Runs it (`run`: what runs on a link simulation's hosts; a path
    /// alone runs the transport alone): its flows' completion times (ns) in
    /// its flow order, or its grid's, and the per-hop packets it took.
    pub fn run(&self, run: &Run<'_>, cfg: &PacketConfig) -> Result<LinkRun, DecomposeError> {
        match self {
            Job::Link(part) => part.run(run, cfg),
            Job::Alone(path) => path.run(cfg),
        }
    }

    /// Its bytes, for [`run_encoded`] in another process.
    pub fn encode(&self) -> Vec<u8> {
        let wire: Wire<&linksim::Wire, &AlonePath> = match self {
            Job::Link(part) => Wire::Link(part.wire()),
            Job::Alone(path) => Wire::Alone(path),
        };
        postcard::to_stdvec(&wire).expect("a job's fields all encode")
    }
}

/// A job decoded from bytes ([`decode`]), its fabric and workload checked.
pub enum Decoded {
    /// A link's simulation.
    Link(Part),
    /// A path's times alone.
    Alone(AlonePath),
}

impl Decoded {
    /// Runs it, as [`Job::run`] does.
    pub fn run(&self, run: &Run<'_>, cfg: &PacketConfig) -> Result<LinkRun, DecomposeError> {
        match self {
            Decoded::Link(part) => Job::Link(part).run(run, cfg),
            Decoded::Alone(path) => Job::Alone(path).run(run, cfg),
        }
    }
}

/// The job [`Job::encode`] wrote; bytes that are not one (that do not
/// decode, have bytes left over, or make a fabric or workload that does
/// not check) are refused, saying so.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecomposeError> {
    let refused = |why: String| {
        DecomposeError::Input(format!(
            "a decomposition's job ({} B) is not one this coflowkit encodes: {why}",
            bytes.len()
        ))
    };
    let (wire, rest): (Wire<linksim::Wire, AlonePath>, &[u8]) =
        postcard::take_from_bytes(bytes).map_err(|e| refused(e.to_string()))?;
    if !rest.is_empty() {
        return Err(refused(format!("{} B left over", rest.len())));
    }
    match wire {
        Wire::Link(w) => Ok(Decoded::Link(Part::from_wire(w)?)),
        Wire::Alone(path) => {
            crate::alone::chain(&path.path)?;
            Ok(Decoded::Alone(path))
        }
    }
}

/// Runs the job [`Job::encode`] wrote ([`decode`], then [`Decoded::run`]).
pub fn run_encoded(
    bytes: &[u8],
    run: &Run<'_>,
    cfg: &PacketConfig,
) -> Result<LinkRun, DecomposeError> {
    decode(bytes)?.run(run, cfg)
}
