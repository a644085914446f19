//! Task ids for the schedulers that order tasks (coflows) by them: `fifo-lm`
//! and `baraat` (Baraat 4.1; the generator is
//! [`coflowkit_model::TaskIdGen`]).
//!
//! A coflow gets its id when it is released (its arrival, unless
//! Starts-After parents hold it back), coflows released at one instant in
//! (arrival, coflow id) order. Which counter (entry point, "load balancer")
//! a coflow arrives through is its coflow id modulo the number of counters;
//! a coflow whose id is at least `background` is a background task and
//! takes its id from the reserved range above every online id. With one
//! counter and no background tasks, id order is release order with ties by
//! (arrival, id): `fifo`'s order.

use crate::descriptor::Params;
use crate::spec::SchedulerError;
use crate::{CoflowIdx, Observed};
use coflowkit_model::{TaskId, TaskIdGen};

/// How coflows get task ids: the number of counters and where background
/// coflow ids start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskIdConfig {
    /// Online counters (entry points); coflow `c` enters through counter
    /// `c.id mod counters`.
    pub counters: u32,
    /// Coflows with an id at or above this are background tasks (none if
    /// `None`).
    pub background_from: Option<u64>,
}

impl Default for TaskIdConfig {
    fn default() -> TaskIdConfig {
        TaskIdConfig {
            counters: 1,
            background_from: None,
        }
    }
}

impl TaskIdConfig {
    /// Sets `counters` or `background` from a spec's `key=value`; `Ok(false)`
    /// for another key.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        match key {
            "counters" => {
                let n = coflowkit_model::parse::uint(value)?;
                if !(1..=1 << 16).contains(&n) {
                    return Err(format!("{n} counters: give 1 to 65536"));
                }
                self.counters = n as u32;
            }
            "background" => {
                self.background_from =
                    if value == "none" {
                        None
                    } else {
                        Some(coflowkit_model::parse::uint(value).map_err(|m| {
                            format!("{m} (the first background coflow id, or none)")
                        })?)
                    }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The task-id keys (`counters`, `background`) of a spec's parameters.
    pub fn of_params(p: &Params<'_>) -> Result<TaskIdConfig, SchedulerError> {
        let mut config = TaskIdConfig::default();
        p.set_each(|k, v| config.set(k, v))?;
        Ok(config)
    }
}

/// Task ids of the coflows of one run, handed out as they are released.
#[derive(Debug, Clone)]
pub struct TaskIds {
    config: TaskIdConfig,
    gen: TaskIdGen,
    id: Vec<TaskId>,
    batch: Vec<CoflowIdx>,
}

impl TaskIds {
    /// Task ids by `config`.
    pub fn new(config: TaskIdConfig) -> TaskIds {
        TaskIds {
            config,
            gen: TaskIdGen::new(config.counters.max(1)).expect("at least one counter"),
            id: vec![],
            batch: vec![],
        }
    }

    /// Hands ids to the coflows released now (`Changes::arrived`), in
    /// (arrival, coflow id) order.
    pub fn assign(&mut self, view: &Observed<'_>, arrived: &[CoflowIdx]) {
        self.batch.clear();
        self.batch.extend_from_slice(arrived);
        self.batch
            .sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        for &c in &self.batch {
            let cid = view.coflow_id(c).0;
            let id = if self.config.background_from.is_some_and(|b| cid >= b) {
                self.gen.background()
            } else {
                let counter = (cid % self.gen.n_counters() as u64) as u32;
                self.gen
                    .online(counter)
                    .expect("fewer than 2^62 online tasks per run")
            };
            if self.id.len() <= c as usize {
                self.id.resize(c as usize + 1, TaskId(u64::MAX));
            }
            self.id[c as usize] = id;
        }
    }

    /// The task id of released coflow `c`.
    #[inline]
    pub fn get(&self, c: CoflowIdx) -> TaskId {
        self.id[c as usize]
    }
}
