//! Open requests, kept with the actor that owns them (a request id is
//! `(actor << 32) | index`): an actor has a handful open at a time, so a
//! short list beside its other state beats a run-wide hash table, whose
//! probes miss the cache once the run has thousands of ranks. An open
//! request is 24 bytes (its index, waiter and completion with sentinels
//! instead of `Option`s): a million ranks with a dozen requests open each
//! hold a dozen of them per rank.

use crate::input::ReqId;
use crate::units::Ns;

/// "No waiter".
const NO_WAITER: u32 = u32::MAX;

/// An open request.
#[derive(Clone, Copy, Debug)]
pub struct Req {
    /// Completion time, NaN while unknown.
    done_at: Ns,
    /// The partner's post, with `done_at`.
    partner: Ns,
    /// The actor blocked on it, or [`NO_WAITER`].
    waiter: u32,
    /// The request's index on its actor (the low half of its id).
    index: u32,
}

impl Req {
    fn open(index: u32) -> Req {
        Req {
            done_at: f64::NAN,
            partner: f64::NAN,
            waiter: NO_WAITER,
            index,
        }
    }

    /// (completion, partner post) once known.
    pub fn done(&self) -> Option<(Ns, Ns)> {
        (!self.done_at.is_nan()).then_some((self.done_at, self.partner))
    }

    /// Records its completion at `t`, its partner having posted at `partner`.
    pub fn set_done(&mut self, t: Ns, partner: Ns) {
        (self.done_at, self.partner) = (t, partner);
    }

    /// The actor blocked on it.
    pub fn waiter(&self) -> Option<u32> {
        (self.waiter != NO_WAITER).then_some(self.waiter)
    }

    /// Actor `a` blocks on it.
    pub fn set_waiter(&mut self, a: u32) {
        self.waiter = a;
    }
}

/// Every actor's open requests.
#[derive(Default)]
pub struct Requests {
    by_actor: Vec<Vec<Req>>,
}

fn owner(req: ReqId) -> usize {
    (req >> 32) as usize
}

fn index(req: ReqId) -> u32 {
    req as u32
}

impl Requests {
    /// Room for `actors` actors.
    pub fn new(actors: usize) -> Requests {
        Requests {
            by_actor: (0..actors).map(|_| Vec::new()).collect(),
        }
    }

    fn list(&mut self, req: ReqId) -> &mut Vec<Req> {
        let a = owner(req);
        if a >= self.by_actor.len() {
            self.by_actor.resize_with(a + 1, Vec::new);
        }
        &mut self.by_actor[a]
    }

    /// The open request `req`, if any.
    #[inline]
    pub fn get_mut(&mut self, req: ReqId) -> Option<&mut Req> {
        let i = index(req);
        self.list(req).iter_mut().find(|e| e.index == i)
    }

    /// The open request `req`, opened empty if it was not.
    pub fn get_or_open(&mut self, req: ReqId) -> &mut Req {
        let i = index(req);
        let list = self.list(req);
        let at = match list.iter().position(|e| e.index == i) {
            Some(at) => at,
            None => {
                if list.len() == list.capacity() {
                    // 4, 8, 12, then half as much again: a halo's dozen
                    // open requests in 12 places, not a doubling's 16 (a
                    // million ranks hold theirs at once).
                    let more = if list.capacity() < 12 {
                        4
                    } else {
                        list.capacity() / 2
                    };
                    list.reserve_exact(more);
                }
                list.push(Req::open(i));
                list.len() - 1
            }
        };
        &mut list[at]
    }

    /// Opens `req`, completed at once if `done` says when, replacing any
    /// open request of that id.
    pub fn open(&mut self, req: ReqId, done: Option<(Ns, Ns)>) {
        let r = self.get_or_open(req);
        *r = Req::open(index(req));
        if let Some((t, partner)) = done {
            r.set_done(t, partner);
        }
    }

    /// Closes `req`, returning it if it was open.
    #[inline]
    pub fn remove(&mut self, req: ReqId) -> Option<Req> {
        let i = index(req);
        let list = self.list(req);
        let at = list.iter().position(|e| e.index == i)?;
        Some(list.swap_remove(at))
    }
}
