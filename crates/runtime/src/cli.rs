//! The runtime's command line (`coflowkit-runtime coordinator|agent`) as a
//! library function, [`run`]: the `coflowkit-runtime` binary is a wrapper
//! around it, and the Python extension (`coflowkit._core.runtime_main`)
//! calls it with the GIL released, so an installed wheel runs the
//! coordinator and the agent with no separate binary (docs/runtime.md).
//!
//! [`run`] builds its own tokio runtime for the length of the call and
//! drops it on return; nothing outlives it but the log subscriber, which
//! the first call in a process installs.

use crate::{agent, coordinator};
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "coflowkit-runtime",
    about = "The coflow runtime: coordinator and agents"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// One per cluster: schedules the coflows the agents report.
    Coordinator {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:7070")]
        listen: String,
        /// Hosts in the cluster (agents are numbered 0..hosts); with
        /// --topology, the fabric's hosts unless given (and then they must
        /// agree).
        #[arg(long, required_unless_present = "topology")]
        hosts: Option<u32>,
        /// Each host's NIC rate, e.g. 1Gbps, 200Mbit/s, or bits/s (the big
        /// switch's; with --topology, the fabric's links set the rates).
        #[arg(long, default_value = "1Gbps", conflicts_with = "topology")]
        host_rate: String,
        /// The fabric to schedule on, as in `coflowkit simulate --topology`
        /// (a spec such as tree:racks=5,hosts=4,rate=1Gbps, or a .toml or
        /// .yaml file): rates respect the capacity of every hop. Default: a
        /// big switch of --hosts NICs at --host-rate.
        #[arg(long, value_name = "SPEC")]
        topology: Option<String>,
        /// Drop an agent that stays silent this long (ms): its open flows
        /// finish at their last reported count and its coflows are
        /// unregistered. Also how long finished flows' and completed
        /// coflows' ids are kept (repeated final reports are acknowledged).
        #[arg(long, default_value_t = coordinator::DEFAULT_AGENT_TIMEOUT.as_millis() as u64)]
        agent_timeout_ms: u64,
        /// The scheduler, as in `coflowkit simulate` (aalo, varys, fair, ...).
        #[arg(long, default_value = "aalo")]
        scheduler: String,
        /// A trace (native CSV by its .csv name, else coflow-benchmark)
        /// whose coflow and flow sizes set what a scheduler's parameters
        /// take from the workload (`fifo-lm`'s default threshold p80, say).
        #[arg(long, value_name = "TRACE")]
        hints: Option<PathBuf>,
        /// The coordination interval Δ in milliseconds.
        #[arg(long, default_value_t = 10)]
        delta_ms: u64,
        /// File holding the shared token agents must present.
        #[arg(long)]
        token_file: PathBuf,
        /// Tell flows the scheduler's priority classes (DSCP, SO_PRIORITY):
        /// on, or off (every flow class 0: only rates and pauses enforce
        /// the schedule, for rate schedules on strict-priority fabrics).
        #[arg(long, default_value = "on", value_parser = ["on", "off"])]
        classes: String,
        /// Also serve the state (GET /state, JSON) and Prometheus metrics
        /// (GET /metrics) over HTTP at this address (a management one:
        /// no token is asked).
        #[arg(long)]
        http_listen: Option<String>,
        /// Serve gRPC over TLS with this certificate chain (PEM; needs a
        /// binary built with `--features tls`).
        #[arg(long, requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The certificate's private key (PEM).
        #[arg(long, requires = "tls_cert")]
        tls_key: Option<PathBuf>,
    },
    /// One per host: serves local clients and syncs with the coordinator.
    Agent {
        /// This host's number in the cluster.
        #[arg(long)]
        host: u32,
        /// The coordinator's URL.
        #[arg(long, default_value = "http://127.0.0.1:7070")]
        coordinator: String,
        /// The Unix socket for clients.
        #[arg(long)]
        socket: PathBuf,
        /// The socket's permissions (octal).
        #[arg(long, default_value = "660")]
        socket_mode: String,
        /// File holding the shared token.
        #[arg(long)]
        token_file: PathBuf,
        /// A client silent this long (ms) is disconnected and cleaned up.
        #[arg(long, default_value_t = 10_000)]
        client_timeout_ms: u64,
        /// After syncs have failed this long (ms), no flow stays paused.
        #[arg(long, default_value_t = 200)]
        fallback_after_ms: u64,
        /// Give up starting if the coordinator cannot be reached for this
        /// long (ms); 0: wait for it for ever.
        #[arg(long, default_value_t = 0)]
        hello_retry_ms: u64,
        /// Reach the coordinator over TLS (an https:// URL), trusting this
        /// CA (PEM; needs a binary built with `--features tls`).
        #[arg(long, requires = "tls_domain")]
        tls_ca: Option<PathBuf>,
        /// The name the coordinator's certificate must carry.
        #[arg(long, requires = "tls_ca")]
        tls_domain: Option<String>,
        /// Enforce flows that clients name by their address (unmodified
        /// applications' sockets) with tc on this egress device, whose root
        /// must be HTB 1: with a class 1:1 (as the testbed's host ports);
        /// needs root. Without it such flows are refused.
        #[arg(long, conflicts_with = "tls_ca")]
        transparent_dev: Option<String>,
        /// What a flow named by its address may send above its scheduled
        /// rate: rate (nothing: held to it), or line (guaranteed its rate,
        /// borrowing the link's idle capacity highest class first:
        /// work-conserving).
        #[arg(long, default_value = "rate", value_parser = ["rate", "line"], requires = "transparent_dev")]
        transparent_ceil: String,
        /// Carry a flow named by its address's priority class to the
        /// fabric as its packets' DSCP (an eBPF classifier at the device's
        /// egress): on, or off.
        #[arg(long, default_value = "on", value_parser = ["on", "off"])]
        transparent_dscp: String,
        /// Who decides a flow named by its address's class: coordinator
        /// (its rates and classes, every delta), or host (the scheduler's
        /// host policy, run by this agent from what this host sees, at
        /// once: Baraat's FIFO-LM as its hosts mark it; the flow sends at
        /// line rate in its class).
        #[arg(long, default_value = "coordinator", value_parser = ["coordinator", "host"], requires = "transparent_dev")]
        transparent_policy: String,
    },
}

/// The fabric of a `--topology` spec or file, of `hosts` hosts when given
/// (a big switch without its own `hosts` takes them; any other fabric must
/// have as many).
fn read_fabric(spec: &str, hosts: Option<u32>) -> Result<coflowkit_model::Fabric> {
    let cfg = coflowkit_topology_config::resolve(spec)
        .map_err(|e| anyhow::anyhow!("--topology {spec}: {e}"))?;
    let fabric = cfg
        .build(hosts)
        .map_err(|e| anyhow::anyhow!("--topology {spec}: {e}"))?;
    if let Some(h) = hosts {
        anyhow::ensure!(
            fabric.n_hosts() == h,
            "--topology {spec} has {} hosts, --hosts says {h}: give one or make them agree",
            fabric.n_hosts()
        );
    }
    Ok(fabric)
}

fn read_token(path: &PathBuf) -> Result<String> {
    let t = std::fs::read_to_string(path)
        .with_context(|| format!("reading the token file {}", path.display()))?;
    let t = t.trim().to_string();
    anyhow::ensure!(!t.is_empty(), "the token file {} is empty", path.display());
    Ok(t)
}

#[cfg(feature = "tls")]
fn read_pem(path: &PathBuf) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

#[cfg(feature = "tls")]
fn spawn_coordinator_tls(
    cfg: coordinator::CoordinatorConfig,
    listener: tokio::net::TcpListener,
    cert: &PathBuf,
    key: &PathBuf,
) -> Result<coordinator::CoordinatorHandle> {
    Ok(coordinator::spawn_tls(
        cfg,
        listener,
        &read_pem(cert)?,
        &read_pem(key)?,
    )?)
}

#[cfg(not(feature = "tls"))]
fn spawn_coordinator_tls(
    _: coordinator::CoordinatorConfig,
    _: tokio::net::TcpListener,
    _: &PathBuf,
    _: &PathBuf,
) -> Result<coordinator::CoordinatorHandle> {
    anyhow::bail!("--tls-cert: this binary was built without TLS (cargo build --features tls)")
}

#[cfg(feature = "tls")]
async fn spawn_agent_tls(
    cfg: agent::AgentConfig,
    opts: agent::AgentOptions,
    ca: &PathBuf,
    domain: &str,
) -> Result<agent::AgentHandle> {
    Ok(agent::spawn_tls(cfg, opts, &read_pem(ca)?, domain).await?)
}

#[cfg(not(feature = "tls"))]
async fn spawn_agent_tls(
    _: agent::AgentConfig,
    _: agent::AgentOptions,
    _: &PathBuf,
    _: &str,
) -> Result<agent::AgentHandle> {
    anyhow::bail!("--tls-ca: this binary was built without TLS (cargo build --features tls)")
}

/// Runs `coflowkit-runtime` with `args` (the program name first, as
/// `std::env::args_os` gives them) and returns the process's exit code:
/// 0 after a clean stop (SIGINT), 2 for a usage error (clap's message on
/// stderr; `--help` prints on stdout and returns 0), 1 for any other error
/// (`Error: ...` on stderr, as a Rust `main` returning `Err` prints it).
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            let _ = std::io::stdout().flush();
            return e.exit_code();
        }
    };
    init_logging();
    if matches!(cli.cmd, Cmd::Coordinator { .. }) {
        one_allocator_arena();
    }
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
        .and_then(|rt| rt.block_on(serve(cli)));
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e:?}");
            1
        }
    }
}

/// Asks glibc's allocator for one arena before the runtime's threads
/// start. By default each thread that allocates under contention gets an
/// arena of its own, and what a backlog of tasks leaves there stays
/// resident between the live entries (`malloc_trim` returns whole free
/// pages only): over a long run the coordinator's resident memory then
/// follows its largest backlogs, not what it holds (docs/lab/runtime-soak.md).
/// The coordinator's threads mostly wait on sockets, so one arena's lock
/// costs it little.
fn one_allocator_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; called before
    // the runtime's threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Logs to stderr at the level RUST_LOG names (error, warn, info, debug,
/// trace; info by default). A second call in one process keeps the first's.
fn init_logging() {
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        // Colours only on a terminal: a log file gets plain key=value fields.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Runs the parsed command until SIGINT.
/// The workload hints of the trace at `path`: native CSV if its name ends
/// in `.csv`, else coflow-benchmark.
fn read_hints(path: &std::path::Path) -> Result<coflowkit_sched::WorkloadHints> {
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let workload = if is_csv {
        coflowkit_workload::read_native_csv(path)
    } else {
        coflowkit_workload::read_benchmark_file(path)
    }
    .map_err(|e| anyhow::anyhow!("--hints {}: {e}", path.display()))?;
    Ok(coflowkit_sched::WorkloadHints::of_coflows(
        &workload.coflows,
    ))
}

async fn serve(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Coordinator {
            listen,
            hosts,
            host_rate,
            topology,
            agent_timeout_ms,
            scheduler,
            hints,
            delta_ms,
            token_file,
            classes,
            http_listen,
            tls_cert,
            tls_key,
        } => {
            let (n_hosts, host_rate_bps, fabric) = match topology {
                Some(spec) => {
                    let fabric = read_fabric(&spec, hosts)?;
                    let rate = coordinator::slowest_nic_bps(&fabric);
                    (fabric.n_hosts(), rate, Some(fabric))
                }
                None => {
                    let rate = coflowkit_model::parse::rate(&host_rate)
                        .map_err(|e| anyhow::anyhow!("--host-rate {host_rate}: {e}"))?
                        .0;
                    (hosts.expect("clap requires --hosts"), rate, None)
                }
            };
            anyhow::ensure!(delta_ms > 0, "--delta-ms must be at least 1");
            anyhow::ensure!(
                agent_timeout_ms > 0,
                "--agent-timeout-ms must be at least 1"
            );
            let cfg = coordinator::CoordinatorConfig {
                n_hosts,
                host_rate_bps,
                fabric,
                agent_timeout: Duration::from_millis(agent_timeout_ms),
                delta: Duration::from_millis(delta_ms),
                scheduler,
                token: read_token(&token_file)?,
                mark_classes: classes == "on",
                hints: match hints {
                    Some(trace) => read_hints(&trace)?,
                    None => Default::default(),
                },
            };
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .with_context(|| format!("listening on {listen}"))?;
            let mut handle = match (tls_cert, tls_key) {
                (Some(cert), Some(key)) => spawn_coordinator_tls(cfg, listener, &cert, &key)?,
                _ => coordinator::spawn(cfg, listener)?,
            };
            if let Some(http) = http_listen {
                let l = tokio::net::TcpListener::bind(&http)
                    .await
                    .with_context(|| format!("listening on {http} for HTTP"))?;
                handle.serve_status(l)?;
            }
            tokio::signal::ctrl_c().await?;
            handle.shutdown().await;
        }
        Cmd::Agent {
            host,
            coordinator,
            socket,
            socket_mode,
            token_file,
            client_timeout_ms,
            fallback_after_ms,
            hello_retry_ms,
            tls_ca,
            tls_domain,
            transparent_dev,
            transparent_ceil,
            transparent_dscp,
            transparent_policy,
        } => {
            let mode = u32::from_str_radix(&socket_mode, 8)
                .with_context(|| format!("--socket-mode {socket_mode}: not an octal mode"))?;
            let cfg = agent::AgentConfig {
                host,
                coordinator,
                token: read_token(&token_file)?,
                socket,
                socket_mode: mode,
            };
            let opts = agent::AgentOptions {
                client_timeout: Duration::from_millis(client_timeout_ms.max(1)),
                fallback_after: Duration::from_millis(fallback_after_ms),
                hello_retry: (hello_retry_ms > 0).then(|| Duration::from_millis(hello_retry_ms)),
            };
            let handle = match (tls_ca, tls_domain) {
                (Some(ca), Some(domain)) => spawn_agent_tls(cfg, opts, &ca, &domain).await?,
                _ => {
                    let transparent = transparent_dev.map(|dev| agent::Transparent {
                        dev,
                        ceiling: if transparent_ceil == "line" {
                            agent::Ceiling::Line
                        } else {
                            agent::Ceiling::Rate
                        },
                        mark: transparent_dscp == "on",
                        host_policy: transparent_policy == "host",
                    });
                    agent::spawn_transparent(cfg, opts, transparent).await?
                }
            };
            tokio::signal::ctrl_c().await?;
            handle.shutdown().await;
        }
    }
    Ok(())
}
