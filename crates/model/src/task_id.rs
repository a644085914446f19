//! Task ids (Baraat, SIGCOMM 2014, 4.1): globally unique, monotonically
//! increasing numbers handed out when a task arrives; a lower id is a higher
//! priority, and every switch decides by ids alone, so decisions agree
//! across space and time without coordination.
//!
//! * **One counter** when every task enters through one point (a load
//!   balancer, a job scheduler): ids 1, 2, 3, ...
//! * **Several counters** when tasks enter through several points: counter
//!   `k` of `n` starts at `k + 1` and steps by `n`, so two counters hand out
//!   the odd ids 1, 3, 5, ... and the even ids 2, 4, 6, ... Each counter
//!   steps only on its own arrivals, so the ids approximate arrival order
//!   (a burst at one entry point runs ahead of the other).
//! * **Background tasks** (index updates and the like) take ids from a
//!   reserved range that starts at [`TaskIdGen::background_base`], above
//!   every online id: strictly lower priority than every online task
//!   ("task-ids less than n could be reserved for the online service while
//!   task-ids greater than n could be used for the background service").
//!   Background ids are handed out by one counter of their own, 1 apart.
//!
//! Correctness properties (enforced in [`TaskIdGen`]): ids are unique; an
//! online id is below `background_base` (handing out one that would reach
//! it is an error, never a silent overlap); each counter's ids increase.

use thiserror::Error;

/// A task's id: lower is higher priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TaskId(pub u64);

/// The default first background id: far above any online id a run hands out.
pub const BACKGROUND_BASE: u64 = 1 << 62;

/// Why a task id cannot be handed out.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TaskIdError {
    /// Zero counters asked for.
    #[error("task ids: at least one counter is needed")]
    NoCounter,
    /// A counter that does not exist.
    #[error("task ids: counter {counter} does not exist ({n_counters} counters)")]
    NoSuchCounter {
        /// The counter asked for.
        counter: u32,
        /// How many there are.
        n_counters: u32,
    },
    /// The online range ran into the background range.
    #[error("task ids: counter {counter} reached the background range at {base}")]
    OnlineRangeFull {
        /// The counter.
        counter: u32,
        /// The first background id.
        base: u64,
    },
    /// The background base leaves no room for the first online ids.
    #[error("task ids: background base {base} must exceed the number of counters {n_counters}")]
    BaseTooLow {
        /// The first background id.
        base: u64,
        /// How many counters there are.
        n_counters: u32,
    },
}

/// Hands out task ids from `n` counters and one background counter.
#[derive(Debug, Clone)]
pub struct TaskIdGen {
    next: Vec<u64>,
    background_next: u64,
    base: u64,
}

impl TaskIdGen {
    /// `n_counters` counters (counter `k` starts at `k + 1`, increment
    /// `n_counters`) and background ids from [`BACKGROUND_BASE`].
    pub fn new(n_counters: u32) -> Result<TaskIdGen, TaskIdError> {
        TaskIdGen::with_background_base(n_counters, BACKGROUND_BASE)
    }

    /// As [`TaskIdGen::new`], with background ids from `base` (every online
    /// id stays below it).
    pub fn with_background_base(n_counters: u32, base: u64) -> Result<TaskIdGen, TaskIdError> {
        if n_counters == 0 {
            return Err(TaskIdError::NoCounter);
        }
        if base <= n_counters as u64 {
            return Err(TaskIdError::BaseTooLow { base, n_counters });
        }
        Ok(TaskIdGen {
            next: (1..=n_counters as u64).collect(),
            background_next: base,
            base,
        })
    }

    /// How many online counters there are (each one's increment).
    pub fn n_counters(&self) -> u32 {
        self.next.len() as u32
    }

    /// The first background id: every online id is below it.
    pub fn background_base(&self) -> u64 {
        self.base
    }

    /// The next id of online counter `counter` (a task arriving through
    /// that entry point).
    pub fn online(&mut self, counter: u32) -> Result<TaskId, TaskIdError> {
        let n = self.next.len() as u32;
        let next = self
            .next
            .get_mut(counter as usize)
            .ok_or(TaskIdError::NoSuchCounter {
                counter,
                n_counters: n,
            })?;
        if *next >= self.base {
            return Err(TaskIdError::OnlineRangeFull {
                counter,
                base: self.base,
            });
        }
        let id = *next;
        *next += n as u64;
        Ok(TaskId(id))
    }

    /// The next background id.
    pub fn background(&mut self) -> TaskId {
        let id = self.background_next;
        self.background_next = self.background_next.saturating_add(1);
        TaskId(id)
    }

    /// Whether `id` is in the background range.
    pub fn is_background(&self, id: TaskId) -> bool {
        id.0 >= self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_counter_counts_from_one() {
        let mut g = TaskIdGen::new(1).unwrap();
        let ids: Vec<u64> = (0..4).map(|_| g.online(0).unwrap().0).collect();
        assert_eq!(ids, vec![1, 2, 3, 4]);
    }

    #[test]
    fn two_counters_give_odd_and_even_ids() {
        let mut g = TaskIdGen::new(2).unwrap();
        // Three arrivals at entry 0, then two at entry 1: the odd counter
        // ran ahead, so the later arrivals at entry 1 get lower ids.
        let a: Vec<u64> = (0..3).map(|_| g.online(0).unwrap().0).collect();
        let b: Vec<u64> = (0..2).map(|_| g.online(1).unwrap().0).collect();
        assert_eq!(a, vec![1, 3, 5]);
        assert_eq!(b, vec![2, 4]);
        let mut g4 = TaskIdGen::new(4).unwrap();
        assert_eq!(
            (0..4).map(|k| g4.online(k).unwrap().0).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        assert_eq!(g4.online(2).unwrap().0, 7);
    }

    #[test]
    fn background_ids_sit_above_every_online_id() {
        let mut g = TaskIdGen::with_background_base(2, 10).unwrap();
        let bg = g.background();
        assert_eq!(bg, TaskId(10));
        assert!(g.is_background(bg));
        let online: Vec<TaskId> = (0..4).map(|_| g.online(1).unwrap()).collect();
        assert_eq!(online, vec![TaskId(2), TaskId(4), TaskId(6), TaskId(8)]);
        // The next even id would be 10, the first background id.
        assert!(g.online(1).is_err());
        assert!(online.iter().all(|&t| t < bg && !g.is_background(t)));
        assert_eq!(g.background(), TaskId(11));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(TaskIdGen::new(0).unwrap_err(), TaskIdError::NoCounter);
        let mut g = TaskIdGen::with_background_base(2, 5).unwrap();
        assert_eq!(
            g.online(2).unwrap_err().to_string(),
            "task ids: counter 2 does not exist (2 counters)"
        );
        assert_eq!(g.online(0).unwrap(), TaskId(1));
        assert_eq!(g.online(0).unwrap(), TaskId(3));
        assert_eq!(
            g.online(0).unwrap_err().to_string(),
            "task ids: counter 0 reached the background range at 5"
        );
        assert!(TaskIdGen::with_background_base(3, 3).is_err());
    }
}
