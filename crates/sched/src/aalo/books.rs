//! D-CLAS's books: what each sender (a *piece*) and each coflow has sent,
//! kept as running sums at the rates the flows are given; the active flows
//! of each coflow grouped by path (*slots*); per flow, its slot and the
//! rate or rate-group clock the driver advances it by (see the parent
//! module's doc, "Computing it").

use super::{Aalo, AaloConfig, Coordination};
use crate::{Allocation, Changes, FlowIdx, Observed, PathIdx};
use coflowkit_alloc::WeightedBipartite;
use coflowkit_model::Time;
use rustc_hash::FxHashMap;

/// Sent bytes growing linearly: `value` at `at`, `rate` bytes per ns since.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Acc {
    pub(super) value: f64,
    pub(super) at: Time,
    pub(super) rate: f64,
}

impl Acc {
    pub(super) fn value_at(&self, t: Time) -> f64 {
        self.value + self.rate * (t.0 as f64 - self.at.0 as f64)
    }
    /// Settles at `t`, adds `extra` bytes and `extra_rate` bytes per ns.
    pub(super) fn bump(&mut self, t: Time, extra: f64, extra_rate: f64) {
        self.value = self.value_at(t) + extra;
        self.at = t;
        self.rate += extra_rate;
    }
}

/// The ordering key inside a queue: (DAG rank, stage, release, arrival, id).
pub(super) type Key = (u64, u32, Time, Time, u64);

/// What a sending host knows of one coflow, and where it queues it.
#[derive(Debug, Clone, Default)]
pub(super) struct Piece {
    /// Bytes this sender has sent of the coflow.
    pub(super) sent: Acc,
    /// `sent` at the last refresh (0 if the piece began after it).
    pub(super) at_sync: f64,
    pub(super) queue: u32,
    /// Where its flows are served: `queue`, or `K` (ahead of every queue)
    /// with `local=first` while its coflow is uncounted and it is in `Q1`
    /// ([`tier_of`]).
    pub(super) tier: u32,
    pub(super) n_active: u32,
    pub(super) host: u32,
    /// Bytes per ns its estimate grew at until this call.
    pub(super) rate_before: f64,
}

/// The flows of a slot: the first in place (most slots hold one), the
/// others in a vector.
#[derive(Debug, Clone, Default)]
pub(super) struct Flows {
    pub(super) first: FlowIdx,
    pub(super) n: u32,
    pub(super) rest: Vec<FlowIdx>,
}

impl Flows {
    pub(super) fn len(&self) -> usize {
        self.n as usize
    }
    fn is_empty(&self) -> bool {
        self.n == 0
    }
    pub(super) fn get(&self, i: usize) -> FlowIdx {
        if i == 0 {
            self.first
        } else {
            self.rest[i - 1]
        }
    }
    fn set(&mut self, i: usize, f: FlowIdx) {
        if i == 0 {
            self.first = f;
        } else {
            self.rest[i - 1] = f;
        }
    }
    fn push(&mut self, f: FlowIdx) {
        if self.n == 0 {
            self.first = f;
        } else {
            self.rest.push(f);
        }
        self.n += 1;
    }
    /// Removes and returns the last flow (there is one).
    fn pop(&mut self) -> FlowIdx {
        self.n -= 1;
        if self.n == 0 {
            self.first
        } else {
            self.rest.pop().expect("more than one flow")
        }
    }
}

/// The active flows of a coflow over one path (they always share a rate).
#[derive(Debug, Clone, Default)]
pub(super) struct Slot {
    pub(super) path: PathIdx,
    /// Its sender's piece (on the big switch, its row of the coflow's
    /// matrix) and, on the big switch, its receiver's column.
    pub(super) piece: u32,
    pub(super) col: u32,
    pub(super) flows: Flows,
    /// The per-flow rate applied (bits/s) and (on other fabrics than the
    /// big switch) the one being computed.
    pub(super) rate: f64,
    pub(super) next: f64,
    /// On the big switch: the rate group its flows are in (`NONE`: each
    /// sends alone).
    pub(super) group: u32,
    /// Its flows need their rates and classes set whatever `next` is.
    pub(super) dirty: bool,
    pub(super) live_pos: u32,
}

/// One active coflow.
#[derive(Debug, Clone, Default)]
pub(super) struct Co {
    pub(super) key: Key,
    pub(super) slots: Vec<Slot>,
    pub(super) slot_of: FxHashMap<PathIdx, u32>,
    /// Slots with active flows.
    pub(super) live: Vec<u32>,
    pub(super) pieces: Vec<Piece>,
    pub(super) piece_of: FxHashMap<u32, u32>,
    /// Bytes sent by the whole coflow, and its rate until this call.
    pub(super) total: Acc,
    pub(super) rate_before: f64,
    /// Its size at the last refresh (0 if released after it).
    pub(super) global: f64,
    /// Whether a refresh has counted it (always, with `delta=0`): until
    /// then, with `local=first`, its flows in `Q1` go ahead of every queue.
    pub(super) seen: bool,
    /// On the big switch: its receivers (the columns of its matrix; the
    /// rows are its pieces), its active flows by (row, column), bumped
    /// `version` at every change, and its latest max-min per queue.
    pub(super) cols: Vec<u32>,
    pub(super) col_of: FxHashMap<u32, u32>,
    /// On the big switch, per host: its column (`NONE` if none; as
    /// `col_of`, read where a hash look-up per cell would cost more than
    /// the cell); and per row, the receivers (hosts) of its cells with
    /// flows as a bit set of [`dst_words`] words, so that a walk over the
    /// set bits visits its cells with flows in receiver order, and those
    /// with more than one flow (most hold one: their count need not be
    /// read).
    pub(super) col_at: Vec<u32>,
    pub(super) row_dsts: Vec<u64>,
    pub(super) row_multi: Vec<u64>,
    pub(super) matrix: WeightedBipartite,
    pub(super) version: u64,
    pub(super) solves: Vec<Pass1>,
    /// The slot of each (row, column), `NONE` if none (`rows * cols`).
    pub(super) cell: Vec<u32>,
    /// Rows and columns whose rates may have changed since they were last
    /// applied, or every slot.
    pub(super) row_dirty: Vec<bool>,
    pub(super) col_dirty: Vec<bool>,
    pub(super) all_dirty: bool,
    /// A pass-1 solve of it ran again since its rates were last applied.
    pub(super) resolved: bool,
    /// The rate groups of each row and column (`NONE` until used): without
    /// and with the excess.
    pub(super) row_group: Vec<[u32; 2]>,
    pub(super) col_group: Vec<[u32; 2]>,
    /// The rate (bits/s) last set for each of those groups (NaN until its
    /// group id is set), so that a group whose rate stays is not set again
    /// (`Aalo::apply_ports`): the driver's copy of it is the same.
    pub(super) row_group_bits: Vec<[f64; 2]>,
    pub(super) col_group_bits: Vec<[f64; 2]>,
    /// Per column: the rate groups of its slots whose rate is their row's
    /// level plus their weight times the column's excess level, one per
    /// (row level, weight) in use.
    pub(super) level_groups: Vec<Vec<LevelGroup>>,
    /// Per row, mirrored: the rate groups of its slots whose rate is their
    /// column's level plus the row's weight times the row's (sender's)
    /// excess level, one per column level in use (`level` is the column's).
    pub(super) row_level_groups: Vec<Vec<LevelGroup>>,
    /// On the big switch, per (row, column) like `cell`: the rate applied
    /// to the cell's slot and its group ([`DIRTY`] when its flows need
    /// their rates and classes set whatever the rate is), so that
    /// `PortServer::rated` finds the slots whose rate moves without a look
    /// at the slots.
    pub(super) cell_rate: Vec<f64>,
    pub(super) cell_group: Vec<u32>,
    /// On the big switch: each row's excess per unit of weight
    /// (`PortServer::excess_of_rows`) and the `version` it was summed at
    /// (kept while no excess level of its ports moves).
    pub(super) excess_rows: Vec<f64>,
    pub(super) excess_of: Option<u64>,
    /// On the big switch: the cells (row, column) of flows started in this
    /// call whose count waits for the matrix to take its new rows and
    /// columns (`Aalo::lay_out_started`), in start order.
    pub(super) pending: Vec<(u32, u32)>,
}

impl Co {
    /// Lays out `cell` again for the current rows and columns.
    fn layout_cells(&mut self) {
        let n_cols = self.cols.len();
        let n_cells = self.pieces.len() * n_cols;
        self.cell.clear();
        self.cell.resize(n_cells, NONE);
        self.cell_rate.clear();
        self.cell_rate.resize(n_cells, 0.0);
        self.cell_group.clear();
        self.cell_group.resize(n_cells, NONE);
        for (s, slot) in self.slots.iter().enumerate() {
            let at = slot.piece as usize * n_cols + slot.col as usize;
            self.cell[at] = s as u32;
            self.cell_rate[at] = slot.rate;
            self.cell_group[at] = if slot.dirty { DIRTY } else { slot.group };
        }
        self.row_dirty.resize(self.pieces.len(), false);
        self.col_dirty.resize(n_cols, false);
        self.row_group.resize(self.pieces.len(), [NONE; 2]);
        self.col_group.resize(n_cols, [NONE; 2]);
        self.row_group_bits.resize(self.pieces.len(), [f64::NAN; 2]);
        self.col_group_bits.resize(n_cols, [f64::NAN; 2]);
        self.level_groups.resize_with(n_cols, Vec::new);
        self.row_level_groups
            .resize_with(self.pieces.len(), Vec::new);
    }

    /// On the big switch: `count` more (or fewer) active flows in cell
    /// `(r, j)` of the matrix (each of weight 1), and row `r`'s bit of the
    /// cell's receiver set while the cell holds flows (`Co::row_dsts`, of
    /// `words` words a row).
    pub(super) fn add_to_cell(&mut self, r: usize, j: usize, count: i64, words: usize) {
        self.matrix.add(r, j, count, count as f64);
        let h = self.cols[j] as usize;
        if self.row_dsts.len() < (r + 1) * words {
            self.row_dsts.resize((r + 1) * words, 0);
            self.row_multi.resize((r + 1) * words, 0);
        }
        let (at, bit) = (r * words + h / 64, 1u64 << (h % 64));
        let n = self.matrix.count(r, j);
        for (set, on) in [(&mut self.row_dsts, n > 0), (&mut self.row_multi, n > 1)] {
            if on {
                set[at] |= bit;
            } else {
                set[at] &= !bit;
            }
        }
    }

    /// Row `r`'s receivers with flows, and with more than one
    /// (`Co::row_dsts`, `Co::row_multi`; empty for a row that never had
    /// any).
    pub(super) fn row_dsts(&self, r: usize, words: usize) -> (&[u64], &[u64]) {
        let span = r * words..(r + 1) * words;
        (
            self.row_dsts.get(span.clone()).unwrap_or(&[]),
            self.row_multi.get(span).unwrap_or(&[]),
        )
    }

    /// The rate group of column `j`'s slots at row level `level` and weight
    /// `weight` (the same bits), `NONE` if there is none.
    pub(super) fn level_group(&self, j: usize, level: f64, weight: f64) -> u32 {
        find_level_group(&self.level_groups[j], level, weight)
    }

    /// The rate group of row `r`'s slots at column level `level` and weight
    /// `weight` (mirrored level groups), `NONE` if there is none.
    pub(super) fn row_level_group(&self, r: usize, level: f64, weight: f64) -> u32 {
        find_level_group(&self.row_level_groups[r], level, weight)
    }

    /// The level groups of column `k` (`mirrored`: of row `k`, by column
    /// level).
    pub(super) fn level_side_mut(&mut self, mirrored: bool, k: usize) -> &mut Vec<LevelGroup> {
        if mirrored {
            &mut self.row_level_groups[k]
        } else {
            &mut self.level_groups[k]
        }
    }

    /// Counts one slot of row `r` and column `j` out of rate group `g` if
    /// `g` is one of the column's level groups or the row's mirrored ones,
    /// and returns `g` if that emptied it (it is dropped).
    pub(super) fn leave_level_group(&mut self, r: usize, j: usize, g: u32) -> Option<u32> {
        let in_col = self.level_groups[j].iter().any(|x| x.group == g);
        let gs = if in_col {
            &mut self.level_groups[j]
        } else {
            self.row_level_groups.get_mut(r)?
        };
        let at = gs.iter().position(|x| x.group == g)?;
        gs[at].n_slots -= 1;
        if gs[at].n_slots > 0 {
            return None;
        }
        gs.swap_remove(at);
        Some(g)
    }
}

/// The group of `gs` at `level` and `weight` (the same bits), `NONE` if
/// there is none.
pub(super) fn find_level_group(gs: &[LevelGroup], level: f64, weight: f64) -> u32 {
    gs.iter()
        .find(|g| g.level.to_bits() == level.to_bits() && g.weight.to_bits() == weight.to_bits())
        .map_or(NONE, |g| g.group)
}

/// A rate group of one column of a coflow (big switch): its slots' rate is
/// `level + weight * ` the column's excess level.
#[derive(Debug, Clone, Copy)]
pub(super) struct LevelGroup {
    pub(super) level: f64,
    pub(super) weight: f64,
    pub(super) group: u32,
    /// Slots in it.
    pub(super) n_slots: u32,
    /// Its rate (bits/s) as last set (NaN until set).
    pub(super) bits: f64,
}

/// One coflow's max-min in one queue on the big switch (pass 1), kept with
/// its inputs so that an unchanged coflow is not solved again.
#[derive(Debug, Clone, Default)]
pub(super) struct Pass1 {
    pub(super) queue: u32,
    pub(super) version: u64,
    pub(super) row_cap: Vec<f64>,
    pub(super) col_cap: Vec<f64>,
    pub(super) row_level: Vec<f64>,
    pub(super) col_level: Vec<f64>,
    /// The levels before the latest solve (read where this call's solve
    /// moved them: `Co::row_dirty`, `Co::col_dirty`).
    pub(super) prev_row_level: Vec<f64>,
    pub(super) prev_col_level: Vec<f64>,
    pub(super) row_used: Vec<f64>,
    pub(super) col_used: Vec<f64>,
    /// Whether it was used this call (others are dropped).
    pub(super) seen: bool,
}

/// Per flow: its slot and place in it, and the rate the driver applies
/// (bytes per ns) since `at`, when it had sent `sent`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowBook {
    pub(super) slot: u32,
    pub(super) pos: u32,
    pub(super) sent: f64,
    pub(super) at: Time,
    pub(super) rate: f64,
    /// The rate group it is in (`NONE` when it sends alone) and the
    /// group's clock when it had sent `sent`.
    pub(super) group: u32,
    pub(super) mark: f64,
}

/// The scheduler's copy of a rate group's clock: bytes a member has sent
/// since `clock` was 0, as the driver advances it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct GroupClock {
    pub(super) clock: f64,
    pub(super) at: Time,
    /// Bytes per ns, as the driver applies it.
    pub(super) rate: f64,
}

impl GroupClock {
    fn at(&self, t: Time) -> f64 {
        self.clock + self.rate * (t.0 - self.at.0) as f64
    }
}

/// Words of a bit set over `n_hosts` hosts.
pub(super) fn dst_words(n_hosts: usize) -> usize {
    n_hosts.div_ceil(64)
}

pub(super) const NONE: u32 = u32::MAX;
/// In `Co::cell_group`: the slot's flows need their rates and classes set.
pub(super) const DIRTY: u32 = u32::MAX - 1;

impl Aalo {
    pub(super) fn release(&mut self, view: &Observed<'_>, changes: &Changes, now: Time) {
        self.batch.clear();
        self.batch.extend_from_slice(&changes.arrived);
        self.batch
            .sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        for i in 0..self.batch.len() {
            let c = self.batch[i];
            let dag = view.dag(c);
            let rank = self.dags.rank(dag.dag);
            if self.co.len() <= c as usize {
                self.co.resize_with(c as usize + 1, Co::default);
            }
            let co = &mut self.co[c as usize];
            *co = Co {
                key: (
                    rank,
                    dag.stage,
                    view.release(c),
                    view.arrival(c),
                    view.coflow_id(c).0,
                ),
                seen: self.cfg.coordination == Coordination::Instant,
                ..Co::default()
            };
            co.total.at = now;
            let key = co.key;
            let at = self
                .order
                .partition_point(|&x| self.co[x as usize].key < key);
            self.order.insert(at, c);
        }
    }

    pub(super) fn start_flow(&mut self, view: &Observed<'_>, f: FlowIdx, now: Time) {
        let c = view.coflow_of(f) as usize;
        if self.books.len() <= f as usize {
            self.books.resize(view.n_flows(), FlowBook::default());
        }
        let host = view.src(f).0;
        let path = view.path_idx(f);
        let n_pieces = self.co[c].pieces.len() as u32;
        let piece = *self.co[c].piece_of.entry(host).or_insert(n_pieces);
        if piece == n_pieces {
            let mut p = Piece {
                sent: Acc {
                    at: now,
                    ..Acc::default()
                },
                host,
                ..Piece::default()
            };
            p.queue = self.cfg.queue_of(self.estimate(&self.co[c], &p, now));
            p.tier = tier_of(&self.cfg, self.co[c].seen, p.queue);
            self.co[c].pieces.push(p);
        }
        let co = &mut self.co[c];
        co.pieces[piece as usize].n_active += 1;
        let n_slots = co.slots.len() as u32;
        let s = *co.slot_of.entry(path).or_insert(n_slots);
        if s == n_slots {
            let mut col = NONE;
            if let Some(ports) = &self.ports {
                let dst = view.dst(f).0;
                let n_cols = co.cols.len() as u32;
                col = *co.col_of.entry(dst).or_insert(n_cols);
                if col == n_cols {
                    co.cols.push(dst);
                    co.col_at.resize(ports.n_hosts(), NONE);
                    co.col_at[dst as usize] = col;
                }
            }
            co.slots.push(Slot {
                path,
                piece,
                col,
                live_pos: NONE,
                group: NONE,
                ..Slot::default()
            });
        }
        if let Some(ports) = &mut self.ports {
            let col = co.slots[s as usize].col;
            if co.pending.is_empty() && co.cell.len() == co.pieces.len() * co.cols.len() {
                let at = piece as usize * co.cols.len() + col as usize;
                co.cell[at] = s;
                co.cell_group[at] = DIRTY;
                co.add_to_cell(piece as usize, col as usize, 1, ports.words());
            } else {
                // A new row or column: the matrix grows and the cells are
                // laid out once, after this call's last start
                // (`lay_out_started`), not at each new row and column.
                if co.pending.is_empty() {
                    self.laid_out.push(c as u32);
                }
                co.pending.push((piece, col));
            }
            co.all_dirty = true;
            let q = co.pieces[piece as usize].tier;
            co.version += 1;
            ports.add(q, &self.cfg, host, co.cols[col as usize], 1);
        }
        let slot = &mut co.slots[s as usize];
        if slot.flows.is_empty() {
            slot.live_pos = co.live.len() as u32;
            co.live.push(s);
        }
        slot.dirty = true;
        self.books[f as usize] = FlowBook {
            slot: s,
            pos: slot.flows.len() as u32,
            sent: 0.0,
            at: now,
            rate: 0.0,
            group: NONE,
            mark: 0.0,
        };
        slot.flows.push(f);
    }

    /// Grows the matrix of each coflow that took new rows or columns in
    /// this call's starts to its size now, lays out its cells once and
    /// adds the flows that waited (`Co::pending`), in start order. The same
    /// matrix and cells as growing and laying out at each new row and
    /// column: the counts and weights are whole numbers, and a layout sets
    /// every cell from its slot, the cells of the flows started since
    /// included (their slots are dirty).
    pub(super) fn lay_out_started(&mut self) {
        let words = self.ports.as_ref().map_or(0, |p| p.words());
        for &c in &self.laid_out {
            let co = &mut self.co[c as usize];
            co.matrix.grow(co.pieces.len(), co.cols.len());
            co.layout_cells();
            for i in 0..co.pending.len() {
                let (r, j) = co.pending[i];
                co.add_to_cell(r as usize, j as usize, 1, words);
            }
            co.pending.clear();
            #[cfg(debug_assertions)]
            {
                let n_cols = co.cols.len();
                assert_eq!(co.matrix.n_rows(), co.pieces.len(), "coflow {c}'s rows");
                assert_eq!(co.matrix.n_cols(), n_cols, "coflow {c}'s columns");
                for (s, slot) in co.slots.iter().enumerate() {
                    let (r, j) = (slot.piece as usize, slot.col as usize);
                    assert_eq!(co.cell[r * n_cols + j], s as u32, "coflow {c}'s cell");
                    assert_eq!(
                        co.matrix.count(r, j) as usize,
                        slot.flows.len(),
                        "coflow {c}'s count at ({r}, {j})"
                    );
                }
            }
        }
        self.laid_out.clear();
    }

    pub(super) fn finish_flow(&mut self, view: &Observed<'_>, f: FlowIdx, now: Time) {
        let c = view.coflow_of(f) as usize;
        let b = self.books[f as usize];
        // The flow sent exactly its bytes; what the linear model credited it
        // with may differ by the rounding of its completion instant.
        let (counted, rate) = self.counted(&b, now);
        let extra = view.sent(f) - counted;
        let co = &mut self.co[c];
        let slot = &mut co.slots[b.slot as usize];
        let piece = slot.piece as usize;
        let last = slot.flows.pop();
        if last != f {
            slot.flows.set(b.pos as usize, last);
            self.books[last as usize].pos = b.pos;
        }
        if slot.flows.is_empty() {
            let at = slot.live_pos as usize;
            slot.live_pos = NONE;
            let (g, r, j) = (slot.group, slot.piece, slot.col);
            if g != NONE && j != NONE {
                slot.group = NONE;
                self.free_groups
                    .extend(co.leave_level_group(r as usize, j as usize, g));
            }
            let moved = co.live.pop().expect("a live slot");
            if moved != b.slot {
                co.live[at] = moved;
                co.slots[moved as usize].live_pos = at as u32;
            }
        }
        let p = &mut co.pieces[piece];
        p.n_active -= 1;
        p.sent.bump(now, extra, -rate);
        co.total.bump(now, extra, -rate);
        if let Some(ports) = &mut self.ports {
            let col = co.slots[b.slot as usize].col as usize;
            co.add_to_cell(piece, col, -1, ports.words());
            co.version += 1;
            let (q, host) = (co.pieces[piece].tier, co.pieces[piece].host);
            ports.add(q, &self.cfg, host, co.cols[col], -1);
        }
    }

    /// Takes the bytes the driver measured for every active flow (the
    /// runtime's reports, [`Changes::resynced`]) in place of what the books
    /// credited them with at their rates: the difference goes to the flow,
    /// its sender and its coflow, as a completion's does.
    pub(super) fn resync(&mut self, view: &Observed<'_>, now: Time) {
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            for li in 0..self.co[c].live.len() {
                let s = self.co[c].live[li] as usize;
                let piece = self.co[c].slots[s].piece as usize;
                for k in 0..self.co[c].slots[s].flows.len() {
                    let f = self.co[c].slots[s].flows.get(k);
                    let (counted, _) = self.counted(&self.books[f as usize], now);
                    let extra = view.sent(f) - counted;
                    if extra == 0.0 {
                        continue;
                    }
                    self.books[f as usize].sent += extra;
                    let co = &mut self.co[c];
                    co.pieces[piece].sent.bump(now, extra, 0.0);
                    co.total.bump(now, extra, 0.0);
                }
            }
        }
    }

    /// What the books credit flow `f` with at `now`, and the rate (bytes
    /// per ns) it sends at.
    fn counted(&self, b: &FlowBook, now: Time) -> (f64, f64) {
        if b.group == NONE {
            (b.sent + b.rate * (now.0 - b.at.0) as f64, b.rate)
        } else {
            let g = &self.clocks[b.group as usize];
            (b.sent + g.at(now) - b.mark, g.rate)
        }
    }

    /// A rate group id nobody uses.
    pub(super) fn new_group(&mut self) -> u32 {
        self.n_groups_taken += 1;
        self.free_groups.pop().unwrap_or_else(|| {
            self.clocks.push(GroupClock::default());
            (self.clocks.len() - 1) as u32
        })
    }

    /// Sets rate group `g`'s rate (bits/s) from `now`.
    pub(super) fn set_group_rate(&mut self, g: u32, bits: f64, out: &mut Allocation, now: Time) {
        out.set_group_rate(g, bits);
        let r = out.group_rate(g).max(0.0) / 8e9;
        let clock = &mut self.clocks[g as usize];
        if clock.rate != r {
            *clock = GroupClock {
                clock: clock.at(now),
                at: now,
                rate: r,
            };
        }
    }

    /// Moves flow `f` into rate group `g`, or, with `g == NONE`, makes it
    /// send alone at `bits`; its books keep what it has been credited.
    pub(super) fn switch_flow(
        &mut self,
        f: FlowIdx,
        g: u32,
        bits: f64,
        out: &mut Allocation,
        now: Time,
    ) {
        let (sent, _) = self.counted(&self.books[f as usize], now);
        let b = &mut self.books[f as usize];
        b.sent = sent;
        b.at = now;
        b.group = g;
        if g == NONE {
            out.set_rate(f, bits);
            b.rate = out.rate(f).max(0.0) / 8e9;
        } else {
            out.join_group(f, g);
            b.mark = self.clocks[g as usize].at(now);
        }
    }

    /// Gives flow `f` the rate `bits` and keeps the books of its sender
    /// and coflow exact.
    pub(super) fn set_flow_rate(
        &mut self,
        c: usize,
        f: FlowIdx,
        bits: f64,
        out: &mut Allocation,
        now: Time,
    ) {
        out.set_rate(f, bits);
        let r1 = out.rate(f).max(0.0) / 8e9;
        let b = &mut self.books[f as usize];
        if r1 == b.rate {
            return;
        }
        // The state advances the flow the same way (its bytes sent grow at
        // its rate), so what it has sent now needs no look; completions
        // correct the rounding (`finish_flow`).
        let sent = b.sent + b.rate * (now.0 - b.at.0) as f64;
        let dr = r1 - b.rate;
        *b = FlowBook {
            sent,
            at: now,
            rate: r1,
            ..*b
        };
        let co = &mut self.co[c];
        let piece = co.slots[b.slot as usize].piece as usize;
        co.pieces[piece].sent.bump(now, 0.0, dr);
        co.total.bump(now, 0.0, dr);
    }
}

/// Where a piece in `queue` is served ([`Piece::tier`]): `K` (ahead of
/// every queue) for `local=first` while its coflow is uncounted and the
/// piece in `Q1`, else its queue.
pub(super) fn tier_of(cfg: &AaloConfig, seen: bool, queue: u32) -> u32 {
    if cfg.local_first && !seen && queue == 0 {
        cfg.ahead()
    } else {
        queue
    }
}
