//! What a one-sided operation does at its target, described so that it
//! can cross processes: the target's side as byte runs from the target
//! address and the predefined type an accumulate combines (an index
//! every process reads the same, where handles differ), the origin's data
//! packed. The API layer applies an operation to a target of its own
//! process at once; one to a target in another process travels as a
//! [`Record`] and is applied there (`crate::dist`), its fetched data sent
//! back. Locks of a window whose ranks run in several processes travel as
//! [`LockEvent`]s, which every process of the window applies to its copy
//! of the window's locks in one order (`crate::windows`).

use crate::dtype::{basic, layout, pack, runs, unpack};
use pnmpi_mpi_sys::{constants as c, ffi, Handle};
use pnmpi_sim::units::Ns;
use pnmpi_trace::rma::DataOp;
use serde::{Deserialize, Serialize};
use std::ffi::{c_int, c_void};

/// The data operations, by their code in a [`Record`].
const DATA_OPS: [DataOp; 6] = [
    DataOp::Put,
    DataOp::Get,
    DataOp::Accumulate,
    DataOp::GetAccumulate,
    DataOp::FetchAndOp,
    DataOp::CompareAndSwap,
];

/// The indexes of `MPI_SUM`, `MPI_REPLACE` (a put) and `MPI_NO_OP` (a
/// fetch only) among the predefined operations.
const SUM: u8 = 2;
const REPLACE: u8 = 12;
const NO_OP: u8 = 13;

/// `op`'s code in a [`Record`].
pub fn op_code(op: DataOp) -> u8 {
    DATA_OPS
        .iter()
        .position(|&o| o == op)
        .expect("every data operation") as u8
}

/// The index of the predefined reduction `op` (MPI forbids others in
/// one-sided accumulates).
pub fn reduction_code(op: ffi::MPI_Op) -> Option<u8> {
    c::predefined_ops()
        .iter()
        .position(|o| o.bits() == op.bits())
        .map(|i| i as u8)
}

/// Where an operation's data lies at its target.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Shape {
    /// Byte runs `(offset, length)` from the target address, in the
    /// target datatype's order.
    pub runs: Vec<(i64, u64)>,
    /// The predefined type an accumulate combines, as an index of
    /// `predefined_types` (none for a put, a get, a compare-and-swap).
    pub basic: Option<u16>,
}

impl Shape {
    /// The shape of `count` elements of `dt`, and its basic type when the
    /// operation `combining`.
    pub fn of(count: c_int, dt: ffi::MPI_Datatype, combining: bool) -> Result<Shape, String> {
        let basic = if combining {
            let b = basic(dt).ok_or("the target datatype is not built of one predefined type")?;
            let i = c::predefined_types().iter().position(|t| t.bits() == b.bits());
            Some(i.ok_or("the target datatype's basic type cannot be combined one-sidedly")? as u16)
        } else {
            None
        };
        Ok(Shape {
            runs: runs(count, dt),
            basic,
        })
    }

    /// The bytes from the target address the runs reach, or why they
    /// reach below it.
    pub fn span(&self) -> Result<usize, String> {
        if self.runs.iter().any(|&(o, _)| o < 0) {
            return Err("the target datatype reaches below its displacement".into());
        }
        Ok(self
            .runs
            .iter()
            .map(|&(o, l)| o as usize + l as usize)
            .max()
            .unwrap_or(0))
    }
}

/// What an origin sends: its data packed, and a compare-and-swap's
/// compare value.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Sent {
    pub data: Vec<u8>,
    pub compare: Vec<u8>,
}

/// The bytes at `at`'s runs, in order.
///
/// # Safety
/// Every run lies in memory the caller may read.
unsafe fn gather(at: *const u8, shape: &Shape) -> Vec<u8> {
    let mut out = Vec::new();
    for &(o, l) in &shape.runs {
        // SAFETY: the caller's memory holds the run.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(at.offset(o as isize), l as usize) });
    }
    out
}

/// Writes `data` into `at`'s runs, in order (as much as both hold).
///
/// # Safety
/// Every run lies in memory the caller may write.
unsafe fn scatter(data: &[u8], at: *mut u8, shape: &Shape) {
    let mut from = 0;
    for &(o, l) in &shape.runs {
        let n = (l as usize).min(data.len() - from);
        // SAFETY: the caller's memory holds the run; `data` holds `n` more.
        unsafe { std::ptr::copy_nonoverlapping(data[from..].as_ptr(), at.offset(o as isize), n) };
        from += n;
    }
}

/// `target = origin op target`, elementwise over packed data of the
/// predefined type `basic` (laid out in memory for MPI's reduction, then
/// packed back: a pair type's packed form has no padding).
fn combine(origin: &[u8], target: &mut Vec<u8>, basic: ffi::MPI_Datatype, op: ffi::MPI_Op) {
    let l = layout(basic);
    let n = target.len().checked_div(l.size).unwrap_or(0);
    if n == 0 || origin.len() < target.len() {
        return;
    }
    let units = (n * l.extent).div_ceil(16).max(1);
    let (mut a, mut b) = (vec![0u128; units], vec![0u128; units]);
    let (pa, pb) = (a.as_mut_ptr().cast::<c_void>(), b.as_mut_ptr().cast::<c_void>());
    // SAFETY: both buffers hold `n` elements of `basic` in memory layout
    // (16-byte aligned), the data `n` packed ones.
    unsafe {
        let _ = unpack(&origin[..target.len()], pa, n as c_int, basic);
        let _ = unpack(target, pb, n as c_int, basic);
        ffi::PMPI_Reduce_local(pa, pb, n as c_int, basic, op);
        *target = pack(pb, n as c_int, basic);
    }
}

/// Applies operation `op` (reduction `acc`, an index of the predefined
/// operations) of `sent` to the target memory at `at` laid out as
/// `shape`: returns what it fetched (nothing for a put or an
/// accumulate).
///
/// # Safety
/// Every run of `shape` from `at` lies in the target's window memory.
pub unsafe fn apply(op: DataOp, acc: Option<u8>, sent: &Sent, at: *mut u8, shape: &Shape) -> Vec<u8> {
    let reads = op != DataOp::Put && !(op == DataOp::Accumulate && acc == Some(REPLACE));
    let before = if reads {
        // SAFETY: the caller's target memory.
        unsafe { gather(at, shape) }
    } else {
        Vec::new()
    };
    match op {
        DataOp::Get => {}
        // SAFETY: as above.
        DataOp::Put => unsafe { scatter(&sent.data, at, shape) },
        DataOp::CompareAndSwap => {
            if before == sent.compare {
                // SAFETY: as above.
                unsafe { scatter(&sent.data, at, shape) };
            }
        }
        DataOp::Accumulate | DataOp::GetAccumulate | DataOp::FetchAndOp => {
            let ops = c::predefined_ops();
            match acc.unwrap_or(SUM) {
                NO_OP => {}
                // SAFETY: as above.
                REPLACE => unsafe { scatter(&sent.data, at, shape) },
                i => {
                    let basic = shape
                        .basic
                        .map_or(c::BYTE(), |b| c::predefined_types()[b as usize]);
                    let mut after = before.clone();
                    combine(&sent.data, &mut after, basic, ops[i as usize]);
                    // SAFETY: as above.
                    unsafe { scatter(&after, at, shape) };
                }
            }
        }
    }
    match op {
        DataOp::Put | DataOp::Accumulate => Vec::new(),
        _ => before,
    }
}

/// An operation of a rank of another process to a rank here.
#[derive(Debug, Serialize, Deserialize)]
pub struct Op {
    /// The window, by its communicator's global id.
    pub win: u64,
    /// The origin (world rank) and the target (window rank).
    pub origin: u32,
    pub target: u32,
    /// The target displacement (a dynamic window's: an address).
    pub disp: i64,
    /// [`op_code`], and the reduction's index.
    pub op: u8,
    pub acc: Option<u8>,
    pub shape: Shape,
    pub sent: Sent,
    /// For a fetching operation: the origin's number for what comes back.
    pub token: Option<u64>,
}

impl Op {
    /// The data operation.
    pub fn data_op(&self) -> DataOp {
        DATA_OPS[self.op as usize % DATA_OPS.len()]
    }
}

/// A lock asked for or released on a window whose ranks run in several
/// processes, at virtual time `at`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct LockEvent {
    /// The window, by its communicator's global id.
    pub win: u64,
    pub at: Ns,
    /// The origin (world rank), its number for the event (its events'
    /// order), and the target (window rank).
    pub origin: u32,
    pub seq: u64,
    pub target: u32,
    /// `Some(exclusive)`: asked for; `None`: released.
    pub ask: Option<bool>,
}

/// What crosses processes for one-sided communication.
#[derive(Debug, Serialize, Deserialize)]
pub enum Record {
    /// An operation to a rank of the receiving process.
    Op(Op),
    /// What an operation fetched, back to its origin's process.
    Fetched { token: u64, data: Vec<u8> },
    /// A lock event, for every process of the window.
    Lock(LockEvent),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(runs: &[(i64, u64)]) -> Shape {
        Shape {
            runs: runs.to_vec(),
            basic: None,
        }
    }

    #[test]
    fn a_put_and_a_get_move_the_runs_in_order_and_leave_the_gaps() {
        let mut target = [0u8; 12];
        let strided = shape(&[(1, 2), (6, 3), (10, 1)]);
        let sent = Sent {
            data: vec![1, 2, 3, 4, 5, 6],
            compare: Vec::new(),
        };
        // SAFETY: every run lies inside `target`.
        let fetched = unsafe { apply(DataOp::Put, None, &sent, target.as_mut_ptr(), &strided) };
        assert!(fetched.is_empty(), "a put fetches nothing");
        assert_eq!(target, [0, 1, 2, 0, 0, 0, 3, 4, 5, 0, 6, 0]);
        // SAFETY: as above.
        let got = unsafe { apply(DataOp::Get, None, &Sent::default(), target.as_mut_ptr(), &strided) };
        assert_eq!(
            got,
            [1, 2, 3, 4, 5, 6],
            "a get reads the runs in the type's order"
        );
    }

    #[test]
    fn a_compare_and_swap_writes_only_when_the_target_held_the_compare_value() {
        let mut target = [7u8; 4];
        let whole = shape(&[(0, 4)]);
        let swap = |compare: Vec<u8>, target: &mut [u8; 4]| {
            let sent = Sent {
                data: vec![9; 4],
                compare,
            };
            // SAFETY: the run lies inside `target`.
            unsafe { apply(DataOp::CompareAndSwap, None, &sent, target.as_mut_ptr(), &whole) }
        };
        assert_eq!(swap(vec![1; 4], &mut target), [7; 4], "fetches what was there");
        assert_eq!(target, [7; 4], "no match: unchanged");
        swap(vec![7; 4], &mut target);
        assert_eq!(target, [9; 4]);
    }

    #[test]
    fn a_shape_spans_to_its_last_byte_and_refuses_to_reach_below_its_displacement() {
        assert_eq!(shape(&[(4, 4), (0, 2)]).span(), Ok(8));
        assert_eq!(shape(&[]).span(), Ok(0));
        assert!(shape(&[(-8, 8)]).span().unwrap_err().contains("below"));
        assert_eq!(DATA_OPS[op_code(DataOp::FetchAndOp) as usize], DataOp::FetchAndOp);
    }
}
