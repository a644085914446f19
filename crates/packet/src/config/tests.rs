use super::*;

#[test]
fn keys_parse_and_errors_name_the_key() {
    let mut c = PacketConfig::default();
    c.set_all("transport=tcp,buffer=100p,ecn_k=30KB,min_rto=200us,delayed_ack=1ms")
        .unwrap();
    assert_eq!(c.transport, TransportKind::Tcp);
    assert_eq!(c.switch_buffer, Some(Limit::Packets(100)));
    assert_eq!(c.ecn_k, Some(Limit::Bytes(30_000)));
    assert_eq!(c.min_rto, Dur(200_000));
    assert_eq!(c.delayed_ack, Some(Dur(1_000_000)));
    assert_eq!(c.max_rto, Dur(60_000_000_000), "RFC 6298's 60 s by default");
    c.set("max_rto", "1s").unwrap();
    assert_eq!(c.max_rto, Dur(1_000_000_000));
    c.check().unwrap();
    assert_eq!(
        c.set("max_rto", "100us").unwrap_err().to_string(),
        "packet option 'max_rto': 100000 ns is below min_rto (200000 ns): the timer's ceiling must be at least its floor"
    );
    assert_eq!(
        c.max_rto,
        Dur(1_000_000_000),
        "a refused value changes nothing"
    );
    let e = c.set("transport", "cubic").unwrap_err();
    assert_eq!(
        e.to_string(),
        "packet option 'transport': unknown transport 'cubic': one of tcp, dctcp, rcp, d2tcp, pfabric"
    );
    let e = c.set("mtu", "40").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("packet option 'mtu': 40 bytes leave no payload"),
        "{e}"
    );
    let e = c.set("bufer", "1").unwrap_err();
    assert!(
        e.to_string().contains("unknown option; valid: transport"),
        "{e}"
    );
    assert!(c
        .set("buffer", "1000")
        .unwrap_err()
        .to_string()
        .contains("cannot hold"));
    c.set("ecn_k", "off").unwrap();
    assert_eq!(c.k_for(1e10), None);
    assert!(c.timestamps);
    c.set_all("timestamps=off,limited_transmit=no").unwrap();
    assert!(!c.timestamps && !c.limited_transmit);
    assert_eq!(
        c.set("timestamps", "karn").unwrap_err().to_string(),
        "packet option 'timestamps': 'karn': on or off"
    );
    assert!(!c.host_fifo);
    c.set("host_prio", "FIFO").unwrap();
    assert!(c.host_fifo);
    assert_eq!(
        c.set("host_prio", "prio").unwrap_err().to_string(),
        "packet option 'host_prio': 'prio': strict or fifo"
    );
    c.set("host_prio", "strict").unwrap();
    assert!(!c.host_fifo);
    c.set("rto_reset", "ack").unwrap();
    assert!(c.rto_reset_on_ack);
    assert!(c.set("rto_reset", "never").is_err());
    assert!(!c.sack, "NewReno by default");
    c.set("sack", "on").unwrap();
    assert!(c.sack);
    assert!(c.set("sack", "dsack").is_err());
    assert!(
        !c.direct_acks && !c.direct_last_hop,
        "every packet queued by default"
    );
    c.set("acks", "direct").unwrap();
    c.set("last_hop", "Direct").unwrap();
    assert!(c.direct_acks && c.direct_last_hop);
    assert_eq!(
        c.set("acks", "fast").unwrap_err().to_string(),
        "packet option 'acks': 'fast': queued or direct"
    );
    assert_eq!(c.tsq, None);
    c.set("tsq", "32KB").unwrap();
    assert_eq!(c.tsq, Some(32_000));
    assert!(c.set("tsq", "20p").is_err());
    c.set("tsq", "off").unwrap();
    assert_eq!(c.tsq, None);
    assert!(!c.rto_undo);
    c.set("rto_undo", "on").unwrap();
    assert!(c.rto_undo);
    assert!(!c.host_rtx_skip);
    c.set("host_rtx", "skip").unwrap();
    assert!(c.host_rtx_skip);
    assert!(c.set("host_rtx", "drop").is_err());
    assert!(!c.reorder_adaptive);
    c.set("reordering", "adaptive").unwrap();
    assert!(c.reorder_adaptive);
    assert!(c.set("reordering", "rack").is_err());
    assert!(!c.control_batch);
    c.set("control_batch", "on").unwrap();
    assert!(c.control_batch);
}

#[test]
fn pacing_and_rcp_keys() {
    let mut c = PacketConfig::default();
    assert_eq!(c.pacing, Pacing::Off);
    c.set_all("transport=rcp,pacing=5Gbps,rcp_alpha=0.4,rcp_beta=0.5,rcp_interval=5us,rcp_d0=30us")
        .unwrap();
    assert_eq!(c.transport, TransportKind::Rcp);
    assert_eq!(c.pacing, Pacing::Rate(5_000_000_000));
    assert_eq!((c.rcp_alpha, c.rcp_beta), (0.4, 0.5));
    assert_eq!((c.rcp_interval, c.rcp_d0), (Some(Dur(5_000)), Dur(30_000)));
    c.set_all("pacing=cwnd,rcp_interval=rtt").unwrap();
    assert_eq!((c.pacing, c.rcp_interval), (Pacing::Cwnd, None));
    assert_eq!(
        c.set("pacing", "5GB/s").unwrap_err().to_string(),
        "packet option 'pacing': '5GB/s': rates are in bits per second (Gbps, Gbit/s), not bytes; or off, or cwnd"
    );
    assert_eq!(
        c.set("rcp_alpha", "-1").unwrap_err().to_string(),
        "packet option 'rcp_alpha': -1 is not a finite number of 0 or more"
    );
    assert_eq!(
        c.set("rcp_interval", "0").unwrap_err().to_string(),
        "packet option 'rcp_interval': the interval must be above 0"
    );
}

#[test]
fn shared_buffer_and_d2tcp_keys() {
    let mut c = PacketConfig::default();
    assert_eq!(
        c.buffer_kind(),
        BufferKind::PerPort(Some(Limit::Bytes(170_000)))
    );
    c.set_all("transport=d2tcp,buffer=shared:4MB,dt_alpha=2,d2tcp_late=dctcp")
        .unwrap();
    assert_eq!(c.transport, TransportKind::D2tcp);
    assert_eq!(c.buffer_kind(), BufferKind::Shared(4_000_000));
    assert_eq!((c.dt_alpha, c.d2tcp_late), (2.0, LateRule::Dctcp));
    let e = c.set("buffer", "shared:100p").unwrap_err().to_string();
    assert_eq!(
        e,
        "packet option 'buffer': 'shared:100p': a shared pool is sized in bytes (shared:4MB)"
    );
    assert!(c.set("buffer", "shared:1000").is_err());
    assert_eq!(
        c.set("dt_alpha", "0").unwrap_err().to_string(),
        "packet option 'dt_alpha': 0 is not above 0"
    );
    assert_eq!(
        c.set("buffer_per", "queue").unwrap_err().to_string(),
        "packet option 'buffer_per': queue needs a port's own buffer, not a shared pool"
    );
    assert_eq!(
        c.set("buffer_per", "class").unwrap_err().to_string(),
        "packet option 'buffer_per': 'class': port or queue"
    );
    // A per-port size goes back to per-port buffers.
    c.set("buffer", "100p").unwrap();
    c.set("buffer_per", "queue").unwrap();
    assert!(c.buffer_per_queue);
    c.set("class_min", "0.001").unwrap();
    assert_eq!(c.class_min, Some(0.001));
    assert!(c.set("class_min", "2").is_err());
    assert!(c.set("buffer", "shared:4MB").is_err());
    assert_eq!(
        c.buffer_kind(),
        BufferKind::PerPort(Some(Limit::Packets(100)))
    );
}

#[test]
fn pfabric_knobs_and_queues_follow_the_transport() {
    let mut c = PacketConfig::default();
    assert_eq!(c.queue_kind(), QueueKind::Strict);
    c.set("transport", "pfabric").unwrap();
    assert_eq!(c.queue_kind(), QueueKind::Pfabric);
    assert_eq!(c.pfabric_buffer, Limit::Bytes(36_000));
    c.set("queues", "strict").unwrap();
    assert_eq!(c.queue_kind(), QueueKind::Strict);
    c.set("queues", "auto").unwrap();
    assert_eq!(c.queue_kind(), QueueKind::Pfabric);
    c.set_all("transport=dctcp,queues=pfabric,pfabric_buffer=24p,pfabric_rto=45us,pfabric_init_cwnd=12,pfabric_probe_after=3")
        .unwrap();
    assert_eq!(c.queue_kind(), QueueKind::Pfabric);
    assert_eq!(c.pfabric_buffer, Limit::Packets(24));
    assert_eq!(c.pfabric_rto, Some(Dur(45_000)));
    assert_eq!(c.pfabric_init_cwnd, Some(12));
    assert_eq!(c.pfabric_probe_after, 3);
    c.set_all("pfabric_rto=auto,pfabric_init_cwnd=auto")
        .unwrap();
    assert_eq!((c.pfabric_rto, c.pfabric_init_cwnd), (None, None));
    let e = c.set("queues", "fifo").unwrap_err();
    assert_eq!(
        e.to_string(),
        "packet option 'queues': 'fifo': strict, pfabric or auto"
    );
    assert!(c.set("pfabric_rto", "0").is_err());
    assert!(c
        .set("pfabric_buffer", "100")
        .unwrap_err()
        .to_string()
        .contains("'pfabric_buffer': 100 bytes cannot hold"));
}

#[test]
fn tafe_service_key() {
    let mut c = PacketConfig::default();
    assert!(c.tafe_one_by_one, "Algorithm 1's one flow after the other");
    c.set("tafe_service", "fifo").unwrap();
    assert!(!c.tafe_one_by_one);
    c.set("tafe_service", " Flows ").unwrap();
    assert!(c.tafe_one_by_one);
    assert_eq!(
        c.set("tafe_service", "srpt").unwrap_err().to_string(),
        "packet option 'tafe_service': 'srpt': flows or fifo"
    );
}

#[test]
fn host_queue_kinds_parse() {
    let mut c = PacketConfig::default();
    assert_eq!(c.host_queue, HostQueue::Unbounded);
    c.set("host_queue", "droptail:200").unwrap();
    assert_eq!(c.host_queue, HostQueue::DropTail(200));
    c.set("host_queue", "ecn:20").unwrap();
    assert_eq!(c.host_queue, HostQueue::Ecn(20));
    let both = HostQueue::DropTailEcn {
        packets: 166,
        k: 65,
    };
    c.set("host_queue", "droptail:166+ecn:65").unwrap();
    assert_eq!(c.host_queue, both);
    c.set("host_queue", "unbounded").unwrap();
    c.set("host_queue", " ECN:65 + droptail:166 ").unwrap();
    assert_eq!(c.host_queue, both, "either order, any case");
    assert_eq!(
        c.set("host_queue", "droptail:65+ecn:65").unwrap_err().to_string(),
        "packet option 'host_queue': 'droptail:65+ecn:65': K = 65 would never mark in a queue of 65 packets (K < N)"
    );
    assert_eq!(
        c.set("host_queue", "droptail:166+droptail:65").unwrap_err().to_string(),
        "packet option 'host_queue': 'droptail:166+droptail:65': a bound and a threshold are droptail:N+ecn:K (packets)"
    );
    assert!(c.set("host_queue", "droptail:166+ecn:0").is_err());
    assert!(c.set("host_queue", "red:5").is_err());
    assert_eq!(c.host_queue, both, "a refused value changes nothing");
}

#[test]
fn default_k_follows_the_dctcp_paper() {
    let c = PacketConfig::default();
    assert_eq!(c.k_for(1e9), Some(Limit::Packets(20)));
    assert_eq!(c.k_for(1e10), Some(Limit::Packets(65)));
}
