//! Smart Priority Classes' arithmetic, shared with the packet engine's
//! switches: a port's feedback to a flow (Baraat 4.2), a host's demand,
//! the virtual capacity and its clip.

use super::*;

/// The counters Algorithm 1 reads for one flow at one link, and its demand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedbackInput {
    /// Link capacity `C`, bits/s.
    pub capacity: f64,
    /// Sum of the demands of the classes before the flow's, bits/s.
    pub higher_demand: f64,
    /// `D_k`: the demands of the other flows of the flow's class, bits/s.
    pub class_demand: f64,
    /// `F_k`: flows in the flow's class, the flow included.
    pub class_flows: u32,
    /// `A`: the allocations (ARs) of the other flows on the link, bits/s.
    pub allocated: f64,
    /// The flow's demand `D`, bits/s.
    pub demand: f64,
}

/// Algorithm 1, lines 3-10: the actual rate AR and nominal rate NR for one
/// flow at one link (bits/s).
pub fn feedback(i: FeedbackInput, share: Share) -> (f64, f64) {
    let class_avl = (i.capacity - i.higher_demand).max(0.0);
    let avail_share = (class_avl - i.class_demand).max(0.0);
    let equal = class_avl / i.class_flows.max(1) as f64;
    // `AvailShare` is `C` less sums: its noise is relative to `C`, not to a
    // small `D` (found by the differential tests: a flow's last bytes, 2.4
    // Mbit/s, against what a 500 Mbit/s class left, equal in exact
    // arithmetic, 0.04 bit/s apart in floats).
    let tie = RATE_TIE * i.demand.max(i.capacity).max(1.0);
    let nr = if avail_share - i.demand > tie {
        i.demand
    } else if share == Share::Fill {
        equal.max(avail_share)
    } else {
        equal
    };
    let ar = nr.min((i.capacity - i.allocated).max(0.0));
    (ar, nr)
}

/// Algorithm 2: a sender's demand for the next round (bits/s), from its NIC
/// rate, its buffered bytes per round (as bits/s), and, once the flow is
/// set up, its previous demand and the least NR of the previous feedback.
pub fn demand(nic: f64, buffered_rate: f64, previous: Option<(f64, f64)>, delta: f64) -> f64 {
    let d = nic.min(buffered_rate);
    match previous {
        Some((prev_demand, min_nr)) if min_nr < prev_demand - RATE_TIE * prev_demand.max(1.0) => {
            d.min(min_nr + delta)
        }
        _ => d,
    }
}

/// Whether a flow offering `rate` (bits/s) sends its last bytes in a round
/// of `rtt_s` seconds: it has at most `rate · rtt` left (within
/// [`RATE_TIE`]), so it would end on the next tick.
pub fn sends_its_last(rate: f64, remaining_bytes: f64, rtt_s: f64) -> bool {
    let buffered = remaining_bytes.max(0.0) * 8.0 / rtt_s;
    rate > 0.0 && rate >= buffered - RATE_TIE * buffered.max(1.0)
}

/// Footnote 5's virtual capacity after one interval (a round here, an
/// `SpcPort` interval at packet level: both levels call this): a link
/// that carries flows (`offered`, the rate offered to it in the interval,
/// bits/s) moves from `vcap` by `gain · (C - offered)`, `|C - offered|`
/// within [`RATE_TIE`] of `C` counting as 0, and stays within `[C, vc_max
/// · C]`; a link with none (`None`) is back at `C`, so an idle link keeps
/// no credit from its idle time. `gain = 0`: always `C`.
pub fn virtual_capacity(
    vcap: f64,
    capacity: f64,
    offered: Option<f64>,
    gain: f64,
    vc_max: f64,
) -> f64 {
    match offered {
        Some(y) if gain > 0.0 => {
            let err = if (capacity - y).abs() > RATE_TIE * capacity {
                capacity - y
            } else {
                0.0
            };
            (vcap + gain * err).clamp(capacity, capacity * vc_max.max(1.0))
        }
        _ => capacity,
    }
}

/// With virtual capacity, what a link of real capacity `c` passes of the
/// flows offered to it, `y` bits/s in all, of which `y_last` from flows
/// sending their last bytes ([`sends_its_last`]): `(factor of those,
/// factor of the others)`. Within `c`, everything. Above, the last bytes
/// pass in full and the others share what is left, `(c - y_last) / (y -
/// y_last)`; if the last bytes alone exceed `c`, they get `c / y_last` and
/// the others nothing. Both factors move continuously with the rates.
///
/// Why the last bytes first: scaling a flow in its last round by `1 - e`
/// leaves `e` of its bytes, which it sends the next round at a rate
/// scaled again, and so on: its end slides to a few nanoseconds after a
/// tick, where float noise decides whether the flow is still there for the
/// next round's classes (a discontinuity). Passed in full, it ends on the
/// tick, as without virtual capacity.
pub fn clip(c: f64, y_last: f64, y: f64) -> (f64, f64) {
    if y <= c {
        (1.0, 1.0)
    } else if y_last <= c {
        let rest = y - y_last;
        (1.0, if rest > 0.0 { (c - y_last) / rest } else { 1.0 })
    } else {
        (c / y_last, 0.0)
    }
}

/// Whether a rate moved by more than float noise ([`RATE_TIE`]) from one
/// round to the next.
pub(super) fn moved(new: f64, old: f64) -> bool {
    if new == old {
        false
    } else if !new.is_finite() || !old.is_finite() {
        true
    } else {
        (new - old).abs() > RATE_TIE * new.abs().max(old.abs()).max(1.0)
    }
}
