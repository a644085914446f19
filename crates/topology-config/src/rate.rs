//! Rates as people write them: `1Gbps`, `10 Gbit/s`, `2.5 Gb/s`, `400
//! Mbit/s`, or a bare number of bit/s (`1e9`).
//!
//! Grammar: a decimal number (with an optional exponent), optional spaces,
//! then an optional unit: an SI prefix `k`, `M`, `G` or `T` (any case;
//! decimal, so `G` is 10^9) and `bps`, `bit/s`, `bits/s` or `b/s`. Rates are
//! in bits: a capital `B` (bytes, as in `GB/s`) is refused rather than
//! guessed at.

use coflowkit_model::BitsPerSec;

/// Parses a rate; the message says what is wrong (for `key: message`).
pub fn parse_rate(text: &str) -> Result<BitsPerSec, String> {
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

/// A rate for reports: the largest unit that keeps the number at least 1,
/// up to 4 decimals ("1 Gbit/s", "2.5 Gbit/s", "666.6667 Mbit/s").
pub fn format_rate(r: BitsPerSec) -> String {
    let v = r.0;
    let (scale, unit) = [
        (1e12, "Tbit/s"),
        (1e9, "Gbit/s"),
        (1e6, "Mbit/s"),
        (1e3, "kbit/s"),
    ]
    .into_iter()
    .find(|&(s, _)| v.abs() >= s)
    .unwrap_or((1.0, "bit/s"));
    let x = ((v / scale) * 1e4).round() / 1e4;
    format!("{x} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn units_people_write() {
        for (text, bps) in [
            ("1Gbps", 1e9),
            ("10 Gbit/s", 10e9),
            ("2.5 Gb/s", 2.5e9),
            ("400 Mbit/s", 400e6),
            ("100mbps", 100e6),
            ("1 Tbps", 1e12),
            ("40 kbits/s", 40e3),
            ("1e9", 1e9),
            ("1.5e3 Mbps", 1.5e9),
            (" 7 bps ", 7.0),
            ("1000000000", 1e9),
        ] {
            assert_eq!(parse_rate(text), Ok(BitsPerSec(bps)), "{text}");
        }
    }

    #[test]
    fn bad_rates_say_why() {
        assert_eq!(
            parse_rate("fast").unwrap_err(),
            "'fast' is not a rate (write e.g. 1Gbps, 10 Gbit/s, 400 Mbit/s or 1e9)"
        );
        assert_eq!(
            parse_rate("1 GB/s").unwrap_err(),
            "'1 GB/s': rates are in bits per second (Gbps, Gbit/s), not bytes"
        );
        assert!(parse_rate("1 Gbp").is_err());
        assert!(parse_rate("").is_err());
        assert!(parse_rate("G").is_err());
    }

    #[test]
    fn formats_for_reports() {
        assert_eq!(format_rate(BitsPerSec(1e9)), "1 Gbit/s");
        assert_eq!(format_rate(BitsPerSec(2.5e9)), "2.5 Gbit/s");
        assert_eq!(format_rate(BitsPerSec(2e9 / 3.0)), "666.6667 Mbit/s");
        assert_eq!(format_rate(BitsPerSec(600e9)), "600 Gbit/s");
        assert_eq!(format_rate(BitsPerSec(12.0)), "12 bit/s");
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,20}") {
            let _ = parse_rate(&s);
        }

        #[test]
        fn numbers_and_units_round_trip(x in 1e-3f64..1e15, unit in 0usize..5) {
            let (scale, name) = [(1.0, "bps"), (1e3, "kbit/s"), (1e6, "Mbps"), (1e9, "Gb/s"), (1e12, "Tbits/s")][unit];
            let r = parse_rate(&format!("{x:?} {name}")).unwrap();
            prop_assert!((r.0 - x * scale).abs() <= 1e-12 * x * scale);
            prop_assert_eq!(parse_rate(&format!("{:?}", r.0)).unwrap(), r);
        }
    }
}
