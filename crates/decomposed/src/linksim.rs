//! One link's simulation: the flows that cross the link, on a small fabric
//! that keeps what each of them meets elsewhere only as far as it shapes
//! their arrivals at this link (Parsimon §4.2):
//!
//! * each source host reaches the link's sending switch by one link at its
//!   own NIC's rate, whose delay is its path's up to there (propagation,
//!   and the serialization at the hops it stands for), so the flows from
//!   one host share that host's NIC as they do in the fabric;
//! * the link itself, at its rate, with its delay, queue kind, buffer and
//!   ECN threshold (the packet engine's knobs);
//! * from the link's receiving switch, each destination by one link ten
//!   times faster than the slowest hop left (so it never queues), whose
//!   delay keeps the path's.
//!
//! With the fluid correction, a flow paced at a rate (the fabric holds it
//! back elsewhere, or, with `fluid=pace+host`, its host's other flows
//! leave it that much of its NIC) has a source host of its own whose link
//! runs at that rate; in its own NIC's simulation, where nothing stands before the
//! link, a destination of its own whose link runs at that rate (asked for
//! by `fluid=pace+nic`).
//!
//! A host's NIC as the link (its uplink) has the host as its only source;
//! a switch port to a host (its downlink) has the host as its only
//! destination. Sources and destinations are distinct hosts of the small
//! fabric even where one fabric host is both. Every link is duplex with
//! the same rate and delay both ways: the ACKs come back the way the data
//! went, with no other traffic. So the ACKs never queue, and nor does a
//! destination's link that is at least the link's rate (only the link
//! feeds it): with `direct` ([`part_cfg`]) packets cross those ports with
//! no event of their own, leaving about a third of the per-hop packets.

use crate::hops::{collapsed_delay, Hop};
use crate::route::Routes;
use crate::{DecomposeError, Paces, Run};
use coflowkit_model::{
    BitsPerSec, Bytes, CoflowId, CoflowSpec, CustomSpec, Dur, Fabric, FlowKind, FlowSpec, HostId,
    JobStage, LinkId, LinkKind, LinkSpec, NodeKind, NodeSpec, Time, ValidWorkload, Workload,
};
use coflowkit_packet::{PacketConfig, PacketResult};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How much faster than the slowest hop after the link a destination's
/// link runs (Parsimon's fat links).
pub const FAT: u64 = 10;

/// What stands for a source's hops before the link, where the link is not
/// the source's own NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sources {
    /// One link at the source NIC's rate (Parsimon's): a host's flows
    /// share its NIC before the link as they do in the fabric, and what
    /// they queue there is counted again at every link of their path
    /// (the NIC's own simulation counts it too).
    Nic,
    /// One link [`FAT`] times the NIC's rate: no queue before the link,
    /// and a host's flows reach the link as fast as their windows allow.
    Fat,
}

/// One link's simulation, built and not yet run.
pub struct LinkSim {
    /// The link it stands for.
    pub link: LinkId,
    /// What runs: its small fabric and its flows.
    pub part: Part,
    /// Each of its flows' index in the whole workload, in its own flow
    /// order.
    pub flows: Vec<u32>,
    /// Each of its flows' path through the small fabric, in that order.
    pub paths: Vec<Vec<Hop>>,
}

/// What a link's simulation runs, with nothing of the whole fabric: its
/// small fabric and workload. It travels as bytes ([`crate::job`]), so
/// that other processes (Dask workers) run link simulations without the
/// whole workload or the plan, which only the process that combines their
/// results holds.
pub struct Part {
    /// Its small fabric.
    pub fabric: Fabric,
    /// Its flows, as a workload of that fabric.
    pub workload: ValidWorkload,
    /// Its ACKs reach their senders crossing no port ([`part_cfg`]).
    pub direct_acks: bool,
    /// Its packets cross their destinations' links with no event: each
    /// of those is at least as fast as the link, the only one that feeds
    /// it, so it never holds two packets ([`part_cfg`]).
    pub direct_last_hop: bool,
    /// What it is made from, as it travels.
    wire: Wire,
}

/// A [`Part`] as it travels: the small fabric's nodes (sources, then
/// destinations, then the link's switches), its duplex links, each host's
/// one link's delay and the link's, and the flows.
#[derive(Serialize, Deserialize)]
pub(crate) struct Wire {
    /// Each node's name and whether it is a switch.
    nodes: Vec<(String, bool)>,
    /// Each duplex link's two nodes and rate (bits/s).
    links: Vec<(String, String, u64)>,
    /// Each host's one link's delay (ns), in host order.
    host_delay: Vec<u64>,
    /// The delay of every link not a host's (ns): the link's own.
    link_delay: u64,
    coflows: Vec<WireCoflow>,
    direct_acks: bool,
    direct_last_hop: bool,
}

/// A coflow of a [`Wire`]: id, arrival (ns), job and stage, deadline
/// (ns), flows.
#[derive(Serialize, Deserialize)]
struct WireCoflow {
    id: u64,
    arrival: u64,
    job: Option<(u64, u32)>,
    deadline: Option<u64>,
    flows: Vec<WireFlow>,
}

/// A network flow of a [`WireCoflow`] (the decomposed engine runs no
/// compute stages).
#[derive(Serialize, Deserialize)]
struct WireFlow {
    src: u32,
    dst: u32,
    bytes: u64,
    group: u32,
    after: Option<u32>,
    delay: u64,
    deadline: Option<u64>,
    size_known: bool,
}

impl Part {
    /// The part `wire` describes, its fabric and workload checked as the
    /// whole fabric's are (`name`: the link's, for errors).
    fn assemble(wire: Wire, name: &str) -> Result<Part, DecomposeError> {
        let err = |e: String| DecomposeError::Link(name.to_string(), e);
        let spec = CustomSpec {
            nodes: wire
                .nodes
                .iter()
                .map(|(name, switch)| NodeSpec {
                    name: name.clone(),
                    kind: if *switch {
                        NodeKind::Switch
                    } else {
                        NodeKind::Host
                    },
                })
                .collect(),
            links: wire
                .links
                .iter()
                .map(|(from, to, rate)| LinkSpec {
                    from: from.clone(),
                    to: to.clone(),
                    capacity: BitsPerSec(*rate as f64),
                    duplex: true,
                })
                .collect(),
        };
        let small = Fabric::custom(&spec).map_err(|e| err(e.to_string()))?;
        let delays = small
            .links()
            .iter()
            .map(|x| match x.kind {
                LinkKind::Uplink(h) | LinkKind::Downlink(h) => {
                    wire.host_delay.get(h.0 as usize).map(|&d| Dur(d))
                }
                _ => Some(Dur(wire.link_delay)),
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| err("a host without its link's delay".into()))?
            .into_iter()
            .map(Some)
            .collect();
        let small = small
            .with_link_delays(delays)
            .map_err(|e| err(e.to_string()))?;
        let coflows = wire
            .coflows
            .iter()
            .map(|c| CoflowSpec {
                id: CoflowId(c.id),
                arrival: Time(c.arrival),
                job: c.job.map(|(job, stage)| JobStage { job, stage }),
                deadline: c.deadline.map(Dur),
                parents: vec![],
                flows: c
                    .flows
                    .iter()
                    .map(|f| FlowSpec {
                        src: HostId(f.src),
                        dst: HostId(f.dst),
                        bytes: Bytes(f.bytes),
                        kind: FlowKind::Net,
                        group: f.group,
                        after: f.after,
                        delay: Dur(f.delay),
                        deadline: f.deadline.map(Dur),
                        size_known: f.size_known,
                    })
                    .collect(),
            })
            .collect();
        let n_hosts = wire.host_delay.len() as u32;
        let workload = Workload { n_hosts, coflows }
            .validate(&small)
            .map_err(|e| err(e.to_string()))?;
        Ok(Part {
            fabric: small,
            workload,
            direct_acks: wire.direct_acks,
            direct_last_hop: wire.direct_last_hop,
            wire,
        })
    }

    /// What it is made from, as it travels ([`crate::job`]).
    pub(crate) fn wire(&self) -> &Wire {
        &self.wire
    }

    /// The part `wire` describes, checked, from bytes another process
    /// wrote ([`crate::job`]).
    pub(crate) fn from_wire(wire: Wire) -> Result<Part, DecomposeError> {
        Part::assemble(wire, "(decoded)")
    }

    /// Runs it on the packet engine: each of its flows' completion time
    /// (ns), in its flow order, and the per-hop packets it took.
    pub fn run(
        &self,
        run: &Run<'_>,
        cfg: &PacketConfig,
    ) -> Result<(Vec<u64>, u64), DecomposeError> {
        let cfg = &part_cfg(cfg, self.direct_acks, self.direct_last_hop);
        let r = match run {
            Run::Transport => {
                coflowkit_packet::simulate(&self.fabric, &self.workload, &[], &[], cfg, &mut |_| {})
            }
            Run::Hosts(spec) => coflowkit_packet::simulate_scheduled(
                &self.fabric,
                &self.workload,
                spec,
                &[],
                cfg,
                &mut |_| {},
            ),
        }
        .map_err(|e| DecomposeError::Packet(e.to_string()))?;
        Ok(completions(&r))
    }
}

/// A part's run as the decomposition reads it: each flow's completion time
/// (ns), in the run's flow order, and the per-hop packets it took.
pub(crate) fn completions(r: &PacketResult) -> (Vec<u64>, u64) {
    let rows = r
        .sim
        .flows
        .as_ref()
        .expect("the packet engine keeps every flow's row");
    (
        rows.iter().map(|f| (f.finish - f.start).0).collect(),
        r.packets,
    )
}

/// The packet engine's configuration `cfg` for a part of the fabric (a
/// link's simulation, or a path alone): with `acks`, ACKs cross no port
/// (`acks=direct`: nothing else goes their way there); with `last_hop`,
/// packets cross the last hop to their receivers with no event
/// (`last_hop=direct`, where that hop never holds two packets).
pub fn part_cfg(cfg: &PacketConfig, acks: bool, last_hop: bool) -> PacketConfig {
    PacketConfig {
        direct_acks: cfg.direct_acks || acks,
        direct_last_hop: cfg.direct_last_hop || last_hop,
        ..cfg.clone()
    }
}

/// The hops of `links` on `fabric`.
fn hops_of(fabric: &Fabric, cfg: &PacketConfig, links: &[LinkId]) -> Vec<Hop> {
    links.iter().map(|&l| Hop::of(fabric, cfg, l)).collect()
}

/// The simulation of link `l`, which `routes` says `flows` cross
/// (`flow_at`: each flow's coflow index and index in it; `pace`: per
/// flow, per link of its path, the rate its source is paced at there).
#[allow(clippy::too_many_arguments)]
pub fn build(
    fabric: &Fabric,
    workload: &ValidWorkload,
    cfg: &PacketConfig,
    routes: &Routes,
    flow_at: &[(u32, u32)],
    l: LinkId,
    sources: Sources,
    pace: Option<&Paces>,
    direct: bool,
) -> Result<LinkSim, DecomposeError> {
    let flows = &routes.on_link[l.0 as usize];
    let mtu = cfg.mtu;
    let link = Hop::of(fabric, cfg, l);
    let kind = fabric.links()[l.0 as usize].kind;
    // The hosts on each side, each with its first flow's hops up to the
    // link or after it.
    // A source paced at a rate (bits/s) is the flow's own host, whose one
    // link runs at that rate.
    let mut srcs: Vec<(u32, Vec<Hop>, Option<u64>)> = vec![];
    let mut dsts: Vec<(u32, Vec<Hop>, Option<u64>)> = vec![];
    let (mut src_of, mut dst_of) = (HashMap::new(), HashMap::new());
    let mut ends = Vec::with_capacity(flows.len());
    for &i in flows {
        let path = &routes.paths[i as usize];
        let pos = path
            .iter()
            .position(|&x| x == l)
            .expect("a flow on the link crosses it");
        let (c, k) = flow_at[i as usize];
        let f = &workload.coflows()[c as usize].flows[k as usize];
        let rate = pace.and_then(|p| p.rate(i as usize, pos));
        let paced = rate.filter(|_| pos > 0);
        let held = rate.filter(|_| pos == 0 && pos + 1 < path.len());
        let key = (f.src.0, paced.map_or(u32::MAX, |_| i));
        let s = *src_of.entry(key).or_insert_with(|| {
            srcs.push((f.src.0, hops_of(fabric, cfg, &path[..pos]), paced));
            srcs.len() - 1
        });
        let key = (f.dst.0, held.map_or(u32::MAX, |_| i));
        let d = *dst_of.entry(key).or_insert_with(|| {
            dsts.push((f.dst.0, hops_of(fabric, cfg, &path[pos + 1..]), held));
            dsts.len() - 1
        });
        ends.push((s, d));
    }
    let uplink = matches!(kind, LinkKind::Uplink(_));
    let downlink = matches!(kind, LinkKind::Downlink(_));
    // Nodes: sources, then destinations (hosts numbered in that order),
    // then the link's two switches where they are switches.
    let name_s = |s: usize| format!("s{s}");
    let name_d = |d: usize| format!("d{d}");
    let mut nodes: Vec<(String, bool)> = (0..srcs.len())
        .map(name_s)
        .chain((0..dsts.len()).map(name_d))
        .map(|name| (name, false))
        .collect();
    for (name, is) in [("A", !uplink), ("B", !downlink)] {
        if is {
            nodes.push((name.into(), true));
        }
    }
    let duplex = |from: String, to: String, rate: u64| (from, to, rate);
    let n_src = srcs.len();
    let mut links = vec![];
    // Each host's one link's delay (host number = node order).
    let mut host_delay = vec![0u64; n_src + dsts.len()];
    let mut src_hop = vec![None; n_src];
    for (s, (_, up, paced)) in srcs.iter().enumerate() {
        if !up.is_empty() {
            let rate = match (paced, sources) {
                (Some(r), _) => *r,
                (None, Sources::Nic) => up[0].rate,
                (None, Sources::Fat) => up[0].rate.saturating_mul(FAT),
            };
            let hop = Hop {
                rate,
                delay: collapsed_delay(up, mtu),
            };
            links.push(duplex(name_s(s), "A".into(), hop.rate));
            host_delay[s] = hop.delay;
            src_hop[s] = Some(hop);
        }
    }
    let tail = if uplink { name_s(0) } else { "A".into() };
    let head = if downlink { name_d(0) } else { "B".into() };
    links.push(duplex(tail, head, link.rate));
    if uplink {
        host_delay[0] = link.delay;
    }
    if downlink {
        host_delay[n_src] = link.delay;
    }
    let mut dst_hop = vec![None; dsts.len()];
    for (d, (_, down, held)) in dsts.iter().enumerate() {
        if !down.is_empty() {
            let slowest = down.iter().map(|h| h.rate).min().expect("not empty");
            // A fat link, or one at the rate a held flow is held to.
            let one = Hop {
                rate: held.unwrap_or(slowest.saturating_mul(FAT)),
                delay: 0,
            };
            // The fabric's time from the switch to the host: every hop's
            // serialization and propagation; the one link's serialization
            // is its own.
            let real = collapsed_delay(down, mtu) as f64 + down[0].serialize_ns(mtu);
            let hop = Hop {
                delay: (real - one.serialize_ns(mtu)).max(0.0).round() as u64,
                ..one
            };
            links.push(duplex("B".into(), name_d(d), hop.rate));
            host_delay[n_src + d] = hop.delay;
            dst_hop[d] = Some(hop);
        }
    }
    // The workload: each coflow with the flows of it that cross the link.
    let mut coflows: Vec<WireCoflow> = vec![];
    let mut members: HashMap<u64, Vec<(u32, usize)>> = HashMap::new();
    for (n, &i) in flows.iter().enumerate() {
        let (c, k) = flow_at[i as usize];
        let orig = &workload.coflows()[c as usize];
        if coflows.last().map(|x| x.id) != Some(orig.id.0) {
            coflows.push(WireCoflow {
                id: orig.id.0,
                arrival: orig.arrival.0,
                job: orig.job.map(|j| (j.job, j.stage)),
                deadline: orig.deadline.map(|d| d.0),
                flows: vec![],
            });
        }
        let (s, d) = ends[n];
        let f = &orig.flows[k as usize];
        coflows.last_mut().expect("pushed").flows.push(WireFlow {
            src: s as u32,
            dst: (n_src + d) as u32,
            bytes: f.bytes.0,
            group: f.group,
            after: f.after,
            delay: f.delay.0,
            deadline: f.deadline.map(|d| d.0),
            size_known: f.size_known,
        });
        members.entry(orig.id.0).or_default().push((i, n));
    }
    let wire = Wire {
        nodes,
        links,
        host_delay,
        link_delay: link.delay,
        coflows,
        direct_acks: direct,
        direct_last_hop: direct
            && !downlink
            && dst_hop
                .iter()
                .all(|h| h.is_some_and(|h| h.rate >= link.rate)),
    };
    let part = Part::assemble(wire, &fabric.link_name(l))?;
    let mut order = Vec::with_capacity(flows.len());
    let mut paths = Vec::with_capacity(flows.len());
    for c in part.workload.coflows() {
        for &(i, n) in &members[&c.id.0] {
            order.push(i);
            let (s, d) = ends[n];
            let mut p: Vec<Hop> = src_hop[s].into_iter().collect();
            p.push(link);
            p.extend(dst_hop[d]);
            paths.push(p);
        }
    }
    Ok(LinkSim {
        link: l,
        part,
        flows: order,
        paths,
    })
}

impl LinkSim {
    /// Runs it on the packet engine ([`Part::run`]).
    pub fn run(
        &self,
        run: &Run<'_>,
        cfg: &PacketConfig,
    ) -> Result<(Vec<u64>, u64), DecomposeError> {
        self.part.run(run, cfg)
    }
}
