//! D-CLAS on the big switch without CPUs, port by port ([`PortServer`]):
//! a coflow is a matrix of senders by receivers solved by weighted
//! bipartite max-min, and its rates go to the driver through per-row and
//! per-column rate groups ([`Aalo`]'s `apply_ports`; see the parent
//! module's doc, "Computing it").

use super::books::{dst_words, Co, Pass1, NONE};
use super::AaloConfig;
use crate::CoflowIdx;
use coflowkit_alloc::WeightedBipartite;

/// How a slot's flows get their rate (big switch): alone.
pub(super) const SOLO_RATE: u8 = 0;
/// In its row's group 0 (rate: the row's level; no excess) or 1 (the
/// row's level plus its weighted excess level).
pub(super) const ROW_GROUP: u8 = 1;
pub(super) const ROW_EXCESS_GROUP: u8 = 2;
/// In its column's group 0 or 1, the same by its column.
pub(super) const COL_GROUP: u8 = 3;
pub(super) const COL_EXCESS_GROUP: u8 = 4;
/// In its column's level group of its row's level and weight (the row's
/// level plus its weight times the column's excess level).
pub(super) const LEVEL_GROUP: u8 = 5;
/// Mirrored: in its row's level group of its column's level (the column's
/// level plus the row's weight times the row's excess level).
pub(super) const ROW_LEVEL_GROUP: u8 = 6;

/// Scratch of `PortServer::rated`: per row of a coflow, whether it moved,
/// its solve, excess level and weight; per column, whether it moved and its
/// excess level.
#[derive(Debug, Default)]
pub(super) struct RatedScratch {
    pub(super) row_solve: Vec<u32>,
    pub(super) row_up: Vec<f64>,
    pub(super) row_w: Vec<f64>,
    pub(super) col_down: Vec<f64>,
    /// Columns whose pass-1 level moved; the others with an excess level
    /// above 0 now or before; the others whose excess level moved.
    pub(super) cols_dirty: Vec<u32>,
    pub(super) cols_room: Vec<u32>,
    pub(super) cols_moved: Vec<u32>,
    /// `cols_moved` whose excess level moved from or to 0 (`lo == 0`), and
    /// the others as (lower, higher of the level before and now, column)
    /// by the lower: the columns a row whose own level stayed sees move.
    pub(super) cols_moved_zero: Vec<u32>,
    pub(super) cols_moved_span: Vec<(f64, f64, u32)>,
    /// Scratch: the columns of one row so reached, in column order.
    pub(super) cols_reached: Vec<u32>,
    pub(super) col_room: Vec<bool>,
    /// Per column: whether its excess level moved.
    pub(super) col_moved: Vec<bool>,
    /// Per row and column: whether the rates of its groups may have moved;
    /// those rows and columns, in order; and whether these describe the
    /// coflow `rated` last returned true for (not if it had no row or no
    /// column).
    pub(super) row_moved: Vec<bool>,
    pub(super) col_moved_any: Vec<bool>,
    pub(super) rows_moved_at: Vec<u32>,
    pub(super) cols_moved_at: Vec<u32>,
    pub(super) moved_lists: bool,
    /// With one solve, the cells whose two ends' excess levels both moved
    /// that may move (see `PortServer::flipped`): (row, column), sorted.
    pub(super) flipped: Vec<(u32, u32)>,
    /// Scratch of `flipped`: the moved rows' and columns' spans (lower,
    /// higher level, row or `COL_TAG | column`), and those open in its
    /// sweep.
    pub(super) spans: Vec<(f64, f64, u32)>,
    pub(super) open_rows: Vec<(f64, u32)>,
    pub(super) open_cols: Vec<(f64, u32)>,
    /// Columns with room whose excess level did not move, by that level
    /// (level, column).
    pub(super) still_room: Vec<(f64, u32)>,
    /// Scratch: the columns with room one moved row visits, in column
    /// order.
    pub(super) row_cols: Vec<u32>,
}

/// Marks a column in `RatedScratch::spans`.
pub(super) const COL_TAG: u32 = 1 << 31;

/// A slot whose rate or way of getting it moves (big switch): its new
/// per-flow rate (bits/s) and mode ([`SOLO_RATE`], [`ROW_GROUP`], ...).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rerate {
    pub(super) slot: u32,
    /// The slot's cell: its row and column.
    pub(super) row: u32,
    pub(super) col: u32,
    pub(super) rate: f64,
    pub(super) mode: u8,
    /// The row's level ([`LEVEL_GROUP`]) or the column's
    /// ([`ROW_LEVEL_GROUP`]).
    pub(super) level: f64,
    /// With [`LEVEL_GROUP`]: the column's level group the slot is in
    /// (`Co::cell_group`) when it is at the slot's weight and another row
    /// level (the slot moves out of it to `level`, unless the group takes
    /// that level: `Aalo::relabel_level_groups`), else `NONE`.
    pub(super) mover: u32,
}

/// D-CLAS on the big switch, port by port: a coflow's flows are a matrix of
/// senders by receivers, solved by [`WeightedBipartite`] (pass 1, per coflow
/// and queue, kept while its flows stay and its grants move only as
/// [`WeightedBipartite::keeps`] allows), and the excess by one
/// weighted solve over a matrix of every active flow's queue weight (pass
/// 2). The same rule as [`Server`], whose slots and paths it replaces by
/// ports.
#[derive(Debug)]
pub(super) struct PortServer {
    pub(super) n: usize,
    pub(super) cap_up: Vec<f64>,
    pub(super) cap_down: Vec<f64>,
    /// Per queue and host (`q * n + h`): its active flows out of and into
    /// the host.
    pub(super) on_up: Vec<u32>,
    pub(super) on_down: Vec<u32>,
    pub(super) grant_up: Vec<f64>,
    pub(super) grant_down: Vec<f64>,
    /// The split `grants` keeps, and per port (senders, then receivers)
    /// whether its counts moved since it was last split.
    pub(super) split_up: Vec<f64>,
    pub(super) split_down: Vec<f64>,
    pub(super) stale: Vec<bool>,
    pub(super) res_up: Vec<f64>,
    pub(super) res_down: Vec<f64>,
    /// Every active flow's queue weight, by (sender, receiver).
    pub(super) excess: WeightedBipartite,
    pub(super) level_up: Vec<f64>,
    pub(super) level_down: Vec<f64>,
    /// Ports whose excess level changed in this call, and those whose
    /// level is above 0 now or was before it (the others give no flow any
    /// excess, before or after).
    pub(super) moved_up: Vec<bool>,
    pub(super) moved_down: Vec<bool>,
    pub(super) room_up: Vec<bool>,
    pub(super) room_down: Vec<bool>,
    pub(super) old_level: Vec<f64>,
    pub(super) used_up: Vec<f64>,
    pub(super) used_down: Vec<f64>,
    pub(super) row_cap: Vec<f64>,
    pub(super) col_cap: Vec<f64>,
    /// Per coflow of the order: the queues it has active flows in (bits;
    /// bit `K`: ahead of them).
    pub(super) queues_of: Vec<u128>,
    /// Receivers with an excess level above 0, and those whose excess
    /// level moved in this call, as bit sets over the hosts
    /// ([`dst_words`] words), read against a row's receivers
    /// (`Co::row_dsts`).
    pub(super) down_room_bits: Vec<u64>,
    pub(super) down_moved_bits: Vec<u64>,
}

impl PortServer {
    pub(super) fn new(caps: &[f64], n: usize, cfg: &AaloConfig) -> PortServer {
        // The queues and, last, `local=first`'s tier ahead of them.
        let k = cfg.n_queues() + 1;
        PortServer {
            n,
            cap_up: (0..n).map(|h| caps[2 * h]).collect(),
            cap_down: (0..n).map(|h| caps[2 * h + 1]).collect(),
            on_up: vec![0; k * n],
            on_down: vec![0; k * n],
            grant_up: vec![0.0; k * n],
            grant_down: vec![0.0; k * n],
            split_up: vec![0.0; k * n],
            split_down: vec![0.0; k * n],
            stale: vec![true; 2 * n],
            res_up: vec![],
            res_down: vec![],
            excess: WeightedBipartite::new(n, n),
            level_up: vec![0.0; n],
            level_down: vec![0.0; n],
            moved_up: vec![false; n],
            moved_down: vec![false; n],
            room_up: vec![false; n],
            room_down: vec![false; n],
            old_level: vec![],
            used_up: vec![],
            used_down: vec![],
            row_cap: vec![],
            col_cap: vec![],
            queues_of: vec![],
            down_room_bits: vec![0; dst_words(n)],
            down_moved_bits: vec![0; dst_words(n)],
        }
    }

    /// Number of hosts.
    pub(super) fn n_hosts(&self) -> usize {
        self.n
    }

    /// Words of a bit set over the hosts (`Co::row_dsts`).
    pub(super) fn words(&self) -> usize {
        dst_words(self.n)
    }

    /// Lists in `todo` the live slots of `co` whose rate or way of getting
    /// it (alone, or in a row's, column's or level group) differs from what was
    /// last applied, with the new one, comparing with `Co::cell_rate` and
    /// `Co::cell_group` (the slots themselves are read only if they move).
    /// It looks at every cell if the coflow changed shape or queues, else
    /// at the cells a moved input reaches: a cell's rate is a function of
    /// its row's and column's pass-1 levels and of its ends' excess levels,
    /// and the excess levels count only when both are above 0 (the excess
    /// is their minimum). So a cell is looked at if its row's or column's
    /// pass-1 level moved, or one end's excess level moved while the other
    /// end has room (an excess level above 0 now or before); with one
    /// solve, a cell whose two ends' levels both moved only if
    /// [`Self::flipped`] lists it (a debug check visits the others and
    /// asserts that none moves).
    /// Returns false if nothing the coflow's rates depend on moved (its
    /// cells, solves, levels and queues are as when last applied): its
    /// groups' and senders' rates are then unchanged too.
    pub(super) fn rated(
        &self,
        cfg: &AaloConfig,
        co: &mut Co,
        sc: &mut RatedScratch,
        todo: &mut Vec<Rerate>,
    ) -> bool {
        let (n_rows, n_cols) = (co.pieces.len(), co.cols.len());
        let strict = cfg.strict;
        let up_moved = |r: usize| !strict && self.moved_up[co.pieces[r].host as usize];
        let down_moved = |j: usize| !strict && self.moved_down[co.cols[j] as usize];
        let all = co.all_dirty;
        let moved = all
            || co.resolved
            || (0..n_rows).any(|r| co.row_dirty[r] || up_moved(r))
            || (0..n_cols).any(|j| co.col_dirty[j] || down_moved(j));
        sc.moved_lists = false;
        if !moved || n_rows == 0 || n_cols == 0 {
            co.all_dirty = false;
            co.resolved = false;
            co.row_dirty.iter_mut().for_each(|d| *d = false);
            co.col_dirty.iter_mut().for_each(|d| *d = false);
            return moved;
        }
        // Per row: the solve of its queue (`NONE` if none: it has no live
        // cell), its excess level and weight; per column, its excess level.
        sc.row_solve.clear();
        sc.row_up.clear();
        sc.row_w.clear();
        for piece in &co.pieces {
            let si = if co.solves.len() == 1 {
                0
            } else {
                co.solves
                    .iter()
                    .position(|p| p.queue == piece.tier)
                    .map_or(NONE, |i| i as u32)
            };
            sc.row_solve.push(si);
            // Ahead of the queues (`local=first`): no excess, no weight.
            let ahead = piece.tier == cfg.ahead();
            sc.row_up.push(if strict || ahead {
                0.0
            } else {
                self.level_up[piece.host as usize]
            });
            sc.row_w.push(if ahead {
                0.0
            } else {
                cfg.weights[piece.tier as usize]
            });
        }
        sc.col_down.clear();
        sc.col_down.extend(co.cols.iter().map(|&h| {
            if strict {
                0.0
            } else {
                self.level_down[h as usize]
            }
        }));
        sc.cols_dirty.clear();
        sc.cols_room.clear();
        sc.cols_moved.clear();
        sc.col_room.clear();
        sc.col_moved.clear();
        for j in 0..n_cols {
            let room = !strict && self.room_down[co.cols[j] as usize];
            sc.col_room.push(room);
            sc.col_moved.push(down_moved(j));
            if co.col_dirty[j] {
                sc.cols_dirty.push(j as u32);
            } else {
                if room {
                    sc.cols_room.push(j as u32);
                }
                if down_moved(j) {
                    sc.cols_moved.push(j as u32);
                }
            }
        }
        // The columns a row whose sender's level stayed at `up` sees move
        // (see `excess_reaches`): those with `lo <= up` and, with one solve,
        // `lo == 0` or `up <= hi`; found by `lo` in order.
        sc.cols_moved_zero.clear();
        sc.cols_moved_span.clear();
        for &j in &sc.cols_moved {
            let h = co.cols[j as usize] as usize;
            let (d0, d1) = (self.old_level[self.n + h], self.level_down[h]);
            let (lo, hi) = (d0.min(d1), d0.max(d1));
            if lo > 0.0 {
                sc.cols_moved_span.push((lo, hi, j));
            } else {
                sc.cols_moved_zero.push(j);
            }
        }
        sc.cols_moved_span
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        // Which rows' and columns' group rates may move: their pass-1 or
        // excess level moved (a row's rate group is its level plus its
        // weight times its sender's excess level, a column's and its level
        // groups' the same by its receiver).
        sc.row_moved.clear();
        sc.rows_moved_at.clear();
        for r in 0..n_rows {
            let m = all || co.row_dirty[r] || up_moved(r);
            sc.row_moved.push(m);
            if m {
                sc.rows_moved_at.push(r as u32);
            }
        }
        sc.col_moved_any.clear();
        sc.cols_moved_at.clear();
        for j in 0..n_cols {
            let m = all || co.col_dirty[j] || sc.col_moved[j];
            sc.col_moved_any.push(m);
            if m {
                sc.cols_moved_at.push(j as u32);
            }
        }
        sc.moved_lists = true;
        let single = co.solves.len() == 1;
        // A cell whose row did not move sees its column's excess level `d`
        // only through `min(up, d)` against 0 and `up` against `d`, and, when
        // it sends alone at `lr.min(lc) + w * d` (more than one solve),
        // through `d` itself when `d < up`. So a column whose level moved
        // within one of `(up, inf]` and (with one solve) `(0, up)` leaves it
        // as it was. (The same for a row whose sender's level moved within
        // `(0, d)`: its cells at `lr <= lc` stay in the row's excess group,
        // the others in its mirrored level group of their column's level.)
        let span_free = single;
        // With one solve, a moved row visits only the columns that
        // `flipped` and `still_room` list (below); built only if some row
        // not re-solved has moved.
        let sweep =
            single && !strict && !all && (0..n_rows).any(|r| !co.row_dirty[r] && up_moved(r));
        if sweep {
            self.flipped(cfg, co, sc);
        }
        let co_ref = &*co;
        let mut reached = std::mem::take(&mut sc.cols_reached);
        let mut row_cols = std::mem::take(&mut sc.row_cols);
        let sc_ref = &*sc;
        let visit = |r: usize, j: usize, todo: &mut Vec<Rerate>| {
            let (co, sc) = (co_ref, sc_ref);
            if co.matrix.count(r, j) == 0 {
                return;
            }
            let p = &co.solves[sc.row_solve[r] as usize];
            let (lr, lc) = (p.row_level[r], p.col_level[j]);
            let (up, down, w) = (sc.row_up[r], sc.col_down[j], sc.row_w[r]);
            // A flow gets min(row, column) of its coflow's levels plus its
            // weight times min(sender, receiver) of the excess levels. When
            // both minima fall on its row (or both on its column), the rate
            // is the row's (column's), shared by all such flows: a group.
            let excess = up.min(down);
            let (x, mode) = if lr <= lc && excess == 0.0 {
                (lr, ROW_GROUP)
            } else if lr <= lc && up <= down {
                (lr + w * up, ROW_EXCESS_GROUP)
            } else if lc < lr && single && excess == 0.0 {
                (lc, COL_GROUP)
            } else if lc < lr && single && down <= up {
                (lc + w * down, COL_EXCESS_GROUP)
            } else if lr <= lc {
                // (Here the excess is `down`, below `up`.)
                (lr + w * down, LEVEL_GROUP)
            } else if lc < lr && excess > 0.0 && up < down {
                (lc + w * up, ROW_LEVEL_GROUP)
            } else {
                (lr.min(lc) + w * excess, SOLO_RATE)
            };
            let at = r * n_cols + j;
            let applied = co.cell_group[at];
            let mut mover = NONE;
            let same = match mode {
                SOLO_RATE => {
                    let rate = co.cell_rate[at];
                    applied == NONE && crate::rate_stands(rate, x)
                }
                ROW_GROUP | ROW_EXCESS_GROUP => {
                    let g = co.row_group[r][(mode == ROW_EXCESS_GROUP) as usize];
                    g != NONE && applied == g
                }
                LEVEL_GROUP => {
                    // One look at the column's level groups: the one of
                    // this level and weight, and the one applied if it is
                    // at this weight and another level (the slot moves
                    // from it: `Rerate::mover`).
                    let (mut g, mut from) = (NONE, NONE);
                    for lg in &co.level_groups[j] {
                        if lg.weight.to_bits() != w.to_bits() {
                            continue;
                        }
                        if lg.level.to_bits() == lr.to_bits() {
                            g = lg.group;
                        } else if lg.group == applied {
                            from = applied;
                        }
                    }
                    mover = from;
                    g != NONE && applied == g
                }
                ROW_LEVEL_GROUP => {
                    let g = co.row_level_group(r, lc, w);
                    g != NONE && applied == g
                }
                _ => {
                    let g = co.col_group[j][(mode == COL_EXCESS_GROUP) as usize];
                    g != NONE && applied == g
                }
            };
            if !same {
                todo.push(Rerate {
                    slot: co.cell[at],
                    row: r as u32,
                    col: j as u32,
                    rate: x,
                    mode,
                    level: if mode == ROW_LEVEL_GROUP { lc } else { lr },
                    mover,
                });
            }
        };
        // Whether a move of the excess levels reaches cell (r, j): `row_moved`
        // (its sender's level moved), `up_room` (its sender has room) and
        // `up` (its sender's excess level) are its row's.
        // `up_span` is the lower and higher of its sender's level before and
        // now: a cell whose receiver's level `d` did not move sees a move of
        // its sender's level `up` only through `min(up, d)` against 0 and
        // `up` against `d`, and, sending alone at `lc + w * up` (no level
        // groups), through `up` itself when `up < d`: a move within `(d,
        // inf]` leaves it as it was. (Both only without strict queues: the
        // levels moved.)
        let down_now = |j: usize| self.level_down[co_ref.cols[j] as usize];
        // A cell whose receiver's level did not move sees a move of its
        // sender's level from `up0` to `up1` within `(0, d)` only through
        // the group it is in (its row's excess group, or its mirrored level
        // group): `(lo, hi)` of the two inside `(0, d)` leaves it as it was
        // too.
        let up_reaches = |up_lo: f64, up_hi: f64, j: usize| {
            let d = down_now(j);
            !(up_lo > d || (up_lo > 0.0 && up_hi < d))
        };
        let excess_reaches =
            |row_moved: bool, (up_lo, up_hi): (f64, f64), up_room: bool, up: f64, j: usize| {
                if row_moved {
                    sc_ref.col_moved[j] || (sc_ref.col_room[j] && up_reaches(up_lo, up_hi, j))
                } else if up_room && sc_ref.col_moved[j] {
                    let (d0, d1) = (
                        self.old_level[self.n + co_ref.cols[j] as usize],
                        down_now(j),
                    );
                    let (lo, hi) = (d0.min(d1), d0.max(d1));
                    !(lo > up || (span_free && lo > 0.0 && hi < up))
                } else {
                    false
                }
            };
        // With one solve, a cell's rate follows its row's pass-1 level only
        // when `lr <= lc` (else it is its column's, or `lc` plus its share
        // of the excess), and its column's only when `lc < lr`: a row whose
        // level moved from `lr0` to `lr1` leaves the cells with `lc <
        // min(lr0, lr1)` as they were, a column the cells with `lr <=
        // min(lc0, lc1)`.
        let pass1 = if single { co_ref.solves.first() } else { None };
        // The sender's levels the lists in `reached` were found for (level,
        // start, end; at most `REACHED_LISTS`): the columns so reached
        // depend on it alone, and rows of one coflow often share it.
        const REACHED_LISTS: usize = 4;
        let mut lists = [(0.0f64, 0u32, 0u32); REACHED_LISTS];
        let mut n_lists = 0;
        reached.clear();
        let mut at_flip = 0;
        // Debug: the columns `slow` (today's test, cell by cell) lists for
        // row `r` and the sweep left out move nothing, and those it lists
        // are among them, in their order.
        #[cfg(debug_assertions)]
        let left_out = |r: usize, slow: &[u32], fast: &[u32]| {
            let mut k = 0;
            for &j in slow {
                if k < fast.len() && fast[k] == j {
                    k += 1;
                    continue;
                }
                let mut probe = vec![];
                visit(r, j as usize, &mut probe);
                assert!(
                    probe.is_empty(),
                    "cell ({r}, {j}) left out by the sweep moves: {probe:?}"
                );
            }
            assert_eq!(
                k,
                fast.len(),
                "row {r}: the sweep's columns {fast:?} within {slow:?}"
            );
        };
        for r in 0..n_rows {
            let row_moved = up_moved(r);
            let up_room = !strict && self.room_up[co_ref.pieces[r].host as usize];
            let up = sc_ref.row_up[r];
            let up_span = if row_moved {
                let h = co_ref.pieces[r].host as usize;
                let (u0, u1) = (self.old_level[h], self.level_up[h]);
                (u0.min(u1), u0.max(u1))
            } else {
                (0.0, 0.0)
            };
            if all || (co_ref.row_dirty[r] && pass1.is_none()) {
                for j in 0..n_cols {
                    visit(r, j, todo);
                }
                continue;
            }
            if co_ref.row_dirty[r] {
                let p = pass1.expect("one solve");
                let m = p.prev_row_level[r].min(p.row_level[r]);
                for j in 0..n_cols {
                    if co_ref.col_dirty[j]
                        || p.col_level[j] >= m
                        || excess_reaches(row_moved, up_span, up_room, up, j)
                    {
                        visit(r, j, todo);
                    }
                }
                continue;
            }
            for &j in &sc_ref.cols_dirty {
                let j = j as usize;
                let reached = match pass1 {
                    Some(p) => p.row_level[r] > p.prev_col_level[j].min(p.col_level[j]),
                    None => true,
                };
                if reached || excess_reaches(row_moved, up_span, up_room, up, j) {
                    visit(r, j, todo);
                }
            }
            // This row's cells whose two ends' excess levels moved and may
            // move (`flipped`, by column).
            let flips = if sweep && row_moved {
                while at_flip < sc_ref.flipped.len() && (sc_ref.flipped[at_flip].0 as usize) < r {
                    at_flip += 1;
                }
                let start = at_flip;
                while at_flip < sc_ref.flipped.len() && sc_ref.flipped[at_flip].0 as usize == r {
                    at_flip += 1;
                }
                &sc_ref.flipped[start..at_flip]
            } else {
                &[]
            };
            if sweep && row_moved {
                // The columns with room the loop below visits: those whose
                // level moved, if `flipped` lists them, and the others whose
                // level is within `up_span` (`up_reaches`), in column order.
                let (lo, hi) = up_span;
                let still = &sc_ref.still_room;
                let a = still.partition_point(|x| x.0 < lo);
                let b = if lo > 0.0 {
                    a + still[a..].partition_point(|x| x.0 <= hi)
                } else {
                    still.len()
                };
                row_cols.clear();
                row_cols.extend(
                    flips
                        .iter()
                        .filter(|x| sc_ref.col_room[x.1 as usize])
                        .map(|x| x.1),
                );
                row_cols.extend(still[a..b].iter().map(|x| x.1));
                row_cols.sort_unstable();
                #[cfg(debug_assertions)]
                {
                    let slow: Vec<u32> = sc_ref
                        .cols_room
                        .iter()
                        .copied()
                        .filter(|&j| {
                            sc_ref.col_moved[j as usize]
                                || up_reaches(up_span.0, up_span.1, j as usize)
                        })
                        .collect();
                    left_out(r, &slow, &row_cols);
                }
                for &j in &row_cols {
                    visit(r, j as usize, todo);
                }
            } else if row_moved {
                for &j in &sc_ref.cols_room {
                    let j = j as usize;
                    if sc_ref.col_moved[j] || up_reaches(up_span.0, up_span.1, j) {
                        visit(r, j, todo);
                    }
                }
            }
            if up_room && !row_moved {
                // As `excess_reaches` says, found by `lo` (then in column
                // order, as the loop below would visit them); kept for the
                // rows whose senders are at the same level.
                let found = lists[..n_lists].iter().find(|x| x.0 == up);
                let (start, end) = match found {
                    Some(&(_, start, end)) => (start as usize, end as usize),
                    None => {
                        if n_lists == REACHED_LISTS {
                            n_lists = 0;
                            reached.clear();
                        }
                        let start = reached.len();
                        reached.extend_from_slice(&sc_ref.cols_moved_zero);
                        let spans = &sc_ref.cols_moved_span;
                        let end = spans.partition_point(|x| x.0 <= up);
                        reached.extend(
                            spans[..end]
                                .iter()
                                .filter(|x| !(span_free && x.1 < up))
                                .map(|x| x.2),
                        );
                        reached[start..].sort_unstable();
                        lists[n_lists] = (up, start as u32, reached.len() as u32);
                        n_lists += 1;
                        (start, reached.len())
                    }
                };
                let reached = &reached[start..end];
                #[cfg(debug_assertions)]
                {
                    let slow: Vec<u32> = sc_ref
                        .cols_moved
                        .iter()
                        .copied()
                        .filter(|&j| excess_reaches(row_moved, up_span, up_room, up, j as usize))
                        .collect();
                    assert_eq!(reached, slow, "columns reached by their excess levels");
                }
                for &j in reached {
                    visit(r, j as usize, todo);
                }
            } else if up_room && sweep {
                // (`row_moved`: the columns without room whose level moved,
                // if `flipped` lists them.)
                let mut fast = flips
                    .iter()
                    .map(|x| x.1)
                    .filter(|&j| !sc_ref.col_room[j as usize]);
                #[cfg(debug_assertions)]
                {
                    let slow: Vec<u32> = sc_ref
                        .cols_moved
                        .iter()
                        .copied()
                        .filter(|&j| {
                            !(row_moved && sc_ref.col_room[j as usize])
                                && excess_reaches(row_moved, up_span, up_room, up, j as usize)
                        })
                        .collect();
                    let listed: Vec<u32> = fast.clone().collect();
                    left_out(r, &slow, &listed);
                }
                for j in &mut fast {
                    visit(r, j as usize, todo);
                }
            } else if up_room {
                for &j in &sc_ref.cols_moved {
                    // (Those with room were just looked at if the row moved.)
                    if !(row_moved && sc_ref.col_room[j as usize])
                        && excess_reaches(row_moved, up_span, up_room, up, j as usize)
                    {
                        visit(r, j as usize, todo);
                    }
                }
            }
        }
        sc.cols_reached = reached;
        sc.row_cols = row_cols;
        co.all_dirty = false;
        co.resolved = false;
        co.row_dirty.iter_mut().for_each(|d| *d = false);
        co.col_dirty.iter_mut().for_each(|d| *d = false);
        true
    }

    /// `count` more (or fewer) active flows of queue `q` from `src` to `dst`.
    pub(super) fn add(&mut self, q: u32, cfg: &AaloConfig, src: u32, dst: u32, count: i64) {
        let (q, src, dst) = (q as usize, src as usize, dst as usize);
        let bump = |x: &mut u32| *x = (*x as i64 + count) as u32;
        bump(&mut self.on_up[q * self.n + src]);
        bump(&mut self.on_down[q * self.n + dst]);
        self.stale[src] = true;
        self.stale[self.n + dst] = true;
        // (Flows ahead of the queues take no excess.)
        if q != cfg.ahead() as usize {
            self.excess
                .add(src, dst, count, count as f64 * cfg.weights[q]);
        }
    }

    /// Each port's capacity left after the tier ahead of the queues (all of
    /// it without `local=first`) split between the queues present on it, by
    /// weight (into `grant_up`, `grant_down`, which pass 1 then draws
    /// down). Without `local=first` that capacity is the port's, so the
    /// split is kept (`split_up`, `split_down`) and only the ports whose
    /// counts moved since (`stale`) are split again: the others' grants are
    /// as they were, bit for bit (a debug check splits them again).
    pub(super) fn grants(&mut self, cfg: &AaloConfig) {
        let (n, k) = (self.n, cfg.n_queues());
        let all = cfg.local_first;
        for (side, (on, grant, cap)) in [
            (&self.on_up, &mut self.split_up, &self.res_up),
            (&self.on_down, &mut self.split_down, &self.res_down),
        ]
        .into_iter()
        .enumerate()
        {
            let stale = &mut self.stale[side * n..(side + 1) * n];
            for h in 0..n {
                if !(all || std::mem::take(&mut stale[h])) {
                    #[cfg(debug_assertions)]
                    for q in 0..k {
                        let w: f64 = (0..k)
                            .filter(|&q| on[q * n + h] > 0)
                            .map(|q| cfg.weights[q])
                            .sum();
                        let fresh = if on[q * n + h] > 0 {
                            cap[h] * cfg.weights[q] / w
                        } else {
                            0.0
                        };
                        assert_eq!(fresh.to_bits(), grant[q * n + h].to_bits(), "kept grant");
                    }
                    continue;
                }
                let w: f64 = (0..k)
                    .filter(|&q| on[q * n + h] > 0)
                    .map(|q| cfg.weights[q])
                    .sum();
                for q in 0..k {
                    grant[q * n + h] = if on[q * n + h] > 0 {
                        cap[h] * cfg.weights[q] / w
                    } else {
                        0.0
                    };
                }
            }
        }
        self.grant_up.clone_from(&self.split_up);
        self.grant_down.clone_from(&self.split_down);
    }

    pub(super) fn allocate(&mut self, cfg: &AaloConfig, order: &[CoflowIdx], co: &mut [Co]) {
        let (n, k) = (self.n, cfg.n_queues());
        self.res_up.clone_from(&self.cap_up);
        self.res_down.clone_from(&self.cap_down);
        for &c in order {
            for p in &mut co[c as usize].solves {
                p.seen = false;
            }
        }
        // Pass 1, queue by queue, coflow by coflow; with `local=first`, the
        // tier ahead of the queues (`K`) first, on the whole capacity.
        self.queues_of.clear();
        self.queues_of.extend(order.iter().map(|&c| {
            co[c as usize]
                .pieces
                .iter()
                .filter(|p| p.n_active > 0)
                .fold(0u128, |m, p| m | 1 << p.tier)
        }));
        let first = cfg.local_first.then_some(cfg.ahead());
        for q in first.into_iter().chain(0..k as u32) {
            if q == 0 && !cfg.strict {
                self.grants(cfg);
            }
            for (i, &c) in order.iter().enumerate() {
                if self.queues_of[i] & 1 << q == 0 {
                    continue;
                }
                let cc = &mut co[c as usize];
                // Strict: the residual; weighted: the queue's grants, and
                // the residual too.
                type Pair<'a> = (&'a mut [f64], &'a mut [f64]);
                let (src, mut also): (Pair<'_>, Option<Pair<'_>>) =
                    if cfg.strict || q == cfg.ahead() {
                        ((&mut self.res_up[..], &mut self.res_down[..]), None)
                    } else {
                        let at = q as usize * n;
                        (
                            (
                                &mut self.grant_up[at..at + n],
                                &mut self.grant_down[at..at + n],
                            ),
                            Some((&mut self.res_up[..], &mut self.res_down[..])),
                        )
                    };
                let (src_up, src_down) = src;
                let clamp = |x: f64, cap: f64| if x <= 1e-9 * cap { 0.0 } else { x };
                self.row_cap.clear();
                self.row_cap.extend(cc.pieces.iter().map(|p| {
                    let h = p.host as usize;
                    if p.tier == q {
                        clamp(src_up[h], self.cap_up[h])
                    } else {
                        0.0
                    }
                }));
                self.col_cap.clear();
                self.col_cap.extend(
                    cc.cols
                        .iter()
                        .map(|&h| clamp(src_down[h as usize], self.cap_down[h as usize])),
                );
                let at = match cc.solves.iter().position(|p| p.queue == q) {
                    Some(i) => i,
                    None => {
                        cc.all_dirty = true;
                        cc.solves.push(Pass1 {
                            queue: q,
                            version: u64::MAX,
                            ..Pass1::default()
                        });
                        cc.solves.len() - 1
                    }
                };
                let p = &mut cc.solves[at];
                p.seen = true;
                // Solved again when its flows moved, or a capacity moved
                // beyond what keeps the latest solve's result
                // (`WeightedBipartite::keeps`; `row_cap`, `col_cap` stay
                // those it was solved at).
                let same_caps = p.row_cap == self.row_cap && p.col_cap == self.col_cap;
                let kept = || {
                    WeightedBipartite::keeps(&self.row_cap, &p.row_cap, &p.row_level, &p.row_used)
                        && WeightedBipartite::keeps(
                            &self.col_cap,
                            &p.col_cap,
                            &p.col_level,
                            &p.col_used,
                        )
                };
                if p.version == cc.version && !same_caps && kept() {
                    #[cfg(debug_assertions)]
                    {
                        let (mut rl, mut cl, mut ru, mut cu) = (vec![], vec![], vec![], vec![]);
                        cc.matrix.solve(
                            &self.row_cap,
                            &self.col_cap,
                            &mut rl,
                            &mut cl,
                            &mut ru,
                            &mut cu,
                        );
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&rl), bits(&p.row_level), "kept solve's row levels");
                        assert_eq!(bits(&cl), bits(&p.col_level), "kept solve's column levels");
                        assert_eq!(bits(&ru), bits(&p.row_used), "kept solve's row uses");
                        assert_eq!(bits(&cu), bits(&p.col_used), "kept solve's column uses");
                    }
                } else if p.version != cc.version || !same_caps {
                    p.version = cc.version;
                    cc.resolved = true;
                    p.row_cap.clone_from(&self.row_cap);
                    p.col_cap.clone_from(&self.col_cap);
                    // Keep the old levels to mark the rows and columns whose
                    // rates move.
                    p.prev_row_level.clone_from(&p.row_level);
                    p.prev_col_level.clone_from(&p.col_level);
                    self.old_level.clear();
                    self.old_level.extend_from_slice(&p.row_level);
                    let n_old_rows = self.old_level.len();
                    self.old_level.extend_from_slice(&p.col_level);
                    cc.matrix.solve(
                        &self.row_cap,
                        &self.col_cap,
                        &mut p.row_level,
                        &mut p.col_level,
                        &mut p.row_used,
                        &mut p.col_used,
                    );
                    if n_old_rows != p.row_level.len()
                        || self.old_level.len() != n_old_rows + p.col_level.len()
                    {
                        cc.all_dirty = true;
                    } else {
                        for (r, &l) in p.row_level.iter().enumerate() {
                            if l != self.old_level[r] {
                                cc.row_dirty[r] = true;
                            }
                        }
                        for (j, &l) in p.col_level.iter().enumerate() {
                            if l != self.old_level[n_old_rows + j] {
                                cc.col_dirty[j] = true;
                            }
                        }
                    }
                }
                for (r, piece) in cc.pieces.iter().enumerate() {
                    let h = piece.host as usize;
                    src_up[h] -= p.row_used[r];
                    if let Some((up, _)) = &mut also {
                        up[h] -= p.row_used[r];
                    }
                }
                for (j, &h) in cc.cols.iter().enumerate() {
                    src_down[h as usize] -= p.col_used[j];
                    if let Some((_, down)) = &mut also {
                        down[h as usize] -= p.col_used[j];
                    }
                }
            }
        }
        for &c in order {
            let cc = &mut co[c as usize];
            let n = cc.solves.len();
            cc.solves.retain(|p| p.seen);
            cc.all_dirty |= cc.solves.len() != n;
        }
        // Pass 2: the excess, by weight.
        if !cfg.strict {
            for h in 0..n {
                if self.res_up[h] <= 1e-9 * self.cap_up[h] {
                    self.res_up[h] = 0.0;
                }
                if self.res_down[h] <= 1e-9 * self.cap_down[h] {
                    self.res_down[h] = 0.0;
                }
            }
            self.old_level.clear();
            self.old_level.extend_from_slice(&self.level_up);
            self.old_level.extend_from_slice(&self.level_down);
            self.excess.solve(
                &self.res_up,
                &self.res_down,
                &mut self.level_up,
                &mut self.level_down,
                &mut self.used_up,
                &mut self.used_down,
            );
            self.down_room_bits.iter_mut().for_each(|w| *w = 0);
            self.down_moved_bits.iter_mut().for_each(|w| *w = 0);
            for h in 0..n {
                self.moved_up[h] = self.level_up[h] != self.old_level[h];
                self.moved_down[h] = self.level_down[h] != self.old_level[n + h];
                self.room_up[h] = self.level_up[h] > 0.0 || self.old_level[h] > 0.0;
                self.room_down[h] = self.level_down[h] > 0.0 || self.old_level[n + h] > 0.0;
                let bit = 1u64 << (h % 64);
                if self.level_down[h] > 0.0 {
                    self.down_room_bits[h / 64] |= bit;
                }
                if self.moved_down[h] {
                    self.down_moved_bits[h / 64] |= bit;
                }
            }
        }
    }
}
