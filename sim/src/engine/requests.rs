//! Open requests, kept with the actor that owns them (a request id is
//! `(actor << 32) | index`): an actor has a handful open at a time, so a
//! short list beside its other state beats a run-wide hash table, whose
//! probes miss the cache once the run has thousands of ranks.

use crate::input::ReqId;
use crate::units::Ns;

/// An open request.
#[derive(Clone, Copy, Debug, Default)]
pub struct Req {
    /// (completion, partner post) once known.
    pub done: Option<(Ns, Ns)>,
    /// The actor blocked on it.
    pub waiter: Option<u32>,
}

/// Every actor's open requests.
#[derive(Default)]
pub struct Requests {
    by_actor: Vec<Vec<(ReqId, Req)>>,
}

fn owner(req: ReqId) -> usize {
    (req >> 32) as usize
}

impl Requests {
    /// Room for `actors` actors.
    pub fn new(actors: usize) -> Requests {
        Requests {
            by_actor: (0..actors).map(|_| Vec::new()).collect(),
        }
    }

    fn list(&mut self, req: ReqId) -> &mut Vec<(ReqId, Req)> {
        let a = owner(req);
        if a >= self.by_actor.len() {
            self.by_actor.resize_with(a + 1, Vec::new);
        }
        &mut self.by_actor[a]
    }

    /// The open request `req`, if any.
    pub fn get_mut(&mut self, req: ReqId) -> Option<&mut Req> {
        self.list(req).iter_mut().find(|e| e.0 == req).map(|e| &mut e.1)
    }

    /// The open request `req`, opened empty if it was not.
    pub fn get_or_open(&mut self, req: ReqId) -> &mut Req {
        let list = self.list(req);
        let i = match list.iter().position(|e| e.0 == req) {
            Some(i) => i,
            None => {
                list.push((req, Req::default()));
                list.len() - 1
            }
        };
        &mut list[i].1
    }

    /// Opens `req` as `r`, replacing any open request of that id.
    pub fn insert(&mut self, req: ReqId, r: Req) {
        *self.get_or_open(req) = r;
    }

    /// Closes `req`, returning it if it was open.
    pub fn remove(&mut self, req: ReqId) -> Option<Req> {
        let list = self.list(req);
        let i = list.iter().position(|e| e.0 == req)?;
        Some(list.swap_remove(i).1)
    }
}
