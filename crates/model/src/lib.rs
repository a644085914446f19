//! The coflowkit model: units, identifiers, fabrics and workloads.
//!
//! Everything else in coflowkit speaks these types. The pipeline is
//! `Workload` (raw, as read from a file or built in code) `-> validate(&Fabric)
//! -> ValidWorkload`; everything downstream of validation may trust its input.
//!
//! A fabric is a set of directed, capacitated links; every flow crosses a path
//! of links. The big switch of the foundation issue is the fabric where a
//! host's path to another host is `[uplink(src), downlink(dst)]`; multi-hop
//! topologies only supply longer paths.

pub mod fabric;
pub mod parse;
pub mod stats;
pub mod task_id;
pub mod topology;
pub mod units;
pub mod workload;

pub use fabric::{
    ecmp_hash, Fabric, FabricError, FlowKey, Link, LinkId, LinkKind, Node, Switch, SwitchId, Tier,
    TopologyKind,
};
pub use stats::percentile;
pub use task_id::{TaskId, TaskIdError, TaskIdGen};
pub use topology::{
    BigSwitchSpec, Bisection, CustomSpec, FatTreeSpec, LeafSpineSpec, LinkSpec, NodeKind, NodeSpec,
    Topology, TreeSpec,
};
pub use units::{ceil_ns, ceil_ns_time, BitsPerSec, Bytes, Dur, HostId, Time, SNAP_NS};
pub use workload::{
    compute, flow, Bin, CoflowId, CoflowSpec, DagId, DagKey, DepKind, Dependency, FlowKind,
    FlowSpec, JobStage, ValidWorkload, Workload, WorkloadError,
};
