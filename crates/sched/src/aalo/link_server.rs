//! D-CLAS on any fabric, link by link ([`Server`]): pass 1 splits each
//! link's capacity between the queues present on it by weight and serves
//! each queue's coflows in order by max-min on its grants; pass 2 shares
//! what is left by weighted max-min (see the parent module's doc, "Sharing
//! between queues").

use super::books::Co;
use super::AaloConfig;
use crate::{CoflowIdx, Observed};
use coflowkit_alloc::MaxMin;

/// Computes D-CLAS's rates (see the module doc) into each live slot's
/// `next`.
#[derive(Debug, Default)]
pub(super) struct Server {
    solver: MaxMin,
    residual: Vec<f64>,
    full: Vec<f64>,
    /// Per queue and link (`q * n_links + l`): the queue's grant this round.
    grant: Vec<f64>,
    /// Per link: the total weight of the queues present this round.
    weight_on: Vec<f64>,
    link_stamp: Vec<u32>,
    present: Vec<u32>,
    epoch: u32,
    /// (queue, link) pairs present this round.
    pairs: Vec<(u32, u32)>,
    /// Per queue: its (coflow, slot) pairs, in order.
    units: Vec<Vec<(CoflowIdx, u32)>>,
    demand_slot: Vec<u32>,
    demand_co: Vec<CoflowIdx>,
}

impl Server {
    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_stamp.iter_mut().for_each(|s| *s = 0);
            self.present.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    fn can_grow(&self, links: &[coflowkit_model::LinkId]) -> bool {
        links
            .iter()
            .all(|l| self.residual[l.0 as usize] > self.full[l.0 as usize])
    }

    pub(super) fn allocate(
        &mut self,
        cfg: &AaloConfig,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        co: &mut [Co],
    ) {
        let n_links = view.n_links();
        let k = cfg.n_queues();
        if self.full.len() != n_links {
            self.full = view.capacities().iter().map(|c| c * 1e-9).collect();
            self.link_stamp = vec![0; n_links];
            self.weight_on = vec![0.0; n_links];
            self.present = vec![0; n_links * k];
            self.grant = vec![0.0; n_links * k];
        }
        self.residual.clear();
        self.residual.extend_from_slice(view.capacities());
        for &c in order {
            let co = &mut co[c as usize];
            for &s in &co.live {
                co.slots[s as usize].next = 0.0;
            }
        }
        // With `local=first`, the tier ahead of the queues first (coflows
        // no refresh has counted yet, their flows in `Q1`), in order, on the
        // whole capacity; then, strict, queue by queue on what is left.
        let ahead = cfg.ahead();
        let first = cfg.local_first.then_some(ahead);
        if cfg.strict {
            for q in first.into_iter().chain(0..ahead) {
                self.serve_each(view, order, co, |cc, s| slot_tier(cc, s) == q);
            }
            return;
        }
        if let Some(q) = first {
            self.serve_each(view, order, co, |cc, s| slot_tier(cc, s) == q);
        }
        // Pass 1: each link's capacity split between the queues present on
        // it, by weight; each queue serves its coflows in order on its grants.
        self.units.resize_with(k, Vec::new);
        let epoch = self.next_epoch();
        self.pairs.clear();
        for u in &mut self.units {
            u.clear();
        }
        for &c in order {
            let cc = &co[c as usize];
            for &s in &cc.live {
                let q = slot_tier(cc, s);
                if q == ahead {
                    continue;
                }
                let slot = &cc.slots[s as usize];
                self.units[q as usize].push((c, s));
                for l in view.path_links(slot.path) {
                    let l = l.0 as usize;
                    if self.link_stamp[l] != epoch {
                        self.link_stamp[l] = epoch;
                        self.weight_on[l] = 0.0;
                    }
                    let at = q as usize * n_links + l;
                    if self.present[at] != epoch {
                        self.present[at] = epoch;
                        self.weight_on[l] += cfg.weights[q as usize];
                        self.pairs.push((q, l as u32));
                    }
                }
            }
        }
        for &(q, l) in &self.pairs {
            let l = l as usize;
            // (The whole capacity but for what `local=first` served.)
            self.grant[q as usize * n_links + l] =
                self.residual[l] * cfg.weights[q as usize] / self.weight_on[l];
        }
        for q in 0..k {
            let units = std::mem::take(&mut self.units[q]);
            let mut i = 0;
            while i < units.len() {
                let c = units[i].0;
                let mut j = i;
                while j < units.len() && units[j].0 == c {
                    j += 1;
                }
                let grant = &mut self.grant[q * n_links..(q + 1) * n_links];
                serve_coflow(
                    &mut self.solver,
                    &mut self.demand_slot,
                    view,
                    &mut co[c as usize],
                    units[i..j].iter().map(|u| u.1),
                    grant,
                    &self.full,
                    Some(&mut self.residual),
                );
                i = j;
            }
            self.units[q] = units;
        }
        // Pass 2: what the queues left, by weighted max-min between the
        // flows that can still grow, each with its queue's weight.
        self.solver.clear();
        self.demand_slot.clear();
        self.demand_co.clear();
        for &c in order {
            let cc = &co[c as usize];
            for &s in &cc.live {
                let slot = &cc.slots[s as usize];
                let links = view.path_links(slot.path);
                let q = slot_tier(cc, s);
                if q == ahead || !self.can_grow(links) {
                    continue;
                }
                self.solver.push(
                    links.iter().copied(),
                    cfg.weights[q as usize],
                    slot.flows.len() as u32,
                    f64::INFINITY,
                );
                self.demand_slot.push(s);
                self.demand_co.push(c);
            }
        }
        if self.demand_slot.is_empty() {
            return;
        }
        let rates = self.solver.solve(&mut self.residual);
        for ((&c, &s), &x) in self.demand_co.iter().zip(&self.demand_slot).zip(rates) {
            co[c as usize].slots[s as usize].next += x;
        }
    }

    /// Coflow by coflow in `order`, max-min for the live slots `pick`
    /// chooses, on the residual.
    fn serve_each(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        co: &mut [Co],
        pick: impl Fn(&Co, u32) -> bool,
    ) {
        for &c in order {
            let cc = &mut co[c as usize];
            let slots: Vec<u32> = cc.live.iter().copied().filter(|&s| pick(cc, s)).collect();
            if slots.is_empty() {
                continue;
            }
            serve_coflow(
                &mut self.solver,
                &mut self.demand_slot,
                view,
                cc,
                slots.into_iter(),
                &mut self.residual,
                &self.full,
                None,
            );
        }
    }
}

/// The tier slot `s` of `co` is served in ([`Piece::tier`]).
fn slot_tier(co: &Co, s: u32) -> u32 {
    co.pieces[co.slots[s as usize].piece as usize].tier
}

/// Max-min rates for the given slots of one coflow on `capacity` (reduced
/// by what they use, as is `also`, if given), added to the slots' `next`.
/// Slots crossing a link with nothing left get nothing.
#[allow(clippy::too_many_arguments)]
fn serve_coflow(
    solver: &mut MaxMin,
    demand_slot: &mut Vec<u32>,
    view: &Observed<'_>,
    co: &mut Co,
    slots: impl Iterator<Item = u32>,
    capacity: &mut [f64],
    full: &[f64],
    mut also: Option<&mut Vec<f64>>,
) {
    solver.clear();
    demand_slot.clear();
    for s in slots {
        let slot = &co.slots[s as usize];
        let links = view.path_links(slot.path);
        if links
            .iter()
            .any(|l| capacity[l.0 as usize] <= full[l.0 as usize])
        {
            continue;
        }
        solver.push(
            links.iter().copied(),
            1.0,
            slot.flows.len() as u32,
            f64::INFINITY,
        );
        demand_slot.push(s);
    }
    if demand_slot.is_empty() {
        return;
    }
    let rates = solver.solve(capacity);
    for (&s, &x) in demand_slot.iter().zip(rates) {
        let slot = &mut co.slots[s as usize];
        slot.next += x;
        if let Some(residual) = also.as_deref_mut() {
            if x > 0.0 {
                let used = x * slot.flows.len() as f64;
                for l in view.path_links(slot.path) {
                    residual[l.0 as usize] -= used;
                }
            }
        }
    }
}
