//! A rank's call of a collective in a few words (routine, root,
//! operation, the type signature of its piece of the data), as the ranks of a communicator
//! compare them: one allreduce with `MPI_MAX` over the words and their
//! negations gives each word's maximum and minimum, which agree exactly
//! when every rank made the same call.

use crate::registry::{self, key};
use crate::sig::Sig;
use crate::types;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use pnmpi_sdk::sys::Handle;
use pnmpi_trace::rma::OP_NAMES;
use std::ffi::c_int;

/// Words of a descriptor.
pub const WORDS: usize = 7;

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
            ..Desc::default()
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

    /// Its words.
    pub fn words(&self) -> [i64; WORDS] {
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

    /// From its words.
    pub fn from_words(w: &[i64]) -> Desc {
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

    /// The words and their negations: what a rank gives the allreduce.
    pub fn both(&self) -> [i64; 2 * WORDS] {
        let mine = self.words();
        let mut both = [0i64; 2 * WORDS];
        for i in 0..WORDS {
            both[i] = mine[i];
            both[WORDS + i] = mine[i].wrapping_neg();
        }
        both
    }

    /// Starts the comparison's reduction of [`both`](Self::both)'s words,
    /// `both` in, the maximum over `shadow`'s ranks into `out`, and
    /// returns MPI's code.
    ///
    /// # Safety
    /// `both` and `out` must stay where they are, alive, until `req`
    /// completes.
    pub unsafe fn reduce(
        both: &[i64; 2 * WORDS],
        out: &mut [i64; 2 * WORDS],
        shadow: MPI_Comm,
        req: &mut MPI_Request,
    ) -> c_int {
        // SAFETY: the caller keeps both buffers valid until the request
        // completes; the counts and type match their 2 x WORDS words.
        unsafe {
            ffi::PMPI_Iallreduce(
                both.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                (2 * WORDS) as c_int,
                mpi::LONG_LONG(),
                mpi::MAX(),
                shadow,
                req,
            )
        }
    }

    /// The routine's name.
    pub fn name(&self) -> &'static str {
        ROUTINE_NAMES.get(self.routine as usize).copied().unwrap_or("?")
    }

    /// In words, for a report.
    pub fn describe(&self) -> String {
        let mut text = self.name().to_string();
        if self.root >= 0 {
            text.push_str(&format!(" root {}", self.root));
        }
        match self.op {
            -1 => {}
            op if (op as usize) < OP_NAMES.len() => text.push_str(&format!(" {}", OP_NAMES[op as usize])),
            op => text.push_str(&format!(" the user operation created {}th", op - 1000)),
        }
        if self.sig.len > 0 || self.sig.bytes > 0 {
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
        }
        text
    }
}

/// The outcome of the allreduce: each word's maximum and minimum over
/// the ranks.
#[derive(Clone, Copy, Debug)]
pub struct Extremes {
    pub max: Desc,
    pub min: Desc,
}

impl Extremes {
    /// From the allreduce's result (maxima of the words, then of their
    /// negations).
    pub fn from_result(out: &[i64; 2 * WORDS]) -> Extremes {
        let mut min_words = [0i64; WORDS];
        for (m, w) in min_words.iter_mut().zip(&out[WORDS..]) {
            *m = w.wrapping_neg();
        }
        Extremes {
            max: Desc::from_words(&out[..WORDS]),
            min: Desc::from_words(&min_words),
        }
    }

    /// The check that failed (`collective-kind`, `root`, `op`,
    /// `signature`), or `None` if every rank made the same call.
    pub fn mismatch(&self) -> Option<&'static str> {
        let (max, min) = (&self.max, &self.min);
        let sig_ok = if max.sig.loose {
            max.sig.bytes == min.sig.bytes
        } else {
            max.sig == min.sig
        };
        if max.routine != min.routine {
            Some("collective-kind")
        } else if max.root != min.root {
            Some("root")
        } else if max.op != min.op {
            Some("op")
        } else if !sig_ok {
            Some("signature")
        } else {
            None
        }
    }

    /// What another rank does, as far as the extremes tell it: the other
    /// extreme of the first word that differs from `mine`.
    pub fn other(&self, mine: &Desc) -> String {
        let pick = |a: i64, b: i64, m: i64| if a != m { a } else { b };
        let (max, min) = (&self.max, &self.min);
        if max.routine != min.routine {
            let r = pick(max.routine, min.routine, mine.routine);
            return ROUTINE_NAMES.get(r as usize).copied().unwrap_or("?").to_string();
        }
        if max.root != min.root {
            return format!("{} root {}", mine.name(), pick(max.root, min.root, mine.root));
        }
        if max.op != min.op {
            let other = Desc {
                op: pick(max.op, min.op, mine.op),
                sig: Sig::default(),
                root: -1,
                ..*mine
            };
            return other.describe();
        }
        let other = if max.sig == mine.sig { min } else { max };
        format!(
            "{} with {} elements ({} bytes) or another type signature",
            mine.name(),
            other.sig.len,
            other.sig.bytes
        )
    }
}

/// An operation's name across ranks: a predefined one's index, a user
/// one's creation number (+1000).
fn op_id(op: MPI_Op) -> i64 {
    if let Some(i) = mpi::predefined_ops().iter().position(|o| o.bits() == op.bits()) {
        return i as i64;
    }
    registry::lock()
        .ops
        .get(&key(op))
        .map_or(999, |o| 1000 + o.seq as i64)
}
