//! The live view in a real browser: a coordinator with three agents, one
//! completed task and two active ones (three flows held mid-transfer, so
//! that the state stands still), the page loaded in headless chromium
//! (`--dump-dom`, the token given in the address's fragment), and every
//! task, flow, link, host and completion the page drew checked against the
//! coordinator's own snapshot (`Core::status`, which `/state` serializes).
//!
//! Skipped, saying so, where no chromium is installed (`CHROMIUM` names
//! one; else `chromium`, `chromium-browser` or `google-chrome` on PATH).
//! With `COFLOWKIT_LIVE_VIEW_SCREENSHOT=FILE.png` (relative to the crate's
//! folder, where cargo runs its tests) it also saves a screenshot of the
//! page: docs/img/live-view.png is made with `../../docs/img/live-view.png`.

mod common;

use coflowkit_runtime::client::AgentClient;
use coflowkit_runtime::status::Status;
use common::{connect, write_pattern, Cluster, Pattern, Receiver, TOKEN};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const KB: u64 = 1_000;
const MB: u64 = 1_000_000;
const WAIT: Duration = Duration::from_secs(30);

/// The chromium to drive, if one is installed.
fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Runs headless chromium on `url` with `args`; its stdout. Panics, with
/// its stderr, if it fails or takes more than a minute.
fn chromium(bin: &Path, profile: &Path, url: &str, args: &[&str]) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            // Root in a container has no user namespace for the sandbox.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--metrics-recording-only",
            // Two polls of the page: virtual time waits for the fetches.
            "--virtual-time-budget=2500",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let t0 = Instant::now();
    loop {
        match child.try_wait().unwrap() {
            Some(_) => break,
            None if t0.elapsed() > Duration::from_secs(60) => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "chromium took over a minute on {url}; stderr:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "chromium failed ({}) on {url}; stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An HTML attribute value as text.
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// One table row the page drew: its attributes and its text.
#[derive(Debug)]
struct Row {
    attrs: HashMap<String, String>,
    text: String,
}

impl Row {
    fn get(&self, key: &str) -> &str {
        self.attrs
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {self:?}"))
    }

    fn num(&self, key: &str) -> f64 {
        self.get(key)
            .parse()
            .unwrap_or_else(|e| panic!("{key} of {self:?}: {e}"))
    }

    /// An optional number: the page leaves the attribute out for null.
    fn opt(&self, key: &str) -> Option<f64> {
        self.attrs.get(key).map(|_| self.num(key))
    }
}

/// The `<tr>` rows of `dom` whose class starts with `class`.
fn rows(dom: &str, class: &str) -> Vec<Row> {
    let mut out = vec![];
    let mut rest = dom;
    while let Some(i) = rest.find("<tr") {
        rest = &rest[i + 3..];
        // The start tag's attributes: name="value", values escaped (no raw
        // quote inside).
        let mut attrs = HashMap::new();
        let mut s = rest;
        loop {
            s = s.trim_start();
            if s.starts_with('>') {
                s = &s[1..];
                break;
            }
            let eq = s.find('=').expect("an attribute");
            let name = s[..eq].to_string();
            let v = &s[eq + 2..];
            let end = v.find('"').expect("a closing quote");
            attrs.insert(name, unescape(&v[..end]));
            s = &v[end + 1..];
        }
        let end = s.find("</tr>").expect("a row's end");
        let mut text = String::new();
        let mut in_tag = false;
        for c in s[..end].chars() {
            match c {
                '<' => {
                    in_tag = true;
                    text.push(' ');
                }
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        rest = &s[end..];
        if attrs.get("class").is_some_and(|c| c.starts_with(class)) {
            let text = unescape(&text.split_whitespace().collect::<Vec<_>>().join(" "));
            out.push(Row { attrs, text });
        }
    }
    out
}

/// Equal as the page's JavaScript and Rust print an f64 (both shortest
/// round-trip), read back.
fn same(got: f64, want: f64, what: &str) {
    assert!(
        got == want || (got - want).abs() <= 1e-9 * want.abs(),
        "{what}: the page shows {got}, the coordinator has {want}"
    );
}

/// The parts of a snapshot that stand still while no flow sends.
fn still(s: &Status) -> String {
    let flows: Vec<_> = s
        .flows
        .iter()
        .map(|f| (f.host, f.flow_id, f.bytes, f.size, f.rate_bps, f.class))
        .collect();
    let coflows: Vec<_> = s
        .coflows
        .iter()
        .map(|c| (c.id, c.bytes, c.open_flows, c.queue))
        .collect();
    let links: Vec<_> = s.links.iter().map(|l| (l.rate_bps, l.n_flows)).collect();
    format!("{flows:?} {coflows:?} {links:?} {:?}", s.recent_completions)
}

#[test]
fn the_live_view_in_headless_chromium_shows_the_coordinators_state() {
    let Some(bin) = find_chromium() else {
        eprintln!(
            "skipped: no chromium (set CHROMIUM, or install Debian's chromium package) to \
             drive the live view in"
        );
        return;
    };
    let mut cluster = Cluster::start("live-view", "aalo", 3, 200e6);
    let http = {
        let c = cluster.coordinator.as_mut().unwrap();
        cluster.rt.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            c.serve_status(l).unwrap()
        })
    };
    let core = cluster.coordinator.as_ref().unwrap().core.clone();
    let snapshot = || core.lock().unwrap().status();
    let wait_for = |what: &str, cond: &dyn Fn(&Status) -> bool| {
        let t0 = Instant::now();
        loop {
            let s = snapshot();
            if cond(&s) {
                return s;
            }
            assert!(t0.elapsed() < WAIT, "waited {WAIT:?} for {what}: {s:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let rx = Receiver::start();
    let clients: Vec<_> = (0..3)
        .map(|h| AgentClient::connect(cluster.socket(h)))
        .collect();
    // One task done: 300 KB from host 1 to host 2.
    let done = clients[1].register(&[]).unwrap();
    {
        let mut w = clients[1].writer(done, 2, Some(300 * KB), connect(rx.addr, 1));
        write_pattern(&mut w, &mut Pattern::new(1), 300 * KB);
        w.finish().unwrap();
    }
    clients[1].unregister(done).unwrap();
    wait_for("the first task to complete", &|s| {
        s.recent_completions.iter().any(|c| c.id == done.0)
    });
    // Two active tasks: `a` of two flows (one of an announced size, one
    // not), `b` of one, after `a`; each flow writes its bytes and waits.
    let a = clients[0].register(&[]).unwrap();
    let b = clients[2].register(&[a]).unwrap();
    let (reached_tx, reached) = mpsc::channel();
    let mut gos = vec![];
    let mut senders = vec![];
    for (tag, host, coflow, dst, size, sent) in [
        (2u64, 0usize, a, 1u32, Some(4 * MB), MB),
        (3, 1, a, 2, None, 2 * MB),
        (4, 2, b, 0, Some(3 * MB), 500 * KB),
    ] {
        let (go, go_rx) = mpsc::channel::<()>();
        gos.push(go);
        let (client, reached_tx, to) = (clients[host].clone(), reached_tx.clone(), rx.addr);
        senders.push(std::thread::spawn(move || {
            let mut w = client.writer(coflow, dst, size, connect(to, tag));
            let mut p = Pattern::new(tag);
            write_pattern(&mut w, &mut p, sent);
            reached_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            if let Some(size) = size {
                write_pattern(&mut w, &mut p, size - sent);
            }
            w.finish().unwrap();
        }));
    }
    for _ in 0..3 {
        reached.recv_timeout(WAIT).unwrap();
    }
    let before = wait_for("the three flows' bytes and schedule", &|s| {
        s.flows.len() == 3
            && s.flows.iter().map(|f| f.bytes).sum::<u64>() == 3_500 * KB
            && s.flows.iter().all(|f| f.class.is_some())
    });

    let profile = cluster.dir.join("chromium-profile");
    let url = format!("http://{http}/#token={TOKEN}");
    let dom = chromium(&bin, &profile, &url, &["--dump-dom"]);
    let state = snapshot();
    assert_eq!(
        still(&before),
        still(&state),
        "the state moved while the page was read"
    );
    assert!(
        dom.contains("data-ticks=\""),
        "the page drew no snapshot:\n{dom}"
    );
    assert!(
        !dom.contains(TOKEN),
        "the token is left in the page:\n{dom}"
    );

    // Tasks: each active coflow with its bytes, flows and queue.
    let coflows = rows(&dom, "coflow");
    assert_eq!(coflows.len(), state.coflows.len(), "{dom}");
    for c in &state.coflows {
        let r = coflows
            .iter()
            .find(|r| r.get("data-coflow") == c.id.to_string())
            .unwrap_or_else(|| panic!("coflow {} not on the page:\n{dom}", c.id));
        assert_eq!(r.num("data-bytes") as u64, c.bytes, "coflow {}", c.id);
        assert_eq!(r.num("data-open") as u32, c.open_flows, "coflow {}", c.id);
        assert_eq!(
            r.opt("data-queue").map(|q| q as u32),
            c.queue,
            "coflow {}",
            c.id
        );
        assert!(r.text.starts_with(&format!("coflow {}", c.id)), "{r:?}");
    }
    let b_row = coflows
        .iter()
        .find(|r| r.get("data-coflow") == b.0.to_string())
        .unwrap();
    assert!(
        b_row.text.contains(&format!("(after {})", a.0)),
        "{b_row:?}"
    );
    // Flows: bytes, size, scheduled rate and class, as the coordinator has them.
    let flows = rows(&dom, "flow");
    assert_eq!(flows.len(), 3, "{dom}");
    for f in &state.flows {
        let key = format!("{}:{}", f.host, f.flow_id);
        let r = flows
            .iter()
            .find(|r| r.get("data-key") == key)
            .unwrap_or_else(|| panic!("flow {key} not on the page:\n{dom}"));
        assert_eq!(r.num("data-coflow") as u64, f.coflow, "flow {key}");
        assert_eq!(r.num("data-dst") as u32, f.dst, "flow {key}");
        assert_eq!(r.num("data-bytes") as u64, f.bytes, "flow {key}");
        assert_eq!(r.opt("data-size").map(|s| s as u64), f.size, "flow {key}");
        assert_eq!(r.opt("data-class").map(|c| c as u32), f.class, "flow {key}");
        same(
            r.num("data-rate"),
            f.rate_bps.unwrap(),
            &format!("flow {key}'s rate"),
        );
        let state = if f.paused { "paused" } else { "sending" };
        assert_eq!(r.get("data-state"), state, "flow {key}");
    }
    // What a reader sees: host to host, sent over size, in words.
    let by_tag = |host: u32| {
        flows
            .iter()
            .find(|r| r.get("data-host") == host.to_string())
            .unwrap()
    };
    assert!(
        by_tag(0).text.starts_with("host 0 → host 1 (flow ")
            && by_tag(0).text.contains("1.00 MB / 4.00 MB"),
        "{:?}",
        by_tag(0)
    );
    assert!(by_tag(1).text.contains("2.00 MB / ?"), "{:?}", by_tag(1));
    assert!(
        by_tag(2).text.contains("500 kB / 3.00 MB"),
        "{:?}",
        by_tag(2)
    );
    // Links: every link of the fabric with its capacity and the scheduled
    // rates crossing it.
    let links = rows(&dom, "link");
    assert_eq!(links.len(), state.links.len(), "{dom}");
    assert_eq!(
        links.len(),
        6,
        "a big switch of 3 hosts: an uplink and a downlink each"
    );
    for (r, l) in links.iter().zip(&state.links) {
        assert_eq!(r.get("data-name"), l.name);
        same(r.num("data-capacity"), l.capacity_bps, &l.name);
        same(r.num("data-rate"), l.rate_bps, &l.name);
        assert_eq!(r.num("data-flows") as u32, l.n_flows, "{}", l.name);
    }
    let up0 = links
        .iter()
        .find(|r| r.get("data-name") == "host 0 uplink")
        .unwrap();
    assert!(up0.text.starts_with("host 0 uplink 200 Mbit/s"), "{up0:?}");
    // Hosts and recent completions.
    let hosts = rows(&dom, "host");
    assert_eq!(hosts.len(), 3, "{dom}");
    for (r, h) in hosts.iter().zip(&state.agents) {
        assert_eq!(r.num("data-host") as u32, h.host);
        same(r.num("data-rate"), h.scheduled_rate_bps, "a host's rate");
        assert_eq!(r.num("data-flows") as u32, h.scheduled_flows);
    }
    let completions = rows(&dom, "completion");
    assert_eq!(completions.len(), state.recent_completions.len(), "{dom}");
    for (r, c) in completions.iter().zip(&state.recent_completions) {
        assert_eq!(r.num("data-coflow") as u64, c.id);
        assert_eq!(r.num("data-cct-ns") as u64, c.cct_ns);
        assert_eq!(r.num("data-bytes") as u64, c.bytes);
    }
    assert_eq!(completions[0].num("data-bytes") as u64, 300 * KB);

    // Without the token, the page asks for it and shows nothing.
    let dom = chromium(
        &bin,
        &profile.with_extension("2"),
        &format!("http://{http}/"),
        &["--dump-dom"],
    );
    assert!(rows(&dom, "flow").is_empty(), "{dom}");
    assert!(
        dom.contains("<form id=\"login\">"),
        "the form is hidden:\n{dom}"
    );

    if let Some(file) = std::env::var_os("COFLOWKIT_LIVE_VIEW_SCREENSHOT") {
        let file = std::path::absolute(PathBuf::from(file)).unwrap();
        chromium(
            &bin,
            &profile.with_extension("3"),
            &url,
            &[
                &format!("--screenshot={}", file.display()),
                "--window-size=1280,640",
                "--hide-scrollbars",
            ],
        );
        assert!(file.is_file(), "chromium wrote no {}", file.display());
        eprintln!("screenshot: {}", file.display());
    }

    for g in &gos {
        g.send(()).unwrap();
    }
    for s in senders {
        s.join().unwrap();
    }
    clients[0].unregister(a).unwrap();
    clients[2].unregister(b).unwrap();
    wait_for("both tasks to complete", &|s| s.completed_coflows == 3);
    cluster.stop();
}
