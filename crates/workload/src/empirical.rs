//! The `websearch` and `datamining` generators: single-flow coflows whose
//! sizes follow the empirical CDFs of the flow-scheduling literature, with
//! Karuna's three flow types.
//!
//! Sources. Flow sizes: the DCTCP web-search and VL2 data-mining
//! distributions ([`crate::dist::WEB_SEARCH`], [`crate::dist::DATA_MINING`]),
//! as the CDF files of pFabric (SIGCOMM 2013) and PIAS (NSDI 2015;
//! github.com/HKUST-SING/PIAS-NS2, scripts/CDF_dctcp.tcl and CDF_vl2.tcl)
//! give them and as Karuna (SIGCOMM 2016, Fig. 12) and TAFE (V-A) use them:
//! sizes in 1460-byte packets, linearly interpolated. Arrivals: Poisson
//! (pFabric, PIAS, Karuna 2.2). Flow types: Karuna 2.1 — type 1 has a
//! deadline (and a known size: "in most applications where flows have
//! deadlines, the sizes of these flows are also known", footnote 1), type 2
//! a known size and no deadline, type 3 neither; deadlines exponential with
//! mean 10 ms as in Karuna 2.2 (Fig. 2), or uniform.
//!
//! Each flow, in order, from the main stream: a size (inverse CDF), a
//! source uniform over the hosts, a destination uniform over the other
//! hosts. It is its own coflow (id = its index + 1). Then, from the flow
//! type stream (so the flows do not change with the type shares): a uniform
//! draw `u` per flow, type 1 if `u < type1_fraction`, type 3 if `u <
//! type1_fraction + type3_fraction`, else type 2, and a deadline draw for
//! type 1 (whose size becomes `type1_size` if that is set: the deadline
//! flows of Karuna's Figs. 1-2 have one size). Deadlines are relative to the
//! flow's start. The arrivals are spread after that, so the load counts the
//! type 1 flows at their final size.
//!
//! Load: relative to the hosts' NIC capacity, as in pFabric and PIAS (load
//! 0.8 = each host sends at 80% of its link on average): `total bits /
//! (n_hosts * capacity * span)`. Sources are uniform, so every uplink (and
//! every downlink) sees this load on average. Arrivals are spread so the
//! realized load is exactly the target ([`crate::arrivals`]).

use crate::arrivals::{
    check_at_least, check_fraction, check_positive, main_stream, poisson_arrivals, substream, tags,
    DeadlineSpec,
};
use crate::dist::{EmpiricalCdf, DATA_MINING, WEB_SEARCH};
use crate::error::ConfigError;
use crate::params::Choice;
use coflowkit_model::{flow, BitsPerSec, Bytes, CoflowSpec, Time, Workload};
use rand::RngExt;

/// Which empirical flow-size distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeCdf {
    /// DCTCP web search.
    WebSearch,
    /// VL2 data mining.
    DataMining,
}

impl SizeCdf {
    /// The distribution.
    pub fn cdf(self) -> &'static EmpiricalCdf {
        match self {
            SizeCdf::WebSearch => &WEB_SEARCH,
            SizeCdf::DataMining => &DATA_MINING,
        }
    }
}

impl Choice for SizeCdf {
    const CHOICES: &'static [(&'static str, SizeCdf)] = &[
        ("websearch", SizeCdf::WebSearch),
        ("datamining", SizeCdf::DataMining),
    ];
}

/// What to generate; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalConfig {
    /// The flow-size distribution.
    pub sizes: SizeCdf,
    /// Hosts; sources and destinations are uniform over them (at least 2).
    pub n_hosts: u32,
    /// Flows (each its own coflow).
    pub n_flows: usize,
    /// Target load relative to the hosts' NIC capacity, > 0.
    pub load: f64,
    /// NIC capacity the load refers to, bit/s.
    pub capacity_bps: BitsPerSec,
    /// Seed.
    pub seed: u64,
    /// Share of type 1 flows (with a deadline).
    pub type1_fraction: f64,
    /// Share of type 3 flows (size unknown to every scheduler).
    pub type3_fraction: f64,
    /// How type 1 deadlines are drawn (its `fraction` is unused: the type
    /// shares decide which flows get one).
    pub deadlines: DeadlineSpec,
    /// A fixed size for every type 1 flow (Karuna 2.2, Figs. 1-2: the
    /// deadline flows' size is the experiment's variable); 0: drawn from
    /// the CDF like the others.
    pub type1_bytes: Bytes,
}

impl EmpiricalConfig {
    /// Web search: 144 hosts (the leaf-spine fabric of pFabric, PIAS and
    /// Karuna's simulations), 10,000 flows at load 0.8 on 1 Gbit/s NICs
    /// (Karuna 2.2's load), every flow type 2.
    pub fn websearch() -> EmpiricalConfig {
        EmpiricalConfig {
            sizes: SizeCdf::WebSearch,
            n_hosts: 144,
            n_flows: 10_000,
            load: 0.8,
            capacity_bps: BitsPerSec::GBPS,
            seed: 1,
            type1_fraction: 0.0,
            type3_fraction: 0.0,
            deadlines: DeadlineSpec::default(),
            type1_bytes: Bytes(0),
        }
    }

    /// Data mining, otherwise as [`EmpiricalConfig::websearch`].
    pub fn datamining() -> EmpiricalConfig {
        EmpiricalConfig {
            sizes: SizeCdf::DataMining,
            ..EmpiricalConfig::websearch()
        }
    }

    /// Checks the configuration; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_at_least("n_hosts", u64::from(self.n_hosts), 2)?;
        check_positive("load", self.load)?;
        check_positive("capacity_bps", self.capacity_bps.0)?;
        check_fraction("type1_fraction", self.type1_fraction)?;
        check_fraction("type3_fraction", self.type3_fraction)?;
        if self.type1_fraction + self.type3_fraction > 1.0 + 1e-12 {
            return Err(ConfigError {
                field: "type3_fraction",
                message: format!(
                    "type1_fraction + type3_fraction must be at most 1, got {}",
                    self.type1_fraction + self.type3_fraction
                ),
            });
        }
        DeadlineSpec {
            fraction: self.type1_fraction,
            ..self.deadlines
        }
        .validate("type1_fraction")
    }
}

impl Default for EmpiricalConfig {
    fn default() -> EmpiricalConfig {
        EmpiricalConfig::websearch()
    }
}

/// Generates the workload `config` describes.
///
/// # Panics
/// If `config.validate()` fails.
pub fn generate(config: &EmpiricalConfig) -> Workload {
    if let Err(e) = config.validate() {
        panic!("invalid {} configuration: {e}", config.sizes.cdf().name);
    }
    let cdf = config.sizes.cdf();
    let mut rng = main_stream(config.seed);
    let n = config.n_hosts;
    let mut coflows: Vec<CoflowSpec> = (0..config.n_flows)
        .map(|i| {
            let bytes = cdf.sample_bytes(&mut rng);
            let src = rng.random_range(0..n);
            let mut dst = rng.random_range(0..n - 1);
            if dst >= src {
                dst += 1;
            }
            CoflowSpec::new(i as u64 + 1, Time::ZERO, vec![flow(src, dst, bytes)])
        })
        .collect();

    let mut types = substream(config.seed, tags::FLOW_TYPES);
    for c in &mut coflows {
        let u: f64 = types.random();
        let f = &mut c.flows[0];
        if u < config.type1_fraction {
            f.deadline = Some(config.deadlines.draw(&mut types));
            if config.type1_bytes.0 > 0 {
                f.bytes = config.type1_bytes;
            }
        } else if u < config.type1_fraction + config.type3_fraction {
            f.size_known = false;
        }
    }

    let bits: f64 = coflows.iter().map(|c| c.flows[0].bytes.bits_f64()).sum();
    let span = crate::arrivals::span_for_load(
        bits,
        f64::from(config.n_hosts) * config.capacity_bps.0,
        config.load,
    );
    let mut gaps = substream(config.seed, tags::ARRIVALS);
    for (c, a) in coflows
        .iter_mut()
        .zip(poisson_arrivals(&mut gaps, config.n_flows, span))
    {
        c.arrival = a;
    }
    Workload {
        n_hosts: config.n_hosts,
        coflows,
    }
}

crate::params! { EmpiricalConfig {
    "n_hosts" => n_hosts: "hosts; sources and destinations uniform over them",
    "n_flows" => n_flows: "flows, each its own coflow",
    "load" => load: "offered load: total bits / (n_hosts * capacity * span)",
    "capacity_bps" => capacity_bps: "host NIC capacity the load refers to, bit/s",
    "seed" => seed: "random seed",
    "sizes" => sizes: "flow-size CDF: websearch or datamining",
    "type1_fraction" => type1_fraction: "share of Karuna type 1 flows (deadline, size known)",
    "type3_fraction" => type3_fraction: "share of Karuna type 3 flows (size unknown); the rest are type 2",
    "deadline" => deadlines.law: "type 1 deadline law: exp (mean deadline_mean) or uniform [deadline_min, deadline_max]",
    "deadline_mean" => deadlines.mean: "mean of exponential deadlines (Karuna 2.2: 10ms)",
    "deadline_min" => deadlines.min: "lower end of uniform deadlines",
    "deadline_max" => deadlines.max: "upper end of uniform deadlines",
    "type1_size" => type1_bytes: "fixed size of every type 1 flow (0: drawn from the CDF; Karuna Figs. 1-2)",
}}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TraceStats;
    use coflowkit_model::Dur;

    #[test]
    fn type1_size_fixes_the_deadline_flows_and_nothing_else() {
        let base = EmpiricalConfig {
            n_flows: 500,
            type1_fraction: 0.1,
            ..EmpiricalConfig::datamining()
        };
        let fixed = generate(&EmpiricalConfig {
            type1_bytes: Bytes(5000),
            ..base.clone()
        });
        let drawn = generate(&base);
        for (a, b) in fixed.coflows.iter().zip(&drawn.coflows) {
            let (fa, fb) = (a.flows[0], b.flows[0]);
            assert_eq!(fa.deadline, fb.deadline);
            if fa.deadline.is_some() {
                assert_eq!(fa.bytes, Bytes(5000));
            } else {
                assert_eq!(fa.bytes, fb.bytes);
            }
        }
        assert!(fixed.coflows.iter().any(|c| c.flows[0].deadline.is_some()));
    }

    #[test]
    fn golden_first_flows_for_seed_1() {
        let w = generate(&EmpiricalConfig {
            n_flows: 1000,
            type1_fraction: 0.2,
            type3_fraction: 0.3,
            ..EmpiricalConfig::websearch()
        });
        let got: Vec<_> = w.coflows[..4]
            .iter()
            .map(|c| (c.id.0, c.arrival.0, c.flows[0]))
            .collect();
        let want = vec![
            (1, 0, flow(78, 40, 3110491).size_unknown()),
            (2, 553093, flow(133, 16, 18179470).size_unknown()),
            (3, 754706, flow(48, 12, 16512).size_unknown()),
            (4, 842191, flow(75, 39, 76197)),
        ];
        assert_eq!(got, want);
        let typed = w
            .coflows
            .iter()
            .find(|c| c.flows[0].deadline.is_some())
            .unwrap();
        assert_eq!(
            (typed.id.0, typed.flows[0].deadline),
            (5, Some(Dur(4482112)))
        );
    }

    #[test]
    fn sizes_load_and_types_match_their_targets() {
        // 50,000 flows. Tolerances (about 3 sigma or more): mean size 3%
        // for web search, 6% for data mining (its 1% of flows above 97 MB
        // dominate the mean); the sample CDF 0.01; type shares 0.01;
        // deadline mean 3%; the load is exact by construction.
        for base in [EmpiricalConfig::websearch(), EmpiricalConfig::datamining()] {
            let config = EmpiricalConfig {
                n_flows: 50_000,
                type1_fraction: 0.1,
                type3_fraction: 0.25,
                ..base
            };
            let w = generate(&config);
            let cdf = config.sizes.cdf();
            let sizes: Vec<f64> = w
                .coflows
                .iter()
                .map(|c| c.flows[0].bytes.0 as f64)
                .collect();
            let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
            let tol = if config.sizes == SizeCdf::DataMining {
                0.06
            } else {
                0.03
            };
            assert!(
                (mean / cdf.mean_bytes() - 1.0).abs() < tol,
                "{}: mean {mean}",
                cdf.name
            );
            // The sample CDF within 0.01 of the target at the midpoints of
            // its segments (DKW: false alarm below 2 exp(-2 n 0.01^2) = 1e-4).
            let mut sorted = sizes.clone();
            sorted.sort_by(f64::total_cmp);
            for pair in cdf.points.windows(2) {
                let x = (pair[0].0 + pair[1].0) / 2.0 * cdf.unit_bytes;
                let got = sorted.partition_point(|&s| s <= x) as f64 / sorted.len() as f64;
                let want = cdf.cdf_bytes(x);
                assert!(
                    (got - want).abs() < 0.01,
                    "{} F({x}): {got} vs {want}",
                    cdf.name
                );
            }
            let n = w.coflows.len() as f64;
            let t = |k: u8| {
                w.coflows
                    .iter()
                    .filter(|c| c.flows[0].karuna_type() == k)
                    .count() as f64
                    / n
            };
            assert!(
                (t(1) - 0.1).abs() < 0.01 && (t(3) - 0.25).abs() < 0.01,
                "{} {}",
                t(1),
                t(3)
            );
            assert!((t(2) - 0.65).abs() < 0.01);
            let d: Vec<f64> = w
                .coflows
                .iter()
                .filter_map(|c| c.flows[0].deadline)
                .map(|d| d.0 as f64)
                .collect();
            let dmean = d.iter().sum::<f64>() / d.len() as f64;
            assert!((dmean / 1e7 - 1.0).abs() < 0.03, "deadline mean {dmean}");
            let load = TraceStats::new(&w, config.capacity_bps).offered_load;
            assert!((load.unwrap() - 0.8).abs() < 1e-6);
            assert!(w.coflows.iter().all(|c| c.flows[0].src != c.flows[0].dst));
        }
    }

    #[test]
    fn types_do_not_change_the_flows() {
        let plain = generate(&EmpiricalConfig::datamining());
        let typed = generate(&EmpiricalConfig {
            type1_fraction: 0.5,
            deadlines: DeadlineSpec {
                law: crate::arrivals::DeadlineLaw::Uniform,
                ..DeadlineSpec::default()
            },
            ..EmpiricalConfig::datamining()
        });
        for (a, b) in plain.coflows.iter().zip(&typed.coflows) {
            assert_eq!(
                (a.arrival, a.flows[0].src, a.flows[0].dst, a.flows[0].bytes),
                (b.arrival, b.flows[0].src, b.flows[0].dst, b.flows[0].bytes)
            );
            if let Some(d) = b.flows[0].deadline {
                assert!(d >= Dur::from_millis(5) && d <= Dur::from_millis(25));
            }
        }
    }

    #[test]
    fn validation_names_the_field() {
        let check = |c: EmpiricalConfig| c.validate().unwrap_err().to_string();
        let d = EmpiricalConfig::websearch;
        assert_eq!(
            check(EmpiricalConfig { n_hosts: 1, ..d() }),
            "n_hosts: must be at least 2, got 1"
        );
        assert_eq!(
            check(EmpiricalConfig {
                type1_fraction: 0.6,
                type3_fraction: 0.6,
                ..d()
            }),
            "type3_fraction: type1_fraction + type3_fraction must be at most 1, got 1.2"
        );
    }
}
