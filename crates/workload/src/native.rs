//! The native trace format: one flow per row, carrying everything a
//! [`Workload`] holds.
//!
//! Columns, in this order ([`NATIVE_COLUMNS`]):
//!
//! | column             | type   | per    | meaning (default when the column is absent)                       |
//! |--------------------|--------|--------|-------------------------------------------------------------------|
//! | `coflow_id`        | u64    | coflow | the flow's coflow (required)                                      |
//! | `arrival_ns`       | u64    | coflow | the coflow's arrival, ns (required)                               |
//! | `src`, `dst`       | u32    | flow   | sending and receiving host (required)                             |
//! | `bytes`            | u64    | flow   | the flow's size; units of work for a compute stage (required)     |
//! | `job_id`           | u64?   | coflow | the coflow's job (empty: none)                                    |
//! | `stage_id`         | u32?   | coflow | its stage in the job (set exactly when `job_id` is)               |
//! | `deadline_ns`      | u64?   | coflow | the coflow's deadline after its arrival (empty: none)             |
//! | `kind`             | text   | flow   | `net` or `compute` (`net`)                                        |
//! | `group`            | u32    | flow   | the flow's barrier group in its coflow (0)                        |
//! | `after`            | u32?   | flow   | the group that must finish before the flow starts (empty: none)   |
//! | `delay_ns`         | u64    | flow   | wait between the flow's release and its start (0)                 |
//! | `flow_deadline_ns` | u64?   | flow   | the flow's deadline after its start (empty: none)                 |
//! | `size_known`       | bool   | flow   | `true`, or `false` for a size hidden from every scheduler (`true`)|
//! | `parents`          | text   | coflow | the coflow's dependencies (empty: none), see below                |
//!
//! `parents` lists `<parent coflow id>:<kind>` items separated by `;`, where
//! the kind is `sa` (Starts-After: the coflow starts once the parent has
//! finished) or `fb` (Finishes-Before: it may run alongside the parent but
//! does not finish before it), e.g. `12:sa;13:fb` (Aalo 5.1). One text
//! column rather than two list columns keeps the CSV and Parquet files the
//! same shape and readable in any tool.
//!
//! [`FlowColumns`] is the single in-memory definition of these columns: the
//! CSV reader and writer here go through it, and the Python side writes and
//! reads Parquet (with pyarrow) through the same columns.
//!
//! CSV: a header row with column names, then one row per flow; empty
//! optional fields are empty strings. The writer always writes all columns
//! in the order above; the reader takes the columns in any order, needs the
//! five required ones, and gives every absent column its default, so files
//! written before a column existed still read. A first line `# n_hosts=<N>`
//! keeps the workload's host count: [`write_native_csv_to`] always writes
//! it; the reader accepts it (and then checks every host against it) or,
//! without it, takes the largest host id + 1. Errors name the file, the
//! 1-based line (the comment, if any, is line 1 and the header follows it)
//! and the column.
//!
//! Rows of a coflow need not be adjacent: coflows appear in the order of
//! their first row, and flows in row order. Writing then reading back is
//! therefore lossless for every workload whose coflow ids are unique and
//! whose coflows have at least one flow (as validation demands).
//!
//! Correctness properties of a workload built from columns (each enforced in
//! `FlowColumns::into_workload`): all columns have the same length; every
//! host is below `n_hosts`; `job_id` and `stage_id` are both set or both
//! empty; a deadline (coflow or flow) is positive; `parents` parses; the
//! per-coflow columns (arrival, job, stage, deadline, parents) are the same
//! on every row of a coflow. What needs the whole coflow or workload (groups
//! that exist, no cycles, parents that exist, compute stages on one host) is
//! `Workload::validate`'s job.

use crate::error::{read_text, TraceError};
use crate::num;
use coflowkit_model::{
    CoflowId, CoflowSpec, DepKind, Dependency, Dur, FlowKind, FlowSpec, HostId, JobStage, Time,
    Workload,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// The native columns, in file order.
pub const NATIVE_COLUMNS: [&str; 15] = [
    "coflow_id",
    "arrival_ns",
    "src",
    "dst",
    "bytes",
    "job_id",
    "stage_id",
    "deadline_ns",
    "kind",
    "group",
    "after",
    "delay_ns",
    "flow_deadline_ns",
    "size_known",
    "parents",
];

/// How many of [`NATIVE_COLUMNS`], from the first, every trace must have.
pub const N_REQUIRED_COLUMNS: usize = 5;

/// A column of strings stored as one byte buffer and row offsets (the Arrow
/// layout, so the Python side hands it to pyarrow without a copy per row).
///
/// Correctness properties (enforced in [`TextColumn::from_parts`] and kept
/// by [`TextColumn::push`]): `offsets` starts at 0, never decreases, ends at
/// `data.len()`, and every row is valid UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextColumn {
    offsets: Vec<u64>,
    data: Vec<u8>,
}

impl Default for TextColumn {
    fn default() -> TextColumn {
        TextColumn::with_capacity(0)
    }
}

impl TextColumn {
    /// An empty column with room for `rows` rows.
    pub fn with_capacity(rows: usize) -> TextColumn {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        TextColumn {
            offsets,
            data: Vec::new(),
        }
    }

    /// `rows` empty strings.
    pub fn empty_rows(rows: usize) -> TextColumn {
        TextColumn {
            offsets: vec![0; rows + 1],
            data: Vec::new(),
        }
    }

    /// A column from row offsets (`rows + 1` of them, the first may be any
    /// start) and the bytes they index; the error names the 1-based row.
    pub fn from_parts(offsets: Vec<u64>, data: Vec<u8>) -> Result<TextColumn, (u64, String)> {
        let Some(&start) = offsets.first() else {
            return Err((0, "has no offsets (expected rows + 1)".into()));
        };
        let mut prev = start;
        for (i, &o) in offsets.iter().enumerate().skip(1) {
            if o < prev || o > data.len() as u64 {
                return Err((
                    i as u64,
                    format!(
                        "offset {o} is out of order or past the {} bytes of text",
                        data.len()
                    ),
                ));
            }
            let row = &data[prev as usize..o as usize];
            if std::str::from_utf8(row).is_err() {
                return Err((i as u64, "is not valid UTF-8".into()));
            }
            prev = o;
        }
        let (offsets, data) = if start == 0 && prev == data.len() as u64 {
            (offsets, data)
        } else {
            let data = data[start as usize..prev as usize].to_vec();
            (offsets.into_iter().map(|o| o - start).collect(), data)
        };
        Ok(TextColumn { offsets, data })
    }

    /// The offsets (rows + 1, from 0) and the bytes.
    pub fn into_parts(self) -> (Vec<u64>, Vec<u8>) {
        (self.offsets, self.data)
    }

    /// Appends a row.
    pub fn push(&mut self, s: &str) {
        self.data.extend_from_slice(s.as_bytes());
        self.offsets.push(self.data.len() as u64);
    }

    /// Row `i` (panics if out of range, like indexing a `Vec`).
    pub fn get(&self, i: usize) -> &str {
        let row = &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize];
        // Every row was checked to be UTF-8 when it entered the column.
        std::str::from_utf8(row).unwrap_or_default()
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The `parents` text of these dependencies: `12:sa;13:fb`.
pub fn format_parents(parents: &[Dependency]) -> String {
    let mut s = String::new();
    for (k, d) in parents.iter().enumerate() {
        let kind = match d.kind {
            DepKind::StartsAfter => "sa",
            DepKind::FinishesBefore => "fb",
        };
        let sep = if k == 0 { "" } else { ";" };
        // Writing to a String cannot fail.
        let _ = write!(s, "{sep}{}:{kind}", d.parent.0);
    }
    s
}

/// Parses a `parents` text (`12:sa;13:fb`; empty for none; spaces around
/// items are ignored).
pub fn parse_parents(text: &str) -> Result<Vec<Dependency>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(';')
        .map(|item| {
            let item = item.trim();
            let (id, kind) = item.split_once(':').ok_or_else(|| {
                format!("{item:?} is not <coflow id>:sa or <coflow id>:fb")
            })?;
            let parent = CoflowId(num::uint(id.trim()).map_err(|m| format!("parent {m}"))?);
            let kind = match kind.trim() {
                "sa" => DepKind::StartsAfter,
                "fb" => DepKind::FinishesBefore,
                other => {
                    return Err(format!(
                        "{other:?} in {item:?} is not a dependency kind (sa: Starts-After, fb: Finishes-Before)"
                    ))
                }
            };
            Ok(Dependency { parent, kind })
        })
        .collect()
}

/// The `kind` text of a flow kind.
pub fn kind_name(kind: FlowKind) -> &'static str {
    match kind {
        FlowKind::Net => "net",
        FlowKind::Compute => "compute",
    }
}

/// A flow kind from its `kind` text.
pub fn parse_kind(text: &str) -> Result<FlowKind, String> {
    match text {
        "net" => Ok(FlowKind::Net),
        "compute" => Ok(FlowKind::Compute),
        other => Err(format!("{other:?} is not a flow kind (net, compute)")),
    }
}

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
    /// The flow's size in bytes (units of work for a compute stage).
    pub bytes: Vec<u64>,
    /// The coflow's job, if any.
    pub job_id: Vec<Option<u64>>,
    /// The coflow's stage in its job, if any.
    pub stage_id: Vec<Option<u32>>,
    /// The coflow's deadline after its arrival, in ns, if any.
    pub deadline_ns: Vec<Option<u64>>,
    /// Network transfer or compute stage.
    pub kind: Vec<FlowKind>,
    /// The flow's barrier group in its coflow.
    pub group: Vec<u32>,
    /// The group that must finish before the flow starts, if any.
    pub after: Vec<Option<u32>>,
    /// The wait between the flow's release and its start, in ns.
    pub delay_ns: Vec<u64>,
    /// The flow's deadline after its start, in ns, if any.
    pub flow_deadline_ns: Vec<Option<u64>>,
    /// Whether schedulers entitled to sizes may know the flow's size.
    pub size_known: Vec<bool>,
    /// The coflow's dependencies as `parents` text (`12:sa;13:fb`).
    pub parents: TextColumn,
}

impl FlowColumns {
    /// The rows of `w`, coflow by coflow, flow by flow.
    pub fn from_workload(w: &Workload) -> FlowColumns {
        let n: usize = w.coflows.iter().map(|c| c.flows.len()).sum();
        let mut cols = FlowColumns::with_capacity(n);
        for c in &w.coflows {
            let parents = format_parents(&c.parents);
            for f in &c.flows {
                cols.coflow_id.push(c.id.0);
                cols.arrival_ns.push(c.arrival.0);
                cols.src.push(f.src.0);
                cols.dst.push(f.dst.0);
                cols.bytes.push(f.bytes.0);
                cols.job_id.push(c.job.map(|j| j.job));
                cols.stage_id.push(c.job.map(|j| j.stage));
                cols.deadline_ns.push(c.deadline.map(|d| d.0));
                cols.kind.push(f.kind);
                cols.group.push(f.group);
                cols.after.push(f.after);
                cols.delay_ns.push(f.delay.0);
                cols.flow_deadline_ns.push(f.deadline.map(|d| d.0));
                cols.size_known.push(f.size_known);
                cols.parents.push(&parents);
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
            kind: Vec::with_capacity(n),
            group: Vec::with_capacity(n),
            after: Vec::with_capacity(n),
            delay_ns: Vec::with_capacity(n),
            flow_deadline_ns: Vec::with_capacity(n),
            size_known: Vec::with_capacity(n),
            parents: TextColumn::with_capacity(n),
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
            ("kind", self.kind.len()),
            ("group", self.group.len()),
            ("after", self.after.len()),
            ("delay_ns", self.delay_ns.len()),
            ("flow_deadline_ns", self.flow_deadline_ns.len()),
            ("size_known", self.size_known.len()),
            ("parents", self.parents.len()),
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
        let mut last: Option<(u64, usize)> = None;
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
            if self.flow_deadline_ns[i] == Some(0) {
                return Err(err(i, "flow_deadline_ns", "must be positive".into()));
            }
            let parents = parse_parents(self.parents.get(i)).map_err(|m| err(i, "parents", m))?;
            let id = self.coflow_id[i];
            let f = FlowSpec {
                src: HostId(self.src[i]),
                dst: HostId(self.dst[i]),
                bytes: coflowkit_model::Bytes(self.bytes[i]),
                kind: self.kind[i],
                group: self.group[i],
                after: self.after[i],
                delay: Dur(self.delay_ns[i]),
                deadline: self.flow_deadline_ns[i].map(Dur),
                size_known: self.size_known[i],
            };
            // Rows of one coflow are usually adjacent: skip the lookup then.
            let k = match last.filter(|&(prev, _)| prev == id) {
                Some((_, k)) => k,
                None => match index.get(&id) {
                    Some(&k) => k,
                    None => {
                        index.insert(id, coflows.len());
                        coflows.push(CoflowSpec {
                            id: CoflowId(id),
                            arrival: Time(self.arrival_ns[i]),
                            flows: Vec::new(),
                            job,
                            deadline: self.deadline_ns[i].map(Dur),
                            parents: parents.clone(),
                        });
                        first_row.push(i);
                        coflows.len() - 1
                    }
                },
            };
            last = Some((id, k));
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
            if c.parents != parents {
                let text = |p: &[Dependency]| match format_parents(p) {
                    s if s.is_empty() => "empty".to_string(),
                    s => format!("{s:?}"),
                };
                return differs("parents", text(&parents), text(&c.parents));
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

    if !reader.read_record(&mut record).map_err(csv_err)? {
        return Err(TraceError::parse(
            source,
            offset + 1,
            "header",
            format!(
                "missing (expected the columns \"{}\", the first {N_REQUIRED_COLUMNS} required)",
                NATIVE_COLUMNS.join(",")
            ),
        ));
    }
    let header_line = record.position().map_or(offset + 1, |p| p.line() + offset);
    let layout = Layout::of(&record)
        .map_err(|message| TraceError::parse(source, header_line, "header", message))?;

    let mut cols = FlowColumns::default();
    let mut lines: Vec<u64> = Vec::new();
    while reader.read_record(&mut record).map_err(csv_err)? {
        let line = record.position().map_or(0, |p| p.line() + offset);
        layout
            .parse_row(&record, &mut cols)
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

/// Where each native column sits in a CSV header (`None`: absent).
struct Layout {
    /// For each of [`NATIVE_COLUMNS`], its position in the row.
    at: [Option<usize>; NATIVE_COLUMNS.len()],
    /// Columns in the header.
    width: usize,
}

impl Layout {
    /// The layout of a header row, or what is wrong with it.
    fn of(header: &csv::StringRecord) -> Result<Layout, String> {
        let mut at = [None; NATIVE_COLUMNS.len()];
        for (pos, name) in header.iter().enumerate() {
            let Some(k) = NATIVE_COLUMNS.iter().position(|&c| c == name) else {
                return Err(format!(
                    "unknown column {name:?} (native columns: {})",
                    NATIVE_COLUMNS.join(",")
                ));
            };
            if at[k].is_some() {
                return Err(format!("column {name:?} appears twice"));
            }
            at[k] = Some(pos);
        }
        if let Some(k) = (0..N_REQUIRED_COLUMNS).find(|&k| at[k].is_none()) {
            let found = header.iter().collect::<Vec<_>>().join(",");
            return Err(format!(
                "column {:?} is missing (required: {}; found \"{found}\")",
                NATIVE_COLUMNS[k],
                NATIVE_COLUMNS[..N_REQUIRED_COLUMNS].join(",")
            ));
        }
        Ok(Layout {
            at,
            width: header.len(),
        })
    }

    /// Appends one CSV row to `cols`, or gives the (column, message) at fault.
    fn parse_row(
        &self,
        record: &csv::StringRecord,
        cols: &mut FlowColumns,
    ) -> Result<(), (&'static str, String)> {
        if record.len() != self.width {
            return Err((
                "row",
                format!("expected {} columns, found {}", self.width, record.len()),
            ));
        }
        // The field of native column k ("" when the column is absent).
        let field = |k: usize| {
            (
                NATIVE_COLUMNS[k],
                self.at[k].and_then(|p| record.get(p)).unwrap_or(""),
            )
        };
        let required = |k: usize| {
            let (name, tok) = field(k);
            if tok.is_empty() {
                return Err((name, "missing".to_string()));
            }
            num::uint(tok).map_err(|m| (name, m))
        };
        let optional = |k: usize| {
            let (name, tok) = field(k);
            if tok.is_empty() {
                Ok(None)
            } else {
                num::uint(tok).map(Some).map_err(|m| (name, m))
            }
        };
        let narrow = |k: usize, v: Option<u64>| match v {
            None => Ok(None),
            Some(v) => u32::try_from(v).map(Some).map_err(|_| {
                (
                    NATIVE_COLUMNS[k],
                    format!("{v} is too large (at most {})", u32::MAX),
                )
            }),
        };
        let coflow_id = required(0)?;
        let arrival_ns = required(1)?;
        let src = narrow(2, Some(required(2)?))?.unwrap_or_default();
        let dst = narrow(3, Some(required(3)?))?.unwrap_or_default();
        let bytes = required(4)?;
        let job_id = optional(5)?;
        let stage_id = narrow(6, optional(6)?)?;
        let deadline_ns = optional(7)?;
        let kind = match field(8) {
            (_, "") => FlowKind::Net,
            (name, tok) => parse_kind(tok).map_err(|m| (name, m))?,
        };
        let group = narrow(9, optional(9)?)?.unwrap_or(0);
        let after = narrow(10, optional(10)?)?;
        let delay_ns = optional(11)?.unwrap_or(0);
        let flow_deadline_ns = optional(12)?;
        let size_known = match field(13) {
            (_, "") | (_, "true") => true,
            (_, "false") => false,
            (name, tok) => return Err((name, format!("{tok:?} is not true or false"))),
        };
        let parents = field(14).1;
        cols.coflow_id.push(coflow_id);
        cols.arrival_ns.push(arrival_ns);
        cols.src.push(src);
        cols.dst.push(dst);
        cols.bytes.push(bytes);
        cols.job_id.push(job_id);
        cols.stage_id.push(stage_id);
        cols.deadline_ns.push(deadline_ns);
        cols.kind.push(kind);
        cols.group.push(group);
        cols.after.push(after);
        cols.delay_ns.push(delay_ns);
        cols.flow_deadline_ns.push(flow_deadline_ns);
        cols.size_known.push(size_known);
        cols.parents.push(parents);
        Ok(())
    }
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
    let mut fields: [String; NATIVE_COLUMNS.len()] = Default::default();
    for c in &w.coflows {
        let parents = format_parents(&c.parents);
        for f in &c.flows {
            for s in &mut fields {
                s.clear();
            }
            // Writing to a String cannot fail.
            let _ = write!(fields[0], "{}", c.id.0);
            let _ = write!(fields[1], "{}", c.arrival.0);
            let _ = write!(fields[2], "{}", f.src.0);
            let _ = write!(fields[3], "{}", f.dst.0);
            let _ = write!(fields[4], "{}", f.bytes.0);
            if let Some(j) = c.job {
                let _ = write!(fields[5], "{}", j.job);
                let _ = write!(fields[6], "{}", j.stage);
            }
            if let Some(d) = c.deadline {
                let _ = write!(fields[7], "{}", d.0);
            }
            fields[8].push_str(kind_name(f.kind));
            let _ = write!(fields[9], "{}", f.group);
            if let Some(g) = f.after {
                let _ = write!(fields[10], "{g}");
            }
            let _ = write!(fields[11], "{}", f.delay.0);
            if let Some(d) = f.deadline {
                let _ = write!(fields[12], "{}", d.0);
            }
            fields[13].push_str(if f.size_known { "true" } else { "false" });
            fields[14].push_str(&parents);
            writer.write_record(&fields)?;
        }
    }
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests;
