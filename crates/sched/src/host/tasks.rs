//! The tasks (coflows) a host sends, as the policies that mark by task see
//! them (`fifo-lm` and `tafe` at a host): each task's arrival, the bytes
//! this host has sent of it, its active flows here and the class they share.
//!
//! Correctness properties: a task is known exactly while it has an active
//! flow here (`Tasks::join`, `Tasks::leave`), and its bytes count from its
//! first flow here, as the Python policies counted; every flow of a task
//! has the task's class (one field per task).

use super::{Effects, HostFlow};
use coflowkit_model::Time;
use std::collections::{BTreeMap, HashMap};

/// One task at this host.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    /// Its coflow's arrival (ns since the origin).
    pub arrival: Time,
    /// Bytes of it this host has sent.
    pub bytes: u64,
    /// Bytes of it every host has sent, as the last
    /// [`super::HostPolicy::task_sent`] told (0 where no driver tells).
    pub shared: u64,
    /// Its active flows here, in start order.
    pub flows: Vec<u64>,
    /// The class its flows share now.
    pub class: u8,
}

/// Every task with an active flow here; see the module doc.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tasks {
    /// Flow id -> its coflow.
    of: HashMap<u64, u32>,
    /// Coflow rank -> its task (ordered, so that changes list in rank order).
    pub tasks: BTreeMap<u32, Task>,
}

impl Task {
    /// The task's bytes as a policy ranks it: all its hosts' where a
    /// driver tells them, at least this host's own.
    pub fn counted(&self) -> u64 {
        self.bytes.max(self.shared)
    }
}

impl Tasks {
    /// `flow` joins its task (a new one in `class`); its coflow.
    pub fn join(&mut self, flow: &HostFlow, class: impl FnOnce(&Task) -> u8) -> u32 {
        self.of.insert(flow.id, flow.coflow);
        let task = self.tasks.entry(flow.coflow).or_insert_with(|| Task {
            arrival: flow.coflow_arrival,
            bytes: 0,
            shared: 0,
            flows: vec![],
            class: 0,
        });
        if task.flows.is_empty() {
            task.class = class(task);
        }
        task.flows.push(flow.id);
        flow.coflow
    }

    /// `flow` leaves its task; a task without flows here is forgotten.
    pub fn leave(&mut self, flow: u64) {
        let Some(c) = self.of.remove(&flow) else {
            return;
        };
        if let Some(task) = self.tasks.get_mut(&c) {
            task.flows.retain(|&f| f != flow);
            if task.flows.is_empty() {
                self.tasks.remove(&c);
            }
        }
    }

    /// The task of coflow `c`, to change, if it has a flow here.
    pub fn of_coflow_mut(&mut self, c: u32) -> Option<&mut Task> {
        self.tasks.get_mut(&c)
    }

    /// The coflow and task of an active flow.
    pub fn of(&self, flow: u64) -> Option<(u32, &Task)> {
        let c = *self.of.get(&flow)?;
        self.tasks.get(&c).map(|t| (c, t))
    }

    /// The bytes `flow`'s task may still send here before it is heavy at
    /// `heavy` bytes: where a policy that turns tasks heavy stops the
    /// sender ([`super::HostPolicy::limit`]); unlimited once heavy or for a
    /// flow it does not know.
    pub fn to_heavy(&self, flow: u64, heavy: u64) -> u64 {
        match self.of(flow) {
            Some((_, t)) if t.bytes < heavy => heavy - t.bytes,
            _ => u64::MAX,
        }
    }

    /// The task of an active flow, to change.
    pub fn of_mut(&mut self, flow: u64) -> Option<&mut Task> {
        let c = *self.of.get(&flow)?;
        self.tasks.get_mut(&c)
    }

    /// Sets `task`'s class to `class`; its flows are changed if it moved.
    pub fn set_class(task: &mut Task, class: u8, out: &mut Effects) {
        if task.class != class {
            task.class = class;
            out.changed.extend_from_slice(&task.flows);
        }
    }

    /// Every task's class again by `class` (its age moved).
    pub fn reclass(&mut self, class: impl Fn(&Task) -> u8, out: &mut Effects) {
        for task in self.tasks.values_mut() {
            let k = class(task);
            Tasks::set_class(task, k, out);
        }
    }

    /// The earliest of `next` over the tasks.
    pub fn earliest(&self, next: impl Fn(&Task) -> Option<Time>) -> Option<Time> {
        self.tasks.values().filter_map(next).min()
    }
}
