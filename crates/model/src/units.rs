//! Units and ids, defined once and shared by every crate.
//!
//! Time is integer nanoseconds: [`Time`] is an instant since the start of a
//! simulation (or of a runtime epoch), [`Dur`] a span between two instants.
//! Sizes are integer bytes. Rates are `f64` bits per second, since max-min
//! shares are rationals; rates never decide event order on their own: every
//! event time is rounded up to an integer nanosecond first.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant, in integer nanoseconds since the epoch of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

/// A span of time, in integer nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub u64);

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

/// A rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct BitsPerSec(pub f64);

/// A host (a port of the big switch), numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HostId(pub u32);

impl Time {
    /// The start of a run.
    pub const ZERO: Time = Time(0);
    /// Later than every real instant; used for "never".
    pub const NEVER: Time = Time(u64::MAX);
    /// This instant in seconds (for reports only; never for ordering).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// The instant `ms` milliseconds after the epoch.
    pub fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    /// The span from `earlier` to `self`; zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// No time at all.
    pub const ZERO: Dur = Dur(0);
    /// The span in seconds (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// A span of `ms` milliseconds.
    pub fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    /// A span of `us` microseconds.
    pub fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, earlier: Time) -> Dur {
        self.since(earlier)
    }
}

impl Bytes {
    /// One mebibyte, the unit of the coflow-benchmark trace format.
    pub const MIB: u64 = 1 << 20;
    /// The size in bits, as a float.
    pub fn bits_f64(self) -> f64 {
        self.0 as f64 * 8.0
    }
}

impl BitsPerSec {
    /// One gigabit per second (10^9 bit/s), the default port capacity.
    pub const GBPS: BitsPerSec = BitsPerSec(1e9);
    /// The rate in bytes per nanosecond, the engine's working unit.
    pub fn bytes_per_ns(self) -> f64 {
        self.0 / 8e9
    }
    /// The time, rounded up to a whole nanosecond, to send `bytes` at this rate.
    /// `None` when the rate is zero (never).
    pub fn time_to_send(self, bytes: f64) -> Option<Dur> {
        ceil_ns(bytes, self.bytes_per_ns())
    }
}

/// `ceil(bytes / bytes_per_ns)` as whole nanoseconds, tolerant of float noise:
/// a quotient within 1e-9 relative of an integer is taken as that integer.
/// `None` when the rate is not positive.
pub fn ceil_ns(bytes: f64, bytes_per_ns: f64) -> Option<Dur> {
    if bytes_per_ns <= 0.0 || !bytes_per_ns.is_finite() {
        return None;
    }
    if bytes <= 0.0 {
        return Some(Dur::ZERO);
    }
    let q = bytes / bytes_per_ns;
    // Below 2^63 (the common case) `round` and `ceil` come from the integer
    // part, which is exact; libm's are function calls on baseline x86-64,
    // and this runs at every rate change. The integer part goes through
    // `i64`, not `u64`: the same values there, but one instruction each way
    // on baseline x86-64 instead of a branchy sequence.
    if q < TWO_63 {
        let n = q as i64;
        let t = n as f64;
        let frac = q - t;
        // `q`'s distance to the nearest integer `r` (`t`, or `t + 1` when
        // `frac >= 0.5`) is `|q - r|`, and `min(frac, 1 - frac)` is that
        // value to the bit: `frac` is exact, and so is `1 - frac` when it is
        // the smaller (Sterbenz). A `min`, not a choice of `r`: the choice
        // was a branch taken at random (half the fractions are >= 0.5), at
        // every rate change. `r` and `ceil(q)` are `n` or `n + 1`, both
        // below 2^63.
        let other = 1.0 - frac;
        let dist = if other < frac { other } else { frac };
        #[cfg(debug_assertions)]
        {
            let r = if frac >= 0.5 { t + 1.0 } else { t };
            debug_assert_eq!(dist.to_bits(), (q - r).abs().to_bits(), "distance of {q}");
        }
        let near = dist <= 1e-9 * q.max(1.0);
        let d = if near {
            n + (frac >= 0.5) as i64
        } else {
            n + (frac > 0.0) as i64
        };
        return Some(Dur(d as u64));
    }
    let (r, c) = (q.round(), q.ceil());
    let t = if (q - r).abs() <= 1e-9 * q.max(1.0) {
        r
    } else {
        c
    };
    if t >= u64::MAX as f64 {
        None
    } else {
        Some(Dur(t as u64))
    }
}

const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// The flow-level engine's resolution, ns: a flow due within this of an
/// event finishes at it, and a threshold that bytes sent would reach within
/// this (at the rate they grew at) counts as reached. Instants are whole
/// nanoseconds and completions are rounded up, so an instant reached
/// through several events can stand a few nanoseconds off the exact one
/// (`make fuzz` found 2 ns); results are exact to this.
pub const SNAP_NS: u64 = 16;

/// The first instant after `now` by which `bytes` will have been sent at
/// `bytes_per_ns`, never `now` itself (so a timer always moves time on).
/// `None` when the rate is not positive.
pub fn ceil_ns_time(now: Time, bytes: f64, bytes_per_ns: f64) -> Option<Time> {
    ceil_ns(bytes, bytes_per_ns).map(|d| now + Dur(d.0.max(1)))
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

impl fmt::Display for HostId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "host {}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncontended_flow_time_is_exact() {
        // 1 MiB at 1 Gbit/s: 8 * 2^20 ns exactly.
        let d = BitsPerSec::GBPS.time_to_send(Bytes::MIB as f64).unwrap();
        assert_eq!(d, Dur(8 * (1 << 20)));
        assert_eq!(BitsPerSec(0.0).time_to_send(1.0), None);
        assert_eq!(BitsPerSec::GBPS.time_to_send(0.0), Some(Dur::ZERO));
    }

    #[test]
    fn ceil_tolerates_noise_and_rounds_up() {
        assert_eq!(ceil_ns(10.0 + 1e-12, 1.0), Some(Dur(10)));
        assert_eq!(ceil_ns(10.5, 1.0), Some(Dur(11)));
    }

    /// The slow reference of [`ceil_ns`]: libm's `round` and `ceil`.
    fn ceil_ns_reference(bytes: f64, bytes_per_ns: f64) -> Option<Dur> {
        if bytes_per_ns <= 0.0 || !bytes_per_ns.is_finite() {
            return None;
        }
        if bytes <= 0.0 {
            return Some(Dur::ZERO);
        }
        let q = bytes / bytes_per_ns;
        let r = q.round();
        let t = if (q - r).abs() <= 1e-9 * q.max(1.0) {
            r
        } else {
            q.ceil()
        };
        if t >= u64::MAX as f64 {
            None
        } else {
            Some(Dur(t as u64))
        }
    }

    #[test]
    fn ceil_ns_matches_libm_rounding() {
        // Halves, near-integers, huge and tiny quotients, and a spread of
        // pseudo-random ones (a fixed xorshift).
        let mut cases = vec![
            (0.5, 1.0),
            (1.5, 1.0),
            (2.5, 1.0),
            (0.49999999999999994, 1.0),
            (1e-300, 1.0),
            (4503599627370495.5, 1.0),
            (9007199254740993.0, 1.0),
            (9.3e18, 1.0),
            (1.8e19, 1.0),
            (1e300, 1e-10),
            (f64::INFINITY, 1.0),
            (f64::NAN, 1.0),
            (7.0, 0.125),
            (1e6 + 1e-4, 1.0),
            // Just below an integer, on both sides of the 1e-9 tolerance
            // (the distance taken as `1 - frac`).
            (1e6 - 1e-4, 1.0),
            (0.999_999_999_5, 1.0),
            (0.999_999_998, 1.0),
            (3.0 - 2.9e-9, 1.0),
            (3.0 - 3.1e-9, 1.0),
            (4503599627370495.75, 1.0),
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = (x >> 11) as f64 / (1u64 << 20) as f64;
            let rate = ((x & 0xFFFF) + 1) as f64 / 4096.0;
            cases.push((bytes, rate));
            cases.push((bytes.round() * rate, rate));
        }
        for (b, r) in cases {
            assert_eq!(ceil_ns(b, r), ceil_ns_reference(b, r), "{b} / {r}");
        }
    }
}
