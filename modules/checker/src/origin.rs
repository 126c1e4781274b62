//! Where the application made a call: what the checker keeps of the call
//! that created an object or issued an operation, to name it in a later
//! report (a leak, a conflicting access). Its own module, not the
//! registry's: the windows' unit tests use it, and the test build leaves
//! the registry out.

/// A call: its routine and its site's return address (0 if unknown).
#[derive(Clone, Copy, Debug, Default)]
pub struct Origin {
    pub routine: usize,
    pub ra: usize,
}
