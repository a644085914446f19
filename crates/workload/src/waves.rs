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
//!
//! How the stage is declared to the scheduler (`stage_as`, [`StageAs`]) is
//! the one choice Aalo 7.3 discusses: "Using Varys, one can take two
//! approaches to handle multi-wave coflows - (i) creating separate coflows
//! for each wave as they become available or (ii) introducing barriers to
//! determine the bottleneck of the combined coflow - that both result in
//! performance loss. ... In the latter, artificial barriers decrease
//! parallelism and network utilization. Aalo circumvents the dilemma by
//! creating exactly one coflow per stage for any number of waves and by
//! avoiding barriers."
//!
//! - **One coflow** (`coflow`, the default): the stage is one coflow whose
//!   flows start wave by wave, as above; Aalo's way (5.2). A scheduler sees
//!   only the flows that have started.
//! - **Waves as coflows** (`waves`): the same flows with each group (wave or
//!   extra task) declared as a coflow of its own, Starts-After the part it
//!   waited for, the parts of a coflow one job
//!   ([`crate::transform::split_groups`]). This is how a scheduler sees a
//!   stage whose application registers each wave as it becomes available
//!   (approach (i)); the stage completes when its job does.
//! - **Barrier** (`barrier`): the stage as one coflow that no flow of which
//!   starts until every wave's flows exist, and then all start together
//!   ([`hold_until_every_wave`]): approach (ii), the combined coflow whose
//!   flows and sizes a clairvoyant scheduler knows when it starts.
//!
//! **The barrier's timing.** In the other two declarations a wave's tasks
//! hold their slots until their flows are done (wave `k` starts when wave
//! `k - 1`'s flows have finished), so the network paces the waves. Behind
//! a barrier no flow is sent before the last wave exists, so the tasks must
//! end without sending (their output is kept until the shuffle), and how
//! long a wave's tasks run is no longer set by the network. The paper does
//! not say how long that is (its EC2 runs measured approach (i) only; Fig. 10
//! is "w.r.t. Varys" creating a coflow per wave). We take the time the
//! wave's flows would take alone on the idle fabric: its bottleneck, the
//! most bytes any one host sends or receives in the wave over
//! `capacity_bps` (a big switch of host NICs), plus the largest start delay
//! among its flows. So on an idle fabric, under a scheduler that finishes
//! a wave in its bottleneck time (Varys's MADD does), the waves exist at
//! the instants they would start without the barrier, and the barrier
//! alone costs the stage the difference between the combined coflow's
//! bottleneck and the last wave's: a stage of waves `w_1..w_K` done at
//! `sum w_k` without it is done at `w_1 + .. + w_(K-1) + bottleneck(all
//! waves)` with it. An extra task exists its delay after its wave starts.
//! The other choice the paper leaves open, tasks that take no time, puts
//! every wave at the coflow's arrival: the barrier then costs nothing and
//! the stage is the `max_waves = 1` coflow exactly (the same flows, all
//! starting at arrival), so it needs no option of its own. Both choices'
//! results are in docs/workloads.md.

use crate::arrivals::{check_at_least, check_fraction, exp_dur, substream, tags};
use crate::error::ConfigError;
use crate::params::Choice;
use crate::synth::{self, SynthConfig};
use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Dur, Workload};
use rand::RngExt;
use std::collections::BTreeMap;

/// How a stage is declared to the scheduler; see the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageAs {
    /// One coflow whose flows start wave by wave (Aalo 5.2).
    Coflow,
    /// Each wave (and extra task) a coflow of its own, Starts-After the
    /// part it waited for, one job per stage (Aalo 7.3, approach (i)).
    Waves,
    /// One coflow whose flows all start once the last wave exists (Aalo
    /// 7.3, approach (ii)).
    Barrier,
}

impl Choice for StageAs {
    const CHOICES: &'static [(&'static str, StageAs)] = &[
        ("coflow", StageAs::Coflow),
        ("waves", StageAs::Waves),
        ("barrier", StageAs::Barrier),
    ];
}

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
    /// How a stage is declared to the scheduler.
    pub stage_as: StageAs,
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
            stage_as: StageAs::Coflow,
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
    match config.stage_as {
        StageAs::Coflow => w,
        StageAs::Waves => crate::transform::split_groups(&w),
        StageAs::Barrier => {
            for c in &mut w.coflows {
                hold_until_every_wave(c, config.coflows.capacity_bps);
            }
            w
        }
    }
}

/// Stage `c` behind a barrier: every flow in group 0, waiting for no group,
/// and starting when the last of its flows exists, which is returned (from
/// the coflow's release). A group's flows exist when the group they wait
/// for would be done alone (see the module doc): a group is done alone its
/// largest start delay plus its bottleneck (the most bytes a host sends or
/// receives in it, at `capacity`) after it is released.
///
/// # Panics
/// If the groups form a cycle or a flow waits for a group that has no flow
/// (a workload that does not validate), or `capacity` is not positive.
pub fn hold_until_every_wave(c: &mut CoflowSpec, capacity: BitsPerSec) -> Dur {
    // Per group: the groups its flows wait for, its largest delay, and the
    // bytes each host sends and receives in it.
    #[derive(Default)]
    struct Group {
        waits_for: Vec<u32>,
        delay: Dur,
        bytes_at: BTreeMap<(bool, u32), u64>,
    }
    let mut groups: BTreeMap<u32, Group> = BTreeMap::new();
    for f in &c.flows {
        let g = groups.entry(f.group).or_default();
        if let Some(a) = f.after {
            if !g.waits_for.contains(&a) {
                g.waits_for.push(a);
            }
        }
        g.delay = g.delay.max(f.delay);
        *g.bytes_at.entry((false, f.src.0)).or_default() += f.bytes.0;
        *g.bytes_at.entry((true, f.dst.0)).or_default() += f.bytes.0;
    }
    // When each group is released, resolved in rounds (groups wait only for
    // others, with no cycle, so every round resolves at least one).
    let mut released: BTreeMap<u32, Dur> = BTreeMap::new();
    while released.len() < groups.len() {
        let before = released.len();
        for (&g, grp) in &groups {
            if released.contains_key(&g) {
                continue;
            }
            let mut at = Dur::ZERO;
            let mut ready = true;
            for a in &grp.waits_for {
                match released.get(a) {
                    Some(&r) => {
                        let most = groups[a].bytes_at.values().copied().max().unwrap_or(0);
                        let alone = capacity
                            .time_to_send(most as f64)
                            .expect("a positive capacity");
                        at = at.max(Dur(r.0 + groups[a].delay.0 + alone.0));
                    }
                    None => ready = false,
                }
            }
            if ready {
                released.insert(g, at);
            }
        }
        assert!(
            released.len() > before,
            "the groups of coflow {:?} form a cycle",
            c.id
        );
    }
    let barrier = c
        .flows
        .iter()
        .map(|f| Dur(released[&f.group].0 + f.delay.0))
        .max()
        .unwrap_or(Dur::ZERO);
    for f in &mut c.flows {
        f.group = 0;
        f.after = None;
        f.delay = barrier;
    }
    barrier
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
    "stage_as" => stage_as: "coflow (one coflow, flows start wave by wave), waves (a coflow per wave, Aalo 7.3 (i)) or barrier (7.3 (ii))",
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
            stage_as: StageAs::Waves,
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
    fn a_barrier_waits_for_the_last_wave_and_extra_task_to_exist() {
        // Wave 0: hosts 0 and 1 send 1 s each to host 2 (bottleneck 2 s at
        // 1 Gbit/s: host 2 receives 2 units); wave 1 (after 0): 3 -> 2, so it
        // exists at 2 s; an extra task (group 2, after 0, delayed 0.5 s):
        // exists at 2.5 s, the barrier.
        const UNIT: u64 = 125_000_000;
        let mut c = CoflowSpec::new(
            1,
            coflowkit_model::Time(7),
            vec![
                flow(0, 2, UNIT),
                flow(1, 2, UNIT),
                flow(3, 2, UNIT).in_group(1).after(0),
                flow(4, 2, UNIT)
                    .in_group(2)
                    .after(0)
                    .delayed(Dur::from_millis(500)),
            ],
        );
        let before = c.clone();
        let barrier = hold_until_every_wave(&mut c, BitsPerSec::GBPS);
        assert_eq!(barrier, Dur::from_millis(2500));
        for (f, g) in c.flows.iter().zip(&before.flows) {
            assert_eq!((f.src, f.dst, f.bytes), (g.src, g.dst, g.bytes));
            assert_eq!((f.group, f.after, f.delay), (0, None, barrier));
        }
        // One wave: no barrier to wait for.
        let mut one = CoflowSpec::new(2, coflowkit_model::Time(0), vec![flow(0, 1, UNIT)]);
        assert_eq!(hold_until_every_wave(&mut one, BitsPerSec::GBPS), Dur::ZERO);
    }

    #[test]
    fn barrier_stages_are_the_same_flows_held_and_one_wave_is_no_barrier() {
        let config = WavesConfig {
            coflows: SynthConfig {
                n_coflows: 300,
                ..SynthConfig::aalo()
            },
            extra_task_fraction: 0.2,
            ..WavesConfig::default()
        };
        let whole = generate(&config);
        let held = generate(&WavesConfig {
            stage_as: StageAs::Barrier,
            ..config.clone()
        });
        let mut n_held = 0;
        for (c, h) in whole.coflows.iter().zip(&held.coflows) {
            assert_eq!((c.id, c.arrival, c.job), (h.id, h.arrival, h.job));
            let key = |f: &coflowkit_model::FlowSpec| (f.src, f.dst, f.bytes);
            assert!(c.flows.iter().map(key).eq(h.flows.iter().map(key)));
            let d = h.flows[0].delay;
            assert!(h
                .flows
                .iter()
                .all(|f| (f.group, f.after, f.delay) == (0, None, d)));
            // Held exactly when the stage has more than one part.
            let parts = c.flows.iter().any(|f| f.group > 0);
            assert_eq!(d > Dur::ZERO, parts, "coflow {:?}", c.id);
            n_held += usize::from(parts);
        }
        assert!(n_held > 30, "{n_held} stages behind a barrier");
        let fabric = Fabric::big_switch(50, BitsPerSec::GBPS).unwrap();
        assert!(held.validate(&fabric).is_ok());
        // With one wave and no extra task, the barrier declaration is the
        // stage itself.
        let one = WavesConfig {
            max_waves: 1,
            extra_task_fraction: 0.0,
            ..config
        };
        assert_eq!(
            generate(&WavesConfig {
                stage_as: StageAs::Barrier,
                ..one.clone()
            }),
            generate(&one)
        );
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
