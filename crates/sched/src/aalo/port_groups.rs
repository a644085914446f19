//! The rate groups that carry a coflow's port-by-port rates to the driver
//! (per row, per column, per level): relabelled where levels moved,
//! applied to the allocation, and checked in debug builds
//! ([`Aalo`]'s `apply_ports`; the parent module's doc, "Computing it").

#[cfg(debug_assertions)]
use super::books::Pass1;
#[cfg(debug_assertions)]
use super::books::Slot;
use super::books::{find_level_group, Co, LevelGroup, NONE};
use super::port_server::*;
use super::{Aalo, AaloConfig};
use crate::Allocation;
use coflowkit_model::Time;

/// The movers of one level group in `Aalo::relabel_level_groups`: its
/// column, how many of its slots `todo` moves out of it, the head of its
/// list of (new level, count) in `Aalo::relabel_levels`, and the level it
/// takes (`None` if it keeps its own).
#[derive(Debug, Clone, Copy)]
pub(super) struct Movers {
    pub(super) group: u32,
    pub(super) col: u32,
    pub(super) n: u32,
    pub(super) levels: u32,
    pub(super) took: Option<u64>,
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
    pub(super) fn relabel_level_groups(&mut self, c: usize, todo: &mut Vec<Rerate>) {
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
    pub(super) fn check_level_groups(&self, c: usize) {
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
    pub(super) fn check_level_side(
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
    pub(super) fn open_level_group(
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
    pub(super) fn kept_group(&self, co: &Co, rr: &Rerate) -> u32 {
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
    pub(super) fn check_group_bits(&self, c: usize, out: &Allocation) {
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
    pub(super) group: u32,
    pub(super) bits: f64,
    pub(super) at: GroupAt,
}

/// Where a coflow keeps a group's rate: a row's or column's group 0 or 1
/// (`Co::row_group_bits`, `Co::col_group_bits`), or a level group of a
/// column or (mirrored) of a row.
#[derive(Debug, Clone, Copy)]
pub(super) enum GroupAt {
    Row(u32, u8),
    Col(u32, u8),
    Level(u32),
    RowLevel(u32),
}

/// Keeps `bits` as level group `group`'s last rate in `gs`.
pub(super) fn set_level_bits(gs: &mut [LevelGroup], group: u32, bits: f64) {
    let lg = gs.iter_mut().find(|x| x.group == group);
    lg.expect("the level group").bits = bits;
}

/// The group rates of one coflow to set (`Aalo::apply_ports`): each row's
/// and column's level, without and with its weighted excess level, and its
/// level groups' (group id, rate), rows' groups by row, then columns', then
/// the columns' level groups, then the rows' (mirrored).
pub(super) struct GroupWalk<'a> {
    pub(super) cfg: &'a AaloConfig,
    pub(super) ports: &'a PortServer,
    pub(super) co: &'a Co,
}

/// A group's rate: an infinite one (a port without a bound) as 0.
pub(super) fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// The level groups `gs` of one column (or row) whose rate, their level
/// plus their weight times the port's level `scale`, moved since it was
/// last set: each listed in `sets` at `at`.
pub(super) fn level_sets(gs: &[LevelGroup], scale: f64, at: GroupAt, sets: &mut Vec<GroupSet>) {
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
    pub(super) fn row(&self, r: usize, sets: &mut Vec<GroupSet>) {
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

    pub(super) fn col(&self, j: usize, sets: &mut Vec<GroupSet>) {
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

    pub(super) fn level(&self, j: usize, sets: &mut Vec<GroupSet>) {
        let gs = &self.co.level_groups[j];
        if gs.is_empty() {
            return;
        }
        let down = self.ports.level_down[self.co.cols[j] as usize];
        level_sets(gs, down, GroupAt::Level(j as u32), sets);
    }

    pub(super) fn row_level(&self, r: usize, sets: &mut Vec<GroupSet>) {
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
    pub(super) fn all(
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
    pub(super) fn moved(
        &self,
        rows: &[u32],
        cols: &[u32],
        level_cols: &[u32],
        sets: &mut Vec<GroupSet>,
    ) {
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
