//! Karuna's parameters: the spec's keys as a checked [`KarunaConfig`], the
//! demotion thresholds (the presets of Karuna's and PIAS's evaluations,
//! or thresholds derived from the workload), and the segment size and
//! queue count they are counted in.

use super::*;

/// Karuna's (or, with `pias`, PIAS's) configuration from a spec's
/// parameters, checked.
pub(crate) fn karuna_config(
    p: &Params<'_>,
    hints: &WorkloadHints,
    pias: bool,
) -> Result<KarunaConfig, SchedulerError> {
    let mut config = if pias {
        KarunaConfig::pias()
    } else {
        KarunaConfig::karuna()
    };
    if !pias {
        if let Some(rtt) = p.dur("rtt")? {
            config.rtt = rtt;
        }
    }
    if let Some(v) = p.given("starvation") {
        config.starvation = match v {
            "none" => None,
            _ => Some(
                p.positive_dur("starvation", "must be above 0 (or none)")?
                    .unwrap_or_default(),
            ),
        };
    }
    // Last: `auto@LOAD` needs the workload, and every other key is checked
    // without it.
    let keep = if pias { 7 } else { 6 };
    let lists: &[(&str, ThresholdKind)] = if pias {
        &[("thresholds", ThresholdKind::Sieve)]
    } else {
        &[
            ("split", ThresholdKind::Split),
            ("sieve", ThresholdKind::Sieve),
        ]
    };
    for &(key, kind) in lists {
        if let Some(v) = p.given(key) {
            let t = thresholds(p, key, v, keep, hints, kind)?;
            match kind {
                ThresholdKind::Split => config.split = t,
                ThresholdKind::Sieve => config.sieve = t,
            }
        }
    }
    config.validate().map_err(|(key, message)| {
        p.bad(
            if pias && key == "sieve" {
                "thresholds"
            } else {
                key
            },
            message,
        )
    })?;
    Ok(config)
}

/// Karuna's or PIAS's thresholds (bytes) of `key`: a preset (`web`,
/// `mining`; its first `keep`), `auto@LOAD` (`keep` derived from the
/// workload's flow sizes at that load, [`derive_thresholds`]) or `keep`
/// sizes `B1/B2/..` (PIAS: 1 to 7; checked by [`KarunaConfig::validate`]).
pub(super) fn thresholds(
    p: &Params<'_>,
    key: &str,
    v: &str,
    keep: usize,
    hints: &WorkloadHints,
    kind: ThresholdKind,
) -> Result<Vec<f64>, SchedulerError> {
    if let Some(mut t) = preset(v) {
        t.truncate(keep);
        return Ok(t);
    }
    if let Some(load) = v.strip_prefix("auto@") {
        let load: f64 = load
            .parse()
            .ok()
            .filter(|l| *l > 0.0 && *l < 1.0)
            .ok_or_else(|| {
                p.bad(
                    key,
                    format!("'{v}': auto@LOAD takes a load in (0, 1), e.g. auto@0.8"),
                )
            })?;
        if hints.flow_sizes.is_empty() {
            return Err(p.needs(
                key,
                Hint::FlowSizes,
                format!("'{v}': the workload has no flow sizes to derive from"),
            ));
        }
        return derive_thresholds(&empirical_points(&hints.flow_sizes), load, keep, kind)
            .map_err(|m| p.bad(key, format!("'{v}': {m}")));
    }
    let t = v
        .split('/')
        .map(|x| parse_bytes(x.trim()).ok_or_else(|| p.bad(key, format!("'{x}' is not a size"))))
        .collect::<Result<Vec<f64>, _>>()?;
    // Karuna's split and sieve fill its 6 queues; PIAS may use fewer of its
    // 8 (the testbed's `--thresholds`): 1 to 7.
    let min = if kind == ThresholdKind::Sieve && keep == 7 {
        1
    } else {
        keep
    };
    if !(min..=keep).contains(&t.len()) {
        let expected = if min == keep {
            keep.to_string()
        } else {
            format!("{min} to {keep}")
        };
        return Err(p.bad(
            key,
            format!(
                "'{v}': {} thresholds, expected {expected} (or web, mining, auto@LOAD)",
                t.len()
            ),
        ));
    }
    Ok(t)
}

/// One TCP segment, bytes (the unit of PIAS's thresholds).
pub const SEGMENT: f64 = 1460.0;
/// Queues per port.
pub const QUEUES: usize = 8;
/// PIAS's thresholds for the web-search workload, in segments.
pub const WEB_SEARCH: [u64; 7] = [46, 1084, 1717, 1943, 1989, 1999, 2001];
/// PIAS's thresholds for the data-mining workload at load 0.9, in segments.
pub const DATA_MINING: [u64; 7] = [750, 1083, 1416, 13705, 14952, 21125, 28253];

/// A preset by name (`web`, `mining`), in bytes, all 7 thresholds.
pub fn preset(name: &str) -> Option<Vec<f64>> {
    let units: &[u64] = match name {
        "web" | "web-search" => &WEB_SEARCH,
        "mining" | "data-mining" => &DATA_MINING,
        _ => return None,
    };
    Some(units.iter().map(|&u| u as f64 * SEGMENT).collect())
}

/// How Karuna (or PIAS) is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct KarunaConfig {
    /// How often a type-1 flow's MCP rate is re-evaluated.
    pub rtt: Dur,
    /// Split thresholds for type 2, bytes, ascending.
    pub split: Vec<f64>,
    /// Sieve thresholds for type 3, bytes, ascending.
    pub sieve: Vec<f64>,
    /// How long a flow may go without progress before it is promoted.
    pub starvation: Option<Dur>,
    /// PIAS: every flow type 3, its queues starting at queue 1.
    pub all_type3: bool,
}

impl KarunaConfig {
    /// Karuna with the web-search presets (first 6), RTT 100 us.
    pub fn karuna() -> KarunaConfig {
        let mut web = preset("web").unwrap_or_default();
        web.truncate(6);
        KarunaConfig {
            rtt: Dur(100_000),
            split: web.clone(),
            sieve: web,
            starvation: None,
            all_type3: false,
        }
    }

    /// PIAS with the web-search preset (all 7 thresholds).
    pub fn pias() -> KarunaConfig {
        KarunaConfig {
            split: vec![],
            sieve: preset("web").unwrap_or_default(),
            all_type3: true,
            ..KarunaConfig::karuna()
        }
    }

    /// The queue types 2 and 3 start from (0-based).
    pub(super) fn base(&self) -> usize {
        usize::from(!self.all_type3)
    }

    /// Checks thresholds: positive, ascending, few enough for 8 queues.
    /// The error names the key (`split`, `sieve`, `rtt`) and what is wrong.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.rtt.0 == 0 {
            return Err(("rtt", "an RTT must be above 0".into()));
        }
        let room = QUEUES - 1 - self.base();
        for (key, t) in [("split", &self.split), ("sieve", &self.sieve)] {
            if t.len() > room {
                return Err((key, format!("{} thresholds, at most {room}", t.len())));
            }
            if t.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err((key, "thresholds must be positive sizes".into()));
            }
            if t.windows(2).any(|w| w[0] >= w[1]) {
                return Err((key, "thresholds must be strictly ascending".into()));
            }
        }
        Ok(())
    }

    /// The floor rate of a type-1 flow: two segments per RTT, bits/s.
    pub fn floor_bps(&self) -> f64 {
        2.0 * SEGMENT * 8.0 * 1e9 / self.rtt.0 as f64
    }
}
