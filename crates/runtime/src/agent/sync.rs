//! The agent's link to the coordinator: the gRPC client that presents the cluster's token, the
//! sync stream (one long-lived stream, or one call per Δ against a coordinator that serves none),
//! and the loop that syncs the agent's state every Δ and handles an unreachable coordinator
//! (backoff, then fallback; see the faults in [`super`]'s module doc).
//!
//! It is apart from the client side of the agent (the Unix socket and the `State` it keeps) because it
//! is the one part that speaks tonic; the state it syncs is the parent's.

use super::{Shared, MAX_BACKOFF};
use crate::proto::{self, coordinator_client::CoordinatorClient};
use crate::validate::{self, MAX_MESSAGE_BYTES};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tracing::{info, warn};

/// What adds the token to every call.
type AddToken =
    Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;

/// A coordinator client that presents the token.
pub type Client = CoordinatorClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, AddToken>,
>;

/// A gRPC client of the coordinator that presents `token` on every call.
pub fn coordinator_client(url: &str, token: &str) -> Result<Client, String> {
    let endpoint =
        tonic::transport::Endpoint::from_shared(url.to_string()).map_err(|e| e.to_string())?;
    client_on(endpoint, token)
}

/// [`coordinator_client`] over TLS: the coordinator's certificate must
/// chain to `ca_pem` (PEM) and name `domain`; `url` is `https://...`.
/// Built with the `tls` feature.
#[cfg(feature = "tls")]
pub fn coordinator_client_tls(
    url: &str,
    token: &str,
    ca_pem: &[u8],
    domain: &str,
) -> Result<Client, String> {
    use tonic::transport::{Certificate, ClientTlsConfig};
    let endpoint = tonic::transport::Endpoint::from_shared(url.to_string())
        .map_err(|e| e.to_string())?
        .tls_config(
            ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(ca_pem))
                .domain_name(domain),
        )
        .map_err(|e| format!("TLS: {e}"))?;
    client_on(endpoint, token)
}

/// A client of the coordinator at `endpoint` that presents `token`, with the runtime's timeouts and
/// message size limits.
fn client_on(endpoint: tonic::transport::Endpoint, token: &str) -> Result<Client, String> {
    let channel = endpoint
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(2))
        .connect_lazy();
    let value: tonic::metadata::MetadataValue<tonic::metadata::Ascii> = format!("Bearer {token}")
        .parse()
        .map_err(|_| "the token must be printable ASCII".to_string())?;
    let add: AddToken = Box::new(move |mut req: tonic::Request<()>| {
        req.metadata_mut().insert("authorization", value.clone());
        Ok(req)
    });
    Ok(CoordinatorClient::with_interceptor(channel, add)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
}

/// This agent process's sync session: the clock in ns mixed with the
/// process id, so that a restarted agent's syncs (numbered from 1 again)
/// are not taken for stale ones of its previous life.
fn sync_session() -> u64 {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    t ^ (u64::from(std::process::id()) << 40)
}

/// How long an agent waits for the reply to a sync on its stream.
const SYNC_TIMEOUT: Duration = Duration::from_secs(2);

/// The agent's end of its sync stream: requests go in, replies come back in
/// order, one per request.
struct SyncStream {
    requests: tokio::sync::mpsc::Sender<proto::SyncRequest>,
    replies: tonic::Streaming<proto::SyncReply>,
}

/// How an agent syncs: over one long-lived stream (opened on first use and
/// after any failure), or, against a coordinator that does not serve
/// streams (one older than `SyncStream`), one `Sync` call each Δ.
struct Syncer {
    client: Client,
    stream: Option<SyncStream>,
    unary: bool,
}

impl Syncer {
    fn new(client: Client) -> Syncer {
        Syncer {
            client,
            stream: None,
            unary: false,
        }
    }

    /// One sync. After an error the stream is dropped (a late reply can
    /// never be taken for the next request's), and the next sync opens a
    /// new one.
    async fn sync(&mut self, req: proto::SyncRequest) -> Result<proto::SyncReply, tonic::Status> {
        if !self.unary && self.stream.is_none() {
            match self.open().await {
                Ok(s) => self.stream = Some(s),
                Err(s) if s.code() == tonic::Code::Unimplemented => {
                    info!("the coordinator serves no sync stream; syncing with one call per delta");
                    self.unary = true;
                }
                Err(s) => return Err(s),
            }
        }
        let Some(stream) = self.stream.as_mut() else {
            return self.client.sync(req).await.map(tonic::Response::into_inner);
        };
        let r = stream.exchange(req).await;
        if r.is_err() {
            self.stream = None;
        }
        r
    }

    async fn open(&mut self) -> Result<SyncStream, tonic::Status> {
        let (requests, rx) = tokio::sync::mpsc::channel(1);
        let replies = self
            .client
            .sync_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await?
            .into_inner();
        Ok(SyncStream { requests, replies })
    }
}

impl SyncStream {
    async fn exchange(
        &mut self,
        req: proto::SyncRequest,
    ) -> Result<proto::SyncReply, tonic::Status> {
        self.requests
            .send(req)
            .await
            .map_err(|_| tonic::Status::unavailable("the sync stream is closed"))?;
        match tokio::time::timeout(SYNC_TIMEOUT, self.replies.message()).await {
            Err(_) => Err(tonic::Status::deadline_exceeded(format!(
                "no reply to a sync within {} s",
                SYNC_TIMEOUT.as_secs()
            ))),
            Ok(Ok(Some(reply))) => Ok(reply),
            Ok(Ok(None)) => Err(tonic::Status::unavailable(
                "the coordinator ended the sync stream",
            )),
            Ok(Err(status)) => Err(status),
        }
    }
}

/// Syncs `state` with the coordinator every `delta` until `stop`: on failure it keeps the counts
/// and the last schedule and retries with backoff (doubling up to [`MAX_BACKOFF`]), and after
/// `fallback_after` of failures gives every open flow an even share of the NIC.
pub(super) async fn sync_loop(
    client: Client,
    state: Shared,
    delta: Duration,
    fallback_after: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut every = tokio::time::interval(delta);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Since when syncs have failed, the wait before the next attempt and
    // when that is, and whether the flows have fallen back.
    let mut failing_since: Option<Instant> = None;
    let mut backoff = delta;
    let mut next_try = Instant::now();
    let mut fell_back = false;
    let mut syncer = Syncer::new(client);
    let (session, mut seq) = (sync_session(), 0u64);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.changed() => return,
        }
        if let Some(since) = failing_since {
            if !fell_back && since.elapsed() >= fallback_after {
                warn!(
                    after_ms = since.elapsed().as_millis() as u64,
                    "coordinator unreachable; no flow stays paused: each gets an even share of the NIC"
                );
                state.lock().expect("agent lock").fall_back();
                fell_back = true;
            }
            if Instant::now() < next_try {
                continue;
            }
        }
        let mut req = state.lock().expect("agent lock").sync_request();
        // Numbered, so that a request of a stream given up on that reaches
        // the coordinator after a newer one is not taken (coordinator doc).
        seq += 1;
        req.session = session;
        req.seq = seq;
        let result = tokio::select! {
            r = syncer.sync(req) => r,
            _ = stop.changed() => return,
        };
        match result {
            Ok(reply) => {
                if let Err(e) = validate::sync_reply(&reply) {
                    warn!(reason = %e, "refused the coordinator's reply");
                    continue;
                }
                if let Some(since) = failing_since.take() {
                    info!(
                        after_ms = since.elapsed().as_millis() as u64,
                        "coordinator reachable again; resynchronised"
                    );
                    backoff = delta;
                    fell_back = false;
                }
                state.lock().expect("agent lock").apply(reply);
            }
            Err(s) => {
                if failing_since.is_none() {
                    warn!(code = %s.code(), reason = s.message(), "sync failed; keeping the counts and the last schedule, retrying with backoff");
                    failing_since = Some(Instant::now());
                } else {
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                next_try = Instant::now() + backoff;
            }
        }
    }
}
