//! Baraat's parameters ([`BaraatConfig`]) and the budget check that
//! refuses a run estimated to cost more CPU than the spec allows
//! ([`check_budget`], its descriptor's preflight).

use super::*;

/// `budget`: the estimated CPU time above which drivers refuse the run
/// ([`check_budget`]).
pub(super) const BUDGET_PARAM: Param = Param {
    key: "budget",
    kind: Kind::Duration,
    default: "300s",
    unit: "",
    help: "refuse a workload estimated to take longer than this (inf: never refuse)",
};

/// CPU nanoseconds one active flow costs in one computed round, measured
/// on FB2010's first 30 coflows (docs/lab/benchmarks-history.md): the
/// unit of [`check_budget`]'s estimate. The cost grows with contention
/// (flows that wait are active too), so on a loaded trace the estimate is
/// a lower bound.
pub const NS_PER_FLOW_ROUND: f64 = 120.0;

/// The least number of flow-rounds of `rtt` a workload whose network flows
/// carry `flow_bytes` takes part in on NICs of `nic_bps`: each flow is
/// active at least its bits over its NIC rate.
pub fn least_flow_rounds(flow_bytes: &[f64], nic_bps: f64, rtt: Dur) -> f64 {
    let rtt_s = rtt.0.max(1) as f64 * 1e-9;
    flow_bytes.iter().map(|b| b * 8.0 / nic_bps).sum::<f64>() / rtt_s
}

/// Baraat's preflight ([`Parts::preflight`]): refuses a `baraat` run with
/// parameters `p` on a workload with `hints` over `fabric` when its
/// estimated CPU time (the least flow-rounds times [`NS_PER_FLOW_ROUND`])
/// is above its `budget`; the error says the estimate and what to do
/// instead, in one line.
pub fn check_budget(
    p: &Params<'_>,
    hints: &crate::WorkloadHints,
    fabric: &coflowkit_model::Fabric,
) -> Result<(), crate::SchedulerError> {
    let budget = match p.given("budget") {
        Some("inf") => return Ok(()),
        _ => p.dur("budget")?.unwrap_or(Dur::from_millis(300_000)),
    };
    let rtt = p
        .positive_dur("rtt", "an RTT must be above 0")?
        .unwrap_or(BaraatConfig::default().rtt);
    let nic = fabric
        .links()
        .iter()
        .map(|l| l.capacity.0)
        .fold(0.0, f64::max);
    if nic <= 0.0 {
        return Ok(());
    }
    let rounds = least_flow_rounds(&hints.flow_sizes, nic, rtt);
    let secs = rounds * NS_PER_FLOW_ROUND * 1e-9;
    if secs <= budget.0 as f64 * 1e-9 {
        return Ok(());
    }
    Err(p.bad(
        "budget",
        format!(
            "refused: on this workload baraat computes at least {:.2e} flow-rounds of {} us \
             (estimated {:.0} min or more of CPU, over its budget of {} s); use fifo-lm, its \
             idealized stand-in, a coarser round (rtt=), or budget=inf",
            rounds,
            rtt.0 as f64 * 1e-3,
            secs / 60.0,
            budget.0 as f64 * 1e-9
        ),
    ))
}

/// Rates within this much (relative) of each other are equal in Algorithm
/// 1's `AvailShare > D` (relative to the larger of `D` and `C`, the scale
/// `AvailShare` is computed at) and Algorithm 2's `MinNR < Demand`:
/// demands and shares are computed from progress and sums in different
/// orders, and exact ties (a demand that is exactly what the class leaves)
/// are common on regular workloads, so float noise must not decide them.
pub const RATE_TIE: f64 = 1e-9;

/// A flow's nominal rate when its demand does not fit beside its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// Algorithm 1 line 8 as written: `ClassAvlBW / F_k`.
    Equal,
    /// The larger of that and `AvailShare` (what the other flows of the
    /// class leave by their demands): a flow bottlenecked elsewhere lowers
    /// its demand and the others may take the rest, so the class converges
    /// to max-min (our variant, `share=fill`).
    Fill,
}

/// `baraat`'s parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaraatConfig {
    /// Heavy threshold on a task's size at a link ([`TaskSize`], bytes).
    pub threshold: f64,
    /// Round length, one RTT (ns).
    pub rtt: Dur,
    /// Algorithm 2's delta added to the least NR of a bottlenecked flow
    /// (bits/s).
    pub delta: f64,
    /// How tasks get ids.
    pub tasks: TaskIdConfig,
    /// The nominal rate of a flow whose demand does not fit.
    pub share: Share,
    /// Virtual capacity gain (footnote 5, RCP's rule): after each round a
    /// link's virtual capacity moves by `vc_gain · (C - y)`, `y` the rate
    /// offered to it. 0 (the default) keeps it at `C`.
    pub vc_gain: f64,
    /// Upper bound of the virtual capacity, as a multiple of `C`.
    pub vc_max: f64,
    /// What the classifier counts as a task's size at a link.
    pub task_size: TaskSize,
}

/// What the classifier (4.3.1) counts as a task's size at a link, the
/// counter it compares with the heavy threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSize {
    /// The bytes its flows sent through the link: each flow's rate (the
    /// least AR of its path, within the link's real capacity) times the
    /// round, never more than it had left (`task_size=sent`, the default).
    Sent,
    /// The ARs the link granted the task's flows, times the round, what
    /// they sent or not (`task_size=granted`).
    Granted,
}

impl Default for BaraatConfig {
    fn default() -> BaraatConfig {
        BaraatConfig {
            threshold: f64::INFINITY,
            rtt: Dur::from_micros(100),
            delta: 10e6,
            tasks: TaskIdConfig::default(),
            share: Share::Equal,
            vc_gain: 0.0,
            vc_max: 10.0,
            task_size: TaskSize::Sent,
        }
    }
}

impl BaraatConfig {
    /// The configuration of a `baraat` spec's checked parameters (the
    /// packet engine's switches and hosts read the same keys).
    pub fn of_params(
        p: &crate::descriptor::Params<'_>,
        hints: &crate::WorkloadHints,
    ) -> Result<BaraatConfig, crate::SchedulerError> {
        let mut config = BaraatConfig {
            tasks: TaskIdConfig::of_params(p)?,
            ..BaraatConfig::default()
        };
        if let Some(rtt) = p.positive_dur("rtt", "an RTT must be above 0")? {
            config.rtt = rtt;
        }
        if let Some(delta) = p.rate("delta")? {
            if !(delta.is_finite() && delta >= 0.0) {
                let v = p.value("delta");
                return Err(p.bad("delta", format!("'{v}' is not a rate of 0 or more")));
            }
            config.delta = delta;
        }
        config.share = match p.choice("share")? {
            "fill" => Share::Fill,
            _ => Share::Equal,
        };
        config.task_size = match p.choice("task_size")? {
            "granted" => TaskSize::Granted,
            _ => TaskSize::Sent,
        };
        for (key, slot, min) in [
            ("vc", &mut config.vc_gain, 0.0),
            ("vc_max", &mut config.vc_max, 1.0),
        ] {
            let expected = format!("a number of {min} or more");
            if let Some(x) = p.number(key, |x| x.is_finite() && x >= min, &expected)? {
                *slot = x;
            }
        }
        // Checked here, used by drivers (`check_budget`).
        if p.given("budget") != Some("inf") {
            p.dur("budget")?;
        }
        // Last: a percentile needs the workload (see fifo-lm).
        config.threshold = p.percentile_or_bytes("threshold", hints)?;
        Ok(config)
    }
}
