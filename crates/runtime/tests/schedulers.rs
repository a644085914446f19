//! Every scheduler the registry lists either runs in the coordinator or is
//! refused at start with one line that says what to pass: checked through
//! the builder the binary uses, and on the real binary for a percentile
//! scheduler with and without `--hints`.

use coflowkit_runtime::coordinator::{build_scheduler, CoordinatorError};
use coflowkit_sched::{WorkloadHints, SCHEDULERS};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A small coflow-benchmark trace: two coflows on two ports.
const TRACE: &str = "2 2\n1 0 1 0 1 1:1\n2 10 1 1 1 0:2\n";

fn hints() -> WorkloadHints {
    let w = coflowkit_workload::read_benchmark_str(TRACE, "trace").unwrap();
    WorkloadHints::of_coflows(&w.coflows)
}

#[test]
fn every_scheduler_builds_or_is_refused_in_one_line_naming_the_flag() {
    let mut refused = vec![];
    for d in SCHEDULERS {
        match build_scheduler(d.name, &WorkloadHints::default()) {
            Ok(_) => {}
            Err(CoordinatorError::NeedsHint(line)) => {
                assert!(!line.contains('\n'), "{}: {line}", d.name);
                assert!(line.contains("--hints TRACE"), "{}: {line}", d.name);
                assert!(
                    line.starts_with(&format!("scheduler '{}': parameter '", d.name)),
                    "{line}"
                );
                assert!(!d.needs.hints.is_empty(), "{} declares no hint", d.name);
                refused.push(d.name);
            }
            Err(e) => panic!("{}: {e}", d.name),
        }
        // With a trace's hints, every scheduler starts.
        if let Err(e) = build_scheduler(d.name, &hints()) {
            panic!("{} with hints: {e}", d.name);
        }
    }
    // The percentile schedulers are the ones refused without hints.
    assert_eq!(refused, ["fifo-lm", "baraat", "tafe"]);
    // A value needing no workload needs no hints.
    assert!(build_scheduler("fifo-lm:threshold=10MiB", &WorkloadHints::default()).is_ok());
}

/// Starts the binary's coordinator with `args`; returns its exit status and
/// stderr if it exits within 3 s, else `None` (it is serving; killed).
fn coordinator(dir: &std::path::Path, args: &[&str]) -> Option<(bool, String)> {
    let token = dir.join("token");
    std::fs::write(&token, "secret-token-0123456789").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coflowkit-runtime"))
        .args(["coordinator", "--hosts", "2", "--listen", "127.0.0.1:0"])
        .arg("--token-file")
        .arg(&token)
        .args(args)
        .env("RUST_LOG", "error")
        // As a user runs it: no backtrace under the error's one line.
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return Some((status.success(), err));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    None
}

#[test]
fn the_binary_refuses_fifo_lm_without_hints_and_starts_with_them() {
    let dir = std::env::temp_dir().join(format!("coflowkit-sched-hints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ok, err) = coordinator(&dir, &["--scheduler", "fifo-lm"]).expect("it exits at once");
    assert!(!ok);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("--hints TRACE"), "{err}");
    let trace = dir.join("trace.txt");
    std::fs::write(&trace, TRACE).unwrap();
    let started = coordinator(
        &dir,
        &["--scheduler", "fifo-lm", "--hints", trace.to_str().unwrap()],
    );
    assert_eq!(started, None, "it should serve");
    let _ = std::fs::remove_dir_all(&dir);
}
