//! The tree the `baraat` generator places tasks on, and the load of a workload over the tree's
//! classes of links (what `load` means: [`super`]'s generator spreads arrivals so that the
//! largest class load is `load`).
//!
//! # The tree
//!
//! [`Tree`]: `pods` pods of `racks_per_pod` racks of `hosts_per_rack` hosts,
//! numbered rack-major as the tree fabric numbers them: host `h` is in rack
//! `h / hosts_per_rack`, rack `r` in pod `r / racks_per_pod`. In two-stage
//! workflows the first rack of each pod (local index 0) is its top-level
//! aggregator rack; the other racks hold mid-level aggregators and workers.
//!
//! # Load
//!
//! Baraat's load is "the average load of bottlenecked network links". Here:
//! the links of the tree fall into classes (host uplinks, host downlinks,
//! ToR uplinks, ToR downlinks, pod uplinks, pod downlinks); a class's
//! offered load is the bits its flows put on that class's links per second
//! over the class's total capacity (a flow crosses its source's and
//! destination's host links, both ToR links if the racks differ, both pod
//! links if the pods differ; ToR uplink capacity is `hosts_per_rack *
//! host_rate / tor_oversubscription`, pod uplink capacity `racks_per_pod *`
//! that `/ pod_oversubscription`). The load of the workload is the largest
//! class load: the average load of the most loaded class of links, which is
//! the class that bottlenecks the workload.
//!
//! A class must hold links the generator loads alike, or its average hides
//! a hot spot. Two-stage tasks give racks two roles: top-aggregator racks
//! only receive (each task sends its 30 mid -> top flows, 3% of its bytes,
//! into one of them), the other racks hold every sender and every mid
//! aggregator. So for two-stage workloads the host and ToR classes are each
//! split by [`Racks`] into the top racks' links and the other racks' ([`Tree::class_loads`]).
//! Likewise single-stage tasks with `aggregators = rack` put all of a
//! rack's task bytes on its first host's downlink: their host classes are
//! split into the aggregator hosts' links and the other hosts' ([`Split`]).
//! Without the split, Baraat's tree at "80%" would offer the 30 top racks'
//! ToR downlinks 149% of their capacity (the average over all 900 ToR
//! downlinks is 8.5%), so the backlog of a 10,000-task run would grow
//! without bound; on the reproduction's 2 x 4 x 40 tree the other racks'
//! host links would be offered 107%. Single-stage, storage and data-parallel
//! tasks treat every rack alike: their classes are not split.
//!
//! For the partition-aggregate workflows nearly all bytes stay in a rack
//! and the host links bind (equal for uplinks and downlinks: every byte
//! crosses one of each), except on Baraat's full tree, where the top racks'
//! 2:1 ToR downlinks bind (40 top aggregators share 20 Gbit/s); for storage
//! and data-parallel tasks between random hosts nearly every byte crosses
//! racks and the 2:1 ToR links bind at twice the host links' load.
//! Arrivals are Poisson, spread so
//! that this load over the span of arrivals is exactly `load`
//! ([`crate::arrivals`]). The oversubscription factors only enter this
//! definition: set them to the fabric you simulate on.

use super::{Aggregators, BaraatConfig, Workflow};
use crate::arrivals::{check_at_least, check_positive};
use crate::error::ConfigError;
use coflowkit_model::{CoflowSpec, Workload};

/// A three-level tree: pods of racks of hosts, numbered rack-major.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tree {
    /// Pods.
    pub pods: u32,
    /// Racks per pod.
    pub racks_per_pod: u32,
    /// Hosts per rack.
    pub hosts_per_rack: u32,
    /// Every host's NIC rate, bit/s.
    pub host_rate_bps: f64,
    /// Hosts' total rate over a ToR uplink's capacity (Baraat 5.2: 2).
    pub tor_oversubscription: f64,
    /// ToR uplinks' total capacity over a pod uplink's capacity.
    pub pod_oversubscription: f64,
}

impl Default for Tree {
    /// Baraat 5.2: 30 pods x 30 racks x 40 hosts = 36,000 hosts at 1 Gbit/s,
    /// 2:1 at the ToR (the pod level is not given: 1:1).
    fn default() -> Tree {
        Tree {
            pods: 30,
            racks_per_pod: 30,
            hosts_per_rack: 40,
            host_rate_bps: 1e9,
            tor_oversubscription: 2.0,
            pod_oversubscription: 1.0,
        }
    }
}

/// A class of links of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkClass {
    /// Host -> ToR.
    HostUp,
    /// ToR -> host.
    HostDown,
    /// ToR -> aggregation.
    TorUp,
    /// Aggregation -> ToR.
    TorDown,
    /// Aggregation -> core.
    PodUp,
    /// Core -> aggregation.
    PodDown,
}

impl LinkClass {
    /// All classes, in report order.
    pub const ALL: [LinkClass; 6] = [
        LinkClass::HostUp,
        LinkClass::HostDown,
        LinkClass::TorUp,
        LinkClass::TorDown,
        LinkClass::PodUp,
        LinkClass::PodDown,
    ];
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            LinkClass::HostUp => "host uplinks",
            LinkClass::HostDown => "host downlinks",
            LinkClass::TorUp => "ToR uplinks",
            LinkClass::TorDown => "ToR downlinks",
            LinkClass::PodUp => "pod uplinks",
            LinkClass::PodDown => "pod downlinks",
        }
    }
}

/// Which racks' links a class holds (see the module doc, "Load").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Racks {
    /// Every rack's (workflows that treat all racks alike).
    All,
    /// The pods' top-aggregator racks' (two-stage).
    Top,
    /// The racks that are not top racks (two-stage).
    Other,
    /// The aggregator hosts' (single-stage with `aggregators = rack`).
    AggregatorHosts,
    /// The hosts that are not aggregators (single-stage with `aggregators = rack`).
    OtherHosts,
}

impl Racks {
    /// Its name in reports: empty for `All`.
    pub fn name(self) -> &'static str {
        match self {
            Racks::All => "",
            Racks::Top => "top racks' ",
            Racks::Other => "other racks' ",
            Racks::AggregatorHosts => "aggregator hosts' ",
            Racks::OtherHosts => "other hosts' ",
        }
    }
}

/// The offered load on one class of links.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassLoad {
    /// The class.
    pub class: LinkClass,
    /// Whose links: all racks', or the top or the other racks' (two-stage).
    pub racks: Racks,
    /// Links in the class.
    pub n_links: u64,
    /// Total capacity of the class, bit/s.
    pub capacity_bps: f64,
    /// Bits the workload puts on the class's links.
    pub bits: f64,
    /// `bits / (capacity * span of arrivals)` (`None` for a zero span).
    pub load: Option<f64>,
}

/// How the load's classes of links are split (module doc, "Load"): the
/// host and ToR classes by top racks and other racks (two-stage tasks), and
/// the host classes by aggregator hosts and other hosts (single-stage tasks
/// with one aggregator per rack).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Split {
    /// Top racks apart from the others.
    pub racks: bool,
    /// Aggregator hosts (the first host of each rack) apart from the others.
    pub hosts: bool,
}

impl Split {
    /// The split `config`'s tasks need.
    pub fn of(config: &BaraatConfig) -> Split {
        Split {
            racks: config.workflow == Workflow::TwoStage,
            hosts: config.workflow == Workflow::SingleStage
                && config.aggregators == Aggregators::Rack,
        }
    }
}

impl From<Workflow> for Split {
    /// The split of `workflow` with aggregators anywhere.
    fn from(workflow: Workflow) -> Split {
        Split {
            racks: workflow == Workflow::TwoStage,
            hosts: false,
        }
    }
}

impl Tree {
    /// Hosts.
    pub fn n_hosts(&self) -> u32 {
        self.pods * self.racks_per_pod * self.hosts_per_rack
    }
    /// Racks.
    pub fn n_racks(&self) -> u32 {
        self.pods * self.racks_per_pod
    }
    /// The rack of host `h`.
    pub fn rack_of(&self, h: u32) -> u32 {
        h / self.hosts_per_rack
    }
    /// The pod of rack `r`.
    pub fn pod_of_rack(&self, r: u32) -> u32 {
        r / self.racks_per_pod
    }
    /// The `k`-th host of rack `r`.
    pub fn host(&self, r: u32, k: u32) -> u32 {
        r * self.hosts_per_rack + k
    }
    /// The top-level aggregator rack of pod `p` (its first rack).
    pub fn top_rack(&self, p: u32) -> u32 {
        p * self.racks_per_pod
    }

    /// Checks the shape; errors name the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_at_least("pods", u64::from(self.pods), 1)?;
        check_at_least("racks_per_pod", u64::from(self.racks_per_pod), 1)?;
        check_at_least("hosts_per_rack", u64::from(self.hosts_per_rack), 1)?;
        if u64::from(self.pods) * u64::from(self.racks_per_pod) * u64::from(self.hosts_per_rack)
            > u64::from(u32::MAX)
        {
            return Err(ConfigError {
                field: "pods",
                message: "the tree has more than 2^32 - 1 hosts".into(),
            });
        }
        check_positive("host_rate_bps", self.host_rate_bps)?;
        check_positive("tor_oversubscription", self.tor_oversubscription)?;
        check_positive("pod_oversubscription", self.pod_oversubscription)
    }

    /// Whether rack `r` is its pod's top-aggregator rack.
    pub fn is_top_rack(&self, r: u32) -> bool {
        r.is_multiple_of(self.racks_per_pod)
    }

    /// The classes of links a workload loads alike, in report order: every
    /// [`LinkClass`] over all racks, or as `split` says the host and ToR
    /// classes each split into the top racks' and the other racks' links,
    /// or the host classes into the aggregator hosts' and the other hosts'
    /// (module doc, "Load"). Each with its links and the capacity of one
    /// link in bit/s.
    fn classes(&self, split: Split) -> Vec<(LinkClass, Racks, u64, f64)> {
        let hosts = u64::from(self.n_hosts());
        let racks = u64::from(self.n_racks());
        let pods = u64::from(self.pods);
        let host = self.host_rate_bps;
        let tor = f64::from(self.hosts_per_rack) * host / self.tor_oversubscription;
        let pod = f64::from(self.racks_per_pod) * tor / self.pod_oversubscription;
        let top_hosts = pods * u64::from(self.hosts_per_rack);
        let mut out = Vec::with_capacity(10);
        for class in LinkClass::ALL {
            let (n, per_link, top_n) = match class {
                LinkClass::HostUp | LinkClass::HostDown => (hosts, host, top_hosts),
                LinkClass::TorUp | LinkClass::TorDown => (racks, tor, pods),
                LinkClass::PodUp | LinkClass::PodDown => {
                    out.push((class, Racks::All, pods, pod));
                    continue;
                }
            };
            if split.racks {
                out.push((class, Racks::Top, top_n, per_link));
                out.push((class, Racks::Other, n - top_n, per_link));
            } else if split.hosts && matches!(class, LinkClass::HostUp | LinkClass::HostDown) {
                out.push((class, Racks::AggregatorHosts, racks, per_link));
                out.push((class, Racks::OtherHosts, hosts - racks, per_link));
            } else {
                out.push((class, Racks::All, n, per_link));
            }
        }
        out
    }

    /// Bits each class of [`Tree::classes`] carries for these coflows'
    /// network flows, in the same order.
    fn class_bits(&self, coflows: &[CoflowSpec], split: Split) -> Vec<f64> {
        // The position in `classes` of the `k`-th of LinkClass::ALL for a
        // link of host `h`: split host and ToR classes take two places each
        // (top racks', then the others'), split host classes two places
        // each (aggregator hosts', then the others'), the others one.
        let slot = |k: usize, h: u32| {
            let r = self.rack_of(h);
            if split.racks {
                match k {
                    0..=3 => 2 * k + usize::from(!self.is_top_rack(r)),
                    _ => k + 4,
                }
            } else if split.hosts {
                match k {
                    0..=1 => 2 * k + usize::from(h != self.host(r, 0)),
                    _ => k + 2,
                }
            } else {
                k
            }
        };
        let n = 6 + if split.racks {
            4
        } else if split.hosts {
            2
        } else {
            0
        };
        let mut bytes = vec![0u128; n];
        for f in coflows.iter().flat_map(|c| &c.flows) {
            if f.kind != coflowkit_model::FlowKind::Net || f.src == f.dst {
                continue;
            }
            let b = u128::from(f.bytes.0);
            let (hs, hd) = (f.src.0, f.dst.0);
            let (rs, rd) = (self.rack_of(hs), self.rack_of(hd));
            bytes[slot(0, hs)] += b;
            bytes[slot(1, hd)] += b;
            if rs != rd {
                bytes[slot(2, hs)] += b;
                bytes[slot(3, hd)] += b;
                if self.pod_of_rack(rs) != self.pod_of_rack(rd) {
                    bytes[slot(4, hs)] += b;
                    bytes[slot(5, hd)] += b;
                }
            }
        }
        bytes.into_iter().map(|b| b as f64 * 8.0).collect()
    }

    /// The offered load on every class of links `split` (a [`Workflow`],
    /// or [`Split::of`] a configuration) sets apart ([`Tree::classes`]) over
    /// the span of `w`'s arrivals (see the module doc).
    pub fn class_loads(&self, w: &Workload, split: impl Into<Split>) -> Vec<ClassLoad> {
        let first = w.coflows.iter().map(|c| c.arrival).min();
        let last = w.coflows.iter().map(|c| c.arrival).max();
        let span = match (first, last) {
            (Some(a), Some(b)) => (b - a).as_secs_f64(),
            _ => 0.0,
        };
        self.loads_over(&w.coflows, split.into(), span)
    }

    /// The offered load on every class of links of `coflows` if they
    /// arrived over `span_s` seconds (`None` loads for a zero span).
    pub(super) fn loads_over(
        &self,
        coflows: &[CoflowSpec],
        split: Split,
        span_s: f64,
    ) -> Vec<ClassLoad> {
        let bits = self.class_bits(coflows, split);
        self.classes(split)
            .into_iter()
            .zip(bits)
            .map(|((class, racks, n_links, per_link), bits)| {
                let capacity_bps = n_links as f64 * per_link;
                ClassLoad {
                    class,
                    racks,
                    n_links,
                    capacity_bps,
                    bits,
                    load: (span_s > 0.0).then(|| bits / (capacity_bps * span_s)),
                }
            })
            .collect()
    }

    /// The load of `w`, generated with `split` (a [`Workflow`], or
    /// [`Split::of`] a configuration): its most loaded class's load (`None`
    /// for a zero span).
    pub fn offered_load(&self, w: &Workload, split: impl Into<Split>) -> Option<f64> {
        self.class_loads(w, split)
            .iter()
            .filter_map(|c| c.load)
            .max_by(f64::total_cmp)
    }
}
