use super::*;
use crate::proto::{CoflowInfo, FlowReport};
use proptest::prelude::*;

fn core_config(scheduler: &str) -> CoordinatorConfig {
    CoordinatorConfig {
        n_hosts: 3,
        host_rate_bps: 1e9,
        delta: Duration::from_millis(10),
        scheduler: scheduler.into(),
        token: "t".into(),
        mark_classes: true,
        hints: WorkloadHints::default(),
    }
}

fn core(scheduler: &str) -> Core {
    Core::new(&core_config(scheduler)).unwrap()
}

fn report(
    host: u32,
    flow_id: u64,
    coflow_id: u64,
    dst: u32,
    bytes: u64,
    finished: bool,
) -> SyncRequest {
    SyncRequest {
        protocol_version: PROTOCOL_VERSION,
        host,
        coflows: vec![],
        flows: vec![FlowReport {
            flow_id,
            coflow_id,
            dst_host: dst,
            bytes_sent: bytes,
            size_hint: 0,
            finished,
        }],
        ..Default::default()
    }
}

#[test]
fn without_classes_every_flow_is_class_0_with_the_same_rates() {
    // Two coflows from host 0 to host 2, one past aalo's Q1hi (10 MiB):
    // it is demoted (class > 0) unless classes are off; rates are equal.
    let schedules = |mark_classes: bool| {
        let mut c = Core::new(&CoordinatorConfig {
            mark_classes,
            ..core_config("aalo")
        })
        .unwrap();
        c.sync(&report(0, 1, 7, 2, 0, false)).unwrap();
        c.sync(&report(1, 2, 8, 2, 0, false)).unwrap();
        c.tick(Time(10_000_000));
        c.sync(&report(0, 1, 7, 2, 20 << 20, false)).unwrap();
        c.sync(&report(1, 2, 8, 2, 1 << 20, false)).unwrap();
        c.tick(Time(20_000_000));
        let mut s: Vec<FlowRate> = [0, 1]
            .iter()
            .flat_map(|&h| c.schedule_of(h).to_vec())
            .collect();
        s.sort_by_key(|r| r.flow_id);
        s
    };
    let (on, off) = (schedules(true), schedules(false));
    assert_eq!(on.len(), 2);
    assert!(on[0].class > on[1].class, "{on:?}");
    assert!(off.iter().all(|r| r.class == 0), "{off:?}");
    for (a, b) in on.iter().zip(&off) {
        assert_eq!(
            (a.flow_id, a.rate_bps, a.paused),
            (b.flow_id, b.rate_bps, b.paused)
        );
    }
}

#[test]
fn a_sync_overtaken_by_a_newer_one_is_answered_and_not_taken() {
    // An agent gave up on a stream during a stall and sent its next sync
    // on a new one; the older request reaches the lock last.
    let numbered = |session: u64, seq: u64, bytes: u64, finished: bool| SyncRequest {
        session,
        seq,
        ..report(0, 1, 7, 2, bytes, finished)
    };
    let mut c = core("aalo");
    c.sync(&numbered(9, 1, 0, false)).unwrap();
    c.tick(Time(10_000_000));
    c.sync(&numbered(9, 3, 8_000, true)).unwrap();
    let stale = c.sync(&numbered(9, 2, 5_000, false)).unwrap();
    assert!(stale.finished_acks.is_empty(), "{stale:?}");
    let s = c.status();
    assert_eq!((s.refused_syncs, s.stale_syncs), (0, 1));
    assert_eq!(c.flows[0].bytes, 8_000, "the newer count stands");
    assert!(c.flows[0].finished);
    // The same number again is stale too; the next one is taken.
    c.sync(&numbered(9, 3, 8_000, true)).unwrap();
    assert_eq!(c.status().stale_syncs, 2);
    // A restarted agent (a new session) numbers from 1 again and is
    // taken; an unnumbered sync (an older agent) is always taken, and
    // still refused when its bytes go back.
    let r = c.sync(&numbered(4, 1, 8_000, true)).unwrap();
    assert_eq!(r.finished_acks, vec![1]);
    assert!(c.sync(&report(0, 1, 7, 2, 7_000, false)).is_err());
    assert_eq!(c.status().refused_syncs, 1);
}

#[test]
fn a_flow_lives_from_its_report_to_its_finish_and_its_coflow_to_unregister() {
    let mut c = core("aalo");
    c.sync(&report(0, 1, 7, 2, 0, false)).unwrap();
    assert_eq!(c.counts(), (0, 0), "nothing changes before a tick");
    c.tick(Time(10_000_000));
    assert_eq!(c.counts(), (1, 1));
    let reply = c.sync(&report(0, 1, 7, 2, 5_000, false)).unwrap();
    assert_eq!(reply.rates.len(), 1);
    assert_eq!(reply.rates[0].rate_bps, 1e9, "alone: the whole NIC");
    // Bytes never go back; a flow keeps its coflow and destination.
    let e = c.sync(&report(0, 1, 7, 2, 4_000, false)).unwrap_err();
    assert!(e.to_string().contains("went back from 5000 to 4000"), "{e}");
    assert!(c.sync(&report(0, 1, 8, 2, 6_000, false)).is_err());
    let r = c.sync(&report(0, 1, 7, 2, 9_000, true)).unwrap();
    assert_eq!(r.finished_acks, vec![1]);
    c.tick(Time(20_000_000));
    assert_eq!(c.counts(), (1, 0), "the coflow waits for its owner");
    c.sync(&SyncRequest {
        protocol_version: PROTOCOL_VERSION,
        host: 0,
        coflows: vec![CoflowInfo {
            coflow_id: 7,
            parents: vec![],
            unregistered: true,
        }],
        flows: vec![],
        ..Default::default()
    })
    .unwrap();
    c.tick(Time(30_000_000));
    assert_eq!(c.counts(), (0, 0));
    // A late flow of the completed coflow (from another host) reopens
    // it; it completes again when that flow finishes.
    c.sync(&report(1, 1, 7, 2, 300, true)).unwrap();
    c.tick(Time(40_000_000));
    assert_eq!(c.counts(), (1, 1));
    c.tick(Time(50_000_000));
    assert_eq!(c.counts(), (0, 0));
}

#[derive(Debug, Clone)]
enum Step {
    Sync {
        host: u32,
        flows: Vec<(u64, u64, u32, u64, bool)>,
        unreg: Vec<(u64, Vec<u64>)>,
    },
    Tick(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (
            0u32..4,
            proptest::collection::vec(
                (0u64..6, 0u64..5, 0u32..4, 0u64..5_000, any::<bool>()),
                0..4
            ),
            proptest::collection::vec((0u64..5, proptest::collection::vec(0u64..5, 0..2)), 0..2),
        )
            .prop_map(|(host, flows, unreg)| Step::Sync { host, flows, unreg }),
        (1u64..30_000_000).prop_map(Step::Tick),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random (often invalid) syncs between ticks, under each kind of
    /// scheduler: refused or taken, never a panic; rates are finite.
    #[test]
    fn random_syncs_never_break_the_coordinator(
        which in 0usize..3,
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let mut c = core(["aalo", "varys", "fair"][which]);
        let mut now = 0u64;
        for s in steps {
            match s {
                Step::Tick(d) => {
                    now += d;
                    c.tick(Time(now));
                }
                Step::Sync { host, flows, unreg } => {
                    let r = SyncRequest {
                        protocol_version: PROTOCOL_VERSION,
                        host,
                        coflows: unreg
                            .into_iter()
                            .map(|(id, parents)| CoflowInfo { coflow_id: id, parents, unregistered: id % 2 == 0 })
                            .collect(),
                        flows: flows
                            .into_iter()
                            .map(|(f, co, dst, bytes, fin)| FlowReport {
                                flow_id: f,
                                coflow_id: co,
                                dst_host: dst,
                                bytes_sent: bytes,
                                size_hint: if f % 2 == 0 { 4_000 } else { 0 },
                                finished: fin,
                            })
                            .collect(),
                        ..Default::default()
                    };
                    if let Ok(reply) = c.sync(&r) {
                        for x in &reply.rates {
                            prop_assert!(crate::validate::rate("rate", x).is_ok(), "{x:?}");
                        }
                    }
                }
            }
        }
    }
}
