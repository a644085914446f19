//! Generator parameters by name, as text: what `coflowkit generate <workload>
//! --param key=value` and `coflowkit.generate(name, **params)` set.
//!
//! Every generator configuration is a plain struct with typed fields and
//! documented defaults (its `Default`). The [`params!`](crate::params!) macro lists, once per
//! configuration, which fields are parameters, under which names and with
//! which one-line doc; from that list it derives [`Params`]: setting a
//! parameter from text, and describing every parameter with its current
//! value. A name that is not in the list is an error that names it and
//! lists the valid ones.
//!
//! Values are written the way a person would type them ([`ParamValue`]):
//! sizes with an optional unit (`50KB`, `5MiB`, `1460`), durations with a
//! unit (`10ms`, `250us`, `1s`), rates with an optional unit (`1Gbps`,
//! `1e9`), booleans as `true`/`false`, shares as comma-separated numbers.
//! Showing a value gives text that parses back to the same value.

use coflowkit_model::{parse, BitsPerSec, Bytes, Dur};
use std::fmt;
use thiserror::Error;

/// A parameter's value as text: parsing and showing.
pub trait ParamValue: Sized {
    /// Parses a value; the message says what is wrong (the caller adds the name).
    fn parse_param(text: &str) -> Result<Self, String>;
    /// The value as text that parses back to it.
    fn show_param(&self) -> String;
}

/// One parameter of a generator, for help texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDoc {
    /// Its name.
    pub name: &'static str,
    /// Its current value (the default, for a fresh configuration), as text.
    pub value: String,
    /// What it is.
    pub doc: &'static str,
}

/// Why a parameter could not be set.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ParamError {
    /// No parameter has this name.
    #[error("unknown parameter {name:?} (valid: {valid})")]
    Unknown {
        /// The name given.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// The text is not a valid value.
    #[error("{name}: {message}")]
    BadValue {
        /// The parameter.
        name: &'static str,
        /// What is wrong with the value.
        message: String,
    },
}

/// A configuration whose fields can be set by name from text.
pub trait Params {
    /// The parameter names, in help order.
    fn param_names(&self) -> &'static [&'static str];
    /// Sets parameter `name` from `text`.
    fn set_param(&mut self, name: &str, text: &str) -> Result<(), ParamError>;
    /// Every parameter with its current value and doc.
    fn describe(&self) -> Vec<ParamDoc>;
}

/// Derives [`Params`] for a configuration from a list of
/// `"name" => field.path: "doc",` entries.
#[macro_export]
macro_rules! params {
    // `deadlines(noun) => path;` first: the five deadline parameters of
    // [`crate::arrivals::DeadlineSpec`] at `path`, listed after the others.
    ($ty:ty { deadlines($what:literal) => $($d:ident).+ ; $($name:literal => $($field:ident).+ : $doc:expr,)* }) => {
        $crate::params! { $ty {
            $($name => $($field).+ : $doc,)*
            "deadline_fraction" => $($d).+ . fraction : concat!("share of ", $what, " with a deadline"),
            "deadline" => $($d).+ . law : "deadline law: exp (mean deadline_mean) or uniform [deadline_min, deadline_max]",
            "deadline_mean" => $($d).+ . mean : "mean of exponential deadlines",
            "deadline_min" => $($d).+ . min : "lower end of uniform deadlines",
            "deadline_max" => $($d).+ . max : "upper end of uniform deadlines",
        }}
    };
    ($ty:ty { $($name:literal => $($field:ident).+ : $doc:expr,)* }) => {
        impl $crate::params::Params for $ty {
            fn param_names(&self) -> &'static [&'static str] {
                &[$($name),*]
            }
            fn set_param(&mut self, name: &str, text: &str) -> Result<(), $crate::params::ParamError> {
                match name {
                    $($name => {
                        self.$($field).+ = $crate::params::ParamValue::parse_param(text.trim())
                            .map_err(|message| $crate::params::ParamError::BadValue { name: $name, message })?;
                        Ok(())
                    })*
                    _ => Err($crate::params::ParamError::Unknown {
                        name: name.to_string(),
                        valid: self.param_names().join(", "),
                    }),
                }
            }
            fn describe(&self) -> Vec<$crate::params::ParamDoc> {
                vec![$($crate::params::ParamDoc {
                    name: $name,
                    value: $crate::params::ParamValue::show_param(&self.$($field).+),
                    doc: $doc,
                }),*]
            }
        }
    };
}

/// An unsigned integer, also written with `_` separators (`10_000`).
fn unsigned(text: &str) -> Result<u64, String> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    parse::uint(&digits)
}

impl ParamValue for u64 {
    fn parse_param(text: &str) -> Result<u64, String> {
        unsigned(text)
    }
    fn show_param(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for u32 {
    fn parse_param(text: &str) -> Result<u32, String> {
        let v = unsigned(text)?;
        u32::try_from(v).map_err(|_| format!("{v} is too large (at most {})", u32::MAX))
    }
    fn show_param(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for usize {
    fn parse_param(text: &str) -> Result<usize, String> {
        let v = unsigned(text)?;
        usize::try_from(v).map_err(|_| format!("{v} is too large"))
    }
    fn show_param(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for f64 {
    fn parse_param(text: &str) -> Result<f64, String> {
        parse::finite(text)
    }
    fn show_param(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for bool {
    fn parse_param(text: &str) -> Result<bool, String> {
        match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(true),
            "false" | "no" | "0" => Ok(false),
            _ => Err(format!("{text:?} is not true or false")),
        }
    }
    fn show_param(&self) -> String {
        self.to_string()
    }
}

impl<const N: usize> ParamValue for [f64; N] {
    fn parse_param(text: &str) -> Result<[f64; N], String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() != N {
            return Err(format!(
                "{text:?} has {} numbers, expected {N} separated by commas",
                parts.len()
            ));
        }
        let mut out = [0.0; N];
        for (o, p) in out.iter_mut().zip(parts) {
            *o = f64::parse_param(p)?;
        }
        Ok(out)
    }
    fn show_param(&self) -> String {
        self.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl ParamValue for Bytes {
    fn parse_param(text: &str) -> Result<Bytes, String> {
        parse::bytes(text)
    }
    fn show_param(&self) -> String {
        // The largest unit that divides the size exactly, binary first.
        let b = self.0;
        if b == 0 {
            return "0".into();
        }
        for &(unit, scale) in parse::BYTE_UNITS[5..]
            .iter()
            .rev()
            .chain(parse::BYTE_UNITS[1..5].iter().rev())
        {
            if b.is_multiple_of(scale) {
                return format!("{}{unit}", b / scale);
            }
        }
        b.to_string()
    }
}

impl ParamValue for Dur {
    fn parse_param(text: &str) -> Result<Dur, String> {
        parse::dur(text)
    }
    fn show_param(&self) -> String {
        let ns = self.0;
        if ns == 0 {
            return "0".into();
        }
        for &(unit, scale) in parse::TIME_UNITS.iter().rev() {
            if ns.is_multiple_of(scale) {
                return format!("{}{unit}", ns / scale);
            }
        }
        format!("{ns}ns")
    }
}

/// Rate units, for showing a rate (`parse::rate` reads these and more).
const RATE_UNITS: [(&str, f64); 4] = [("bps", 1.0), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9)];

impl ParamValue for BitsPerSec {
    fn parse_param(text: &str) -> Result<BitsPerSec, String> {
        parse::rate(text)
    }
    fn show_param(&self) -> String {
        let r = self.0;
        for &(unit, scale) in RATE_UNITS.iter().rev() {
            let q = r / scale;
            if q >= 1.0 && q == q.round() && q < 1e15 {
                return format!("{q}{unit}");
            }
        }
        r.to_string()
    }
}

/// A parameter that is one of a few named choices.
pub trait Choice: Sized + Copy + PartialEq + 'static {
    /// Every choice with its name.
    const CHOICES: &'static [(&'static str, Self)];
}

impl<T: Choice> ParamValue for T {
    fn parse_param(text: &str) -> Result<T, String> {
        T::CHOICES
            .iter()
            .find(|(name, _)| *name == text)
            .map(|&(_, v)| v)
            .ok_or_else(|| {
                let names: Vec<&str> = T::CHOICES.iter().map(|(n, _)| *n).collect();
                format!("{text:?} is not one of {}", names.join(", "))
            })
    }
    fn show_param(&self) -> String {
        T::CHOICES
            .iter()
            .find(|(_, v)| v == self)
            .map_or("?", |(n, _)| n)
            .to_string()
    }
}

impl fmt::Display for ParamDoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}  {}", self.name, self.value, self.doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: ParamValue + PartialEq + fmt::Debug>(v: T) {
        assert_eq!(T::parse_param(&v.show_param()), Ok(v));
    }

    #[test]
    fn sizes_durations_and_rates_read_as_typed() {
        assert_eq!(Bytes::parse_param("2KB"), Ok(Bytes(2_000)));
        assert_eq!(Bytes::parse_param("5MiB"), Ok(Bytes(5 << 20)));
        assert_eq!(Bytes::parse_param("0.5 MB"), Ok(Bytes(500_000)));
        assert_eq!(Bytes::parse_param("1460"), Ok(Bytes(1460)));
        assert_eq!(Bytes::parse_param("10_000"), Ok(Bytes(10_000)));
        assert_eq!(
            Bytes::parse_param("3kb"),
            Err("\"kb\" is not a size unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)".into())
        );
        assert_eq!(
            Bytes::parse_param("1.5B"),
            Err("\"1.5B\" is not a whole number of the base unit".into())
        );
        assert_eq!(Bytes(5 << 20).show_param(), "5MiB");
        assert_eq!(Bytes(50_000).show_param(), "50KB");
        assert_eq!(Bytes(1460).show_param(), "1460");
        assert_eq!(Dur::parse_param("10ms"), Ok(Dur(10_000_000)));
        assert_eq!(Dur::parse_param("2.5us"), Ok(Dur(2_500)));
        assert_eq!(Dur::parse_param("0"), Ok(Dur::ZERO));
        assert_eq!(
            Dur::parse_param("10"),
            Err("\"10\" needs a unit (ns, us, ms, s)".into())
        );
        assert_eq!(Dur(10_000_000).show_param(), "10ms");
        assert_eq!(Dur(1_500).show_param(), "1500ns");
        assert_eq!(BitsPerSec::parse_param("10Gbps"), Ok(BitsPerSec(1e10)));
        assert_eq!(BitsPerSec::parse_param("1e9"), Ok(BitsPerSec(1e9)));
        assert_eq!(BitsPerSec::parse_param("40 Gbit/s"), Ok(BitsPerSec(4e10)));
        assert_eq!(BitsPerSec(1e9).show_param(), "1Gbps");
        for v in [0, 1, 999, 1000, 1 << 20, 3_000_000_001] {
            round_trip(Bytes(v));
            round_trip(Dur(v));
        }
        for r in [1.0, 1e9, 2.5e9, 123.25] {
            round_trip(BitsPerSec(r));
        }
        round_trip([0.52, 0.16, 0.15, 0.17]);
        assert_eq!(
            <[f64; 4]>::parse_param("1,2"),
            Err("\"1,2\" has 2 numbers, expected 4 separated by commas".into())
        );
        assert_eq!(
            f64::parse_param("inf"),
            Err("\"inf\" is not a finite number".into())
        );
        assert_eq!(bool::parse_param("yes"), Ok(true));
        assert_eq!(u32::parse_param("-1"), Err("\"-1\" is negative".into()));
    }
}
