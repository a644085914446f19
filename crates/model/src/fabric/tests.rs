use super::*;

#[test]
fn big_switch_paths() {
    let f = Fabric::big_switch(3, BitsPerSec::GBPS).unwrap();
    assert_eq!(f.n_links(), 6);
    assert!(f.is_big_switch());
    let mut p = vec![];
    f.path_into(HostId(2), HostId(0), 0, &mut p);
    assert_eq!(p, vec![LinkId(4), LinkId(1)]);
    assert_eq!(f.n_paths(HostId(2), HostId(0)), 1);
    assert_eq!(f.path_choice(HostId(2), HostId(0), FlowKey::default()), 0);
    assert_eq!(f.total_ingress(), BitsPerSec(3e9));
    assert_eq!(f.link_name(LinkId(5)), "host 2 downlink");
    assert_eq!(f.n_switches(), 1);
    assert_eq!(
        f.link_ends(LinkId(4)),
        Some((Node::Host(HostId(2)), Node::Switch(SwitchId(0))))
    );
}

#[test]
fn bad_capacity_names_the_port() {
    let e = Fabric::with_capacities(
        &[BitsPerSec(1.0), BitsPerSec(1.0)],
        &[BitsPerSec(1.0), BitsPerSec(0.0)],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "host 1 downlink: capacity 0 bit/s is not a positive finite number"
    );
    assert_eq!(
        Fabric::big_switch(0, BitsPerSec::GBPS).unwrap_err(),
        FabricError::NoHosts
    );
}

#[test]
fn cpus_come_last() {
    let f = Fabric::big_switch(2, BitsPerSec::GBPS)
        .unwrap()
        .with_cpus(BitsPerSec(8.0))
        .unwrap();
    assert_eq!(f.cpu(HostId(1)), Some(LinkId(5)));
    assert_eq!(f.link_name(LinkId(5)), "host 1 CPU");
    assert_eq!(f.link_ends(LinkId(5)), None);
}

#[test]
fn ecmp_hash_is_pinned() {
    // Golden values: a change here moves every flow of every multipath
    // simulation to another path. Change only on purpose.
    let k = FlowKey {
        coflow: 7,
        index: 3,
    };
    assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
    assert_eq!(
        ecmp_hash(0, k, HostId(1), HostId(2)),
        ecmp_hash(0, k, HostId(1), HostId(2))
    );
    assert_ne!(
        ecmp_hash(0, k, HostId(1), HostId(2)),
        ecmp_hash(1, k, HostId(1), HostId(2))
    );
    assert_eq!(ecmp_hash(0, k, HostId(1), HostId(2)), GOLDEN);
}

// Also computed by an independent Python transcription of the doc.
const GOLDEN: u64 = 0x92A0_D8AE_3B91_E001;
