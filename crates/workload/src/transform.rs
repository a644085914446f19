//! Workload transforms: the same traffic, declared differently.
//!
//! [`split_groups`] makes every barrier group of a coflow a coflow of its
//! own. It is how a scheduler that knows nothing of waves sees a multi-wave
//! stage when the application registers each wave as it becomes available:
//! Aalo (SIGCOMM 2015) 7.3, approach (i) for Varys, "creating separate
//! coflows for each wave as they become available". The bytes, hosts,
//! release rules and delays are unchanged; only what a scheduler calls a
//! coflow changes, so the stage's completion (all waves done) is the job
//! completion time of the parts.
//!
//! Correctness properties of the result (checked in the tests):
//!
//! - every flow is in exactly one part, with its size, hosts, kind, delay,
//!   deadline and size visibility; a part's flows are one group of the
//!   original (group 0 inside the part, no `after`);
//! - a part is the flows of one group that wait for one group (normally a
//!   whole group); a part whose flows waited for group `a` (`after(a)`) is
//!   Starts-After every part of group `a`: it is released when they are
//!   complete, as the flows were when group `a` finished;
//! - the part of the smallest group keeps the coflow's id and every part
//!   keeps its arrival, deadline and the coflow's own parents; the others
//!   get fresh ids above every id of the workload, in order of (coflow id,
//!   group, the group waited for);
//! - every part names the original stage as its job: the coflow's
//!   [`JobStage`] if it had one (its job and stage), else a job numbered by
//!   the coflow's id (if no coflow of the workload has a job) or by fresh
//!   numbers above every job of the workload; the parts of a coflow with
//!   several groups then count as one job, whose completion time is the
//!   stage's;
//! - a coflow that depended on a split coflow depends on every part of it
//!   (the original was complete when its last part was).
//!
//! A coflow with one group is kept as it is (it gets a job only when others
//! are split and it had none, so that every coflow is its own job or a
//! split stage).
//!
//! [`pipelines_as_barriers`] turns every Finishes-Before (pipelined) edge
//! into a Starts-After (barrier) edge. It is how a clairvoyant scheduler has
//! to run a DAG: Varys needs a coflow's flows and their sizes before it
//! starts, which a consumer stage fed by a pipeline does not have until its
//! producer is done, so the child coflow waits for its parent to finish.
//! Aalo 7.4 credits its gain over Varys on DAGs to this: "Because Aalo does
//! not introduce artificial barriers ... improvements over Varys (3.7x on
//! average)". The flows, arrivals, jobs and the DAG's shape are unchanged;
//! only the kind of the pipelined edges changes.

use coflowkit_model::{CoflowId, CoflowSpec, DepKind, Dependency, JobStage, Workload};
use std::collections::BTreeMap;

/// Every barrier group of every coflow as a coflow of its own; see the
/// module doc for what is kept and how ids are given.
pub fn split_groups(w: &Workload) -> Workload {
    let mut next_id = w.coflows.iter().map(|c| c.id.0).max().map_or(0, |m| m + 1);
    let any_job = w.coflows.iter().any(|c| c.job.is_some());
    let mut next_job = w
        .coflows
        .iter()
        .filter_map(|c| c.job.map(|j| j.job))
        .max()
        .map_or(0, |m| m + 1);

    // Coflows in id order, so fresh ids do not depend on the input order.
    let mut order: Vec<usize> = (0..w.coflows.len()).collect();
    order.sort_by_key(|&k| w.coflows[k].id);

    // The parts of every split coflow: original id -> part ids.
    let mut parts_of: BTreeMap<CoflowId, Vec<CoflowId>> = BTreeMap::new();
    let mut out: Vec<CoflowSpec> = Vec::with_capacity(w.coflows.len());
    for &k in &order {
        let c = &w.coflows[k];
        // One part per (group, the group it waits for): flows of one group
        // normally share their `after`, but the model does not require it.
        let mut keys: Vec<(u32, Option<u32>)> =
            c.flows.iter().map(|f| (f.group, f.after)).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.len() <= 1 {
            out.push(c.clone());
            continue;
        }
        let job = c.job.unwrap_or_else(|| {
            let job = if any_job {
                next_job += 1;
                next_job - 1
            } else {
                c.id.0
            };
            JobStage { job, stage: 0 }
        });
        let ids: Vec<CoflowId> = (0..keys.len())
            .map(|i| {
                if i == 0 {
                    c.id
                } else {
                    next_id += 1;
                    CoflowId(next_id - 1)
                }
            })
            .collect();
        for (i, &(g, after)) in keys.iter().enumerate() {
            let flows = c
                .flows
                .iter()
                .filter(|f| (f.group, f.after) == (g, after))
                .map(|f| {
                    let mut f = *f;
                    f.group = 0;
                    f.after = None;
                    f
                })
                .collect();
            let mut parents = c.parents.clone();
            if let Some(a) = after {
                parents.extend(
                    keys.iter()
                        .zip(&ids)
                        .filter(|(k, _)| k.0 == a)
                        .map(|(_, &p)| Dependency {
                            parent: p,
                            kind: DepKind::StartsAfter,
                        }),
                );
            }
            out.push(CoflowSpec {
                id: ids[i],
                arrival: c.arrival,
                flows,
                job: Some(job),
                deadline: c.deadline,
                parents,
            });
        }
        parts_of.insert(c.id, ids);
    }

    // Children of split coflows depend on every part; the others get a job
    // of their own when split coflows now carry jobs and they had none.
    let split_any = !parts_of.is_empty();
    for c in &mut out {
        if c.parents.iter().any(|d| parts_of.contains_key(&d.parent)) {
            let mut parents = Vec::with_capacity(c.parents.len());
            for d in &c.parents {
                match parts_of.get(&d.parent) {
                    Some(parts) if !parts.contains(&c.id) => {
                        parents.extend(parts.iter().map(|&p| Dependency {
                            parent: p,
                            kind: d.kind,
                        }))
                    }
                    _ => parents.push(*d),
                }
            }
            c.parents = parents;
        }
        if split_any && c.job.is_none() {
            let job = if any_job {
                next_job += 1;
                next_job - 1
            } else {
                c.id.0
            };
            c.job = Some(JobStage { job, stage: 0 });
        }
    }
    Workload {
        n_hosts: w.n_hosts,
        coflows: out,
    }
}

/// Every Finishes-Before edge of `w` as a Starts-After edge (a barrier
/// where there was a pipeline); see the module doc.
pub fn pipelines_as_barriers(w: &mut Workload) {
    for d in w.coflows.iter_mut().flat_map(|c| &mut c.parents) {
        d.kind = DepKind::StartsAfter;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{flow, BitsPerSec, Dur, Fabric, Time};

    fn ids(c: &CoflowSpec) -> Vec<(u64, DepKind)> {
        c.parents.iter().map(|d| (d.parent.0, d.kind)).collect()
    }

    #[test]
    fn waves_become_a_chain_of_coflows_of_one_job() {
        let wave = |g: u32| {
            let f = flow(g, 3, 100 + u64::from(g)).in_group(g);
            if g > 0 {
                f.after(g - 1)
            } else {
                f
            }
        };
        let mut c = CoflowSpec::new(7, Time(5), vec![wave(0), wave(1), wave(1), wave(2)]);
        c.deadline = Some(Dur(9));
        let lone = CoflowSpec::new(2, Time(1), vec![flow(0, 1, 10)]);
        let w = Workload {
            n_hosts: 4,
            coflows: vec![c, lone.clone()],
        };
        let s = split_groups(&w);
        assert_eq!(s.coflows.len(), 4);
        // Lone coflow kept (with a job of its own now), then 7's parts.
        assert_eq!(s.coflows[0].flows, lone.flows);
        assert_eq!(s.coflows[0].job, Some(JobStage { job: 2, stage: 0 }));
        let parts: Vec<u64> = s.coflows[1..].iter().map(|c| c.id.0).collect();
        assert_eq!(parts, vec![7, 8, 9]);
        for (i, p) in s.coflows[1..].iter().enumerate() {
            assert_eq!(p.arrival, Time(5));
            assert_eq!(p.deadline, Some(Dur(9)));
            assert_eq!(p.job, Some(JobStage { job: 7, stage: 0 }));
            assert!(p.flows.iter().all(|f| f.group == 0 && f.after.is_none()));
            assert!(p.flows.iter().all(|f| f.src.0 == i as u32));
        }
        assert_eq!(s.coflows[2].flows.len(), 2);
        assert_eq!(ids(&s.coflows[1]), vec![]);
        assert_eq!(ids(&s.coflows[2]), vec![(7, DepKind::StartsAfter)]);
        assert_eq!(ids(&s.coflows[3]), vec![(8, DepKind::StartsAfter)]);
        let total = |w: &Workload| w.coflows.iter().map(|c| c.total_bytes().0).sum::<u64>();
        assert_eq!(total(&s), total(&w));
        s.validate(&Fabric::big_switch(4, BitsPerSec::GBPS).unwrap())
            .expect("the split workload is valid");
    }

    #[test]
    fn jobs_are_kept_and_children_wait_for_every_part() {
        // 1 has two groups (1 after 0) and is in job 40; 2 depends on 1; 3 has
        // two independent groups and no job.
        let mut a = CoflowSpec::new(
            1,
            Time(0),
            vec![flow(0, 1, 5), flow(1, 2, 5).in_group(1).after(0)],
        );
        a.job = Some(JobStage { job: 40, stage: 0 });
        let mut b = CoflowSpec::new(2, Time(0), vec![flow(2, 3, 5)]);
        b.job = Some(JobStage { job: 40, stage: 1 });
        b.parents = vec![Dependency {
            parent: CoflowId(1),
            kind: DepKind::FinishesBefore,
        }];
        let c = CoflowSpec::new(
            3,
            Time(2),
            vec![flow(0, 3, 5).in_group(2), flow(1, 3, 5).in_group(4)],
        );
        let w = Workload {
            n_hosts: 4,
            coflows: vec![c, b, a],
        };
        let s = split_groups(&w);
        let by_id: BTreeMap<u64, &CoflowSpec> = s.coflows.iter().map(|c| (c.id.0, c)).collect();
        assert_eq!(
            by_id.keys().copied().collect::<Vec<_>>(),
            vec![1, 2, 3, 4, 5]
        );
        assert_eq!(by_id[&4].job, Some(JobStage { job: 40, stage: 0 }));
        assert_eq!(ids(by_id[&4]), vec![(1, DepKind::StartsAfter)]);
        assert_eq!(
            ids(by_id[&2]),
            vec![(1, DepKind::FinishesBefore), (4, DepKind::FinishesBefore)]
        );
        // 3 had no job while others did: a fresh job above 40 for both parts.
        assert_eq!(by_id[&3].job, Some(JobStage { job: 41, stage: 0 }));
        assert_eq!(by_id[&5].job, Some(JobStage { job: 41, stage: 0 }));
        assert!(by_id[&5].parents.is_empty());
        s.validate(&Fabric::big_switch(4, BitsPerSec::GBPS).unwrap())
            .expect("the split workload is valid");
    }

    #[test]
    fn one_group_workloads_are_unchanged() {
        let w = Workload {
            n_hosts: 2,
            coflows: vec![CoflowSpec::new(
                1,
                Time(0),
                vec![flow(0, 1, 5), flow(1, 0, 5)],
            )],
        };
        assert_eq!(split_groups(&w), w);
    }
}
