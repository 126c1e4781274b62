//! What to change, in a sentence, for each check that reports: a report
//! says what is wrong and where; this says how to make it right.

use crate::report::Class;

/// The advice for a report of `class` by `check`.
pub fn fix(class: Class, check: &str) -> &'static str {
    match (class, check) {
        (Class::Argument, "comm") => "pass a communicator that is valid here (created and not yet freed, not MPI_COMM_NULL)",
        (Class::Argument, "rank") => "pass a rank between 0 and the communicator's size - 1, or MPI_PROC_NULL (MPI_ANY_SOURCE for a receive)",
        (Class::Argument, "tag") => "pass a tag between 0 and MPI_TAG_UB (MPI_ANY_TAG for a receive)",
        (Class::Argument, "count") => "pass a count of zero or more",
        (Class::Argument, "root") => "pass the same valid root on every rank: a rank of the communicator",
        (Class::Argument, "datatype") => "pass a datatype that is created, committed (MPI_Type_commit) and not yet freed",
        (Class::Argument, "op") => "pass a predefined operation or one created by MPI_Op_create and not yet freed",
        (Class::Argument, "buffer") => "pass a buffer with room for the data, or a count of 0",
        (Class::Argument, "overlap") => "use separate send and receive buffers, or MPI_IN_PLACE",
        (Class::Argument, "out-parameter") => "pass the address of a variable of the argument's type (an MPI_Request, an int flag)",
        (Class::Collective, "collective-kind") => "make every rank of the communicator call the same collectives in the same order (blocking and nonblocking alike)",
        (Class::Collective, "root") => "pass the same root on every rank",
        (Class::Collective, "op") => "pass the same operation on every rank",
        (Class::Collective, "signature") => "make every rank's piece the same count of the same basic types (and a rank's send and receive pieces agree)",
        (Class::P2p, "truncation") => "post the receive with room for the whole message (a larger count), or send less",
        (Class::P2p, "type-mismatch") => "receive with a datatype of the same basic types as the send's, or send with the receive's",
        (Class::P2p, "message-race") => "receive from an explicit source (or with distinct tags) so that one message only can match, unless either order is correct",
        (Class::P2p, "unreceived") => "post a matching receive for the message before MPI_Finalize, or do not send it",
        (Class::Deadlock, "potential-deadlock") => "order the calls so that each send meets its receive (a receive posted first on one side, MPI_Sendrecv, or nonblocking calls and a wait)",
        (Class::Deadlock, _) => "order the calls so that every rank's blocking call can complete: match each receive, probe and wait with a send, and each collective with the other ranks' same call",
        (Class::Nonblocking, "request-reused") => "complete the request (MPI_Wait or a successful MPI_Test) before its variable is used again or the persistent request started again",
        (Class::Nonblocking, "buffer-modified") => "leave the send buffer unchanged until its send completes (MPI_Wait), or send a copy",
        (Class::Nonblocking, "buffer-reused") => "complete the first operation (MPI_Wait) before another one uses its buffer",
        (Class::Nonblocking, "request-not-completed") => "complete the request with MPI_Wait (or MPI_Test until it succeeds) before MPI_Finalize",
        (Class::Nonblocking, "after-finalize") => "make every MPI call before MPI_Finalize",
        (Class::Leak, _) => "free it (MPI_Comm_free, MPI_Group_free, MPI_Type_free, MPI_Op_free, MPI_Request_free) once it is no longer used, before MPI_Finalize",
        _ => "see docs/checker.md for this check",
    }
}
