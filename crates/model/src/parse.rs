//! Quantities as people write them, parsed once for every front end: whole
//! numbers, sizes (`50KB`, `10MiB`), durations (`10ms`) and rates (`1Gbps`,
//! `10 Gbit/s`), each with a message that says what is wrong with the text
//! (the caller adds the file, line, key or field). `_` separators are
//! allowed in sizes, durations and rates (`10_000`).
//!
//! Rate grammar: a decimal number (with an optional exponent), optional
//! spaces, then an optional unit: an SI prefix `k`, `M`, `G` or `T` (any
//! case; decimal, so `G` is 10^9) and `bps`, `bit/s`, `bits/s` or `b/s`.
//! Rates are in bits: a capital `B` (bytes, as in `GB/s`) is refused rather
//! than guessed at.

use crate::units::{BitsPerSec, Bytes, Dur};

/// 2^64 as a float: the first value that does not fit a `u64`.
const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// A non-negative integer in plain digits.
pub fn uint(tok: &str) -> Result<u64, String> {
    if let Ok(v) = tok.parse::<u64>() {
        return Ok(v);
    }
    Err(match tok.parse::<f64>() {
        Err(_) => format!("{tok:?} is not a number"),
        Ok(x) if !x.is_finite() => format!("{tok:?} is not a finite number"),
        Ok(_) if tok.trim_start().starts_with('-') => format!("{tok:?} is negative"),
        Ok(x) if x >= U64_LIMIT => format!("{tok:?} is too large"),
        Ok(_) => format!("{tok:?} is not an integer"),
    })
}

/// A non-negative integer that fits a `u32`.
pub fn uint32(tok: &str) -> Result<u32, String> {
    let v = uint(tok)?;
    u32::try_from(v).map_err(|_| format!("{v} is too large (at most {})", u32::MAX))
}

/// A non-negative, finite real number (`-0` reads as 0).
pub fn nonneg_real(tok: &str) -> Result<f64, String> {
    match tok.parse::<f64>() {
        Err(_) => Err(format!("{tok:?} is not a number")),
        Ok(x) if !x.is_finite() => Err(format!("{tok:?} is not a finite number")),
        Ok(x) if x < 0.0 => Err(format!("{tok:?} is negative")),
        Ok(x) => Ok(x.max(0.0)),
    }
}

/// `round(x * scale)` as a `u64`, or an error if it does not fit.
pub fn scaled(tok: &str, x: f64, scale: f64) -> Result<u64, String> {
    let v = (x * scale).round();
    if v < U64_LIMIT {
        Ok(v as u64)
    } else {
        Err(format!("{tok:?} is too large"))
    }
}

/// A finite real number.
pub fn finite(tok: &str) -> Result<f64, String> {
    match tok.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{tok:?} is not a finite number")),
        Err(_) => Err(format!("{tok:?} is not a number")),
    }
}

/// Splits `12.5KB` into (`12.5`, `KB`): the longest prefix that reads as a
/// number, and the rest.
pub fn number_and_unit(text: &str) -> (&str, &str) {
    let at = (0..=text.len())
        .rev()
        .filter(|&i| text.is_char_boundary(i))
        .find(|&i| text[..i].trim().parse::<f64>().is_ok())
        .unwrap_or(0);
    (text[..at].trim(), text[at..].trim())
}

/// `x * scale` as a whole number, or what is wrong.
fn scaled_whole(text: &str, x: &str, scale: f64) -> Result<u64, String> {
    let v = finite(x)?;
    if v < 0.0 {
        return Err(format!("{text:?} is negative"));
    }
    let total = v * scale;
    let rounded = total.round();
    if (total - rounded).abs() > 1e-6 * total.max(1.0) {
        return Err(format!("{text:?} is not a whole number of the base unit"));
    }
    scaled(text, rounded, 1.0)
}

/// Byte units: decimal and binary.
pub const BYTE_UNITS: [(&str, u64); 9] = [
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// A size: a whole number of bytes, or a number with a unit of
/// [`BYTE_UNITS`] that makes a whole number of bytes.
pub fn bytes(text: &str) -> Result<Bytes, String> {
    let text = &text.replace('_', "");
    let (x, unit) = number_and_unit(text);
    if unit.is_empty() {
        return uint(x).map(Bytes);
    }
    let scale = BYTE_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|&(_, s)| s)
        .ok_or_else(|| {
            format!("{unit:?} is not a size unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
        })?;
    scaled_whole(text, x, scale as f64).map(Bytes)
}

/// Duration units.
pub const TIME_UNITS: [(&str, u64); 4] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
];

/// A duration: a number with a unit of [`TIME_UNITS`] (a bare `0` is zero).
pub fn dur(text: &str) -> Result<Dur, String> {
    let text = &text.replace('_', "");
    let (x, unit) = number_and_unit(text);
    if unit.is_empty() {
        if finite(x) == Ok(0.0) {
            return Ok(Dur::ZERO);
        }
        return Err(format!("{text:?} needs a unit (ns, us, ms, s)"));
    }
    let scale = TIME_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|&(_, s)| s)
        .ok_or_else(|| format!("{unit:?} is not a time unit (ns, us, ms, s)"))?;
    scaled_whole(text, x, scale as f64).map(Dur)
}

/// Parses a rate; the message says what is wrong (for `key: message`).
pub fn rate(text: &str) -> Result<BitsPerSec, String> {
    let text = text.replace('_', "");
    let t = text.trim();
    let bytes = t.as_bytes();
    // The number ends at the first space or letter that is not an exponent.
    let mut end = 0;
    while end < bytes.len() {
        let c = bytes[end];
        let exponent = (c == b'e' || c == b'E')
            && end > 0
            && bytes[end - 1].is_ascii_digit() | (bytes[end - 1] == b'.')
            && bytes
                .get(end + 1)
                .is_some_and(|n| n.is_ascii_digit() || *n == b'+' || *n == b'-');
        if c.is_ascii_whitespace() || (c.is_ascii_alphabetic() && !exponent) || c == b'/' {
            break;
        }
        end += 1;
    }
    let (number, unit) = (&t[..end], t[end..].trim());
    let bad = || format!("'{t}' is not a rate (write e.g. 1Gbps, 10 Gbit/s, 400 Mbit/s or 1e9)");
    let value: f64 = number.parse().map_err(|_| bad())?;
    if unit.is_empty() {
        return Ok(BitsPerSec(value));
    }
    if unit.contains('B') && !unit.to_ascii_lowercase().contains("bit") {
        return Err(format!(
            "'{t}': rates are in bits per second (Gbps, Gbit/s), not bytes"
        ));
    }
    let lower = unit.to_ascii_lowercase();
    let (scale, rest) = match lower.as_bytes().first() {
        Some(b'k') => (1e3, &lower[1..]),
        Some(b'm') => (1e6, &lower[1..]),
        Some(b'g') => (1e9, &lower[1..]),
        Some(b't') => (1e12, &lower[1..]),
        _ => (1.0, lower.as_str()),
    };
    match rest {
        "bps" | "bit/s" | "bits/s" | "b/s" => Ok(BitsPerSec(value * scale)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_is_wrong() {
        assert_eq!(uint("12"), Ok(12));
        assert_eq!(uint("x").unwrap_err(), "\"x\" is not a number");
        assert_eq!(uint("-3").unwrap_err(), "\"-3\" is negative");
        assert_eq!(uint("-0").unwrap_err(), "\"-0\" is negative");
        assert_eq!(uint("1.5").unwrap_err(), "\"1.5\" is not an integer");
        assert_eq!(uint("NaN").unwrap_err(), "\"NaN\" is not a finite number");
        assert_eq!(
            uint("99999999999999999999").unwrap_err(),
            "\"99999999999999999999\" is too large"
        );
        assert_eq!(
            uint32("4294967296").unwrap_err(),
            "4294967296 is too large (at most 4294967295)"
        );
        assert_eq!(nonneg_real("-0.0"), Ok(0.0));
        assert_eq!(
            nonneg_real("inf").unwrap_err(),
            "\"inf\" is not a finite number"
        );
        assert_eq!(nonneg_real("-1").unwrap_err(), "\"-1\" is negative");
        assert_eq!(
            scaled("1e300", 1e300, 1e6).unwrap_err(),
            "\"1e300\" is too large"
        );
        assert_eq!(scaled("0.5", 0.5, (1u64 << 20) as f64), Ok(1 << 19));
    }
}
