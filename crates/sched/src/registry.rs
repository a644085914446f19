//! The one place schedulers are named: CLI names to constructors.
//!
//! A spec is a name with optional parameters, `name` or
//! `name:key=value;key=value`, e.g. `fifo-lm:threshold=p80` (the 80th
//! percentile of the workload's coflow sizes) or `fifo-lm:threshold=10MiB`.

use crate::aalo::{Aalo, AaloConfig, Coordination};
use crate::baraat::{Baraat, BaraatConfig, Share};
use crate::dcas::{Dcas, DcasConfig};
use crate::fair::Fair;
use crate::fifo_lm::{FifoLm, Mux, Per};
use crate::ordered::{Fifo, SizeKey, SizeOrdered};
use crate::srpt::Srpt;
use crate::tasks::TaskIdConfig;
use crate::varys::Varys;
// --- tafe, d2tcp (TAFE issue) ---
use crate::d2tcp::D2tcp;
use crate::tafe::{FlowOrder, Tafe, TafeConfig};
// --- karuna, pias, pfabric-edf, edf-sjf (Karuna issue) ---
use crate::karuna::{EdfFirst, Karuna, KarunaConfig, Pias, Rest};
use crate::karuna_thresholds::{derive_thresholds, empirical_points, ThresholdKind};
use crate::AnyScheduler;
pub use coflowkit_model::percentile;
use thiserror::Error;

/// Every scheduler name the registry knows, with a one-line description.
pub const NAMES: &[(&str, &str)] = &[
    (
        "fair",
        "per-flow max-min fair sharing (TCP/DCTCP/RCP ideal); solver=auto|incremental",
    ),
    (
        "srpt",
        "per-flow shortest remaining first, greedy and preemptive (pFabric ideal)",
    ),
    (
        "fifo",
        "coflows in arrival order, strict priority (Orchestra); solver=auto|incremental",
    ),
    (
        "fifo-lm",
        "FIFO with limited multiplexing of heavy coflows (Baraat idealized); threshold=p80|BYTES;\
         counters=1;background=none|ID;mux=next|last;per=coflow|sender;solver=auto|incremental",
    ),
    (
        "baraat",
        "Baraat's Smart Priority Classes per link, explicit feedback every RTT (Algorithms 1-2); \
         threshold=p80|BYTES;rtt=100us;delta=10Mbps;share=equal|fill;counters=1;background=none|ID",
    ),
    ("scf", "smallest coflow first, by largest flow"),
    ("ncf", "narrowest coflow first, by number of flows"),
    ("lcf", "lightest coflow first, by total bytes"),
    ("stf", "smallest total size first, on remaining bytes"),
    (
        "varys",
        "smallest effective bottleneck first with MADD and backfill (Varys); recompute=coflow|flow",
    ),
    (
        "aalo",
        "D-CLAS, coflows demoted through K queues by bytes sent (Aalo); k=10;e=10;q1=10MiB;\
         weights=linear|equal|W1/W2/..;queues=weighted|strict;delta=10ms;local=q1|first",
    ),
    (
        "aalo-local",
        "D-CLAS without coordination: each sender ranks coflows by what it sent (Aalo 7.2.1); \
         k;e;q1;weights;queues as aalo",
    ),
    (
        "dcas",
        "decentralized: senders negotiate subcoflow priorities with receivers (D-CAS); \
         delta, threshold, t, expiry, msg_delay, loss, seed, psi, phi, desired, quantum, solver",
    ),
    // --- tafe, d2tcp (TAFE issue) ---
    (
        "tafe",
        "task-aware and flow-aware (TAFE): tasks demoted through tau strict queues by bytes sent, \
         FIFO per queue, shortest remaining flow first in a task; queues=3;\
         thresholds=0.5max/0.75max|U1/U2/..|quantiles|even;flows=srpt|fair|weighted",
    ),
    (
        "d2tcp",
        "deadline-aware per-flow weighted max-min, D2TCP's window rule at flow level \
         (TAFE's flow-aware baseline); alpha=0.5",
    ),
    // --- karuna, pias, pfabric-edf, edf-sjf (Karuna issue) ---
    (
        "karuna",
        "mix-flows (Karuna): deadline flows at their minimal rate in queue 1, known sizes split \
         and unknown sizes sieved through queues 2-8; split=web|mining|auto@LOAD|B1/../B6;sieve=..;\
         rtt=100us;starvation=none|DUR",
    ),
    (
        "pias",
        "every flow demoted through 8 strict queues by bytes sent (PIAS); \
         thresholds=web|mining|auto@LOAD|B1/../B7;starvation=none|DUR",
    ),
    (
        "pfabric-edf",
        "per flow, strict: deadline flows by earliest deadline, then shortest remaining (pFabric)",
    ),
    (
        "edf-sjf",
        "per flow, strict: deadline flows by earliest deadline, then shortest total size",
    ),
];

/// Why a scheduler spec cannot be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SchedulerError {
    /// No scheduler has this name.
    #[error("unknown scheduler '{name}' (known: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// A parameter the scheduler does not take.
    #[error("scheduler '{name}': unknown parameter '{key}'")]
    UnknownParam {
        /// The scheduler.
        name: String,
        /// The parameter.
        key: String,
    },
    /// A parameter value that does not parse.
    #[error("scheduler '{name}': parameter '{key}': {message}")]
    BadParam {
        /// The scheduler.
        name: String,
        /// The parameter.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// A parsed scheduler spec: a name and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerSpec {
    /// The CLI name.
    pub name: String,
    /// `key=value` parameters, in order.
    pub params: Vec<(String, String)>,
}

/// Facts about the workload that a scheduler's configuration may use (not
/// per-coflow knowledge: a percentile threshold is set once, offline).
#[derive(Debug, Clone, Default)]
pub struct WorkloadHints {
    /// Total bytes of every coflow of the workload.
    pub coflow_sizes: Vec<f64>,
    /// Bytes of every network flow of the workload (Karuna's and PIAS's
    /// `auto@LOAD` thresholds are derived from their distribution).
    pub flow_sizes: Vec<f64>,
}

impl WorkloadHints {
    /// The hints of a validated workload.
    pub fn of(workload: &coflowkit_model::ValidWorkload) -> WorkloadHints {
        WorkloadHints {
            coflow_sizes: workload
                .coflows()
                .iter()
                .map(|c| c.total_bytes().0 as f64)
                .collect(),
            flow_sizes: workload
                .coflows()
                .iter()
                .flat_map(|c| c.flows.iter())
                .filter(|f| f.kind == coflowkit_model::FlowKind::Net)
                .map(|f| f.bytes.0 as f64)
                .collect(),
        }
    }
}

impl SchedulerSpec {
    /// Parses `name` or `name:key=value;key=value`.
    pub fn parse(text: &str) -> Result<SchedulerSpec, SchedulerError> {
        let text = text.trim();
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let name = name.trim().to_string();
        if !NAMES.iter().any(|(n, _)| *n == name) {
            return Err(unknown(&name));
        }
        let mut params = vec![];
        for kv in rest.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| SchedulerError::BadParam {
                name: name.clone(),
                key: kv.to_string(),
                message: "expected key=value".into(),
            })?;
            params.push((k.trim().to_string(), v.trim().to_string()));
        }
        Ok(SchedulerSpec { name, params })
    }

    /// The value of parameter `key`, the last one given if repeated.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn unknown(name: &str) -> SchedulerError {
    SchedulerError::Unknown {
        name: name.to_string(),
        known: NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
    }
}

/// Parses a byte size: a plain number of bytes or a number with a unit
/// (B, KB, MB, GB, TB as powers of 10; KiB, MiB, GiB, TiB as powers of 2),
/// by the grammar every front end shares ([`coflowkit_model::parse::bytes`]).
pub fn parse_bytes(s: &str) -> Option<f64> {
    coflowkit_model::parse::bytes(s).ok().map(|b| b.0 as f64)
}

/// The D-CAS configuration of a `dcas` spec's parameters, checked: for a
/// caller that needs the [`Dcas`] itself (its decision log, say) rather than
/// the scheduler [`build`] makes of it.
pub fn dcas_config(params: &[(String, String)]) -> Result<DcasConfig, SchedulerError> {
    let mut config = DcasConfig::default();
    set_params("dcas", params, |k, v| config.set(k, v))?;
    config
        .validate()
        .map_err(|(key, message)| SchedulerError::BadParam {
            name: "dcas".into(),
            key: key.into(),
            message,
        })?;
    Ok(config)
}

/// Hands each `key=value` of `params` to `set`, in order; the first value it
/// refuses is scheduler `name`'s [`SchedulerError::BadParam`].
fn set_params<T>(
    name: &str,
    params: &[(String, String)],
    mut set: impl FnMut(&str, &str) -> Result<T, String>,
) -> Result<(), SchedulerError> {
    for (k, v) in params {
        set(k, v).map_err(|message| SchedulerError::BadParam {
            name: name.into(),
            key: k.clone(),
            message,
        })?;
    }
    Ok(())
}

/// Builds the scheduler a spec names.
pub fn build(spec: &SchedulerSpec, hints: &WorkloadHints) -> Result<AnyScheduler, SchedulerError> {
    let name = spec.name.as_str();
    let allowed: &[&str] = match name {
        "fair" | "fifo" => &["solver"],
        "fifo-lm" => &[
            "threshold",
            "counters",
            "background",
            "mux",
            "per",
            "solver",
        ],
        "baraat" => &[
            "threshold",
            "rtt",
            "delta",
            "share",
            "vc",
            "vc_max",
            "counters",
            "background",
        ],
        "varys" => &["recompute"],
        "aalo" => &["k", "e", "q1", "weights", "queues", "delta", "local"],
        "aalo-local" => &["k", "e", "q1", "weights", "queues"],
        "dcas" => crate::dcas::KEYS,
        "tafe" => &["queues", "thresholds", "flows"],
        "d2tcp" => &["alpha"],
        "karuna" => &["split", "sieve", "rtt", "starvation"],
        "pias" => &["thresholds", "starvation"],
        _ => &[],
    };
    if let Some((k, _)) = spec
        .params
        .iter()
        .find(|(k, _)| !allowed.contains(&k.as_str()))
    {
        return Err(SchedulerError::UnknownParam {
            name: name.into(),
            key: k.clone(),
        });
    }
    let param = |key: &str| spec.param(key);
    Ok(match name {
        "fair" | "fifo" => {
            let incremental = match param("solver").unwrap_or("auto") {
                "auto" => false,
                "incremental" => true,
                other => {
                    return Err(SchedulerError::BadParam {
                        name: name.into(),
                        key: "solver".into(),
                        message: format!("'{other}' is not auto or incremental"),
                    })
                }
            };
            AnyScheduler::NonClairvoyant(match (name, incremental) {
                ("fair", false) => Box::new(Fair::new()),
                ("fair", true) => Box::new(Fair::incremental()),
                (_, false) => Box::new(Fifo::new()),
                (_, true) => Box::new(Fifo::incremental()),
            })
        }
        "fifo-lm" => {
            let threshold = heavy_threshold(name, param("threshold"), hints)?;
            let tasks = task_ids(name, &spec.params)?;
            let bad = |key: &str, message: String| SchedulerError::BadParam {
                name: name.into(),
                key: key.into(),
                message,
            };
            let mux = match param("mux").unwrap_or("next") {
                "next" => Mux::Next,
                "last" => Mux::Last,
                v => return Err(bad("mux", format!("'{v}': expected next or last"))),
            };
            let per = match param("per").unwrap_or("coflow") {
                "coflow" => Per::Coflow,
                "sender" if mux == Mux::Last => Per::Sender,
                "sender" => return Err(bad("per", "per=sender needs mux=last".into())),
                v => return Err(bad("per", format!("'{v}': expected coflow or sender"))),
            };
            let lm = FifoLm::with_mux(threshold, tasks, mux, per);
            let lm = match param("solver").unwrap_or("auto") {
                "auto" => lm,
                "incremental" if mux == Mux::Next => lm.incremental(),
                "incremental" => {
                    return Err(bad("solver", "solver=incremental needs mux=next".into()))
                }
                v => {
                    return Err(bad(
                        "solver",
                        format!("'{v}': expected auto or incremental"),
                    ))
                }
            };
            AnyScheduler::NonClairvoyant(Box::new(lm))
        }
        "baraat" => {
            let bad = |key: &str, message: String| SchedulerError::BadParam {
                name: name.into(),
                key: key.into(),
                message,
            };
            let mut config = BaraatConfig {
                threshold: heavy_threshold(name, param("threshold"), hints)?,
                tasks: task_ids(name, &spec.params)?,
                ..BaraatConfig::default()
            };
            if let Some(v) = param("rtt") {
                config.rtt = match coflowkit_model::parse::dur(v) {
                    Ok(d) if d.0 > 0 => d,
                    Ok(_) => return Err(bad("rtt", "an RTT must be above 0".into())),
                    Err(m) => return Err(bad("rtt", m)),
                };
            }
            if let Some(v) = param("delta") {
                config.delta = coflowkit_model::parse::rate(v)
                    .map(|r| r.0)
                    .map_err(|m| bad("delta", m))?;
                if !(config.delta.is_finite() && config.delta >= 0.0) {
                    return Err(bad("delta", format!("'{v}' is not a rate of 0 or more")));
                }
            }
            config.share = match param("share").unwrap_or("equal") {
                "equal" => Share::Equal,
                "fill" => Share::Fill,
                other => return Err(bad("share", format!("'{other}' is not equal or fill"))),
            };
            for (key, slot, min) in [
                ("vc", &mut config.vc_gain, 0.0),
                ("vc_max", &mut config.vc_max, 1.0),
            ] {
                if let Some(v) = param(key) {
                    *slot = match v.parse::<f64>() {
                        Ok(x) if x.is_finite() && x >= min => x,
                        _ => {
                            return Err(bad(key, format!("'{v}' is not a number of {min} or more")))
                        }
                    };
                }
            }
            AnyScheduler::Clairvoyant(Box::new(Baraat::new(config)))
        }
        "srpt" => AnyScheduler::Clairvoyant(Box::new(Srpt::new())),
        "scf" => AnyScheduler::Clairvoyant(Box::new(SizeOrdered::new(SizeKey::Length))),
        "ncf" => AnyScheduler::Clairvoyant(Box::new(SizeOrdered::new(SizeKey::Width))),
        "lcf" => AnyScheduler::Clairvoyant(Box::new(SizeOrdered::new(SizeKey::Total))),
        "stf" => AnyScheduler::Clairvoyant(Box::new(SizeOrdered::new(SizeKey::Remaining))),
        "varys" => {
            let per_flow = match param("recompute").unwrap_or("flow") {
                "coflow" => false,
                "flow" => true,
                other => {
                    return Err(SchedulerError::BadParam {
                        name: name.into(),
                        key: "recompute".into(),
                        message: format!("'{other}' is not 'coflow' or 'flow'"),
                    })
                }
            };
            AnyScheduler::Clairvoyant(Box::new(Varys::new(per_flow)))
        }
        "aalo" | "aalo-local" => AaloConfig::from_params(name, &param).map(|cfg| {
            let name = if name == "aalo" { "aalo" } else { "aalo-local" };
            AnyScheduler::NonClairvoyant(Box::new(Aalo::new(name, cfg)))
        })?,
        "dcas" => AnyScheduler::Clairvoyant(Box::new(Dcas::new(dcas_config(&spec.params)?))),
        // --- tafe, d2tcp (TAFE issue) ---
        "tafe" => {
            AnyScheduler::Clairvoyant(Box::new(Tafe::new(TafeConfig::from_params(&param, hints)?)))
        }
        "d2tcp" => {
            let alpha = match param("alpha") {
                None => 0.5,
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|a| *a > 0.0 && *a < 1.0)
                    .ok_or_else(|| SchedulerError::BadParam {
                        name: name.into(),
                        key: "alpha".into(),
                        message: format!("'{v}' is not a number in (0, 1)"),
                    })?,
            };
            AnyScheduler::Clairvoyant(Box::new(D2tcp::new(alpha)))
        }
        // --- karuna, pias, pfabric-edf, edf-sjf (Karuna issue) ---
        "karuna" | "pias" => {
            let bad = |key: &str, message: String| SchedulerError::BadParam {
                name: name.into(),
                key: key.into(),
                message,
            };
            let pias = name == "pias";
            let mut config = if pias {
                KarunaConfig::pias()
            } else {
                KarunaConfig::karuna()
            };
            let keep = if pias { 7 } else { 6 };
            let lists = if pias {
                vec![("thresholds", false)]
            } else {
                vec![("split", true), ("sieve", false)]
            };
            for (key, is_split) in lists {
                if let Some(v) = param(key) {
                    let kind = if is_split {
                        ThresholdKind::Split
                    } else {
                        ThresholdKind::Sieve
                    };
                    let t = karuna_thresholds(v, keep, hints, kind).map_err(|m| bad(key, m))?;
                    if is_split {
                        config.split = t;
                    } else {
                        config.sieve = t;
                    }
                }
            }
            if let Some(v) = param("rtt") {
                config.rtt = coflowkit_model::parse::dur(v).map_err(|m| bad("rtt", m))?;
            }
            if let Some(v) = param("starvation") {
                config.starvation = match v {
                    "none" => None,
                    v => match coflowkit_model::parse::dur(v) {
                        Ok(d) if d.0 > 0 => Some(d),
                        Ok(_) => return Err(bad("starvation", "must be above 0 (or none)".into())),
                        Err(m) => return Err(bad("starvation", m)),
                    },
                };
            }
            config.validate().map_err(|(key, message)| {
                bad(
                    if pias && key == "sieve" {
                        "thresholds"
                    } else {
                        key
                    },
                    message,
                )
            })?;
            if pias {
                AnyScheduler::NonClairvoyant(Box::new(Pias::new(config.sieve, config.starvation)))
            } else {
                AnyScheduler::Clairvoyant(Box::new(Karuna::new(config)))
            }
        }
        "pfabric-edf" => AnyScheduler::Clairvoyant(Box::new(EdfFirst::new(Rest::Remaining))),
        "edf-sjf" => AnyScheduler::Clairvoyant(Box::new(EdfFirst::new(Rest::Size))),
        _ => return Err(unknown(name)),
    })
}

/// Karuna's or PIAS's thresholds (bytes): a preset (`web`, `mining`; its
/// first `keep`), `auto@LOAD` (`keep` derived from the workload's flow
/// sizes at that load, [`derive_thresholds`]) or `keep` sizes `B1/B2/..`
/// (checked by [`KarunaConfig::validate`]).
fn karuna_thresholds(
    v: &str,
    keep: usize,
    hints: &WorkloadHints,
    kind: ThresholdKind,
) -> Result<Vec<f64>, String> {
    if let Some(mut t) = crate::karuna::preset(v) {
        t.truncate(keep);
        return Ok(t);
    }
    if let Some(load) = v.strip_prefix("auto@") {
        let load: f64 = load
            .parse()
            .ok()
            .filter(|l| *l > 0.0 && *l < 1.0)
            .ok_or_else(|| format!("'{v}': auto@LOAD takes a load in (0, 1), e.g. auto@0.8"))?;
        if hints.flow_sizes.is_empty() {
            return Err(format!(
                "'{v}': the workload has no flow sizes to derive from"
            ));
        }
        return derive_thresholds(&empirical_points(&hints.flow_sizes), load, keep, kind)
            .map_err(|m| format!("'{v}': {m}"));
    }
    let t = v
        .split('/')
        .map(|x| parse_bytes(x.trim()).ok_or_else(|| format!("'{x}' is not a size")))
        .collect::<Result<Vec<f64>, String>>()?;
    if t.len() != keep {
        return Err(format!(
            "'{v}': {} thresholds, expected {keep} (or web, mining, auto@LOAD)",
            t.len()
        ));
    }
    Ok(t)
}

/// A percentile written `pQ` (Q in 0..=100): `None` if `v` is not of that
/// form, else Q or why it is not a percentile.
fn percentile_key(v: &str) -> Option<Result<f64, String>> {
    let p = v.strip_prefix('p')?;
    Some(
        p.parse()
            .ok()
            .filter(|q| (0.0..=100.0).contains(q))
            .ok_or_else(|| format!("'{v}' is not a percentile p0..p100")),
    )
}

/// The heavy threshold of `fifo-lm` and `baraat` (bytes): `p80` (the
/// default, a percentile of the workload's coflow sizes), `inf`, or a size.
fn heavy_threshold(
    name: &str,
    value: Option<&str>,
    hints: &WorkloadHints,
) -> Result<f64, SchedulerError> {
    let t = value.unwrap_or("p80");
    let bad = |message: String| SchedulerError::BadParam {
        name: name.into(),
        key: "threshold".into(),
        message,
    };
    if let Some(q) = percentile_key(t) {
        percentile(&hints.coflow_sizes, q.map_err(bad)?)
            .ok_or_else(|| bad("a percentile needs the workload's coflow sizes".into()))
    } else if t == "inf" {
        Ok(f64::INFINITY)
    } else {
        parse_bytes(t).ok_or_else(|| {
            bad(format!(
                "'{t}' is neither a percentile (p80) nor a size (10MiB)"
            ))
        })
    }
}

/// The task-id keys (`counters`, `background`) of a spec.
fn task_ids(name: &str, params: &[(String, String)]) -> Result<TaskIdConfig, SchedulerError> {
    let mut config = TaskIdConfig::default();
    set_params(name, params, |k, v| config.set(k, v))?;
    Ok(config)
}

// --- tafe (TAFE issue) ---
impl TafeConfig {
    /// TAFE's configuration from a spec's parameters: `queues` (tau, 1 to
    /// 64; default 3, or one more than the thresholds listed), `thresholds`
    /// (`/`-separated entries, each a size `100KB`, a percentile `p50` of
    /// the workload's task sizes, `mean`, or a fraction of the largest task
    /// `0.75max`; or `quantiles`, `Uk = p(100 k / tau)`; or `even`,
    /// `Uk = k / tau * max`), `flows` (`srpt`, `fair` or `weighted`). The default
    /// thresholds are the paper's (V-B): `0.5max/0.75max`.
    pub fn from_params<'a>(
        param: &dyn Fn(&str) -> Option<&'a str>,
        hints: &WorkloadHints,
    ) -> Result<TafeConfig, SchedulerError> {
        let bad = |key: &str, message: String| SchedulerError::BadParam {
            name: "tafe".into(),
            key: key.into(),
            message,
        };
        let tau = match param("queues") {
            None => None,
            Some(v) => Some(
                coflowkit_model::parse::uint(v)
                    .map_err(|m| bad("queues", m))
                    .and_then(|k| {
                        (1..=64)
                            .contains(&k)
                            .then_some(k as usize)
                            .ok_or_else(|| bad("queues", format!("{k} queues: give 1 to 64")))
                    })?,
            ),
        };
        let sizes = &hints.coflow_sizes;
        let need = |what: &str| {
            bad(
                "thresholds",
                format!("{what} needs the workload's task sizes"),
            )
        };
        let max = || {
            sizes
                .iter()
                .copied()
                .reduce(f64::max)
                .ok_or_else(|| need("a fraction of the largest task"))
        };
        let spec = match (param("thresholds"), tau) {
            (Some(t), _) => t,
            (None, Some(1)) => "",
            (None, Some(3) | None) => "0.5max/0.75max",
            (None, Some(_)) => "quantiles",
        };
        // Each threshold with whether it is a fixed size (not from the workload).
        let entries: Vec<(f64, bool)> = match spec {
            "" => vec![],
            "quantiles" | "even" => {
                let tau = tau.unwrap_or(3);
                (1..tau)
                    .map(|k| {
                        let q = 100.0 * k as f64 / tau as f64;
                        if spec == "even" {
                            max().map(|m| (m * k as f64 / tau as f64, false))
                        } else {
                            percentile(sizes, q)
                                .map(|u| (u, false))
                                .ok_or_else(|| need("a quantile"))
                        }
                    })
                    .collect::<Result<_, _>>()?
            }
            list => list
                .split('/')
                .map(|e| {
                    let e = e.trim();
                    if e == "mean" {
                        if sizes.is_empty() {
                            return Err(need("mean"));
                        }
                        Ok((sizes.iter().sum::<f64>() / sizes.len() as f64, false))
                    } else if let Some(f) = e.strip_suffix("max") {
                        let f: f64 = f
                            .parse()
                            .ok()
                            .filter(|f| *f > 0.0 && *f <= 1.0)
                            .ok_or_else(|| {
                                bad(
                                    "thresholds",
                                    format!("'{e}': the fraction of max must be in (0, 1]"),
                                )
                            })?;
                        Ok((f * max()?, false))
                    } else if let Some(q) = percentile_key(e) {
                        let q = q.map_err(|m| bad("thresholds", m))?;
                        percentile(sizes, q)
                            .map(|u| (u, false))
                            .ok_or_else(|| need("a percentile"))
                    } else {
                        coflowkit_model::parse::bytes(e)
                            .map(|b| (b.0 as f64, true))
                            .map_err(|m| {
                                bad(
                                    "thresholds",
                                    format!("'{e}': {m} (give a size, pQ, mean or Fmax)"),
                                )
                            })
                    }
                })
                .collect::<Result<_, _>>()?,
        };
        if let Some(tau) = tau {
            if entries.len() + 1 != tau {
                return Err(bad(
                    "thresholds",
                    format!(
                        "{} thresholds for {tau} queues (give queues - 1)",
                        entries.len()
                    ),
                ));
            }
        }
        // Fixed sizes must not decrease. Thresholds from the workload are
        // raised to the one before where they would (`mean/0.75max` on a
        // workload whose mean is above 0.75 of its largest task): equal
        // thresholds leave the queues between them empty, a task reaching
        // one passes them all at once (as quantiles of repeated sizes do).
        let fixed: Vec<f64> = entries.iter().filter(|e| e.1).map(|e| e.0).collect();
        if let Some(w) = fixed.windows(2).find(|w| w[1] < w[0]) {
            return Err(bad(
                "thresholds",
                format!(
                    "'{spec}' gives {} then {}: thresholds must not decrease",
                    w[0], w[1]
                ),
            ));
        }
        let mut thresholds: Vec<f64> = Vec::with_capacity(entries.len());
        for &(u, _) in &entries {
            let floor = thresholds.last().copied().unwrap_or(0.0);
            thresholds.push(u.max(floor));
        }
        let flows = match param("flows").unwrap_or("srpt") {
            "srpt" => FlowOrder::Srpt,
            "fair" => FlowOrder::Fair,
            "weighted" => FlowOrder::Weighted,
            other => {
                return Err(bad(
                    "flows",
                    format!("'{other}' is not srpt, fair or weighted"),
                ))
            }
        };
        Ok(TafeConfig { thresholds, flows })
    }
}

impl AaloConfig {
    /// D-CLAS's configuration of an `aalo` or `aalo-local` spec (`Ok(None)`
    /// for any other scheduler): what [`build`] gives it, for drivers that
    /// need its queues too (the runtime's agents).
    pub fn of_spec(spec: &SchedulerSpec) -> Result<Option<AaloConfig>, SchedulerError> {
        if spec.name != "aalo" && spec.name != "aalo-local" {
            return Ok(None);
        }
        AaloConfig::from_params(&spec.name, &|key: &str| spec.param(key)).map(Some)
    }

    /// D-CLAS's configuration from a spec's parameters (`param(key)` gives
    /// the value of `key`, if set); `name` is `aalo` or `aalo-local`.
    fn from_params<'a>(
        name: &str,
        param: &dyn Fn(&str) -> Option<&'a str>,
    ) -> Result<AaloConfig, SchedulerError> {
        let bad = |key: &str, message: String| SchedulerError::BadParam {
            name: name.into(),
            key: key.into(),
            message,
        };
        let k = match param("k") {
            None => 10,
            Some(v) => coflowkit_model::parse::uint(v)
                .map_err(|m| bad("k", m))
                .and_then(|k| {
                    (1..=64)
                        .contains(&k)
                        .then_some(k as usize)
                        .ok_or_else(|| bad("k", format!("{k} queues: give 1 to 64")))
                })?,
        };
        let e = match param("e") {
            None => 10.0,
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|e| e.is_finite() && *e > 1.0)
                .ok_or_else(|| bad("e", format!("'{v}' is not a number above 1")))?,
        };
        let q1 = match param("q1") {
            None => (10u64 << 20) as f64,
            Some(v) => match coflowkit_model::parse::bytes(v) {
                Ok(b) if b.0 > 0 => b.0 as f64,
                Ok(_) => return Err(bad("q1", "the first threshold must be above 0".into())),
                Err(m) => return Err(bad("q1", m)),
            },
        };
        let mut cfg = AaloConfig::exponential(k, e, q1);
        match param("weights").unwrap_or("linear") {
            "linear" => {}
            "equal" => cfg.weights = vec![1.0; k],
            list => {
                let w: Vec<f64> = list
                    .split('/')
                    .map(|x| x.trim().parse::<f64>().ok().filter(|w| w.is_finite() && *w > 0.0))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        bad(
                            "weights",
                            format!(
                                "'{list}' is not linear, equal or positive numbers W1/W2/.. (one per queue)"
                            ),
                        )
                    })?;
                if w.len() != k {
                    return Err(bad(
                        "weights",
                        format!("{} weights for {k} queues", w.len()),
                    ));
                }
                cfg.weights = w;
            }
        }
        cfg.strict = match param("queues").unwrap_or("weighted") {
            "weighted" => false,
            "strict" => true,
            other => {
                return Err(bad(
                    "queues",
                    format!("'{other}' is not weighted or strict"),
                ))
            }
        };
        cfg.coordination = if name == "aalo-local" {
            Coordination::Never
        } else {
            match param("delta") {
                None => Coordination::Every(coflowkit_model::Dur::from_millis(10)),
                Some("inf") => Coordination::Never,
                Some(v) => match coflowkit_model::parse::dur(v) {
                    Ok(d) if d.0 == 0 => Coordination::Instant,
                    Ok(d) => Coordination::Every(d),
                    Err(m) => return Err(bad("delta", m)),
                },
            }
        };
        cfg.local_first = match param("local").unwrap_or("q1") {
            "q1" => false,
            "first" if cfg.coordination == Coordination::Never => {
                return Err(bad(
                    "local",
                    "'first' needs a coordinator: with delta=inf no coflow is ever seen, so \
                     every coflow would go first (fifo)"
                        .into(),
                ))
            }
            "first" => true,
            other => return Err(bad("local", format!("'{other}' is not q1 or first"))),
        };
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_fail_clearly() {
        let s = SchedulerSpec::parse("fifo-lm:threshold=p90").unwrap();
        assert_eq!(s.params, vec![("threshold".to_string(), "p90".to_string())]);
        assert!(matches!(
            SchedulerSpec::parse("fiffo"),
            Err(SchedulerError::Unknown { .. })
        ));
        let e = build(
            &SchedulerSpec::parse("fair:x=1").unwrap(),
            &WorkloadHints::default(),
        )
        .err()
        .unwrap();
        assert_eq!(e.to_string(), "scheduler 'fair': unknown parameter 'x'");
        let e = build(
            &SchedulerSpec::parse("fifo-lm:threshold=banana").unwrap(),
            &WorkloadHints::default(),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("'banana' is neither"));
        let err = |spec: &str| {
            build(
                &SchedulerSpec::parse(spec).unwrap(),
                &WorkloadHints::default(),
            )
            .err()
            .unwrap()
            .to_string()
        };
        assert_eq!(
            err("dcas:deltaa=1ms"),
            "scheduler 'dcas': unknown parameter 'deltaa'"
        );
        assert!(err("dcas:delta=10").starts_with("scheduler 'dcas': parameter 'delta': "));
        assert!(
            err("dcas:psi=median").contains("parameter 'psi': 'median' is not max, min or mean")
        );
        assert!(err("dcas:loss=2").contains("parameter 'loss': 2 is not a probability"));
        assert!(
            err("dcas:delta=1ms;msg_delay=500us").contains("parameter 'msg_delay': a negotiation")
        );
        assert!(build(
            &SchedulerSpec::parse("dcas:delta=10ms;threshold=1MB;t=1s;expiry=2s;msg_delay=100us;loss=0;seed=3;psi=max;phi=max;desired=bytes;quantum=1us").unwrap(),
            &WorkloadHints::default()
        )
        .is_ok());
        assert_eq!(parse_bytes("10MiB"), Some(10485760.0));
        assert!(err("fifo-lm:threshold=1MB;per=sender")
            .contains("parameter 'per': per=sender needs mux=last"));
        assert!(err("fifo-lm:threshold=1MB;mux=first").contains("'first': expected next or last"));
        assert!(err("fifo-lm:threshold=1MB;mux=last;solver=incremental")
            .contains("parameter 'solver': solver=incremental needs mux=next"));
        assert!(err("fifo-lm:threshold=1MB;solver=fast")
            .contains("parameter 'solver': 'fast': expected auto or incremental"));
        assert!(build(
            &SchedulerSpec::parse("fifo-lm:threshold=1MB;solver=incremental").unwrap(),
            &WorkloadHints::default()
        )
        .is_ok());
        assert!(build(
            &SchedulerSpec::parse("fifo-lm:threshold=1MB;mux=last;per=sender").unwrap(),
            &WorkloadHints::default()
        )
        .is_ok());
    }

    #[test]
    fn baraat_and_task_id_parameters_fail_clearly() {
        let hints = WorkloadHints {
            coflow_sizes: vec![1.0, 2.0, 3.0],
            ..Default::default()
        };
        let err = |spec: &str| {
            build(&SchedulerSpec::parse(spec).unwrap(), &hints)
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(err("baraat"), None);
        assert_eq!(
            err("baraat:threshold=1MB;rtt=50us;delta=1Mbps;counters=4;background=1000"),
            None
        );
        assert_eq!(
            err("fifo-lm:threshold=p90;counters=2;background=none"),
            None
        );
        assert_eq!(
            err("baraat:rttt=1ms").unwrap(),
            "scheduler 'baraat': unknown parameter 'rttt'"
        );
        assert_eq!(
            err("baraat:rtt=0").unwrap(),
            "scheduler 'baraat': parameter 'rtt': an RTT must be above 0"
        );
        assert!(err("baraat:rtt=100")
            .unwrap()
            .contains("parameter 'rtt': \"100\" needs a unit"));
        assert!(err("baraat:delta=1MBps")
            .unwrap()
            .contains("parameter 'delta': "));
        assert!(err("baraat:threshold=p101")
            .unwrap()
            .contains("parameter 'threshold': 'p101'"));
        assert_eq!(
            err("fifo-lm:counters=0").unwrap(),
            "scheduler 'fifo-lm': parameter 'counters': 0 counters: give 1 to 65536"
        );
        assert!(err("baraat:background=x")
            .unwrap()
            .contains("parameter 'background': \"x\" is not a number (the first background coflow id, or none)"));
        assert_eq!(
            err("fifo:counters=2").unwrap(),
            "scheduler 'fifo': unknown parameter 'counters'"
        );
    }

    #[test]
    fn aalo_parameters_parse_and_errors_name_the_key() {
        let cfg = |spec: &str| {
            let s = SchedulerSpec::parse(spec).unwrap();
            AaloConfig::of_spec(&s).map(|c| c.expect("an aalo spec"))
        };
        assert_eq!(cfg("aalo").unwrap(), AaloConfig::paper());
        let c = cfg("aalo:k=3;e=4;q1=1MB;weights=5/2/1;queues=strict;delta=0").unwrap();
        assert_eq!(c.thresholds, vec![1e6, 4e6]);
        assert_eq!(c.weights, vec![5.0, 2.0, 1.0]);
        assert!(c.strict);
        assert_eq!(c.coordination, Coordination::Instant);
        assert_eq!(
            cfg("aalo:delta=250ms").unwrap().coordination,
            Coordination::Every(coflowkit_model::Dur::from_millis(250))
        );
        assert_eq!(cfg("aalo-local").unwrap().coordination, Coordination::Never);
        assert!(!cfg("aalo").unwrap().local_first);
        assert!(cfg("aalo:local=first").unwrap().local_first);
        assert!(!cfg("aalo:local=q1").unwrap().local_first);
        assert_eq!(
            cfg("aalo:k=2;weights=equal").unwrap().weights,
            vec![1.0, 1.0]
        );
        for (spec, key, says) in [
            ("aalo:k=0", "k", "0 queues: give 1 to 64"),
            ("aalo:k=two", "k", "not a number"),
            ("aalo:e=1", "e", "'1' is not a number above 1"),
            ("aalo:q1=0", "q1", "above 0"),
            ("aalo:q1=10MBB", "q1", "not a size unit"),
            ("aalo:weights=1/2", "weights", "2 weights for 10 queues"),
            ("aalo:k=2;weights=1/-1", "weights", "positive numbers"),
            (
                "aalo:queues=fair",
                "queues",
                "'fair' is not weighted or strict",
            ),
            ("aalo:delta=5", "delta", "needs a unit"),
            ("aalo:local=top", "local", "'top' is not q1 or first"),
            ("aalo:delta=inf;local=first", "local", "needs a coordinator"),
        ] {
            let e = cfg(spec).unwrap_err();
            assert!(
                matches!(&e, SchedulerError::BadParam { key: k, message, .. } if k == key && message.contains(says)),
                "{spec}: {e}"
            );
            assert!(e.to_string().contains(&format!("parameter '{key}'")), "{e}");
        }
        let e = build(
            &SchedulerSpec::parse("aalo-local:delta=1ms").unwrap(),
            &WorkloadHints::default(),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "scheduler 'aalo-local': unknown parameter 'delta'"
        );
        assert_eq!(
            build(
                &SchedulerSpec::parse("aalo:k=4;delta=0").unwrap(),
                &WorkloadHints::default()
            )
            .unwrap()
            .name(),
            "aalo"
        );
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], 80.0), Some(4.0));
    }

    // --- tafe, d2tcp (TAFE issue) ---
    #[test]
    fn tafe_thresholds_resolve_and_errors_name_the_key() {
        let hints = WorkloadHints {
            coflow_sizes: vec![100.0, 200.0, 300.0, 400.0, 1000.0],
            ..Default::default()
        };
        let cfg = |spec: &str| {
            let s = SchedulerSpec::parse(spec).unwrap();
            let param = |key: &str| {
                s.params
                    .iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.as_str())
            };
            TafeConfig::from_params(&param, &hints)
        };
        assert_eq!(cfg("tafe").unwrap().thresholds, vec![500.0, 750.0]);
        assert_eq!(cfg("tafe").unwrap().flows, FlowOrder::Srpt);
        assert_eq!(cfg("tafe:queues=1").unwrap().thresholds, Vec::<f64>::new());
        assert_eq!(
            cfg("tafe:thresholds=1KB/2KB").unwrap().thresholds,
            vec![1e3, 2e3]
        );
        assert_eq!(
            cfg("tafe:thresholds=mean/0.75max").unwrap().thresholds,
            vec![400.0, 750.0]
        );
        assert_eq!(
            cfg("tafe:queues=3;thresholds=even")
                .unwrap()
                .thresholds
                .len(),
            2
        );
        let even = cfg("tafe:queues=4;thresholds=even").unwrap().thresholds;
        assert_eq!(even, vec![250.0, 500.0, 750.0]);
        let q = cfg("tafe:queues=5;thresholds=quantiles")
            .unwrap()
            .thresholds;
        assert_eq!(q, vec![100.0, 200.0, 300.0, 400.0]);
        assert_eq!(cfg("tafe:queues=2").unwrap().thresholds, vec![300.0]);
        assert_eq!(cfg("tafe:thresholds=p20/p60/p80").unwrap().n_queues(), 4);
        assert_eq!(cfg("tafe:flows=fair").unwrap().flows, FlowOrder::Fair);
        for (spec, key, says) in [
            ("tafe:queues=0", "queues", "0 queues: give 1 to 64"),
            (
                "tafe:queues=3;thresholds=1KB",
                "thresholds",
                "1 thresholds for 3 queues",
            ),
            (
                "tafe:thresholds=2KB/1KB",
                "thresholds",
                "2000 then 1000: thresholds must not decrease",
            ),
            (
                "tafe:thresholds=1.5max",
                "thresholds",
                "fraction of max must be in (0, 1]",
            ),
            ("tafe:thresholds=p101", "thresholds", "not a percentile"),
            (
                "tafe:thresholds=lots",
                "thresholds",
                "give a size, pQ, mean or Fmax",
            ),
            (
                "tafe:flows=edf",
                "flows",
                "'edf' is not srpt, fair or weighted",
            ),
        ] {
            let e = cfg(spec).unwrap_err();
            assert!(
                matches!(&e, SchedulerError::BadParam { key: k, message, .. } if k == key && message.contains(says)),
                "{spec}: {e}"
            );
        }
        // Quantiles of equal sizes coincide: the queues between are empty.
        let equal = WorkloadHints {
            coflow_sizes: vec![8.0; 4],
            ..Default::default()
        };
        assert!(build(
            &SchedulerSpec::parse("tafe:queues=3;thresholds=quantiles").unwrap(),
            &equal
        )
        .is_ok());
        assert_eq!(
            cfg("tafe:thresholds=0/1KB").unwrap().thresholds,
            vec![0.0, 1e3]
        );
        // From the workload, raised to the one before: the mean (400) above
        // p20 (100) is kept, p20 after the mean is raised to it.
        assert_eq!(
            cfg("tafe:thresholds=mean/p20").unwrap().thresholds,
            vec![400.0, 400.0]
        );
        assert_eq!(
            cfg("tafe:thresholds=1KB/p20").unwrap().thresholds,
            vec![1e3, 1e3]
        );
        let e = build(
            &SchedulerSpec::parse("tafe").unwrap(),
            &WorkloadHints::default(),
        )
        .err()
        .unwrap();
        assert!(
            e.to_string().contains("needs the workload's task sizes"),
            "{e}"
        );
        let e = build(
            &SchedulerSpec::parse("d2tcp:alpha=1").unwrap(),
            &WorkloadHints::default(),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "scheduler 'd2tcp': parameter 'alpha': '1' is not a number in (0, 1)"
        );
        assert!(build(
            &SchedulerSpec::parse("d2tcp:alpha=0.3").unwrap(),
            &WorkloadHints::default()
        )
        .is_ok());
    }
}
