//! What an MPI routine does, from its name: the exports and statistics
//! need to know which calls send, receive, complete requests or are
//! collectives, whichever MPI the trace came from.

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coll {
    /// `MPI_Barrier`
    Barrier,
    /// `MPI_Bcast`
    Bcast,
    /// `MPI_Reduce`
    Reduce,
    /// `MPI_Allreduce`
    Allreduce,
    /// `MPI_Reduce_scatter`, `MPI_Reduce_scatter_block`
    ReduceScatter,
    /// `MPI_Scan`, `MPI_Exscan`
    Scan,
    /// `MPI_Gather`, `MPI_Gatherv`
    Gather,
    /// `MPI_Scatter`, `MPI_Scatterv`
    Scatter,
    /// `MPI_Allgather`, `MPI_Allgatherv`
    Allgather,
    /// `MPI_Alltoall`, `MPI_Alltoallv`, `MPI_Alltoallw`
    Alltoall,
}

impl Coll {
    /// Whether the collective has a root (`MPI_Bcast`, `MPI_Reduce`,
    /// `MPI_Gather`, `MPI_Scatter` and their `v` forms): the one list the
    /// replay of a trace and virtual ranks ask.
    pub fn rooted(self) -> bool {
        matches!(self, Coll::Bcast | Coll::Reduce | Coll::Gather | Coll::Scatter)
    }

    /// Every collective, in declaration order (a stable index for wire
    /// codes and for tests that cover them all).
    pub const ALL: [Coll; 10] = [
        Coll::Barrier,
        Coll::Bcast,
        Coll::Reduce,
        Coll::Allreduce,
        Coll::ReduceScatter,
        Coll::Scan,
        Coll::Gather,
        Coll::Scatter,
        Coll::Allgather,
        Coll::Alltoall,
    ];
}

/// The role of a routine in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoutineKind {
    /// Sends a message (`MPI_Send` ...); `blocking: false` for the `I`
    /// forms and persistent `*_init` forms, which create a request.
    Send {
        /// Completes before returning.
        blocking: bool,
    },
    /// Receives a message.
    Recv {
        /// Completes before returning.
        blocking: bool,
    },
    /// `MPI_Sendrecv`, `MPI_Sendrecv_replace`.
    Sendrecv,
    /// `MPI_Start`, `MPI_Startall`.
    Start,
    /// Waits for or tests requests.
    Complete,
    /// `MPI_Cancel`: a request that its wait completes, cancelled if it
    /// had not matched.
    Cancel,
    /// A collective; `blocking: false` for the `I` forms.
    Collective {
        /// Which.
        op: Coll,
        /// Completes before returning.
        blocking: bool,
        /// The `v` variant (per-rank counts).
        vector: bool,
    },
    /// Creates or frees a communicator.
    Communicator,
    /// Anything else: local work as far as replay is concerned.
    Other,
}

/// Classifies an `MPI_` routine name (large-count `_c` forms included).
pub fn classify(name: &str) -> RoutineKind {
    let base = name.strip_prefix("MPI_").unwrap_or(name);
    let base = base.strip_suffix("_c").unwrap_or(base);
    let (persistent, base) = match base.strip_suffix("_init") {
        Some(b) if !b.is_empty() => (true, b),
        _ => (false, base),
    };
    match base {
        "Send" | "Bsend" | "Ssend" | "Rsend" => {
            return RoutineKind::Send {
                blocking: !persistent,
            }
        }
        "Isend" | "Ibsend" | "Issend" | "Irsend" => return RoutineKind::Send { blocking: false },
        "Recv" => {
            return RoutineKind::Recv {
                blocking: !persistent,
            }
        }
        // A matched probe's message is received as a wildcard receive.
        "Irecv" | "Imrecv" => return RoutineKind::Recv { blocking: false },
        "Mrecv" => return RoutineKind::Recv { blocking: true },
        "Sendrecv" | "Sendrecv_replace" => return RoutineKind::Sendrecv,
        "Start" | "Startall" => return RoutineKind::Start,
        "Cancel" => return RoutineKind::Cancel,
        "Wait" | "Waitall" | "Waitany" | "Waitsome" | "Test" | "Testall" | "Testany" | "Testsome"
        | "Request_free" => return RoutineKind::Complete,
        _ => {}
    }
    if base.starts_with("Comm_")
        && matches!(
            &base[5..],
            "dup"
                | "dup_with_info"
                | "idup"
                | "split"
                | "split_type"
                | "create"
                | "create_group"
                | "free"
                | "disconnect"
        )
        || matches!(
            base,
            "Cart_create"
                | "Cart_sub"
                | "Graph_create"
                | "Dist_graph_create"
                | "Dist_graph_create_adjacent"
                | "Intercomm_create"
                | "Intercomm_merge"
        )
    {
        return RoutineKind::Communicator;
    }
    // Collective names are capitalised like MPI's ("Allreduce", "Iallreduce"),
    // never "AllReduce".
    let lower = base.to_ascii_lowercase();
    let canonical =
        base.get(..1).is_some_and(|c| c.chars().all(char::is_uppercase)) && base[1..] == lower[1..];
    if !canonical {
        return RoutineKind::Other;
    }
    let (nonblocking, op) = match collective(&lower) {
        Some(op) => (false, op),
        None => match lower.strip_prefix('i').and_then(collective) {
            Some(op) => (true, op),
            None => return RoutineKind::Other,
        },
    };
    RoutineKind::Collective {
        op: op.0,
        blocking: !nonblocking && !persistent,
        vector: op.1,
    }
}

fn collective(lower: &str) -> Option<(Coll, bool)> {
    Some(match lower {
        "barrier" => (Coll::Barrier, false),
        "bcast" => (Coll::Bcast, false),
        "reduce" => (Coll::Reduce, false),
        "allreduce" => (Coll::Allreduce, false),
        "reduce_scatter" => (Coll::ReduceScatter, true),
        "reduce_scatter_block" => (Coll::ReduceScatter, false),
        "scan" | "exscan" => (Coll::Scan, false),
        "gather" => (Coll::Gather, false),
        "gatherv" => (Coll::Gather, true),
        "scatter" => (Coll::Scatter, false),
        "scatterv" => (Coll::Scatter, true),
        "allgather" => (Coll::Allgather, false),
        "allgatherv" => (Coll::Allgather, true),
        "alltoall" => (Coll::Alltoall, false),
        "alltoallv" | "alltoallw" => (Coll::Alltoall, true),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_to_point_routines() {
        assert_eq!(classify("MPI_Send"), RoutineKind::Send { blocking: true });
        assert_eq!(classify("MPI_Issend"), RoutineKind::Send { blocking: false });
        assert_eq!(classify("MPI_Send_init"), RoutineKind::Send { blocking: false });
        assert_eq!(classify("MPI_Isend_c"), RoutineKind::Send { blocking: false });
        assert_eq!(classify("MPI_Recv"), RoutineKind::Recv { blocking: true });
        assert_eq!(classify("MPI_Recv_init"), RoutineKind::Recv { blocking: false });
        assert_eq!(classify("MPI_Sendrecv_replace"), RoutineKind::Sendrecv);
        assert_eq!(classify("MPI_Waitall"), RoutineKind::Complete);
        assert_eq!(classify("MPI_Startall"), RoutineKind::Start);
    }

    #[test]
    fn collectives_and_others() {
        let c = |op, blocking, vector| RoutineKind::Collective { op, blocking, vector };
        assert_eq!(classify("MPI_Allreduce"), c(Coll::Allreduce, true, false));
        assert_eq!(classify("MPI_Iallreduce"), c(Coll::Allreduce, false, false));
        assert_eq!(classify("MPI_Alltoallv"), c(Coll::Alltoall, true, true));
        assert_eq!(classify("MPI_Ialltoallw"), c(Coll::Alltoall, false, true));
        assert_eq!(classify("MPI_Bcast_init"), c(Coll::Bcast, false, false));
        assert_eq!(classify("MPI_Ibarrier"), c(Coll::Barrier, false, false));
        assert_eq!(classify("MPI_Comm_split"), RoutineKind::Communicator);
        assert_eq!(classify("MPI_Comm_free"), RoutineKind::Communicator);
        for other in [
            "MPI_Init",
            "MPI_Comm_rank",
            "MPI_Wtime",
            "MPI_Info_create",
            "MPI_Iprobe",
            "MPI_Irecvx",
        ] {
            assert_eq!(classify(other), RoutineKind::Other, "{other}");
        }
    }
}
