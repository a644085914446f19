//! The native trace format: one flow per row, carrying everything a
//! [`Workload`] holds.
//!
//! Columns, in this order ([`NATIVE_COLUMNS`]):
//!
//! | column        | type | meaning                                                   |
//! |---------------|------|-----------------------------------------------------------|
//! | `coflow_id`   | u64  | the flow's coflow                                         |
//! | `arrival_ns`  | u64  | the coflow's arrival, ns (the same on every row of it)    |
//! | `src`, `dst`  | u32  | sending and receiving host                                |
//! | `bytes`       | u64  | the flow's size                                           |
//! | `job_id`      | u64? | the coflow's job (empty: none)                            |
//! | `stage_id`    | u32? | its stage in the job (set exactly when `job_id` is)       |
//! | `deadline_ns` | u64? | the coflow's deadline after its arrival (empty: none)     |
//!
//! [`FlowColumns`] is the single in-memory definition of these columns: the
//! CSV reader and writer here go through it, and the Python side writes and
//! reads Parquet (with pyarrow) through the same columns.
//!
//! CSV: a header row with the column names, then one row per flow; empty
//! optional fields are empty strings. A first line `# n_hosts=<N>` keeps the
//! workload's host count: [`write_native_csv_to`] always writes it; the
//! reader accepts it (and then checks every host against it) or, without
//! it, takes the largest host id + 1. Errors name the file, the 1-based line
//! (the comment, if any, is line 1 and the header follows it) and the column.
//!
//! Rows of a coflow need not be adjacent: coflows appear in the order of
//! their first row, and flows in row order. Writing then reading back is
//! therefore lossless for every workload whose coflow ids are unique and
//! whose coflows have at least one flow (as validation demands).
//!
//! Correctness properties of a workload built from columns (each enforced in
//! `FlowColumns::into_workload`): all columns have the same length; every
//! host is below `n_hosts`; `job_id` and `stage_id` are both set or both
//! empty; a deadline is positive; arrival, job, stage and deadline are the
//! same on every row of a coflow.

use crate::error::{read_text, TraceError};
use crate::num;
use coflowkit_model::{flow, CoflowId, CoflowSpec, Dur, JobStage, Time, Workload};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// The native columns, in file order.
pub const NATIVE_COLUMNS: [&str; 8] = [
    "coflow_id",
    "arrival_ns",
    "src",
    "dst",
    "bytes",
    "job_id",
    "stage_id",
    "deadline_ns",
];

/// A workload as columns, one entry per flow (the native format in memory).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlowColumns {
    /// The flow's coflow.
    pub coflow_id: Vec<u64>,
    /// The coflow's arrival, in ns.
    pub arrival_ns: Vec<u64>,
    /// Sending host.
    pub src: Vec<u32>,
    /// Receiving host.
    pub dst: Vec<u32>,
    /// The flow's size in bytes.
    pub bytes: Vec<u64>,
    /// The coflow's job, if any.
    pub job_id: Vec<Option<u64>>,
    /// The coflow's stage in its job, if any.
    pub stage_id: Vec<Option<u32>>,
    /// The coflow's deadline after its arrival, in ns, if any.
    pub deadline_ns: Vec<Option<u64>>,
}

impl FlowColumns {
    /// The rows of `w`, coflow by coflow, flow by flow.
    pub fn from_workload(w: &Workload) -> FlowColumns {
        let n: usize = w.coflows.iter().map(|c| c.flows.len()).sum();
        let mut cols = FlowColumns::with_capacity(n);
        for c in &w.coflows {
            for f in &c.flows {
                cols.coflow_id.push(c.id.0);
                cols.arrival_ns.push(c.arrival.0);
                cols.src.push(f.src.0);
                cols.dst.push(f.dst.0);
                cols.bytes.push(f.bytes.0);
                cols.job_id.push(c.job.map(|j| j.job));
                cols.stage_id.push(c.job.map(|j| j.stage));
                cols.deadline_ns.push(c.deadline.map(|d| d.0));
            }
        }
        cols
    }

    /// Empty columns with room for `n` rows.
    pub fn with_capacity(n: usize) -> FlowColumns {
        FlowColumns {
            coflow_id: Vec::with_capacity(n),
            arrival_ns: Vec::with_capacity(n),
            src: Vec::with_capacity(n),
            dst: Vec::with_capacity(n),
            bytes: Vec::with_capacity(n),
            job_id: Vec::with_capacity(n),
            stage_id: Vec::with_capacity(n),
            deadline_ns: Vec::with_capacity(n),
        }
    }

    /// Number of rows (the length of `coflow_id`).
    pub fn len(&self) -> usize {
        self.coflow_id.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.coflow_id.is_empty()
    }

    /// Checks the columns and groups the rows into coflows. `n_hosts`
    /// defaults to the largest host + 1; errors name the 1-based row as the
    /// line (line 0 when the columns' lengths differ).
    pub fn into_workload(self, n_hosts: Option<u32>, source: &str) -> Result<Workload, TraceError> {
        self.into_workload_at(n_hosts, source, "row", |i| i as u64 + 1)
    }

    /// [`FlowColumns::into_workload`], with row `i` reported as line `line_of(i)`.
    fn into_workload_at(
        self,
        n_hosts: Option<u32>,
        source: &str,
        unit: &str,
        line_of: impl Fn(usize) -> u64,
    ) -> Result<Workload, TraceError> {
        let n = self.len();
        let lens = [
            ("arrival_ns", self.arrival_ns.len()),
            ("src", self.src.len()),
            ("dst", self.dst.len()),
            ("bytes", self.bytes.len()),
            ("job_id", self.job_id.len()),
            ("stage_id", self.stage_id.len()),
            ("deadline_ns", self.deadline_ns.len()),
        ];
        if let Some((name, len)) = lens.into_iter().find(|&(_, len)| len != n) {
            return Err(TraceError::parse(
                source,
                0,
                name,
                format!("has {len} rows but coflow_id has {n}"),
            ));
        }
        let err = |i: usize, field: &str, message: String| {
            TraceError::parse(source, line_of(i), field, message)
        };

        let n_hosts = match n_hosts {
            Some(h) => h,
            None => {
                let (i, side, max) = (0..n)
                    .flat_map(|i| [(i, "src", self.src[i]), (i, "dst", self.dst[i])])
                    .max_by_key(|&(i, _, h)| (h, std::cmp::Reverse(i)))
                    .unwrap_or((0, "src", 0));
                if n == 0 {
                    0
                } else {
                    max.checked_add(1).ok_or_else(|| {
                        err(
                            i,
                            side,
                            format!("{max} leaves no room for a host count (at most {} without n_hosts)", u32::MAX - 1),
                        )
                    })?
                }
            }
        };

        let mut coflows: Vec<CoflowSpec> = Vec::new();
        let mut first_row: Vec<usize> = Vec::new();
        let mut index: HashMap<u64, usize> = HashMap::new();
        for i in 0..n {
            for (side, h) in [("src", self.src[i]), ("dst", self.dst[i])] {
                if h >= n_hosts {
                    return Err(err(
                        i,
                        side,
                        format!("{h} is outside the fabric (hosts 0..{n_hosts})"),
                    ));
                }
            }
            let job = match (self.job_id[i], self.stage_id[i]) {
                (Some(job), Some(stage)) => Some(JobStage { job, stage }),
                (None, None) => None,
                (Some(_), None) => {
                    return Err(err(
                        i,
                        "stage_id",
                        "is empty but job_id is set (set both or neither)".into(),
                    ))
                }
                (None, Some(_)) => {
                    return Err(err(
                        i,
                        "job_id",
                        "is empty but stage_id is set (set both or neither)".into(),
                    ))
                }
            };
            if self.deadline_ns[i] == Some(0) {
                return Err(err(i, "deadline_ns", "must be positive".into()));
            }
            let id = self.coflow_id[i];
            let f = flow(self.src[i], self.dst[i], self.bytes[i]);
            let k = *index.entry(id).or_insert_with(|| {
                coflows.push(CoflowSpec {
                    id: CoflowId(id),
                    arrival: Time(self.arrival_ns[i]),
                    flows: Vec::new(),
                    job,
                    deadline: self.deadline_ns[i].map(Dur),
                    parents: Vec::new(),
                });
                first_row.push(i);
                coflows.len() - 1
            });
            let c = &mut coflows[k];
            let first = first_row[k];
            let differs = |field: &str, got: String, want: String| {
                let msg = format!(
                    "coflow {id}: {got} differs from {want} on {unit} {}",
                    line_of(first)
                );
                Err(err(i, field, msg))
            };
            if c.arrival.0 != self.arrival_ns[i] {
                return differs(
                    "arrival_ns",
                    self.arrival_ns[i].to_string(),
                    c.arrival.0.to_string(),
                );
            }
            if c.job.map(|j| j.job) != self.job_id[i] {
                return differs("job_id", show(self.job_id[i]), show(c.job.map(|j| j.job)));
            }
            if c.job.map(|j| j.stage) != self.stage_id[i] {
                return differs(
                    "stage_id",
                    show(self.stage_id[i]),
                    show(c.job.map(|j| j.stage)),
                );
            }
            if c.deadline.map(|d| d.0) != self.deadline_ns[i] {
                return differs(
                    "deadline_ns",
                    show(self.deadline_ns[i]),
                    show(c.deadline.map(|d| d.0)),
                );
            }
            c.flows.push(f);
        }
        Ok(Workload { n_hosts, coflows })
    }
}

/// An optional value as written in messages.
fn show<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "empty".to_string(), |v| v.to_string())
}

/// Reads a native CSV trace from a file.
pub fn read_native_csv(path: &Path) -> Result<Workload, TraceError> {
    let text = read_text(path)?;
    read_native_csv_str(&text, &path.display().to_string())
}

/// Reads a native CSV trace from text; `source` names it in errors.
pub fn read_native_csv_str(text: &str, source: &str) -> Result<Workload, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (n_hosts, body, offset) = split_comment(text, source)?;
    let csv_err = |e: csv::Error| {
        let line = e.position().map_or(0, |p| p.line() + offset);
        TraceError::parse(source, line, "csv", e.to_string())
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(body.as_bytes());
    let mut record = csv::StringRecord::new();

    let expected = NATIVE_COLUMNS.join(",");
    if !reader.read_record(&mut record).map_err(csv_err)? {
        return Err(TraceError::parse(
            source,
            offset + 1,
            "header",
            format!("missing (expected \"{expected}\")"),
        ));
    }
    if record.iter().ne(NATIVE_COLUMNS) {
        let line = record.position().map_or(offset + 1, |p| p.line() + offset);
        let found = record.iter().collect::<Vec<_>>().join(",");
        return Err(TraceError::parse(
            source,
            line,
            "header",
            format!("expected \"{expected}\", found \"{found}\""),
        ));
    }

    let mut cols = FlowColumns::default();
    let mut lines: Vec<u64> = Vec::new();
    while reader.read_record(&mut record).map_err(csv_err)? {
        let line = record.position().map_or(0, |p| p.line() + offset);
        parse_row(&record, &mut cols)
            .map_err(|(field, message)| TraceError::parse(source, line, field, message))?;
        lines.push(line);
    }
    cols.into_workload_at(n_hosts, source, "line", |i| lines[i])
}

/// Splits off a first line `# n_hosts=<N>`: (its N, the rest, lines taken).
fn split_comment<'a>(
    text: &'a str,
    source: &str,
) -> Result<(Option<u32>, &'a str, u64), TraceError> {
    if !text.trim_start_matches([' ', '\t']).starts_with('#') {
        return Ok((None, text, 0));
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first = first.trim();
    let value = first[1..].trim().strip_prefix("n_hosts=").ok_or_else(|| {
        TraceError::parse(
            source,
            1,
            "n_hosts",
            format!("expected \"# n_hosts=<N>\" on the first line, found {first:?}"),
        )
    })?;
    let n = num::uint32(value.trim()).map_err(|m| TraceError::parse(source, 1, "n_hosts", m))?;
    Ok((Some(n), rest, 1))
}

/// Appends one CSV row to `cols`, or gives the (column, message) at fault.
fn parse_row(
    record: &csv::StringRecord,
    cols: &mut FlowColumns,
) -> Result<(), (&'static str, String)> {
    if record.len() != NATIVE_COLUMNS.len() {
        return Err((
            "row",
            format!(
                "expected {} columns, found {}",
                NATIVE_COLUMNS.len(),
                record.len()
            ),
        ));
    }
    let field = |k: usize| (NATIVE_COLUMNS[k], record.get(k).unwrap_or(""));
    let required = |k: usize| {
        let (name, tok) = field(k);
        if tok.is_empty() {
            return Err((name, "missing".to_string()));
        }
        num::uint(tok).map_err(|m| (name, m))
    };
    let required32 = |k: usize| {
        let v = required(k)?;
        u32::try_from(v).map_err(|_| {
            (
                NATIVE_COLUMNS[k],
                format!("{v} is too large (at most {})", u32::MAX),
            )
        })
    };
    let optional = |k: usize| {
        let (name, tok) = field(k);
        if tok.is_empty() {
            Ok(None)
        } else {
            num::uint(tok).map(Some).map_err(|m| (name, m))
        }
    };
    let coflow_id = required(0)?;
    let arrival_ns = required(1)?;
    let src = required32(2)?;
    let dst = required32(3)?;
    let bytes = required(4)?;
    let job_id = optional(5)?;
    let stage_id = match optional(6)? {
        None => None,
        Some(v) => Some(u32::try_from(v).map_err(|_| {
            (
                "stage_id",
                format!("{v} is too large (at most {})", u32::MAX),
            )
        })?),
    };
    let deadline_ns = optional(7)?;
    cols.coflow_id.push(coflow_id);
    cols.arrival_ns.push(arrival_ns);
    cols.src.push(src);
    cols.dst.push(dst);
    cols.bytes.push(bytes);
    cols.job_id.push(job_id);
    cols.stage_id.push(stage_id);
    cols.deadline_ns.push(deadline_ns);
    Ok(())
}

/// Writes `w` as native CSV (with the `# n_hosts=<N>` line) to a file.
pub fn write_native_csv(w: &Workload, path: &Path) -> Result<(), TraceError> {
    let file = std::fs::File::create(path).map_err(|e| TraceError::io(path, e))?;
    write_native_csv_to(w, io::BufWriter::new(file)).map_err(|e| TraceError::io(path, e))
}

/// Writes `w` as native CSV (with the `# n_hosts=<N>` line) to any writer.
pub fn write_native_csv_to<W: io::Write>(w: &Workload, mut out: W) -> io::Result<()> {
    writeln!(out, "# n_hosts={}", w.n_hosts)?;
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(NATIVE_COLUMNS)?;
    let cols = FlowColumns::from_workload(w);
    let mut fields: [String; 8] = Default::default();
    for i in 0..cols.len() {
        for f in &mut fields {
            f.clear();
        }
        // Writing to a String cannot fail.
        let _ = write!(fields[0], "{}", cols.coflow_id[i]);
        let _ = write!(fields[1], "{}", cols.arrival_ns[i]);
        let _ = write!(fields[2], "{}", cols.src[i]);
        let _ = write!(fields[3], "{}", cols.dst[i]);
        let _ = write!(fields[4], "{}", cols.bytes[i]);
        if let Some(v) = cols.job_id[i] {
            let _ = write!(fields[5], "{v}");
        }
        if let Some(v) = cols.stage_id[i] {
            let _ = write!(fields[6], "{v}");
        }
        if let Some(v) = cols.deadline_ns[i] {
            let _ = write!(fields[7], "{v}");
        }
        writer.write_record(&fields)?;
    }
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::flow;
    use proptest::prelude::*;

    const HEADER: &str = "coflow_id,arrival_ns,src,dst,bytes,job_id,stage_id,deadline_ns";

    fn read(text: &str) -> Result<Workload, TraceError> {
        read_native_csv_str(text, "trace.csv")
    }

    fn err(text: &str) -> String {
        read(text)
            .expect_err("the trace should be rejected")
            .to_string()
    }

    fn to_csv(w: &Workload) -> String {
        let mut out = Vec::new();
        write_native_csv_to(w, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn sample() -> Workload {
        let mut c2 = CoflowSpec::new(9, Time(1_000), vec![flow(1, 0, 5), flow(2, 2, 0)]);
        c2.job = Some(JobStage { job: 4, stage: 1 });
        c2.deadline = Some(Dur(250));
        Workload {
            n_hosts: 5,
            coflows: vec![CoflowSpec::new(3, Time(0), vec![flow(0, 1, 100)]), c2],
        }
    }

    #[test]
    fn writes_the_documented_text() {
        let text = to_csv(&sample());
        assert_eq!(
            text,
            format!("# n_hosts=5\n{HEADER}\n3,0,0,1,100,,,\n9,1000,1,0,5,4,1,250\n9,1000,2,2,0,4,1,250\n")
        );
        assert_eq!(read(&text).unwrap(), sample());
    }

    #[test]
    fn without_the_comment_hosts_are_counted() {
        let text = format!("{HEADER}\n3,0,0,1,100,,,\n\n 4 , 7 , 6 , 2 , 1 ,,, \n3,0,2,1,1,,,\n");
        let w = read(&text).unwrap();
        assert_eq!(w.n_hosts, 7);
        assert_eq!(
            w.coflows,
            vec![
                CoflowSpec::new(3, Time(0), vec![flow(0, 1, 100), flow(2, 1, 1)]),
                CoflowSpec::new(4, Time(7), vec![flow(6, 2, 1)])
            ]
        );
        assert_eq!(read(HEADER).unwrap(), Workload::default());
        assert_eq!(
            read(&format!("# n_hosts=3\n{HEADER}\n")).unwrap(),
            Workload {
                n_hosts: 3,
                coflows: vec![]
            }
        );
    }

    #[test]
    fn file_round_trip() {
        let path =
            std::env::temp_dir().join(format!("coflowkit-native-{}.csv", std::process::id()));
        write_native_csv(&sample(), &path).unwrap();
        let back = read_native_csv(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!(back.unwrap(), sample());
        let e = read_native_csv(Path::new("/nonexistent/t.csv")).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/t.csv: "), "{e}");
    }

    #[test]
    fn header_errors_are_named() {
        assert_eq!(
            err(""),
            format!("trace.csv:1: header: missing (expected \"{HEADER}\")")
        );
        assert_eq!(
            err("# n_hosts=4\n"),
            format!("trace.csv:2: header: missing (expected \"{HEADER}\")")
        );
        assert_eq!(
            err("coflow_id,arrival_ns,src,dst,bytes\n1,0,0,0,1"),
            format!("trace.csv:1: header: expected \"{HEADER}\", found \"coflow_id,arrival_ns,src,dst,bytes\"")
        );
        assert_eq!(
            err("# hosts 4\n"),
            "trace.csv:1: n_hosts: expected \"# n_hosts=<N>\" on the first line, found \"# hosts 4\""
        );
        assert_eq!(
            err("# n_hosts=-1\n"),
            "trace.csv:1: n_hosts: \"-1\" is negative"
        );
        assert_eq!(
            err(&format!("{HEADER}\n# n_hosts=4\n")),
            "trace.csv:2: row: expected 8 columns, found 1"
        );
    }

    #[test]
    fn row_errors_name_line_and_column() {
        let e = |rows: &str| err(&format!("# n_hosts=4\n{HEADER}\n1,0,0,1,5,,,\n{rows}"));
        assert_eq!(
            e("2,0,0,1,5,,"),
            "trace.csv:4: row: expected 8 columns, found 7"
        );
        assert_eq!(
            e("2,0,0,1,5,,,,"),
            "trace.csv:4: row: expected 8 columns, found 9"
        );
        assert_eq!(e(",0,0,1,5,,,"), "trace.csv:4: coflow_id: missing");
        assert_eq!(
            e("2,x,0,1,5,,,"),
            "trace.csv:4: arrival_ns: \"x\" is not a number"
        );
        assert_eq!(
            e("2,-1,0,1,5,,,"),
            "trace.csv:4: arrival_ns: \"-1\" is negative"
        );
        assert_eq!(
            e("2,0,0,1,1.5,,,"),
            "trace.csv:4: bytes: \"1.5\" is not an integer"
        );
        assert_eq!(
            e("2,0,0,1,NaN,,,"),
            "trace.csv:4: bytes: \"NaN\" is not a finite number"
        );
        assert_eq!(
            e("2,0,0,4294967296,5,,,"),
            "trace.csv:4: dst: 4294967296 is too large (at most 4294967295)"
        );
        assert_eq!(
            e("2,0,0,4,5,,,"),
            "trace.csv:4: dst: 4 is outside the fabric (hosts 0..4)"
        );
        assert_eq!(
            e("2,0,9,1,5,,,"),
            "trace.csv:4: src: 9 is outside the fabric (hosts 0..4)"
        );
        assert_eq!(
            e("2,0,0,1,5,3,,"),
            "trace.csv:4: stage_id: is empty but job_id is set (set both or neither)"
        );
        assert_eq!(
            e("2,0,0,1,5,,3,"),
            "trace.csv:4: job_id: is empty but stage_id is set (set both or neither)"
        );
        assert_eq!(
            e("2,0,0,1,5,1,4294967296,"),
            "trace.csv:4: stage_id: 4294967296 is too large (at most 4294967295)"
        );
        assert_eq!(
            e("2,0,0,1,5,,,0"),
            "trace.csv:4: deadline_ns: must be positive"
        );
        assert_eq!(
            e("2,0,0,1,5,,,inf"),
            "trace.csv:4: deadline_ns: \"inf\" is not a finite number"
        );
    }

    #[test]
    fn per_coflow_fields_must_agree() {
        let e = |rows: &str| {
            err(&format!(
                "{HEADER}\n1,10,0,1,5,7,0,100\n2,0,0,1,5,,,\n{rows}"
            ))
        };
        assert_eq!(
            e("1,11,0,1,5,7,0,100"),
            "trace.csv:4: arrival_ns: coflow 1: 11 differs from 10 on line 2"
        );
        assert_eq!(
            e("1,10,0,1,5,8,0,100"),
            "trace.csv:4: job_id: coflow 1: 8 differs from 7 on line 2"
        );
        assert_eq!(
            e("1,10,0,1,5,,,100"),
            "trace.csv:4: job_id: coflow 1: empty differs from 7 on line 2"
        );
        assert_eq!(
            e("1,10,0,1,5,7,1,100"),
            "trace.csv:4: stage_id: coflow 1: 1 differs from 0 on line 2"
        );
        assert_eq!(
            e("1,10,0,1,5,7,0,"),
            "trace.csv:4: deadline_ns: coflow 1: empty differs from 100 on line 2"
        );
        assert_eq!(
            e("2,0,0,1,5,,,9"),
            "trace.csv:4: deadline_ns: coflow 2: 9 differs from empty on line 3"
        );
    }

    #[test]
    fn column_errors_name_the_row() {
        let mut cols = FlowColumns::from_workload(&sample());
        cols.bytes.pop();
        assert_eq!(
            cols.into_workload(None, "t.parquet")
                .unwrap_err()
                .to_string(),
            "t.parquet:0: bytes: has 2 rows but coflow_id has 3"
        );
        let mut cols = FlowColumns::from_workload(&sample());
        cols.arrival_ns[2] = 1;
        assert_eq!(
            cols.into_workload(None, "t.parquet")
                .unwrap_err()
                .to_string(),
            "t.parquet:3: arrival_ns: coflow 9: 1 differs from 1000 on row 2"
        );
        let mut cols = FlowColumns::from_workload(&sample());
        cols.src[1] = u32::MAX;
        assert_eq!(
            cols.into_workload(None, "t.parquet").unwrap_err().to_string(),
            "t.parquet:2: src: 4294967295 leaves no room for a host count (at most 4294967294 without n_hosts)"
        );
        let cols = FlowColumns::from_workload(&sample());
        assert_eq!(cols.clone().into_workload(None, "t").unwrap().n_hosts, 3);
        assert_eq!(
            cols.into_workload(Some(2), "t").unwrap_err().to_string(),
            "t:3: src: 2 is outside the fabric (hosts 0..2)"
        );
    }

    #[test]
    fn generated_and_benchmark_workloads_round_trip() {
        let w = crate::synth::generate(&crate::synth::SynthConfig::default());
        assert_eq!(read(&to_csv(&w)).unwrap(), w);
        let fb = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/FB2010-1Hr-150-0.txt"
        ));
        if fb.exists() {
            let w = crate::benchmark::read_benchmark_file(fb).unwrap();
            assert_eq!(read(&to_csv(&w)).unwrap(), w);
            assert_eq!(
                FlowColumns::from_workload(&w)
                    .into_workload(Some(150), "fb")
                    .unwrap(),
                w
            );
        } else {
            println!("skipped the FB2010 part: {} is missing", fb.display());
        }
    }

    /// Workloads with unique ids and non-empty coflows, and their host count.
    fn workloads() -> impl Strategy<Value = Workload> {
        (1u32..12).prop_flat_map(|n_hosts| {
            let flow = (0..n_hosts, 0..n_hosts, any::<u64>()).prop_map(|(s, d, b)| flow(s, d, b));
            let coflow = (
                any::<u64>(),
                any::<u64>(),
                proptest::collection::vec(flow, 1..5),
                proptest::option::of((any::<u64>(), any::<u32>())),
                proptest::option::of(1u64..),
            )
                .prop_map(|(id, arrival, flows, job, deadline)| CoflowSpec {
                    id: CoflowId(id % 16),
                    arrival: Time(arrival),
                    flows,
                    job: job.map(|(job, stage)| JobStage { job, stage }),
                    deadline: deadline.map(Dur),
                    parents: Vec::new(),
                });
            proptest::collection::vec(coflow, 0..8).prop_map(move |mut coflows| {
                let mut seen = std::collections::HashSet::new();
                coflows.retain(|c| seen.insert(c.id));
                Workload { n_hosts, coflows }
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn csv_round_trip_is_lossless(w in workloads()) {
            let text = to_csv(&w);
            prop_assert_eq!(read(&text).unwrap(), w);
        }

        #[test]
        fn columns_round_trip_is_lossless(w in workloads()) {
            let cols = FlowColumns::from_workload(&w);
            prop_assert_eq!(cols.len(), w.coflows.iter().map(|c| c.flows.len()).sum::<usize>());
            prop_assert_eq!(cols.into_workload(Some(w.n_hosts), "t").unwrap(), w);
        }

        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
            let _ = read(&text);
        }

        #[test]
        fn never_panics_on_mutated_traces(
            w in workloads(),
            edits in proptest::collection::vec((any::<usize>(), prop::sample::select(vec![
                "", ",", "\n", "\"", "#", "-", ".", "0", "9", "x", "nan", "99999999999999999999", " ",
            ])), 1..6)
        ) {
            let mut text = to_csv(&w);
            for (at, s) in edits {
                let at = at % (text.len() + 1);
                let end = (at + 1).min(text.len());
                text.replace_range(at..end, s);
            }
            if let Ok(back) = read(&text) {
                for c in &back.coflows {
                    prop_assert!(c.flows.iter().all(|f| f.src.0 < back.n_hosts && f.dst.0 < back.n_hosts));
                }
            }
        }
    }
}
