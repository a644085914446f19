use super::writer::Meter;
use super::*;
use std::time::Instant;

fn after(t0: Instant, s: f64) -> Instant {
    t0 + Duration::from_secs_f64(s)
}

/// By hand: at 8 kbit/s (1,000 B/s) the bucket holds 16 KiB (more than
/// 10 ms of the rate); the first write takes it, the next waits the
/// 16.384 s the rate needs to let 16 KiB through again, and a write of
/// less than that waits only for what it wants.
#[test]
fn a_low_rate_lets_16_kib_through_at_its_pace() {
    let t0 = Instant::now();
    let mut m = Meter::new();
    assert_eq!(m.allows(Some(8e3), 65_536, t0), Ok(16_384));
    m.took(16_384);
    let wait = m.allows(Some(8e3), 65_536, t0).unwrap_err();
    assert!((wait.as_secs_f64() - 16.384).abs() < 1e-6, "{wait:?}");
    assert!(m.allows(Some(8e3), 65_536, after(t0, 8.192)).is_err());
    assert_eq!(m.allows(Some(8e3), 65_536, after(t0, 16.384)), Ok(16_384));
    m.took(16_384);
    let wait = m.allows(Some(8e3), 100, after(t0, 16.384)).unwrap_err();
    assert!((wait.as_secs_f64() - 0.1).abs() < 1e-6, "{wait:?}");
}

/// A rate raised takes effect as the reporter applies it: nothing a low
/// rate scheduled holds the writer back; the bucket refills at the new
/// rate, and a writer waits for half of it (5 ms of 200 Mbit/s).
#[test]
fn a_raised_rate_acts_at_once() {
    let t0 = Instant::now();
    let mut m = Meter::new();
    m.allows(Some(8e3), 1 << 20, t0).unwrap();
    m.took(16_384);
    assert!(m.allows(Some(8e3), 1 << 20, after(t0, 0.001)).is_err());
    // The 1 ms at 1,000 B/s let 1 B through; 400 kbit/s = 50,000 B/s
    // for 0.1 s lets 5,000 B more, and 16 KiB needs 0.2277 s more.
    let wait = m.allows(Some(4e5), 1 << 20, after(t0, 0.101)).unwrap_err();
    assert!(
        (wait.as_secs_f64() - 11_383.0 / 50_000.0).abs() < 1e-6,
        "{wait:?}"
    );
    // 200 Mbit/s = 25 MB/s: 1 ms lets 25,000 B more, short of half the
    // bucket (10 ms of it, 250,000 B), which 4 ms more let through.
    let wait = m
        .allows(Some(200e6), 1 << 20, after(t0, 0.102))
        .unwrap_err();
    assert!(
        (wait.as_secs_f64() - (125_000.0 - 30_001.0) / 25e6).abs() < 1e-6,
        "{wait:?}"
    );
    assert_eq!(
        m.allows(Some(200e6), 1 << 20, after(t0, 0.112)),
        Ok(250_000)
    );
}

/// A writer is never more than 16 KiB or 10 ms of its rate ahead,
/// however long it was idle; without a rate it is not metered.
#[test]
fn the_bucket_holds_at_most_16_kib() {
    let t0 = Instant::now();
    let mut m = Meter::new();
    assert_eq!(m.allows(Some(4e5), 1 << 20, t0), Ok(16_384));
    m.took(16_384);
    assert_eq!(m.allows(Some(4e5), 1 << 20, after(t0, 60.0)), Ok(16_384));
    assert_eq!(m.allows(None, 1 << 20, t0), Ok(1 << 20));
    assert_eq!(m.allows(Some(0.0), 7, t0), Ok(7));
    // 80 Mbit/s: 10 ms is 100,000 B.
    assert_eq!(m.allows(Some(80e6), 1 << 20, after(t0, 120.0)), Ok(100_000));
}

#[test]
fn the_kernel_never_paces_below_its_floor() {
    assert_eq!(enforce::kernel_pacing(None), None);
    assert_eq!(
        enforce::kernel_pacing(Some(8e3)),
        Some(enforce::KERNEL_PACING_FLOOR_BPS)
    );
    assert_eq!(enforce::kernel_pacing(Some(1e9)), Some(1e9));
    // A packet of two segments at the floor takes 50 ms.
    let s = 2.0 * 1448.0 * 8.0 / enforce::KERNEL_PACING_FLOOR_BPS;
    assert!((s - 0.05).abs() < 1e-12);
}
