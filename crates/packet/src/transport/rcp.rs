//! RCP's end point (Dukkipati and McKeown): no congestion window; the
//! sender paces at the rate the ports on its path stamp on its packets
//! (the least they offer, echoed back by the receiver; the first from the
//! handshake), and its packets carry its RTT estimate for the ports'
//! averages. Its losses are recovered by NewReno's machinery (or SACK's).
//! The switch side, each port's rate, is `crate::rcp`.

use super::{Ecn, Rules, TransportKind};

/// RCP: rate-based, NewReno's recovery, not a window transport.
pub const RULES: Rules = Rules {
    name: "rcp",
    option: true,
    ecn: Ecn::Off,
    rate_based: true,
    window: false,
    ..super::newreno::RULES
};

impl TransportKind {
    /// RCP: no window; every port offers a rate, the packet carries the
    /// least of them and the sender paces at it (`crate::rcp`).
    #[allow(non_upper_case_globals)]
    pub const Rcp: TransportKind = TransportKind(&RULES);
}
