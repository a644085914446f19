//! How a knob's value is read: sizes, durations, counts, gains, on/off
//! and names, each with the one-line error that names the key.

use super::{bad, ConfigError, HostQueue, Limit};
use coflowkit_model::Dur;

/// `30000`, `30000B`, `30KB`, `20p`, `20pkts`: bytes unless it ends in `p`.
pub(crate) fn parse_limit(key: &str, v: &str) -> Result<Limit, ConfigError> {
    let s = v.trim().to_ascii_lowercase();
    let (num, packets, scale) = if let Some(n) = s
        .strip_suffix("pkts")
        .or_else(|| s.strip_suffix("packets"))
        .or_else(|| s.strip_suffix('p'))
    {
        (n, true, 1)
    } else if let Some(n) = s.strip_suffix("kb") {
        (n, false, 1000)
    } else if let Some(n) = s.strip_suffix("mb") {
        (n, false, 1_000_000)
    } else {
        (s.strip_suffix('b').unwrap_or(&s), false, 1)
    };
    let n: u64 = num.trim().parse().map_err(|_| {
        bad(
            key,
            format!("'{v}' is not a size: write bytes (30000, 30KB) or packets (20p)"),
        )
    })?;
    if n == 0 {
        return Err(bad(key, format!("'{v}': a queue limit must be above 0")));
    }
    Ok(if packets {
        Limit::Packets(n)
    } else {
        Limit::Bytes(n * scale)
    })
}

/// `10ms`, `200us`, `1s`, `500ns`, `1500` (ns).
pub(crate) fn parse_dur(key: &str, v: &str) -> Result<Dur, ConfigError> {
    let s = v.trim();
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|&(u, k)| s.strip_suffix(u).map(|n| (n, k)))
        .unwrap_or((s, 1.0));
    let x: f64 = num.trim().parse().map_err(|_| {
        bad(
            key,
            format!("'{v}' is not a duration: write e.g. 10ms, 200us, 1s or 500ns"),
        )
    })?;
    if !x.is_finite() || x < 0.0 {
        return Err(bad(key, format!("'{v}': a duration must be 0 or more")));
    }
    Ok(Dur((x * scale).round() as u64))
}

/// `droptail:N+ecn:K` (either order): a bounded NIC queue that also marks.
pub(crate) fn host_queue_both(
    key: &str,
    v: &str,
    a: &str,
    b: &str,
) -> Result<HostQueue, ConfigError> {
    let (d, e) = if a.starts_with("ecn:") {
        (b, a)
    } else {
        (a, b)
    };
    let (Some(n), Some(k)) = (d.strip_prefix("droptail:"), e.strip_prefix("ecn:")) else {
        return Err(bad(
            key,
            format!("'{v}': a bound and a threshold are droptail:N+ecn:K (packets)"),
        ));
    };
    let (packets, k) = (
        parse_u32(key, n.trim(), 1)? as u64,
        parse_u32(key, k.trim(), 1)? as u64,
    );
    if k >= packets {
        return Err(bad(
            key,
            format!("'{v}': K = {k} would never mark in a queue of {packets} packets (K < N)"),
        ));
    }
    Ok(HostQueue::DropTailEcn { packets, k })
}

pub(crate) fn parse_u32(key: &str, v: &str, least: u32) -> Result<u32, ConfigError> {
    let n: u32 = v
        .trim()
        .parse()
        .map_err(|_| bad(key, format!("'{v}' is not a whole number")))?;
    if n < least {
        return Err(bad(key, format!("{n} is below the least value, {least}")));
    }
    Ok(n)
}

/// A finite number of 0 or more (RCP's α and β).
pub(crate) fn parse_gain(key: &str, v: &str) -> Result<f64, ConfigError> {
    let x: f64 = v
        .trim()
        .parse()
        .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
    if !(x.is_finite() && x >= 0.0) {
        return Err(bad(key, format!("{x} is not a finite number of 0 or more")));
    }
    Ok(x)
}

/// A switch: on/true/yes or off/false/no.
pub(crate) fn parse_on_off(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(bad(key, format!("'{v}': on or off"))),
    }
}

pub(crate) fn off(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "off" | "none" | "false" | "no"
    )
}

/// The one of `all` whose name is `v` (any case, spaces around).
pub(crate) fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, v: &str) -> Option<T> {
    let v = v.trim().to_ascii_lowercase();
    all.iter().copied().find(|&t| name(t) == v)
}

pub(crate) fn auto(v: &str) -> bool {
    v.trim().eq_ignore_ascii_case("auto")
}
