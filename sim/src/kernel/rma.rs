//! The one-sided (RMA) rule: when a put, get or accumulate frees the
//! origin's CPU, and when the origin can know it complete, which is when
//! the call that closes its epoch (a fence, `MPI_Win_complete`, an unlock
//! or a flush) may return. The target's CPU takes no part: the data moves
//! as the network moves a message, and the target learns nothing until
//! its own synchronization.
//!
//! ```text
//! put, accumulate        free = overhead(origin -> target, at)
//!                        data = transfer(origin -> target, bytes, free)
//!                        done = transfer(target -> origin, 0 bytes, data.end).end   the completion's acknowledgement
//! get                    request = transfer(origin -> target, 0 bytes, free)
//!                        done = transfer(target -> origin, bytes, request.end).end
//! get_accumulate,        data = transfer(origin -> target, bytes, free)
//! fetch_and_op, CAS      done = transfer(target -> origin, bytes, data.end).end     the old value comes back
//! ```
//!
//! The target's reduction of an accumulate costs no time: no model gives
//! a rate for it. How the epochs use `done` is the engine's part
//! (docs/sim.md, "One-sided communication"): a fence is a barrier of the
//! window's group that each member enters once its own operations are
//! done; `MPI_Win_complete`, an unlock and a flush wait for the done
//! times of the operations they close; a post and a start, a complete and
//! a wait exchange empty messages between the ranks their groups name.

use crate::model::{Model, Msg};
use crate::units::Ns;
use pnmpi_trace::rma::DataOp;

/// What a data operation moves across the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moves {
    /// Data to the target, then an acknowledgement back: put, accumulate.
    ToTarget,
    /// A request to the target, then the data back: get.
    FromTarget,
    /// Data to the target, then as much back: get_accumulate,
    /// fetch_and_op, compare_and_swap.
    Both,
}

impl Moves {
    /// What `op` moves.
    pub fn of(op: DataOp) -> Moves {
        match op {
            DataOp::Put | DataOp::Accumulate => Moves::ToTarget,
            DataOp::Get => Moves::FromTarget,
            DataOp::GetAccumulate | DataOp::FetchAndOp | DataOp::CompareAndSwap => Moves::Both,
        }
    }
}

/// When an issued operation leaves the origin's CPU free, and when the
/// origin may know it complete.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Issued {
    /// The origin's CPU is free again (the call returns).
    pub free: Ns,
    /// The operation is complete at the origin: its data in the target's
    /// window (and acknowledged) or in the origin's buffer.
    pub done: Ns,
}

/// Times an operation that moves `bytes` between `origin` and `target`
/// (an `m` built for origin to target, its nodes set), issued at `at`; the
/// origin's overhead runs on `cpu` (as [`super::p2p::post`]'s).
pub fn issue(
    model: &mut dyn Model,
    to_target: &Msg,
    moves: Moves,
    at: Ns,
    cpu: &mut dyn FnMut(Ns, Ns) -> Ns,
) -> Issued {
    let back = |bytes| Msg {
        src: to_target.dst,
        dst: to_target.src,
        src_node: to_target.dst_node,
        dst_node: to_target.src_node,
        bytes,
    };
    let there = |bytes| Msg { bytes, ..*to_target };
    let out = match moves {
        Moves::FromTarget => there(0),
        Moves::ToTarget | Moves::Both => *to_target,
    };
    let free = model.send_overhead(&out, at);
    let free = cpu(at, free - at);
    let arrived = model.transfer(&out, free).end;
    let reply = match moves {
        Moves::ToTarget => back(0),
        Moves::FromTarget | Moves::Both => back(to_target.bytes),
    };
    let done = model.transfer(&reply, arrived).end;
    Issued { free, done }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;

    fn model() -> Box<dyn Model> {
        let m = Machine::parse(
            "m.toml",
            "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n",
        )
        .expect("a machine");
        crate::model::build("simple", &m).expect("the simple model")
    }

    fn msg(bytes: u64) -> Msg {
        Msg {
            src: 0,
            dst: 1,
            src_node: 0,
            dst_node: 1,
            bytes,
        }
    }

    fn unstretched(start: Ns, work: Ns) -> Ns {
        start + work
    }

    #[test]
    fn a_put_is_its_data_there_and_an_acknowledgement_back() {
        let mut m = model();
        let i = issue(&mut *m, &msg(1000), Moves::ToTarget, 10.0, &mut unstretched);
        // The simple model: no overhead; 1 us + 1000 B at 1 GB/s there,
        // 1 us back.
        assert_eq!(i.free, 10.0);
        assert_eq!(i.done, 10.0 + 1000.0 + 1000.0 + 1000.0);
    }

    #[test]
    fn a_get_is_a_request_there_and_its_data_back() {
        let mut m = model();
        let get = issue(&mut *m, &msg(1000), Moves::FromTarget, 0.0, &mut unstretched);
        let put = issue(&mut *m, &msg(1000), Moves::ToTarget, 0.0, &mut unstretched);
        // The same two latencies and one payload, the other way round.
        assert_eq!(get.done, put.done);
        let both = issue(&mut *m, &msg(1000), Moves::Both, 0.0, &mut unstretched);
        assert_eq!(both.done, get.done + 1000.0, "the payload both ways");
    }

    #[test]
    fn every_data_operation_moves_what_its_kind_says() {
        assert_eq!(Moves::of(DataOp::Accumulate), Moves::ToTarget);
        assert_eq!(Moves::of(DataOp::Get), Moves::FromTarget);
        assert_eq!(Moves::of(DataOp::CompareAndSwap), Moves::Both);
    }
}
