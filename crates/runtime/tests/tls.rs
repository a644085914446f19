//! gRPC between agents and the coordinator over TLS (the `tls` feature):
//! an agent that trusts the coordinator's CA and names its certificate's
//! name is served, and its client's flow is scheduled; an agent that
//! speaks plaintext to it, trusts another CA, or names another host is
//! refused. Certificates are made by the `openssl` command for the test
//! (skipped without it): a CA, and a server certificate it signs.

#![cfg(feature = "tls")]

mod common;

use coflowkit_runtime::agent::{self, AgentConfig, AgentOptions};
use coflowkit_runtime::client::AgentClient;
use coflowkit_runtime::coordinator::{self, CoordinatorConfig};
use common::{connect, Pattern, Receiver, TOKEN};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const NAME: &str = "coordinator.coflowkit.test";

fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A CA (`{ca}.pem`) and, if `leaf`, a server certificate for NAME it
/// signs (`leaf.pem`, `leaf.key`); false if openssl is missing or fails.
fn make_ca(dir: &Path, ca: &str, leaf: bool) -> bool {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let (ca_key, ca_pem) = (format!("{ca}.key"), format!("{ca}.pem"));
    let subj = format!("/CN={ca}");
    let mut a = vec!["req", "-x509"];
    a.extend(ec);
    a.extend([
        "-keyout", &ca_key, "-out", &ca_pem, "-days", "2", "-subj", &subj,
    ]);
    if !openssl(dir, &a) {
        return false;
    }
    if !leaf {
        return true;
    }
    std::fs::write(
        dir.join("leaf.ext"),
        format!(
            "subjectAltName=DNS:{NAME}\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
        ),
    )
    .unwrap();
    let subj = format!("/CN={NAME}");
    let mut r = vec!["req"];
    r.extend(ec);
    r.extend(["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", &subj]);
    openssl(dir, &r)
        && openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                "leaf.csr",
                "-CA",
                &ca_pem,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-out",
                "leaf.pem",
                "-days",
                "2",
                "-extfile",
                "leaf.ext",
            ],
        )
}

#[test]
fn agents_reach_the_coordinator_over_tls_and_others_are_refused() {
    let dir = std::env::temp_dir().join(format!("coflowkit-rt-{}-tls", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if !(make_ca(&dir, "ca", true) && make_ca(&dir, "other", false)) {
        eprintln!("skipped: the openssl command is missing or failed");
        return;
    }
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cfg = CoordinatorConfig {
        n_hosts: 2,
        host_rate_bps: 1e9,
        delta: Duration::from_millis(10),
        scheduler: "fair".into(),
        token: TOKEN.into(),
        mark_classes: true,
        hints: Default::default(),
        fabric: None,
        agent_timeout: coordinator::DEFAULT_AGENT_TIMEOUT,
    };
    let coord = rt.block_on(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        coordinator::spawn_tls(cfg, l, &read("leaf.pem"), &read("leaf.key")).unwrap()
    });
    let port = coord.addr.port();
    let agent_cfg = |h: u32, scheme: &str| AgentConfig {
        host: h,
        coordinator: format!("{scheme}://127.0.0.1:{port}"),
        token: TOKEN.into(),
        socket: dir.join(format!("agent{h}-{scheme}.sock")),
        socket_mode: 0o600,
    };
    // Refused: plaintext, another CA, another name.
    let plain = rt.block_on(agent::spawn(agent_cfg(0, "http")));
    assert!(plain.is_err(), "a plaintext agent was served");
    let opts = AgentOptions::default();
    let other = rt.block_on(agent::spawn_tls(
        agent_cfg(0, "https"),
        opts,
        &read("other.pem"),
        NAME,
    ));
    let e = other
        .err()
        .expect("an agent trusting another CA was served");
    eprintln!("another CA: {e}");
    let wrong = rt.block_on(agent::spawn_tls(
        agent_cfg(0, "https"),
        opts,
        &read("ca.pem"),
        "elsewhere.test",
    ));
    assert!(wrong.is_err(), "an agent expecting another name was served");
    // Served: the right CA and name; a flow goes through and is scheduled.
    let agents: Vec<_> = (0..2)
        .map(|h| {
            rt.block_on(agent::spawn_tls(
                agent_cfg(h, "https"),
                opts,
                &read("ca.pem"),
                NAME,
            ))
            .unwrap()
        })
        .collect();
    let rx = Receiver::start();
    let client = AgentClient::connect(dir.join("agent0-https.sock"));
    let c = client.register(&[]).unwrap();
    let mut w = client.writer(c, 1, None, connect(rx.addr, 1));
    let mut buf = vec![0u8; 64 << 10];
    Pattern::new(1).fill(&mut buf);
    w.write_all(&buf).unwrap();
    let t0 = Instant::now();
    while coord.core.lock().unwrap().schedule_of(0).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the flow was never scheduled over TLS"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    w.finish().unwrap();
    client.unregister(c).unwrap();
    let t0 = Instant::now();
    while coord.core.lock().unwrap().completed_coflows().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the coflow was never reported complete"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    rt.block_on(async move {
        for a in agents {
            a.shutdown().await;
        }
        coord.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
