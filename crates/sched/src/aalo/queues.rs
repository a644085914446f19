//! D-CLAS's queues and coordination: each sender's estimate of its
//! coflows' sizes, the refresh every Δ, demotion when an estimate reaches
//! its queue's threshold, the `local=first` tier, and the timer for the
//! next crossing or refresh (see the parent module's doc, "Queues" and
//! "Coordination").

use super::books::{tier_of, Co, Piece, DIRTY, NONE};
use super::port_server::PortServer;
use super::{float_slack, Aalo, AaloConfig, Coordination};
use coflowkit_model::{ceil_ns_time, Time};

impl Aalo {
    /// A sender's estimate of its coflow's size at `t`.
    pub(super) fn estimate(&self, co: &Co, p: &Piece, t: Time) -> f64 {
        match self.cfg.coordination {
            Coordination::Instant => co.total.value_at(t),
            Coordination::Every(_) => co.global + p.sent.value_at(t) - p.at_sync,
            Coordination::Never => p.sent.value_at(t),
        }
    }

    /// Applies the latest refresh at or before `now`, if it is new: every
    /// coflow's global size and every sender's bytes as of that instant
    /// (rates have not changed since the previous call, so the values there
    /// are exact).
    pub(super) fn refresh(&mut self, now: Time) {
        let Coordination::Every(delta) = self.cfg.coordination else {
            return;
        };
        let k = now.0 / delta.0.max(1);
        if k <= self.n_syncs {
            return;
        }
        self.n_syncs = k;
        let t = Time(k * delta.0);
        let first = self.cfg.ahead();
        let mut moves = std::mem::take(&mut self.new_queue);
        for &c in &self.order {
            let co = &mut self.co[c as usize];
            co.global = co.total.value_at(t);
            co.seen = true;
            moves.clear();
            let mut moved = false;
            for p in &mut co.pieces {
                p.at_sync = p.sent.value_at(t);
                if p.tier == first {
                    // Served ahead of the queues until now: into `Q1`.
                    moves.push((first, p.queue));
                    p.tier = p.queue;
                    moved = true;
                } else {
                    moves.push((NONE, NONE));
                }
            }
            if moved {
                retier(co, self.ports.as_mut(), &self.cfg, &moves);
            }
        }
        self.new_queue = moves;
    }

    /// Moves every sender's coflows to the queues their estimates reach.
    pub(super) fn update_queues(&mut self, now: Time) {
        let mut moved = std::mem::take(&mut self.moved);
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            moved.clear();
            let co = &self.co[c];
            for (k, p) in co.pieces.iter().enumerate() {
                if p.n_active == 0 && self.cfg.coordination != Coordination::Instant {
                    continue;
                }
                // Sizes come from progress the engine advances in whole
                // nanoseconds: a threshold the estimate would reach within
                // a nanosecond at the rate it grew at counts as reached (a
                // wider slack fixes a crossing that drifted 2 ns and breaks
                // two crossings 3 ns apart: the reference suite leaves
                // crossings within SNAP_NS of another coflow's decision
                // uncompared instead).
                let slack = co.rate_before.max(p.rate_before);
                let q = self
                    .cfg
                    .queue_from(p.queue, self.estimate(co, p, now), slack);
                if q != p.queue {
                    moved.push((k as u32, p.queue, q));
                }
            }
            if moved.is_empty() {
                continue;
            }
            // Pieces hold few distinct moves: one pass over the live slots.
            let co = &mut self.co[c];
            let mut new_queue = std::mem::take(&mut self.new_queue);
            new_queue.clear();
            new_queue.resize(co.pieces.len(), (NONE, NONE));
            for &(k, _, q) in &moved {
                let p = &mut co.pieces[k as usize];
                let old = p.tier;
                p.queue = q;
                p.tier = tier_of(&self.cfg, co.seen, q);
                new_queue[k as usize] = (old, p.tier);
            }
            retier(co, self.ports.as_mut(), &self.cfg, &new_queue);
            self.new_queue = new_queue;
        }
        self.moved = moved;
    }

    /// The first instant a sender's estimate reaches its queue's upper
    /// threshold at the current rates, refreshes included.
    fn crossing(&self, co: &Co, p: &Piece, now: Time) -> Time {
        let Some(&theta) = self.cfg.thresholds.get(p.queue as usize) else {
            return Time::NEVER;
        };
        let e = self.estimate(co, p, now);
        let at = |rate: f64, from: Time, left: f64| {
            ceil_ns_time(from, left.max(0.0), rate).unwrap_or(Time::NEVER)
        };
        match self.cfg.coordination {
            Coordination::Instant => at(co.total.rate, now, theta - e),
            Coordination::Never => at(p.sent.rate, now, theta - e),
            Coordination::Every(delta) => {
                let d = delta.0.max(1);
                let next_sync = Time((now.0 / d + 1) * d);
                let local = at(p.sent.rate, now, theta - e);
                if local < next_sync {
                    return local;
                }
                // At each refresh the estimate jumps to the global size; the
                // first refresh at or after the global size reaches theta
                // sees it, unless the sender's own bytes get there first
                // in the interval before.
                let s = co.total.value_at(now);
                let tau = if s >= theta - float_slack(theta) {
                    now
                } else {
                    at(co.total.rate, now, theta - s)
                };
                if tau == Time::NEVER {
                    return Time::NEVER;
                }
                if tau <= next_sync {
                    return next_sync;
                }
                let t_k = Time(tau.0 / d * d);
                let s_k = co.total.value_at(t_k);
                if s_k >= theta - float_slack(theta) {
                    return t_k;
                }
                at(p.sent.rate, t_k, theta - s_k).min(Time(t_k.0 + d))
            }
        }
    }

    /// The next instant the scheduler must wake at: the next refresh that
    /// moves a coflow served ahead of the queues into them, or the first
    /// crossing of a threshold. A coflow's crossings are not before its
    /// size reaches its lowest threshold ahead (no sender's estimate is
    /// above the size), so coflows are looked at by that bound, lowest
    /// first, until the bound is past the earliest crossing found: the
    /// same minimum as looking at every coflow (a debug check does).
    pub(super) fn next_wake(&mut self, now: Time) -> Option<Time> {
        let mut wake = Time::NEVER;
        if let (true, Coordination::Every(delta)) = (self.cfg.local_first, self.cfg.coordination) {
            // The refresh that sees a coflow served ahead of the queues
            // moves it into them.
            let ahead = self.cfg.ahead();
            if self.order.iter().any(|&c| {
                let co = &self.co[c as usize];
                co.pieces.iter().any(|p| p.n_active > 0 && p.tier == ahead)
            }) {
                let d = delta.0.max(1);
                wake = Time((now.0 / d + 1) * d);
            }
        }
        // Per coflow with a threshold ahead: (bound, coflow), the bound
        // `Time(0)` where its size has reached the threshold already.
        let mut by_bound = std::mem::take(&mut self.wake_order);
        by_bound.clear();
        for &c in &self.order {
            let co = &self.co[c as usize];
            let Some(first) = co
                .pieces
                .iter()
                .filter(|p| p.n_active > 0)
                .min_by_key(|p| p.queue)
            else {
                continue;
            };
            let Some(&theta) = self.cfg.thresholds.get(first.queue as usize) else {
                continue;
            };
            let s = co.total.value_at(now);
            let bound = if s < theta - float_slack(theta) {
                ceil_ns_time(now, theta - s, co.total.rate).unwrap_or(Time::NEVER)
            } else {
                Time(0)
            };
            by_bound.push((bound, c));
        }
        by_bound.sort_unstable();
        #[cfg(debug_assertions)]
        let before = wake;
        for &(bound, c) in &by_bound {
            if bound != Time(0) && bound >= wake {
                break;
            }
            wake = wake.min(self.earliest_crossing(&self.co[c as usize], now));
        }
        #[cfg(debug_assertions)]
        {
            let every = by_bound.iter().fold(before, |w, &(_, c)| {
                w.min(self.earliest_crossing(&self.co[c as usize], now))
            });
            assert_eq!(wake, every, "next wake by bounds against every coflow's");
        }
        self.wake_order = by_bound;
        (wake != Time::NEVER).then_some(wake)
    }

    /// The first crossing of a threshold by any active sender of `co`.
    fn earliest_crossing(&self, co: &Co, now: Time) -> Time {
        let active = co.pieces.iter().filter(|p| p.n_active > 0);
        if self.cfg.coordination == Coordination::Instant {
            // Every sender has the coflow's size and queue.
            return match active.min_by_key(|p| p.queue) {
                Some(first) => self.crossing(co, first, now),
                None => Time::NEVER,
            };
        }
        active.fold(Time::NEVER, |w, p| w.min(self.crossing(co, p, now)))
    }
}

/// Marks the live slots of `co`'s pieces whose tier moved (`moves[k]`: the
/// old and new tier of piece `k`, `NONE` if it stays) to be rated and
/// classed again, and moves them in the per-port counts.
fn retier(co: &mut Co, mut ports: Option<&mut PortServer>, cfg: &AaloConfig, moves: &[(u32, u32)]) {
    co.all_dirty = true;
    for &s in &co.live {
        let slot = &mut co.slots[s as usize];
        let k = slot.piece as usize;
        let (old, q) = moves[k];
        if q == NONE {
            continue;
        }
        slot.dirty = true;
        if let Some(ports) = ports.as_deref_mut() {
            co.cell_group[k * co.cols.len() + slot.col as usize] = DIRTY;
            let n = slot.flows.len() as i64;
            let (host, dst) = (co.pieces[k].host, co.cols[slot.col as usize]);
            ports.add(old, cfg, host, dst, -n);
            ports.add(q, cfg, host, dst, n);
        }
    }
}
