//! A collective that the machine file makes algorithmic, timed by
//! replaying its algorithm's messages among its members with `pnmpi
//! sim`'s own engine and model, as `pnmpi sim replay` expands it: what
//! vtime (one process per rank, whose processes cannot see each other's
//! messages in flight) does with its members' entry times, so that it
//! and the replay time such a collective alike. Virtual ranks run the
//! same steps as their own point-to-point messages instead.

use crate::input::{Actor, Measured, Op, OpKind, OpSource, NO_SITE};
use crate::kernel::coll::Member;
use crate::machine::{Machine, Mapping};
use crate::units::Ns;
use pnmpi_trace::routine::Coll;

/// Each member's end and the part of it spent waiting, in communicator
/// order, for the collective `coll` run as algorithm `name` (rooted at
/// `root`) by members on `nodes` that entered at and brought the parts in
/// `members` (a `v` collective's per-peer bytes run its `v` form,
/// [`crate::kernel::coll::steps`]), on `machine` with model `model`.
pub fn replay(
    machine: &Machine,
    model: &str,
    nodes: Vec<u32>,
    coll: Coll,
    name: &str,
    root: Option<u32>,
    members: &[(Ns, Member)],
) -> Result<Vec<(Ns, Ns)>, String> {
    let t0 = members.iter().map(|m| m.0).fold(f64::INFINITY, f64::min);
    // The members' nodes, in communicator order, and CPUs that take the
    // entry offsets as they are.
    let mut machine = machine.clone();
    machine.mapping = Mapping::Explicit(nodes);
    for n in &mut machine.nodes {
        n.cpu_ratio = 1.0;
    }
    let mut ops = CollOps::new(coll, name, root, t0, members);
    let mut model = crate::model::build(model, &machine).map_err(|e| e.to_string())?;
    let out = crate::engine::replay(&mut ops, &machine, model.as_mut(), Default::default())
        .map_err(|e| e.to_string())?;
    Ok(out.stats.actors.iter().map(|a| (t0 + a.end, a.wait)).collect())
}

/// The ops of one collective's members for the engine: `MPI_Init`, the
/// member's entry offset as CPU time, the collective, `MPI_Finalize`.
struct CollOps {
    actors: Vec<Actor>,
    routines: Vec<String>,
    coll: Coll,
    root: Option<u32>,
    offsets: Vec<f64>,
    parts: Vec<Member>,
    next: Vec<u8>,
}

impl CollOps {
    fn new(coll: Coll, name: &str, root: Option<u32>, t0: f64, members: &[(Ns, Member)]) -> CollOps {
        let n = members.len();
        CollOps {
            actors: (0..n as u32).map(|rank| Actor { rank, thread: 0 }).collect(),
            routines: ["MPI_Init", "entry", name, "MPI_Finalize"]
                .map(String::from)
                .to_vec(),
            coll,
            root,
            offsets: members.iter().map(|m| m.0 - t0).collect(),
            parts: members.iter().map(|m| m.1.clone()).collect(),
            next: vec![0; n],
        }
    }
}

impl OpSource for CollOps {
    fn actors(&self) -> &[Actor] {
        &self.actors
    }

    fn world_size(&self) -> u32 {
        self.actors.len() as u32
    }

    fn routines(&self) -> &[String] {
        &self.routines
    }

    fn next(&mut self, actor: usize, op: &mut Op) -> Result<bool, crate::SimError> {
        let step = self.next[actor];
        self.next[actor] = step.saturating_add(1);
        *op = Op {
            gap: 0.0,
            dur: 0.0,
            routine: u32::from(step.min(3)),
            site: NO_SITE,
            folded: 0,
            kind: match step {
                0 => OpKind::Init,
                1 => OpKind::Local,
                2 => OpKind::Coll {
                    op: self.coll,
                    comm: 0,
                    bytes: self.parts[actor].bytes,
                    root: self.root,
                    req: None,
                    counts: self.parts[actor].counts.clone(),
                },
                3 => OpKind::Finalize,
                _ => return Ok(false),
            },
        };
        if step == 1 {
            op.dur = self.offsets[actor];
        }
        Ok(true)
    }

    fn members(&self, _comm: i64, _rank: u32) -> Option<Vec<u32>> {
        Some((0..self.actors.len() as u32).collect())
    }

    fn measured(&self) -> Option<Measured> {
        None
    }

    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}
