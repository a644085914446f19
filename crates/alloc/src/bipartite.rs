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
//! two ports' levels, since levels only rise in freeze order. Cost per solve:
//! O((R + C)^2 + E) for R rows, C columns and E nonzero entries, whatever
//! the number of flows.

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
    row_n: Vec<u64>,
    col_n: Vec<u64>,
    // Scratch.
    row_res: Vec<f64>,
    col_res: Vec<f64>,
    row_w: Vec<f64>,
    col_w: Vec<f64>,
    row_share: Vec<f64>,
    col_share: Vec<f64>,
    // The nonzero columns of each row, and rows of each column.
    row_nz: Nonzero,
    col_nz: Nonzero,
}

impl BipartiteMaxMin {
    /// An empty matrix of `n_rows` rows and `n_cols` columns.
    pub fn new(n_rows: usize, n_cols: usize) -> BipartiteMaxMin {
        BipartiteMaxMin {
            n_rows,
            n_cols,
            count: vec![0; n_rows * n_cols],
            count_t: vec![0; n_rows * n_cols],
            row_n: vec![0; n_rows],
            col_n: vec![0; n_cols],
            row_nz: Nonzero::new(n_rows, n_rows * n_cols),
            col_nz: Nonzero::new(n_cols, n_rows * n_cols),
            ..Default::default()
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
        self.row_n[r] += 1;
        self.col_n[c] += 1;
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
        self.row_n[r] -= 1;
        self.col_n[c] -= 1;
    }

    /// Number of flows from row `r` to column `c`.
    pub fn count(&self, r: usize, c: usize) -> u32 {
        self.count[r * self.n_cols + c]
    }

    /// Fills `row_level` and `col_level` with the level each port froze at
    /// (infinity for a port that is nobody's bottleneck) under capacities
    /// `row_cap` and `col_cap`. The max-min rate of a flow from `r` to `c` is
    /// `min(row_level[r], col_level[c])`.
    pub fn solve(
        &mut self,
        row_cap: &[f64],
        col_cap: &[f64],
        row_level: &mut Vec<f64>,
        col_level: &mut Vec<f64>,
    ) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        row_level.clear();
        row_level.resize(nr, f64::INFINITY);
        col_level.clear();
        col_level.resize(nc, f64::INFINITY);
        self.row_res.clear();
        self.row_res.extend_from_slice(&row_cap[..nr]);
        self.col_res.clear();
        self.col_res.extend_from_slice(&col_cap[..nc]);
        self.row_w.clear();
        self.row_w.extend(self.row_n.iter().map(|&n| n as f64));
        self.col_w.clear();
        self.col_w.extend(self.col_n.iter().map(|&n| n as f64));
        self.row_share.clear();
        self.row_share.extend(
            self.row_res
                .iter()
                .zip(&self.row_w)
                .map(|(&r, &w)| share_of(r, w)),
        );
        self.col_share.clear();
        self.col_share.extend(
            self.col_res
                .iter()
                .zip(&self.col_w)
                .map(|(&r, &w)| share_of(r, w)),
        );
        let mut level: f64 = 0.0;
        loop {
            // The port with the lowest fair share; ties to rows, then lower index.
            let (row_best, row_at) = lowest_share(&self.row_share);
            let (col_best, col_at) = lowest_share(&self.col_share);
            let (best, pick) = match (row_at, col_at) {
                (Some(i), _) if row_best <= col_best => (row_best, Some((true, i))),
                (_, Some(i)) => (col_best, Some((false, i))),
                (Some(i), None) => (row_best, Some((true, i))),
                (None, None) => (f64::INFINITY, None),
            };
            let Some((is_row, p)) = pick else { break };
            level = level.max(best);
            if is_row {
                row_level[p] = level;
                self.row_share[p] = f64::INFINITY;
                let row = &self.count[p * nc..(p + 1) * nc];
                for &c in &self.row_nz.lists[p] {
                    let c = c as usize;
                    if col_level[c] == f64::INFINITY {
                        let k = row[c] as f64;
                        self.col_w[c] -= k;
                        self.col_res[c] -= k * level;
                        self.col_share[c] = share_of(self.col_res[c], self.col_w[c]);
                    }
                }
            } else {
                col_level[p] = level;
                self.col_share[p] = f64::INFINITY;
                let col = &self.count_t[p * nr..(p + 1) * nr];
                for &r in &self.col_nz.lists[p] {
                    let r = r as usize;
                    if row_level[r] == f64::INFINITY {
                        let k = col[r] as f64;
                        self.row_w[r] -= k;
                        self.row_res[r] -= k * level;
                        self.row_share[r] = share_of(self.row_res[r], self.row_w[r]);
                    }
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
