//! Collective mismatches across ranks: before a checked collective, each
//! rank contributes a descriptor of its call (routine, root, operation,
//! the type signature of its piece of the data) to one `MPI_Iallreduce`
//! with `MPI_MAX` over the words and their negations, on the checker's
//! duplicate of the communicator. Max and min agree on every word exactly
//! when every rank made the same call; otherwise the descriptors are
//! gathered and each rank reports what it did against what the others did,
//! and the collective is not made (it would hang or corrupt memory).
//!
//! The same check runs before every kind of collective, so ranks in
//! different collectives still meet in it. Its cost: one allreduce of 14
//! words per collective, on a communicator of the checker's own.

use crate::args::{refuse, Checked};
use crate::consts::{self, Err};
use crate::registry::{self, key};
use crate::report::Class;
use crate::sig::Sig;
use crate::site::Here;
use crate::types;
use crate::wait;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Op};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;

/// The names of `consts::predefined_ops`, in its order.
const OP_NAMES: [&str; 14] = [
    "MPI_MAX",
    "MPI_MIN",
    "MPI_SUM",
    "MPI_PROD",
    "MPI_LAND",
    "MPI_BAND",
    "MPI_LOR",
    "MPI_BOR",
    "MPI_LXOR",
    "MPI_BXOR",
    "MPI_MAXLOC",
    "MPI_MINLOC",
    "MPI_REPLACE",
    "MPI_NO_OP",
];

/// Words of a descriptor.
const WORDS: usize = 7;

/// One rank's call of a collective.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Desc {
    routine: i64,
    root: i64,
    op: i64,
    sig: Sig,
}

impl Desc {
    /// A call of `routine` without root, operation or data.
    pub fn new(routine: usize) -> Desc {
        Desc {
            routine: routine as i64,
            root: -1,
            op: -1,
            sig: Sig::default(),
        }
    }

    /// With its root.
    pub fn root(mut self, root: i32) -> Desc {
        self.root = root as i64;
        self
    }

    /// With its operation.
    pub fn op(mut self, op: MPI_Op) -> Desc {
        self.op = op_id(op);
        self
    }

    /// With the signature of its piece of data: `count` elements of `dt`.
    pub fn data(mut self, count: i32, dt: MPI_Datatype) -> Desc {
        self.sig = types::signature(dt).times(count.max(0) as u64);
        self
    }

    fn words(&self) -> [i64; WORDS] {
        [
            self.routine,
            self.root,
            self.op,
            self.sig.hash as i64,
            self.sig.len as i64,
            self.sig.bytes as i64,
            self.sig.loose as i64,
        ]
    }

    fn from_words(w: &[i64]) -> Desc {
        Desc {
            routine: w[0],
            root: w[1],
            op: w[2],
            sig: Sig {
                hash: w[3] as u64,
                len: w[4] as u64,
                bytes: w[5] as u64,
                loose: w[6] != 0,
            },
        }
    }

    /// In words, for a report.
    fn describe(&self) -> String {
        let name = ROUTINE_NAMES.get(self.routine as usize).copied().unwrap_or("?");
        let mut text = name.to_string();
        if self.root >= 0 {
            text.push_str(&format!(" root {}", self.root));
        }
        match self.op {
            -1 => {}
            op if (op as usize) < OP_NAMES.len() => text.push_str(&format!(" {}", OP_NAMES[op as usize])),
            op => text.push_str(&format!(" the user operation created {}th", op - 1000)),
        }
        text.push_str(&format!(
            " with {} elements ({} bytes, {})",
            self.sig.len,
            self.sig.bytes,
            // Two pieces of as many elements and bytes but other basic
            // types differ here.
            if self.sig.loose {
                "untyped".to_string()
            } else {
                format!("type signature {:06x}", self.sig.hash & 0xff_ffff)
            }
        ));
        text
    }
}

/// An operation's name across ranks: a predefined one's index, a user
/// one's creation number (+1000).
fn op_id(op: MPI_Op) -> i64 {
    if let Some(i) = consts::predefined_ops()
        .iter()
        .position(|o| o.bits() == op.bits())
    {
        return i as i64;
    }
    registry::lock()
        .ops
        .get(&key(op))
        .map_or(999, |o| 1000 + o.seq as i64)
}

/// Checks that a rank's own two pieces (what it sends and what it
/// receives from each rank) agree, as in `MPI_Gather` at the root. On an
/// intercommunicator they need not: each pairs with the remote group's.
pub fn pieces_agree(comm: MPI_Comm, send: (i32, MPI_Datatype), recv: (i32, MPI_Datatype)) -> Checked {
    if crate::args::is_inter(comm) {
        return Ok(());
    }
    let s = types::signature(send.1).times(send.0.max(0) as u64);
    let r = types::signature(recv.1).times(recv.0.max(0) as u64);
    if s.agrees(r) {
        return Ok(());
    }
    Err(mismatch(
        "signature",
        format!(
            "this rank sends {} elements ({} bytes) but receives {} elements ({} bytes) per rank",
            s.len, s.bytes, r.len, r.bytes
        ),
    ))
}

fn mismatch(check: &'static str, what: String) -> crate::args::Refusal {
    let mut r = refuse(Err::Other, check, what);
    r.class = Class::Collective;
    r
}

/// Checks that every rank of `comm` makes the call `desc` describes.
pub fn agree(here: &Here, comm: MPI_Comm, desc: Desc) -> Checked {
    let Some(shadow) = registry::shadow(comm) else {
        return Ok(());
    };
    let mine = desc.words();
    let mut both = [0i64; 2 * WORDS];
    for i in 0..WORDS {
        both[i] = mine[i];
        both[WORDS + i] = mine[i].wrapping_neg();
    }
    let mut out = [0i64; 2 * WORDS];
    let mut req = mpi::REQUEST_NULL();
    // SAFETY: `both` and `out` outlive the request, which the loop below
    // completes before they go out of scope.
    let rc = unsafe {
        ffi::PMPI_Iallreduce(
            both.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            (2 * WORDS) as c_int,
            mpi::LONG_LONG(),
            mpi::MAX(),
            shadow,
            &mut req,
        )
    };
    if rc != mpi::SUCCESS() {
        return Ok(());
    }
    let rc = wait::block_on(here, || crate::p2p::collective_waits(comm), || test(&mut req));
    if rc != mpi::SUCCESS() {
        return Ok(());
    }
    let max = Desc::from_words(&out[..WORDS]);
    let mut min_words = [0i64; WORDS];
    for (m, w) in min_words.iter_mut().zip(&out[WORDS..]) {
        *m = w.wrapping_neg();
    }
    let min = Desc::from_words(&min_words);
    let sig_ok = if max.sig.loose {
        max.sig.bytes == min.sig.bytes
    } else {
        max.sig == min.sig
    };
    if max.routine == min.routine && max.root == min.root && max.op == min.op && sig_ok {
        return Ok(());
    }
    let check = if max.routine != min.routine {
        "collective-kind"
    } else if max.root != min.root {
        "root"
    } else if max.op != min.op {
        "op"
    } else {
        "signature"
    };
    Err(mismatch(check, differences(shadow, &desc)))
}

/// Gathers every rank's descriptor (all ranks found the mismatch) and
/// names those that differ from this rank's.
fn differences(shadow: MPI_Comm, desc: &Desc) -> String {
    let size = crate::args::comm_size(shadow).max(1) as usize;
    let mine = desc.words();
    let mut all = vec![0i64; size * WORDS];
    // SAFETY: `all` has room for WORDS words from each of `size` ranks.
    unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            WORDS as c_int,
            mpi::LONG_LONG(),
            all.as_mut_ptr().cast(),
            WORDS as c_int,
            mpi::LONG_LONG(),
            shadow,
        )
    };
    let others: Vec<String> = all
        .chunks(WORDS)
        .enumerate()
        .map(|(r, w)| (r, Desc::from_words(w)))
        .filter(|(_, d)| d != desc)
        .take(4)
        .map(|(r, d)| format!("rank {r} of the communicator calls {}", d.describe()))
        .collect();
    format!(
        "ranks disagree on this collective: this rank calls {}, but {}",
        desc.describe(),
        others.join("; ")
    )
}

/// One `MPI_Test` of a request of the checker's own.
fn test(req: &mut ffi::MPI_Request) -> Result<bool, c_int> {
    // SAFETY: a request of ours; its status is ignored.
    crate::wait::flagged(|flag| unsafe { ffi::PMPI_Test(req, flag, mpi::STATUS_IGNORE()) })
}
