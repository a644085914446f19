//! Max-min fairness when every demand crosses exactly one row resource and
//! one column resource: the big switch, where a flow from host `s` to host
//! `d` crosses the ingress port of `s` (row) and the egress port of `d`
//! (column).
//!
//! Flow counts live in a dense row × column matrix updated as flows come
//! and go, so a solve never rebuilds per-demand state: progressive filling
//! picks the port with the lowest fair share by a scan of the ports still
//! in play, freezes its row (or column) of the matrix in one pass, and
//! records the level it froze at. A flow's rate is then the lower of its
//! two ports' levels, since levels only rise in freeze order. Cost per solve:
//! O((R + C)^2) for R rows and C columns, whatever the number of flows.

/// The lowest fair share `residual / weight` among the `live` ports (ties to
/// the lower port index) and its place in `live`; ports left with no
/// unfrozen flows are dropped from `live` on the way.
fn lowest_share(live: &mut Vec<u32>, residual: &[f64], weight: &[f64]) -> (f64, Option<usize>) {
    let mut best = f64::INFINITY;
    let mut at: Option<usize> = None;
    let mut i = 0;
    while i < live.len() {
        let p = live[i] as usize;
        if weight[p] <= 0.5 {
            live.swap_remove(i);
            continue;
        }
        let lv = residual[p].max(0.0) / weight[p];
        if lv < best || (lv == best && at.is_some_and(|j| p < live[j] as usize)) {
            best = lv;
            at = Some(i);
        }
        i += 1;
    }
    (best, at)
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
    row_live: Vec<u32>,
    col_live: Vec<u32>,
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
            ..Default::default()
        }
    }

    /// Adds one flow from row `r` to column `c`.
    pub fn add(&mut self, r: usize, c: usize) {
        self.count[r * self.n_cols + c] += 1;
        self.count_t[c * self.n_rows + r] += 1;
        self.row_n[r] += 1;
        self.col_n[c] += 1;
    }

    /// Removes one flow from row `r` to column `c` (there must be one).
    pub fn remove(&mut self, r: usize, c: usize) {
        self.count[r * self.n_cols + c] -= 1;
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
        self.row_live.clear();
        self.row_live
            .extend((0..nr as u32).filter(|&r| self.row_n[r as usize] > 0));
        self.col_live.clear();
        self.col_live
            .extend((0..nc as u32).filter(|&c| self.col_n[c as usize] > 0));
        let mut level: f64 = 0.0;
        loop {
            // The port with the lowest fair share; ties to rows, then lower index.
            let (row_best, row_at) = lowest_share(&mut self.row_live, &self.row_res, &self.row_w);
            let (col_best, col_at) = lowest_share(&mut self.col_live, &self.col_res, &self.col_w);
            let (best, pick) = match (row_at, col_at) {
                (Some(i), _) if row_best <= col_best => (row_best, Some((true, i))),
                (_, Some(i)) => (col_best, Some((false, i))),
                (Some(i), None) => (row_best, Some((true, i))),
                (None, None) => (f64::INFINITY, None),
            };
            let Some((is_row, i)) = pick else { break };
            level = level.max(best);
            if is_row {
                let r = self.row_live.swap_remove(i) as usize;
                row_level[r] = level;
                let row = &self.count[r * nc..(r + 1) * nc];
                for (c, &k) in row.iter().enumerate() {
                    if k > 0 && col_level[c] == f64::INFINITY {
                        let k = k as f64;
                        self.col_w[c] -= k;
                        self.col_res[c] -= k * level;
                    }
                }
            } else {
                let c = self.col_live.swap_remove(i) as usize;
                col_level[c] = level;
                let col = &self.count_t[c * nr..(c + 1) * nr];
                for (r, &k) in col.iter().enumerate() {
                    if k > 0 && row_level[r] == f64::INFINITY {
                        let k = k as f64;
                        self.row_w[r] -= k;
                        self.row_res[r] -= k * level;
                    }
                }
            }
        }
    }
}
