//! What every generator shares: seeded random streams, Poisson arrivals at
//! a target load, and deadlines.
//!
//! **Streams.** A generator draws its workload's structure from
//! `Pcg64::seed_from_u64(seed)` in a fixed order. Optional features
//! (deadlines, flow types, speculative copies) draw from their own
//! [`substream`], so turning one on never changes the flows the main stream
//! drew: a workload with deadlines is the same workload as without, plus
//! deadlines.
//!
//! **Arrivals.** [`poisson_arrivals`] draws `n` arrivals of a Poisson process
//! (exponential gaps) and scales them by one common factor so that the first
//! is at 0 and the last at `span`. Scaling cumulative exponential gaps to a
//! fixed end keeps the law of a Poisson process conditioned on that span
//! (the first `n - 1` normalized sums are uniform order statistics), and
//! makes the realized offered load exactly the target instead of only in
//! expectation. Each generator computes `span` from the bytes it generated
//! and its load definition ([`span_for_load`]): `load = bits offered to a
//! class of links / (that class's capacity * span)`.
//!
//! **Deadlines.** [`DeadlineSpec`] gives a fraction of coflows (or flows) a
//! deadline drawn from an exponential distribution with a given mean (or a
//! uniform one), rounded to whole nanoseconds and at least 1 ns (a deadline
//! must be positive).

use crate::error::ConfigError;
use crate::params::Choice;
use coflowkit_model::{CoflowSpec, Dur, Time};
use rand::{RngExt, SeedableRng};
use rand_distr::Exp1;
use rand_pcg::Pcg64;

/// The main random stream of a generator.
pub fn main_stream(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// An independent stream for one purpose (`tag`), derived from the seed by
/// SplitMix64 so that streams of nearby seeds and tags do not overlap.
pub fn substream(seed: u64, tag: u64) -> Pcg64 {
    let mut z = seed ^ tag.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Pcg64::seed_from_u64(z ^ (z >> 31))
}

/// Stream tags, one per optional feature.
pub mod tags {
    /// Coflow deadlines.
    pub const COFLOW_DEADLINES: u64 = 1;
    /// Flow types and flow deadlines (Karuna).
    pub const FLOW_TYPES: u64 = 2;
    /// Restarted and speculative tasks.
    pub const EXTRA_TASKS: u64 = 3;
    /// Worker computation delays.
    pub const COMPUTE: u64 = 4;
    /// Arrival gaps.
    pub const ARRIVALS: u64 = 5;
    /// Coflow totals of the `uniform` and `fixed` size laws.
    pub const COFLOW_SIZES: u64 = 6;
    /// Per-flow size factors within a task (`baraat`'s `flow_spread`).
    pub const FLOW_SPREAD: u64 = 7;
}

/// The span (ns) over which `bits` offered to links of total capacity
/// `capacity_bps` make load `load`: `bits / (load * capacity) * 1e9`.
pub fn span_for_load(bits: f64, capacity_bps: f64, load: f64) -> f64 {
    bits / (load * capacity_bps) * 1e9
}

/// `n` Poisson arrivals from 0 to `span_ns`, in order (see the module doc).
/// One arrival is at 0; none when `n` is 0.
pub fn poisson_arrivals(rng: &mut Pcg64, n: usize, span_ns: f64) -> Vec<Time> {
    let mut at = vec![0.0f64; n];
    for k in 1..n {
        at[k] = at[k - 1] + rng.sample::<f64, _>(Exp1);
    }
    let last = at.last().copied().unwrap_or(0.0);
    if last > 0.0 {
        // `as` saturates: an absurd span cannot wrap around.
        at.iter()
            .map(|a| Time((span_ns * (a / last)).round() as u64))
            .collect()
    } else {
        vec![Time::ZERO; n]
    }
}

/// A duration drawn from an exponential distribution with mean `mean`
/// (whole nanoseconds; zero when the mean is zero).
pub fn exp_dur(rng: &mut Pcg64, mean: Dur) -> Dur {
    if mean == Dur::ZERO {
        return Dur::ZERO;
    }
    let x: f64 = rng.sample(Exp1);
    Dur((x * mean.0 as f64).round() as u64)
}

/// How a deadline is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineLaw {
    /// Exponential with mean `mean` (Karuna 2.2: mean 10 ms).
    Exponential,
    /// Uniform in `[min, max]`.
    Uniform,
}

impl Choice for DeadlineLaw {
    const CHOICES: &'static [(&'static str, DeadlineLaw)] = &[
        ("exp", DeadlineLaw::Exponential),
        ("uniform", DeadlineLaw::Uniform),
    ];
}

/// Which share of coflows (or flows) get a deadline, and how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeadlineSpec {
    /// The share that gets a deadline, in `[0, 1]` (0: none).
    pub fraction: f64,
    /// Exponential or uniform.
    pub law: DeadlineLaw,
    /// The exponential's mean.
    pub mean: Dur,
    /// The uniform's lower end.
    pub min: Dur,
    /// The uniform's upper end.
    pub max: Dur,
}

impl Default for DeadlineSpec {
    /// No deadlines; when turned on, exponential with mean 10 ms (Karuna
    /// 2.2), or uniform in [5 ms, 25 ms].
    fn default() -> DeadlineSpec {
        DeadlineSpec {
            fraction: 0.0,
            law: DeadlineLaw::Exponential,
            mean: Dur::from_millis(10),
            min: Dur::from_millis(5),
            max: Dur::from_millis(25),
        }
    }
}

impl DeadlineSpec {
    /// Checks the fraction and the law's parameters; errors name `prefix`'s fields.
    pub fn validate(&self, fraction_field: &'static str) -> Result<(), ConfigError> {
        check_fraction(fraction_field, self.fraction)?;
        if self.fraction > 0.0 {
            match self.law {
                DeadlineLaw::Exponential if self.mean == Dur::ZERO => {
                    return Err(ConfigError {
                        field: "deadline_mean",
                        message: "must be positive".into(),
                    })
                }
                DeadlineLaw::Uniform if self.min > self.max => {
                    return Err(ConfigError {
                        field: "deadline_min",
                        message: format!(
                            "{} ns is above deadline_max ({} ns)",
                            self.min.0, self.max.0
                        ),
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Draws a deadline (at least 1 ns).
    pub fn draw(&self, rng: &mut Pcg64) -> Dur {
        let d = match self.law {
            DeadlineLaw::Exponential => exp_dur(rng, self.mean),
            DeadlineLaw::Uniform => Dur(rng.random_range(self.min.0..=self.max.0)),
        };
        Dur(d.0.max(1))
    }

    /// Gives each coflow a deadline with probability `fraction`, from the
    /// [`tags::COFLOW_DEADLINES`] stream of `seed` (one uniform draw per
    /// coflow, in order, then a deadline draw for those chosen).
    pub fn apply_to_coflows(&self, coflows: &mut [CoflowSpec], seed: u64) {
        if self.fraction <= 0.0 {
            return;
        }
        let mut rng = substream(seed, tags::COFLOW_DEADLINES);
        for c in coflows {
            if rng.random::<f64>() < self.fraction {
                c.deadline = Some(self.draw(&mut rng));
            }
        }
    }
}

/// A share in `[0, 1]`, or an error naming `field`.
pub fn check_fraction(field: &'static str, x: f64) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(ConfigError {
            field,
            message: format!("must be between 0 and 1, got {x}"),
        })
    }
}

/// A positive finite number, or an error naming `field`.
pub fn check_positive(field: &'static str, x: f64) -> Result<(), ConfigError> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(ConfigError {
            field,
            message: format!("must be a positive finite number, got {x}"),
        })
    }
}

/// A count of at least `min`, or an error naming `field`.
pub fn check_at_least(field: &'static str, x: u64, min: u64) -> Result<(), ConfigError> {
    if x >= min {
        Ok(())
    } else {
        Err(ConfigError {
            field,
            message: format!("must be at least {min}, got {x}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_span_exactly_and_increase() {
        let mut rng = main_stream(3);
        let a = poisson_arrivals(&mut rng, 1000, 5e9);
        assert_eq!(a[0], Time::ZERO);
        assert_eq!(*a.last().unwrap(), Time(5_000_000_000));
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(poisson_arrivals(&mut rng, 1, 5e9), vec![Time::ZERO]);
        assert!(poisson_arrivals(&mut rng, 0, 5e9).is_empty());
    }

    #[test]
    fn arrival_gaps_look_exponential() {
        // Coefficient of variation of exponential gaps is 1; of uniform
        // order-statistic spacings too, for large n.
        let mut rng = main_stream(9);
        let a = poisson_arrivals(&mut rng, 100_001, 1e12);
        let gaps: Vec<f64> = a.windows(2).map(|w| (w[1].0 - w[0].0) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        let cv = var.sqrt() / mean;
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
    }

    #[test]
    fn substreams_differ_and_repeat() {
        let draw = |mut r: Pcg64| r.random::<u64>();
        assert_eq!(draw(substream(1, 2)), draw(substream(1, 2)));
        assert_ne!(draw(substream(1, 2)), draw(substream(1, 3)));
        assert_ne!(draw(substream(1, 2)), draw(substream(2, 2)));
        assert_ne!(draw(substream(1, 2)), draw(main_stream(1)));
    }

    #[test]
    fn deadlines_hit_their_fraction_and_mean() {
        let spec = DeadlineSpec {
            fraction: 0.3,
            ..DeadlineSpec::default()
        };
        let mut coflows: Vec<CoflowSpec> = (0..100_000)
            .map(|i| CoflowSpec::new(i, Time::ZERO, vec![]))
            .collect();
        spec.apply_to_coflows(&mut coflows, 5);
        let d: Vec<f64> = coflows
            .iter()
            .filter_map(|c| c.deadline)
            .map(|d| d.0 as f64)
            .collect();
        let share = d.len() as f64 / coflows.len() as f64;
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert!((share - 0.3).abs() < 0.01, "share {share}");
        assert!((mean / 1e7 - 1.0).abs() < 0.02, "mean {mean}");
        assert!(d.iter().all(|&x| x >= 1.0));
        let uniform = DeadlineSpec {
            fraction: 1.0,
            law: DeadlineLaw::Uniform,
            ..DeadlineSpec::default()
        };
        let mut rng = main_stream(1);
        for _ in 0..1000 {
            let x = uniform.draw(&mut rng);
            assert!(x >= Dur::from_millis(5) && x <= Dur::from_millis(25));
        }
    }

    #[test]
    fn checks_name_the_field() {
        assert_eq!(
            check_fraction("type1_fraction", 1.5)
                .unwrap_err()
                .to_string(),
            "type1_fraction: must be between 0 and 1, got 1.5"
        );
        let bad = DeadlineSpec {
            fraction: 0.5,
            mean: Dur::ZERO,
            ..DeadlineSpec::default()
        };
        assert_eq!(
            bad.validate("deadline_fraction").unwrap_err().to_string(),
            "deadline_mean: must be positive"
        );
    }
}
