//! The one reading of every front door: TOML, YAML and spec strings all
//! become a [`Raw`] tree, and [`Table`] takes typed values out of it with
//! messages that name the key.
//!
//! Going through a generic tree (rather than deriving `Deserialize` for the
//! config) keeps the messages ours: serde's derived errors do not name the
//! file or the entry ("link 3"), and do not say which keys a kind knows.

use crate::rate::parse_rate;
use crate::TopologyError;
use coflowkit_model::BitsPerSec;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A value of a config, whatever format it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Raw {
    /// YAML's null (`~`, or a key with no value).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer (wide enough for any u64 and i64).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string (every value of a spec string is one).
    Str(String),
    /// A list.
    List(Vec<Raw>),
    /// A table, in the order the format gives its keys.
    Map(Vec<(String, Raw)>),
}

impl Raw {
    /// What the value is, for messages ("a string 'x'", "a list").
    fn describe(&self) -> String {
        match self {
            Raw::Null => "nothing".into(),
            Raw::Bool(b) => format!("{b}"),
            Raw::Int(i) => format!("{i}"),
            Raw::Float(x) => format!("{x}"),
            Raw::Str(s) => format!("'{s}'"),
            Raw::List(_) => "a list".into(),
            Raw::Map(_) => "a table".into(),
        }
    }
}

impl<'de> de::Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a config value")
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Int(v.into()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Raw, E> {
        i128::try_from(v)
            .map(Raw::Int)
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element()? {
            v.push(x);
        }
        Ok(Raw::List(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
        let mut v = Vec::new();
        while let Some((k, x)) = a.next_entry::<String, Raw>()? {
            v.push((k, x));
        }
        Ok(Raw::Map(v))
    }
}

/// The keys of one table (the top level, or one `[[node]]`/`[[link]]`
/// entry), taken out one by one; whatever is left is an unknown key.
pub(crate) struct Table<'a> {
    at: &'a str,
    /// "" at the top level, "link 3: " in an entry.
    prefix: String,
    entries: Vec<(String, Raw)>,
    used: Vec<bool>,
    asked: Vec<&'static str>,
}

impl<'a> Table<'a> {
    /// The table `raw` (which must be one) of the config from `at`.
    pub(crate) fn new(at: &'a str, prefix: String, raw: Raw) -> Result<Table<'a>, TopologyError> {
        let entries = match raw {
            Raw::Map(m) => m,
            // An empty YAML document.
            Raw::Null => vec![],
            other => {
                return Err(TopologyError::Spec {
                    at: at.to_string(),
                    message: format!(
                        "{}expected a table of keys, got {}",
                        prefix,
                        other.describe()
                    ),
                })
            }
        };
        for (i, (k, _)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(e, _)| e == k) {
                return Err(TopologyError::Key {
                    at: at.to_string(),
                    key: format!("{prefix}{k}"),
                    message: "given twice".into(),
                });
            }
        }
        Ok(Table {
            at,
            used: vec![false; entries.len()],
            prefix,
            entries,
            asked: vec![],
        })
    }

    /// An error about key `key` of this table.
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> TopologyError {
        TopologyError::Key {
            at: self.at.to_string(),
            key: format!("{}{key}", self.prefix),
            message: message.into(),
        }
    }

    /// The value of the first of `names` (a key and its aliases) present,
    /// with the name as written; an error if more than one is.
    fn take(&mut self, names: &[&'static str]) -> Result<Option<(String, Raw)>, TopologyError> {
        self.asked.extend_from_slice(names);
        let mut found: Option<usize> = None;
        for (i, (k, _)) in self.entries.iter().enumerate() {
            if names.contains(&k.as_str()) {
                if let Some(j) = found {
                    return Err(self.error(
                        names[0],
                        format!("given twice (as {} and {k})", self.entries[j].0),
                    ));
                }
                found = Some(i);
            }
        }
        Ok(found.map(|i| {
            self.used[i] = true;
            let (k, v) = &mut self.entries[i];
            (k.clone(), std::mem::replace(v, Raw::Null))
        }))
    }

    /// A whole number from 0 to `u32::MAX`.
    pub(crate) fn count(&mut self, names: &[&'static str]) -> Result<Option<u32>, TopologyError> {
        self.whole(names, u32::MAX)
    }

    /// A whole number from 0 to `max` (`u32` counts, `u64` seeds).
    fn whole<T>(&mut self, names: &[&'static str], max: T) -> Result<Option<T>, TopologyError>
    where
        T: TryFrom<i128> + std::str::FromStr + std::fmt::Display,
    {
        let Some((k, v)) = self.take(names)? else {
            return Ok(None);
        };
        let n = match &v {
            Raw::Int(i) => T::try_from(*i).ok(),
            Raw::Str(s) => s.trim().parse::<T>().ok(),
            _ => None,
        };
        n.map(Some).ok_or_else(|| {
            self.error(
                &k,
                format!(
                    "expected a whole number from 0 to {max}, got {}",
                    v.describe()
                ),
            )
        })
    }

    /// A number (for ratios).
    pub(crate) fn number(&mut self, names: &[&'static str]) -> Result<Option<f64>, TopologyError> {
        let Some((k, v)) = self.take(names)? else {
            return Ok(None);
        };
        let x = match &v {
            Raw::Int(i) => Some(*i as f64),
            Raw::Float(x) => Some(*x),
            Raw::Str(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        x.map(Some)
            .ok_or_else(|| self.error(&k, format!("expected a number, got {}", v.describe())))
    }

    /// A rate: a number of bit/s or a string with a unit (see [`parse_rate`]).
    pub(crate) fn rate(
        &mut self,
        names: &[&'static str],
    ) -> Result<Option<BitsPerSec>, TopologyError> {
        let Some((k, v)) = self.take(names)? else {
            return Ok(None);
        };
        match &v {
            Raw::Int(i) => Ok(Some(BitsPerSec(*i as f64))),
            Raw::Float(x) => Ok(Some(BitsPerSec(*x))),
            Raw::Str(s) => parse_rate(s).map(Some).map_err(|m| self.error(&k, m)),
            _ => Err(self.error(&k, format!("expected a rate, got {}", v.describe()))),
        }
    }

    /// A whole number from 0 to `u64::MAX` (a seed).
    pub(crate) fn seed(&mut self, names: &[&'static str]) -> Result<Option<u64>, TopologyError> {
        self.whole(names, u64::MAX)
    }

    /// A string.
    pub(crate) fn string(
        &mut self,
        names: &[&'static str],
    ) -> Result<Option<String>, TopologyError> {
        let Some((k, v)) = self.take(names)? else {
            return Ok(None);
        };
        match v {
            Raw::Str(s) => Ok(Some(s)),
            other => Err(self.error(&k, format!("expected a string, got {}", other.describe()))),
        }
    }

    /// A string that must be there.
    pub(crate) fn required_string(
        &mut self,
        names: &[&'static str],
    ) -> Result<String, TopologyError> {
        self.string(names)?
            .ok_or_else(|| self.error(names[0], "missing"))
    }

    /// A boolean (`true`/`false`, also as strings).
    pub(crate) fn boolean(
        &mut self,
        names: &[&'static str],
    ) -> Result<Option<bool>, TopologyError> {
        let Some((k, v)) = self.take(names)? else {
            return Ok(None);
        };
        match &v {
            Raw::Bool(b) => Ok(Some(*b)),
            Raw::Str(s) if s.trim() == "true" => Ok(Some(true)),
            Raw::Str(s) if s.trim() == "false" => Ok(Some(false)),
            _ => Err(self.error(&k, format!("expected true or false, got {}", v.describe()))),
        }
    }

    /// A list.
    pub(crate) fn list(
        &mut self,
        names: &[&'static str],
    ) -> Result<Option<Vec<Raw>>, TopologyError> {
        let Some((k, v)) = self.take(names)? else {
            return Ok(None);
        };
        match v {
            Raw::List(l) => Ok(Some(l)),
            other => Err(self.error(&k, format!("expected a list, got {}", other.describe()))),
        }
    }

    /// Fails on the first key nothing asked for, listing the known ones.
    pub(crate) fn finish(self, what: &str) -> Result<(), TopologyError> {
        match self.used.iter().position(|u| !u) {
            None => Ok(()),
            Some(i) => Err(self.error(
                &self.entries[i].0,
                format!("unknown key for {what} (known: {})", self.asked.join(", ")),
            )),
        }
    }
}
