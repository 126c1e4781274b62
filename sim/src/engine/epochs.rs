//! An actor's one-sided epochs: per window, its operations no call has
//! completed yet (done at a known time, or moving as flows), and the
//! groups of its last post and start
//! (`one_sided` times the calls that fill and close them).

use crate::input::ops::Handover;
use crate::input::ReqId;
use crate::kernel::rma::Pending;
use rustc_hash::FxHashMap;

/// An actor's open epochs, per window: boxed in the actor, since most
/// actors of most runs have none.
#[derive(Default)]
pub struct Epochs {
    wins: FxHashMap<u32, Epoch>,
}

/// What an actor's epoch on one window holds.
#[derive(Default)]
pub struct Epoch {
    /// Per target, when its operations are done.
    pub pending: Pending,
    /// Operations whose data still moves as flows over shared links:
    /// their target and the request their end completes.
    pub flowing: Vec<(u32, ReqId)>,
    /// The targets of the last `MPI_Win_start`.
    pub started: Box<[u32]>,
    /// The origins of the last `MPI_Win_post`.
    pub posted: Box<[u32]>,
}

impl Epochs {
    /// The epoch on window `win`, opened if new.
    pub fn window(&mut self, win: u32) -> &mut Epoch {
        self.wins.entry(win).or_default()
    }
}

/// What a closing call does once its operations are done (at once, or
/// once the flows it waits for end).
pub enum Rest {
    /// `MPI_Win_fence`'s barrier of the window's group.
    Barrier,
    /// `MPI_Win_complete`'s notifications to these targets.
    Notify(Box<[u32]>),
    /// `MPI_Win_unlock`'s grants to the holders after it.
    Grants(Box<[Handover]>),
}
