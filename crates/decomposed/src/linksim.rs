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
    BitsPerSec, CoflowSpec, CustomSpec, Dur, Fabric, HostId, LinkId, LinkKind, LinkSpec, NodeKind,
    NodeSpec, ValidWorkload, Workload,
};
use coflowkit_packet::PacketConfig;
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
    /// Its small fabric.
    pub fabric: Fabric,
    /// Its flows, as a workload of that fabric.
    pub workload: ValidWorkload,
    /// Each of its flows' index in the whole workload, in its own flow
    /// order.
    pub flows: Vec<u32>,
    /// Each of its flows' path through the small fabric, in that order.
    pub paths: Vec<Vec<Hop>>,
    /// Its ACKs reach their senders crossing no port ([`part_cfg`]).
    pub direct_acks: bool,
    /// Its packets cross their destinations' links with no event: each
    /// of those is at least as fast as the link, the only one that feeds
    /// it, so it never holds two packets ([`part_cfg`]).
    pub direct_last_hop: bool,
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
    let mut nodes: Vec<NodeSpec> = (0..srcs.len())
        .map(name_s)
        .chain((0..dsts.len()).map(name_d))
        .map(|name| NodeSpec {
            name,
            kind: NodeKind::Host,
        })
        .collect();
    for (name, is) in [("A", !uplink), ("B", !downlink)] {
        if is {
            nodes.push(NodeSpec {
                name: name.into(),
                kind: NodeKind::Switch,
            });
        }
    }
    let duplex = |from: String, to: String, rate: u64| LinkSpec {
        from,
        to,
        capacity: BitsPerSec(rate as f64),
        duplex: true,
    };
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
    let small = Fabric::custom(&CustomSpec { nodes, links })
        .map_err(|e| DecomposeError::Link(fabric.link_name(l), e.to_string()))?;
    let delays = small
        .links()
        .iter()
        .map(|x| match x.kind {
            LinkKind::Uplink(h) | LinkKind::Downlink(h) => Some(Dur(host_delay[h.0 as usize])),
            _ => Some(Dur(link.delay)),
        })
        .collect();
    let small = small
        .with_link_delays(delays)
        .map_err(|e| DecomposeError::Link(fabric.link_name(l), e.to_string()))?;
    // The workload: each coflow with the flows of it that cross the link.
    let mut coflows: Vec<CoflowSpec> = vec![];
    let mut members: HashMap<u64, Vec<(u32, usize)>> = HashMap::new();
    for (n, &i) in flows.iter().enumerate() {
        let (c, k) = flow_at[i as usize];
        let orig = &workload.coflows()[c as usize];
        if coflows.last().map(|x| x.id) != Some(orig.id) {
            coflows.push(CoflowSpec {
                id: orig.id,
                arrival: orig.arrival,
                flows: vec![],
                job: orig.job,
                deadline: orig.deadline,
                parents: vec![],
            });
        }
        let (s, d) = ends[n];
        let mut f = orig.flows[k as usize];
        f.src = HostId(s as u32);
        f.dst = HostId((n_src + d) as u32);
        coflows.last_mut().expect("pushed").flows.push(f);
        members.entry(orig.id.0).or_default().push((i, n));
    }
    let n_hosts = (n_src + dsts.len()) as u32;
    let small_workload = Workload { n_hosts, coflows }
        .validate(&small)
        .map_err(|e| DecomposeError::Link(fabric.link_name(l), e.to_string()))?;
    let mut order = Vec::with_capacity(flows.len());
    let mut paths = Vec::with_capacity(flows.len());
    for c in small_workload.coflows() {
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
        fabric: small,
        workload: small_workload,
        flows: order,
        paths,
        direct_acks: direct,
        direct_last_hop: direct
            && !downlink
            && dst_hop
                .iter()
                .all(|h| h.is_some_and(|h| h.rate >= link.rate)),
    })
}

impl LinkSim {
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
        let rows = r
            .sim
            .flows
            .expect("the packet engine keeps every flow's row");
        Ok((
            rows.iter().map(|f| (f.finish - f.start).0).collect(),
            r.packets,
        ))
    }
}
