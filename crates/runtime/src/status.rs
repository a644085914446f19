//! The coordinator's state over HTTP, for people and for Prometheus.
//!
//! [`serve`] answers, on its own listener (not the gRPC port, which
//! requires the token):
//! * `GET /state`: a JSON snapshot ([`Status`]): the scheduler, each
//!   agent's syncs and when it last synced, each active coflow (its queue or
//!   class, open and finished flows, bytes), each flow (bytes, scheduled
//!   rate, class, paused), and the completed totals;
//! * `GET /metrics`: the same as Prometheus metrics, in the text exposition
//!   format (version 0.0.4);
//! * anything else: 404.
//!
//! Both are read-only and carry no secret, but they do show the cluster's
//! traffic: bind the listener to a management address. The server is
//! hyper's HTTP/1.1 server (hyper is already in the tree through tonic);
//! the JSON is written here (a handful of numbers and ids, no free text but
//! the scheduler's name, which is escaped).

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
    /// Every host's agent.
    pub agents: Vec<AgentStatus>,
    /// Active coflows, by id.
    pub coflows: Vec<CoflowStatus>,
    /// Active flows.
    pub flows: Vec<FlowStatus>,
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
            ",\"refused_syncs\":{},\"stale_syncs\":{},\"completed_coflows\":{},\"completed_bytes\":{},\"agents\":[",
            self.refused_syncs, self.stale_syncs, self.completed_coflows, self.completed_bytes
        );
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
                 \"finished\":{},\"rate_bps\":",
                f.host, f.flow_id, f.coflow, f.dst, f.bytes, f.finished
            );
            json_opt(&mut o, f.rate_bps, json_f64);
            o.push_str(",\"class\":");
            json_opt(&mut o, f.class, |o, c| {
                let _ = write!(o, "{c}");
            });
            let _ = write!(o, ",\"paused\":{}}}", f.paused);
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
        let mut sched = String::new();
        for c in self.scheduler.chars() {
            match c {
                '"' => sched.push_str("\\\""),
                '\\' => sched.push_str("\\\\"),
                '\n' => sched.push_str("\\n"),
                c => sched.push(c),
            }
        }
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
        o
    }
}

/// Takes a snapshot of the coordinator: the server is handed one, so that it
/// knows nothing of the coordinator's state.
pub type Snapshot = Arc<dyn Fn() -> Status + Send + Sync>;

fn respond(
    snapshot: &Snapshot,
    method: &hyper::Method,
    path: &str,
) -> hyper::Response<http_body_util::Full<bytes::Bytes>> {
    let (status, kind, body) = if method != hyper::Method::GET {
        (
            hyper::StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "only GET\n".to_string(),
        )
    } else {
        match path {
            "/state" => (
                hyper::StatusCode::OK,
                "application/json",
                snapshot().to_json(),
            ),
            "/metrics" => {
                let s = snapshot();
                (
                    hyper::StatusCode::OK,
                    "text/plain; version=0.0.4; charset=utf-8",
                    s.to_prometheus(),
                )
            }
            _ => (
                hyper::StatusCode::NOT_FOUND,
                "text/plain",
                "try /state or /metrics\n".to_string(),
            ),
        }
    };
    let mut r = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(kind),
    );
    r
}

/// Serves `/state` and `/metrics` of the snapshots `snapshot` takes on
/// `listener` until `stop` says so (see the module doc).
pub async fn serve(
    snapshot: Snapshot,
    listener: tokio::net::TcpListener,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    warn!(error = %e, "status: accept failed");
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let snapshot = snapshot.clone();
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let r = respond(&snapshot, req.method(), req.uri().path());
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
        };
        let j = s.to_json();
        assert!(j.starts_with(r#"{"scheduler":"a\"b\\c\u000ad","#), "{j}");
        assert!(j.contains(r#""last_tick_s":null"#), "{j}");
        assert!(j.contains(r#""last_sync_ago_s":null"#), "{j}");
        assert!(j.contains(r#""parents":[1,2]"#), "{j}");
        assert!(j.contains(r#""queue":null}],"flows":[]}"#), "{j}");
        let m = s.to_prometheus();
        assert!(m.contains(r#"scheduler="a\"b\\c\nd""#), "{m}");
        assert!(
            m.contains(r#"coflowkit_coordinator_queue_coflows{queue="none"} 1"#),
            "{m}"
        );
        assert!(!m.contains("agent_last_sync_age_seconds{"), "{m}");
    }
}
