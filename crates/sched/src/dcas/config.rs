//! D-CAS's parameters: the spec's keys (thresholds, intervals, the
//! message model, the combine and desired-service rules) as a checked
//! [`DcasConfig`], from a spec's parameters (`dcas_config`) or the
//! registry's constructor.

use super::*;

/// The words of [`Combine`].
pub(super) const COMBINE: &[&str] = &["max", "min", "mean"];

/// A duration parameter of D-CAS.
pub(super) const fn dur_param(
    key: &'static str,
    default: &'static str,
    help: &'static str,
) -> Param {
    Param {
        key,
        kind: Kind::Duration,
        default,
        unit: "",
        help,
    }
}

/// How a receiver (Ψ) or a sender (Φ) combines priority values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// The largest (lowest priority): the paper's choice.
    Max,
    /// The smallest.
    Min,
    /// The mean, rounded to the nearest whole value (halves up).
    Mean,
}

impl Combine {
    /// The combination named `max`, `min` or `mean`.
    pub fn parse(s: &str) -> Option<Combine> {
        match s {
            "max" => Some(Combine::Max),
            "min" => Some(Combine::Min),
            "mean" => Some(Combine::Mean),
            _ => None,
        }
    }

    /// Combines `values`; `None` when there are none.
    pub fn apply(self, values: impl IntoIterator<Item = u64>) -> Option<u64> {
        let mut it = values.into_iter();
        match self {
            Combine::Max => it.max(),
            Combine::Min => it.min(),
            Combine::Mean => {
                let (mut sum, mut n) = (0u128, 0u128);
                for v in it.by_ref() {
                    sum += u128::from(v);
                    n += 1;
                }
                (n > 0).then(|| ((sum + n / 2) / n) as u64)
            }
        }
    }
}

/// A subcoflow's desired priority (`getDesiredPriority`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Desired {
    /// Remaining bytes at the sender / its NIC rate, in quanta (the paper).
    RemainingTime,
    /// Always this value (`desired=1`: per-flow fair sharing with
    /// `threshold=0`).
    Constant(u64),
    /// How many of these ascending byte counts the remaining bytes reach:
    /// the paper's priority cut into a few classes, as a switch's queues
    /// carry it (`desired=bands:B1/B2/B3`; the testbed's queues 4-7).
    Bands(Vec<u64>),
}

/// D-CAS's parameters (paper V-A, item 4, for the defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct DcasConfig {
    /// δ: how often each sender runs Pseudocode 1.
    pub delta: Dur,
    /// `thresholdVolume`, bytes: subcoflows with less left are FIFO.
    pub threshold: f64,
    /// `T`: a subcoflow unserved for longer gets `<1, 0>`.
    pub starvation: Dur,
    /// How long a receiver keeps a desired priority.
    pub expiry: Dur,
    /// How long a control message takes.
    pub msg_delay: Dur,
    /// Probability that a control message is lost.
    pub loss: f64,
    /// Seed of the loss draws.
    pub seed: u64,
    /// Ψ, the receivers' combination.
    pub psi: Combine,
    /// Φ, the senders' combination.
    pub phi: Combine,
    /// The desired priority.
    pub desired: Desired,
    /// The unit of desired priorities (a time).
    pub quantum: Dur,
    /// Allocate with [`IncrementalMaxMin`] also on the big switch (not a
    /// D-CAS parameter: `solver=incremental`, to test one allocation against
    /// the other).
    pub incremental: bool,
}

impl Default for DcasConfig {
    /// δ = 100 ms, threshold 1 MiB ("1 MB", read as MiB as the workloads
    /// read the papers' MB), T = 1 s, expiry 2 s, messages 100 µs, no loss,
    /// Ψ = Φ = max, desired = remaining time in µs.
    fn default() -> DcasConfig {
        DcasConfig {
            delta: Dur::from_millis(100),
            threshold: (1u64 << 20) as f64,
            starvation: Dur::from_millis(1000),
            expiry: Dur::from_millis(2000),
            msg_delay: Dur::from_micros(100),
            loss: 0.0,
            seed: 0,
            psi: Combine::Max,
            phi: Combine::Max,
            desired: Desired::RemainingTime,
            quantum: Dur::from_micros(1),
            incremental: false,
        }
    }
}

impl Desired {
    /// A `desired=` value: `bytes`, `bands:B1/B2/..` (ascending byte
    /// counts) or a whole number.
    pub fn parse(value: &str) -> Result<Desired, String> {
        if value == "bytes" {
            Ok(Desired::RemainingTime)
        } else if let Some(list) = value.strip_prefix("bands:") {
            let bounds = list
                .split('/')
                .map(|b| parse::bytes(b).map(|x| x.0))
                .collect::<Result<Vec<u64>, String>>()
                .map_err(|e| format!("bands '{list}': {e}"))?;
            if bounds.is_empty() || bounds.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!(
                    "bands '{list}': give ascending byte counts, '/'-separated"
                ));
            }
            Ok(Desired::Bands(bounds))
        } else {
            Ok(Desired::Constant(parse::uint(value).map_err(|_| {
                format!("'{value}' is neither 'bytes', 'bands:B1/B2/..' nor a whole number")
            })?))
        }
    }
}

impl DcasConfig {
    /// Sets the parameter `key` (one of [`DCAS`]'s) from its spec text; the
    /// error says what is wrong with the value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if !DCAS.params.iter().any(|p| p.key == key) {
            let known: Vec<&str> = DCAS.params.iter().map(|p| p.key).collect();
            return Err(format!("unknown key (known: {})", known.join(", ")));
        }
        let given = [(key.to_string(), value.to_string())];
        self.apply(&Params::new("dcas", &given, DCAS.params))
            .map_err(|e| match e {
                SchedulerError::BadParam { message, .. } => message,
                e => e.to_string(),
            })
    }

    /// Sets every parameter given in `p`.
    pub fn apply(&mut self, p: &Params<'_>) -> Result<(), SchedulerError> {
        for (key, slot) in [
            ("delta", &mut self.delta),
            ("t", &mut self.starvation),
            ("expiry", &mut self.expiry),
            ("msg_delay", &mut self.msg_delay),
            ("quantum", &mut self.quantum),
        ] {
            if let Some(d) = p.dur(key)? {
                *slot = d;
            }
        }
        if let Some(v) = p.given("threshold") {
            self.threshold = if v == "inf" {
                f64::INFINITY
            } else {
                p.bytes("threshold")?.unwrap_or(self.threshold)
            };
        }
        if let Some(loss) = p.parsed("loss", parse::nonneg_real)? {
            self.loss = loss;
        }
        if let Some(seed) = p.parsed("seed", parse::uint)? {
            self.seed = seed;
        }
        if p.given("psi").is_some() {
            self.psi = Combine::parse(p.choice("psi")?).unwrap_or(self.psi);
        }
        if p.given("phi").is_some() {
            self.phi = Combine::parse(p.choice("phi")?).unwrap_or(self.phi);
        }
        if p.given("solver").is_some() {
            self.incremental = p.choice("solver")? == "incremental";
        }
        if let Some(desired) = p.parsed("desired", Desired::parse)? {
            self.desired = desired;
        }
        Ok(())
    }

    /// Checks the parameters together; the error names the key at fault.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.delta == Dur::ZERO {
            return Err(("delta", "must be positive".into()));
        }
        if self.expiry == Dur::ZERO {
            return Err(("expiry", "must be positive".into()));
        }
        if self.quantum == Dur::ZERO {
            return Err(("quantum", "must be positive".into()));
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return Err((
                "loss",
                format!("{} is not a probability in [0, 1]", self.loss),
            ));
        }
        if self.msg_delay.0.saturating_mul(2) >= self.delta.0 {
            return Err((
                "msg_delay",
                format!(
                    "a negotiation (2 x msg_delay = {} ns) must end before the next tick (delta = {} ns)",
                    self.msg_delay.0.saturating_mul(2),
                    self.delta.0
                ),
            ));
        }
        Ok(())
    }

    /// The desired priority of a subcoflow with `rem` bytes left at a sender
    /// whose NIC sends `nic_bps` bits/s.
    pub fn desired_of(&self, rem: f64, nic_bps: f64) -> u64 {
        match &self.desired {
            Desired::Constant(k) => *k,
            Desired::Bands(bounds) => bounds
                .iter()
                .filter(|&&b| rem + BYTES_TIE >= b as f64)
                .count() as u64,
            Desired::RemainingTime => {
                let ns = rem.max(0.0) * 8e9 / nic_bps;
                (ns / self.quantum.0 as f64).round() as u64
            }
        }
    }
}

/// The D-CAS configuration of a `dcas` spec's parameters, checked: for a
/// caller that needs the [`Dcas`] itself (its decision log,
/// say) rather than the scheduler `build` makes of it.
pub fn dcas_config(params: &[(String, String)]) -> Result<DcasConfig, SchedulerError> {
    let p = DCAS.params_of(params)?;
    let mut config = DcasConfig::default();
    config.apply(&p)?;
    config
        .validate()
        .map_err(|(key, message)| p.bad(key, message))?;
    Ok(config)
}
