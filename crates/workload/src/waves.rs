//! The `multi-wave` generator: coflows whose senders start in waves, and
//! restarted or speculative tasks that add flows to a running coflow.
//!
//! Source: Aalo (SIGCOMM 2015) 5.2 and 7.3. Tasks of large jobs run in
//! waves when the cluster cannot run them all at once, so a stage's flows
//! are created in batches; Aalo's experiment "varied the maximum number of
//! concurrent senders in each wave while keeping all the receivers active,
//! essentially fixing the maximum number of waves in each coflow" (Table 4:
//! with at most 4 waves, 81% of the trace's coflows had one wave, 9% two,
//! 4% three, 6% four). Failures and stragglers restart or replicate tasks,
//! whose flows join the running coflow (5.2).
//!
//! The coflows are exactly the `coflow-benchmark` generator's for the same
//! configuration ([`crate::synth`]), arrivals included. Then:
//!
//! - **Waves.** With `M` the most senders (distinct sources) of any coflow
//!   of the workload, at most `S = ceil(M / max_waves)` senders run at once.
//!   A coflow's senders, in ascending host order, form waves of `S`; the
//!   flows of wave `k` are group `k`, and wave `k > 0` is `after(k - 1)`: it
//!   starts when the previous wave's flows have finished (its tasks ended).
//!   The widest coflow has exactly `max_waves` waves.
//! - **Restarted and speculative tasks.** With probability
//!   `extra_task_fraction` a coflow gets one extra task: one of its senders,
//!   uniform, is the straggler (or failed task); the copy runs on a host
//!   that sends nothing else in the coflow (uniform among those; any other
//!   host if every host sends) and re-sends the straggler's flows (same
//!   destinations and sizes) as a new group, released with the straggler's
//!   wave (same `after`) and delayed by one exponential wait of mean
//!   `extra_task_delay` (the time until the copy is launched). These draws
//!   come from their own stream, so the waves and coflows do not change.
//! - **Waves as coflows** (`waves_as_coflows`): the same flows with each
//!   group (wave or extra task) declared as a coflow of its own, Starts-After
//!   the part it waited for, the parts of a coflow one job
//!   ([`crate::transform::split_groups`]). This is how a scheduler sees a
//!   stage whose application registers each wave as it becomes available
//!   (Aalo 7.3, approach (i) for Varys); the stage completes when its job
//!   does.

use crate::arrivals::{check_at_least, check_fraction, exp_dur, substream, tags};
use crate::error::ConfigError;
use crate::synth::{self, SynthConfig};
use coflowkit_model::{flow, CoflowSpec, Dur, Workload};
use rand::RngExt;

/// What to generate; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct WavesConfig {
    /// The coflows (as the `coflow-benchmark` generator draws them).
    pub coflows: SynthConfig,
    /// Waves of the coflow with the most senders.
    pub max_waves: u32,
    /// Share of coflows that get a restarted or speculative task.
    pub extra_task_fraction: f64,
    /// Mean wait before an extra task's flows start.
    pub extra_task_delay: Dur,
    /// Each wave (and extra task) as a coflow of its own, one job per
    /// original coflow ([`crate::transform::split_groups`]).
    pub waves_as_coflows: bool,
}

impl Default for WavesConfig {
    /// The `aalo` preset's coflows, at most 4 waves (Aalo Table 4's
    /// largest setting), no extra tasks (when on, launched after 100 ms on
    /// average).
    fn default() -> WavesConfig {
        WavesConfig {
            coflows: SynthConfig::aalo(),
            max_waves: 4,
            extra_task_fraction: 0.0,
            extra_task_delay: Dur::from_millis(100),
            waves_as_coflows: false,
        }
    }
}

impl WavesConfig {
    /// Checks the configuration; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_at_least("max_waves", u64::from(self.max_waves), 1)?;
        check_fraction("extra_task_fraction", self.extra_task_fraction)?;
        self.coflows.validate()
    }
}

/// The distinct senders of a coflow, ascending.
fn senders(c: &CoflowSpec) -> Vec<u32> {
    let mut s: Vec<u32> = c.flows.iter().map(|f| f.src.0).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Generates the workload `config` describes.
///
/// # Panics
/// If `config.validate()` fails.
pub fn generate(config: &WavesConfig) -> Workload {
    if let Err(e) = config.validate() {
        panic!("invalid multi-wave configuration: {e}");
    }
    let mut w = synth::generate(&config.coflows);
    let most = w
        .coflows
        .iter()
        .map(|c| senders(c).len())
        .max()
        .unwrap_or(0);
    let per_wave = most.div_ceil(config.max_waves as usize).max(1);
    for c in &mut w.coflows {
        let s = senders(c);
        for f in &mut c.flows {
            let wave = (s.binary_search(&f.src.0).unwrap_or(0) / per_wave) as u32;
            f.group = wave;
            f.after = wave.checked_sub(1);
        }
    }

    if config.extra_task_fraction > 0.0 {
        let mut rng = substream(config.coflows.seed, tags::EXTRA_TASKS);
        let n = w.n_hosts;
        for c in &mut w.coflows {
            if rng.random::<f64>() >= config.extra_task_fraction {
                continue;
            }
            let s = senders(c);
            let straggler = s[rng.random_range(0..s.len())];
            let idle = n as usize - s.len();
            let host = if idle > 0 {
                // The k-th host that sends nothing in this coflow.
                let mut k = rng.random_range(0..idle) as u32;
                let mut h = 0;
                for &busy in &s {
                    if h + k < busy {
                        break;
                    }
                    k -= busy - h;
                    h = busy + 1;
                }
                h + k
            } else if n > 1 {
                let h = rng.random_range(0..n - 1);
                h + u32::from(h >= straggler)
            } else {
                continue;
            };
            let delay = exp_dur(&mut rng, config.extra_task_delay);
            let group = c.flows.iter().map(|f| f.group).max().unwrap_or(0) + 1;
            let copies: Vec<_> = c
                .flows
                .iter()
                .filter(|f| f.src.0 == straggler)
                .map(|f| {
                    let mut g = flow(host, f.dst.0, f.bytes.0)
                        .in_group(group)
                        .delayed(delay);
                    g.after = f.after;
                    g
                })
                .collect();
            c.flows.extend(copies);
        }
    }
    if config.waves_as_coflows {
        return crate::transform::split_groups(&w);
    }
    w
}

crate::params! { WavesConfig {
    deadlines("coflows") => coflows.deadlines;
    "n_hosts" => coflows.n_hosts: "hosts (ports of the big switch)",
    "n_coflows" => coflows.n_coflows: "coflows to generate",
    "load" => coflows.load: "offered load: total bits / (n_hosts * capacity * span), D-CAS V-A",
    "capacity_bps" => coflows.capacity_bps: "host NIC capacity the load refers to, bit/s",
    "seed" => coflows.seed: "random seed",
    "max_waves" => max_waves: "waves of the coflow with the most senders (Aalo Table 4: 1, 2 or 4)",
    "extra_task_fraction" => extra_task_fraction: "share of coflows with a restarted or speculative task",
    "extra_task_delay" => extra_task_delay: "mean exponential wait before an extra task's flows start",
    "waves_as_coflows" => waves_as_coflows: "true: each wave its own coflow (Starts-After the previous), one job per stage (Aalo 7.3: Varys given each wave as it comes)",
    "mix" => coflows.mix: "shares of SN,LN,SW,LW coflows by count",
    "short_below" => coflows.short_below: "a coflow is short when its longest flow is below this",
    "narrow_up_to" => coflows.narrow_up_to: "a coflow is narrow with at most this many flows",
    "max_flow" => coflows.max_flow: "largest flow",
}}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{BitsPerSec, Fabric};
    use std::collections::HashSet;

    /// Waves of a coflow (1 + its largest group among original flows).
    fn waves(c: &CoflowSpec, extra: bool) -> u32 {
        let top = c.flows.iter().map(|f| f.group).max().unwrap_or(0);
        if extra {
            top
        } else {
            top + 1
        }
    }

    #[test]
    fn waves_as_coflows_are_the_same_flows_one_job_per_stage() {
        let config = WavesConfig {
            coflows: SynthConfig {
                n_coflows: 200,
                ..SynthConfig::aalo()
            },
            extra_task_fraction: 0.2,
            ..WavesConfig::default()
        };
        let whole = generate(&config);
        let split = generate(&WavesConfig {
            waves_as_coflows: true,
            ..config.clone()
        });
        let n_parts: usize = whole
            .coflows
            .iter()
            .map(|c| {
                let mut g: Vec<_> = c.flows.iter().map(|f| (f.group, f.after)).collect();
                g.sort_unstable();
                g.dedup();
                g.len()
            })
            .sum();
        assert_eq!(split.coflows.len(), n_parts);
        assert!(n_parts > whole.coflows.len());
        for c in &whole.coflows {
            let mut mine: Vec<_> = split
                .coflows
                .iter()
                .filter(|p| p.job.map(|j| j.job) == Some(c.id.0))
                .flat_map(|p| p.flows.iter().map(|f| (f.src, f.dst, f.bytes)))
                .collect();
            let mut want: Vec<_> = c.flows.iter().map(|f| (f.src, f.dst, f.bytes)).collect();
            mine.sort_unstable();
            want.sort_unstable();
            assert_eq!(mine, want, "coflow {:?}", c.id);
        }
        split
            .clone()
            .validate(&Fabric::big_switch(50, BitsPerSec::GBPS).unwrap())
            .expect("valid");
    }

    #[test]
    fn waves_chain_and_the_widest_coflow_has_max_waves() {
        let config = WavesConfig {
            coflows: SynthConfig {
                n_coflows: 1000,
                ..SynthConfig::aalo()
            },
            ..WavesConfig::default()
        };
        let w = generate(&config);
        let plain = synth::generate(&config.coflows);
        let most = plain
            .coflows
            .iter()
            .map(|c| senders(c).len())
            .max()
            .unwrap();
        let per_wave = most.div_ceil(4);
        let mut hist = [0usize; 4]; // coflows by number of waves
        for (c, p) in w.coflows.iter().zip(&plain.coflows) {
            assert_eq!(c.flows.len(), p.flows.len());
            for (f, g) in c.flows.iter().zip(&p.flows) {
                assert_eq!((f.src, f.dst, f.bytes), (g.src, g.dst, g.bytes));
                assert_eq!(f.after, f.group.checked_sub(1));
            }
            let k = waves(c, false);
            assert_eq!(k as usize, senders(c).len().div_ceil(per_wave));
            hist[k as usize - 1] += 1;
        }
        assert_eq!(hist.iter().rposition(|&n| n > 0), Some(3));
        let fabric = Fabric::big_switch(50, BitsPerSec::GBPS).unwrap();
        assert!(w.validate(&fabric).is_ok());
    }

    #[test]
    fn golden_extra_task_for_seed_1() {
        // The waves come from the pinned coflow-benchmark draws; this pins
        // the extra-task stream.
        let w = generate(&WavesConfig {
            extra_task_fraction: 0.5,
            ..WavesConfig::default()
        });
        let base = synth::generate(&SynthConfig::default());
        let (c, b) = w
            .coflows
            .iter()
            .zip(&base.coflows)
            .find(|(c, b)| c.flows.len() > b.flows.len())
            .unwrap();
        let f = c.flows[b.flows.len()];
        assert_eq!(
            (
                c.id.0,
                (f.src.0, f.dst.0, f.bytes.0, f.group, f.after, f.delay.0)
            ),
            (1, (43, 2, 8_013_436, 1, None, 45_445_858))
        );
    }

    #[test]
    fn extra_tasks_copy_a_stragglers_flows() {
        let config = WavesConfig {
            coflows: SynthConfig {
                n_coflows: 2000,
                ..SynthConfig::aalo()
            },
            extra_task_fraction: 0.2,
            ..WavesConfig::default()
        };
        let w = generate(&config);
        let base = generate(&WavesConfig {
            extra_task_fraction: 0.0,
            ..config.clone()
        });
        let mut n_extra = 0;
        let mut delays = Vec::new();
        for (c, b) in w.coflows.iter().zip(&base.coflows) {
            assert_eq!(&c.flows[..b.flows.len()], &b.flows[..]);
            let extra = &c.flows[b.flows.len()..];
            if extra.is_empty() {
                continue;
            }
            n_extra += 1;
            let group = waves(b, false);
            let host = extra[0].src.0;
            // A host that sends nothing else, when there is one.
            assert!(senders(b).len() == 50 || !senders(b).contains(&host));
            assert!(extra
                .iter()
                .all(|f| f.src.0 == host && f.group == group && f.delay == extra[0].delay));
            // The copy re-sends one original sender's flows.
            let dsts: HashSet<(u32, u64)> = extra.iter().map(|f| (f.dst.0, f.bytes.0)).collect();
            assert!(senders(b).iter().any(|&s| {
                let orig: HashSet<(u32, u64)> = b
                    .flows
                    .iter()
                    .filter(|f| f.src.0 == s)
                    .map(|f| (f.dst.0, f.bytes.0))
                    .collect();
                orig == dsts
            }));
            delays.push(extra[0].delay.0 as f64);
        }
        let share = n_extra as f64 / 2000.0;
        assert!((share - 0.2).abs() < 0.03, "extra share {share}");
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!((mean / 1e8 - 1.0).abs() < 0.25, "delay mean {mean}");
        let fabric = Fabric::big_switch(50, BitsPerSec::GBPS).unwrap();
        assert!(w.validate(&fabric).is_ok());
    }
}
