//! Max-min fairness when every demand crosses exactly one row resource and
//! one column resource: the big switch, where a flow from host `s` to host
//! `d` crosses the ingress port of `s` (row) and the egress port of `d`
//! (column).
//!
//! Flow counts live in a dense row × column matrix updated as flows come
//! and go, so a solve never rebuilds per-demand state: progressive filling
//! picks the port with the lowest fair share by a scan of the ports' shares
//! (kept per port, recomputed only for the ports a freeze touches, so a
//! step divides only there), freezes its row (or column) of the matrix in
//! one pass over its nonzero entries (kept in lists as flows come and go), and
//! records the level it froze at. A flow's rate is then the lower of its
//! two ports' levels, since levels only rise in freeze order. Cost of a
//! solve from scratch: O((R + C)^2 + E) for R rows, C columns and E nonzero
//! entries, whatever the number of flows.
//!
//! A solve does not start from scratch when it can restart: it keeps the
//! last solve's freeze order (port, share when picked, level) and an undo
//! log of the residuals and weights each step overwrote. The ports whose
//! flows changed since ("touched") are walked along the old order under
//! the new counts, in the same arithmetic a solve from scratch would use;
//! the first step that picks a touched port, or at which a touched port's
//! new share is at or below the share picked, is the first step that can
//! differ. Every step before it picks the same port at the same share and
//! makes the same updates, to the bit, so the solve undoes the log back to
//! that step and fills from there. An event then costs the steps after the
//! ports it touched, not the whole order (docs/benchmarks-history.md, issue
//! 35, branch fair35).
//!
//! Correctness properties:
//! - the levels equal those of progressive filling from scratch on the same
//!   counts and capacities, bit for bit (the restart replays nothing it did
//!   not prove unchanged; `tests/differential.rs`,
//!   `bipartite_restart_matches_scratch`);
//! - they are max-min fair (`bipartite_matches_reference`, against
//!   `reference::max_min`).

/// The lowest of `share` (ties to the lower index) and its index, or none
/// when every share is infinite (frozen or idle ports). A dense scan: on
/// FB2010's first 200 coflows it cost fewer instructions than a scan of a
/// list of live ports (docs/benchmarks-history.md, issue 35). It runs in
/// two passes, the lowest value over lanes of [`LANES`] (branch-free, so
/// the compiler keeps it in vector registers), then the first index that
/// holds it: the same pick as one pass that keeps the first strictly lower
/// share ([`lowest_share_reference`] in the tests), at a fraction of the
/// cost, since this scan runs once per port frozen, at every event.
fn lowest_share(share: &[f64]) -> (f64, Option<usize>) {
    let mut lanes = [f64::INFINITY; LANES];
    let chunks = share.chunks_exact(LANES);
    let mut best = chunks
        .remainder()
        .iter()
        .fold(f64::INFINITY, |m, &s| if s < m { s } else { m });
    for chunk in chunks {
        for (m, &s) in lanes.iter_mut().zip(chunk) {
            *m = if s < *m { s } else { *m };
        }
    }
    for &m in &lanes {
        best = if m < best { m } else { best };
    }
    if best == f64::INFINITY {
        return (best, None);
    }
    // Shares are never NaN (`share_of`), so the lowest value is at some
    // index; `==` also matches 0.0 against -0.0, as `<` ties them.
    let at = share.iter().position(|&s| s == best);
    (at.map_or(best, |p| share[p]), at)
}

/// Lanes of [`lowest_share`]'s first pass.
const LANES: usize = 8;

/// Lists of the nonzero entries of each row (or column) of a count matrix,
/// each entry with its place in its list.
#[derive(Debug, Clone, Default)]
struct Nonzero {
    lists: Vec<Vec<u32>>,
    at: Vec<u32>,
}

impl Nonzero {
    fn new(n_lists: usize, n_entries: usize) -> Nonzero {
        Nonzero {
            lists: vec![vec![]; n_lists],
            at: vec![0; n_entries],
        }
    }

    /// Lists `j` in list `i` (entry `e`).
    fn insert(&mut self, i: usize, j: usize, e: usize) {
        self.at[e] = self.lists[i].len() as u32;
        self.lists[i].push(j as u32);
    }

    /// Takes entry `e` (`j` of list `i`) out; `entry(i, k)` names the
    /// entry of `k` in list `i`.
    fn remove(&mut self, i: usize, e: usize, entry: impl Fn(usize, usize) -> usize) {
        let at = self.at[e] as usize;
        let list = &mut self.lists[i];
        list.swap_remove(at);
        if let Some(&k) = list.get(at) {
            self.at[entry(i, k as usize)] = at as u32;
        }
    }
}

/// A live port's fair share `residual / weight`, infinite for a port with
/// no unfrozen flows.
#[inline]
fn share_of(residual: f64, weight: f64) -> f64 {
    if weight <= 0.5 {
        f64::INFINITY
    } else {
        residual.max(0.0) / weight
    }
}

/// Max-min fair levels over a row × column count matrix; see the module doc.
#[derive(Debug, Clone, Default)]
pub struct BipartiteMaxMin {
    n_rows: usize,
    n_cols: usize,
    count: Vec<u32>,
    count_t: Vec<u32>,
    // Flows per port: the rows, then the columns (port `n_rows + c` is
    // column `c`); every per-port vector below is indexed the same way.
    n: Vec<u64>,
    // The nonzero columns of each row, and rows of each column.
    row_nz: Nonzero,
    col_nz: Nonzero,
    // The last solve, kept so that the next one restarts at the first step a
    // change can reach: whether there was one, its capacities, and per port
    // the residual capacity, unfrozen flows, fair share and level (infinite
    // while unfrozen) as they stand after its last step.
    solved: bool,
    cap: Vec<f64>,
    res: Vec<f64>,
    w: Vec<f64>,
    share: Vec<f64>,
    level: Vec<f64>,
    // Its freeze order, and the undo log of the residuals and weights each
    // step overwrote, step after step.
    steps: Vec<Step>,
    log: Vec<Undo>,
    // Ports whose flows changed since the last solve.
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    // Scratch of `first_changed_step`: each touched port with its residual,
    // weight and share under the new counts.
    walk: Vec<(u32, f64, f64, f64)>,
}

/// One step of progressive filling: the port it froze, that port's fair
/// share when picked, the level it froze at, and where the step's entries
/// in the undo log begin.
#[derive(Debug, Clone, Copy)]
struct Step {
    port: u32,
    best: f64,
    level: f64,
    log_from: u32,
}

/// A port's residual capacity before a step changed it, and the flows it
/// had to the step's port (the weight the step took off it). Both are still
/// right under the new counts for a port the restart did not touch: a count
/// changes only between two touched ports, and the residual depends only
/// on the port's flows to ports frozen before, which the restart proved
/// untouched. A touched port's residual and weight are recomputed anyway.
#[derive(Debug, Clone, Copy)]
struct Undo {
    port: u32,
    k: u32,
    res: f64,
}

impl BipartiteMaxMin {
    /// An empty matrix of `n_rows` rows and `n_cols` columns.
    pub fn new(n_rows: usize, n_cols: usize) -> BipartiteMaxMin {
        BipartiteMaxMin {
            n_rows,
            n_cols,
            count: vec![0; n_rows * n_cols],
            count_t: vec![0; n_rows * n_cols],
            n: vec![0; n_rows + n_cols],
            row_nz: Nonzero::new(n_rows, n_rows * n_cols),
            col_nz: Nonzero::new(n_cols, n_rows * n_cols),
            is_touched: vec![false; n_rows + n_cols],
            ..Default::default()
        }
    }

    fn touch(&mut self, p: usize) {
        if !self.is_touched[p] {
            self.is_touched[p] = true;
            self.touched.push(p as u32);
        }
    }

    /// Adds one flow from row `r` to column `c`.
    pub fn add(&mut self, r: usize, c: usize) {
        if self.count[r * self.n_cols + c] == 0 {
            self.row_nz.insert(r, c, r * self.n_cols + c);
            self.col_nz.insert(c, r, c * self.n_rows + r);
        }
        self.count[r * self.n_cols + c] += 1;
        self.count_t[c * self.n_rows + r] += 1;
        self.n[r] += 1;
        self.n[self.n_rows + c] += 1;
        self.touch(r);
        self.touch(self.n_rows + c);
    }

    /// Removes one flow from row `r` to column `c` (there must be one).
    pub fn remove(&mut self, r: usize, c: usize) {
        self.count[r * self.n_cols + c] -= 1;
        if self.count[r * self.n_cols + c] == 0 {
            let (nr, nc) = (self.n_rows, self.n_cols);
            self.row_nz.remove(r, r * nc + c, |i, k| i * nc + k);
            self.col_nz.remove(c, c * nr + r, |i, k| i * nr + k);
        }
        self.count_t[c * self.n_rows + r] -= 1;
        self.n[r] -= 1;
        self.n[self.n_rows + c] -= 1;
        self.touch(r);
        self.touch(self.n_rows + c);
    }

    /// Number of flows from row `r` to column `c`.
    pub fn count(&self, r: usize, c: usize) -> u32 {
        self.count[r * self.n_cols + c]
    }

    /// Fills `row_level` and `col_level` with the level each port froze at
    /// (infinity for a port that is nobody's bottleneck) under capacities
    /// `row_cap` and `col_cap`. The max-min rate of a flow from `r` to `c` is
    /// `min(row_level[r], col_level[c])`. Restarts from the last solve where
    /// it can (see the module doc); the levels are the same to the bit.
    pub fn solve(
        &mut self,
        row_cap: &[f64],
        col_cap: &[f64],
        row_level: &mut Vec<f64>,
        col_level: &mut Vec<f64>,
    ) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        let same_caps = self.solved
            && row_cap[..nr]
                .iter()
                .chain(&col_cap[..nc])
                .zip(&self.cap)
                .all(|(a, b)| a.to_bits() == b.to_bits());
        let k = if same_caps {
            self.first_changed_step()
        } else {
            0
        };
        if k == 0 {
            self.start(row_cap, col_cap);
        } else {
            self.rewind(k);
        }
        self.fill();
        self.solved = true;
        for &p in &self.touched {
            self.is_touched[p as usize] = false;
        }
        self.touched.clear();
        row_level.clear();
        row_level.extend_from_slice(&self.level[..nr]);
        col_level.clear();
        col_level.extend_from_slice(&self.level[nr..]);
    }

    /// The state before the first step of a solve from scratch.
    fn start(&mut self, row_cap: &[f64], col_cap: &[f64]) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        self.cap.clear();
        self.cap.extend_from_slice(&row_cap[..nr]);
        self.cap.extend_from_slice(&col_cap[..nc]);
        self.res.clone_from(&self.cap);
        self.w.clear();
        self.w.extend(self.n.iter().map(|&n| n as f64));
        self.share.clear();
        self.share
            .extend(self.res.iter().zip(&self.w).map(|(&r, &w)| share_of(r, w)));
        self.level.clear();
        self.level.resize(nr + nc, f64::INFINITY);
        self.steps.clear();
        self.log.clear();
    }

    /// The first step of the last solve's order that the changes since can
    /// alter (see the module doc), or the number of steps if none: the
    /// touched ports are walked along the order under the new counts, in
    /// the arithmetic of a solve from scratch, and `walk` holds them as they
    /// stand before the step returned.
    fn first_changed_step(&mut self) -> usize {
        let (nr, nc) = (self.n_rows, self.n_cols);
        self.walk.clear();
        for &p in &self.touched {
            let (res, w) = (self.cap[p as usize], self.n[p as usize] as f64);
            self.walk.push((p, res, w, share_of(res, w)));
        }
        let mut low = self.walk.iter().fold(f64::INFINITY, |m, e| m.min(e.3));
        for (k, st) in self.steps.iter().enumerate() {
            if self.is_touched[st.port as usize] || low <= st.best {
                return k;
            }
            let p = st.port as usize;
            let mut moved = false;
            for e in self.walk.iter_mut() {
                let q = e.0 as usize;
                let n_pair = match (p < nr, q < nr) {
                    (true, false) => self.count[p * nc + (q - nr)],
                    (false, true) => self.count[q * nc + (p - nr)],
                    _ => 0,
                };
                if n_pair > 0 {
                    let k = n_pair as f64;
                    e.2 -= k;
                    e.1 -= k * st.level;
                    e.3 = share_of(e.1, e.2);
                    moved = true;
                }
            }
            if moved {
                low = self.walk.iter().fold(f64::INFINITY, |m, e| m.min(e.3));
            }
        }
        self.steps.len()
    }

    /// The state before step `k` under the new counts: the log undone back
    /// to it, the ports it and later steps froze unfrozen, and the touched
    /// ports as `first_changed_step` left them.
    fn rewind(&mut self, k: usize) {
        let from = self
            .steps
            .get(k)
            .map_or(self.log.len(), |st| st.log_from as usize);
        for u in self.log[from..].iter().rev() {
            self.res[u.port as usize] = u.res;
            self.w[u.port as usize] += u.k as f64;
        }
        for st in &self.steps[k..] {
            self.level[st.port as usize] = f64::INFINITY;
        }
        for &(p, res, w, _) in &self.walk {
            self.res[p as usize] = res;
            self.w[p as usize] = w;
        }
        // Once per port, not per entry undone: a port is in the log once per
        // step that froze one of its neighbours.
        for ((share, &level), (&res, &w)) in self
            .share
            .iter_mut()
            .zip(&self.level)
            .zip(self.res.iter().zip(&self.w))
        {
            if level == f64::INFINITY {
                *share = share_of(res, w);
            }
        }
        self.steps.truncate(k);
        self.log.truncate(from);
    }

    /// Progressive filling from the current state to the end, logging each
    /// step.
    fn fill(&mut self) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        let mut level = self.steps.last().map_or(0.0, |st| st.level);
        loop {
            // The port with the lowest fair share; ties to rows, then lower index.
            let (row_best, row_at) = lowest_share(&self.share[..nr]);
            let (col_best, col_at) = lowest_share(&self.share[nr..]);
            let (best, p) = match (row_at, col_at) {
                (Some(i), _) if row_best <= col_best => (row_best, i),
                (_, Some(j)) => (col_best, nr + j),
                (Some(i), None) => (row_best, i),
                (None, None) => break,
            };
            level = level.max(best);
            self.steps.push(Step {
                port: p as u32,
                best,
                level,
                log_from: self.log.len() as u32,
            });
            self.level[p] = level;
            self.share[p] = f64::INFINITY;
            let (list, row, base) = if p < nr {
                (&self.row_nz.lists[p], &self.count[p * nc..(p + 1) * nc], nr)
            } else {
                let c = p - nr;
                (
                    &self.col_nz.lists[c],
                    &self.count_t[c * nr..(c + 1) * nr],
                    0,
                )
            };
            for &j in list {
                let q = base + j as usize;
                if self.level[q] == f64::INFINITY {
                    let n_pair = row[j as usize];
                    self.log.push(Undo {
                        port: q as u32,
                        k: n_pair,
                        res: self.res[q],
                    });
                    let k = n_pair as f64;
                    self.w[q] -= k;
                    self.res[q] -= k * level;
                    self.share[q] = share_of(self.res[q], self.w[q]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The slow reference of [`lowest_share`]: one pass keeping the first
    /// strictly lower share.
    fn lowest_share_reference(share: &[f64]) -> (f64, Option<usize>) {
        let mut best = f64::INFINITY;
        let mut at = None;
        for (p, &s) in share.iter().enumerate() {
            if s < best {
                best = s;
                at = Some(p);
            }
        }
        (best, at)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]
        /// Same value (to the bit) and index as the reference, on shares
        /// with many ties, signed zeros and infinite (frozen) ports, across
        /// lengths around the lane width.
        #[test]
        fn lowest_share_matches_reference(share in prop::collection::vec(prop_oneof![
            Just(f64::INFINITY), Just(0.0), Just(-0.0), Just(1.5), Just(2.0), 0.0f64..4.0,
        ], 0..40)) {
            let (best, at) = lowest_share(&share);
            let (want, want_at) = lowest_share_reference(&share);
            prop_assert_eq!(at, want_at);
            prop_assert_eq!(best.to_bits(), want.to_bits());
        }
    }
}
