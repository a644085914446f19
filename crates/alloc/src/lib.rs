//! Allocation building blocks shared by every scheduler.
//!
//! * [`MaxMin`]: weighted max-min fairness by progressive filling over any set
//!   of capacitated links, with per-flow rate caps and flow multiplicity (a
//!   demand may stand for `count` identical flows, so per-flow fairness over
//!   100,000 flows that share a few thousand paths costs a few thousand steps).
//!   Strict priority classes with max-min inside a class are successive calls
//!   on the residual capacities.
//! * [`BipartiteMaxMin`]: the same for the big switch, where every demand
//!   crosses one ingress and one egress port, over a dense count matrix:
//!   a solve costs O(ports^2) however many flows there are.
//! * [`WeightedBipartite`]: weighted max-min on the big switch over a dense
//!   matrix of weights, with what each port gives away (Aalo's D-CLAS
//!   serves one coflow, or one weighted excess, at a time with it).
//! * [`IncrementalMaxMin`]: the same kept up to date as demands come and go,
//!   re-solving only the region a change reaches and proving the rest still
//!   max-min fair by the bottleneck certificate (for large multi-hop fabrics).
//! * [`madd`]: Varys's Minimum-Allocation-for-Desired-Duration (Varys, SIGCOMM
//!   2014, 5.3): the rates that finish all of a coflow's flows together at the
//!   coflow's effective bottleneck time, and nothing faster.
//!
//! Rates and capacities are `f64` bits per second. Links are indices into a
//! residual-capacity slice owned by the caller, which every call reduces by
//! what it allocates.
//!
//! Correctness properties (checked against the slow references in
//! `reference` by the differential tests in `tests/`): no link carries more
//! than its capacity (up to float rounding); every flow with a positive
//! weight is limited by a saturated link or by its cap (max-min);
//! allocation is deterministic (ties broken by link index).

mod bipartite;
mod incremental;
mod madd;
mod maxmin;
pub mod reference;
mod weighted_bipartite;

pub use bipartite::BipartiteMaxMin;
pub use incremental::IncrementalMaxMin;
pub use madd::{effective_bottleneck, madd, LinkLoad};
pub use maxmin::{MaxMin, Trace};
pub use weighted_bipartite::WeightedBipartite;

/// Relative slack under which a residual capacity counts as used up.
pub const EPS: f64 = 1e-9;
