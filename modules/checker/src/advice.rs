//! What to change, in a sentence, for each check that reports: a report
//! says what is wrong and where; this says how to make it right.

/// The advice for a report of the class named `class` (`argument`,
/// `collective`...) by `check`.
pub fn fix(class: &str, check: &str) -> &'static str {
    match (class, check) {
        ("argument", "comm") => "pass a communicator that is valid here (created and not yet freed, not MPI_COMM_NULL)",
        ("argument", "rank") => "pass a rank between 0 and the communicator's size - 1, or MPI_PROC_NULL (MPI_ANY_SOURCE for a receive)",
        ("argument", "tag") => "pass a tag between 0 and MPI_TAG_UB (MPI_ANY_TAG for a receive)",
        ("argument", "count") => "pass a count of zero or more",
        ("argument", "root") => "pass the same valid root on every rank: a rank of the communicator",
        ("argument", "datatype") => "pass a datatype that is created, committed (MPI_Type_commit) and not yet freed",
        ("argument", "op") => "pass a predefined operation or one created by MPI_Op_create and not yet freed",
        ("argument", "buffer") => "pass a buffer with room for the data, or a count of 0",
        ("argument", "overlap") => "use separate send and receive buffers, or MPI_IN_PLACE",
        ("argument", "out-parameter") => "pass the address of a variable of the argument's type (an MPI_Request, an int flag)",
        ("collective", "collective-kind") => "make every rank of the communicator call the same collectives in the same order (the blocking ones among themselves, the nonblocking ones among themselves)",
        ("collective", "root") => "pass the same root on every rank",
        ("collective", "op") => "pass the same operation on every rank",
        ("collective", "signature") => "make every rank's piece the same count of the same basic types (and a rank's send and receive pieces agree)",
        ("p2p", "truncation") => "post the receive with room for the whole message (a larger count), or send less",
        ("p2p", "type-mismatch") => "receive with a datatype of the same basic types as the send's, or send with the receive's",
        ("p2p", "message-race") => "receive from an explicit source (or with distinct tags) so that one message only can match, unless either order is correct",
        ("p2p", "unreceived") => "post a matching receive for the message before MPI_Finalize, or do not send it",
        ("deadlock", "potential-deadlock") => "order the calls so that each send meets its receive (a receive posted first on one side, MPI_Sendrecv, or nonblocking calls and a wait)",
        ("deadlock", _) => "order the calls so that every rank's blocking call can complete: match each receive, probe and wait with a send, and each collective with the other ranks' same call",
        ("nonblocking", "request-reused") => "complete the request (MPI_Wait or a successful MPI_Test) before its variable is used again or the persistent request started again",
        ("nonblocking", "buffer-modified") => "leave the send buffer unchanged until its send completes (MPI_Wait), or send a copy",
        ("nonblocking", "buffer-reused") => "complete the first operation (MPI_Wait) before another one uses its buffer",
        ("nonblocking", "request-not-completed") => "complete the request with MPI_Wait (or MPI_Test until it succeeds) before MPI_Finalize",
        ("nonblocking", "after-finalize") => "make every MPI call before MPI_Finalize",
        ("thread", "above-level") => "ask MPI_Init_thread for the level the program needs (MPI_THREAD_MULTIPLE for calls from several threads at once) and check what it provides, or make every MPI call from the thread that initialized MPI",
        ("thread", "same-request") => "complete each request on one thread only: wait on it (or test it) where it was started, or hand it over to one other thread",
        ("thread", "same-communicator") => "give each thread its own communicator (MPI_Comm_dup) for its collectives, or order the threads' collectives on the shared one (a lock)",
        ("thread", "finalize-inside") => "join the threads that call MPI (or wait until they are done with MPI) before MPI_Finalize",
        ("leak", _) => "free it (MPI_Comm_free, MPI_Group_free, MPI_Type_free, MPI_Op_free, MPI_Request_free) once it is no longer used, before MPI_Finalize",
        _ => "see docs/checker.md for this check",
    }
}
