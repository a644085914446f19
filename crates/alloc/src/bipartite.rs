//! Max-min fairness when every demand crosses exactly one row resource and
//! one column resource: the big switch, where a flow from host `s` to host
//! `d` crosses the ingress port of `s` (row) and the egress port of `d`
//! (column).
//!
//! Flow counts live in a dense row × column matrix updated as flows come
//! and go, so a solve never rebuilds per-demand state: progressive filling
//! picks the port with the lowest fair share by a scan of the ports' shares,
//! freezes its row (or column) of the matrix, and records the level it froze
//! at. A flow's rate is then the lower of its two ports' levels, since levels
//! only rise in freeze order. A freeze updates the other side in one dense
//! pass over the matrix row, every port at once, without a branch (a port
//! with no flows to the frozen one, or already frozen, takes off zero and
//! keeps its share to the bit), which the compiler turns into vector code:
//! on FB2010, where a port has flows to two thirds of the others, this beat
//! a pass over lists of the nonzero entries (docs/benchmarks-history.md,
//! issue 35, branch fair35). Cost of a solve from scratch: O((R + C)^2) for R
//! rows and C columns, whatever the number of flows.
//!
//! A solve does not start from scratch when it can restart: it keeps the
//! last solve's freeze order (port, share when picked, level) and, before
//! every [`CHECKPOINT`]-th step that updates a side, a copy of that side's
//! residuals and weights. The ports whose flows or capacity changed since
//! ("touched") are walked along the old order under the new counts and
//! capacities, in the same arithmetic a solve from scratch would use (their
//! copies at the steps walked are made anew); the first step that picks a
//! touched port, or at which a touched port's new share is at or below the
//! share picked, is the first step that can differ. Every step before it
//! picks the same port at the same share and makes the same updates, to the
//! bit, so the solve takes each side back to its last copy before that step,
//! replays the steps since on it and fills from there. An event then costs
//! the steps after the ports it touched, not the whole order. (A copy before
//! every step was most of the fill's stores and of the walk's: with one
//! every 4 steps FB2010 `stf` and `ncf` ran 1.13-1.18x faster,
//! docs/lab/benchmarks-history.md, command 160.)
//!
//! The walk costs the touched ports of one side a step, and no division:
//! it keeps each touched port's share as a bound (its residual times the
//! reciprocal of its weight, within a few units in the last place) and
//! divides only for a port whose bound comes within [`WALK_MARGIN`] of a
//! step's share. So it walks however many ports are touched: a class
//! served after others (`stf`, `ncf`) sees capacities move at most of its
//! ports when one before it changes, and FB2010 `stf`'s solves that
//! restarted from scratch for it (a third of them, past a quarter of the
//! ports touched; 72% of the fill) repeated their old first 41% of steps
//! (docs/lab/benchmarks-history.md, command 145).
//!
//! Correctness properties:
//! - the levels equal those of progressive filling from scratch on the same
//!   counts and capacities, bit for bit (the restart replays nothing it did
//!   not prove unchanged; `tests/differential.rs`,
//!   `bipartite_restart_matches_scratch`,
//!   `bipartite_restart_on_new_capacities_matches_scratch`; debug builds
//!   solve every restart again from scratch and compare, in
//!   [`BipartiteMaxMin::solve`]);
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
#[inline(always)]
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
    let at = first_equal(share, best);
    (at.map_or(best, |p| share[p]), at)
}

/// The first index of `share` that holds `value` (by `==`). The lane chunk
/// that holds it is found by whole chunks (compared without a branch, in
/// vector code), then the index in it: a scan index by index cost most of
/// [`lowest_share`] (FB2010 `pias`).
#[inline(always)]
fn first_equal(share: &[f64], value: f64) -> Option<usize> {
    let holds = |c: &[f64]| c.iter().fold(false, |x, &s| x | (s == value));
    let chunks = share.chunks_exact(LANES);
    let tail = chunks.remainder();
    chunks
        .enumerate()
        .find(|(_, c)| holds(c))
        .map(|(i, c)| (i * LANES, c))
        .or(Some((share.len() - tail.len(), tail)))
        .and_then(|(start, c)| c.iter().position(|&s| s == value).map(|i| start + i))
}

/// Lanes of [`lowest_share`]'s first pass.
const LANES: usize = 8;

/// A live port's fair share `residual / weight` (a residual below zero, by
/// rounding, counts as zero), infinite for a port with no unfrozen flows.
/// [`freeze`] computes the same, to the bit, in its own way.
#[inline(always)]
fn share_of(residual: f64, weight: f64) -> f64 {
    if weight <= 0.5 {
        f64::INFINITY
    } else {
        (if residual > 0.0 { residual } else { 0.0 }) / weight
    }
}

/// Whether the CPU has AVX2 (for [`BipartiteMaxMin::refill`]).
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
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
    // Its freeze order, and before every [`CHECKPOINT`]-th step that
    // updated a side, that side's residuals, then weights; per port, the
    // step that froze it (`u32::MAX` while unfrozen).
    steps: Vec<Step>,
    copies: Vec<f64>,
    frozen_at: Vec<u32>,
    // Ports whose flows changed since the last solve.
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    // Scratch of `first_changed_step`: each touched row, and each touched
    // column, with its residual, weight and share under the new counts.
    walk_rows: Vec<WalkPort>,
    walk_cols: Vec<WalkPort>,
    // `recip[x]` is `1 / x`, for the walk's bounds on shares.
    recip: Vec<f64>,
    // Whether the CPU has AVX2 (then the fill runs in its vectors).
    avx2: bool,
}

/// A touched port in the walk of `first_changed_step`: its index on its
/// side, residual, weight (as the solve's `f64`, and as a whole number to
/// index [`BipartiteMaxMin::recip`] without a conversion) and share (or a
/// bound on it, [`approx_share`]).
#[derive(Debug, Clone, Copy)]
struct WalkPort {
    port: u32,
    n: u32,
    res: f64,
    w: f64,
    share: f64,
}

/// One step of the walk of `first_changed_step` over the touched ports of
/// the side a kept step updates (`row`: their flows to the port it froze
/// at `level`): the step's copy of each of them (residuals, then weights,
/// in `copy`) made anew if the step has one (`COPY`), then what the step
/// takes off them, in the arithmetic of [`freeze`]. Their shares are kept
/// only as bounds, each residual times the reciprocal of its weight
/// (`recip`), within a few units in the last place of the share; returns
/// the lowest after the step.
#[inline(always)]
fn walk_step<const COPY: bool>(
    walk: &mut [WalkPort],
    row: &[u32],
    level: f64,
    copy: &mut [f64],
    recip: &[f64],
) -> f64 {
    let len = row.len();
    let (res, w) = copy.split_at_mut(if COPY { len } else { 0 });
    let mut low = f64::INFINITY;
    for e in walk.iter_mut() {
        let i = e.port as usize;
        if COPY {
            res[i] = e.res;
            w[i] = e.w;
        }
        let n_pair = row[i];
        if n_pair > 0 {
            e.w -= n_pair as f64;
            e.n -= n_pair;
            e.res -= n_pair as f64 * level;
            e.share = approx_share(e.res, e.n, recip);
        }
        low = low.min(e.share);
    }
    low
}

/// [`share_of`] within a few units in the last place, without a division:
/// `residual` times the reciprocal of its weight `n` (a whole number of
/// flows) read from `recip`.
#[inline(always)]
fn approx_share(residual: f64, n: u32, recip: &[f64]) -> f64 {
    if n == 0 {
        f64::INFINITY
    } else {
        (if residual > 0.0 { residual } else { 0.0 }) * recip[n as usize]
    }
}

/// A solve keeps a copy of a side from before every `CHECKPOINT`-th step
/// that updates it (not before each: those copies were most of the fill's
/// stores, and of the walk's); [`BipartiteMaxMin::rewind`] takes a side
/// back to the last copy before the step it restarts at and replays the
/// steps in between, in the arithmetic of [`freeze`].
const CHECKPOINT: u32 = 4;

/// How far above a step's share a walked port's [`approx_share`] must be
/// (relative) to prove its share, computed exactly, above it too: far
/// above the bound's few units in the last place (~1e-15).
const WALK_MARGIN: f64 = 1e-9;

/// One step of progressive filling: the port it froze, that port's fair
/// share when picked, the level it froze at, how many steps before it
/// updated the same side, and where the copy of that side from before the
/// step begins (`u32::MAX`: none, see [`CHECKPOINT`]).
#[derive(Debug, Clone, Copy)]
struct Step {
    port: u32,
    best: f64,
    level: f64,
    nth: u32,
    copy_at: u32,
}

/// No copy kept before a step ([`Step::copy_at`]).
const NO_COPY: u32 = u32::MAX;

impl BipartiteMaxMin {
    /// An empty matrix of `n_rows` rows and `n_cols` columns.
    pub fn new(n_rows: usize, n_cols: usize) -> BipartiteMaxMin {
        BipartiteMaxMin {
            n_rows,
            n_cols,
            count: vec![0; n_rows * n_cols],
            count_t: vec![0; n_rows * n_cols],
            n: vec![0; n_rows + n_cols],
            is_touched: vec![false; n_rows + n_cols],
            avx2: has_avx2(),
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

    /// Number of flows from row `r` to each column.
    pub fn row_counts(&self, r: usize) -> &[u32] {
        &self.count[r * self.n_cols..(r + 1) * self.n_cols]
    }

    /// Number of flows from each row to column `c`.
    pub fn col_counts(&self, c: usize) -> &[u32] {
        &self.count_t[c * self.n_rows..(c + 1) * self.n_rows]
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
        // The slow reference: the same counts solved from scratch, in the
        // baseline's vectors.
        #[cfg(debug_assertions)]
        let scratch = self.solved.then(|| {
            let mut m = self.clone();
            m.solved = false;
            m.avx2 = false;
            let (mut rl, mut cl) = (vec![], vec![]);
            m.solve(row_cap, col_cap, &mut rl, &mut cl);
            m
        });
        // A port whose capacity changed is touched like one whose flows
        // did (however many: the walk costs the touched ports a step,
        // less than the fill's scans of every port).
        if self.solved {
            let caps = row_cap[..nr].iter().chain(&col_cap[..nc]);
            for (p, &c) in caps.enumerate() {
                if c.to_bits() != self.cap[p].to_bits() {
                    self.cap[p] = c;
                    self.touch(p);
                }
            }
        }
        let k = if self.solved {
            self.first_changed_step()
        } else {
            0
        };
        self.refill(k, row_cap, col_cap);
        self.solved = true;
        for &p in &self.touched {
            self.is_touched[p as usize] = false;
        }
        self.touched.clear();
        #[cfg(debug_assertions)]
        if let Some(m) = scratch {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&self.level), bits(&m.level), "restart: levels");
            let (a, b): (Vec<f64>, Vec<f64>) = (self.left().collect(), m.left().collect());
            assert_eq!(bits(&a), bits(&b), "restart: capacity left");
            assert!(self.frozen().eq(m.frozen()), "restart: freeze order");
        }
        row_level.clear();
        row_level.extend_from_slice(&self.level[..nr]);
        col_level.clear();
        col_level.extend_from_slice(&self.level[nr..]);
    }

    /// Takes the state back to before step `k` (from scratch if 0) and
    /// fills from there: in 256-bit vectors where the CPU has AVX2 (checked
    /// once, in [`BipartiteMaxMin::new`]), else in the baseline's 128-bit
    /// ones. The same code either way, element by element the same IEEE
    /// operations in the same order (Rust never fuses a multiply and an
    /// add), so the levels are the same to the bit; only more lanes run at
    /// once. FB2010 `pias` spends most of its solve in [`freeze`]'s
    /// division, which AVX2 does four at a time (docs/lab/benchmarks-history.md,
    /// command 158).
    fn refill(&mut self, k: usize, row_cap: &[f64], col_cap: &[f64]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only where the CPU has AVX2.
            unsafe { self.refill_avx2(k, row_cap, col_cap) };
            return;
        }
        self.refill_here(k, row_cap, col_cap);
    }

    /// [`BipartiteMaxMin::refill`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn refill_avx2(&mut self, k: usize, row_cap: &[f64], col_cap: &[f64]) {
        self.refill_here(k, row_cap, col_cap);
    }

    /// [`BipartiteMaxMin::refill`]'s body, inlined into each of its
    /// compilations.
    #[inline(always)]
    fn refill_here(&mut self, k: usize, row_cap: &[f64], col_cap: &[f64]) {
        if k == 0 {
            self.start(row_cap, col_cap);
        } else {
            self.rewind(k);
        }
        self.fill();
    }

    /// Each port's capacity left after the last solve, rows then columns,
    /// clamped at 0: a port it froze keeps its residual and unfrozen flows
    /// from when it was picked (later steps take nothing from it), less
    /// those flows at its level; any other port, its residual less what
    /// its flows took as their other ends froze. Costs the ports, not the
    /// flows.
    pub fn left(&self) -> impl Iterator<Item = f64> + '_ {
        let (res, w) = (&self.res, &self.w);
        res.iter()
            .zip(w)
            .zip(&self.level)
            .map(|((&r, &w), &level)| {
                let r = if level == f64::INFINITY {
                    r
                } else {
                    r - w * level
                };
                if r > 0.0 {
                    r
                } else {
                    0.0
                }
            })
    }

    /// The ports the last solve froze, in freeze order, each with the level
    /// it froze at (rows `0..n_rows`, then columns `n_rows + c`). A port
    /// not listed took, from its capacity, `count * level` for each port of
    /// the other side with flows to it, in this order (what a caller needs
    /// to replay its residual on another capacity).
    pub fn frozen(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.steps.iter().map(|st| (st.port as usize, st.level))
    }

    /// The state before the first step of a solve from scratch.
    #[inline(always)]
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
        self.frozen_at.clear();
        self.frozen_at.resize(nr + nc, u32::MAX);
        self.steps.clear();
        self.copies.clear();
    }

    /// The first step of the last solve's order that the changes since can
    /// alter (see the module doc), or the number of steps if none: the
    /// touched ports are walked along the order under the new counts, in
    /// the arithmetic of a solve from scratch, and `walk` holds them as they
    /// stand before the step returned. The copies of the steps walked get
    /// the touched ports' new weights.
    fn first_changed_step(&mut self) -> usize {
        let nr = self.n_rows;
        self.walk_rows.clear();
        self.walk_cols.clear();
        for &p in &self.touched {
            let n = self.n[p as usize];
            let (res, w) = (self.cap[p as usize], n as f64);
            let e = WalkPort {
                port: p,
                n: n as u32,
                res,
                w,
                share: share_of(res, w),
            };
            if (p as usize) < nr {
                self.walk_rows.push(e);
            } else {
                self.walk_cols.push(WalkPort {
                    port: p - nr as u32,
                    ..e
                });
            }
        }
        // Weights are whole numbers of flows, at most a port's flows.
        let most = self
            .walk_rows
            .iter()
            .chain(&self.walk_cols)
            .fold(0, |m, e| m.max(e.n));
        for x in self.recip.len()..=most as usize {
            self.recip.push(1.0 / x as f64);
        }
        let lowest = |walk: &[WalkPort]| walk.iter().fold(f64::INFINITY, |m, e| m.min(e.share));
        let (mut low_rows, mut low_cols) = (lowest(&self.walk_rows), lowest(&self.walk_cols));
        for (k, st) in self.steps.iter().enumerate() {
            if self.is_touched[st.port as usize] {
                return k;
            }
            // The bounds decide unless one is near the step's share; the
            // shares of those near it are then computed as a solve from
            // scratch would (and kept: an exact share is a bound too).
            // The smallest normal added covers shares that are subnormal.
            let near = st.best * (1.0 + WALK_MARGIN) + f64::MIN_POSITIVE;
            if low_rows.min(low_cols) <= near {
                for walk in [&mut self.walk_rows, &mut self.walk_cols] {
                    for e in walk.iter_mut().filter(|e| e.share <= near) {
                        e.share = share_of(e.res, e.w);
                        if e.share <= st.best {
                            return k;
                        }
                    }
                }
                (low_rows, low_cols) = (lowest(&self.walk_rows), lowest(&self.walk_cols));
            }
            let p = st.port as usize;
            // A row's step updates the columns through its matrix row, a
            // column's the rows through its transposed one.
            let (walk, row, low) = if p < nr {
                let row = &self.count[p * self.n_cols..(p + 1) * self.n_cols];
                (&mut self.walk_cols, row, &mut low_cols)
            } else {
                let row = &self.count_t[(p - nr) * nr..(p - nr + 1) * nr];
                (&mut self.walk_rows, row, &mut low_rows)
            };
            *low = if st.copy_at == NO_COPY {
                walk_step::<false>(walk, row, st.level, &mut [], &self.recip)
            } else {
                let at = st.copy_at as usize;
                let copy = &mut self.copies[at..at + 2 * row.len()];
                walk_step::<true>(walk, row, st.level, copy, &self.recip)
            };
        }
        self.steps.len()
    }

    /// The state before step `k` under the new counts: each side that a
    /// step from `k` on updated taken back to its last copy before `k` (or
    /// to its capacities and flows, without one) and the steps between
    /// that copy and `k` replayed on it (no step before `k` touched those
    /// ports, so they replay as they ran); the ports step `k` and later
    /// froze unfrozen, and the touched ports as `first_changed_step` left
    /// them.
    #[inline(always)]
    fn rewind(&mut self, k: usize) {
        let nr = self.n_rows;
        for st in &self.steps[k..] {
            self.level[st.port as usize] = f64::INFINITY;
            self.frozen_at[st.port as usize] = u32::MAX;
        }
        // A side no later step updated stands as the last step left it.
        let later = |rows: bool| {
            self.steps[k..]
                .iter()
                .any(|st| ((st.port as usize) >= nr) == rows)
        };
        for rows in [later(true).then_some(true), later(false).then_some(false)]
            .into_iter()
            .flatten()
        {
            self.replay_side(k, rows);
        }
        if let Some(st) = self.steps[k..].iter().find(|st| st.copy_at != NO_COPY) {
            self.copies.truncate(st.copy_at as usize);
        }
        self.steps.truncate(k);
        for e in &self.walk_rows {
            self.res[e.port as usize] = e.res;
            self.w[e.port as usize] = e.w;
        }
        for e in &self.walk_cols {
            self.res[nr + e.port as usize] = e.res;
            self.w[nr + e.port as usize] = e.w;
        }
        for ((share, &level), (&res, &w)) in self
            .share
            .iter_mut()
            .zip(&self.level)
            .zip(self.res.iter().zip(&self.w))
        {
            *share = if level == f64::INFINITY {
                share_of(res, w)
            } else {
                f64::INFINITY
            };
        }
    }

    /// The rows (`rows`), or the columns, as they stood before step `k`:
    /// from the last copy of them kept before `k` (or their capacities and
    /// flows), each step between replayed as [`freeze`] made it, on the
    /// ports not frozen before it.
    #[inline(always)]
    fn replay_side(&mut self, k: usize, rows: bool) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        let (lo, len) = if rows { (0, nr) } else { (nr, nc) };
        let updates = |st: &Step| ((st.port as usize) >= nr) == rows;
        // The last step before `k` on this side with a copy.
        let from = self.steps[..k]
            .iter()
            .rposition(|st| updates(st) && st.copy_at != NO_COPY);
        let side = lo..lo + len;
        match from {
            Some(j) => {
                let at = self.steps[j].copy_at as usize;
                self.res[side.clone()].copy_from_slice(&self.copies[at..at + len]);
                self.w[side.clone()].copy_from_slice(&self.copies[at + len..at + 2 * len]);
            }
            None => {
                self.res[side.clone()].copy_from_slice(&self.cap[side.clone()]);
                for (w, &n) in self.w[side.clone()].iter_mut().zip(&self.n[side.clone()]) {
                    *w = n as f64;
                }
            }
        }
        for j in from.unwrap_or(0)..k {
            let st = self.steps[j];
            if !updates(&st) {
                continue;
            }
            let p = st.port as usize;
            let row = if p < nr {
                &self.count[p * nc..(p + 1) * nc]
            } else {
                &self.count_t[(p - nr) * nr..(p - nr + 1) * nr]
            };
            replay(
                row,
                st.level,
                j as u32,
                &self.frozen_at[side.clone()],
                &mut self.res[side.clone()],
                &mut self.w[side.clone()],
            );
        }
    }

    /// Progressive filling from the current state to the end, keeping a
    /// copy of the side each step updates.
    #[inline(always)]
    fn fill(&mut self) {
        let (nr, nc) = (self.n_rows, self.n_cols);
        let mut level = self.steps.last().map_or(0.0, |st| st.level);
        // Steps so far that updated the rows, and the columns.
        let nth_of = |cols: bool| {
            let on = |st: &&Step| ((st.port as usize) < nr) == cols;
            self.steps.iter().rfind(on).map_or(0, |st| st.nth + 1)
        };
        let mut nth = [nth_of(false), nth_of(true)];
        // Each side's lowest share, when a step already knows it.
        let mut known: [Option<(f64, Option<usize>)>; 2] = [None, None];
        loop {
            // The port with the lowest fair share; ties to rows, then lower
            // index. (A `match`, not a closure: a closure is compiled apart,
            // without the caller's AVX2.)
            let (row_best, row_at) = match known[0].take() {
                Some(x) => x,
                None => lowest_share(&self.share[..nr]),
            };
            let (col_best, col_at) = match known[1].take() {
                Some(x) => x,
                None => lowest_share(&self.share[nr..]),
            };
            let (best, p) = match (row_at, col_at) {
                (Some(i), _) if row_best <= col_best => (row_best, i),
                (_, Some(j)) => (col_best, nr + j),
                (Some(i), None) => (row_best, i),
                (None, None) => break,
            };
            // The step changes, on its port's side, only that port: the
            // ports before it there hold higher shares, so the first one
            // after it at the same share (by `==`) is that side's lowest
            // next (FB2010: so at 58-93% of steps); else that side is
            // scanned again.
            let (side, i, shares) = if p < nr {
                (0, p, &self.share[..nr])
            } else {
                (1, p - nr, &self.share[nr..])
            };
            known[side] =
                first_equal(&shares[i + 1..], best).map(|j| (shares[i + 1 + j], Some(i + 1 + j)));
            level = level.max(best);
            self.level[p] = level;
            self.share[p] = f64::INFINITY;
            self.frozen_at[p] = self.steps.len() as u32;
            let (lo, len, row) = if p < nr {
                (nr, nc, &self.count[p * nc..(p + 1) * nc])
            } else {
                let c = p - nr;
                (0, nr, &self.count_t[c * nr..(c + 1) * nr])
            };
            // The side it updates: the columns for a row's step.
            let upd = usize::from(p < nr);
            let side = lo..lo + len;
            let copy_at = if nth[upd] % CHECKPOINT == CHECKPOINT - 1 {
                let at = self.copies.len() as u32;
                self.copies.extend_from_slice(&self.res[side.clone()]);
                self.copies.extend_from_slice(&self.w[side.clone()]);
                at
            } else {
                NO_COPY
            };
            self.steps.push(Step {
                port: p as u32,
                best,
                level,
                nth: nth[upd],
                copy_at,
            });
            nth[upd] += 1;
            freeze(
                row,
                level,
                &self.level[side.clone()],
                &mut self.res[side.clone()],
                &mut self.w[side.clone()],
                &mut self.share[side],
            );
        }
    }
}

/// Takes off each port of one side what its flows to a port frozen at
/// `level` use (`row` holds their numbers), and sets its share anew; a
/// frozen port (`frozen_level` finite) is left as it is. Written without
/// branches, every value computed and then selected, so that it compiles to
/// vector code: a port with no flows there takes off `0 * level`, which
/// leaves its residual, weight and share the same to the bit, and the share
/// is [`share_of`]'s.
#[inline(always)]
fn freeze(
    row: &[u32],
    level: f64,
    frozen_level: &[f64],
    res: &mut [f64],
    w: &mut [f64],
    share: &mut [f64],
) {
    let n = row.len();
    let (frozen_level, res, w, share) = (
        &frozen_level[..n],
        &mut res[..n],
        &mut w[..n],
        &mut share[..n],
    );
    for i in 0..n {
        let live = frozen_level[i] == f64::INFINITY;
        // Loaded whether or not the port is live, or the select becomes a
        // branch around the load and the loop stays scalar.
        let n_pair = row[i] as f64;
        let k = if live { n_pair } else { 0.0 };
        let r = res[i] - k * level;
        let wt = w[i] - k;
        res[i] = r;
        w[i] = wt;
        let s = (if r > 0.0 { r } else { 0.0 }) / wt;
        share[i] = if live & (wt > 0.5) { s } else { f64::INFINITY };
    }
}

/// Step `step` of a solve made again on one side, as [`freeze`] made it:
/// each port not frozen before the step (`frozen_at` later) takes off what
/// its flows to the port frozen at `level` use (`row` holds their
/// numbers), in the same operations, so to the same bits; the shares are
/// left to the caller.
#[inline(always)]
fn replay(row: &[u32], level: f64, step: u32, frozen_at: &[u32], res: &mut [f64], w: &mut [f64]) {
    let n = row.len();
    let (frozen_at, res, w) = (&frozen_at[..n], &mut res[..n], &mut w[..n]);
    for i in 0..n {
        let live = frozen_at[i] > step;
        let n_pair = row[i] as f64;
        let k = if live { n_pair } else { 0.0 };
        res[i] -= k * level;
        w[i] -= k;
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

        /// The fill in AVX2's vectors (where the CPU has it) and in the
        /// baseline's give the same levels, capacity left and freeze order,
        /// to the bit, from scratch and at every restart after flows come
        /// and go and capacities move, on sides as wide as several lanes.
        #[test]
        fn avx2_fill_matches_baseline(
            (nr, nc) in (1usize..40, 1usize..40),
            flows in prop::collection::vec((0usize..40, 0usize..40, 1u32..4), 0..300),
            caps in prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)], 80),
            events in prop::collection::vec(
                (0usize..40, 0usize..40, any::<bool>(), 0usize..80, 0.0f64..100.0), 1..20),
        ) {
            let mut wide = BipartiteMaxMin::new(nr, nc);
            let mut base = BipartiteMaxMin::new(nr, nc);
            base.avx2 = false;
            let (mut row_cap, mut col_cap) = (caps[..nr].to_vec(), caps[40..40 + nc].to_vec());
            for &(r, c, k) in &flows {
                for _ in 0..k {
                    wide.add(r % nr, c % nc);
                    base.add(r % nr, c % nc);
                }
            }
            for &(r, c, add, p, cap) in std::iter::once(&(0, 0, false, 0, caps[0])).chain(&events) {
                let (r, c) = (r % nr, c % nc);
                if add {
                    wide.add(r, c);
                    base.add(r, c);
                } else if wide.count(r, c) > 0 {
                    wide.remove(r, c);
                    base.remove(r, c);
                }
                let p = p % (nr + nc);
                if p < nr {
                    row_cap[p] = cap;
                } else {
                    col_cap[p - nr] = cap;
                }
                let (mut a, mut b, mut x, mut y) = (vec![], vec![], vec![], vec![]);
                wide.solve(&row_cap, &col_cap, &mut a, &mut b);
                base.solve(&row_cap, &col_cap, &mut x, &mut y);
                let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&a), bits(&x));
                prop_assert_eq!(bits(&b), bits(&y));
                let (l1, l2): (Vec<f64>, Vec<f64>) = (wide.left().collect(), base.left().collect());
                prop_assert_eq!(bits(&l1), bits(&l2));
                prop_assert!(wide.frozen().eq(base.frozen()));
            }
        }
    }
}
