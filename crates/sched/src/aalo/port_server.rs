//! D-CLAS on the big switch without CPUs, port by port ([`PortServer`]):
//! a coflow is a matrix of senders by receivers solved by weighted
//! bipartite max-min, and its rates go to the driver through per-row and
//! per-column rate groups ([`Aalo`]'s `apply_ports`; see the parent
//! module's doc, "Computing it").

#[cfg(debug_assertions)]
use super::books::Slot;
use super::books::{dst_words, find_level_group, Co, LevelGroup, Pass1, NONE};
use super::{Aalo, AaloConfig};
use crate::{Allocation, CoflowIdx};
use coflowkit_alloc::WeightedBipartite;
use coflowkit_model::Time;

/// How a slot's flows get their rate (big switch): alone.
const SOLO_RATE: u8 = 0;
/// In its row's group 0 (rate: the row's level; no excess) or 1 (the
/// row's level plus its weighted excess level).
const ROW_GROUP: u8 = 1;
const ROW_EXCESS_GROUP: u8 = 2;
/// In its column's group 0 or 1, the same by its column.
const COL_GROUP: u8 = 3;
const COL_EXCESS_GROUP: u8 = 4;
/// In its column's level group of its row's level and weight (the row's
/// level plus its weight times the column's excess level).
const LEVEL_GROUP: u8 = 5;
/// Mirrored: in its row's level group of its column's level (the column's
/// level plus the row's weight times the row's excess level).
const ROW_LEVEL_GROUP: u8 = 6;

/// Scratch of `PortServer::rated`: per row of a coflow, whether it moved,
/// its solve, excess level and weight; per column, whether it moved and its
/// excess level.
#[derive(Debug, Default)]
pub(super) struct RatedScratch {
    row_solve: Vec<u32>,
    row_up: Vec<f64>,
    row_w: Vec<f64>,
    col_down: Vec<f64>,
    /// Columns whose pass-1 level moved; the others with an excess level
    /// above 0 now or before; the others whose excess level moved.
    cols_dirty: Vec<u32>,
    cols_room: Vec<u32>,
    cols_moved: Vec<u32>,
    /// `cols_moved` whose excess level moved from or to 0 (`lo == 0`), and
    /// the others as (lower, higher of the level before and now, column)
    /// by the lower: the columns a row whose own level stayed sees move.
    cols_moved_zero: Vec<u32>,
    cols_moved_span: Vec<(f64, f64, u32)>,
    /// Scratch: the columns of one row so reached, in column order.
    cols_reached: Vec<u32>,
    col_room: Vec<bool>,
    /// Per column: whether its excess level moved.
    col_moved: Vec<bool>,
    /// Per row and column: whether the rates of its groups may have moved;
    /// those rows and columns, in order; and whether these describe the
    /// coflow `rated` last returned true for (not if it had no row or no
    /// column).
    row_moved: Vec<bool>,
    col_moved_any: Vec<bool>,
    rows_moved_at: Vec<u32>,
    cols_moved_at: Vec<u32>,
    moved_lists: bool,
    /// With one solve, the cells whose two ends' excess levels both moved
    /// that may move (see `PortServer::flipped`): (row, column), sorted.
    flipped: Vec<(u32, u32)>,
    /// Scratch of `flipped`: the moved rows' and columns' spans (lower,
    /// higher level, row or `COL_TAG | column`), and those open in its
    /// sweep.
    spans: Vec<(f64, f64, u32)>,
    open_rows: Vec<(f64, u32)>,
    open_cols: Vec<(f64, u32)>,
    /// Columns with room whose excess level did not move, by that level
    /// (level, column).
    still_room: Vec<(f64, u32)>,
    /// Scratch: the columns with room one moved row visits, in column
    /// order.
    row_cols: Vec<u32>,
}

/// Marks a column in `RatedScratch::spans`.
const COL_TAG: u32 = 1 << 31;

/// A slot whose rate or way of getting it moves (big switch): its new
/// per-flow rate (bits/s) and mode ([`SOLO_RATE`], [`ROW_GROUP`], ...).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rerate {
    slot: u32,
    /// The slot's cell: its row and column.
    row: u32,
    col: u32,
    rate: f64,
    mode: u8,
    /// The row's level ([`LEVEL_GROUP`]) or the column's
    /// ([`ROW_LEVEL_GROUP`]).
    level: f64,
    /// With [`LEVEL_GROUP`]: the column's level group the slot is in
    /// (`Co::cell_group`) when it is at the slot's weight and another row
    /// level (the slot moves out of it to `level`, unless the group takes
    /// that level: `Aalo::relabel_level_groups`), else `NONE`.
    mover: u32,
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
    n: usize,
    cap_up: Vec<f64>,
    cap_down: Vec<f64>,
    /// Per queue and host (`q * n + h`): its active flows out of and into
    /// the host.
    on_up: Vec<u32>,
    on_down: Vec<u32>,
    grant_up: Vec<f64>,
    grant_down: Vec<f64>,
    /// The split `grants` keeps, and per port (senders, then receivers)
    /// whether its counts moved since it was last split.
    split_up: Vec<f64>,
    split_down: Vec<f64>,
    stale: Vec<bool>,
    res_up: Vec<f64>,
    res_down: Vec<f64>,
    /// Every active flow's queue weight, by (sender, receiver).
    excess: WeightedBipartite,
    level_up: Vec<f64>,
    level_down: Vec<f64>,
    /// Ports whose excess level changed in this call, and those whose
    /// level is above 0 now or was before it (the others give no flow any
    /// excess, before or after).
    moved_up: Vec<bool>,
    moved_down: Vec<bool>,
    room_up: Vec<bool>,
    room_down: Vec<bool>,
    old_level: Vec<f64>,
    used_up: Vec<f64>,
    used_down: Vec<f64>,
    row_cap: Vec<f64>,
    col_cap: Vec<f64>,
    /// Per coflow of the order: the queues it has active flows in (bits;
    /// bit `K`: ahead of them).
    queues_of: Vec<u128>,
    /// Receivers with an excess level above 0, and those whose excess
    /// level moved in this call, as bit sets over the hosts
    /// ([`dst_words`] words), read against a row's receivers
    /// (`Co::row_dsts`).
    down_room_bits: Vec<u64>,
    down_moved_bits: Vec<u64>,
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
    fn rated(
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
    fn flipped(&self, cfg: &AaloConfig, co: &Co, sc: &mut RatedScratch) {
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
    fn excess_level(&self, cfg: &AaloConfig, up: bool, host: u32, q: u32) -> f64 {
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
    fn excess_of_rows(&self, co: &Co, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..co.pieces.len()).map(|r| self.row_excess(co, r)));
    }

    /// Row `r`'s excess per unit of weight: `n * min(up, d)` summed over
    /// its cells with `n` flows whose receiver has room (`d > 0`), in the
    /// receivers' order. Its cells are found as the set bits of its
    /// receivers (`Co::row_dsts`) and of the receivers with room, so only
    /// cells that add are visited; a debug check sums over every column
    /// with room, cell by cell, and compares bit for bit.
    fn row_excess(&self, co: &Co, r: usize) -> f64 {
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
    fn excess_of_moved_rows(&self, co: &Co, out: &mut [f64]) {
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
    fn grants(&mut self, cfg: &AaloConfig) {
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

/// The movers of one level group in `Aalo::relabel_level_groups`: its
/// column, how many of its slots `todo` moves out of it, the head of its
/// list of (new level, count) in `Aalo::relabel_levels`, and the level it
/// takes (`None` if it keeps its own).
#[derive(Debug, Clone, Copy)]
pub(super) struct Movers {
    group: u32,
    col: u32,
    n: u32,
    levels: u32,
    took: Option<u64>,
}

impl Aalo {
    /// Gives a level group of coflow `c` the new row level of its slots in
    /// place when more of them move to one level group of that level in
    /// `todo` than keep the old level (their rows' pass-1 levels moved
    /// together, as after a solve that moves a tie of rows), and no group
    /// has that level yet: those flows then stay in it, and only its rate
    /// moves, to the one a new group would get (`level + weight *` the
    /// column's excess level). The slots of the group that keep the old
    /// level are added to `todo`, to a level group of it; those that move
    /// to other levels are in `todo` already. Marks the columns of such
    /// groups in `relabeled`, whose group rates are then set, and drops
    /// from `todo` the slots whose group took their level: they stay in it
    /// (it is not dirty: their flows are all in it), so neither they nor
    /// their flows are written.
    ///
    /// The movers (`Rerate::mover`, tagged by `rated`) are counted per
    /// group and new level as they come, and the groups decided in the
    /// order of their ids, the most common new level first and of equal
    /// counts the one of the lowest bits: the order of a sort by (group,
    /// level's bits, slot), which an earlier form ran over every mover.
    fn relabel_level_groups(&mut self, c: usize, todo: &mut Vec<Rerate>) {
        let co = &mut self.co[c];
        self.relabeled.clear();
        self.relabeled.resize(co.cols.len(), false);
        self.relabeled_cols.clear();
        let (movers, levels, at) = (
            &mut self.relabel_movers,
            &mut self.relabel_levels,
            &mut self.relabel_at,
        );
        movers.clear();
        levels.clear();
        if at.len() < self.clocks.len() {
            at.resize(self.clocks.len(), NONE);
        }
        for rr in todo.iter() {
            if rr.mover == NONE {
                continue;
            }
            #[cfg(debug_assertions)]
            {
                let slot = &co.slots[rr.slot as usize];
                let applied = co.cell_group[rr.row as usize * co.cols.len() + rr.col as usize];
                assert_eq!((slot.piece, slot.col), (rr.row, rr.col), "slot's cell");
                assert!(!slot.dirty && slot.group == applied && applied == rr.mover);
                let lg = co.level_groups[rr.col as usize]
                    .iter()
                    .find(|x| x.group == rr.mover)
                    .expect("the mover's level group");
                assert_eq!(
                    lg.weight.to_bits(),
                    self.cfg.weights[co.pieces[rr.row as usize].tier as usize].to_bits()
                );
                assert_ne!(lg.level.to_bits(), rr.level.to_bits());
            }
            let g = rr.mover as usize;
            if at[g] == NONE {
                at[g] = movers.len() as u32;
                movers.push(Movers {
                    group: rr.mover,
                    col: rr.col,
                    n: 0,
                    levels: NONE,
                    took: None,
                });
            }
            let m = &mut movers[at[g] as usize];
            m.n += 1;
            let bits = rr.level.to_bits();
            let mut k = m.levels;
            while k != NONE && levels[k as usize].0 != bits {
                k = levels[k as usize].2;
            }
            if k == NONE {
                levels.push((bits, 1, m.levels));
                m.levels = (levels.len() - 1) as u32;
            } else {
                levels[k as usize].1 += 1;
            }
        }
        if movers.is_empty() {
            return;
        }
        movers.sort_unstable_by_key(|m| m.group);
        let n_todo = todo.len();
        let mut in_todo_set = false;
        let n_cols = co.cols.len();
        for mi in 0..movers.len() {
            let Movers {
                group: g,
                col: j,
                n,
                levels: head,
                ..
            } = movers[mi];
            at[g as usize] = mi as u32;
            // The level most of them move to, and how many.
            let (mut best, mut level) = (0, 0u64);
            let mut k = head;
            while k != NONE {
                let (bits, m, next) = levels[k as usize];
                if m > best || (m == best && bits < level) {
                    (best, level) = (m, bits);
                }
                k = next;
            }
            let level = f64::from_bits(level);
            let j = j as usize;
            let at_g = co.level_groups[j]
                .iter()
                .position(|x| x.group == g)
                .expect("a level group of the column");
            let LevelGroup {
                level: old,
                weight,
                n_slots,
                ..
            } = co.level_groups[j][at_g];
            // Taking the new level moves the slots that stay (`n_slots - n`)
            // instead of the `best` that move to it.
            if best <= n_slots - n || co.level_group(j, level, weight) != NONE {
                continue;
            }
            co.level_groups[j][at_g].level = level;
            movers[mi].took = Some(level.to_bits());
            if !self.relabeled[j] {
                self.relabeled[j] = true;
                self.relabeled_cols.push(j as u32);
            }
            if n == n_slots {
                continue;
            }
            // The others: the group's slots not in `todo` (those in it leave
            // the group anyway) keep the old level. A cell without flows is
            // not one of them: its slot left the group when its last flow
            // finished, and `cell_group` keeps the group it was last given.
            let in_todo = &mut self.in_todo;
            if !in_todo_set {
                in_todo_set = true;
                in_todo.clear();
                in_todo.resize(co.slots.len(), false);
                for rr in &todo[..n_todo] {
                    in_todo[rr.slot as usize] = true;
                }
            }
            for r in 0..co.pieces.len() {
                let cell = r * n_cols + j;
                let s = co.cell[cell];
                if co.cell_group[cell] != g
                    || s == NONE
                    || co.matrix.count(r, j) == 0
                    || in_todo[s as usize]
                {
                    continue;
                }
                todo.push(Rerate {
                    slot: s,
                    row: r as u32,
                    col: j as u32,
                    rate: co.cell_rate[cell],
                    mode: LEVEL_GROUP,
                    level: old,
                    mover: NONE,
                });
            }
        }
        // The slots whose group took their level stay in it.
        #[cfg(debug_assertions)]
        let (co, books) = (&self.co[c], &self.books);
        todo.retain(|rr| {
            if rr.mover == NONE {
                return true;
            }
            let m = &movers[at[rr.mover as usize] as usize];
            let kept = m.took == Some(rr.level.to_bits());
            #[cfg(debug_assertions)]
            if kept {
                let slot = &co.slots[rr.slot as usize];
                assert!(
                    !slot.dirty && slot.group == rr.mover,
                    "slot {} kept",
                    rr.slot
                );
                for k in 0..slot.flows.len() {
                    let f = slot.flows.get(k);
                    assert_eq!(books[f as usize].group, rr.mover, "flow {f} kept");
                }
            }
            !kept
        });
        for m in movers.iter() {
            at[m.group as usize] = NONE;
        }
    }

    /// Debug check of `relabel_level_groups` against the full
    /// computation: every live slot of coflow `c` in a level group is at its
    /// row's pass-1 level and weight now, each level group counts its
    /// slots, and a slot without flows is in no group.
    #[cfg(debug_assertions)]
    fn check_level_groups(&self, c: usize) {
        let co = &self.co[c];
        for (s, slot) in co.slots.iter().enumerate() {
            if slot.live_pos == NONE {
                assert_eq!(slot.group, NONE, "slot {s} without flows in a group");
            }
        }
        // Each slot in a column's level group is at its row's pass-1
        // level; each in a row's (mirrored) group at its column's.
        self.check_level_side(
            co,
            &co.level_groups,
            |slot| slot.col as usize,
            |p, slot| p.row_level[slot.piece as usize],
            "row level",
        );
        self.check_level_side(
            co,
            &co.row_level_groups,
            |slot| slot.piece as usize,
            |p, slot| p.col_level[slot.col as usize],
            "column level",
        );
    }

    /// One side of [`Self::check_level_groups`]: every live slot of `co` in
    /// a group of `groups[side(slot)]` is at `level` of its tier's pass 1
    /// and at its tier's weight now, and each group counts its slots.
    #[cfg(debug_assertions)]
    fn check_level_side(
        &self,
        co: &Co,
        groups: &[Vec<LevelGroup>],
        side: impl Fn(&Slot) -> usize,
        level: impl Fn(&Pass1, &Slot) -> f64,
        what: &str,
    ) {
        let mut counts: Vec<Vec<u32>> = groups.iter().map(|gs| vec![0; gs.len()]).collect();
        for &s in &co.live {
            let slot = &co.slots[s as usize];
            let k = side(slot);
            let Some(at) = groups[k].iter().position(|g| g.group == slot.group) else {
                continue;
            };
            let lg = &groups[k][at];
            let tier = co.pieces[slot.piece as usize].tier;
            let l = co
                .solves
                .iter()
                .find(|p| p.queue == tier)
                .map(|p| level(p, slot));
            assert_eq!(
                l.map(f64::to_bits),
                Some(lg.level.to_bits()),
                "slot {s}'s {what}"
            );
            assert_eq!(
                lg.weight, self.cfg.weights[tier as usize],
                "slot {s}'s weight"
            );
            counts[k][at] += 1;
        }
        for (gs, n) in groups.iter().zip(&counts) {
            for (g, &n) in gs.iter().zip(n) {
                assert_eq!(g.n_slots, n, "slots of the {what} group {}", g.group);
            }
        }
    }

    /// The level group of coflow `c`'s column `k` at row level `level` and
    /// weight `weight` (`mirrored`: of its row `k` at column level `level`),
    /// opened with a new group id if there is none.
    fn open_level_group(
        &mut self,
        c: usize,
        mirrored: bool,
        k: usize,
        level: f64,
        weight: f64,
    ) -> u32 {
        let g = find_level_group(self.co[c].level_side_mut(mirrored, k), level, weight);
        if g != NONE {
            return g;
        }
        let group = self.new_group();
        self.co[c].level_side_mut(mirrored, k).push(LevelGroup {
            level,
            weight,
            group,
            n_slots: 0,
            bits: f64::NAN,
        });
        group
    }

    /// The rate group `rr`'s mode names for its slot in coflow `co` as it
    /// stands: its row's or column's group, or the level group of its
    /// level and weight (`NONE` if that is not open yet, or to send
    /// alone). Debug: `apply_ports` checks that no slot it lists is in it
    /// already.
    #[cfg(debug_assertions)]
    fn kept_group(&self, co: &Co, rr: &Rerate) -> u32 {
        let (r, j) = (rr.row as usize, rr.col as usize);
        match rr.mode {
            ROW_GROUP | ROW_EXCESS_GROUP => co.row_group[r][(rr.mode == ROW_EXCESS_GROUP) as usize],
            COL_GROUP | COL_EXCESS_GROUP => co.col_group[j][(rr.mode == COL_EXCESS_GROUP) as usize],
            LEVEL_GROUP | ROW_LEVEL_GROUP => {
                let w = self.cfg.weights[co.pieces[r].tier as usize];
                if rr.mode == ROW_LEVEL_GROUP {
                    co.row_level_group(r, rr.level, w)
                } else {
                    co.level_group(j, rr.level, w)
                }
            }
            _ => NONE,
        }
    }

    /// Debug check of the rates coflow `c` keeps beside its groups
    /// (`Co::row_group_bits`, `LevelGroup::bits`): each is the driver's
    /// rate of its group, or NaN.
    #[cfg(debug_assertions)]
    fn check_group_bits(&self, c: usize, out: &Allocation) {
        let co = &self.co[c];
        let pairs = |gs: &[[u32; 2]], bits: &[[f64; 2]]| {
            gs.iter()
                .flatten()
                .zip(bits.iter().flatten())
                .map(|(&g, &x)| (g, x))
                .collect::<Vec<_>>()
        };
        let levels = co
            .level_groups
            .iter()
            .chain(&co.row_level_groups)
            .flatten()
            .map(|lg| (lg.group, lg.bits));
        let kept = pairs(&co.row_group, &co.row_group_bits)
            .into_iter()
            .chain(pairs(&co.col_group, &co.col_group_bits))
            .chain(levels);
        for (g, x) in kept {
            if g != NONE && !x.is_nan() {
                assert_eq!(out.group_rate(g), x, "coflow {c}'s group {g}'s kept rate");
            }
        }
    }

    /// Applies the big switch's rates: each slot's flows go to their row's
    /// or column's rate group when their rate is that row's or column's
    /// level (so a level that moves is one group rate), to their column's
    /// level group when it is their row's level plus the column's excess,
    /// else send alone;
    /// then each sender's and coflow's rate is set from the row totals.
    pub(super) fn apply_ports(&mut self, out: &mut Allocation, now: Time) {
        let ports = self.ports.take().expect("the big switch's backend");
        let mut todo = std::mem::take(&mut self.rerates);
        let mut sc = std::mem::take(&mut self.rated_scratch);
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            todo.clear();
            if !ports.rated(&self.cfg, &mut self.co[c], &mut sc, &mut todo) {
                continue;
            }
            let n_cols = self.co[c].cols.len();
            // The slots whose level group takes their new level in place
            // leave the list (`relabel_level_groups`): a slot whose group
            // stays needs nothing, as its group's rate is set below and a
            // cell's rate is read only while its slot sends alone (`rated`'s
            // `visit`; `slot.rate` with `SOLO_RATE`).
            self.relabel_level_groups(c, &mut todo);
            // Read each slot and its first flow's book once in a pass whose
            // loads do not wait on each other, so that their cache misses
            // overlap; the loop below, whose every step depends on the one
            // before, then finds them in cache.
            let mut touched = 0u32;
            for rr in &todo {
                let co = &self.co[c];
                #[cfg(debug_assertions)]
                {
                    let applied = co.cell_group[rr.row as usize * n_cols + rr.col as usize];
                    assert!(
                        applied == NONE || self.kept_group(co, rr) != applied,
                        "slot {} listed keeps its group",
                        rr.slot
                    );
                }
                let slot = &co.slots[rr.slot as usize];
                touched ^= self.books[slot.flows.first as usize].group;
            }
            std::hint::black_box(touched);
            let n_taken = self.n_groups_taken;
            for rr in &todo {
                let &Rerate {
                    slot: s,
                    row,
                    col,
                    rate: next,
                    mode,
                    level,
                    ..
                } = rr;
                let (s, r, j) = (s as usize, row as usize, col as usize);
                let target = match mode {
                    ROW_GROUP | ROW_EXCESS_GROUP => {
                        let k = (mode == ROW_EXCESS_GROUP) as usize;
                        if self.co[c].row_group[r][k] == NONE {
                            self.co[c].row_group[r][k] = self.new_group();
                            self.co[c].row_group_bits[r][k] = f64::NAN;
                        }
                        self.co[c].row_group[r][k]
                    }
                    COL_GROUP | COL_EXCESS_GROUP => {
                        let k = (mode == COL_EXCESS_GROUP) as usize;
                        if self.co[c].col_group[j][k] == NONE {
                            self.co[c].col_group[j][k] = self.new_group();
                            self.co[c].col_group_bits[j][k] = f64::NAN;
                        }
                        self.co[c].col_group[j][k]
                    }
                    LEVEL_GROUP | ROW_LEVEL_GROUP => {
                        let w = self.cfg.weights[self.co[c].pieces[r].tier as usize];
                        let mirrored = mode == ROW_LEVEL_GROUP;
                        self.open_level_group(c, mirrored, if mirrored { r } else { j }, level, w)
                    }
                    _ => NONE,
                };
                let slot = &self.co[c].slots[s];
                let (rate, dirty, group) = (slot.rate, slot.dirty, slot.group);
                let mut emptied = None;
                if group != target {
                    // The slot's count moves between level groups (an
                    // emptied one is dropped; its id is free again once
                    // its flows have left it, below).
                    let co = &mut self.co[c];
                    if mode == LEVEL_GROUP || mode == ROW_LEVEL_GROUP {
                        let mirrored = mode == ROW_LEVEL_GROUP;
                        let gs = co.level_side_mut(mirrored, if mirrored { r } else { j });
                        let g = gs.iter_mut().find(|x| x.group == target);
                        g.expect("the level group").n_slots += 1;
                    }
                    if group != NONE {
                        emptied = co.leave_level_group(r, j, group);
                    }
                }
                let same_rate = crate::rate_stands(rate, next);
                let class = self.co[c].pieces[r].queue;
                for k in 0..self.co[c].slots[s].flows.len() {
                    let f = self.co[c].slots[s].flows.get(k);
                    let b = &self.books[f as usize];
                    if b.group != target || (target == NONE && (dirty || !same_rate)) {
                        self.switch_flow(f, target, next, out, now);
                    }
                    if dirty || target != group {
                        out.set_class(f, class);
                    }
                }
                self.free_groups.extend(emptied);
                let co = &mut self.co[c];
                let slot = &mut co.slots[s];
                slot.rate = next;
                slot.group = target;
                slot.dirty = false;
                co.cell_rate[r * n_cols + j] = next;
                co.cell_group[r * n_cols + j] = target;
            }
            #[cfg(debug_assertions)]
            self.check_level_groups(c);
            // Group rates: each row's and column's level, without and with
            // its weighted excess level; only those whose inputs moved,
            // unless a group was taken (new, or free again) in this call.
            let co = &self.co[c];
            let taken = self.n_groups_taken != n_taken;
            let (rows_moved, cols_moved) = (&sc.row_moved, &sc.col_moved_any);
            let mut sets = std::mem::take(&mut self.group_sets);
            sets.clear();
            // Walks every row and column if a group was taken (or `rated`
            // saw no row or no column), else only the moved ones (and the
            // relabeled columns' level groups), in the same order: the same
            // sets.
            let full = taken || !sc.moved_lists;
            let mut level_cols = std::mem::take(&mut self.level_cols);
            let walk = GroupWalk {
                cfg: &self.cfg,
                ports: &ports,
                co,
            };
            if full {
                walk.all(taken, rows_moved, cols_moved, &self.relabeled, &mut sets);
            } else {
                // The moved columns and the relabeled ones, by column.
                level_cols.clear();
                level_cols.extend_from_slice(&sc.cols_moved_at);
                if !self.relabeled_cols.is_empty() {
                    level_cols.extend_from_slice(&self.relabeled_cols);
                    level_cols.sort_unstable();
                    level_cols.dedup();
                }
                walk.moved(&sc.rows_moved_at, &sc.cols_moved_at, &level_cols, &mut sets);
                #[cfg(debug_assertions)]
                {
                    let mut every = vec![];
                    walk.all(false, rows_moved, cols_moved, &self.relabeled, &mut every);
                    let bits = |v: &[GroupSet]| {
                        v.iter()
                            .map(|x| (x.group, x.bits.to_bits()))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(bits(&sets), bits(&every), "coflow {c}'s group rates set");
                }
            }
            self.level_cols = level_cols;
            for &GroupSet { group, bits, at } in &sets {
                // Its new rate kept beside it, as the driver's.
                let co = &mut self.co[c];
                match at {
                    GroupAt::Row(r, k) => co.row_group_bits[r as usize][k as usize] = bits,
                    GroupAt::Col(j, k) => co.col_group_bits[j as usize][k as usize] = bits,
                    GroupAt::Level(j) => {
                        set_level_bits(&mut co.level_groups[j as usize], group, bits)
                    }
                    GroupAt::RowLevel(r) => {
                        set_level_bits(&mut co.row_level_groups[r as usize], group, bits)
                    }
                }
                self.set_group_rate(group, bits, out, now);
            }
            #[cfg(debug_assertions)]
            self.check_group_bits(c, out);
            self.group_sets = sets;
            // Each sender's rate: its row's max-min total plus its flows'
            // share of the excess; the coflow's, their sum.
            let co = &mut self.co[c];
            if !self.cfg.strict {
                // While its flows stay, summed again only for the rows a
                // move of its ports' excess levels reaches
                // (`PortServer::excess_of_moved_rows`).
                let mut rows = std::mem::take(&mut co.excess_rows);
                if co.excess_of != Some(co.version) || rows.len() != co.pieces.len() {
                    ports.excess_of_rows(co, &mut rows);
                    co.excess_of = Some(co.version);
                } else {
                    ports.excess_of_moved_rows(co, &mut rows);
                    #[cfg(debug_assertions)]
                    {
                        let mut full = vec![];
                        ports.excess_of_rows(co, &mut full);
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&rows), bits(&full), "coflow {c}'s kept excess");
                    }
                }
                co.excess_rows = rows;
            }
            let mut total = 0.0;
            for r in 0..co.pieces.len() {
                let piece = &co.pieces[r];
                let mut bits = 0.0;
                if piece.n_active > 0 {
                    let q = piece.tier;
                    if let Some(p) = co.solves.iter().find(|p| p.queue == q) {
                        bits = p.row_used[r];
                    }
                    // (No excess ahead of the queues.)
                    if !self.cfg.strict && q != self.cfg.ahead() {
                        bits += self.cfg.weights[q as usize] * co.excess_rows[r];
                    }
                }
                let rate = bits / 8e9;
                debug_assert!(
                    rate.is_finite(),
                    "sender {r} of coflow {c} at {bits} bits/s"
                );
                let p = &mut co.pieces[r];
                if p.sent.rate != rate {
                    p.sent.bump(now, 0.0, rate - p.sent.rate);
                }
                total += rate;
            }
            if co.total.rate != total {
                co.total.bump(now, 0.0, total - co.total.rate);
            }
        }
        self.rerates = todo;
        self.rated_scratch = sc;
        self.ports = Some(ports);
    }
}

/// A group rate to set (`Aalo::apply_ports`): the group, its rate (bits/s)
/// and where its coflow keeps the rate last set.
#[derive(Debug, Clone, Copy)]
pub(super) struct GroupSet {
    group: u32,
    bits: f64,
    at: GroupAt,
}

/// Where a coflow keeps a group's rate: a row's or column's group 0 or 1
/// (`Co::row_group_bits`, `Co::col_group_bits`), or a level group of a
/// column or (mirrored) of a row.
#[derive(Debug, Clone, Copy)]
enum GroupAt {
    Row(u32, u8),
    Col(u32, u8),
    Level(u32),
    RowLevel(u32),
}

/// Keeps `bits` as level group `group`'s last rate in `gs`.
fn set_level_bits(gs: &mut [LevelGroup], group: u32, bits: f64) {
    let lg = gs.iter_mut().find(|x| x.group == group);
    lg.expect("the level group").bits = bits;
}

/// The group rates of one coflow to set (`Aalo::apply_ports`): each row's
/// and column's level, without and with its weighted excess level, and its
/// level groups' (group id, rate), rows' groups by row, then columns', then
/// the columns' level groups, then the rows' (mirrored).
struct GroupWalk<'a> {
    cfg: &'a AaloConfig,
    ports: &'a PortServer,
    co: &'a Co,
}

/// A group's rate: an infinite one (a port without a bound) as 0.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// The level groups `gs` of one column (or row) whose rate, their level
/// plus their weight times the port's level `scale`, moved since it was
/// last set: each listed in `sets` at `at`.
fn level_sets(gs: &[LevelGroup], scale: f64, at: GroupAt, sets: &mut Vec<GroupSet>) {
    for lg in gs {
        let bits = finite(lg.level + lg.weight * scale);
        if bits != lg.bits {
            sets.push(GroupSet {
                group: lg.group,
                bits,
                at,
            });
        }
    }
}

impl GroupWalk<'_> {
    fn row(&self, r: usize, sets: &mut Vec<GroupSet>) {
        let co = self.co;
        let gs = &co.row_group[r];
        if gs == &[NONE; 2] {
            return;
        }
        let q = co.pieces[r].tier;
        let level = co
            .solves
            .iter()
            .find(|p| p.queue == q)
            .map_or(0.0, |p| p.row_level[r]);
        let excess = self
            .ports
            .excess_level(self.cfg, true, co.pieces[r].host, q);
        for (k, &g) in gs.iter().enumerate() {
            let bits = finite(if k == 0 { level } else { level + excess });
            if g != NONE && bits != co.row_group_bits[r][k] {
                let at = GroupAt::Row(r as u32, k as u8);
                sets.push(GroupSet { group: g, bits, at });
            }
        }
    }

    fn col(&self, j: usize, sets: &mut Vec<GroupSet>) {
        let co = self.co;
        let gs = &co.col_group[j];
        if gs == &[NONE; 2] {
            return;
        }
        let (level, excess) = if co.solves.len() == 1 {
            let q = co.solves[0].queue;
            (
                co.solves[0].col_level[j],
                self.ports.excess_level(self.cfg, false, co.cols[j], q),
            )
        } else {
            (0.0, 0.0)
        };
        for (k, &g) in gs.iter().enumerate() {
            let bits = finite(if k == 0 { level } else { level + excess });
            if g != NONE && bits != co.col_group_bits[j][k] {
                let at = GroupAt::Col(j as u32, k as u8);
                sets.push(GroupSet { group: g, bits, at });
            }
        }
    }

    fn level(&self, j: usize, sets: &mut Vec<GroupSet>) {
        let gs = &self.co.level_groups[j];
        if gs.is_empty() {
            return;
        }
        let down = self.ports.level_down[self.co.cols[j] as usize];
        level_sets(gs, down, GroupAt::Level(j as u32), sets);
    }

    fn row_level(&self, r: usize, sets: &mut Vec<GroupSet>) {
        let gs = &self.co.row_level_groups[r];
        if gs.is_empty() {
            return;
        }
        let up = self.ports.level_up[self.co.pieces[r].host as usize];
        level_sets(gs, up, GroupAt::RowLevel(r as u32), sets);
    }

    /// Every row and column, or (`taken` false) those marked in
    /// `rows_moved`, `cols_moved` (and `relabeled`, for the columns' level
    /// groups).
    fn all(
        &self,
        taken: bool,
        rows_moved: &[bool],
        cols_moved: &[bool],
        relabeled: &[bool],
        sets: &mut Vec<GroupSet>,
    ) {
        let (n_rows, n_cols) = (self.co.row_group.len(), self.co.col_group.len());
        for r in 0..n_rows {
            if taken || rows_moved[r] {
                self.row(r, sets);
            }
        }
        for j in 0..n_cols {
            if taken || cols_moved[j] {
                self.col(j, sets);
            }
        }
        for j in 0..self.co.level_groups.len() {
            if taken || cols_moved[j] || relabeled[j] {
                self.level(j, sets);
            }
        }
        for r in 0..self.co.row_level_groups.len() {
            if taken || rows_moved[r] {
                self.row_level(r, sets);
            }
        }
    }

    /// The rows and columns listed (each list by index; `level_cols` for
    /// the columns' level groups).
    fn moved(&self, rows: &[u32], cols: &[u32], level_cols: &[u32], sets: &mut Vec<GroupSet>) {
        for &r in rows {
            self.row(r as usize, sets);
        }
        for &j in cols {
            self.col(j as usize, sets);
        }
        for &j in level_cols {
            self.level(j as usize, sets);
        }
        for &r in rows {
            self.row_level(r as usize, sets);
        }
    }
}
