//! A rate group's bytes sent as one running sum, so that a coflow's bytes
//! left cost its groups, not its flows (`stf` reads every active coflow's
//! at every event).
//!
//! A member `f` of group `g` has sent `size_f - (mark_f - clock_g)` (its
//! mark is the clock at which it finishes; `progress`), so the members
//! together have sent `n * clock - V` with `V` the sum of `mark_f - size_f`
//! over them: the group keeps `V` as members join and leave ([`MarkSum`]),
//! and a read costs one clock per group. This rounds differently from the
//! per-flow sum of [`NetState::coflow_sent_now`] (each flow's bytes are
//! rounded and clamped on their own, and added in flow order), so it comes
//! with a bound on how far from that sum it can be, and it is opt-in: a
//! reader that must order coflows exactly as the per-flow sum does compares
//! bounds and asks for the per-flow sum where they overlap (`ordered`'s
//! `stf`).
//!
//! Correctness properties: `V` is kept by error-free additions (`two_sum`)
//! with the rounding of their tails bounded in [`MarkSum::err`], and starts
//! again from 0 when the group empties (`sum_join`, `sum_leave`); a sum is
//! given only when the groups named hold every grouped flow of the coflow
//! (their member counts add up to its) and no member is past its mark (the
//! per-flow sum clamps those), else `None` (`coflow_sent_by_groups`); debug
//! builds check every sum against the per-flow one within its bound, and
//! that the groups named hold only the coflow's flows
//! (`Clairvoyant::coflow_remaining_by_groups`).

use super::NetState;
#[cfg(debug_assertions)]
use super::INACTIVE;

/// Twice the unit roundoff: a bound on the relative error of one rounding.
const EPS: f64 = f64::EPSILON;

/// The sum of members' `mark - size` of a rate group, as a float and the
/// tail lost to rounding (`hi + lo`), with a bound on how far `hi + lo` is
/// from the exact sum.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct MarkSum {
    hi: f64,
    lo: f64,
    err: f64,
}

/// `a + b` and its rounding error, exactly (Knuth's TwoSum).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

impl MarkSum {
    fn add(&mut self, x: f64) {
        let (hi, e) = two_sum(self.hi, x);
        self.hi = hi;
        self.lo += e;
        self.err += EPS * self.lo.abs();
    }
}

impl NetState {
    /// Flow `fi` has joined rate group `g` with its mark (its `base`).
    pub(super) fn sum_join(&mut self, g: u32, fi: usize) {
        let (mark, size) = (self.fl[fi].base, self.fl[fi].size);
        let sum = &mut self.groups[g as usize].sum;
        sum.add(mark);
        sum.add(-size);
    }

    /// Flow `fi` leaves rate group `g` (its `base` still its mark, the group
    /// still counting it).
    pub(super) fn sum_leave(&mut self, g: u32, fi: usize) {
        let (mark, size) = (self.fl[fi].base, self.fl[fi].size);
        let gr = &mut self.groups[g as usize];
        if gr.n_members <= 1 {
            gr.sum = MarkSum::default();
        } else {
            gr.sum.add(-mark);
            gr.sum.add(size);
        }
    }

    /// Bytes coflow `c` has sent now, with its grouped flows summed per
    /// group over `groups` (which must hold only flows of `c`), and a bound
    /// on how far that is from [`NetState::coflow_sent_now`]'s per-flow
    /// sum; `None` when `groups` do not hold all of `c`'s grouped flows or
    /// a member is past its mark. With no grouped flows: that sum, bound 0.
    pub(super) fn coflow_sent_by_groups(
        &self,
        c: usize,
        groups: impl IntoIterator<Item = u32>,
    ) -> Option<(f64, f64)> {
        let i = &self.coflows[c];
        // The solo and finished flows' part, as `coflow_sent_now` has it.
        let s0 = i.base_sent + i.solo_rate * self.elapsed(i.base_time);
        if i.n_grouped == 0 {
            return Some((s0.min(i.size), 0.0));
        }
        let (mut sum, mut abs, mut err, mut n_seen) = (s0, s0.abs(), 0.0, 0u32);
        for g in groups {
            let gr = self.groups.get(g as usize)?;
            if gr.n_members == 0 {
                continue;
            }
            let clock = self.group_clock(g);
            if gr.head < clock {
                return None;
            }
            let n_clock = f64::from(gr.n_members) * clock;
            let v = gr.sum.hi + gr.sum.lo;
            let t = n_clock - v;
            err += gr.sum.err + EPS * (n_clock.abs() + v.abs() + t.abs());
            sum += t;
            abs += t.abs();
            err += EPS * abs;
            n_seen += gr.n_members;
        }
        if n_seen != i.n_grouped {
            return None;
        }
        // The per-flow sum's own rounding: each term (at most its flow's
        // size, its mark at most that above the clock) rounded twice, and
        // each of `n` additions by at most its partial sum.
        let n = f64::from(i.n_grouped);
        let per_flow = EPS * (3.0 * i.size + n * (s0.abs() + 2.0 * i.size));
        Some((sum.min(i.size), 2.0 * (err + per_flow)))
    }

    /// Whether every live member of group `g` is a flow of coflow `c`.
    #[cfg(debug_assertions)]
    pub(super) fn group_holds_only(&self, g: u32, c: u32) -> bool {
        let Some(gr) = self.groups.get(g as usize) else {
            return true;
        };
        gr.members.iter().all(|&std::cmp::Reverse((m, f))| {
            let r = &self.fl[f as usize];
            let live = r.active_pos != INACTIVE && r.group == g && r.base == m.mark();
            !live || r.coflow == c
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FlowIdx, NetState};
    use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Fabric, Time};
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    /// Random joins, leaves (to solo rates), group rates and finishes of
    /// two coflows' flows over a few groups each, with sizes and instants
    /// over many orders of magnitude: the sum by groups is within its bound
    /// of the per-flow one at every step (the view's debug check), and is
    /// given whenever the groups named hold all the coflow's grouped flows.
    #[test]
    fn group_sums_stay_within_their_bound_of_the_per_flow_sum() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        let mut st = NetState::new(Fabric::big_switch(4, BitsPerSec::GBPS).unwrap());
        let mut specs = vec![];
        for _ in 0..2 {
            let flows = (0..60)
                .map(|i| {
                    let scale = 10 + rnd(30);
                    flow(i % 4, (i + 1) % 4, 1 + rnd(1 << scale))
                })
                .collect();
            specs.push(CoflowSpec::new(specs.len() as u64, Time(0), flows));
        }
        let cs: Vec<u32> = specs.iter().map(|s| st.add_coflow(s)).collect();
        for &c in &cs {
            st.release_coflow(c);
            for f in st.flows_of(c) {
                assert!(st.start_flow(f));
            }
        }
        // Coflow `k`'s groups: 4k .. 4k + 4.
        let groups = |k: usize| (4 * k as u32)..(4 * k as u32 + 4);
        let mut now = 0u64;
        let mut given = 0;
        for _ in 0..4_000 {
            let k = rnd(2) as usize;
            let f = st.flows_of(cs[k]).start + rnd(60) as FlowIdx;
            match rnd(6) {
                0 | 1 if st.is_active(f) => {
                    let g = groups(k).start + rnd(4) as u32;
                    st.join_group(f, g);
                }
                2 if st.is_active(f) => {
                    st.set_solo_rate(f, rnd(1000) as f64 / 997.0);
                }
                3 => {
                    let g = groups(k).start + rnd(4) as u32;
                    let scale = rnd(20);
                    st.set_group_rate(g, rnd(1 << scale) as f64 / 7.0);
                }
                4 if st.is_active(f) && rnd(8) == 0 => st.finish_flow(f),
                _ => {
                    let scale = rnd(24);
                    now += rnd(1 << scale);
                    // Due members finish first, as the engine has them.
                    let mut due = vec![];
                    st.due_grouped(Time(now), &mut due);
                    st.set_now(Time(now));
                    due.into_iter().for_each(|f| st.finish_flow(f));
                }
            }
            let v = st.clairvoyant();
            for (k, &c) in cs.iter().enumerate() {
                let (left, bound) = v.coflow_remaining_by_groups(c, groups(k));
                let exact = v.coflow_remaining(c);
                assert!((left - exact).abs() <= bound, "{left} {exact} {bound}");
                given += usize::from(bound > 0.0);
            }
        }
        assert!(given > 1000, "sums by groups given {given} times");
    }
}
