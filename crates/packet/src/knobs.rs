//! The one list of knobs: every part's table (`KNOBS` in the file of the
//! part that reads them, each a [`Knob`]: name, default, unit, help and
//! how a value sets it), which [`PacketConfig::set`] parses with, [`KEYS`]
//! lists for `--packet help` and scenario files, and the docs read.
//! Adding a knob: its field in [`PacketConfig`] with its default, and its
//! entry in its part's table; a new part's table is one line below.

use crate::config::{bad, ConfigError, Knob, PacketConfig};

/// Every part's knobs, in listing order.
pub const TABLES: &[&[Knob]] = &[
    crate::config::KNOBS,
    crate::queue::strict::KNOBS,
    crate::queue::shared::KNOBS,
    crate::queue::pfabric::KNOBS,
    crate::transport::newreno::KNOBS,
    crate::transport::sack::KNOBS,
    crate::transport::dctcp::KNOBS,
    crate::transport::d2tcp::KNOBS,
    crate::transport::mcp::KNOBS,
    crate::transport::pfabric::KNOBS,
    crate::rcp::KNOBS,
    crate::engine::pacing::KNOBS,
    crate::host::KNOBS,
    crate::spc::KNOBS,
    crate::tafe::KNOBS,
    crate::coordinator::KNOBS,
];

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
