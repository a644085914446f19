//! The `coflow-benchmark` generator: synthetic coflows with the structure of
//! the Facebook 2010 trace, and the embedded default workload.
//!
//! Sources: Aalo (SIGCOMM 2015) 7.1 and Table 3 for the bins and the mix
//! (short when the longest flow is under 5 MB, narrow with at most 50
//! flows; 52% SN, 16% LN, 15% SW, 17% LW by count, which Varys, SIGCOMM
//! 2014, Table 3 also reports); D-CAS V-A for its setting (80 hosts, 400
//! coflows, short below 10 MB, narrow up to 50 flows, flows of at most
//! 500 MB, all flows of a coflow arriving together, Poisson arrivals at
//! `E(load) = arrival rate * mean coflow size / network throughput`). The
//! presets ([`SynthConfig::aalo`], the default and the embedded workload
//! `make demo` runs; [`SynthConfig::dcas`]) hold these numbers; "MB" in both
//! papers is read as MiB, as the FB2010 trace's sizes are.
//!
//! A coflow is drawn in four steps, each from the seeded [`Pcg64`] in a fixed
//! order, so one seed always gives one workload (the golden test pins it):
//!
//! 1. **Bin.** SN, LN, SW or LW, by the shares in [`SynthConfig::mix`]; a
//!    coflow is short when its largest flow is below
//!    [`SynthConfig::short_below`] and narrow with at most
//!    [`SynthConfig::narrow_up_to`] flows.
//! 2. **Width.** A target width `W` log-uniform over the bin's width range:
//!    `1..=narrow_up_to` when narrow, `narrow_up_to + 1..=min(n_hosts^2,
//!    max_width)` when wide (the default `max_width`, 22,500 = 150^2, is the
//!    widest coflow the 150-port FB2010 trace can hold). `W` is then split
//!    into `m` mappers and `r` reducers, `m` log-uniform over the values that
//!    keep both at most `n_hosts`, `r = floor(W / m)` (plus one if a wide
//!    coflow would fall to `narrow_up_to` flows or fewer). The width `m * r`
//!    is therefore in the bin's range. Mappers and reducers are distinct
//!    random hosts (a host may be both, giving a src == dst flow, as in the
//!    trace).
//! 3. **Sizes.** Each reducer gets a per-flow size `s`: log-uniform over
//!    `[min_short_flow, short_below - 2]` bytes for a short coflow; for a
//!    long one Pareto with scale `short_below` and shape `long_shape`
//!    (heavy-tailed, mean about 6 x scale for the default 1.2 before the
//!    cap), capped at `max_flow - 1`. The reducer receives `s * m + e`
//!    bytes, `e` uniform in `0..m`, split over the mappers by the benchmark
//!    convention ([`crate::benchmark`]): flows of `s` or `s+1` bytes. So a
//!    short coflow's largest flow is below `short_below`, a long one's at
//!    least `short_below`, every flow at most `max_flow`, and the drawn bin
//!    is the coflow's bin under the configured thresholds. The shape 1.2 is
//!    this generator's choice, not a fit: with it, long and wide coflows
//!    carry nearly all bytes, as in the trace (Varys Table 3: LW 99% of
//!    bytes).
//! 4. **Arrivals.** Poisson ([`crate::arrivals::poisson_arrivals`]). The load
//!    is the D-CAS (V-A) definition, `load = rate * mean coflow bytes /
//!    (n_hosts * capacity)`, the network throughput being the sum of the
//!    hosts' NIC capacities; the arrivals are scaled so that the realized
//!    offered load, `total bits / (n_hosts * capacity * (last - first
//!    arrival))`, equals the target exactly. Coflow ids are 1, 2, ... in
//!    arrival order; all flows of a coflow arrive with it.
//!
//! Optionally a share of the coflows gets a deadline
//! ([`crate::arrivals::DeadlineSpec`], drawn from its own stream so the
//! coflows are the same with or without deadlines).
//!
//! **Coflow sizes** ([`SizeLaw`]; Aalo 7.5, Fig. 13, "coflow sizes follow
//! uniform distributions U(0,x)" and "all coflows have the same size", the
//! structures following Table 3). By default (`bins`) a coflow's bytes are
//! what step 3 drew. With `uniform` every coflow's total is drawn uniform in
//! `1..=coflow_size` bytes, with `fixed` it is `coflow_size`; steps 1-3 run
//! as before (so the widths, hosts and the relative sizes of a coflow's
//! flows are the `bins` workload's) and the flows are then scaled to the
//! total: flow `i` of `b_i` bytes out of the coflow's `B` gets
//! `floor(T * b_i / B)`, the `T - sum` bytes left over go one each to the
//! first flows, and a flow has at least 1 byte (so a total below the width
//! is exceeded). The totals come from their own stream; the arrivals then
//! follow the scaled bytes, at the same load. A coflow's bin is then its
//! scaled length's.

use crate::arrivals::{check_at_least, check_positive, substream, tags, DeadlineSpec};
use crate::benchmark::shuffle_flows;
use crate::error::ConfigError;
use crate::params::Choice;
use coflowkit_model::{Bin, BitsPerSec, Bytes, CoflowSpec, Time, Workload};
use rand::{RngExt, SeedableRng};
use rand_distr::Pareto;
use rand_pcg::Pcg64;

/// The default widest coflow: 150^2, the most flows a 150-port trace can hold.
pub const MAX_WIDTH: u64 = 150 * 150;
/// The default smallest per-flow size of a short coflow.
pub const SHORT_MIN_FLOW: Bytes = Bytes(1 << 10);
/// The default Pareto scale of a long coflow's per-flow sizes (Aalo's short/long boundary).
pub const LONG_SCALE: Bytes = Bin::SHORT_BELOW;
/// The default Pareto shape of a long coflow's per-flow sizes.
pub const LONG_SHAPE: f64 = 1.2;
/// The default cap on a flow's size.
pub const MAX_FLOW: Bytes = Bytes(1 << 30);

/// How a coflow's total size is set (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeLaw {
    /// As drawn per bin (step 3): the trace-like heavy tail.
    Bins,
    /// Uniform in `1..=coflow_size` bytes (Aalo Fig. 13a).
    Uniform,
    /// Exactly `coflow_size` bytes (Aalo Fig. 13b).
    Fixed,
}

impl Choice for SizeLaw {
    const CHOICES: &'static [(&'static str, SizeLaw)] = &[
        ("bins", SizeLaw::Bins),
        ("uniform", SizeLaw::Uniform),
        ("fixed", SizeLaw::Fixed),
    ];
}

/// What to generate; see the module doc for how each field is used. The
/// default is the [`SynthConfig::aalo`] preset.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthConfig {
    /// Hosts (ports of the big switch).
    pub n_hosts: u32,
    /// Coflows to generate.
    pub n_coflows: usize,
    /// Target offered load (D-CAS V-A definition), > 0.
    pub load: f64,
    /// Port capacity the load refers to, in bit/s.
    pub capacity_bps: BitsPerSec,
    /// Seed of the generator.
    pub seed: u64,
    /// Shares of SN, LN, SW and LW coflows by count (normalized to their sum).
    pub mix: [f64; 4],
    /// A coflow is short when its largest flow is below this.
    pub short_below: Bytes,
    /// A coflow is narrow with at most this many flows.
    pub narrow_up_to: u64,
    /// No flow is larger than this.
    pub max_flow: Bytes,
    /// No coflow has more flows than this (nor than `n_hosts^2`).
    pub max_width: u64,
    /// The smallest per-flow size of a short coflow.
    pub min_short_flow: Bytes,
    /// The Pareto shape of long coflows' per-flow sizes.
    pub long_shape: f64,
    /// Which coflows get a deadline (none by default).
    pub deadlines: DeadlineSpec,
    /// How a coflow's total size is set.
    pub size_law: SizeLaw,
    /// The largest (`uniform`) or every (`fixed`) coflow's total size.
    pub coflow_size: Bytes,
}

impl Default for SynthConfig {
    fn default() -> SynthConfig {
        SynthConfig::aalo()
    }
}

impl SynthConfig {
    /// Aalo 7.1 / Table 3 (the FB2010 trace's mix): 52/16/15/17% SN/LN/SW/LW,
    /// short below 5 MiB, narrow up to 50 flows; 50 hosts, 200 coflows at
    /// load 0.8 on 1 Gbit/s ports, flows up to 1 GiB. This is the embedded
    /// default workload.
    pub fn aalo() -> SynthConfig {
        SynthConfig {
            n_hosts: 50,
            n_coflows: 200,
            load: 0.8,
            capacity_bps: BitsPerSec::GBPS,
            seed: 1,
            mix: [0.52, 0.16, 0.15, 0.17],
            short_below: Bin::SHORT_BELOW,
            narrow_up_to: Bin::NARROW_UP_TO as u64,
            max_flow: MAX_FLOW,
            max_width: MAX_WIDTH,
            min_short_flow: SHORT_MIN_FLOW,
            long_shape: LONG_SHAPE,
            deadlines: DeadlineSpec::default(),
            size_law: SizeLaw::Bins,
            coflow_size: Bytes(1 << 30),
        }
    }

    /// D-CAS V-A: 80 hosts, 400 coflows, the same mix, short below 10 MiB,
    /// narrow up to 50 flows, flows up to 500 MiB, load 1 (`lambda =
    /// throughput / mean coflow size`), 1 Gbit/s ports.
    pub fn dcas() -> SynthConfig {
        SynthConfig {
            n_hosts: 80,
            n_coflows: 400,
            load: 1.0,
            short_below: Bytes(10 << 20),
            max_flow: Bytes(500 << 20),
            ..SynthConfig::aalo()
        }
    }

    /// The bin of a coflow with this length and width under this
    /// configuration's thresholds.
    pub fn bin_of(&self, length: Bytes, width: usize) -> Bin {
        match (length < self.short_below, width as u64 <= self.narrow_up_to) {
            (true, true) => Bin::SN,
            (false, true) => Bin::LN,
            (true, false) => Bin::SW,
            (false, false) => Bin::LW,
        }
    }

    /// Checks the configuration; the error names the field at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &'static str, message: String| Err(ConfigError { field, message });
        if self.n_hosts == 0 {
            return bad("n_hosts", "must be at least 1".into());
        }
        check_positive("load", self.load)?;
        check_positive("capacity_bps", self.capacity_bps.0)?;
        if let Some((k, s)) = self
            .mix
            .iter()
            .enumerate()
            .find(|(_, s)| !(s.is_finite() && **s >= 0.0))
        {
            return bad(
                "mix",
                format!(
                    "the {} share must be a finite number >= 0, got {s}",
                    Bin::ALL[k].name()
                ),
            );
        }
        if self.mix.iter().sum::<f64>() <= 0.0 {
            return bad("mix", "at least one share must be positive".into());
        }
        check_at_least("narrow_up_to", self.narrow_up_to, 1)?;
        check_at_least("min_short_flow", self.min_short_flow.0, 1)?;
        if self.short_below.0 < self.min_short_flow.0 + 2 {
            return bad(
                "short_below",
                format!(
                    "must be at least min_short_flow + 2 = {} bytes, got {}",
                    self.min_short_flow.0 + 2,
                    self.short_below.0
                ),
            );
        }
        if self.max_flow <= self.short_below {
            return bad(
                "max_flow",
                format!(
                    "must be above short_below ({} bytes), got {}",
                    self.short_below.0, self.max_flow.0
                ),
            );
        }
        check_positive("long_shape", self.long_shape)?;
        if self.size_law != SizeLaw::Bins {
            check_at_least("coflow_size", self.coflow_size.0, 1)?;
        }
        self.deadlines.validate("deadline_fraction")?;
        let wide = self.mix[2] + self.mix[3] > 0.0;
        if wide && self.max_width <= self.narrow_up_to {
            return bad(
                "max_width",
                format!(
                    "wide coflows need max_width above narrow_up_to ({}), got {} (or set the SW and LW shares to 0)",
                    self.narrow_up_to, self.max_width
                ),
            );
        }
        if wide && u64::from(self.n_hosts).pow(2) <= self.narrow_up_to {
            let need = (self.narrow_up_to + 1).isqrt()
                + u64::from((self.narrow_up_to + 1).isqrt().pow(2) < self.narrow_up_to + 1);
            return bad(
                "n_hosts",
                format!(
                    "wide coflows (more than {} flows) need at least {need} hosts, got {} (or set the SW and LW shares to 0)",
                    self.narrow_up_to,
                    self.n_hosts
                ),
            );
        }
        Ok(())
    }
}

/// Generates the workload `config` describes.
///
/// # Panics
/// If `config.validate()` fails; call it first on configurations from users.
pub fn generate(config: &SynthConfig) -> Workload {
    if let Err(e) = config.validate() {
        panic!("invalid coflow-benchmark configuration: {e}");
    }
    let mut rng = Pcg64::seed_from_u64(config.seed);
    let mut coflows: Vec<CoflowSpec> = (0..config.n_coflows)
        .map(|i| draw_coflow(&mut rng, config, i as u64 + 1).1)
        .collect();
    if config.size_law != SizeLaw::Bins {
        let mut sizes = substream(config.seed, tags::COFLOW_SIZES);
        for c in &mut coflows {
            let total = match config.size_law {
                SizeLaw::Uniform => sizes.random_range(1..=config.coflow_size.0),
                _ => config.coflow_size.0,
            };
            scale_to(c, total);
        }
    }

    // Arrivals: exponential gaps, scaled so the realized load is the target.
    let total_bits: f64 = coflows
        .iter()
        .flat_map(|c| &c.flows)
        .map(|f| f.bytes.bits_f64())
        .sum();
    let span_ns =
        total_bits / (config.load * f64::from(config.n_hosts) * config.capacity_bps.0) * 1e9;
    let arrivals = crate::arrivals::poisson_arrivals(&mut rng, coflows.len(), span_ns);
    for (c, a) in coflows.iter_mut().zip(arrivals) {
        c.arrival = a;
    }
    config.deadlines.apply_to_coflows(&mut coflows, config.seed);
    Workload {
        n_hosts: config.n_hosts,
        coflows,
    }
}

/// Draws one coflow with id `id`; returns the bin it was drawn for.
pub(crate) fn draw_coflow(rng: &mut Pcg64, config: &SynthConfig, id: u64) -> (Bin, CoflowSpec) {
    let n = u64::from(config.n_hosts);
    let bin = draw_bin(rng, &config.mix);
    let narrow = matches!(bin, Bin::SN | Bin::LN);
    let short = matches!(bin, Bin::SN | Bin::SW);

    // Width: W log-uniform over the class, split into m mappers x r reducers.
    let narrow_max = config.narrow_up_to;
    let (lo, hi) = if narrow {
        (1, narrow_max.min(n * n))
    } else {
        (narrow_max + 1, config.max_width.min(n * n))
    };
    let w = log_uniform(rng, lo, hi);
    let m = log_uniform(rng, w.div_ceil(n), n.min(w));
    let mut r = w / m;
    if !narrow && m * r <= narrow_max {
        r += 1;
    }

    let mut mappers = distinct_hosts(rng, config.n_hosts, m);
    let mut reducer_hosts = distinct_hosts(rng, config.n_hosts, r);
    mappers.sort_unstable();
    reducer_hosts.sort_unstable();

    // Sizes: a per-flow size per reducer, times m, plus a remainder below m.
    let scale = config.short_below;
    let pareto = Pareto::new(scale.0 as f64, config.long_shape)
        .expect("validated Pareto parameters are valid");
    let reducers: Vec<(u32, u64)> = reducer_hosts
        .into_iter()
        .map(|h| {
            let s = if short {
                log_uniform(rng, config.min_short_flow.0, scale.0 - 2)
            } else {
                let x: f64 = rng.sample(pareto);
                (x as u64).clamp(scale.0, config.max_flow.0 - 1)
            };
            (h, s * m + rng.random_range(0..m))
        })
        .collect();
    (
        bin,
        CoflowSpec::new(id, Time::ZERO, shuffle_flows(&mappers, &reducers)),
    )
}

/// Scales a coflow's flows to `total` bytes, keeping their proportions (see
/// the module doc): `floor(total * b / B)` each, the remainder one byte each
/// to the first flows, at least 1 byte a flow.
pub fn scale_to(c: &mut CoflowSpec, total: u64) {
    let before = u128::from(c.total_bytes().0.max(1));
    let mut given = 0u64;
    for f in &mut c.flows {
        f.bytes = Bytes((u128::from(total) * u128::from(f.bytes.0) / before) as u64);
        given += f.bytes.0;
    }
    let mut left = total.saturating_sub(given);
    for f in &mut c.flows {
        if left > 0 {
            f.bytes.0 += 1;
            left -= 1;
        }
        f.bytes.0 = f.bytes.0.max(1);
    }
}

/// A bin drawn with probabilities proportional to `mix`.
fn draw_bin(rng: &mut Pcg64, mix: &[f64; 4]) -> Bin {
    let total: f64 = mix.iter().sum();
    let mut u = rng.random::<f64>() * total;
    for (k, &share) in mix.iter().enumerate() {
        if u < share {
            return Bin::ALL[k];
        }
        u -= share;
    }
    // Rounding left u at the very top: the last bin with a positive share.
    let k = mix.iter().rposition(|&s| s > 0.0).unwrap_or(0);
    Bin::ALL[k]
}

/// An integer in `lo..=hi` (1 <= lo <= hi) whose logarithm is uniform.
pub(crate) fn log_uniform(rng: &mut Pcg64, lo: u64, hi: u64) -> u64 {
    let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
    let x = (a + rng.random::<f64>() * (b - a)).exp();
    (x as u64).clamp(lo, hi)
}

/// `amount` distinct hosts out of `n_hosts`, in random order.
pub(crate) fn distinct_hosts(rng: &mut Pcg64, n_hosts: u32, amount: u64) -> Vec<u32> {
    rand::seq::index::sample(rng, n_hosts as usize, amount as usize)
        .into_iter()
        .map(|h| h as u32)
        .collect()
}

crate::params! { SynthConfig {
    deadlines("coflows") => deadlines;
    "n_hosts" => n_hosts: "hosts (ports of the big switch)",
    "n_coflows" => n_coflows: "coflows to generate",
    "load" => load: "offered load: total bits / (n_hosts * capacity * span), D-CAS V-A",
    "capacity_bps" => capacity_bps: "host NIC capacity the load refers to, bit/s",
    "seed" => seed: "random seed",
    "mix" => mix: "shares of SN,LN,SW,LW coflows by count",
    "short_below" => short_below: "a coflow is short when its longest flow is below this",
    "narrow_up_to" => narrow_up_to: "a coflow is narrow with at most this many flows",
    "max_flow" => max_flow: "largest flow",
    "max_width" => max_width: "most flows in a coflow (also at most n_hosts^2)",
    "min_short_flow" => min_short_flow: "smallest per-flow size of a short coflow",
    "long_shape" => long_shape: "Pareto shape of long coflows' per-flow sizes (scale short_below)",
    "size_law" => size_law: "coflow totals: bins (as drawn per bin), uniform (1..=coflow_size) or fixed (coflow_size); Aalo Fig. 13",
    "coflow_size" => coflow_size: "largest (uniform) or every (fixed) coflow's total size",
}}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TraceStats;
    use coflowkit_model::{flow, BitsPerSec, Dur};

    #[test]
    fn golden_first_coflows_for_seed_1() {
        // Pins the default workload: a dependency bump that changes any draw
        // fails here. Regenerate the values only on purpose.
        let w = generate(&SynthConfig::default());
        let got: Vec<_> = w.coflows[..4]
            .iter()
            .map(|c| {
                (
                    c.id.0,
                    c.arrival.0,
                    c.bin(),
                    c.width(),
                    c.total_bytes().0,
                    c.flows[0],
                )
            })
            .collect();
        let want = vec![
            (1, 0, Bin::LW, 54, 890_635_239, flow(32, 2, 8_013_436)),
            (2, 574_369_730, Bin::SN, 33, 17_330_021, flow(0, 1, 874_750)),
            (
                3,
                866_624_852,
                Bin::LN,
                1,
                67_772_198,
                flow(17, 48, 67_772_198),
            ),
            (
                4,
                1_041_904_352,
                Bin::LW,
                360,
                19_472_118_521,
                flow(0, 0, 23_680_248),
            ),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn every_coflow_lands_in_its_drawn_bin() {
        for preset in [SynthConfig::aalo(), SynthConfig::dcas()] {
            for (n_hosts, seed) in [(8, 3), (9, 4), (50, 5), (150, 6), (2000, 7)] {
                let config = SynthConfig {
                    n_hosts,
                    seed,
                    ..preset.clone()
                };
                let mut rng = Pcg64::seed_from_u64(seed);
                for id in 0..400 {
                    let (bin, c) = draw_coflow(&mut rng, &config, id);
                    assert_eq!(
                        config.bin_of(c.length(), c.width()),
                        bin,
                        "n_hosts {n_hosts}, coflow {id}"
                    );
                    assert!(c.width() as u64 <= config.max_width.min(u64::from(n_hosts).pow(2)));
                    assert!(c.length() <= config.max_flow);
                    assert!(c
                        .flows
                        .iter()
                        .all(|f| f.src.0 < n_hosts && f.dst.0 < n_hosts));
                }
            }
        }
    }

    #[test]
    fn dcas_preset_matches_its_targets_over_4000_coflows() {
        // D-CAS V-A: 80 hosts, mix 52/16/15/17% by count with short < 10 MiB
        // and narrow <= 50 flows, flows <= 500 MiB, load 1. Tolerances: 0.03
        // on each share (3 sigma of a binomial share over 4000 draws is at
        // most 0.024); the load is exact by construction.
        let config = SynthConfig {
            n_coflows: 4000,
            ..SynthConfig::dcas()
        };
        let w = generate(&config);
        assert_eq!((w.n_hosts, w.coflows.len()), (80, 4000));
        let mut counts = [0usize; 4];
        for c in &w.coflows {
            counts[Bin::ALL
                .iter()
                .position(|&b| b == config.bin_of(c.length(), c.width()))
                .unwrap()] += 1;
            assert!(c.length() <= Bytes(500 << 20));
        }
        for (k, want) in config.mix.iter().enumerate() {
            let share = counts[k] as f64 / 4000.0;
            assert!(
                (share - want).abs() < 0.03,
                "{:?}: {share} vs {want}",
                Bin::ALL[k]
            );
        }
        let stats = TraceStats::new(&w, config.capacity_bps);
        assert!((stats.offered_load.unwrap() - 1.0).abs() < 1e-6);
        assert_eq!(generate(&SynthConfig::dcas()).coflows.len(), 400);
    }

    #[test]
    fn deadlines_leave_the_coflows_unchanged() {
        let plain = generate(&SynthConfig::default());
        let config = SynthConfig {
            n_coflows: 2000,
            deadlines: DeadlineSpec {
                fraction: 0.25,
                mean: Dur::from_millis(100),
                ..DeadlineSpec::default()
            },
            ..SynthConfig::default()
        };
        let with = generate(&config);
        // The first 200 coflows' flows do not depend on later ones or on deadlines.
        for (a, b) in plain.coflows.iter().zip(&with.coflows) {
            assert_eq!(a.flows, b.flows);
        }
        let d: Vec<f64> = with
            .coflows
            .iter()
            .filter_map(|c| c.deadline)
            .map(|d| d.0 as f64)
            .collect();
        let share = d.len() as f64 / 2000.0;
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        // 3 sigma: share +- 0.03, exponential mean +- 3/sqrt(500) ~ 13%.
        assert!((share - 0.25).abs() < 0.03, "share {share}");
        assert!((mean / 1e8 - 1.0).abs() < 0.15, "mean {mean}");
    }

    #[test]
    fn mix_and_load_match_the_target_over_2000_coflows() {
        let config = SynthConfig {
            n_coflows: 2000,
            ..SynthConfig::default()
        };
        let w = generate(&config);
        let stats = TraceStats::new(&w, config.capacity_bps);
        for (b, want) in stats.bins.iter().zip(config.mix) {
            assert!(
                (b.count_share - want).abs() <= 0.05,
                "{:?}: {} vs {want}",
                b.bin,
                b.count_share
            );
        }
        let load = stats.offered_load.unwrap();
        assert!((load / config.load - 1.0).abs() <= 0.05, "load {load}");
        assert!(w.coflows.windows(2).all(|p| p[0].arrival <= p[1].arrival));
    }

    #[test]
    fn scaling_keeps_proportions_and_the_total() {
        let mut c = CoflowSpec::new(
            1,
            Time::ZERO,
            vec![flow(0, 1, 3), flow(0, 2, 1), flow(1, 2, 4)],
        );
        scale_to(&mut c, 80);
        let got: Vec<u64> = c.flows.iter().map(|f| f.bytes.0).collect();
        assert_eq!(got, vec![30, 10, 40]);
        // 11 * 3/8 = 4.125, 11 * 1/8 = 1.375, 11 * 4/8 = 5.5: floors 4, 1, 5, one byte left.
        scale_to(&mut c, 11);
        let got: Vec<u64> = c.flows.iter().map(|f| f.bytes.0).collect();
        assert_eq!(got, vec![5, 1, 5]);
        // Below the width every flow still has a byte.
        scale_to(&mut c, 1);
        let got: Vec<u64> = c.flows.iter().map(|f| f.bytes.0).collect();
        assert_eq!(got, vec![1, 1, 1]);
    }

    #[test]
    fn uniform_and_fixed_sizes_keep_the_structure_and_the_load() {
        let bins = SynthConfig {
            n_coflows: 300,
            ..SynthConfig::default()
        };
        let base = generate(&bins);
        for (law, size) in [(SizeLaw::Uniform, 100u64 << 20), (SizeLaw::Fixed, 11 << 20)] {
            let config = SynthConfig {
                size_law: law,
                coflow_size: Bytes(size),
                ..bins.clone()
            };
            let w = generate(&config);
            let mut totals = Vec::new();
            for (a, b) in w.coflows.iter().zip(&base.coflows) {
                assert_eq!(a.id, b.id);
                let ends =
                    |c: &CoflowSpec| c.flows.iter().map(|f| (f.src, f.dst)).collect::<Vec<_>>();
                assert_eq!(ends(a), ends(b), "coflow {:?}: hosts changed", a.id);
                let t = a.total_bytes().0;
                if a.width() as u64 <= size {
                    assert!(t <= size, "coflow {:?}: {t} bytes", a.id);
                }
                if law == SizeLaw::Fixed && a.width() as u64 <= size {
                    assert_eq!(t, size);
                }
                totals.push(t as f64);
            }
            if law == SizeLaw::Uniform {
                // 300 draws of U(1, x): mean x/2 within 3 sigma (x / sqrt(12 * 300) ~ 1.7% of x).
                let mean = totals.iter().sum::<f64>() / totals.len() as f64;
                assert!((mean / size as f64 - 0.5).abs() < 0.05, "mean {mean}");
            }
            let stats = TraceStats::new(&w, config.capacity_bps);
            let load = stats.offered_load.unwrap();
            assert!((load / config.load - 1.0).abs() < 1e-6, "load {load}");
        }
    }

    #[test]
    fn narrow_only_mixes_work_on_tiny_fabrics() {
        let config = SynthConfig {
            n_hosts: 1,
            mix: [1.0, 1.0, 0.0, 0.0],
            n_coflows: 20,
            ..SynthConfig::default()
        };
        let w = generate(&config);
        assert!(w
            .coflows
            .iter()
            .all(|c| c.flows == vec![flow(0, 0, c.flows[0].bytes.0)]));
    }

    #[test]
    fn the_seed_decides_the_workload() {
        let a = generate(&SynthConfig::default());
        assert_eq!(a, generate(&SynthConfig::default()));
        assert_ne!(
            a,
            generate(&SynthConfig {
                seed: 2,
                ..SynthConfig::default()
            })
        );
        assert_eq!(a.coflows.len(), 200);
        assert_eq!(a.n_hosts, 50);
    }

    #[test]
    fn validation_names_the_field() {
        let check = |c: SynthConfig| c.validate().unwrap_err().to_string();
        let d = SynthConfig::default;
        assert_eq!(
            check(SynthConfig { n_hosts: 0, ..d() }),
            "n_hosts: must be at least 1"
        );
        assert_eq!(
            check(SynthConfig { n_hosts: 7, ..d() }),
            "n_hosts: wide coflows (more than 50 flows) need at least 8 hosts, got 7 (or set the SW and LW shares to 0)"
        );
        assert_eq!(
            check(SynthConfig { load: 0.0, ..d() }),
            "load: must be a positive finite number, got 0"
        );
        assert_eq!(
            check(SynthConfig {
                load: f64::NAN,
                ..d()
            }),
            "load: must be a positive finite number, got NaN"
        );
        assert_eq!(
            check(SynthConfig {
                capacity_bps: BitsPerSec(-1.0),
                ..d()
            }),
            "capacity_bps: must be a positive finite number, got -1"
        );
        assert_eq!(
            check(SynthConfig {
                mix: [0.5, -0.1, 0.3, 0.3],
                ..d()
            }),
            "mix: the LN share must be a finite number >= 0, got -0.1"
        );
        assert_eq!(
            check(SynthConfig {
                mix: [0.0; 4],
                ..d()
            }),
            "mix: at least one share must be positive"
        );
        assert_eq!(SynthConfig { n_hosts: 8, ..d() }.validate(), Ok(()));
    }
}
