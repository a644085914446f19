//! The coflow-benchmark trace format (the Facebook 2010 trace published with
//! Varys and Aalo, e.g. `FB2010-1Hr-150-0.txt`).
//!
//! ```text
//! <ports> <coflows>
//! <id> <arrival ms> <#mappers> <mapper locations...> <#reducers> <location:MB ...>
//! ...
//! ```
//!
//! The format gives, per coflow, where its mappers run and how many
//! megabytes each reducer receives, but not the flows themselves. coflowkit
//! turns a line into flows by one convention, shared with the synthetic
//! generator ([`crate::synth`]):
//!
//! - MB means 2^20 bytes and may be fractional; a reducer's bytes are
//!   `round(MB * 2^20)`, summed over reducers at the same location;
//! - there is one flow for each pair (distinct mapper location, distinct
//!   reducer location), ordered by (src, dst); a pair with src == dst is kept
//!   (it uses that port's ingress and egress);
//! - a reducer location's bytes are split evenly over the distinct mapper
//!   locations, and the integer remainder goes one byte each to the first
//!   mapper locations in ascending order, so every total is exact;
//! - arrival is `ms * 10^6` ns (fractional milliseconds are rounded to the
//!   nearest nanosecond).
//!
//! The result is a [`Workload`] with `n_hosts = ports`.
//!
//! Correctness properties of a successful read (each enforced in
//! [`read_benchmark_str`]): the header's coflow count equals the number of
//! coflow lines (blank trailing lines aside); every line has exactly the
//! tokens its counts announce; every number is finite, non-negative and of
//! the right kind; every location is below `ports`; coflow ids are unique;
//! every coflow has at least one mapper and one reducer, hence a flow. Any
//! other input is an error naming the line and field; no input panics.

use crate::error::{read_text, TraceError};
use crate::num;
use coflowkit_model::{flow, Bytes, CoflowSpec, FlowSpec, Time, Workload};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Reads a coflow-benchmark trace from a file.
pub fn read_benchmark_file(path: &Path) -> Result<Workload, TraceError> {
    let text = read_text(path)?;
    read_benchmark_str(&text, &path.display().to_string())
}

/// Reads a coflow-benchmark trace from text; `source` names it in errors.
pub fn read_benchmark_str(text: &str, source: &str) -> Result<Workload, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let err = |line: usize, field: &str, message: String| {
        TraceError::parse(source, line as u64, field, message)
    };
    const EXPECTED: &str = "expected \"<ports> <coflows>\"";

    let Some(header) = lines.first() else {
        return Err(err(
            1,
            "header",
            format!("missing: the trace is empty ({EXPECTED})"),
        ));
    };
    let mut toks = header.split_whitespace();
    let ports_tok = toks.next().ok_or_else(|| {
        err(
            1,
            "header",
            format!("missing: the line is blank ({EXPECTED})"),
        )
    })?;
    let ports = num::uint32(ports_tok).map_err(|m| err(1, "ports", m))?;
    if ports == 0 {
        return Err(err(1, "ports", "must be at least 1".into()));
    }
    let count_tok = toks
        .next()
        .ok_or_else(|| err(1, "coflow count", "missing".into()))?;
    let count = num::uint(count_tok).map_err(|m| err(1, "coflow count", m))?;
    if let Some(extra) = toks.next() {
        return Err(err(
            1,
            "header",
            format!("unexpected extra token {extra:?} ({EXPECTED})"),
        ));
    }
    let n_lines = lines.len() - 1;
    if n_lines as u64 != count {
        return Err(err(
            1,
            "coflow count",
            format!(
                "the header says {} but the trace has {}",
                plural(count, "coflow"),
                plural(n_lines as u64, "coflow line")
            ),
        ));
    }

    let mut first_line_of: HashMap<u64, usize> = HashMap::with_capacity(n_lines);
    let mut coflows = Vec::with_capacity(n_lines);
    for (i, text) in lines[1..].iter().enumerate() {
        let line = i + 2;
        let c = parse_coflow(text, ports).map_err(|(field, message)| err(line, &field, message))?;
        if let Some(first) = first_line_of.insert(c.id.0, line) {
            return Err(err(
                line,
                "id",
                format!("duplicate coflow id {} (first on line {first})", c.id.0),
            ));
        }
        coflows.push(c);
    }
    Ok(Workload {
        n_hosts: ports,
        coflows,
    })
}

/// One coflow line, or the (field, message) of its first error.
fn parse_coflow(text: &str, ports: u32) -> Result<CoflowSpec, (String, String)> {
    let mut toks = text.split_whitespace();
    let mut next = |field: &str, missing: &str| {
        toks.next()
            .ok_or_else(|| (field.to_string(), format!("missing: {missing}")))
    };
    let at = |field: &str| {
        let field = field.to_string();
        move |message: String| (field, message)
    };

    let id = num::uint(next("id", "the line is blank")?).map_err(at("id"))?;
    let arrival =
        millis_to_ns(next("arrival", "the line ends after the id")?).map_err(at("arrival"))?;

    let n_mappers = num::uint(next("mapper count", "the line ends after the arrival")?)
        .map_err(at("mapper count"))?;
    let mut mappers = Vec::new();
    for k in 1..=n_mappers {
        let field = format!("mapper {k} location");
        let tok = next(
            &field,
            &format!("the line ends after {} of {n_mappers} mappers", k - 1),
        )?;
        mappers.push(location(tok, ports).map_err(at(&field))?);
    }

    let n_reducers = num::uint(next("reducer count", "the line ends after the mappers")?)
        .map_err(at("reducer count"))?;
    let mut reducers: BTreeMap<u32, u64> = BTreeMap::new();
    for k in 1..=n_reducers {
        let field = format!("reducer {k}");
        let tok = next(
            &field,
            &format!("the line ends after {} of {n_reducers} reducers", k - 1),
        )?;
        let Some((loc, mb)) = tok.split_once(':') else {
            return Err((field, format!("{tok:?} is not <location>:<MB>")));
        };
        let loc = location(loc, ports).map_err(at(&format!("reducer {k} location")))?;
        let mb_field = format!("reducer {k} MB");
        let x = num::nonneg_real(mb).map_err(at(&mb_field))?;
        let bytes = num::scaled(mb, x, Bytes::MIB as f64).map_err(at(&mb_field))?;
        let sum = reducers.entry(loc).or_insert(0);
        *sum = sum.checked_add(bytes).ok_or_else(|| {
            (
                mb_field,
                format!("the reducers at location {loc} add up to more than 2^64 bytes"),
            )
        })?;
    }
    let rest = toks.count();
    if rest > 0 {
        let msg = format!(
            "says {} but {} follow it",
            plural(n_reducers, "reducer"),
            plural(n_reducers + rest as u64, "token")
        );
        return Err(("reducer count".into(), msg));
    }
    if n_mappers == 0 {
        let msg = format!(
            "0 mappers (and {}): the coflow has no flows",
            plural(n_reducers, "reducer")
        );
        return Err(("mapper count".into(), msg));
    }
    if n_reducers == 0 {
        return Err((
            "reducer count".into(),
            "0 reducers: the coflow has no flows".into(),
        ));
    }

    mappers.sort_unstable();
    mappers.dedup();
    let reducers: Vec<(u32, u64)> = reducers.into_iter().collect();
    Ok(CoflowSpec::new(
        id,
        Time(arrival),
        shuffle_flows(&mappers, &reducers),
    ))
}

/// The flows of a coflow with these mapper locations (sorted, distinct) and
/// reducer locations with their bytes (sorted by location, distinct), by the
/// convention in the module doc: one flow per pair, ordered by (src, dst),
/// each reducer's bytes split evenly with the remainder to the first mappers.
pub(crate) fn shuffle_flows(mappers: &[u32], reducers: &[(u32, u64)]) -> Vec<FlowSpec> {
    let m = mappers.len() as u64;
    if m == 0 {
        return Vec::new();
    }
    let mut flows = Vec::with_capacity(mappers.len() * reducers.len());
    for (i, &src) in mappers.iter().enumerate() {
        for &(dst, total) in reducers {
            let extra = u64::from((i as u64) < total % m);
            flows.push(flow(src, dst, total / m + extra));
        }
    }
    flows
}

/// A location token: an integer below `ports`.
fn location(tok: &str, ports: u32) -> Result<u32, String> {
    let v = num::uint(tok)?;
    if v >= u64::from(ports) {
        return Err(format!("{v} is outside the fabric (ports 0..{ports})"));
    }
    Ok(v as u32)
}

/// An arrival in milliseconds (integer or decimal) as nanoseconds.
fn millis_to_ns(tok: &str) -> Result<u64, String> {
    if let Ok(ms) = tok.parse::<u64>() {
        return ms
            .checked_mul(1_000_000)
            .ok_or_else(|| format!("{tok:?} is too large"));
    }
    let x = num::nonneg_real(tok)?;
    num::scaled(tok, x, 1e6)
}

/// `n` followed by `what`, with an "s" unless `n` is 1.
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::HostId;
    use proptest::prelude::*;

    const FB2010: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/FB2010-1Hr-150-0.txt"
    );

    fn read(text: &str) -> Result<Workload, TraceError> {
        read_benchmark_str(text, "trace.txt")
    }

    fn err(text: &str) -> String {
        read(text)
            .expect_err("the trace should be rejected")
            .to_string()
    }

    #[test]
    fn the_fb2010_trace_has_526_coflows_and_706397_flows() {
        let path = Path::new(FB2010);
        if !path.exists() {
            println!("skipped: {FB2010} is missing");
            return;
        }
        let w = read_benchmark_file(path).unwrap();
        assert_eq!(w.n_hosts, 150);
        assert_eq!(w.coflows.len(), 526);
        assert_eq!(
            w.coflows.iter().map(|c| c.flows.len()).sum::<usize>(),
            706_397
        );
        // The first line is `1 0 1 22 1 65:1.0`.
        assert_eq!(
            w.coflows[0],
            CoflowSpec::new(1, Time(0), vec![flow(22, 65, Bytes::MIB)])
        );
        // `2 10833 2 104 132 1 140:48.0`: 48 MiB split over two mappers.
        assert_eq!(
            w.coflows[1],
            CoflowSpec::new(
                2,
                Time(10_833_000_000),
                vec![
                    flow(104, 140, 24 * Bytes::MIB),
                    flow(132, 140, 24 * Bytes::MIB)
                ]
            )
        );
        for c in &w.coflows {
            assert!(
                c.flows
                    .windows(2)
                    .all(|p| (p[0].src, p[0].dst) < (p[1].src, p[1].dst)),
                "coflow {}",
                c.id.0
            );
        }
    }

    #[test]
    fn a_small_trace_gives_the_flows_by_the_convention() {
        let w =
            read("\u{feff}4 2\n1 0 1 2 1 3:1.0\n7 250 3 1 0 1 3 3:0.5 3:0.5 0:2\n\n  \n").unwrap();
        assert_eq!(w.n_hosts, 4);
        assert_eq!(
            w.coflows[0],
            CoflowSpec::new(1, Time(0), vec![flow(2, 3, Bytes::MIB)])
        );
        // Mappers {0, 1} (1 is repeated); reducers: 3 gets 0.5 + 0.5 MiB, 0 gets 2 MiB;
        // the src == dst flow 0 -> 0 is kept.
        let half = Bytes::MIB / 2;
        assert_eq!(
            w.coflows[1],
            CoflowSpec::new(
                7,
                Time(250_000_000),
                vec![
                    flow(0, 0, Bytes::MIB),
                    flow(0, 3, half),
                    flow(1, 0, Bytes::MIB),
                    flow(1, 3, half)
                ]
            )
        );
    }

    #[test]
    fn remainders_go_to_the_first_mappers() {
        // 1 MB = 1048576 bytes over 3 mappers: 349526, 349525, 349525.
        // 1e-6 MB rounds to 1 byte: the first mapper gets it, the others 0.
        let w = read("9 1\n5 1.5 3 8 2 5 2 4:1 6:0.000001\r\n").unwrap();
        let c = &w.coflows[0];
        assert_eq!(c.arrival, Time(1_500_000));
        assert_eq!(
            c.flows,
            vec![
                flow(2, 4, 349_526),
                flow(2, 6, 1),
                flow(5, 4, 349_525),
                flow(5, 6, 0),
                flow(8, 4, 349_525),
                flow(8, 6, 0)
            ]
        );
        assert_eq!(c.total_bytes(), Bytes(Bytes::MIB + 1));
        assert_eq!(c.flows[0].src, HostId(2));
    }

    #[test]
    fn bad_header_is_named() {
        assert_eq!(
            err(""),
            "trace.txt:1: header: missing: the trace is empty (expected \"<ports> <coflows>\")"
        );
        assert_eq!(
            err("\n\n"),
            "trace.txt:1: header: missing: the trace is empty (expected \"<ports> <coflows>\")"
        );
        assert_eq!(
            err(" \n1 0 1 0 1 0:1"),
            "trace.txt:1: header: missing: the line is blank (expected \"<ports> <coflows>\")"
        );
        assert_eq!(err("x 1"), "trace.txt:1: ports: \"x\" is not a number");
        assert_eq!(err("-4 1"), "trace.txt:1: ports: \"-4\" is negative");
        assert_eq!(err("0 0"), "trace.txt:1: ports: must be at least 1");
        assert_eq!(
            err("4294967296 0"),
            "trace.txt:1: ports: 4294967296 is too large (at most 4294967295)"
        );
        assert_eq!(err("4"), "trace.txt:1: coflow count: missing");
        assert_eq!(
            err("4 1.5"),
            "trace.txt:1: coflow count: \"1.5\" is not an integer"
        );
        assert_eq!(
            err("4 1 x"),
            "trace.txt:1: header: unexpected extra token \"x\" (expected \"<ports> <coflows>\")"
        );
    }

    #[test]
    fn coflow_count_must_match_the_lines() {
        assert_eq!(
            err("4 2\n1 0 1 0 1 1:1\n"),
            "trace.txt:1: coflow count: the header says 2 coflows but the trace has 1 coflow line"
        );
        assert_eq!(
            err("4 1\n1 0 1 0 1 1:1\n2 0 1 0 1 1:1"),
            "trace.txt:1: coflow count: the header says 1 coflow but the trace has 2 coflow lines"
        );
        // A blank line inside the trace is a truncated coflow line.
        assert_eq!(
            err("4 2\n\n2 0 1 0 1 1:1"),
            "trace.txt:2: id: missing: the line is blank"
        );
    }

    #[test]
    fn truncated_lines_are_named() {
        let e = |line: &str| err(&format!("4 1\n{line}"));
        assert_eq!(
            e("1"),
            "trace.txt:2: arrival: missing: the line ends after the id"
        );
        assert_eq!(
            e("1 0"),
            "trace.txt:2: mapper count: missing: the line ends after the arrival"
        );
        assert_eq!(
            e("1 0 2 1"),
            "trace.txt:2: mapper 2 location: missing: the line ends after 1 of 2 mappers"
        );
        assert_eq!(
            e("1 0 2 1 2"),
            "trace.txt:2: reducer count: missing: the line ends after the mappers"
        );
        assert_eq!(
            e("1 0 1 1 2 0:1"),
            "trace.txt:2: reducer 2: missing: the line ends after 1 of 2 reducers"
        );
        assert_eq!(
            e("1 0 1 1 1 0:1 3:4"),
            "trace.txt:2: reducer count: says 1 reducer but 2 tokens follow it"
        );
        assert_eq!(
            e("1 0 1 1 0 0:1 3:4"),
            "trace.txt:2: reducer count: says 0 reducers but 2 tokens follow it"
        );
    }

    #[test]
    fn bad_numbers_are_named() {
        let e = |line: &str| err(&format!("4 1\n{line}"));
        assert_eq!(e("a 0 1 0 1 1:1"), "trace.txt:2: id: \"a\" is not a number");
        assert_eq!(e("-1 0 1 0 1 1:1"), "trace.txt:2: id: \"-1\" is negative");
        assert_eq!(
            e("1 -5 1 0 1 1:1"),
            "trace.txt:2: arrival: \"-5\" is negative"
        );
        assert_eq!(
            e("1 NaN 1 0 1 1:1"),
            "trace.txt:2: arrival: \"NaN\" is not a finite number"
        );
        assert_eq!(
            e("1 1e300 1 0 1 1:1"),
            "trace.txt:2: arrival: \"1e300\" is too large"
        );
        assert_eq!(
            e("1 18446744073709551615 1 0 1 1:1"),
            "trace.txt:2: arrival: \"18446744073709551615\" is too large"
        );
        assert_eq!(
            e("1 0 x 0 1 1:1"),
            "trace.txt:2: mapper count: \"x\" is not a number"
        );
        assert_eq!(
            e("1 0 1 0.5 1 1:1"),
            "trace.txt:2: mapper 1 location: \"0.5\" is not an integer"
        );
        assert_eq!(
            e("1 0 1 0 1.0 1:1"),
            "trace.txt:2: reducer count: \"1.0\" is not an integer"
        );
        assert_eq!(
            e("1 0 1 0 1 1:x"),
            "trace.txt:2: reducer 1 MB: \"x\" is not a number"
        );
        assert_eq!(
            e("1 0 1 0 1 1:"),
            "trace.txt:2: reducer 1 MB: \"\" is not a number"
        );
        assert_eq!(
            e("1 0 1 0 1 1:-2"),
            "trace.txt:2: reducer 1 MB: \"-2\" is negative"
        );
        assert_eq!(
            e("1 0 1 0 1 1:inf"),
            "trace.txt:2: reducer 1 MB: \"inf\" is not a finite number"
        );
        assert_eq!(
            e("1 0 1 0 1 1:nan"),
            "trace.txt:2: reducer 1 MB: \"nan\" is not a finite number"
        );
        assert_eq!(
            e("1 0 1 0 1 1:1e300"),
            "trace.txt:2: reducer 1 MB: \"1e300\" is too large"
        );
        assert_eq!(
            e("1 0 1 0 2 1:17592186044415 1:17592186044415"),
            "trace.txt:2: reducer 2 MB: the reducers at location 1 add up to more than 2^64 bytes"
        );
    }

    #[test]
    fn locations_must_be_inside_the_fabric() {
        let text = "150 2\n1 0 1 0 1 1:1\n2 0 1 0 2 3:1 151:1.0\n";
        assert_eq!(
            err(text),
            "trace.txt:3: reducer 2 location: 151 is outside the fabric (ports 0..150)"
        );
        assert_eq!(
            err("4 1\n1 0 2 0 4 1 1:1"),
            "trace.txt:2: mapper 2 location: 4 is outside the fabric (ports 0..4)"
        );
        assert_eq!(
            err("4 1\n1 0 1 0 1 x:1"),
            "trace.txt:2: reducer 1 location: \"x\" is not a number"
        );
    }

    #[test]
    fn structure_errors_are_named() {
        let e = |line: &str| err(&format!("4 2\n1 0 1 0 1 1:1\n{line}"));
        assert_eq!(
            e("1 5 1 0 1 1:1"),
            "trace.txt:3: id: duplicate coflow id 1 (first on line 2)"
        );
        assert_eq!(
            e("2 0 1 0 1 3"),
            "trace.txt:3: reducer 1: \"3\" is not <location>:<MB>"
        );
        assert_eq!(
            e("2 0 0 2 1:1 3:1"),
            "trace.txt:3: mapper count: 0 mappers (and 2 reducers): the coflow has no flows"
        );
        assert_eq!(
            e("2 0 0 0"),
            "trace.txt:3: mapper count: 0 mappers (and 0 reducers): the coflow has no flows"
        );
        assert_eq!(
            e("2 0 2 1 2 0"),
            "trace.txt:3: reducer count: 0 reducers: the coflow has no flows"
        );
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let e = read_benchmark_file(Path::new("/nonexistent/trace.txt")).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/trace.txt: "), "{e}");
        assert_eq!(e.line(), None);
    }

    /// A small valid trace to mutate.
    const VALID: &str = "6 3\n1 0 2 0 5 2 1:1.5 2:0.25\n2 40 1 3 1 3:12\n3 41 3 1 2 4 1 0:0\n";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
            let _ = read(&text);
        }

        #[test]
        fn never_panics_on_trace_like_text(text in "[0-9 :.\\-\n]{0,120}") {
            let _ = read(&text);
        }

        #[test]
        fn never_panics_on_mutated_traces(
            edits in proptest::collection::vec((0usize..64, prop::sample::select(vec![
                "", " ", "\n", ":", "-", ".", "0", "1", "9", "x", "nan", "inf", "1e30", "99999999999999999999", "5:1",
            ])), 1..6)
        ) {
            let mut text = VALID.to_string();
            for (at, s) in edits {
                let at = at % (text.len() + 1);
                // Replace one character (or insert at the end).
                let end = (at + 1).min(text.len());
                text.replace_range(at..end, s);
            }
            if let Ok(w) = read(&text) {
                for c in &w.coflows {
                    prop_assert!(!c.flows.is_empty());
                    prop_assert!(c.flows.iter().all(|f| f.src.0 < w.n_hosts && f.dst.0 < w.n_hosts));
                }
            }
        }
    }
}
