//! Open requests, kept with the actor that owns them (a request id is
//! `(actor << 32) | index`): an actor has a handful open at a time, so a
//! short list beside its other state beats a run-wide hash table, whose
//! probes miss the cache once the run has thousands of ranks. An open
//! request is 24 bytes (its index, waiter and completion with sentinels
//! instead of `Option`s): a million ranks with a dozen requests open each
//! hold a dozen of them per rank.

use crate::input::ReqId;
use crate::units::Ns;
use rustc_hash::FxHashMap;

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

/// An actor's open requests: a short list, searched in order, while it
/// has few (a halo's dozen); a table by index once it has more than
/// [`LONG`] (a master's receives from thousands of workers, where a list
/// made every lookup a scan of them all).
enum List {
    Short(Vec<Req>),
    Long(Box<FxHashMap<u32, Req>>),
}

/// The most requests an actor keeps in a short list.
const LONG: usize = 48;

impl Default for List {
    fn default() -> List {
        List::Short(Vec::new())
    }
}

/// Every actor's open requests.
#[derive(Default)]
pub struct Requests {
    /// The actor of `by_actor[0]`: a process of a parallel replay keeps
    /// its own actors' requests only.
    first: usize,
    by_actor: Vec<List>,
}

fn owner(req: ReqId) -> usize {
    (req >> 32) as usize
}

fn index(req: ReqId) -> u32 {
    req as u32
}

impl Requests {
    /// Room for the `actors` actors from `first` on.
    pub fn new(first: usize, actors: usize) -> Requests {
        Requests {
            first,
            by_actor: (0..actors).map(|_| List::default()).collect(),
        }
    }

    fn list(&mut self, req: ReqId) -> &mut List {
        let a = owner(req).wrapping_sub(self.first);
        if a >= self.by_actor.len() {
            self.by_actor.resize_with(a + 1, List::default);
        }
        &mut self.by_actor[a]
    }

    /// The open request `req`, if any (none of an actor not kept here).
    #[inline]
    pub fn get_mut(&mut self, req: ReqId) -> Option<&mut Req> {
        let i = index(req);
        let list = self.by_actor.get_mut(owner(req).wrapping_sub(self.first))?;
        match list {
            List::Short(list) => list.iter_mut().find(|e| e.index == i),
            List::Long(table) => table.get_mut(&i),
        }
    }

    /// The open request `req`, opened empty if it was not.
    #[inline]
    pub fn get_or_open(&mut self, req: ReqId) -> &mut Req {
        let i = index(req);
        let slot = self.list(req);
        let short =
            matches!(slot, List::Short(list) if list.len() < LONG || list.iter().any(|e| e.index == i));
        if !short {
            return Self::open_in_table(slot, i);
        }
        match slot {
            List::Short(list) => {
                let at = match list.iter().position(|e| e.index == i) {
                    Some(at) => at,
                    None => {
                        if list.len() == list.capacity() {
                            // 4, 8, 12, then half as much again: a halo's
                            // dozen open requests in 12 places, not a
                            // doubling's 16 (a million ranks hold theirs at
                            // once).
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
            List::Long(table) => table.entry(i).or_insert_with(|| Req::open(i)),
        }
    }

    /// [`get_or_open`](Self::get_or_open) on an actor with many open: its
    /// list becomes a table first.
    #[cold]
    fn open_in_table(slot: &mut List, i: u32) -> &mut Req {
        if let List::Short(list) = slot {
            let table = list.drain(..).map(|r| (r.index, r)).collect();
            *slot = List::Long(Box::new(table));
        }
        match slot {
            List::Long(table) => table.entry(i).or_insert_with(|| Req::open(i)),
            List::Short(_) => unreachable!("made a table above"),
        }
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
        match self.by_actor.get_mut(owner(req).wrapping_sub(self.first))? {
            List::Short(list) => {
                let at = list.iter().position(|e| e.index == i)?;
                Some(list.swap_remove(at))
            }
            slot => Self::remove_from_table(slot, i),
        }
    }

    /// [`remove`](Self::remove) from a table: an actor whose table empties
    /// goes back to a short list.
    #[cold]
    fn remove_from_table(slot: &mut List, i: u32) -> Option<Req> {
        let List::Long(table) = slot else {
            return None;
        };
        let r = table.remove(&i);
        if table.is_empty() {
            *slot = List::default();
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests opened, completed and closed in any order give the same
    /// answers with a short list and with a table, across the switch.
    #[test]
    fn a_long_list_becomes_a_table_that_answers_alike() {
        let mut reqs = Requests::new(0, 2);
        let mut model: FxHashMap<ReqId, Req> = FxHashMap::default();
        let mut rng = fastrand::Rng::with_seed(5);
        let mut long = false;
        for step in 0..20_000u64 {
            long |= matches!(reqs.by_actor[1], List::Long(_));
            let x = rng.u64(..);
            // Actor 1 keeps up to a few hundred open, actor 0 a few.
            let actor = x >> 63;
            let span = if actor == 1 { 400 } else { 6 };
            let req = (actor << 32) | ((x >> 20) % span);
            match (x >> 40) % 4 {
                0 | 1 => {
                    let done = (x >> 50).is_multiple_of(2).then_some((step as f64, 1.0));
                    reqs.open(req, done);
                    let mut r = Req::open(index(req));
                    if let Some((t, p)) = done {
                        r.set_done(t, p);
                    }
                    model.insert(req, r);
                }
                2 => {
                    let got = reqs.remove(req).map(|r| (r.index, r.done()));
                    let want = model.remove(&req).map(|r| (r.index, r.done()));
                    assert_eq!(got, want, "step {step}");
                }
                _ => {
                    let got = reqs.get_mut(req).map(|r| (r.index, r.done()));
                    let want = model.get(&req).map(|r| (r.index, r.done()));
                    assert_eq!(got, want, "step {step}");
                }
            }
        }
        assert!(long, "actor 1's list never became a table");
        assert!(matches!(reqs.by_actor[0], List::Short(_)));
    }
}
