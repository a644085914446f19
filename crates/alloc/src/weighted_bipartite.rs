//! Weighted max-min fairness when every demand crosses one row resource and
//! one column resource (the big switch), over a dense matrix of weights, with
//! the capacity each row and column gives away.
//!
//! A cell `(r, c)` holds the demands from row `r` to column `c`: their number
//! and their total weight. Progressive filling raises a common level; a
//! demand of weight `w` gets `w * level` until a row or column it crosses is
//! full. As in [`crate::BipartiteMaxMin`], the port with the lowest fair
//! share `residual / unfrozen weight` is found by a scan of the ports still in
//! play, its row (or column) of the matrix is frozen in one pass over its
//! cells with demands whose column (row) is still in play and unfrozen,
//! found in index order as the set bits of two bit sets (the line's cells
//! with demands, kept by [`WeightedBipartite::add`], and the other side's
//! open ports), and the level it froze at is recorded: a
//! demand's rate is `w * min(row level, column level)`. The same passes add
//! up what each row and column gives away. Cost per solve: O((R + C)^2) for
//! R rows and C columns, less when most ports are full (they freeze at 0
//! up front and are never scanned again).
//!
//! Liveness goes by demand counts, not by weights, so float noise in a sum
//! of weights never keeps a port in play nor drops one.
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

/// One port's state while a solve fills: its residual capacity, the weight
/// and count of its unfrozen demands, and what its frozen demands take. One
/// record a port, so that a freeze's update of a port across one of its
/// cells touches one place.
#[derive(Debug, Clone, Copy, Default)]
struct Fill {
    res: f64,
    wl: f64,
    used: f64,
    nl: u32,
}

/// The lowest fair share among the `live` ports, with every port at exactly
/// that share in `ties`; ports with no unfrozen demand are dropped first.
fn lowest_share(live: &mut Vec<u32>, fill: &[Fill], ties: &mut Vec<u32>) -> f64 {
    live.retain(|&p| fill[p as usize].nl > 0);
    ties.clear();
    let mut best = f64::INFINITY;
    for &p in live.iter() {
        let f = &fill[p as usize];
        let lv = f.res.max(0.0) / f.wl;
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
    // Per row, the columns of its cells with demands, and per column the
    // rows, as bit sets (`row_words` and `col_words` words a line), so that
    // a freeze visits only those cells, in index order.
    row_bits: Vec<u64>,
    col_bits: Vec<u64>,
    // Scratch.
    // The rows and columns in play and not frozen yet, as bit sets.
    row_open: Vec<u64>,
    col_open: Vec<u64>,
    row_fill: Vec<Fill>,
    col_fill: Vec<Fill>,
    row_live: Vec<u32>,
    col_live: Vec<u32>,
    row_ties: Vec<u32>,
    col_ties: Vec<u32>,
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

/// Freezes one line (a row, or a column) at `level`: each cell of it with a
/// demand (`bits`) whose port on the other side is still open (`open`), in
/// index order, takes `w * level` from that port's residual and its weight
/// and count from what the port has unfrozen. Returns the line's use, `used`
/// plus those shares (the same additions in the same order as the other
/// side's).
#[inline]
fn freeze_line(
    level: f64,
    bits: &[u64],
    open: &[u64],
    w: &[f64],
    n: &[u32],
    mut used: f64,
    other: &mut [Fill],
) -> f64 {
    for (k, (&line, &open)) in bits.iter().zip(open).enumerate() {
        let mut b = line & open;
        while b != 0 {
            let j = k * 64 + b.trailing_zeros() as usize;
            b &= b - 1;
            let x = w[j] * level;
            used += x;
            let f = &mut other[j];
            f.used += x;
            f.wl -= w[j];
            f.res -= x;
            f.nl -= n[j];
        }
    }
    used
}

/// Debug check of a freeze's cells: the set bits of `line & open` (a
/// line's cells with demands, the other side's ports in play and not
/// frozen) are, in order, the ports of `live` (those in play, in index
/// order) with a demand on the line (`n`) that are not frozen (`level`
/// infinite), as a scan of `live` finds them. A port dropped from `live`
/// (no unfrozen demand left) but still open holds no demand on a line
/// that freezes now, which is unfrozen.
#[cfg(debug_assertions)]
fn check_open_cells(line: &[u64], open: &[u64], live: &[u32], n: &[u32], level: &[f64]) {
    let mut fast = vec![];
    for (k, (&l, &o)) in line.iter().zip(open).enumerate() {
        let mut b = l & o;
        while b != 0 {
            fast.push(k * 64 + b.trailing_zeros() as usize);
            b &= b - 1;
        }
    }
    let slow: Vec<usize> = live
        .iter()
        .map(|&p| p as usize)
        .filter(|&p| n[p] > 0 && level[p] == f64::INFINITY)
        .collect();
    assert_eq!(fast, slow, "a freeze's cells by bit sets against the scan");
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
        let (cw, rw) = (nc.div_ceil(64), nr.div_ceil(64));
        self.row_bits.clear();
        self.row_bits.resize(nr * cw, 0);
        self.col_bits.clear();
        self.col_bits.resize(nc * rw, 0);
        for r in 0..nr {
            for c in 0..nc {
                if self.n[r * nc + c] > 0 {
                    self.row_bits[r * cw + c / 64] |= 1 << (c % 64);
                    self.col_bits[c * rw + r / 64] |= 1 << (r % 64);
                }
            }
        }
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
        let (cw, rw) = (self.n_cols.div_ceil(64), self.n_rows.div_ceil(64));
        let (rb, cb) = (
            &mut self.row_bits[r * cw + c / 64],
            &mut self.col_bits[c * rw + r / 64],
        );
        if self.n[i] > 0 {
            *rb |= 1 << (c % 64);
            *cb |= 1 << (r % 64);
        } else {
            *rb &= !(1 << (c % 64));
            *cb &= !(1 << (r % 64));
        }
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
        let ((row_wl, row_nl), (col_wl, col_nl)) = if !full_rows && !full_cols {
            ((&self.row_w, &self.row_n), (&self.col_w, &self.col_n))
        } else {
            self.live_sums();
            (
                (&self.kept_row_wl, &self.kept_row_nl),
                (&self.kept_col_wl, &self.kept_col_nl),
            )
        };
        let fills = |cap: &[f64], wl: &[f64], nl: &[u32], out: &mut Vec<Fill>| {
            out.clear();
            out.extend((0..cap.len()).map(|p| Fill {
                res: cap[p],
                wl: wl[p],
                used: 0.0,
                nl: nl[p],
            }));
        };
        fills(&row_cap[..nr], row_wl, row_nl, &mut self.row_fill);
        fills(&col_cap[..nc], col_wl, col_nl, &mut self.col_fill);
        // The ports in play, not frozen: a freeze visits the cells of its
        // line whose other end is among them (`check_open_cells`).
        let (cw, rw) = (nc.div_ceil(64), nr.div_ceil(64));
        self.row_open.clear();
        self.row_open.resize(rw, 0);
        for &r in &self.row_live {
            self.row_open[r as usize / 64] |= 1 << (r % 64);
        }
        self.col_open.clear();
        self.col_open.resize(cw, 0);
        for &c in &self.col_live {
            self.col_open[c as usize / 64] |= 1 << (c % 64);
        }
        // Every port at the lowest share freezes at once: freezing a row at
        // level L leaves a column whose share was L at L (and raises the
        // others), so one scan serves all of them.
        let mut level: f64 = 0.0;
        loop {
            let row_best = lowest_share(&mut self.row_live, &self.row_fill, &mut self.row_ties);
            let col_best = lowest_share(&mut self.col_live, &self.col_fill, &mut self.col_ties);
            let best = row_best.min(col_best);
            if best == f64::INFINITY {
                break;
            }
            level = level.max(best);
            if row_best == best {
                for &r in &self.row_ties {
                    let r = r as usize;
                    row_level[r] = level;
                    self.row_open[r / 64] &= !(1 << (r % 64));
                    self.row_fill[r].nl = 0;
                    let (w, n) = (&self.w[r * nc..(r + 1) * nc], &self.n[r * nc..(r + 1) * nc]);
                    #[cfg(debug_assertions)]
                    check_open_cells(
                        &self.row_bits[r * cw..(r + 1) * cw],
                        &self.col_open,
                        &self.col_live,
                        n,
                        col_level,
                    );
                    // Only columns still in play can hold an unfrozen
                    // demand (found in index order, as is the sum, which
                    // stays in a register: the same additions).
                    let bits = &self.row_bits[r * cw..(r + 1) * cw];
                    let used = self.row_fill[r].used;
                    self.row_fill[r].used =
                        freeze_line(level, bits, &self.col_open, w, n, used, &mut self.col_fill);
                }
            }
            if col_best == best {
                for &c in &self.col_ties {
                    let c = c as usize;
                    col_level[c] = level;
                    self.col_open[c / 64] &= !(1 << (c % 64));
                    self.col_fill[c].nl = 0;
                    let (w, n) = (
                        &self.w_t[c * nr..(c + 1) * nr],
                        &self.n_t[c * nr..(c + 1) * nr],
                    );
                    #[cfg(debug_assertions)]
                    check_open_cells(
                        &self.col_bits[c * rw..(c + 1) * rw],
                        &self.row_open,
                        &self.row_live,
                        n,
                        row_level,
                    );
                    let bits = &self.col_bits[c * rw..(c + 1) * rw];
                    let used = self.col_fill[c].used;
                    self.col_fill[c].used =
                        freeze_line(level, bits, &self.row_open, w, n, used, &mut self.row_fill);
                }
            }
        }
        row_used.clear();
        row_used.extend(self.row_fill.iter().map(|f| f.used));
        col_used.clear();
        col_used.extend(self.col_fill.iter().map(|f| f.used));
    }
}
