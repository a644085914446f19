//! The engine's side of a differential test, and the comparison: the
//! engine runs a spec on a case, the reference runs the spec's policy, and
//! coflow release and completion instants must agree to the resolution of
//! the case ([`resolution_ns`]: 1 µs, plus 1e-9 relative, unless a flow
//! ends far below line rate).
//!
//! Keys computed from progress are compared as the module docs say:
//! remaining bytes within `BYTES_TIE` tie (`srpt`, `stf`), Γ within
//! `NANOS_TIE` (`varys`), in runs anchored at the smallest key as
//! `sort_with_ties` says (a chain of near-ties is cut where a key is out of
//! reach of the smallest). Ties: the reference follows the tie-breaks the
//! module docs give (coflows by release, arrival, then id, flows by index)
//! for keys equal in exact arithmetic, i.e. equal up to 1e-9 relative,
//! however the float arithmetic reached them. On a failure it lists the
//! near-ties of keys computed from progress (srpt, stf, varys), which is
//! where float noise or nanosecond rounding can flip an order.

use crate::case::Case;
use crate::policy::policy_of;
use crate::sim::RefSim;
use coflowkit_model::{Dur, Workload};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{Missed, SimOptions, SimResult, Simulation};

/// A spec for these tests, optionally ending in `|drop` (`Missed::Drop`).
pub fn split_missed(spec: &str) -> (&str, Missed) {
    match spec.strip_suffix("|drop") {
        Some(s) => (s, Missed::Drop),
        None => (spec, Missed::Finish),
    }
}

/// The engine's result for `spec` on `case`, with per-flow rows.
pub fn engine(case: &Case, spec: &str, link_util_bin: Option<Dur>) -> Result<SimResult, String> {
    let (spec, missed) = split_missed(spec);
    let fabric = case.fabric()?;
    let w = Workload {
        n_hosts: fabric.n_hosts(),
        coflows: case.coflows.clone(),
    }
    .validate(&fabric)
    .map_err(|e| e.to_string())?;
    let hints = WorkloadHints::of(&w);
    let s = build(
        &SchedulerSpec::parse(spec).map_err(|e| e.to_string())?,
        &hints,
    )
    .map_err(|e| e.to_string())?;
    Simulation::new(
        fabric,
        &w,
        s,
        SimOptions {
            per_flow: true,
            link_util_bin,
            missed,
        },
    )
    .run(&mut |_| {})
    .map_err(|e| e.to_string())
}

/// Instants (ns) from the engine: coflows as (id, release, completion) in
/// (arrival, id) order, flow finishes in the same order as
/// [`crate::sim::RefResult::flows`].
pub type Instants = (Vec<(u64, u64, u64)>, Vec<u64>);

/// The engine's instants for `spec` on `case`.
pub fn fast(case: &Case, spec: &str) -> Result<Instants, String> {
    let r = engine(case, spec, None)?;
    let coflows = r
        .coflows
        .iter()
        .map(|c| (c.id, c.release.0, c.finish.0))
        .collect();
    let flows = r
        .flows
        .as_ref()
        .map(|v| v.iter().map(|f| f.finish.0).collect())
        .unwrap_or_default();
    Ok((coflows, flows))
}

/// Whether the engine's instant is within 1 µs (plus 1e-9 relative) of the reference's.
pub fn close(fast_ns: u64, ref_ns: f64) -> bool {
    close_within(fast_ns, ref_ns, 1_000.0)
}

/// Whether the engine's instant is within `tolerance_ns` (plus 1e-9 relative) of the reference's.
pub fn close_within(fast_ns: u64, ref_ns: f64, tolerance_ns: f64) -> bool {
    (fast_ns as f64 - ref_ns).abs() <= tolerance_ns + 1e-9 * ref_ns.abs()
}

/// How close the engine's instants must be to the reference's: 1 µs, or,
/// if longer, the time the slowest-ending flow takes at its last rate
/// (`slowest_bps`) to send the bytes the fastest link carries in
/// [`coflowkit_sim::SNAP_NS`]. One tolerance per case: an error in one
/// coflow reaches others through releases and shared links. The engine's instants are whole nanoseconds
/// (completions rounded up, flows due within SNAP_NS finishing early), so
/// its byte counts may differ from the reference's by that much, and a
/// flow sending at a floor far below line rate turns those bytes into
/// time: Karuna's floor at `rtt=3700us` is 6.3 Mbit/s, 1/158 of 1 Gbit/s,
/// and 2 bytes there are 2.5 µs (issue 31, fuzz seed 177190841178787809:
/// 1.23 µs). Logic errors are milliseconds.
pub fn resolution_ns(caps: &[f64], slowest_bps: f64) -> f64 {
    let fastest = caps.iter().copied().fold(0.0, f64::max);
    let bytes = coflowkit_sim::SNAP_NS as f64 * fastest / 8e9;
    let at_slowest = bytes / (slowest_bps / 8e9);
    if at_slowest.is_finite() {
        at_slowest.max(1_000.0)
    } else {
        1_000.0
    }
}

/// Runs `spec` on the engine and its policy on the reference; describes any
/// coflow whose release or completion instants differ by more than 1 µs.
/// `Ok(false)`: not compared, the reference met a D-CAS decision within
/// rounding of its boundary (`RefResult::ambiguous`).
pub fn compare(case: &Case, spec: &str) -> Result<bool, String> {
    let (base, missed) = split_missed(spec);
    let mut sim = RefSim::new(case);
    sim.drop_missed = missed == Missed::Drop;
    let want = sim.run(&mut *policy_of(base, case));
    if want.ambiguous {
        return Ok(false);
    }
    let (got, got_flows) =
        fast(case, spec).map_err(|e| format!("{spec}: engine failed: {e}\n{case:?}"))?;
    let tol = want.tolerance;
    let bad = got.len() != want.coflows.len()
        || got
            .iter()
            .zip(&want.coflows)
            .any(|(&(gi, gr, gf), &(wi, wr, wf))| {
                gi != wi || !close_within(gr, wr, tol) || !close_within(gf, wf, tol)
            });
    if bad {
        let show = |v: Vec<(u64, f64, f64)>| -> String {
            v.iter()
                .map(|&(id, r, f)| format!("{id}: {:.9}+{:.9}", r * 1e-9, (f - r) * 1e-9))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let got_s = show(
            got.iter()
                .map(|&(i, r, f)| (i, r as f64, f as f64))
                .collect(),
        );
        let want_s = show(want.coflows.clone());
        return Err(format!(
            "{spec}: coflows (id: release + CCT, s) differ\n  engine:    [{got_s}]\n  reference: [{want_s}]\n  \
             flow finishes (ns), engine:    {got_flows:?}\n  \
             flow finishes (ns), reference: {:?}\n  \
             near-ties in the reference's orders (flow index / coflow id):\n    {}\n{case:?}",
            want.flows
                .iter()
                .map(|x| x.round() as u64)
                .collect::<Vec<_>>(),
            if want.ties.is_empty() {
                "none".to_string()
            } else {
                want.ties.join("\n    ")
            },
        ));
    }
    Ok(true)
}
