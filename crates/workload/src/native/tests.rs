use super::*;
use coflowkit_model::{compute, flow};
use proptest::prelude::*;

/// The header of files written before the flow-group columns existed.
const OLD_HEADER: &str = "coflow_id,arrival_ns,src,dst,bytes,job_id,stage_id,deadline_ns";
/// The header the writer writes.
const HEADER: &str = "coflow_id,arrival_ns,src,dst,bytes,job_id,stage_id,deadline_ns,kind,group,after,delay_ns,flow_deadline_ns,size_known,parents";

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

fn dep(parent: u64, kind: DepKind) -> Dependency {
    Dependency {
        parent: CoflowId(parent),
        kind,
    }
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

/// A workload that uses every column.
fn full_sample() -> Workload {
    let mut w = sample();
    let mut c = CoflowSpec::new(
        12,
        Time(7),
        vec![
            compute(3, 40).in_group(1),
            flow(3, 4, 40)
                .in_group(2)
                .after(1)
                .delayed(Dur(9))
                .with_deadline(Dur(1_000))
                .size_unknown(),
        ],
    );
    c.parents = vec![
        dep(3, DepKind::StartsAfter),
        dep(9, DepKind::FinishesBefore),
    ];
    w.coflows.push(c);
    w
}

#[test]
fn writes_the_documented_text() {
    let text = to_csv(&full_sample());
    assert_eq!(
        text,
        format!(
            "# n_hosts=5\n{HEADER}\n\
                 3,0,0,1,100,,,,net,0,,0,,true,\n\
                 9,1000,1,0,5,4,1,250,net,0,,0,,true,\n\
                 9,1000,2,2,0,4,1,250,net,0,,0,,true,\n\
                 12,7,3,3,40,,,,compute,1,,0,,true,3:sa;9:fb\n\
                 12,7,3,4,40,,,,net,2,1,9,1000,false,3:sa;9:fb\n"
        )
    );
    assert_eq!(read(&text).unwrap(), full_sample());
}

#[test]
fn old_files_and_any_column_order_read() {
    let old = format!(
        "# n_hosts=5\n{OLD_HEADER}\n3,0,0,1,100,,,\n9,1000,1,0,5,4,1,250\n9,1000,2,2,0,4,1,250\n"
    );
    assert_eq!(read(&old).unwrap(), sample());
    let minimal = "bytes,dst,src,arrival_ns,coflow_id,parents,kind\n100,1,0,0,3,,\n5,0,1,1000,9,3:sa,net\n40,2,2,1000,9, 3:sa ,compute\n";
    let w = read(minimal).unwrap();
    let mut c = CoflowSpec::new(9, Time(1_000), vec![flow(1, 0, 5), compute(2, 40)]);
    c.parents = vec![dep(3, DepKind::StartsAfter)];
    assert_eq!(
        w.coflows,
        vec![CoflowSpec::new(3, Time(0), vec![flow(0, 1, 100)]), c]
    );
}

#[test]
fn without_the_comment_hosts_are_counted() {
    let text = format!("{OLD_HEADER}\n3,0,0,1,100,,,\n\n 4 , 7 , 6 , 2 , 1 ,,, \n3,0,2,1,1,,,\n");
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
    let path = std::env::temp_dir().join(format!("coflowkit-native-{}.csv", std::process::id()));
    write_native_csv(&full_sample(), &path).unwrap();
    let back = read_native_csv(&path);
    let _ = std::fs::remove_file(&path);
    assert_eq!(back.unwrap(), full_sample());
    let e = read_native_csv(Path::new("/nonexistent/t.csv")).unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/t.csv: "), "{e}");
}

#[test]
fn header_errors_are_named() {
    let missing = format!("missing (expected the columns \"{HEADER}\", the first 5 required)");
    assert_eq!(err(""), format!("trace.csv:1: header: {missing}"));
    assert_eq!(
        err("# n_hosts=4\n"),
        format!("trace.csv:2: header: {missing}")
    );
    assert_eq!(
        err("coflow_id,arrival_ns,src,dst\n1,0,0,0"),
        "trace.csv:1: header: column \"bytes\" is missing (required: coflow_id,arrival_ns,src,dst,bytes; found \"coflow_id,arrival_ns,src,dst\")"
    );
    assert_eq!(
        err("coflow_id,arrival_ns,src,dst,bytes,colour\n"),
        format!("trace.csv:1: header: unknown column \"colour\" (native columns: {HEADER})")
    );
    assert_eq!(
        err("# n_hosts=4\ncoflow_id,arrival_ns,src,dst,bytes,src\n"),
        "trace.csv:2: header: column \"src\" appears twice"
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
        err(&format!("{OLD_HEADER}\n# n_hosts=4\n")),
        "trace.csv:2: row: expected 8 columns, found 1"
    );
}

#[test]
fn row_errors_name_line_and_column() {
    let e = |rows: &str| err(&format!("# n_hosts=4\n{OLD_HEADER}\n1,0,0,1,5,,,\n{rows}"));
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
fn new_column_errors_name_line_and_column() {
    let e = |row: &str| {
        err(&format!(
            "# n_hosts=4\n{HEADER}\n1,0,0,1,5,,,,net,0,,0,,true,\n{row}"
        ))
    };
    assert_eq!(
        e("2,0,0,1,5,,,,cpu,0,,0,,true,"),
        "trace.csv:4: kind: \"cpu\" is not a flow kind (net, compute)"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,-2,,0,,true,"),
        "trace.csv:4: group: \"-2\" is negative"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,4294967296,0,,true,"),
        "trace.csv:4: after: 4294967296 is too large (at most 4294967295)"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,,1e3,,true,"),
        "trace.csv:4: delay_ns: \"1e3\" is not an integer"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,,0,0,true,"),
        "trace.csv:4: flow_deadline_ns: must be positive"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,,0,,yes,"),
        "trace.csv:4: size_known: \"yes\" is not true or false"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,,0,,true,1:sa;2"),
        "trace.csv:4: parents: \"2\" is not <coflow id>:sa or <coflow id>:fb"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,,0,,true,1:xx"),
        "trace.csv:4: parents: \"xx\" in \"1:xx\" is not a dependency kind (sa: Starts-After, fb: Finishes-Before)"
    );
    assert_eq!(
        e("2,0,0,1,5,,,,net,0,,0,,true,x:sa"),
        "trace.csv:4: parents: parent \"x\" is not a number"
    );
}

#[test]
fn per_coflow_fields_must_agree() {
    let e = |rows: &str| {
        err(&format!(
            "{OLD_HEADER}\n1,10,0,1,5,7,0,100\n2,0,0,1,5,,,\n{rows}"
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
    let p = |rows: &str| {
        err(&format!(
            "coflow_id,arrival_ns,src,dst,bytes,parents\n1,0,0,1,5,\n2,0,0,1,5,1:sa\n{rows}"
        ))
    };
    assert_eq!(
        p("2,0,0,1,5,1:fb"),
        "trace.csv:4: parents: coflow 2: \"1:fb\" differs from \"1:sa\" on line 3"
    );
    assert_eq!(
        p("1,0,0,1,5,2:fb"),
        "trace.csv:4: parents: coflow 1: \"2:fb\" differs from empty on line 2"
    );
    // The same dependencies written differently agree.
    let spaced = "coflow_id,arrival_ns,src,dst,bytes,parents\n2,0,0,1,5,1:sa;3:fb\n2,0,0,1,5, 1:sa ; 3:fb \n";
    assert_eq!(read(spaced).unwrap().coflows[0].flows.len(), 2);
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
    cols.size_known.pop();
    assert_eq!(
        cols.into_workload(None, "t.parquet")
            .unwrap_err()
            .to_string(),
        "t.parquet:0: size_known: has 2 rows but coflow_id has 3"
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
fn text_columns_check_their_parts() {
    let mut t = TextColumn::default();
    t.push("1:sa");
    t.push("");
    t.push("é");
    assert_eq!(
        (t.len(), t.get(0), t.get(1), t.get(2)),
        (3, "1:sa", "", "é")
    );
    let (offsets, data) = t.clone().into_parts();
    assert_eq!(offsets, vec![0, 4, 4, 6]);
    assert_eq!(TextColumn::from_parts(offsets, data.clone()).unwrap(), t);
    // A column sliced out of a larger buffer starts at a non-zero offset.
    let sliced = TextColumn::from_parts(vec![4, 4, 6], data.clone()).unwrap();
    assert_eq!((sliced.len(), sliced.get(0), sliced.get(1)), (2, "", "é"));
    assert_eq!(
        sliced.into_parts(),
        (vec![0, 0, 2], "é".as_bytes().to_vec())
    );
    assert_eq!(
        TextColumn::from_parts(vec![0, 4, 3], data.clone())
            .unwrap_err()
            .0,
        2
    );
    assert_eq!(
        TextColumn::from_parts(vec![0, 9], data.clone())
            .unwrap_err()
            .0,
        1
    );
    assert_eq!(
        TextColumn::from_parts(vec![0, 5], data).unwrap_err(),
        (1, "is not valid UTF-8".to_string())
    );
    assert!(TextColumn::from_parts(vec![], vec![]).is_err());
    assert_eq!(TextColumn::empty_rows(3).get(2), "");
}

#[test]
fn parents_text_round_trips() {
    let deps = vec![
        dep(12, DepKind::StartsAfter),
        dep(13, DepKind::FinishesBefore),
    ];
    assert_eq!(format_parents(&deps), "12:sa;13:fb");
    assert_eq!(parse_parents("12:sa;13:fb").unwrap(), deps);
    assert_eq!(parse_parents(" 12 : sa ; 13:fb ").unwrap(), deps);
    assert_eq!(parse_parents("").unwrap(), vec![]);
    assert_eq!(format_parents(&[]), "");
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

/// Workloads with unique ids and non-empty coflows using every field.
pub(crate) fn workloads() -> impl Strategy<Value = Workload> {
    (1u32..12).prop_flat_map(|n_hosts| {
        let flow = (
            (0..n_hosts, 0..n_hosts, any::<u64>(), any::<bool>()),
            (
                0u32..4,
                proptest::option::of(0u32..4),
                prop_oneof![Just(0u64), any::<u64>()],
                proptest::option::of(1u64..),
                any::<bool>(),
            ),
        )
            .prop_map(|((s, d, b, cpu), (group, after, delay, deadline, known))| {
                FlowSpec {
                    src: HostId(s),
                    dst: HostId(if cpu { s } else { d }),
                    bytes: coflowkit_model::Bytes(b),
                    kind: if cpu {
                        FlowKind::Compute
                    } else {
                        FlowKind::Net
                    },
                    group,
                    after,
                    delay: Dur(delay),
                    deadline: deadline.map(Dur),
                    size_known: known,
                }
            });
        let parents = proptest::collection::vec(
            (0u64..16, any::<bool>()).prop_map(|(p, sa)| Dependency {
                parent: CoflowId(p),
                kind: if sa {
                    DepKind::StartsAfter
                } else {
                    DepKind::FinishesBefore
                },
            }),
            0..3,
        );
        let coflow = (
            any::<u64>(),
            any::<u64>(),
            proptest::collection::vec(flow, 1..5),
            proptest::option::of((any::<u64>(), any::<u32>())),
            proptest::option::of(1u64..),
            parents,
        )
            .prop_map(|(id, arrival, flows, job, deadline, parents)| CoflowSpec {
                id: CoflowId(id % 16),
                arrival: Time(arrival),
                flows,
                job: job.map(|(job, stage)| JobStage { job, stage }),
                deadline: deadline.map(Dur),
                parents,
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
        let (offsets, data) = cols.parents.clone().into_parts();
        prop_assert_eq!(&TextColumn::from_parts(offsets, data).unwrap(), &cols.parents);
        prop_assert_eq!(cols.into_workload(Some(w.n_hosts), "t").unwrap(), w);
    }

    #[test]
    fn old_columns_read_with_defaults(w in workloads()) {
        // Dropping the new columns from a file gives the same workload
        // with every new field at its default.
        let text = to_csv(&w);
        let old: String = text
            .lines()
            .map(|l| if l.starts_with('#') { l.to_string() } else {
                let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(l.as_bytes());
                let rec = r.records().next().unwrap().unwrap();
                rec.iter().take(8).collect::<Vec<_>>().join(",")
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut want = w.clone();
        for c in &mut want.coflows {
            c.parents.clear();
            for f in &mut c.flows {
                *f = coflowkit_model::flow(f.src.0, f.dst.0, f.bytes.0);
            }
        }
        prop_assert_eq!(read(&old).unwrap(), want);
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
            ":", ";", "sa", "true", "compute",
        ])), 1..6)
    ) {
        let mut text = to_csv(&w);
        for (at, s) in edits {
            let at = at % (text.len() + 1);
            let end = (at + 1).min(text.len());
            if text.is_char_boundary(at) && text.is_char_boundary(end) {
                text.replace_range(at..end, s);
            }
        }
        if let Ok(back) = read(&text) {
            for c in &back.coflows {
                prop_assert!(c.flows.iter().all(|f| f.src.0 < back.n_hosts && f.dst.0 < back.n_hosts));
            }
        }
    }
}
