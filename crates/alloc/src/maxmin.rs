//! Weighted max-min fairness by progressive filling.
//!
//! All unfrozen demands grow together, demand `d` at `weight(d) * level`.
//! A link saturates at level `residual(l) / W(l)`, where `W(l)` is the total
//! unfrozen weight (weight times count) through it; a demand's cap is reached
//! at `cap(d) / weight(d)`. The lowest such level is applied, the demands it
//! binds are frozen, and their use is taken from every link they cross. A
//! binary heap keyed by level (ties by link index) with lazy deletion gives
//! O((D * P + L) log L) per call for D demands of path length P.
//!
//! Link state lives in arrays sized once for the fabric and reset lazily by
//! an epoch stamp, so a call costs nothing for links it does not touch.

use coflowkit_model::LinkId;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Fabrics touching at most this many links are filled by linear scans.
const SCAN_LIMIT: usize = 512;

/// A reusable weighted max-min solver; see the module doc.
#[derive(Debug, Default, Clone)]
pub struct MaxMin {
    scan_limit: Option<usize>,
    one_by_one: bool,
    // Demands, in push order.
    path_start: Vec<u32>,
    paths: Vec<u32>,
    weight: Vec<f64>,
    count: Vec<f64>,
    cap: Vec<f64>,
    rate: Vec<f64>,
    frozen: Vec<bool>,
    // Per link, valid when `stamp[l] == epoch`.
    stamp: Vec<u32>,
    epoch: u32,
    link_weight: Vec<f64>,
    link_version: Vec<u32>,
    link_first: Vec<u32>,
    link_end: Vec<u32>,
    // CSR link -> demands, rebuilt each solve.
    adj: Vec<u32>,
    touched: Vec<u32>,
    heap: BinaryHeap<Entry>,
    // The last solve's trace: the links it picked as bottlenecks (in
    // order), its demands in freeze order, and whether the trace is one
    // `MaxMin::trace` can vouch for.
    picked: Vec<u32>,
    freeze_order: Vec<u32>,
    traced: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    level: f64,
    // Links are keyed 0..L; caps are keyed L + demand.
    key: u32,
    version: u32,
}

impl Eq for Entry {}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on (level, key).
        o.level
            .total_cmp(&self.level)
            .then_with(|| o.key.cmp(&self.key))
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The trace of a [`MaxMin`] solve ([`MaxMin::trace`]).
#[derive(Debug, Clone, Copy)]
pub struct Trace<'a> {
    solver: &'a MaxMin,
}

impl<'a> Trace<'a> {
    /// The links the solve picked as bottlenecks, in order.
    pub fn picked(&self) -> &'a [u32] {
        &self.solver.picked
    }

    /// Each demand in freeze order: its links and the use it took from
    /// each of them (rate times count).
    pub fn uses(&self) -> impl Iterator<Item = (&'a [u32], f64)> + 'a {
        let m = self.solver;
        m.freeze_order.iter().map(move |&d| {
            let d = d as usize;
            let s = m.path_start[d] as usize;
            let e = m
                .path_start
                .get(d + 1)
                .map_or(m.paths.len(), |&x| x as usize);
            (&m.paths[s..e], m.rate[d] * m.count[d])
        })
    }
}

impl MaxMin {
    /// A solver for a fabric of `n_links` links.
    pub fn new(n_links: usize) -> MaxMin {
        let mut m = MaxMin::default();
        m.resize(n_links);
        m
    }

    fn resize(&mut self, n_links: usize) {
        if self.stamp.len() < n_links {
            self.stamp.resize(n_links, 0);
            self.link_weight.resize(n_links, 0.0);
            self.link_version.resize(n_links, 0);
            self.link_first.resize(n_links, 0);
            self.link_end.resize(n_links, 0);
        }
    }

    /// Uses linear scans up to `links` touched links and a heap beyond
    /// (both are exact; tests force each).
    pub fn set_scan_limit(&mut self, links: usize) {
        self.scan_limit = Some(links);
    }

    /// Takes a demand's use from each link one flow at a time, as if its
    /// `count` flows had been pushed as demands of their own (each
    /// subtraction clamped at 0), so that flows of one path pushed as one
    /// demand get, bit for bit, the rates and residuals they would get
    /// pushed one by one, in any order. Exact only while no demand has a
    /// cap: demands frozen together then all take the same rate.
    pub fn set_one_by_one(&mut self, on: bool) {
        self.one_by_one = on;
    }

    /// Forgets all demands.
    pub fn clear(&mut self) {
        self.path_start.clear();
        self.paths.clear();
        self.weight.clear();
        self.count.clear();
        self.cap.clear();
    }

    /// Number of demands pushed since the last clear.
    pub fn len(&self) -> usize {
        self.weight.len()
    }

    /// Whether no demand was pushed.
    pub fn is_empty(&self) -> bool {
        self.weight.is_empty()
    }

    /// Adds `count` identical flows over `path` (link indices), each with
    /// `weight` > 0 and a per-flow rate cap (`f64::INFINITY` for none).
    /// Returns the demand's index.
    pub fn push(
        &mut self,
        path: impl IntoIterator<Item = LinkId>,
        weight: f64,
        count: u32,
        cap: f64,
    ) -> usize {
        self.path_start.push(self.paths.len() as u32);
        self.paths.extend(path.into_iter().map(|l| l.0));
        self.weight.push(weight);
        self.count.push(count as f64);
        self.cap.push(cap);
        self.weight.len() - 1
    }

    /// The per-flow rate of each demand after the last [`MaxMin::solve`].
    pub fn rates(&self) -> &[f64] {
        &self.rate
    }

    /// The last solve's trace, when it can vouch for one (filled by scans,
    /// no caps, not one by one): the links it picked as bottlenecks, and
    /// each demand in freeze order as its links and the use it took from
    /// each of them (rate times count).
    ///
    /// Given the same demands, a solve on residuals equal to the bit on
    /// the picked links and no lower on the others picks the same links in
    /// the same order and gives the same rates, to the bit: a link's fair
    /// share at each step is its residual less what earlier freezes took
    /// (rounding is monotone), divided by the same weight, so the links
    /// not picked stay above the share picked (or tied at a higher index).
    /// The residual it leaves on a link not picked is its residual less
    /// each use in turn, clamped at 0, as [`MaxMin::solve`] takes them.
    pub fn trace(&self) -> Option<Trace<'_>> {
        self.traced.then_some(Trace { solver: self })
    }

    /// Computes the weighted max-min rates of the pushed demands over
    /// `residual` (bits/s per link) and subtracts what they use from it.
    pub fn solve(&mut self, residual: &mut [f64]) -> &[f64] {
        let n = self.weight.len();
        self.resize(residual.len());
        self.rate.clear();
        self.rate.resize(n, 0.0);
        self.frozen.clear();
        self.frozen.resize(n, false);
        self.picked.clear();
        self.freeze_order.clear();
        self.traced = false;
        if n == 0 {
            return &self.rate;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        // Per-link unfrozen weight and the CSR adjacency.
        self.touched.clear();
        for d in 0..n {
            let wc = self.weight[d] * self.count[d];
            let s = self.path_start[d] as usize;
            let e = self
                .path_start
                .get(d + 1)
                .map_or(self.paths.len(), |&x| x as usize);
            for &l in &self.paths[s..e] {
                let l = l as usize;
                if self.stamp[l] != epoch {
                    self.stamp[l] = epoch;
                    self.link_weight[l] = 0.0;
                    self.link_version[l] = 0;
                    self.link_first[l] = 0;
                    self.touched.push(l as u32);
                }
                self.link_weight[l] += wc;
                self.link_first[l] += 1;
            }
        }
        // Build CSR: link_first[l] becomes the start offset of l's demands.
        self.touched.sort_unstable();
        let mut off = 0u32;
        for &l in &self.touched {
            let c = self.link_first[l as usize];
            self.link_first[l as usize] = off;
            off += c;
            self.link_end[l as usize] = off;
        }
        self.adj.clear();
        self.adj.resize(off as usize, 0);
        // Fill positions; reuse link_version as a cursor temporarily.
        for d in 0..n {
            let s = self.path_start[d] as usize;
            let e = self
                .path_start
                .get(d + 1)
                .map_or(self.paths.len(), |&x| x as usize);
            for &l in &self.paths[s..e] {
                let l = l as usize;
                let pos = self.link_first[l] + self.link_version[l];
                self.adj[pos as usize] = d as u32;
                self.link_version[l] += 1;
            }
        }
        if self.touched.len() <= self.scan_limit.unwrap_or(SCAN_LIMIT) {
            self.traced = !self.one_by_one && self.cap.iter().all(|c| c.is_infinite());
            self.fill_by_scan(residual);
        } else {
            self.fill_by_heap(residual);
        }
        &self.rate
    }

    /// Progressive filling choosing the next bottleneck by a linear scan of
    /// the links still in play: for fabrics of a few hundred links this
    /// beats a heap, whose entries every freeze would make stale.
    fn fill_by_scan(&mut self, residual: &mut [f64]) {
        let n = self.weight.len();
        let mut live = std::mem::take(&mut self.touched);
        let mut capped: Vec<(f64, usize)> = (0..n)
            .filter(|&d| self.cap[d].is_finite())
            .map(|d| (self.cap[d].max(0.0) / self.weight[d], d))
            .collect();
        capped.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut next_cap = 0;
        let mut n_frozen = 0;
        let mut level: f64 = 0.0;
        while n_frozen < n {
            let mut best = f64::INFINITY;
            let mut best_i = usize::MAX;
            let mut i = 0;
            while i < live.len() {
                let l = live[i] as usize;
                let w = self.link_weight[l];
                if w <= 1e-12 {
                    live.swap_remove(i);
                    continue;
                }
                let lv = residual[l].max(0.0) / w;
                if lv < best || (lv == best && live[i] < live[best_i]) {
                    best = lv;
                    best_i = i;
                }
                i += 1;
            }
            while next_cap < capped.len() && self.frozen[capped[next_cap].1] {
                next_cap += 1;
            }
            if next_cap < capped.len() && capped[next_cap].0 <= best {
                let (lv, d) = capped[next_cap];
                level = level.max(lv);
                self.freeze(d, level, residual, false);
                n_frozen += 1;
                continue;
            }
            if best_i == usize::MAX {
                break;
            }
            level = level.max(best);
            let l = live.swap_remove(best_i) as usize;
            self.picked.push(l as u32);
            for k in self.link_first[l] as usize..self.link_end[l] as usize {
                let d = self.adj[k] as usize;
                if !self.frozen[d] {
                    self.freeze(d, level, residual, false);
                    n_frozen += 1;
                }
            }
        }
        self.touched = live;
    }

    /// Progressive filling with a heap of link levels (lazy deletion by
    /// version), for large fabrics.
    fn fill_by_heap(&mut self, residual: &mut [f64]) {
        let n = self.weight.len();
        let n_links = residual.len() as u32;
        self.heap.clear();
        for &l in &self.touched {
            let li = l as usize;
            self.link_version[li] = 0;
            let level = (residual[li].max(0.0)) / self.link_weight[li];
            self.heap.push(Entry {
                level,
                key: l,
                version: 0,
            });
        }
        for d in 0..n {
            if self.cap[d].is_finite() {
                let level = self.cap[d].max(0.0) / self.weight[d];
                self.heap.push(Entry {
                    level,
                    key: n_links + d as u32,
                    version: 0,
                });
            }
        }
        let mut n_frozen = 0;
        while let Some(Entry {
            level,
            key,
            version,
        }) = self.heap.pop()
        {
            if n_frozen == n {
                break;
            }
            if key >= n_links {
                let d = (key - n_links) as usize;
                if !self.frozen[d] {
                    self.freeze(d, level, residual, true);
                    n_frozen += 1;
                }
                continue;
            }
            let l = key as usize;
            if version != self.link_version[l] {
                continue;
            }
            for i in self.link_first[l] as usize..self.link_end[l] as usize {
                let d = self.adj[i] as usize;
                if !self.frozen[d] {
                    self.freeze(d, level, residual, true);
                    n_frozen += 1;
                }
            }
        }
    }

    fn freeze(&mut self, d: usize, level: f64, residual: &mut [f64], push: bool) {
        self.frozen[d] = true;
        self.freeze_order.push(d as u32);
        let r = (self.weight[d] * level).min(self.cap[d]).max(0.0);
        self.rate[d] = r;
        let wc = self.weight[d] * self.count[d];
        let use_ = r * self.count[d];
        let s = self.path_start[d] as usize;
        let e = self
            .path_start
            .get(d + 1)
            .map_or(self.paths.len(), |&x| x as usize);
        for i in s..e {
            let l = self.paths[i] as usize;
            if self.one_by_one {
                // x - r - r - ...: once at 0 it stays there.
                let mut n = self.count[d] as u64;
                while n > 0 && r > 0.0 && residual[l] > 0.0 {
                    residual[l] = (residual[l] - r).max(0.0);
                    n -= 1;
                }
            } else {
                residual[l] -= use_;
                if residual[l] < 0.0 {
                    residual[l] = 0.0;
                }
            }
            self.link_weight[l] -= wc;
            if !push {
                continue;
            }
            self.link_version[l] += 1;
            if self.link_weight[l] > 1e-12 {
                let lv = residual[l] / self.link_weight[l];
                // Levels never go below the current one (float noise aside).
                let lv = lv.max(level);
                self.heap.push(Entry {
                    level: lv,
                    key: l as u32,
                    version: self.link_version[l],
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    fn p(ls: &[u32]) -> Vec<LinkId> {
        ls.iter().map(|&l| LinkId(l)).collect()
    }

    #[test]
    fn two_flows_share_a_port() {
        let mut m = MaxMin::new(4);
        m.push(p(&[0, 1]), 1.0, 1, f64::INFINITY);
        m.push(p(&[0, 3]), 1.0, 1, f64::INFINITY);
        m.push(p(&[2, 3]), 1.0, 1, f64::INFINITY);
        let mut res = vec![1.0; 4];
        let r = m.solve(&mut res).to_vec();
        assert_eq!(r, vec![0.5, 0.5, 0.5]);
        assert_eq!(res, vec![0.0, 0.5, 0.5, 0.0]);
    }

    #[test]
    fn counts_weights_and_caps() {
        let mut m = MaxMin::new(2);
        m.push(p(&[0]), 1.0, 3, f64::INFINITY); // three flows
        m.push(p(&[0]), 2.0, 1, f64::INFINITY); // one flow of weight 2
        let mut res = vec![10.0, 10.0];
        let r = m.solve(&mut res).to_vec();
        assert_eq!(r, vec![2.0, 4.0]);
        m.clear();
        m.push(p(&[0]), 1.0, 1, 1.0);
        m.push(p(&[0]), 1.0, 1, f64::INFINITY);
        let mut res = vec![10.0, 10.0];
        assert_eq!(m.solve(&mut res).to_vec(), vec![1.0, 9.0]);
    }

    /// A solve on residuals equal on the links the last solve picked and no
    /// lower on the others gives the same rates, to the bit, and leaves on
    /// each link what replaying the trace's uses gives (the claim of
    /// [`MaxMin::trace`]), on random instances of a 6-port big switch.
    #[test]
    fn trace_replays_on_raised_residuals() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        for _ in 0..2_000 {
            let n_demands = 1 + rnd(12) as usize;
            let mut m = MaxMin::new(12);
            for _ in 0..n_demands {
                let path = [rnd(6) as u32, 6 + rnd(6) as u32];
                m.push(p(&path), 1.0, 1 + rnd(3) as u32, f64::INFINITY);
            }
            let caps: Vec<f64> = (0..12).map(|_| 1e9 * (1 + rnd(10)) as f64 / 3.0).collect();
            let mut res = caps.clone();
            m.solve(&mut res);
            let trace = m.trace().expect("scan fill, no caps");
            let picked = trace.picked().to_vec();
            let uses: Vec<(Vec<u32>, f64)> = trace.uses().map(|(pa, u)| (pa.to_vec(), u)).collect();
            let rates = m.rates().to_vec();
            let raised: Vec<f64> = (0..12u32)
                .map(|l| {
                    let c = caps[l as usize];
                    if picked.contains(&l) {
                        c
                    } else {
                        c + 1e9 * rnd(4) as f64 / 7.0
                    }
                })
                .collect();
            let mut res2 = raised.clone();
            let rates2 = m.solve(&mut res2).to_vec();
            let bits = |v: &[f64]| v.iter().map(|r| r.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&rates), bits(&rates2));
            for l in 0..12u32 {
                let replayed = uses
                    .iter()
                    .filter(|(pa, _)| pa.contains(&l))
                    .fold(raised[l as usize], |r, &(_, u)| (r - u).max(0.0));
                assert_eq!(replayed.to_bits(), res2[l as usize].to_bits());
            }
        }
    }

    /// Flows of one path pushed as one demand with `set_one_by_one` get,
    /// bit for bit, the rates and residuals of pushing each flow alone (no
    /// caps), on random instances of a 6-port big switch.
    #[test]
    fn one_by_one_matches_flows_pushed_apart() {
        // proptest's deterministic generator: the same instances every run.
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        for _ in 0..2_000 {
            let n_flows = 1 + rnd(40) as usize;
            let flows: Vec<[u32; 2]> = (0..n_flows)
                .map(|_| [rnd(6) as u32, 6 + rnd(6) as u32])
                .collect();
            let caps: Vec<f64> = (0..12).map(|_| 1e9 * (1 + rnd(10)) as f64 / 3.0).collect();
            let mut apart = MaxMin::new(12);
            for fl in &flows {
                apart.push(p(fl), 1.0, 1, f64::INFINITY);
            }
            let mut res_apart = caps.clone();
            let rates_apart = apart.solve(&mut res_apart).to_vec();
            let mut paths: Vec<[u32; 2]> = flows.clone();
            paths.sort_unstable();
            paths.dedup();
            let mut grouped = MaxMin::new(12);
            grouped.set_one_by_one(true);
            for pa in &paths {
                let n = flows.iter().filter(|fl| *fl == pa).count() as u32;
                grouped.push(p(pa), 1.0, n, f64::INFINITY);
            }
            let mut res_grouped = caps.clone();
            let rates_grouped = grouped.solve(&mut res_grouped).to_vec();
            for (fl, r) in flows.iter().zip(&rates_apart) {
                let d = paths.binary_search(fl).unwrap();
                assert_eq!(r.to_bits(), rates_grouped[d].to_bits());
            }
            let bits = |v: &[f64]| v.iter().map(|r| r.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&res_apart), bits(&res_grouped));
        }
    }
}
