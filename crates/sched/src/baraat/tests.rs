use super::*;

#[test]
fn check_budget_refuses_only_a_workload_over_it() {
    let fabric = coflowkit_model::Fabric::big_switch(4, coflowkit_model::BitsPerSec::GBPS)
        .expect("a big switch");
    let hints = |bytes: f64| crate::WorkloadHints {
        coflow_sizes: vec![bytes],
        flow_sizes: vec![bytes],
    };
    let check = |spec: &str, bytes: f64| {
        crate::registry::preflight(
            &crate::SchedulerSpec::parse(spec).unwrap(),
            &hints(bytes),
            &fabric,
        )
        .err()
        .map(|e| e.to_string())
    };
    // 1 GB at 1 Gbit/s: 8 s, 80,000 rounds of 100 us.
    assert_eq!(
        least_flow_rounds(&[1e9], 1e9, Dur::from_micros(100)),
        80_000.0
    );
    assert_eq!(check("baraat", 1e9), None);
    // 1 PB: 8e10 flow-rounds, about 160 min at 120 ns each.
    let refused = check("baraat", 1e15).expect("refused");
    assert!(refused.starts_with("scheduler 'baraat': parameter 'budget': refused"));
    assert!(
        refused.contains("8.00e10 flow-rounds of 100 us"),
        "{refused}"
    );
    assert!(!refused.contains('\n'));
    assert_eq!(check("baraat:budget=inf", 1e15), None);
    assert_eq!(check("baraat:rtt=1s", 1e15), None);
    assert_eq!(check("fifo-lm", 1e15), None);
    assert!(check("baraat:budget=soon", 1.0)
        .unwrap()
        .contains("'budget'"));
}

fn input(higher: f64, class: f64, n: u32, alloc: f64, d: f64) -> FeedbackInput {
    FeedbackInput {
        capacity: 10.0,
        higher_demand: higher,
        class_demand: class,
        class_flows: n,
        allocated: alloc,
        demand: d,
    }
}

#[test]
fn algorithm_1_by_hand() {
    let feedback = |i| feedback(i, Share::Equal);
    // Alone on an idle link, demand 4 of 10: NR = AR = 4.
    assert_eq!(feedback(input(0.0, 0.0, 1, 0.0, 4.0)), (4.0, 4.0));
    // Higher classes ask for 7: ClassAvlBW = 3; another flow of the class
    // asks 1, AvailShare = 2 < 4: NR = 3 / 2; A = 9 leaves 1: AR = 1.
    assert_eq!(feedback(input(7.0, 1.0, 2, 9.0, 4.0)), (1.0, 1.5));
    // Higher classes ask for more than C: nothing.
    assert_eq!(feedback(input(12.0, 0.0, 1, 0.0, 4.0)), (0.0, 0.0));
    // AvailShare exactly D is not > D: the equal share (10 / 1).
    assert_eq!(feedback(input(0.0, 6.0, 1, 0.0, 4.0)), (10.0, 10.0));
    // Demand fits beside the class: NR = D, limited by what others hold.
    assert_eq!(feedback(input(2.0, 3.0, 2, 7.0, 4.0)), (3.0, 4.0));
}

#[test]
fn fill_offers_what_the_class_leaves() {
    // C = 10, one other flow of the class asks 1 (bottlenecked
    // elsewhere), this one 12: Equal offers 10 / 2 = 5, Fill the 9
    // the other leaves.
    let i = input(0.0, 1.0, 2, 1.0, 12.0);
    assert_eq!(feedback(i, Share::Equal), (5.0, 5.0));
    assert_eq!(feedback(i, Share::Fill), (9.0, 9.0));
    // When the others ask more than the equal share, both offer it.
    let i = input(0.0, 8.0, 2, 0.0, 12.0);
    assert_eq!(feedback(i, Share::Fill), feedback(i, Share::Equal));
}

#[test]
fn avail_share_ties_on_the_scale_of_c() {
    // C = 500 Mbit/s, the others of the class ask C - D and 0.04 bit/s
    // of float noise less: AvailShare = D + 0.04, a tie within 1e-9 of
    // C (0.5 bit/s), though not of D (0.0024 bit/s): not > D, so NR is
    // the class's share (Fill: the equal 100 Mbit/s, not D).
    let d = 2_383_684.08;
    let i = FeedbackInput {
        capacity: 5e8,
        higher_demand: 0.0,
        class_demand: 5e8 - d - 0.04,
        class_flows: 5,
        allocated: 0.0,
        demand: d,
    };
    assert_eq!(feedback(i, Share::Fill), (1e8, 1e8));
    // 1 bit/s is more than noise: D fits.
    let i = FeedbackInput {
        class_demand: 5e8 - d - 1.0,
        ..i
    };
    assert_eq!(feedback(i, Share::Fill), (d, d));
}

#[test]
fn clip_passes_last_bytes_first() {
    // Within C: everything.
    assert_eq!(clip(10.0, 3.0, 9.0), (1.0, 1.0));
    // 12 offered, 4 of it last bytes: those pass, the 8 others share 6.
    assert_eq!(clip(10.0, 4.0, 12.0), (1.0, 0.75));
    // Last bytes alone over C: they share C, the others wait.
    assert_eq!(clip(10.0, 20.0, 25.0), (0.5, 0.0));
    // A flow sends its last bytes when its rate carries what it has
    // left in one round: 1250 bytes in 100 us is 100 Mbit/s.
    assert!(sends_its_last(100e6, 1250.0, 100e-6));
    assert!(sends_its_last(100e6 * (1.0 - 1e-12), 1250.0, 100e-6));
    assert!(!sends_its_last(99e6, 1250.0, 100e-6));
    assert!(!sends_its_last(0.0, 0.0, 100e-6));
}

#[test]
fn virtual_capacity_by_hand() {
    let step = |v, y| virtual_capacity(v, 10.0, y, 0.5, 2.0);
    // Offered 6 of 10: up by 0.5 x 4; offered 16: down by 3.
    assert_eq!(step(10.0, Some(6.0)), 12.0);
    assert_eq!(step(12.0, Some(16.0)), 10.0);
    // Within [C, vc_max x C].
    assert_eq!(step(19.0, Some(0.0)), 20.0);
    assert_eq!(step(10.0, Some(30.0)), 10.0);
    // Offered C within float noise: no change.
    assert_eq!(step(15.0, Some(10.0 * (1.0 + 1e-12))), 15.0);
    // No flow: back at C, whatever it was; no gain: C.
    assert_eq!(step(20.0, None), 10.0);
    assert_eq!(virtual_capacity(15.0, 10.0, Some(0.0), 0.0, 2.0), 10.0);
}

#[test]
fn algorithm_2_by_hand() {
    // New flow: min(NIC, buffered / RTT).
    assert_eq!(demand(1e9, 5e9, None, 1e7), 1e9);
    assert_eq!(demand(1e9, 2e8, None, 1e7), 2e8);
    // Bottlenecked elsewhere (least NR 3e8 < previous demand 1e9):
    // NR + delta.
    assert_eq!(demand(1e9, 5e9, Some((1e9, 3e8)), 1e7), 3.1e8);
    // Not bottlenecked (least NR = previous demand): back to the NIC rate.
    assert_eq!(demand(1e9, 5e9, Some((3.1e8, 3.1e8)), 1e7), 1e9);
    // The bottleneck freed a little (NR 3.05e8 < 3.1e8): still NR + delta.
    assert_eq!(demand(1e9, 5e9, Some((3.1e8, 3.05e8)), 1e7), 3.15e8);
    // Buffer below NR + delta wins.
    assert_eq!(demand(1e9, 1e8, Some((1e9, 3e8)), 1e7), 1e8);
}
