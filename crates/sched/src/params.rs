//! A scheduler's parameters: how each `key=value` is declared ([`Param`],
//! [`Kind`]) and read ([`Params`]), the typed parsing every scheduler and
//! host policy shares.
//!
//! [`Params`] parses bytes, durations, rates, a percentile or a size,
//! choices, counts and numbers, each refusing a bad value with one error
//! format naming the scheduler, the key and what was expected. It sits
//! below the descriptors and the host policies, which both read it.
//!
//! # Correctness properties
//! - A constructor reads only keys its descriptor declares (`Params::given`
//!   checks in debug builds); the registry refuses any other key before the
//!   constructor runs, listing the declared ones (`registry::build`).
//! - A value that needs a workload hint the driver did not give fails with
//!   [`SchedulerError::NeedsHint`], never with a made-up value, so a driver
//!   can tell "bad spec" from "give me the workload" (`Params::needs`).

use crate::spec::{Hint, SchedulerError, WorkloadHints};
use coflowkit_model::{parse, percentile, Dur};

/// One `key=value` parameter of a scheduler spec.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The key.
    pub key: &'static str,
    /// What its value is.
    pub kind: Kind,
    /// The default, as a spec would write it (may say what it depends on).
    pub default: &'static str,
    /// The unit of a bare number, if any ("" when the value carries it).
    pub unit: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// What a parameter's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A size (`10MiB`, `1MB`, bytes).
    Bytes,
    /// A duration with a unit (`100us`, `10ms`).
    Duration,
    /// A rate (`10Mbps`, `1Gbit/s`).
    Rate,
    /// A percentile of the workload's coflow sizes (`p80`), a size, or `inf`.
    PercentileOrBytes,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A whole number.
    Count,
    /// A real number.
    Number,
    /// A `/`-separated list or a preset word (the help says which).
    List,
}

impl Kind {
    /// The kind as the docs and `coflowkit schedulers` name it.
    pub fn label(&self) -> String {
        match self {
            Kind::Bytes => "bytes".into(),
            Kind::Duration => "duration".into(),
            Kind::Rate => "rate".into(),
            Kind::PercentileOrBytes => "pQ|bytes|inf".into(),
            Kind::Choice(words) => words.join("|"),
            Kind::Count => "integer".into(),
            Kind::Number => "number".into(),
            Kind::List => "list".into(),
        }
    }
}

/// A spec's parameters as a constructor reads them: typed, checked against
/// the descriptor, every error naming the scheduler and the key.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    name: &'a str,
    given: &'a [(String, String)],
    declared: &'static [Param],
}

impl<'a> Params<'a> {
    /// The parameters `given` to scheduler `name`, which declares `declared`.
    pub fn new(
        name: &'a str,
        given: &'a [(String, String)],
        declared: &'static [Param],
    ) -> Params<'a> {
        Params {
            name,
            given,
            declared,
        }
    }

    /// The scheduler's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Every `key=value` given, in order.
    pub fn all(&self) -> &'a [(String, String)] {
        self.given
    }

    /// The value given for `key`, the last one if repeated.
    pub fn given(&self, key: &str) -> Option<&'a str> {
        debug_assert!(
            self.declared.iter().any(|p| p.key == key),
            "scheduler '{}' reads undeclared key '{key}'",
            self.name
        );
        self.given
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value given for `key`, else its declared default.
    pub fn value(&self, key: &str) -> &'a str {
        self.given(key).unwrap_or_else(|| {
            self.declared
                .iter()
                .find(|p| p.key == key)
                .map_or("", |p| p.default)
        })
    }

    /// Scheduler `name`'s error for `key`: `message` says what is wrong.
    pub fn bad(&self, key: &str, message: impl Into<String>) -> SchedulerError {
        SchedulerError::BadParam {
            name: self.name.into(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// The error for a value of `key` that needs `hint`, which the driver
    /// did not give; `message` says which value needed it.
    pub fn needs(&self, key: &str, hint: Hint, message: impl Into<String>) -> SchedulerError {
        SchedulerError::NeedsHint {
            name: self.name.into(),
            key: key.into(),
            hint,
            message: message.into(),
        }
    }

    /// The value of a [`Kind::Choice`] key (given or default), checked
    /// against the declared words: `'x' is not a, b or c`.
    pub fn choice(&self, key: &str) -> Result<&'a str, SchedulerError> {
        let v = self.value(key);
        let words = match self.declared.iter().find(|p| p.key == key).map(|p| p.kind) {
            Some(Kind::Choice(words)) => words,
            _ => return Ok(v),
        };
        if words.contains(&v) {
            Ok(v)
        } else {
            Err(self.bad(key, format!("'{v}' is not {}", or_list(words))))
        }
    }

    /// The value given for `key` parsed by `parse` (its error message
    /// kept), or `None` if not given.
    pub fn parsed<T>(
        &self,
        key: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, SchedulerError> {
        self.given(key)
            .map(|v| parse(v).map_err(|m| self.bad(key, m)))
            .transpose()
    }

    /// A size in bytes given for `key` ([`parse::bytes`]).
    pub fn bytes(&self, key: &str) -> Result<Option<f64>, SchedulerError> {
        self.parsed(key, |v| parse::bytes(v).map(|b| b.0 as f64))
    }

    /// A duration given for `key` ([`parse::dur`]).
    pub fn dur(&self, key: &str) -> Result<Option<Dur>, SchedulerError> {
        self.parsed(key, parse::dur)
    }

    /// A duration above 0 given for `key`; `zero` is the message for 0.
    pub fn positive_dur(&self, key: &str, zero: &str) -> Result<Option<Dur>, SchedulerError> {
        match self.dur(key)? {
            Some(d) if d.0 == 0 => Err(self.bad(key, zero)),
            d => Ok(d),
        }
    }

    /// A rate in bits/s given for `key` ([`parse::rate`]).
    pub fn rate(&self, key: &str) -> Result<Option<f64>, SchedulerError> {
        self.parsed(key, |v| parse::rate(v).map(|r| r.0))
    }

    /// A whole number in `min..=max` given for `key`; out of range, the
    /// error reads `N {what}: give MIN to MAX`.
    pub fn count(
        &self,
        key: &str,
        min: u64,
        max: u64,
        what: &str,
    ) -> Result<Option<u64>, SchedulerError> {
        let Some(v) = self.given(key) else {
            return Ok(None);
        };
        let n = parse::uint(v).map_err(|m| self.bad(key, m))?;
        if (min..=max).contains(&n) {
            Ok(Some(n))
        } else {
            Err(self.bad(key, format!("{n} {what}: give {min} to {max}")))
        }
    }

    /// A real number given for `key` that `ok` accepts; else the error
    /// reads `'x' is not {expected}`.
    pub fn number(
        &self,
        key: &str,
        ok: impl Fn(f64) -> bool,
        expected: &str,
    ) -> Result<Option<f64>, SchedulerError> {
        let Some(v) = self.given(key) else {
            return Ok(None);
        };
        v.parse::<f64>()
            .ok()
            .filter(|x| ok(*x))
            .map(Some)
            .ok_or_else(|| self.bad(key, format!("'{v}' is not {expected}")))
    }

    /// A [`Kind::PercentileOrBytes`] value of `key` (given or default), in
    /// bytes: `pQ` of the hints' coflow sizes, `inf`, or a size.
    pub fn percentile_or_bytes(
        &self,
        key: &str,
        hints: &WorkloadHints,
    ) -> Result<f64, SchedulerError> {
        let t = self.value(key);
        if let Some(q) = percentile_key(t) {
            let q = q.map_err(|m| self.bad(key, m))?;
            percentile(&hints.coflow_sizes, q).ok_or_else(|| {
                self.needs(
                    key,
                    Hint::CoflowSizes,
                    "a percentile needs the workload's coflow sizes",
                )
            })
        } else if t == "inf" {
            Ok(f64::INFINITY)
        } else {
            crate::spec::parse_bytes(t).ok_or_else(|| {
                self.bad(
                    key,
                    format!("'{t}' is neither a percentile (p80) nor a size (10MiB)"),
                )
            })
        }
    }

    /// Hands each `key=value` given to `set`, in order (for a configuration
    /// that parses its own keys); the first value it refuses is this
    /// scheduler's error for that key.
    pub fn set_each<T>(
        &self,
        mut set: impl FnMut(&str, &str) -> Result<T, String>,
    ) -> Result<(), SchedulerError> {
        for (k, v) in self.given {
            set(k, v).map_err(|m| self.bad(k, m))?;
        }
        Ok(())
    }
}

/// A percentile written `pQ` (Q in 0..=100): `None` if `v` is not of that
/// form, else Q or why it is not a percentile.
pub fn percentile_key(v: &str) -> Option<Result<f64, String>> {
    let p = v.strip_prefix('p')?;
    Some(
        p.parse()
            .ok()
            .filter(|q| (0.0..=100.0).contains(q))
            .ok_or_else(|| format!("'{v}' is not a percentile p0..p100")),
    )
}

/// `a`, `a or b`, `a, b or c`.
pub fn or_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The two task-id parameters of the schedulers that order tasks by id
/// (`fifo-lm`, `baraat`; [`crate::tasks::TaskIdConfig`]).
pub const TASK_ID_PARAMS: [Param; 2] = [
    Param {
        key: "counters",
        kind: Kind::Count,
        default: "1",
        unit: "",
        help: "task-id counters (entry points), 1 to 65536",
    },
    Param {
        key: "background",
        kind: Kind::Count,
        default: "none",
        unit: "",
        help: "first background coflow id, or none",
    },
];

/// The `solver` parameter of the schedulers that can allocate incrementally.
pub const SOLVER_PARAM: Param = Param {
    key: "solver",
    kind: Kind::Choice(&["auto", "incremental"]),
    default: "auto",
    unit: "",
    help: "incremental: IncrementalMaxMin also on the big switch (to test one against the other)",
};
