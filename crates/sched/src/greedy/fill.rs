//! One greedy fill of the kept order ([`Fill`]): each flow in order takes
//! its path's least residual, passing the chunks and clusters whose links
//! are full.

use super::*;

/// One greedy fill in progress: [`greedy_fill`]'s loop body.
pub(super) struct Fill<'a, 'v> {
    pub(super) view: &'a Clairvoyant<'v>,
    pub(super) residual: &'a mut [f64],
    pub(super) out: &'a mut Allocation,
    pub(super) floor: f64,
    pub(super) was_positive: &'a FlowBits,
    pub(super) positive: &'a mut Vec<FlowIdx>,
    pub(super) classed: &'a mut Vec<FlowIdx>,
    // The position of the next flow in the order.
    pub(super) at: u32,
    // Links filled so far; once all are, the rest get 0 unread.
    pub(super) saturated: usize,
    // Per link class: how many of its links are not full; the classes
    // whose links are all full.
    pub(super) open: Vec<u32>,
    pub(super) full: Classes,
}

impl Fill<'_, '_> {
    /// Counts each class's links that are not full.
    pub(super) fn start(&mut self) {
        for (l, &r) in self.residual.iter().enumerate() {
            if r > self.floor {
                self.open[l % CLASSES] += 1;
            }
        }
        for c in 0..CLASSES {
            if self.open[c] == 0 {
                self.full[c / 64] |= 1 << (c % 64);
            }
        }
    }

    /// Whether every flow of a cluster with these [`Ends`] crosses a full
    /// link: all first links or all last links are full.
    #[inline(always)]
    pub(super) fn all_blocked(&self, ends: &Ends) -> bool {
        let within = |set: &Classes| set.iter().zip(&self.full).all(|(s, f)| s & !f == 0);
        within(&ends.first) || within(&ends.last)
    }

    /// Whether every class of `set` is full.
    #[inline(always)]
    pub(super) fn within_full(&self, set: &Classes) -> bool {
        set.iter().zip(&self.full).all(|(s, f)| s & !f == 0)
    }

    /// A cover of `flows` (see [`Chunk`]) by the classes full now: the
    /// class of each flow's first link if it is full, else of its last
    /// link if that is; or the position of the first flow with neither
    /// full (the flows before it are blocked).
    pub(super) fn cover(&self, flows: &[Kept]) -> Result<Classes, usize> {
        let mut cover = [0; WORDS];
        // As [`add_class`] finds a class: no division below `CLASSES`.
        let class_full = |l: u32| {
            let c = if (l as usize) < CLASSES {
                l as usize
            } else {
                l as usize % CLASSES
            };
            l != u32::MAX && self.full[c / 64] >> (c % 64) & 1 == 1
        };
        for (i, e) in flows.iter().enumerate() {
            if e.dead {
                continue;
            }
            if class_full(e.ends[0]) {
                add_class(&mut cover, e.ends[0]);
            } else if class_full(e.ends[1]) {
                add_class(&mut cover, e.ends[1]);
            } else {
                return Err(i);
            }
        }
        Ok(cover)
    }

    /// Notes that link `l` just became full.
    pub(super) fn filled(&mut self, l: usize) {
        self.saturated += 1;
        let c = l % CLASSES;
        self.open[c] -= 1;
        if self.open[c] == 0 {
            self.full[c / 64] |= 1 << (c % 64);
        }
    }

    /// Whether one of `links` (`u32::MAX` for none) is full.
    #[inline(always)]
    pub(super) fn any_full(&self, links: [u32; 2]) -> bool {
        let full = |l: u32| {
            self.residual
                .get(l as usize)
                .is_some_and(|&r| r <= self.floor)
        };
        full(links[0]) || full(links[1])
    }

    /// Gives flow `f` (whose path's first and last links are `ends`, or
    /// `u32::MAX` if unknown) the least residual capacity on its path;
    /// `fresh` is false only if the last fill did not give it a rate.
    #[inline(always)]
    pub(super) fn visit(&mut self, f: FlowIdx, ends: [u32; 2], fresh: bool) {
        if self.at < LAST_CLASS {
            self.out.set_class(f, self.at);
            self.classed.push(f);
        }
        self.at += 1;
        if self.saturated == self.residual.len() {
            self.pass(f, fresh);
            return;
        }
        if self.any_full(ends) {
            self.pass(f, fresh);
            return;
        }
        let floor = self.floor;
        let path = self.view.path_links(self.view.path_idx(f));
        let mut r = f64::INFINITY;
        for l in path {
            r = r.min(self.residual[l.0 as usize]);
        }
        if r <= floor {
            // Also a negative or NaN-free 0: the fill's `max(0.0)`.
            self.pass(f, fresh);
            return;
        }
        self.out.set_rate(f, r);
        for l in path {
            let res = &mut self.residual[l.0 as usize];
            *res -= r;
            if *res <= floor {
                *res = 0.0;
                self.filled(l.0 as usize);
            }
        }
        if self.out.rate(f) > 0.0 {
            self.positive.push(f);
        }
    }

    /// Visits the live flows of `flows` in turn; `fresh` as for
    /// [`Fill::visit`]. Past the classes, a flow that gets 0 and had 0
    /// needs no more than a look at its path's ends.
    #[inline(always)]
    pub(super) fn visit_all(&mut self, flows: &[Kept], fresh: bool) {
        if !fresh && self.at >= LAST_CLASS {
            for e in flows {
                if !e.dead && !self.any_full(e.ends) {
                    self.visit(e.f, e.ends, false);
                }
            }
        } else if self.at >= LAST_CLASS {
            for e in flows.iter().filter(|e| !e.dead) {
                if self.any_full(e.ends) {
                    self.pass(e.f, true);
                } else {
                    self.visit(e.f, e.ends, true);
                }
            }
        } else {
            for e in flows.iter().filter(|e| !e.dead) {
                self.visit(e.f, e.ends, fresh);
            }
        }
    }

    /// Flow `f` gets 0: a change only if the last fill gave it a rate.
    #[inline]
    pub(super) fn pass(&mut self, f: FlowIdx, fresh: bool) {
        if fresh && self.was_positive.get(f) {
            self.out.set_rate(f, 0.0);
        }
    }
}
