//! The coordinator's state over HTTP, for people and for Prometheus.
//!
//! [`serve`] answers, on its own listener (not the gRPC port):
//! * `GET /state`: a JSON snapshot ([`Status`]): the scheduler, each
//!   agent's syncs and when it last synced, each active coflow (its queue or
//!   class, open and finished flows, bytes), each flow (bytes, size, scheduled
//!   rate, class, paused), each link of the coordinator's fabric model
//!   (capacity, the scheduled rates crossing it), the last
//!   [`RECENT_COMPLETIONS`] completions and the completed totals;
//! * `GET /metrics`: the same as Prometheus metrics, in the text exposition
//!   format (version 0.0.4);
//! * `GET /`, `/live.js`, `/live.css`: the live view, a page that polls
//!   `/state` every second and draws it (files in `src/live/`, compiled in
//!   with `include_str!`: no build step, nothing fetched from elsewhere);
//! * anything else: 404; a method other than GET: 405.
//!
//! # The token
//! `/state` and `/metrics` answer only a request carrying the coordinator's
//! token (the agents' one, `--token-file`) as `Authorization: Bearer TOKEN`,
//! compared in constant time as the gRPC interceptor compares it
//! (`coordinator::check_token`); any other gets 401 with a body saying what
//! to send, and the refusal is logged with the peer and the reason, never
//! the token. Prometheus sends that header from its scrape config
//! (`authorization: {credentials_file: ...}`). The page and its script and
//! style carry no data and are served to anyone: a browser cannot add a
//! header to a page it navigates to, so the page takes the token and adds
//! the header to its own requests:
//! * the token reaches the page once, in the address's fragment
//!   (`http://HOST:PORT/#token=TOKEN`) or typed into the page's form. A
//!   fragment is never sent to a server: it is in no request line, so in no
//!   access log of this server or of a proxy on the way, and browsers strip
//!   it from the `Referer` they send. A query string (`?token=`) would be in
//!   all of those; a login form that posts would need a session cookie, and
//!   a cookie, which the browser attaches by itself, would need CSRF
//!   defences that a header the page adds does not.
//! * the script takes the fragment out of the address bar at once
//!   (`history.replaceState`, so not in history or bookmarks either), keeps
//!   the token in `sessionStorage` (this tab, until it closes) and sends it
//!   only in the `Authorization` header of its `fetch("/state")`.
//! * the page's headers forbid what could carry it elsewhere:
//!   `Referrer-Policy: no-referrer`, and a `Content-Security-Policy` that
//!   allows only this server's own script, style and requests, no form
//!   posts and no framing. No CORS header is sent, so another site's page
//!   cannot read `/state` (nor send it the header without a preflight,
//!   which gets 405). The page writes every value as text, never as HTML.
//!
//! This is plain HTTP: on a network where others can listen, bind the
//! listener to a management address (as for the agents' gRPC without TLS).
//! The server is hyper's HTTP/1.1 server (hyper is already in the tree
//! through tonic); the JSON is written here (numbers, ids, and as text only
//! the scheduler's and links' names, escaped).

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;
use tracing::{debug, warn};

/// One agent (host) as the coordinator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentStatus {
    /// Its host number.
    pub host: u32,
    /// Syncs taken from it.
    pub syncs: u64,
    /// Seconds since its last sync taken; `None` if it never synced.
    pub last_sync_ago_s: Option<f64>,
    /// Its flows in the latest schedule, and the sum of their rates.
    pub scheduled_flows: u32,
    /// See `scheduled_flows`; bits/s.
    pub scheduled_rate_bps: f64,
}

/// One coflow the coordinator knows and has not completed.
#[derive(Debug, Clone, PartialEq)]
pub struct CoflowStatus {
    /// Its id.
    pub id: u64,
    /// Coflows it depends on.
    pub parents: Vec<u64>,
    /// Whether its owner unregistered it.
    pub unregistered: bool,
    /// Flows reported and not finished, and finished.
    pub open_flows: u32,
    /// See `open_flows`.
    pub finished_flows: u32,
    /// Bytes its flows have written.
    pub bytes: u64,
    /// The highest class (0 first) of its flows in the latest schedule:
    /// under `aalo`, its queue.
    pub queue: Option<u32>,
}

/// One flow the coordinator knows and has not finished.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowStatus {
    /// The sending host, and its agent's id of the flow.
    pub host: u32,
    /// See `host`.
    pub flow_id: u64,
    /// Its coflow and destination host.
    pub coflow: u64,
    /// See `coflow`.
    pub dst: u32,
    /// Bytes written so far.
    pub bytes: u64,
    /// Its size as its writer announced it (the size hint); `None`: unknown.
    pub size: Option<u64>,
    /// Reported finished, not yet taken by a tick.
    pub finished: bool,
    /// Its scheduled rate (bits/s) and class; `None` before its first
    /// schedule.
    pub rate_bps: Option<f64>,
    /// See `rate_bps`.
    pub class: Option<u32>,
    /// Whether it must wait.
    pub paused: bool,
}

/// One link of the coordinator's fabric model and what the latest schedule
/// puts on it.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkStatus {
    /// Its name as the fabric names it ("host 3 uplink", "tor 2 -> agg 0").
    pub name: String,
    /// Its capacity, bits/s.
    pub capacity_bps: f64,
    /// The sum of the scheduled rates of the flows crossing it, bits/s.
    pub rate_bps: f64,
    /// Flows crossing it with a scheduled rate.
    pub n_flows: u32,
}

/// One completed coflow, for the list of recent completions.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionStatus {
    /// Its id.
    pub id: u64,
    /// Its flows and their bytes.
    pub n_flows: u32,
    /// See `n_flows`.
    pub bytes: u64,
    /// Its completion time (arrival to completion, the coordinator's
    /// clock), ns.
    pub cct_ns: u64,
    /// When it completed (ns since the coordinator started).
    pub completed_ns: u64,
}

/// How many recent completions a snapshot carries (newest first).
pub const RECENT_COMPLETIONS: usize = 32;

/// A snapshot of the coordinator (`Core::status` in [`crate::coordinator`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The scheduler's name.
    pub scheduler: String,
    /// Hosts and their NIC rate (bits/s).
    pub n_hosts: u32,
    /// See `n_hosts`.
    pub host_rate_bps: f64,
    /// The coordinator's clock (ns since it started) at the last tick.
    pub now_ns: u64,
    /// Ticks so far, and how long the last one took (seconds).
    pub ticks: u64,
    /// See `ticks`.
    pub last_tick_s: f64,
    /// Syncs refused as malformed or contradictory.
    pub refused_syncs: u64,
    /// Syncs overtaken by a newer one of the same agent (answered, not taken).
    pub stale_syncs: u64,
    /// Coflows completed so far, and their bytes.
    pub completed_coflows: u64,
    /// See `completed_coflows`.
    pub completed_bytes: u64,
    /// What faults and late reports did (agents dropped and back, final
    /// reports repeated, coflows reopened): the counts a long run checks
    /// its totals against.
    pub faults: Faults,
    /// Every host's agent.
    pub agents: Vec<AgentStatus>,
    /// Active coflows, by id.
    pub coflows: Vec<CoflowStatus>,
    /// Active flows.
    pub flows: Vec<FlowStatus>,
    /// Every link of the coordinator's fabric model, in the fabric's order.
    pub links: Vec<LinkStatus>,
    /// The last [`RECENT_COMPLETIONS`] completed coflows, newest first.
    pub recent_completions: Vec<CompletionStatus>,
}

/// A JSON string literal.
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A JSON number (JSON has no NaN or infinity: those become null).
fn json_f64(out: &mut String, x: f64) {
    if x.is_finite() {
        let _ = write!(out, "{x}");
    } else {
        out.push_str("null");
    }
}

fn json_opt<T>(out: &mut String, x: Option<T>, f: impl FnOnce(&mut String, T)) {
    match x {
        Some(x) => f(out, x),
        None => out.push_str("null"),
    }
}

impl Status {
    /// The snapshot as one JSON object.
    pub fn to_json(&self) -> String {
        let mut o = String::with_capacity(256 + 160 * self.flows.len());
        o.push_str("{\"scheduler\":");
        json_str(&mut o, &self.scheduler);
        let _ = write!(o, ",\"n_hosts\":{},\"host_rate_bps\":", self.n_hosts);
        json_f64(&mut o, self.host_rate_bps);
        let _ = write!(
            o,
            ",\"now_ns\":{},\"ticks\":{},\"last_tick_s\":",
            self.now_ns, self.ticks
        );
        json_f64(&mut o, self.last_tick_s);
        let _ = write!(
            o,
            ",\"refused_syncs\":{},\"stale_syncs\":{},\"completed_coflows\":{},\"completed_bytes\":{},\"faults\":",
            self.refused_syncs, self.stale_syncs, self.completed_coflows, self.completed_bytes
        );
        self.faults.write_json(&mut o);
        o.push_str(",\"agents\":[");
        for (i, a) in self.agents.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(
                o,
                "{{\"host\":{},\"syncs\":{},\"last_sync_ago_s\":",
                a.host, a.syncs
            );
            json_opt(&mut o, a.last_sync_ago_s, json_f64);
            let _ = write!(
                o,
                ",\"scheduled_flows\":{},\"scheduled_rate_bps\":",
                a.scheduled_flows
            );
            json_f64(&mut o, a.scheduled_rate_bps);
            o.push('}');
        }
        o.push_str("],\"coflows\":[");
        for (i, c) in self.coflows.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let parents: Vec<String> = c.parents.iter().map(u64::to_string).collect();
            let _ = write!(
                o,
                "{{\"id\":{},\"parents\":[{}],\"unregistered\":{},\"open_flows\":{},\
                 \"finished_flows\":{},\"bytes\":{},\"queue\":",
                c.id,
                parents.join(","),
                c.unregistered,
                c.open_flows,
                c.finished_flows,
                c.bytes
            );
            json_opt(&mut o, c.queue, |o, q| {
                let _ = write!(o, "{q}");
            });
            o.push('}');
        }
        o.push_str("],\"flows\":[");
        for (i, f) in self.flows.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(
                o,
                "{{\"host\":{},\"flow_id\":{},\"coflow\":{},\"dst\":{},\"bytes\":{},\
                 \"finished\":{},\"size\":",
                f.host, f.flow_id, f.coflow, f.dst, f.bytes, f.finished
            );
            json_opt(&mut o, f.size, |o, n| {
                let _ = write!(o, "{n}");
            });
            o.push_str(",\"rate_bps\":");
            json_opt(&mut o, f.rate_bps, json_f64);
            o.push_str(",\"class\":");
            json_opt(&mut o, f.class, |o, c| {
                let _ = write!(o, "{c}");
            });
            let _ = write!(o, ",\"paused\":{}}}", f.paused);
        }
        o.push_str("],\"links\":[");
        for (i, l) in self.links.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            o.push_str("{\"name\":");
            json_str(&mut o, &l.name);
            o.push_str(",\"capacity_bps\":");
            json_f64(&mut o, l.capacity_bps);
            o.push_str(",\"rate_bps\":");
            json_f64(&mut o, l.rate_bps);
            let _ = write!(o, ",\"n_flows\":{}}}", l.n_flows);
        }
        o.push_str("],\"recent_completions\":[");
        for (i, c) in self.recent_completions.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(
                o,
                "{{\"id\":{},\"n_flows\":{},\"bytes\":{},\"cct_ns\":{},\"completed_ns\":{}}}",
                c.id, c.n_flows, c.bytes, c.cct_ns, c.completed_ns
            );
        }
        o.push_str("]}");
        o
    }

    /// The snapshot as Prometheus metrics (text exposition format 0.0.4).
    pub fn to_prometheus(&self) -> String {
        let mut o = String::with_capacity(2048 + 200 * self.agents.len());
        fn metric(o: &mut String, name: &str, kind: &str, help: &str) {
            let _ = writeln!(o, "# HELP coflowkit_{name} {help}");
            let _ = writeln!(o, "# TYPE coflowkit_{name} {kind}");
        }
        let sched = prom_label(&self.scheduler);
        metric(
            &mut o,
            "coordinator_info",
            "gauge",
            "The coordinator's scheduler and cluster size.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_info{{scheduler=\"{sched}\",hosts=\"{}\"}} 1",
            self.n_hosts
        );
        metric(
            &mut o,
            "coordinator_ticks_total",
            "counter",
            "Coordination rounds run.",
        );
        let _ = writeln!(o, "coflowkit_coordinator_ticks_total {}", self.ticks);
        metric(
            &mut o,
            "coordinator_last_tick_seconds",
            "gauge",
            "How long the last coordination round took.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_last_tick_seconds {}",
            self.last_tick_s
        );
        metric(
            &mut o,
            "coordinator_refused_syncs_total",
            "counter",
            "Agent syncs refused as malformed or contradictory.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_refused_syncs_total {}",
            self.refused_syncs
        );
        metric(
            &mut o,
            "coordinator_stale_syncs_total",
            "counter",
            "Agent syncs overtaken by a newer one of the same agent, answered and not taken.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_stale_syncs_total {}",
            self.stale_syncs
        );
        metric(
            &mut o,
            "coordinator_active_coflows",
            "gauge",
            "Coflows arrived and not completed.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_active_coflows {}",
            self.coflows.len()
        );
        metric(
            &mut o,
            "coordinator_active_flows",
            "gauge",
            "Flows reported and not finished.",
        );
        let _ = writeln!(o, "coflowkit_coordinator_active_flows {}", self.flows.len());
        metric(
            &mut o,
            "coordinator_paused_flows",
            "gauge",
            "Flows the latest schedule makes wait.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_paused_flows {}",
            self.flows.iter().filter(|f| f.paused).count()
        );
        metric(
            &mut o,
            "coordinator_completed_coflows_total",
            "counter",
            "Coflows completed.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_completed_coflows_total {}",
            self.completed_coflows
        );
        metric(
            &mut o,
            "coordinator_completed_bytes_total",
            "counter",
            "Bytes of the completed coflows.",
        );
        let _ = writeln!(
            o,
            "coflowkit_coordinator_completed_bytes_total {}",
            self.completed_bytes
        );
        let mut queues: std::collections::BTreeMap<Option<u32>, u64> = Default::default();
        for c in &self.coflows {
            *queues.entry(c.queue).or_default() += 1;
        }
        metric(
            &mut o,
            "coordinator_queue_coflows",
            "gauge",
            "Active coflows per queue (highest class of their flows; none before a schedule).",
        );
        for (q, n) in queues {
            let q = q.map_or("none".to_string(), |q| q.to_string());
            let _ = writeln!(
                o,
                "coflowkit_coordinator_queue_coflows{{queue=\"{q}\"}} {n}"
            );
        }
        metric(
            &mut o,
            "agent_syncs_total",
            "counter",
            "Syncs taken from each host's agent.",
        );
        for a in &self.agents {
            let _ = writeln!(
                o,
                "coflowkit_agent_syncs_total{{host=\"{}\"}} {}",
                a.host, a.syncs
            );
        }
        metric(
            &mut o,
            "agent_last_sync_age_seconds",
            "gauge",
            "Seconds since each agent's last sync (absent: never).",
        );
        for a in &self.agents {
            if let Some(t) = a.last_sync_ago_s {
                let _ = writeln!(
                    o,
                    "coflowkit_agent_last_sync_age_seconds{{host=\"{}\"}} {t}",
                    a.host
                );
            }
        }
        metric(
            &mut o,
            "agent_scheduled_flows",
            "gauge",
            "Each host's flows in the latest schedule.",
        );
        for a in &self.agents {
            let _ = writeln!(
                o,
                "coflowkit_agent_scheduled_flows{{host=\"{}\"}} {}",
                a.host, a.scheduled_flows
            );
        }
        metric(
            &mut o,
            "agent_scheduled_rate_bits_per_second",
            "gauge",
            "Sum of the rates the latest schedule gives each host's flows.",
        );
        for a in &self.agents {
            let _ = writeln!(
                o,
                "coflowkit_agent_scheduled_rate_bits_per_second{{host=\"{}\"}} {}",
                a.host, a.scheduled_rate_bps
            );
        }
        metric(
            &mut o,
            "link_capacity_bits_per_second",
            "gauge",
            "Capacity of each link of the coordinator's fabric model.",
        );
        for l in &self.links {
            let _ = writeln!(
                o,
                "coflowkit_link_capacity_bits_per_second{{link=\"{}\"}} {}",
                prom_label(&l.name),
                l.capacity_bps
            );
        }
        metric(
            &mut o,
            "link_scheduled_rate_bits_per_second",
            "gauge",
            "Sum of the rates the latest schedule gives the flows crossing each link.",
        );
        for l in &self.links {
            let _ = writeln!(
                o,
                "coflowkit_link_scheduled_rate_bits_per_second{{link=\"{}\"}} {}",
                prom_label(&l.name),
                l.rate_bps
            );
        }
        o
    }
}

/// A Prometheus label value, escaped (text format 0.0.4: `\\`, `\"`, `\n`).
fn prom_label(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// Takes a snapshot of the coordinator: the server is handed one, so that it
/// knows nothing of the coordinator's state.
pub type Snapshot = Arc<dyn Fn() -> Status + Send + Sync>;

/// The live view's page, script and style, served as they are.
const PAGE_HTML: &str = include_str!("live/index.html");
/// See [`PAGE_HTML`].
const PAGE_JS: &str = include_str!("live/live.js");
/// See [`PAGE_HTML`].
const PAGE_CSS: &str = include_str!("live/live.css");

/// The page's own policy: its script and style from this server only, its
/// requests to this server only, no frames, no form posts, no Referer.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                        connect-src 'self'; img-src 'self'; base-uri 'none'; \
                        form-action 'none'; frame-ancestors 'none'";

type Response = hyper::Response<http_body_util::Full<bytes::Bytes>>;

fn reply(status: hyper::StatusCode, kind: &'static str, body: impl Into<bytes::Bytes>) -> Response {
    use hyper::header::{self, HeaderValue};
    let mut r = hyper::Response::new(http_body_util::Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// Why a request for data was refused, or `None` if it carries the token
/// (`Authorization: Bearer TOKEN`, compared in constant time as the gRPC
/// interceptor does).
fn refusal(headers: &hyper::HeaderMap, want: &[u8]) -> Option<&'static str> {
    match headers.get(hyper::header::AUTHORIZATION) {
        None => Some("no authorization token"),
        Some(v) if crate::token::same_token(v.as_bytes(), want) => None,
        Some(_) => Some("wrong authorization token"),
    }
}

/// The answer to one request; `want` is `Bearer TOKEN`.
fn respond<B>(
    snapshot: &Snapshot,
    want: &[u8],
    peer: std::net::SocketAddr,
    req: &hyper::Request<B>,
) -> Response {
    use hyper::header::{self, HeaderValue};
    use hyper::StatusCode;
    let path = req.uri().path();
    if req.method() != hyper::Method::GET {
        let mut r = reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "405 Method Not Allowed: only GET\n",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return r;
    }
    let page = |kind: &'static str, body: &'static str| {
        let mut r = reply(StatusCode::OK, kind, body);
        r.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PAGE_CSP),
        );
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        r
    };
    match path {
        "/" => return page("text/html; charset=utf-8", PAGE_HTML),
        "/live.js" => return page("text/javascript; charset=utf-8", PAGE_JS),
        "/live.css" => return page("text/css; charset=utf-8", PAGE_CSS),
        "/state" | "/metrics" => {}
        _ => {
            return reply(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "404 Not Found: try / (the live view), /state (JSON) or /metrics (Prometheus)\n",
            )
        }
    }
    if let Some(reason) = refusal(req.headers(), want) {
        warn!(%peer, path, reason, "status: refused a request");
        let mut r = reply(
            StatusCode::UNAUTHORIZED,
            "text/plain; charset=utf-8",
            format!(
                "401 Unauthorized: {reason} for {path}: send the coordinator's token \
                 (the contents of its --token-file) as the header \
                 'Authorization: Bearer TOKEN'\n"
            ),
        );
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"coflowkit coordinator\""),
        );
        return r;
    }
    let mut r = if path == "/state" {
        reply(StatusCode::OK, "application/json", snapshot().to_json())
    } else {
        reply(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            snapshot().to_prometheus(),
        )
    };
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Serves the live view, `/state` and `/metrics` of the snapshots
/// `snapshot` takes on `listener`, the last two to requests carrying
/// `token`, until `stop` says so (see the module doc).
pub async fn serve(
    snapshot: Snapshot,
    token: String,
    listener: tokio::net::TcpListener,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let want: Arc<[u8]> = format!("Bearer {token}").into_bytes().into();
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    warn!(error = %e, "status: accept failed");
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let (snapshot, want) = (snapshot.clone(), want.clone());
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let r = respond(&snapshot, &want, peer, &req);
                    async move { Ok::<_, Infallible>(r) }
                });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                .await
            {
                debug!(error = %e, "status: connection ended");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_strings_and_writes_null_for_what_json_cannot_say() {
        let s = Status {
            scheduler: "a\"b\\c\nd".into(),
            n_hosts: 2,
            host_rate_bps: 1e9,
            now_ns: 5,
            ticks: 1,
            last_tick_s: f64::NAN,
            refused_syncs: 0,
            stale_syncs: 0,
            completed_coflows: 0,
            completed_bytes: 0,
            faults: Default::default(),
            agents: vec![AgentStatus {
                host: 0,
                syncs: 3,
                last_sync_ago_s: None,
                scheduled_flows: 0,
                scheduled_rate_bps: 0.0,
            }],
            coflows: vec![CoflowStatus {
                id: 7,
                parents: vec![1, 2],
                unregistered: false,
                open_flows: 1,
                finished_flows: 0,
                bytes: 10,
                queue: None,
            }],
            flows: vec![],
            links: vec![LinkStatus {
                name: "tor \"0\" -> agg 1".into(),
                capacity_bps: 1e9,
                rate_bps: 2.5e8,
                n_flows: 1,
            }],
            recent_completions: vec![CompletionStatus {
                id: 3,
                n_flows: 2,
                bytes: 100,
                cct_ns: 4_000_000,
                completed_ns: 9_000_000,
            }],
        };
        let j = s.to_json();
        assert!(j.starts_with(r#"{"scheduler":"a\"b\\c\u000ad","#), "{j}");
        assert!(j.contains(r#""last_tick_s":null"#), "{j}");
        assert!(j.contains(r#""last_sync_ago_s":null"#), "{j}");
        assert!(j.contains(r#""parents":[1,2]"#), "{j}");
        assert!(j.contains(r#""queue":null}],"flows":[],"links":["#), "{j}");
        assert!(
            j.ends_with(
                r#""links":[{"name":"tor \"0\" -> agg 1","capacity_bps":1000000000,"rate_bps":250000000,"n_flows":1}],"recent_completions":[{"id":3,"n_flows":2,"bytes":100,"cct_ns":4000000,"completed_ns":9000000}]}"#
            ),
            "{j}"
        );
        let m = s.to_prometheus();
        assert!(m.contains(r#"scheduler="a\"b\\c\nd""#), "{m}");
        assert!(
            m.contains(r#"coflowkit_coordinator_queue_coflows{queue="none"} 1"#),
            "{m}"
        );
        assert!(!m.contains("agent_last_sync_age_seconds{"), "{m}");
        assert!(
            m.contains(r#"coflowkit_link_scheduled_rate_bits_per_second{link="tor \"0\" -> agg 1"} 250000000"#),
            "{m}"
        );
    }
}

/// What dropping agents that stayed away did, in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    /// Agents dropped (an agent dropped, back, and dropped again counts twice).
    pub agents: u64,
    /// Agents that synced again after being dropped.
    pub returned: u64,
    /// Open flows the drops finished, at their last reported count.
    pub flows: u64,
    /// Those flows' bytes (their last reported counts).
    pub bytes: u64,
    /// Coflows owned by dropped agents that the drops unregistered.
    pub coflows: u64,
}

/// What faults and late reports did, in all: `/state`'s `faults`, what a
/// long run checks its totals against (a task counted twice shows here
/// first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Agents that stayed away, and what dropping them did.
    pub drops: Drops,
    /// Final reports of a finished flow taken again from its tombstone
    /// (acknowledged; its bytes not counted again).
    pub repeated_finals: u64,
    /// Unregistrations of a completed coflow taken again (acknowledged; not
    /// completed again).
    pub repeated_unregisters: u64,
    /// Flows first reported after their coflow completed: it reopened, and
    /// completes again (counted again).
    pub reopened_coflows: u64,
    /// Coflows first reported already unregistered with no flow reported
    /// beside them: each completes with no flow. A task with no flow does
    /// this; so would an unregistration repeated after its coflow was
    /// forgotten.
    pub empty_coflows: u64,
    /// Flows first reported for a coflow neither active nor listed in the
    /// same sync (the coflow arrives with them, not unregistered): a flow
    /// of another host's coflow reported before its owner's, or a final
    /// report repeated after its tombstone was forgotten.
    pub orphan_flows: u64,
}

impl Faults {
    /// As a JSON object.
    pub fn write_json(&self, o: &mut String) {
        use std::fmt::Write;
        let d = &self.drops;
        let _ = write!(
            o,
            "{{\"agents_dropped\":{},\"agents_returned\":{},\"drop_flows\":{},\"drop_bytes\":{},\
             \"drop_coflows\":{},\"repeated_finals\":{},\"repeated_unregisters\":{},\
             \"reopened_coflows\":{},\"empty_coflows\":{},\"orphan_flows\":{}}}",
            d.agents,
            d.returned,
            d.flows,
            d.bytes,
            d.coflows,
            self.repeated_finals,
            self.repeated_unregisters,
            self.reopened_coflows,
            self.empty_coflows,
            self.orphan_flows
        );
    }
}
