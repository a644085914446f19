//! Weighted max-min fairness when every demand crosses one row resource and
//! one column resource (the big switch), over a dense matrix of weights, with
//! the capacity each row and column gives away.
//!
//! A cell `(r, c)` holds the demands from row `r` to column `c`: their number
//! and their total weight. Progressive filling raises a common level; a
//! demand of weight `w` gets `w * level` until a row or column it crosses is
//! full. As in [`crate::BipartiteMaxMin`], the port with the lowest fair
//! share `residual / unfrozen weight` is found by a scan of the ports still in
//! play, its row (or column) of the matrix is frozen in one pass over the
//! columns (rows) still in play, and the level it froze at is recorded: a
//! demand's rate is `w * min(row level, column level)`. The same passes add
//! up what each row and column gives away. Cost per solve: O((R + C)^2) for
//! R rows and C columns, less when most ports are full (they freeze at 0
//! up front and are never scanned again).
//!
//! Liveness goes by demand counts, not by weights, so float noise in a sum
//! of weights never keeps a port in play nor drops one.
//!
//! All the ports of one side at the lowest share freeze in one pass over
//! the ports in play on the other side ([`freeze_ties`]), with the same
//! additions, in the same order, as freezing them one after another: a
//! step of FB2010 `aalo` freezes ~3 ports in the excess and ~7 in a
//! coflow's pass 1, and one pass keeps each port of the other side in
//! registers, with no branch on which cells hold demands and no one chain
//! of additions through the pass (docs/benchmarks.md, command 152). Debug
//! builds freeze the ties the slow way too and compare bit for bit.
//!
//! When some port is full, a solve first sums the weights over the cells
//! between the ports in play (O(R * C)). Those sums are kept with the two
//! lists they were taken over; the next solve over the same lists sums again
//! only the rows and columns with a cell that moved since ([`Self::add`]),
//! each over the same list in the same order, so every sum is the same, bit
//! for bit, as a full one. Between solves of one coflow only a few cells
//! move and the ports in play mostly stay, so this spares most of that work.
//!
//! A solve's result stays the same, bit for bit, when a port that froze
//! nobody (level infinity) gets another capacity above what it gives away
//! ([`WeightedBipartite::keeps`]): such a port is never picked as long as
//! its share `residual / unfrozen weight` stays above the level at every
//! step. Its residual and unfrozen weight change only when a port across
//! one of its cells freezes at the level `L` of that step, by `L * w` and
//! `w`, which leaves `residual - L * unfrozen weight` as it was; between
//! such steps the level only rises. So that margin is least at the last
//! of them, where the unfrozen weight falls to 0: it is the residual left
//! at the end, the capacity less what the port gives away. A capacity
//! above that use (by a margin of `1e-9` of the capacity, for the rounding
//! of the residuals) keeps every step's choice, and the port's `used` and
//! its demands' rates do not depend on its capacity (float subtraction
//! and division are monotone, so a rise keeps it too).

/// The lowest fair share among the `live` ports, with every port at exactly
/// that share in `ties`; ports with no unfrozen demand are dropped first.
fn lowest_share(
    live: &mut Vec<u32>,
    residual: &[f64],
    weight: &[f64],
    n_left: &[u32],
    ties: &mut Vec<u32>,
) -> f64 {
    live.retain(|&p| n_left[p as usize] > 0);
    ties.clear();
    let mut best = f64::INFINITY;
    for &p in live.iter() {
        let lv = residual[p as usize].max(0.0) / weight[p as usize];
        if lv < best {
            best = lv;
            ties.clear();
            ties.push(p);
        } else if lv == best {
            ties.push(p);
        }
    }
    best
}

/// Freezes the ports `ties` of one side at `level` in one pass over the
/// ports `others` of the other side still in play: each of those, if
/// unfrozen (its level infinite), gives its demands in the cell to each tie
/// port `w * level`, added to its use and the tie port's, and drops them from
/// its unfrozen weight, residual and count. `w`, `n` hold the cells by port
/// of the other side, `len` tie-side ports a line (for row ties, the
/// transposed matrix).
///
/// The same additions as freezing the tie ports one after another, each over
/// `others` in order: a port of the other side takes its cells' shares in
/// the order of `ties`, and a tie port adds up its use in the order of
/// `others`. Written without a branch, every value computed and then
/// selected: a cell out of play takes off `0 * level`, which leaves every
/// sum the same to the bit (uses are never `-0.0`). One pass for all the
/// ties holds each port of the other side in registers and keeps the tie
/// ports' sums apart, so no chain of additions runs through the whole pass.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn freeze_ties(
    w: &[f64],
    n: &[u32],
    len: usize,
    ties: &[u32],
    others: &[u32],
    level: f64,
    (tie_level, tie_used, tie_nl): (&mut [f64], &mut [f64], &mut [u32]),
    acc: &mut Vec<f64>,
    (other_level, other_used, other_wl): (&[f64], &mut [f64], &mut [f64]),
    (other_res, other_nl): (&mut [f64], &mut [u32]),
) {
    // The slow reference: the tie ports one after another, each over
    // `others`, skipping the cells out of play.
    #[cfg(debug_assertions)]
    let want = {
        let (mut tl, mut tu, mut tn) = (tie_level.to_vec(), tie_used.to_vec(), tie_nl.to_vec());
        let (mut ou, mut ow, mut or, mut on) = (
            other_used.to_vec(),
            other_wl.to_vec(),
            other_res.to_vec(),
            other_nl.to_vec(),
        );
        freeze_ties_reference(
            w,
            n,
            len,
            ties,
            others,
            level,
            (&mut tl, &mut tu, &mut tn),
            (other_level, &mut ou, &mut ow),
            (&mut or, &mut on),
        );
        (tl, tu, tn, ou, ow, or, on)
    };
    acc.clear();
    for &t in ties {
        let t = t as usize;
        tie_level[t] = level;
        tie_nl[t] = 0;
        acc.push(tie_used[t]);
    }
    for &o in others {
        let o = o as usize;
        let (w, n) = (&w[o * len..(o + 1) * len], &n[o * len..(o + 1) * len]);
        let in_play = other_level[o] == f64::INFINITY;
        let (mut used, mut wl, mut res, mut nl) =
            (other_used[o], other_wl[o], other_res[o], other_nl[o]);
        for (&t, a) in ties.iter().zip(acc.iter_mut()) {
            let t = t as usize;
            let live = in_play & (n[t] > 0);
            let (wt, nt) = if live { (w[t], n[t]) } else { (0.0, 0) };
            let x = wt * level;
            *a += x;
            used += x;
            wl -= wt;
            res -= x;
            nl -= nt;
        }
        (other_used[o], other_wl[o], other_res[o], other_nl[o]) = (used, wl, res, nl);
    }
    for (&t, &a) in ties.iter().zip(acc.iter()) {
        tie_used[t as usize] = a;
    }
    #[cfg(debug_assertions)]
    {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (tl, tu, tn, ou, ow, or, on) = want;
        assert_eq!(bits(&tl), bits(tie_level), "freeze: tie levels");
        assert_eq!(bits(&tu), bits(tie_used), "freeze: tie uses");
        assert_eq!(tn, tie_nl, "freeze: tie counts");
        assert_eq!(bits(&ou), bits(other_used), "freeze: uses");
        assert_eq!(bits(&ow), bits(other_wl), "freeze: unfrozen weights");
        assert_eq!(bits(&or), bits(other_res), "freeze: residuals");
        assert_eq!(on, other_nl, "freeze: unfrozen counts");
    }
}

/// [`freeze_ties`] the slow way, as the solve froze before it: each tie
/// port in turn, over `others` in order, skipping each cell with no demand
/// or whose other port is frozen.
#[cfg(any(test, debug_assertions))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn freeze_ties_reference(
    w: &[f64],
    n: &[u32],
    len: usize,
    ties: &[u32],
    others: &[u32],
    level: f64,
    (tie_level, tie_used, tie_nl): (&mut [f64], &mut [f64], &mut [u32]),
    (other_level, other_used, other_wl): (&[f64], &mut [f64], &mut [f64]),
    (other_res, other_nl): (&mut [f64], &mut [u32]),
) {
    for &t in ties {
        let t = t as usize;
        tie_level[t] = level;
        tie_nl[t] = 0;
        let mut used = tie_used[t];
        for &o in others {
            let (o, cell) = (o as usize, o as usize * len + t);
            if n[cell] > 0 && other_level[o] == f64::INFINITY {
                let x = w[cell] * level;
                used += x;
                other_used[o] += x;
                other_wl[o] -= w[cell];
                other_res[o] -= x;
                other_nl[o] -= n[cell];
            }
        }
        tie_used[t] = used;
    }
}

/// Weighted max-min levels over a dense row x column matrix; see the module
/// doc.
#[derive(Debug, Clone, Default)]
pub struct WeightedBipartite {
    n_rows: usize,
    n_cols: usize,
    // Per cell (row-major, and column-major): total weight and count.
    w: Vec<f64>,
    w_t: Vec<f64>,
    n: Vec<u32>,
    n_t: Vec<u32>,
    row_w: Vec<f64>,
    col_w: Vec<f64>,
    row_n: Vec<u32>,
    col_n: Vec<u32>,
    // Scratch.
    row_res: Vec<f64>,
    col_res: Vec<f64>,
    row_wl: Vec<f64>,
    col_wl: Vec<f64>,
    row_nl: Vec<u32>,
    col_nl: Vec<u32>,
    row_live: Vec<u32>,
    col_live: Vec<u32>,
    row_ties: Vec<u32>,
    col_ties: Vec<u32>,
    tie_used: Vec<f64>,
    // The sums over the cells between the ports in play, as the latest solve
    // with a full port took them (valid if `sums_kept`), over which lists;
    // a row or column with a cell that moved since has its mark at `epoch`.
    sums_kept: bool,
    kept_row_live: Vec<u32>,
    kept_col_live: Vec<u32>,
    kept_row_wl: Vec<f64>,
    kept_col_wl: Vec<f64>,
    kept_row_nl: Vec<u32>,
    kept_col_nl: Vec<u32>,
    row_moved: Vec<u64>,
    col_moved: Vec<u64>,
    epoch: u64,
}

/// Line `i`'s weight and count (row-major `w`, `n` with `len` cells a
/// line) summed over the cells `others`, in their order: a row's sums over
/// the columns in play, or, over the transposed matrix, a column's over the
/// rows in play (the order [`live_sums`] adds a column in, so each is the
/// same sum to the bit).
fn line_sums(w: &[f64], n: &[u32], i: usize, len: usize, others: &[u32]) -> (f64, u32) {
    let (w, n) = (&w[i * len..(i + 1) * len], &n[i * len..(i + 1) * len]);
    let (mut wl, mut nl) = (0.0, 0);
    for &j in others {
        wl += w[j as usize];
        nl += n[j as usize];
    }
    (wl, nl)
}

/// Each row's and column's weight and count summed over the cells between
/// `row_live` and `col_live` (row-major `w`, `n` with `nc` columns), into
/// zeroed arrays. A row's sums stay in registers over its columns; a
/// column's add up row by row in the order of `row_live`.
#[allow(clippy::too_many_arguments)]
fn live_sums(
    w: &[f64],
    n: &[u32],
    nc: usize,
    row_live: &[u32],
    col_live: &[u32],
    row_wl: &mut [f64],
    row_nl: &mut [u32],
    col_wl: &mut [f64],
    col_nl: &mut [u32],
) {
    for &r in row_live {
        let r = r as usize;
        let (w, n) = (&w[r * nc..(r + 1) * nc], &n[r * nc..(r + 1) * nc]);
        let (mut wl, mut nl) = (0.0, 0);
        for &c in col_live {
            let c = c as usize;
            wl += w[c];
            nl += n[c];
            col_wl[c] += w[c];
            col_nl[c] += n[c];
        }
        row_wl[r] = wl;
        row_nl[r] = nl;
    }
}

impl WeightedBipartite {
    /// An empty matrix of `n_rows` rows and `n_cols` columns.
    pub fn new(n_rows: usize, n_cols: usize) -> WeightedBipartite {
        let mut m = WeightedBipartite::default();
        m.grow(n_rows, n_cols);
        m
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Makes room for at least `n_rows` rows and `n_cols` columns, keeping
    /// the demands.
    pub fn grow(&mut self, n_rows: usize, n_cols: usize) {
        let (nr, nc) = (n_rows.max(self.n_rows), n_cols.max(self.n_cols));
        if (nr, nc) == (self.n_rows, self.n_cols) {
            return;
        }
        let mut w = vec![0.0; nr * nc];
        let mut n = vec![0; nr * nc];
        for r in 0..self.n_rows {
            for c in 0..self.n_cols {
                w[r * nc + c] = self.w[r * self.n_cols + c];
                n[r * nc + c] = self.n[r * self.n_cols + c];
            }
        }
        let mut w_t = vec![0.0; nr * nc];
        let mut n_t = vec![0; nr * nc];
        for r in 0..nr {
            for c in 0..nc {
                w_t[c * nr + r] = w[r * nc + c];
                n_t[c * nr + r] = n[r * nc + c];
            }
        }
        self.w = w;
        self.n = n;
        self.w_t = w_t;
        self.n_t = n_t;
        self.row_w.resize(nr, 0.0);
        self.row_n.resize(nr, 0);
        self.col_w.resize(nc, 0.0);
        self.col_n.resize(nc, 0);
        self.n_rows = nr;
        self.n_cols = nc;
        self.sums_kept = false;
    }

    /// Adds `count` demands of total weight `weight` to cell `(r, c)`
    /// (negative to remove them; a cell, row or column left with no demand
    /// has weight exactly 0).
    pub fn add(&mut self, r: usize, c: usize, count: i64, weight: f64) {
        let (i, j) = (r * self.n_cols + c, c * self.n_rows + r);
        let bump = |x: &mut u32| *x = (*x as i64 + count) as u32;
        // (Past the marks' end: grown since the sums were kept, which
        // drops them.)
        if let Some(m) = self.row_moved.get_mut(r) {
            *m = self.epoch;
        }
        if let Some(m) = self.col_moved.get_mut(c) {
            *m = self.epoch;
        }
        bump(&mut self.n[i]);
        bump(&mut self.n_t[j]);
        bump(&mut self.row_n[r]);
        bump(&mut self.col_n[c]);
        let zero_or = |n: u32, x: f64| if n == 0 { 0.0 } else { x };
        self.w[i] = zero_or(self.n[i], self.w[i] + weight);
        self.w_t[j] = self.w[i];
        self.row_w[r] = zero_or(self.row_n[r], self.row_w[r] + weight);
        self.col_w[c] = zero_or(self.col_n[c], self.col_w[c] + weight);
    }

    /// Number of demands in cell `(r, c)`.
    pub fn count(&self, r: usize, c: usize) -> u32 {
        self.n[r * self.n_cols + c]
    }

    /// Total weight of cell `(r, c)`.
    pub fn weight(&self, r: usize, c: usize) -> f64 {
        self.w[r * self.n_cols + c]
    }

    /// Whether capacities `cap` give the same result, bit for bit, as `old`
    /// gave in a [`Self::solve`] that found `level` and `used` (one side's
    /// ports; see the module doc): every port whose capacity moved froze
    /// nobody and keeps more than it gives away, by `1e-9` of its old
    /// capacity.
    pub fn keeps(cap: &[f64], old: &[f64], level: &[f64], used: &[f64]) -> bool {
        cap.len() == old.len()
            && cap.iter().zip(old).enumerate().all(|(p, (&now, &was))| {
                now == was || (level[p] == f64::INFINITY && now > used[p] + 1e-9 * was)
            })
    }

    /// Brings the kept sums to the cells between `row_live` and `col_live`:
    /// over the lists they were taken over, only the rows and columns with a
    /// cell that moved are summed again (in the order of a full sum, so
    /// every sum is the same, bit for bit); over other lists, all of them.
    fn live_sums(&mut self) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        let same_lists = self.sums_kept
            && self.kept_row_live == self.row_live
            && self.kept_col_live == self.col_live;
        // Summing moved rows and moved columns apart costs more than one
        // full pass when most of them moved.
        let cheaper = same_lists && {
            let (lr, lc) = (self.row_live.len(), self.col_live.len());
            let mr = self
                .row_live
                .iter()
                .filter(|&&r| self.row_moved[r as usize] == self.epoch)
                .count();
            let mc = self
                .col_live
                .iter()
                .filter(|&&c| self.col_moved[c as usize] == self.epoch)
                .count();
            mr * lc + mc * lr < lr * lc
        };
        if cheaper {
            for &r in &self.row_live {
                let r = r as usize;
                if self.row_moved[r] == self.epoch {
                    (self.kept_row_wl[r], self.kept_row_nl[r]) =
                        line_sums(&self.w, &self.n, r, nc, &self.col_live);
                }
            }
            for &c in &self.col_live {
                let c = c as usize;
                if self.col_moved[c] == self.epoch {
                    (self.kept_col_wl[c], self.kept_col_nl[c]) =
                        line_sums(&self.w_t, &self.n_t, c, nr, &self.row_live);
                }
            }
        } else {
            self.kept_row_wl.clear();
            self.kept_row_wl.resize(nr, 0.0);
            self.kept_row_nl.clear();
            self.kept_row_nl.resize(nr, 0);
            self.kept_col_wl.clear();
            self.kept_col_wl.resize(nc, 0.0);
            self.kept_col_nl.clear();
            self.kept_col_nl.resize(nc, 0);
            live_sums(
                &self.w,
                &self.n,
                nc,
                &self.row_live,
                &self.col_live,
                &mut self.kept_row_wl,
                &mut self.kept_row_nl,
                &mut self.kept_col_wl,
                &mut self.kept_col_nl,
            );
            self.kept_row_live.clone_from(&self.row_live);
            self.kept_col_live.clone_from(&self.col_live);
            self.sums_kept = true;
            self.row_moved.resize(nr, 0);
            self.col_moved.resize(nc, 0);
        }
        self.epoch += 1;
        #[cfg(debug_assertions)]
        if cheaper {
            let (mut rw, mut rn) = (vec![0.0; nr], vec![0; nr]);
            let (mut cw, mut cn) = (vec![0.0; nc], vec![0; nc]);
            live_sums(
                &self.w,
                &self.n,
                nc,
                &self.row_live,
                &self.col_live,
                &mut rw,
                &mut rn,
                &mut cw,
                &mut cn,
            );
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&rw), bits(&self.kept_row_wl), "kept row weight sums");
            assert_eq!(
                bits(&cw),
                bits(&self.kept_col_wl),
                "kept column weight sums"
            );
            assert_eq!(rn, self.kept_row_nl, "kept row counts");
            assert_eq!(cn, self.kept_col_nl, "kept column counts");
        }
    }

    /// Fills `row_level` and `col_level` with the level each port froze at
    /// (infinity for a port that is nobody's bottleneck) under capacities
    /// `row_cap` and `col_cap`, and `row_used` and `col_used` with what the
    /// demands take from each. A demand of weight `w` from `r` to `c` gets
    /// `w * min(row_level[r], col_level[c])`.
    pub fn solve(
        &mut self,
        row_cap: &[f64],
        col_cap: &[f64],
        row_level: &mut Vec<f64>,
        col_level: &mut Vec<f64>,
        row_used: &mut Vec<f64>,
        col_used: &mut Vec<f64>,
    ) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        row_level.clear();
        row_level.resize(nr, f64::INFINITY);
        col_level.clear();
        col_level.resize(nc, f64::INFINITY);
        row_used.clear();
        row_used.resize(nr, 0.0);
        col_used.clear();
        col_used.resize(nc, 0.0);
        self.row_res.clear();
        self.row_res.extend_from_slice(&row_cap[..nr]);
        self.col_res.clear();
        self.col_res.extend_from_slice(&col_cap[..nc]);
        // Ports with no capacity freeze at level 0 first, giving nothing;
        // only the others are filled, over the cells between them (found
        // from whichever side has fewer such ports, so that a solve where
        // most ports are full costs little).
        self.row_live.clear();
        self.row_live
            .extend((0..nr as u32).filter(|&r| self.row_n[r as usize] > 0));
        self.col_live.clear();
        self.col_live
            .extend((0..nc as u32).filter(|&c| self.col_n[c as usize] > 0));
        let full_rows = self.row_live.iter().any(|&r| row_cap[r as usize] <= 0.0);
        let full_cols = self.col_live.iter().any(|&c| col_cap[c as usize] <= 0.0);
        if full_rows || full_cols {
            for &r in &self.row_live {
                if row_cap[r as usize] <= 0.0 {
                    row_level[r as usize] = 0.0;
                }
            }
            for &c in &self.col_live {
                if col_cap[c as usize] <= 0.0 {
                    col_level[c as usize] = 0.0;
                }
            }
            self.row_live.retain(|&r| row_cap[r as usize] > 0.0);
            self.col_live.retain(|&c| col_cap[c as usize] > 0.0);
        }
        if !full_rows && !full_cols {
            self.row_wl.clone_from(&self.row_w);
            self.col_wl.clone_from(&self.col_w);
            self.row_nl.clone_from(&self.row_n);
            self.col_nl.clone_from(&self.col_n);
        } else {
            self.live_sums();
            self.row_wl.clone_from(&self.kept_row_wl);
            self.col_wl.clone_from(&self.kept_col_wl);
            self.row_nl.clone_from(&self.kept_row_nl);
            self.col_nl.clone_from(&self.kept_col_nl);
        }
        // Every port at the lowest share freezes at once: freezing a row at
        // level L leaves a column whose share was L at L (and raises the
        // others), so one scan serves all of them.
        let mut level: f64 = 0.0;
        loop {
            let row_best = lowest_share(
                &mut self.row_live,
                &self.row_res,
                &self.row_wl,
                &self.row_nl,
                &mut self.row_ties,
            );
            let col_best = lowest_share(
                &mut self.col_live,
                &self.col_res,
                &self.col_wl,
                &self.col_nl,
                &mut self.col_ties,
            );
            let best = row_best.min(col_best);
            if best == f64::INFINITY {
                break;
            }
            level = level.max(best);
            // Each side's ports at the lowest share freeze in one pass over
            // the other side (rows first, as the columns' pass must see them
            // frozen).
            if row_best == best {
                freeze_ties(
                    &self.w_t,
                    &self.n_t,
                    nr,
                    &self.row_ties,
                    &self.col_live,
                    level,
                    (row_level, row_used, &mut self.row_nl),
                    &mut self.tie_used,
                    (col_level, col_used, &mut self.col_wl),
                    (&mut self.col_res, &mut self.col_nl),
                );
            }
            if col_best == best {
                freeze_ties(
                    &self.w,
                    &self.n,
                    nc,
                    &self.col_ties,
                    &self.row_live,
                    level,
                    (col_level, col_used, &mut self.col_nl),
                    &mut self.tie_used,
                    (row_level, row_used, &mut self.row_wl),
                    (&mut self.row_res, &mut self.row_nl),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The same uses, weights, residuals and counts, to the bit, as the
        /// tie ports frozen one after another, with cells empty or out of
        /// play (frozen ports), zero levels and ties of several ports.
        #[test]
        fn freeze_ties_matches_reference(
            len in 1usize..12,
            n_others in 1usize..12,
            cells in prop::collection::vec((0u32..3, 0.0f64..4.0), 144),
            frozen in prop::collection::vec(any::<bool>(), 12),
            used0 in prop::collection::vec(prop_oneof![Just(0.0), 0.0f64..5.0], 24),
            res0 in prop::collection::vec(prop_oneof![Just(0.0), Just(-0.0), -1.0f64..9.0], 12),
            level in prop_oneof![Just(0.0), 0.0f64..3.0],
            n_ties in 1usize..5,
        ) {
            let n: Vec<u32> = (0..n_others * len).map(|i| cells[i].0).collect();
            let w: Vec<f64> = (0..n_others * len)
                .map(|i| if cells[i].0 == 0 { 0.0 } else { cells[i].1 * cells[i].0 as f64 })
                .collect();
            let ties: Vec<u32> = (0..len.min(n_ties) as u32).map(|t| t * 7 % len as u32).fold(
                vec![],
                |mut v, t| {
                    if !v.contains(&t) {
                        v.push(t);
                    }
                    v
                },
            );
            let others: Vec<u32> = (0..n_others as u32).collect();
            let other_level: Vec<f64> = (0..n_others)
                .map(|o| if frozen[o] { 0.5 } else { f64::INFINITY })
                .collect();
            let other_nl: Vec<u32> = (0..n_others)
                .map(|o| (0..len).map(|t| n[o * len + t]).sum::<u32>() + 1)
                .collect();
            let other_wl: Vec<f64> = (0..n_others)
                .map(|o| (0..len).map(|t| w[o * len + t]).sum::<f64>())
                .collect();
            let start = (
                vec![f64::INFINITY; len],
                used0[..len].to_vec(),
                vec![1u32; len],
                used0[12..12 + n_others].to_vec(),
                other_wl,
                res0[..n_others].to_vec(),
                other_nl,
            );
            let (mut a, mut b) = (start.clone(), start);
            freeze_ties(
                &w, &n, len, &ties, &others, level,
                (&mut a.0, &mut a.1, &mut a.2),
                &mut vec![],
                (&other_level, &mut a.3, &mut a.4),
                (&mut a.5, &mut a.6),
            );
            freeze_ties_reference(
                &w, &n, len, &ties, &others, level,
                (&mut b.0, &mut b.1, &mut b.2),
                (&other_level, &mut b.3, &mut b.4),
                (&mut b.5, &mut b.6),
            );
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for (x, y) in [(&a.0, &b.0), (&a.1, &b.1), (&a.3, &b.3), (&a.4, &b.4), (&a.5, &b.5)] {
                prop_assert_eq!(bits(x), bits(y));
            }
            prop_assert_eq!(&a.2, &b.2);
            prop_assert_eq!(&a.6, &b.6);
        }
    }
}
