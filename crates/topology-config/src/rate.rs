//! Rates as people write them: `1Gbps`, `10 Gbit/s`, `2.5 Gb/s`, `400
//! Mbit/s`, or a bare number of bit/s (`1e9`). The grammar lives in
//! [`coflowkit_model::parse`], shared with the workload parameters; this
//! module formats rates for reports and tests the grammar on configs' terms.

use coflowkit_model::BitsPerSec;

/// Parses a rate ([`coflowkit_model::parse::rate`]: one grammar for every
/// front end); the message says what is wrong (for `key: message`).
pub use coflowkit_model::parse::rate as parse_rate;

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
