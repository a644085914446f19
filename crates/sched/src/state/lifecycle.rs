//! The life of flows and coflows in a [`NetState`]: interned paths, adding
//! coflows and flows (all waiting), release, start, finish and completion
//! (see the parent module's doc for the rules).

use super::{proportional, CoflowIdx, CoflowInfo, FlowIdx, FlowRec, NetState, PathIdx};
use super::{COMPUTE, DONE, HAS_DEADLINE, INACTIVE, SIZE_UNKNOWN, SOLO};
use coflowkit_model::{CoflowId, CoflowSpec, DagId, FlowKey, FlowKind, FlowSpec, HostId, Time};

impl NetState {
    /// The interned path of a flow from `src` to `dst` with identity `key`:
    /// the route its ECMP choice picks (always choice 0 on fabrics without
    /// path diversity, where no hash is computed).
    fn intern_path(&mut self, src: HostId, dst: HostId, key: FlowKey) -> PathIdx {
        let choice = self.fabric.path_choice(src, dst, key);
        let dense = if choice == 0 {
            self.dense_route(src, dst)
        } else {
            None
        };
        let known = match dense {
            Some(i) => match self.path_dense[i] {
                0 => None,
                p1 => Some(p1 - 1),
            },
            None if choice == 0 => self.path_index.get(&(src, dst)).copied(),
            None => self.ecmp_index.get(&(src, dst, choice)).copied(),
        };
        if let Some(p) = known {
            return p;
        }
        let p = self.path_start.len() as PathIdx;
        self.path_start.push(self.path_links.len() as u32);
        let out = &mut self.path_links;
        self.fabric.path_into(src, dst, choice, out);
        match dense {
            Some(i) => self.path_dense[i] = p + 1,
            None if choice == 0 => {
                self.path_index.insert((src, dst), p);
            }
            None => {
                self.ecmp_index.insert((src, dst, choice), p);
            }
        }
        p
    }

    /// The slot of route (`src`, `dst`) in the dense index of choice-0
    /// paths (allocated on first use), or `None` when the fabric is too
    /// large for one (or a host is out of its range) and the map serves.
    #[inline]
    fn dense_route(&mut self, src: HostId, dst: HostId) -> Option<usize> {
        let n = self.fabric.n_hosts();
        if n > super::DENSE_ROUTE_HOSTS || src.0 >= n || dst.0 >= n {
            return None;
        }
        if self.path_dense.is_empty() {
            self.path_dense = vec![0; n as usize * n as usize];
        }
        Some(src.0 as usize * n as usize + dst.0 as usize)
    }

    /// The one-link path of host `h`'s CPU. The fabric must have CPUs
    /// (validated workloads guarantee it for their compute stages).
    fn intern_cpu_path(&mut self, h: HostId) -> PathIdx {
        let hi = h.0 as usize;
        if self.cpu_path.len() <= hi {
            self.cpu_path.resize(hi + 1, INACTIVE);
        }
        if self.cpu_path[hi] != INACTIVE {
            return self.cpu_path[hi];
        }
        let p = self.path_start.len() as PathIdx;
        self.path_start.push(self.path_links.len() as u32);
        let has_cpu = self.fabric.cpu_path_into(h, &mut self.path_links);
        assert!(has_cpu, "a compute stage on {h}, which has no CPU resource");
        self.cpu_path[hi] = p;
        p
    }

    /// Adds a coflow that arrives now, with all its flows waiting; returns
    /// its index. The coflow is not active until [`NetState::release_coflow`].
    pub fn add_coflow(&mut self, spec: &CoflowSpec) -> CoflowIdx {
        let c = self.coflows.len() as CoflowIdx;
        let first = self.fl.len() as u32;
        for (i, f) in spec.flows.iter().enumerate() {
            self.push_flow(c, spec.id, i as u32, f);
        }
        self.coflows.push(CoflowInfo {
            id: spec.id,
            arrival: spec.arrival,
            release: Time::NEVER,
            job: spec.job,
            dag: DagId::of(spec),
            deadline: spec.deadline,
            first_flow: first,
            n_flows: spec.flows.len() as u32,
            n_active: 0,
            n_started: 0,
            size: 0.0,
            length: 0.0,
            base_sent: 0.0,
            base_time: self.now,
            solo_rate: 0.0,
            n_grouped: 0,
            later: vec![],
        });
        c
    }

    /// Appends flow `f`, the `index`-th of coflow `c` (id `id`), waiting.
    fn push_flow(&mut self, c: CoflowIdx, id: CoflowId, index: u32, f: &FlowSpec) -> FlowIdx {
        let idx = self.fl.len() as FlowIdx;
        let key = FlowKey {
            coflow: id.0,
            index,
        };
        let (p, mut flags) = match f.kind {
            FlowKind::Net => (self.intern_path(f.src, f.dst, key), 0),
            FlowKind::Compute => (self.intern_cpu_path(f.src), COMPUTE),
        };
        if !f.size_known {
            flags |= SIZE_UNKNOWN;
        }
        if let Some(d) = f.deadline {
            flags |= HAS_DEADLINE;
            self.deadlines.push((idx, d));
        }
        self.fl.push(FlowRec {
            base: 0.0,
            rate: 0.0,
            size: f.bytes.0 as f64,
            base_time: self.now,
            coflow: c,
            group: SOLO,
            active_pos: INACTIVE,
            flags,
        });
        self.src.push(f.src);
        self.dst.push(f.dst);
        self.path.push(p);
        self.start.push(Time::NEVER);
        idx
    }

    /// Adds one more flow to coflow `c`, waiting (start it with
    /// [`NetState::start_flow`]); returns its index. For drivers that learn
    /// a coflow's flows as they open (the runtime): such flows are not in
    /// [`NetState::flows_of`], which keeps the flows the coflow was added
    /// with, but are everywhere else (the views' `active_flows_of`, the
    /// coflow's bytes sent).
    pub fn add_flow(&mut self, c: CoflowIdx, f: &FlowSpec) -> FlowIdx {
        let ci = &self.coflows[c as usize];
        let (id, index) = (ci.id, ci.n_flows + ci.later.len() as u32);
        let idx = self.push_flow(c, id, index, f);
        self.coflows[c as usize].later.push(idx);
        idx
    }

    /// Sets coflow `c`'s Aalo CoflowId (the driver's, from the whole
    /// workload: [`coflowkit_model::ValidWorkload::dag_ids`]); until then it
    /// is [`DagId::of`] its spec.
    pub fn set_dag(&mut self, c: CoflowIdx, dag: DagId) {
        self.coflows[c as usize].dag = dag;
    }

    /// Makes coflow `c` active now: schedulers see it (in release order)
    /// until [`NetState::complete_coflow`], whether or not its flows send.
    pub fn release_coflow(&mut self, c: CoflowIdx) {
        let ci = &mut self.coflows[c as usize];
        debug_assert!(ci.release == Time::NEVER, "coflow released twice");
        ci.release = self.now;
        ci.base_time = self.now;
        self.active_coflows.push(c);
    }

    /// Starts waiting flow `f` now. Returns false for a zero-byte flow,
    /// which is done at its start and never active.
    pub fn start_flow(&mut self, f: FlowIdx) -> bool {
        let fi = f as usize;
        debug_assert!(self.is_waiting(f), "flow {f} started twice");
        self.start[fi] = self.now;
        self.fl[fi].base_time = self.now;
        let b = self.fl[fi].size;
        let ci = &mut self.coflows[self.fl[fi].coflow as usize];
        ci.n_started += 1;
        ci.size += b;
        ci.length = ci.length.max(b);
        if b <= 0.0 {
            self.fl[fi].flags |= DONE;
            return false;
        }
        ci.n_active += 1;
        self.fl[fi].active_pos = self.active.len() as u32;
        self.active.push(f);
        true
    }

    /// Takes coflow `c` out of the active coflows (the driver calls this
    /// when the coflow is complete).
    pub fn complete_coflow(&mut self, c: CoflowIdx) {
        self.settle_coflow(c as usize);
        self.coflows[c as usize].solo_rate = 0.0;
        self.active_coflows.retain(|&x| x != c);
    }

    pub(super) fn path_range(&self, p: PathIdx) -> (usize, usize) {
        let s = self.path_start[p as usize] as usize;
        let e = self
            .path_start
            .get(p as usize + 1)
            .map_or(self.path_links.len(), |&x| x as usize);
        (s, e)
    }

    /// Marks active flow `f` finished (all its bytes sent); does nothing to
    /// a flow that is not active. The coflow stays active until
    /// [`NetState::complete_coflow`].
    pub fn finish_flow(&mut self, f: FlowIdx) {
        let fi = f as usize;
        let pos = self.fl[fi].active_pos;
        if pos == INACTIVE {
            return;
        }
        let c = self.fl[fi].coflow as usize;
        self.settle_coflow(c);
        let g = self.fl[fi].group;
        if g == SOLO {
            self.settle_solo(fi);
            let ci = &mut self.coflows[c];
            ci.solo_rate -= self.fl[fi].rate;
            ci.base_sent += self.fl[fi].size - self.fl[fi].base;
        } else if let Some(pg) = proportional(g) {
            self.leave_pgroup(fi, pg);
            let ci = &mut self.coflows[c];
            ci.n_grouped -= 1;
            ci.base_sent += self.fl[fi].size;
            self.fl[fi].group = SOLO;
        } else {
            let ci = &mut self.coflows[c];
            ci.n_grouped -= 1;
            ci.base_sent += self.fl[fi].size;
            self.sum_leave(g, fi);
            self.fl[fi].group = SOLO;
            self.leave_group(g);
        }
        self.fl[fi].base = self.fl[fi].size;
        self.fl[fi].rate = 0.0;
        let last = self.active.pop().expect("active flow list holds f");
        if last != f {
            self.active[pos as usize] = last;
            self.fl[last as usize].active_pos = pos;
        }
        self.fl[fi].active_pos = INACTIVE;
        self.fl[fi].flags |= DONE;
        self.coflows[c].n_active -= 1;
    }
}
