//! The one place schedulers are listed: CLI names to descriptors.
//!
//! A spec is a name with optional parameters, `name` or
//! `name:key=value;key=value`, e.g. `fifo-lm:threshold=p80` (the 80th
//! percentile of the workload's coflow sizes) or `fifo-lm:threshold=10MiB`.
//! Each scheduler's module defines its [`SchedulerDescriptor`] (name,
//! description, paper, parameters, needs, constructor); [`SCHEDULERS`] lists
//! them, and [`NAMES`], the key checks and [`build`] all read that list.

use crate::descriptor::{Params, SchedulerDescriptor};
use crate::host::{HostContext, HostPolicy};
use crate::spec::{Hint, SchedulerError, SchedulerSpec, WorkloadHints};
use crate::AnyScheduler;
use coflowkit_model::Fabric;

/// Every scheduler, in the order `coflowkit schedulers` lists them.
pub const SCHEDULERS: &[&SchedulerDescriptor] = &[
    &crate::fair::FAIR,
    &crate::fair_ends::FAIR_ENDS,
    &crate::srpt::SRPT,
    &crate::ordered::FIFO,
    &crate::fifo_lm::FIFO_LM,
    &crate::baraat::BARAAT,
    &crate::ordered::SCF,
    &crate::ordered::NCF,
    &crate::ordered::LCF,
    &crate::ordered::STF,
    &crate::varys::VARYS,
    &crate::aalo::AALO,
    &crate::aalo::AALO_LOCAL,
    &crate::dcas::DCAS,
    &crate::tafe::TAFE,
    &crate::d2tcp::D2TCP,
    &crate::karuna::KARUNA,
    &crate::karuna::PIAS,
    &crate::karuna::PFABRIC_EDF,
    &crate::karuna::EDF_SJF,
];

/// Every scheduler name, from the costliest run on a large trace to the
/// cheapest ([`SchedulerDescriptor::cost`], ties in the registry's order).
pub fn costliest_first() -> Vec<&'static str> {
    let mut order: Vec<&SchedulerDescriptor> = SCHEDULERS.to_vec();
    order.sort_by(|a, b| b.cost.total_cmp(&a.cost));
    order.into_iter().map(|d| d.name).collect()
}

/// Where scheduler `name` stands in [`costliest_first`]: the lower, the
/// sooner a driver of several runs starts it (an unknown name last).
pub fn cost_rank(name: &str) -> usize {
    let order = costliest_first();
    order.iter().position(|&n| n == name).unwrap_or(order.len())
}

/// The names of the schedulers with a host policy, in the registry's order.
pub fn host_names() -> impl Iterator<Item = &'static str> {
    SCHEDULERS
        .iter()
        .filter(|d| d.parts.host.is_some())
        .map(|d| d.name)
}

/// One host's policy for `spec` (checked as the flow-level scheduler's spec
/// is), or why not: a bad spec, a missing hint, or a scheduler without a
/// host policy ([`SchedulerError::NoHostPolicy`]).
pub fn build_host(
    spec: &SchedulerSpec,
    hints: &WorkloadHints,
    ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let (d, params) = spec.params()?;
    let build = d.parts.host.ok_or_else(|| SchedulerError::NoHostPolicy {
        name: spec.name.clone(),
        known: host_names().collect::<Vec<_>>().join(", "),
    })?;
    build(&params, hints, ctx)
}

/// Checks a run of `spec` on a workload with `hints` over `fabric` before it
/// starts ([`Parts::preflight`](crate::descriptor::Parts::preflight): an
/// estimated cost above what the spec allows); a scheduler without such a
/// check passes.
pub fn preflight(
    spec: &SchedulerSpec,
    hints: &WorkloadHints,
    fabric: &Fabric,
) -> Result<(), SchedulerError> {
    let (d, params) = spec.params()?;
    match d.parts.preflight {
        Some(check) => check(&params, hints, fabric),
        None => Ok(()),
    }
}

/// The class thresholds (bytes sent) a runtime agent marks the coflows of
/// `spec` by until its coordinator has scheduled them
/// ([`Parts::local_thresholds`](crate::descriptor::Parts::local_thresholds)):
/// none for a scheduler without local classes.
pub fn local_thresholds(spec: &SchedulerSpec) -> Result<Vec<f64>, SchedulerError> {
    let (d, params) = spec.params()?;
    d.parts
        .local_thresholds
        .map_or(Ok(Vec::new()), |thresholds| thresholds(&params))
}

/// The spec a central coordinator (the packet engine's, the runtime's)
/// builds for `spec`: its scheduler's
/// [`Parts::coordinated`](crate::descriptor::Parts::coordinated) keys added
/// where the spec does not give them.
pub fn coordinator_spec(spec: &SchedulerSpec) -> Result<SchedulerSpec, SchedulerError> {
    Ok(descriptor(&spec.name)?.coordinated(spec))
}

/// Every scheduler name the registry knows, with its one-line description
/// (from [`SCHEDULERS`]).
pub const NAMES: &[(&str, &str)] = &names::<{ SCHEDULERS.len() }>();

/// The `(name, description)` of each of the first `N` descriptors.
const fn names<const N: usize>() -> [(&'static str, &'static str); N] {
    let mut out = [("", ""); N];
    let mut i = 0;
    while i < N {
        out[i] = (SCHEDULERS[i].name, SCHEDULERS[i].description);
        i += 1;
    }
    out
}

/// The descriptor of scheduler `name`.
pub fn descriptor(name: &str) -> Result<&'static SchedulerDescriptor, SchedulerError> {
    SCHEDULERS
        .iter()
        .copied()
        .find(|d| d.name == name)
        .ok_or_else(|| unknown(name))
}

/// Parsing a spec and reading its parameters look the name up in [`SCHEDULERS`], so they are
/// the registry's; the spec itself is a contract ([`crate::spec`]).
impl SchedulerSpec {
    /// Parses `name` or `name:key=value;key=value`.
    pub fn parse(text: &str) -> Result<SchedulerSpec, SchedulerError> {
        let text = text.trim();
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let name = name.trim().to_string();
        descriptor(&name)?;
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

    /// The spec's descriptor and its parameters, every key checked against
    /// the declared ones.
    pub fn params(&self) -> Result<(&'static SchedulerDescriptor, Params<'_>), SchedulerError> {
        let d = descriptor(&self.name)?;
        Ok((d, d.params_of(&self.params)?))
    }
}

fn unknown(name: &str) -> SchedulerError {
    SchedulerError::Unknown {
        name: name.to_string(),
        known: SCHEDULERS
            .iter()
            .map(|d| d.name)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Builds the scheduler a spec names, with the workload's `hints`.
pub fn build(spec: &SchedulerSpec, hints: &WorkloadHints) -> Result<AnyScheduler, SchedulerError> {
    let (d, p) = spec.params()?;
    (d.build)(&p, hints)
}

/// Checks a spec without a workload: every key and value, except that a
/// value needing a workload hint ([`SchedulerError::NeedsHint`]) passes,
/// since the driver that runs it will give the workload. Returns the
/// hints the spec needs (none, or the one its first such value needs).
pub fn check(spec: &SchedulerSpec) -> Result<Option<Hint>, SchedulerError> {
    match build(spec, &WorkloadHints::default()) {
        Ok(_) => Ok(None),
        Err(SchedulerError::NeedsHint { hint, .. }) => Ok(Some(hint)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aalo::{AaloConfig, Coordination};
    use crate::tafe::{FlowOrder, TafeConfig};
    use coflowkit_model::percentile;

    #[test]
    fn costliest_first_lists_every_scheduler_once() {
        let mut listed = costliest_first();
        let mut names: Vec<&str> = NAMES.iter().map(|&(n, _)| n).collect();
        assert_eq!(listed[0], "baraat");
        assert_eq!(cost_rank("fair"), listed.len() - 1);
        assert_eq!(cost_rank("no-such"), listed.len());
        listed.sort_unstable();
        names.sort_unstable();
        assert_eq!(listed, names);
        assert!(SCHEDULERS
            .iter()
            .all(|d| d.cost.is_finite() && d.cost > 0.0));
    }
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
        assert_eq!(
            e.to_string(),
            "scheduler 'fair': unknown parameter 'x' (valid: solver)"
        );
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
            "scheduler 'dcas': unknown parameter 'deltaa' (valid: delta, threshold, t, expiry, \
             msg_delay, loss, seed, psi, phi, desired, quantum, solver, age, wait, count, keep_own)"
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
        assert_eq!(crate::spec::parse_bytes("10MiB"), Some(10485760.0));
        assert!(err("fifo-lm:threshold=1MB;per=sender")
            .contains("parameter 'per': per=sender needs mux=last"));
        assert!(
            err("fifo-lm:threshold=1MB;mux=first").contains("'first' is not next, last or link")
        );
        assert!(err("fifo-lm:threshold=1MB;mux=last;solver=incremental")
            .contains("parameter 'solver': solver=incremental needs mux=next"));
        assert!(err("fifo-lm:threshold=1MB;solver=fast")
            .contains("parameter 'solver': 'fast' is not auto or incremental"));
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
        assert_eq!(err("baraat:task_size=granted"), None);
        assert!(err("baraat:task_size=reserved")
            .unwrap()
            .contains("parameter 'task_size'"));
        assert_eq!(
            err("fifo-lm:threshold=p90;counters=2;background=none"),
            None
        );
        assert_eq!(
            err("baraat:rttt=1ms").unwrap(),
            "scheduler 'baraat': unknown parameter 'rttt' (valid: threshold, rtt, delta, share, vc, \
             vc_max, task_size, counters, background, budget)"
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
            "scheduler 'fifo': unknown parameter 'counters' (valid: solver, backfill)"
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
            "scheduler 'aalo-local': unknown parameter 'delta' (valid: k, e, q1, weights, queues)"
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

    #[test]
    fn tafe_thresholds_resolve_and_errors_name_the_key() {
        let hints = WorkloadHints {
            coflow_sizes: vec![100.0, 200.0, 300.0, 400.0, 1000.0],
            ..Default::default()
        };
        let cfg = |spec: &str| {
            let s = SchedulerSpec::parse(spec).unwrap();
            TafeConfig::of_params(&s.params().unwrap().1, &hints)
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
