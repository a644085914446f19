//! The order in which a scheduler first saw each DAG of coflows: the
//! external part of Aalo's CoflowId (Aalo 5.1, Pseudocode 2's
//! `NextCoflowID++`), which ranks every coflow of a DAG behind the DAGs
//! seen before it.
//!
//! It is what such a scheduler remembers beyond its active coflows: a DAG
//! whose coflows have all completed keeps its rank, so a later coflow of it
//! (a child, or a coflow reopened by a late flow) ranks where its DAG did.
//! A driver that rebuilds its state and scheduler from only the active
//! coflows (the runtime coordinator's compaction) hands the order over
//! through [`crate::Scheduler::dag_order_mut`], so the rebuild changes no
//! rank; and a driver that knows a DAG can get no coflow it would
//! recognise as the DAG's again (the coordinator, once every coflow of it
//! is forgotten) forgets the DAG ([`DagOrder::forget`]), so the order holds
//! only the DAGs that can still matter.
//!
//! Correctness properties: ranks are given in the order DAGs are first
//! seen, from 1, and never reused, so a forgotten DAG seen again ranks
//! behind every DAG seen before (`DagOrder::rank`).

use coflowkit_model::DagKey;
use rustc_hash::FxHashMap;

/// Each DAG's rank: the order in which it was first seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DagOrder {
    ranks: FxHashMap<DagKey, u64>,
    /// Ranks given so far (the last one given).
    n_ranks: u64,
}

impl DagOrder {
    /// The rank of `dag`: its own if it was seen before (and not
    /// forgotten), else the next one.
    pub fn rank(&mut self, dag: DagKey) -> u64 {
        let n_ranks = &mut self.n_ranks;
        *self.ranks.entry(dag).or_insert_with(|| {
            *n_ranks += 1;
            *n_ranks
        })
    }

    /// Forgets `dag`: seen again, it takes the next rank.
    pub fn forget(&mut self, dag: DagKey) {
        self.ranks.remove(&dag);
    }

    /// DAGs held.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Whether no DAG is held.
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// Gives back the memory of DAGs forgotten since the table's peak once
    /// it holds under a quarter of its capacity.
    pub fn shrink(&mut self) {
        if self.ranks.capacity() > 4 * self.ranks.len().max(64) {
            self.ranks.shrink_to(2 * self.ranks.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::CoflowId;

    #[test]
    fn ranks_follow_first_sight_and_a_forgotten_dag_ranks_last() {
        let (a, b) = (DagKey::Root(CoflowId(7)), DagKey::Job(3));
        let mut o = DagOrder::default();
        assert_eq!((o.rank(a), o.rank(b), o.rank(a)), (1, 2, 1));
        o.forget(a);
        assert_eq!((o.rank(b), o.rank(a), o.len()), (2, 3, 2));
    }
}
