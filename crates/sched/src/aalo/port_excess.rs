//! The excess pass of [`PortServer`]'s solve: which cells' order flipped
//! between a row's and a column's levels, and the excess rates left to each
//! row and column after the queues' grants (the parent module's doc,
//! "Computing it").

use super::books::Co;
use super::port_server::*;
use super::AaloConfig;

impl PortServer {
    /// With one solve, lists in `sc.flipped` (sorted) the cells of `co`
    /// whose two ends' excess levels both moved (rows not re-solved, columns
    /// in `sc.cols_moved`) and whose rate or mode may move, and in
    /// `sc.still_room` the columns with room whose level stayed, by it.
    /// Such a cell's rate is its group's and its mode depends on the two
    /// levels `up` and `down` only through whether `min(up, down)` is 0 and
    /// how `up` compares with `down` (`rated`'s `visit`): it moves only if
    /// an end's level moved to or from 0 (all its row's or column's such
    /// cells are listed), or the spans `[lo, hi]` of the two levels before
    /// and now meet (else one end stays above the other). Those meeting are
    /// found by a sweep of the spans by `lo`, in
    /// O((R + C) log (R + C) + listed).
    pub(super) fn flipped(&self, cfg: &AaloConfig, co: &Co, sc: &mut RatedScratch) {
        let RatedScratch {
            flipped,
            spans,
            open_rows,
            open_cols,
            still_room,
            cols_room,
            cols_moved,
            col_moved,
            ..
        } = sc;
        let n = self.n;
        flipped.clear();
        spans.clear();
        // A moved row's sender's levels before and now (0 ahead of the
        // queues, as `rated` reads them).
        let row_levels = |r: usize| {
            let h = co.pieces[r].host as usize;
            if !self.moved_up[h] || co.row_dirty[r] {
                None
            } else if co.pieces[r].tier == cfg.ahead() {
                Some((0.0, 0.0))
            } else {
                Some((self.old_level[h], self.level_up[h]))
            }
        };
        for r in 0..co.pieces.len() {
            let Some((u0, u1)) = row_levels(r) else {
                continue;
            };
            if (u0 == 0.0) != (u1 == 0.0) {
                flipped.extend(cols_moved.iter().map(|&j| (r as u32, j)));
            } else {
                spans.push((u0.min(u1), u0.max(u1), r as u32));
            }
        }
        for &j in cols_moved.iter() {
            let h = co.cols[j as usize] as usize;
            let (d0, d1) = (self.old_level[n + h], self.level_down[h]);
            if (d0 == 0.0) != (d1 == 0.0) {
                flipped.extend(
                    (0..co.pieces.len())
                        .filter(|&r| row_levels(r).is_some())
                        .map(|r| (r as u32, j)),
                );
            } else {
                spans.push((d0.min(d1), d0.max(d1), COL_TAG | j));
            }
        }
        if !spans.is_empty() {
            spans.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
            open_rows.clear();
            open_cols.clear();
            for &(lo, hi, t) in spans.iter() {
                let (is_col, i) = (t & COL_TAG != 0, t & !COL_TAG);
                let other = if is_col {
                    &mut *open_rows
                } else {
                    &mut *open_cols
                };
                let mut k = 0;
                while k < other.len() {
                    if other[k].0 < lo {
                        other.swap_remove(k);
                    } else {
                        let o = other[k].1;
                        flipped.push(if is_col { (o, i) } else { (i, o) });
                        k += 1;
                    }
                }
                if is_col {
                    open_cols.push((hi, i));
                } else {
                    open_rows.push((hi, i));
                }
            }
        }
        flipped.sort_unstable();
        flipped.dedup();
        still_room.clear();
        still_room.extend(
            cols_room
                .iter()
                .filter(|&&j| !col_moved[j as usize])
                .map(|&j| (self.level_down[co.cols[j as usize] as usize], j)),
        );
        still_room.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }

    /// The weighted excess level (bits/s) of a sender (`up`) or receiver for
    /// a flow of queue `q` (0 with strict queues).
    pub(super) fn excess_level(&self, cfg: &AaloConfig, up: bool, host: u32, q: u32) -> f64 {
        if cfg.strict || q == cfg.ahead() {
            return 0.0;
        }
        let level = if up {
            self.level_up[host as usize]
        } else {
            self.level_down[host as usize]
        };
        cfg.weights[q as usize] * level
    }

    /// The excess (per unit of weight, bits/s) each row of `co` gets: the
    /// sum over its flows of the lower of their ends' excess levels. Only
    /// ports with room after pass 1 have an excess level: few.
    pub(super) fn excess_of_rows(&self, co: &Co, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..co.pieces.len()).map(|r| self.row_excess(co, r)));
    }

    /// Row `r`'s excess per unit of weight: `n * min(up, d)` summed over
    /// its cells with `n` flows whose receiver has room (`d > 0`), in the
    /// receivers' order. Its cells are found as the set bits of its
    /// receivers (`Co::row_dsts`) and of the receivers with room, so only
    /// cells that add are visited; a debug check sums over every column
    /// with room, cell by cell, and compares bit for bit.
    pub(super) fn row_excess(&self, co: &Co, r: usize) -> f64 {
        let up = self.level_up[co.pieces[r].host as usize];
        if up <= 0.0 {
            return 0.0;
        }
        // (Levels are infinite on ports that bind nobody: only cells with
        // flows count. The sum stays in a register: the same additions in
        // the same order.)
        // (A cell of one flow adds `1.0 * x`, which is `x`.)
        let mut sum = 0.0;
        let (dsts, multi) = co.row_dsts(r, self.words());
        for (w, ((&dsts, &multi), &room)) in
            dsts.iter().zip(multi).zip(&self.down_room_bits).enumerate()
        {
            let mut bits = dsts & room;
            while bits != 0 {
                let b = bits.trailing_zeros();
                let h = w * 64 + b as usize;
                bits &= bits - 1;
                let x = up.min(self.level_down[h]);
                if multi >> b & 1 == 0 {
                    sum += x;
                } else {
                    let n = co.matrix.count(r, co.col_at[h] as usize);
                    sum += n as f64 * x;
                }
            }
        }
        #[cfg(debug_assertions)]
        {
            let mut slow = 0.0;
            for h in 0..self.n {
                let down = self.level_down[h];
                let Some(&j) = co.col_of.get(&(h as u32)) else {
                    continue;
                };
                let n = co.matrix.count(r, j as usize);
                if down > 0.0 && n > 0 {
                    slow += n as f64 * up.min(down);
                }
            }
            assert_eq!(sum.to_bits(), slow.to_bits(), "row {r}'s excess");
        }
        sum
    }

    /// [`Self::excess_of_rows`] again for `co`, whose flows are as when
    /// `out` was summed, but only for the rows a move of the excess levels
    /// in this call reaches; the others keep their sums, bit for bit. A row
    /// sums `n * min(up, d)` over its cells with flows whose receiver has
    /// room (`d > 0`), in the receivers' order. With `D` the highest of
    /// the coflow's receivers' levels before and now: a row whose sender's
    /// level stayed, or moved with `0 < min(u0, u1)` and `D <= min(u0,
    /// u1)` (so each of its cells stays at `d`), is reached only through a
    /// cell with flows whose receiver's level moved from `d0` to `d1`
    /// without `0 < min(d0, d1)` and `max(u0, u1) <= min(d0, d1)` (which
    /// keep the receiver among those with room and the cell at `up`; a
    /// moved sender and receiver of one cell cannot both pass, as that
    /// makes `u0 = u1 = d0 = d1`). Those cells are found as the set bits
    /// of the row's receivers and of the moved ones. A row not reached has
    /// the same additions in the same order. A debug check sums every row
    /// anew.
    pub(super) fn excess_of_moved_rows(&self, co: &Co, out: &mut [f64]) {
        let n = self.n;
        let words = self.words();
        let mut d_hi = 0.0f64;
        for &h in &co.cols {
            let h = h as usize;
            d_hi = d_hi.max(self.old_level[n + h].max(self.level_down[h]));
        }
        for (r, piece) in co.pieces.iter().enumerate() {
            let h = piece.host as usize;
            let (u0, u1) = (self.old_level[h], self.level_up[h]);
            if !self.moved_up[h] && u1 <= 0.0 {
                // (Summed to 0 and staying so.)
                continue;
            }
            let row_stays = !self.moved_up[h] || (u0.min(u1) > 0.0 && u0.min(u1) >= d_hi);
            let u_hi = u0.max(u1);
            let reached = !row_stays || {
                let mut hit = false;
                'words: for (w, (&dsts, &moved)) in co
                    .row_dsts(r, words)
                    .0
                    .iter()
                    .zip(&self.down_moved_bits)
                    .enumerate()
                {
                    let mut bits = dsts & moved;
                    while bits != 0 {
                        let d = w * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let lo = self.old_level[n + d].min(self.level_down[d]);
                        if !(lo > 0.0 && lo >= u_hi) {
                            hit = true;
                            break 'words;
                        }
                    }
                }
                hit
            };
            if reached {
                out[r] = self.row_excess(co, r);
            }
        }
    }
}
