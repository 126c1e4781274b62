//! Collectives in the engine: each member's arrival, the closed form or
//! the named algorithm's steps, replayed as messages through the model.

use super::*;

impl Engine<'_, '_> {
    /// World ranks of `comm` as `rank` sees it, cached.
    pub(super) fn members(&mut self, src: &dyn OpSource, rank: u32, comm: i64) -> Option<Rc<Members>> {
        let k = (
            comm,
            if comm == pnmpi_trace::fields::COMM_SELF {
                rank
            } else {
                0
            },
        );
        if let Some(m) = self.members.get(&k) {
            return Some(m.clone());
        }
        let m = Rc::new(Members::new(src.members(comm, rank)?));
        self.members.insert(k, m.clone());
        Some(m)
    }

    /// A collective entered by actor `a`: expanded into its algorithm's
    /// messages, or met by the other members at a rendezvous and timed by
    /// the model. Nonblocking collectives always take the rendezvous.
    pub(super) fn collective(
        &mut self,
        a: usize,
        src: &dyn OpSource,
        call: (Coll, i64, u64, Option<u32>),
        req: Option<ReqId>,
        counts: Option<&VCounts>,
    ) {
        let (c, comm, bytes, root) = call;
        let rank = self.stats.actors[a].rank;
        let Some(members) = self.members(src, rank, comm) else {
            return;
        };
        let Some(me) = members.position(rank) else {
            return;
        };
        let shape = Shape {
            coll: c,
            size: members.len() as u32,
            me,
            root: root.and_then(|r| members.position(r)).unwrap_or(0),
            bytes,
        };
        if let Some(name) = coll::algorithm(self.machine, c, req.is_none()) {
            let st = &mut self.actors[a];
            let mut steps = Vec::new();
            coll::steps(name, &shape, counts, &mut steps);
            st.steps = Some(Box::new(Steps {
                queue: steps.into(),
                members,
                comm,
                reqs: Vec::new(),
            }));
            return;
        }
        let st = &mut self.actors[a];
        let n = st.coll_seq.next(comm);
        let clock = st.clock;
        let r = req.unwrap_or_else(|| self.temp_req(a));
        self.open_req(r, None);
        // What the closed form charges for this member.
        let shape = Shape {
            bytes: coll::charged(shape.bytes, counts),
            ..shape
        };
        // The process of the communicator's first member gathers the arrivals.
        let leader = members[0];
        match self.part.as_mut() {
            Some(p) if !p.local(leader) && !p.shared_comm(comm) => p.unshared = Some(comm),
            Some(p) if !p.local(leader) => p.send(
                leader,
                Record::Arrive {
                    comm,
                    seq: n,
                    clock,
                    req: r,
                    coll: c,
                    root: shape.root,
                    bytes: shape.bytes,
                },
            ),
            _ => self.arrive((comm, n), shape, &members, clock, r),
        }
        if req.is_none() {
            self.wait_for(a, r);
        }
    }

    /// A member entered the `seq`-th analytic collective on `comm`
    /// (`at`) at `clock`, its request `r`: once all have, the model times
    /// it from the last entry, and every member's request completes.
    pub(super) fn arrive(&mut self, at: (i64, u64), shape: Shape, members: &[u32], clock: Ns, r: ReqId) {
        let rv = self.colls.entry(at).or_insert(Rendezvous {
            arrived: 0,
            ready: 0.0,
            reqs: Vec::new(),
            bytes: 0,
        });
        rv.arrived += 1;
        rv.bytes = rv.bytes.max(shape.bytes);
        rv.ready = rv.ready.max(clock);
        rv.reqs.push(r);
        if rv.arrived == shape.size {
            let rv = self.colls.remove(&at).expect("just updated");
            let nodes: Vec<u32> = members
                .iter()
                .map(|&m| self.rank_node.get(m as usize).copied().unwrap_or(0))
                .collect();
            let shape = Shape {
                bytes: rv.bytes,
                ..shape
            };
            let end = coll::closed_form(&mut *self.model, shape, &nodes, rv.ready);
            for q in rv.reqs {
                self.complete(q, end, rv.ready);
            }
        }
    }

    pub(super) fn step(&mut self, a: usize, step: Step) {
        let Some(s) = self.actors[a].steps.as_ref() else {
            return;
        };
        let (members, comm) = (s.members.clone(), s.comm);
        let rank = self.stats.actors[a].rank;
        match step {
            Step::Isend { to, bytes } => {
                let r = self.temp_req(a);
                self.post_send(
                    a,
                    r,
                    self.msg(rank, members[to as usize], bytes),
                    COLL_TAG,
                    comm,
                    p2p::Mode::Standard,
                );
                self.step_reqs(a).push(r);
            }
            Step::Irecv { from, bytes: _ } => {
                let r = self.temp_req(a);
                let clock = self.actors[a].clock;
                self.post_recv(a, r, members[from as usize], COLL_TAG, comm, clock);
                self.step_reqs(a).push(r);
            }
            Step::WaitAll => {
                let reqs = std::mem::take(self.step_reqs(a));
                for &r in &reqs {
                    self.wait_for(a, r);
                }
                let mut reqs = reqs;
                reqs.clear();
                *self.step_reqs(a) = reqs;
            }
        }
    }

    /// The requests of actor `a`'s collective steps since their last wait.
    pub(super) fn step_reqs(&mut self, a: usize) -> &mut Vec<ReqId> {
        &mut self.actors[a]
            .steps
            .as_mut()
            .expect("a step runs within its collective")
            .reqs
    }
}
