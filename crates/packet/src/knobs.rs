//! The one list of knobs: every part's table (`KNOBS` in the file of the
//! part that reads them, each a [`Knob`]: name, default, unit, help and
//! how a value sets it; a transport's in its rules), which
//! [`PacketConfig::set`] parses with, [`KEYS`] lists for `--packet help`
//! and scenario files, and the docs read. Adding a knob: its field in
//! [`PacketConfig`] with its default, and its entry in its part's table; a
//! new part's table is one line in [`PARTS`] (a transport's comes with its
//! line in `crate::transports::ALL`).

use crate::config::{bad, ConfigError, Knob, PacketConfig};
use crate::transports;

/// The knobs of every part but the transports, in listing order.
pub const PARTS: &[&[Knob]] = &[
    crate::transports::KNOBS,
    crate::config::KNOBS,
    crate::queue::strict::KNOBS,
    crate::queue::shared::KNOBS,
    crate::queue::pfabric::KNOBS,
    crate::transport::sack::KNOBS,
    crate::rcp::KNOBS,
    crate::engine::pacing::KNOBS,
    crate::host::KNOBS,
    crate::spc::KNOBS,
    crate::tafe::KNOBS,
    crate::coordinator::KNOBS,
];

/// How many tables there are: the parts' and one per transport.
const TABLE_COUNT: usize = PARTS.len() + transports::ALL.len();

/// Every table: the first two parts' (the choice of transport, the run's
/// own knobs), each transport's (in `transports::ALL`'s order), then the
/// other parts'.
pub const TABLES: [&[Knob]; TABLE_COUNT] = {
    let mut tables: [&[Knob]; TABLE_COUNT] = [&[]; TABLE_COUNT];
    tables[0] = PARTS[0];
    tables[1] = PARTS[1];
    let mut i = 0;
    while i < transports::ALL.len() {
        tables[2 + i] = transports::ALL[i].knobs;
        i += 1;
    }
    let mut j = 2;
    while j < PARTS.len() {
        tables[transports::ALL.len() + j] = PARTS[j];
        j += 1;
    }
    tables
};

/// How many knobs there are.
const N: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < TABLES.len() {
        n += TABLES[i].len();
        i += 1;
    }
    n
};

/// Every key [`PacketConfig::set`] takes, with what it sets (for help and
/// for the error naming an unknown key), in [`TABLES`]' order.
pub const KEYS: &[(&str, &str)] = &{
    let mut keys = [("", ""); N];
    let (mut i, mut k) = (0, 0);
    while i < TABLES.len() {
        let mut j = 0;
        while j < TABLES[i].len() {
            keys[k] = (TABLES[i][j].name, TABLES[i][j].help);
            k += 1;
            j += 1;
        }
        i += 1;
    }
    keys
};

/// Every knob, in [`TABLES`]' order.
pub fn all() -> impl Iterator<Item = &'static Knob> {
    TABLES.iter().flat_map(|t| t.iter())
}

/// The knob named `name`, if there is one.
pub fn knob(name: &str) -> Option<&'static Knob> {
    all().find(|k| k.name == name)
}

impl PacketConfig {
    /// Sets `key` to `value` (see [`KEYS`]); on an error nothing changes.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let Some(k) = knob(key) else {
            let keys: Vec<_> = KEYS.iter().map(|k| k.0).collect();
            return Err(bad(
                key,
                format!("unknown option; valid: {}", keys.join(", ")),
            ));
        };
        let mut next = self.clone();
        (k.set)(&mut next, key, value)?;
        next.check()?;
        *self = next;
        Ok(())
    }

    /// Sets every `key=value` of `spec` (separated by `,` or `;`) in turn.
    pub fn set_all(&mut self, spec: &str) -> Result<(), ConfigError> {
        for kv in spec.split([',', ';']).filter(|s| !s.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad(kv.trim(), "expected key=value"))?;
            self.set(k.trim(), v)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
