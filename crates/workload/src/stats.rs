//! Summary statistics of a workload: what `coflowkit trace info PATH` prints.
//!
//! Offered load is `total bytes * 8 / (n_hosts * capacity * span)`, where the
//! span runs from the first to the last arrival: the D-CAS (V-A) load with the
//! arrival rate estimated as coflows per span. Percentiles are nearest-rank
//! (the model's `stats::percentile_sorted`): the p-th percentile is the
//! smallest value that at least p% of the values do not exceed. A coflow's width is its number of flows and its length its
//! largest flow (Aalo 7.1), which also decide its [`Bin`].

use coflowkit_model::stats::percentile_sorted;
use coflowkit_model::{Bin, BitsPerSec, Dur, FlowKind, Time, Workload};
use std::fmt;

/// p50, p95 and max of a set of values (all 0 for an empty set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Percentiles {
    /// The median (nearest rank).
    pub p50: u64,
    /// The 95th percentile (nearest rank).
    pub p95: u64,
    /// The largest value.
    pub max: u64,
}

impl Percentiles {
    /// The percentiles of `values` (sorts them), by the model's nearest-rank
    /// [`percentile_sorted`] (exact below 2^53; `max` is always exact).
    pub fn of(values: &mut [u64]) -> Percentiles {
        values.sort_unstable();
        let Some(&max) = values.last() else {
            return Percentiles::default();
        };
        let as_f64: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        let rank = |q: f64| percentile_sorted(&as_f64, q) as u64;
        Percentiles {
            p50: rank(50.0),
            p95: rank(95.0),
            max,
        }
    }
}

/// Coflows and bytes in one bin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinStats {
    /// The bin.
    pub bin: Bin,
    /// Coflows in it.
    pub n_coflows: usize,
    /// Its share of all coflows, in 0..=1 (0 when there are none).
    pub count_share: f64,
    /// Bytes of its coflows (saturating at `u64::MAX`).
    pub bytes: u64,
    /// Its share of all bytes, in 0..=1 (0 when there are none).
    pub byte_share: f64,
}

/// Summary statistics of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStats {
    /// Hosts the workload is for.
    pub n_hosts: u32,
    /// Coflows.
    pub n_coflows: usize,
    /// Flows.
    pub n_flows: usize,
    /// Bytes of all flows (saturating at `u64::MAX`).
    pub total_bytes: u64,
    /// The earliest arrival (`None` without coflows).
    pub first_arrival: Option<Time>,
    /// The latest arrival (`None` without coflows).
    pub last_arrival: Option<Time>,
    /// The port capacity `offered_load` refers to.
    pub capacity: BitsPerSec,
    /// Offered load on ports of `capacity` (`None` when the span is zero).
    pub offered_load: Option<f64>,
    /// Counts and byte shares per bin, in [`Bin::ALL`] order.
    pub bins: [BinStats; 4],
    /// Coflow widths (flows per coflow).
    pub width: Percentiles,
    /// Coflow lengths (largest flow, bytes).
    pub length: Percentiles,
    /// How many flows and coflows use the fields beyond plain transfers.
    pub features: Features,
}

/// Counts of flows and coflows that use groups, delays, compute stages,
/// deadlines, hidden sizes, jobs or dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Features {
    /// Compute stages.
    pub n_compute: usize,
    /// Flows that wait for a group.
    pub n_after: usize,
    /// Flows with a release delay.
    pub n_delayed: usize,
    /// Flows with a deadline.
    pub n_flow_deadlines: usize,
    /// Flows whose size is hidden from every scheduler.
    pub n_size_unknown: usize,
    /// Coflows with a deadline.
    pub n_coflow_deadlines: usize,
    /// Coflows in a job.
    pub n_in_jobs: usize,
    /// Coflows with parents.
    pub n_with_parents: usize,
}

impl Features {
    /// The counts for `w`.
    pub fn of(w: &Workload) -> Features {
        let mut f = Features::default();
        for c in &w.coflows {
            f.n_coflow_deadlines += usize::from(c.deadline.is_some());
            f.n_in_jobs += usize::from(c.job.is_some());
            f.n_with_parents += usize::from(!c.parents.is_empty());
            for x in &c.flows {
                f.n_compute += usize::from(x.kind == FlowKind::Compute);
                f.n_after += usize::from(x.after.is_some());
                f.n_delayed += usize::from(x.delay > Dur::ZERO);
                f.n_flow_deadlines += usize::from(x.deadline.is_some());
                f.n_size_unknown += usize::from(!x.size_known);
            }
        }
        f
    }

    /// True when no flow or coflow uses any of these fields.
    pub fn is_empty(&self) -> bool {
        *self == Features::default()
    }
}

impl TraceStats {
    /// The statistics of `w`, with offered load on ports of `capacity`.
    pub fn new(w: &Workload, capacity: BitsPerSec) -> TraceStats {
        let mut widths = Vec::with_capacity(w.coflows.len());
        let mut lengths = Vec::with_capacity(w.coflows.len());
        let mut counts = [0usize; 4];
        let mut bytes = [0u128; 4];
        for c in &w.coflows {
            let length = c.length();
            widths.push(c.width() as u64);
            lengths.push(length.0);
            let k = bin_index(Bin::of(length, c.width()));
            counts[k] += 1;
            bytes[k] += c.flows.iter().map(|f| u128::from(f.bytes.0)).sum::<u128>();
        }
        let n = w.coflows.len();
        let total: u128 = bytes.iter().sum();
        let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
        let bins = std::array::from_fn(|k| BinStats {
            bin: Bin::ALL[k],
            n_coflows: counts[k],
            count_share: share(counts[k] as f64, n as f64),
            bytes: saturate(bytes[k]),
            byte_share: share(bytes[k] as f64, total as f64),
        });
        let mut stats = TraceStats {
            n_hosts: w.n_hosts,
            n_coflows: n,
            n_flows: w.coflows.iter().map(|c| c.flows.len()).sum(),
            total_bytes: saturate(total),
            first_arrival: w.coflows.iter().map(|c| c.arrival).min(),
            last_arrival: w.coflows.iter().map(|c| c.arrival).max(),
            capacity,
            offered_load: None,
            bins,
            width: Percentiles::of(&mut widths),
            length: Percentiles::of(&mut lengths),
            features: Features::of(w),
        };
        stats.offered_load = stats.load_on(capacity);
        stats
    }

    /// From the first to the last arrival.
    pub fn span(&self) -> Dur {
        match (self.first_arrival, self.last_arrival) {
            (Some(a), Some(b)) => b - a,
            _ => Dur::ZERO,
        }
    }

    /// Offered load on ports of `capacity`; `None` when the span, the hosts or
    /// the capacity is zero.
    pub fn load_on(&self, capacity: BitsPerSec) -> Option<f64> {
        let denom = f64::from(self.n_hosts) * capacity.0 * self.span().as_secs_f64();
        (denom > 0.0 && denom.is_finite()).then(|| self.total_bytes as f64 * 8.0 / denom)
    }
}

/// The position of `b` in [`Bin::ALL`].
fn bin_index(b: Bin) -> usize {
    match b {
        Bin::SN => 0,
        Bin::LN => 1,
        Bin::SW => 2,
        Bin::LW => 3,
    }
}

/// `v` as a `u64`, saturating.
fn saturate(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// Bytes in binary units, e.g. `1.50 GiB`.
fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut x = b as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.2} {}", UNITS[unit])
}

/// A rate in decimal units, e.g. `1 Gbit/s`.
fn human_rate(r: BitsPerSec) -> String {
    let bps = r.0;
    if bps >= 1e9 {
        format!("{} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{} Mbit/s", bps / 1e6)
    } else {
        format!("{bps} bit/s")
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = |t: Option<Time>| t.map_or(0.0, Time::as_secs_f64);
        writeln!(f, "hosts          {}", self.n_hosts)?;
        writeln!(f, "coflows        {}", self.n_coflows)?;
        writeln!(f, "flows          {}", self.n_flows)?;
        writeln!(
            f,
            "bytes          {} ({} B)",
            human_bytes(self.total_bytes),
            self.total_bytes
        )?;
        writeln!(
            f,
            "arrivals       {:.3} s to {:.3} s (span {:.3} s)",
            secs(self.first_arrival),
            secs(self.last_arrival),
            self.span().as_secs_f64()
        )?;
        match self.offered_load {
            Some(load) => writeln!(
                f,
                "offered load   {load:.3} on {} ports",
                human_rate(self.capacity)
            )?,
            None => writeln!(f, "offered load   n/a (zero span)")?,
        }
        let x = &self.features;
        if !x.is_empty() {
            writeln!(
                f,
                "flows with    {} after a group, {} delayed, {} compute, {} deadlines, {} unknown sizes",
                x.n_after, x.n_delayed, x.n_compute, x.n_flow_deadlines, x.n_size_unknown
            )?;
            writeln!(
                f,
                "coflows with  {} deadlines, {} in jobs, {} parents",
                x.n_coflow_deadlines, x.n_in_jobs, x.n_with_parents
            )?;
        }
        writeln!(f)?;
        writeln!(f, "bin    coflows   share        bytes    share")?;
        for b in &self.bins {
            writeln!(
                f,
                "{:<4} {:>9} {:>6.1}% {:>12} {:>7.2}%",
                b.bin.name(),
                b.n_coflows,
                100.0 * b.count_share,
                human_bytes(b.bytes),
                100.0 * b.byte_share
            )?;
        }
        writeln!(f)?;
        writeln!(f, "                        p50          p95          max")?;
        let (w, l) = (self.width, self.length);
        writeln!(
            f,
            "width (flows)  {:>12} {:>12} {:>12}",
            w.p50, w.p95, w.max
        )?;
        write!(
            f,
            "length         {:>12} {:>12} {:>12}",
            human_bytes(l.p50),
            human_bytes(l.p95),
            human_bytes(l.max)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{flow, Bytes, CoflowSpec};

    fn sample() -> Workload {
        let wide: Vec<_> = (0..60).map(|k| flow(k % 10, k / 10, Bytes::MIB)).collect();
        Workload {
            n_hosts: 10,
            coflows: vec![
                CoflowSpec::new(1, Time(1_000_000_000), vec![flow(0, 1, 100)]),
                CoflowSpec::new(
                    2,
                    Time(3_000_000_000),
                    vec![flow(0, 1, 10 * Bytes::MIB), flow(2, 3, 1)],
                ),
                CoflowSpec::new(3, Time(2_000_000_000), wide),
            ],
        }
    }

    #[test]
    fn counts_shares_and_percentiles() {
        let s = TraceStats::new(&sample(), BitsPerSec::GBPS);
        assert_eq!((s.n_hosts, s.n_coflows, s.n_flows), (10, 3, 63));
        let total = 100 + 10 * Bytes::MIB + 1 + 60 * Bytes::MIB;
        assert_eq!(s.total_bytes, total);
        assert_eq!(
            (s.first_arrival, s.last_arrival, s.span()),
            (
                Some(Time(1_000_000_000)),
                Some(Time(3_000_000_000)),
                Dur(2_000_000_000)
            )
        );
        let want = total as f64 * 8.0 / (10.0 * 1e9 * 2.0);
        assert!((s.offered_load.unwrap() - want).abs() < 1e-12);
        assert_eq!(s.bins.map(|b| b.n_coflows), [1, 1, 1, 0]);
        assert_eq!(s.bins[2].bytes, 60 * Bytes::MIB);
        assert!((s.bins[2].byte_share - 60.0 * Bytes::MIB as f64 / total as f64).abs() < 1e-12);
        assert_eq!(
            s.width,
            Percentiles {
                p50: 2,
                p95: 60,
                max: 60
            }
        );
        assert_eq!(
            s.length,
            Percentiles {
                p50: Bytes::MIB,
                p95: 10 * Bytes::MIB,
                max: 10 * Bytes::MIB
            }
        );
        assert_eq!(
            Percentiles::of(&mut (1..=100).rev().collect::<Vec<_>>()),
            Percentiles {
                p50: 50,
                p95: 95,
                max: 100
            }
        );
    }

    #[test]
    fn the_table_reads_well() {
        let text = TraceStats::new(&sample(), BitsPerSec::GBPS).to_string();
        let want = "\
hosts          10
coflows        3
flows          63
bytes          70.00 MiB (73400421 B)
arrivals       1.000 s to 3.000 s (span 2.000 s)
offered load   0.029 on 1 Gbit/s ports

bin    coflows   share        bytes    share
SN           1   33.3%        100 B    0.00%
LN           1   33.3%    10.00 MiB   14.29%
SW           1   33.3%    60.00 MiB   85.71%
LW           0    0.0%          0 B    0.00%

                        p50          p95          max
width (flows)             2           60           60
length             1.00 MiB    10.00 MiB    10.00 MiB";
        assert_eq!(text, want);
    }

    #[test]
    fn features_are_counted_and_shown_only_when_used() {
        let mut w = sample();
        assert!(TraceStats::new(&w, BitsPerSec::GBPS).features.is_empty());
        w.coflows[0]
            .flows
            .push(coflowkit_model::compute(3, 5).in_group(1));
        w.coflows[0].flows[0] = flow(0, 1, 100).after(1).delayed(Dur(4)).size_unknown();
        w.coflows[1].deadline = Some(Dur(9));
        let s = TraceStats::new(&w, BitsPerSec::GBPS);
        assert_eq!(
            s.features,
            Features {
                n_compute: 1,
                n_after: 1,
                n_delayed: 1,
                n_size_unknown: 1,
                n_coflow_deadlines: 1,
                ..Features::default()
            }
        );
        let text = s.to_string();
        assert!(text.contains(
            "flows with    1 after a group, 1 delayed, 1 compute, 0 deadlines, 1 unknown sizes\ncoflows with  1 deadlines, 0 in jobs, 0 parents\n"
        ), "{text}");
    }

    #[test]
    fn an_empty_workload_has_no_load() {
        let s = TraceStats::new(&Workload::default(), BitsPerSec::GBPS);
        assert_eq!(s.offered_load, None);
        assert_eq!(s.width, Percentiles::default());
        assert!(s.to_string().contains("offered load   n/a (zero span)"));
    }
}

#[cfg(test)]
mod trace_tests {
    use super::*;
    use crate::benchmark::read_benchmark_file;
    use crate::synth::{generate, SynthConfig};
    use std::path::Path;

    #[test]
    fn fb2010_and_the_default_workload_summarize() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/FB2010-1Hr-150-0.txt"
        ));
        if path.exists() {
            let s = TraceStats::new(&read_benchmark_file(path).unwrap(), BitsPerSec::GBPS);
            println!("{s}\n");
            assert_eq!((s.n_hosts, s.n_coflows, s.n_flows), (150, 526, 706_397));
            assert_eq!(s.bins.iter().map(|b| b.n_coflows).sum::<usize>(), 526);
        } else {
            println!("skipped: {} is missing", path.display());
        }
        let s = TraceStats::new(&generate(&SynthConfig::default()), BitsPerSec::GBPS);
        println!("{s}");
        assert!((s.offered_load.unwrap() - 0.8).abs() < 1e-6);
    }
}
