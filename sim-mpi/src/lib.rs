//! The MPI side of pnmpi's parallel simulators: under `mpirun -np K`
//! with K > 1, every process simulates a block of ranks and exchanges
//! what crosses blocks through MPI collectives on the native
//! `MPI_COMM_WORLD` (pnmpi_sim's [`Exchange`]). Used by a parallel `pnmpi
//! sim replay` and by virtual ranks spread over processes (libvranks).
//! The FFI layer of both: every unsafe block is an MPI call on buffers
//! that live across it.

use anyhow::{bail, Result};
use pnmpi_mpi_sys::{constants as c, ffi};
use pnmpi_sim::engine::parallel::Exchange;
use pnmpi_sim::kernel::window::Ballot;
use std::ffi::c_int;

/// The job's size as the launcher set it (Open MPI, MPICH's Hydra), 1
/// outside a launcher: more than 1 makes the replay parallel.
pub fn launcher_size() -> u32 {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(1)
}

/// `MPI_COMM_WORLD` of an initialised MPI.
pub struct Mpi {
    me: u32,
    procs: u32,
    /// Finalise MPI when dropped (it was initialised here).
    owned: bool,
}

fn check(code: c_int, what: &str) {
    if code != 0 {
        eprintln!("pnmpi: {what} failed (MPI error {code})");
        // SAFETY: MPI is initialised (every Mpi call comes after init).
        unsafe { ffi::PMPI_Abort(c::COMM_WORLD(), 1) };
    }
}

impl Mpi {
    /// Initialises MPI, to be finalised when this is dropped.
    pub fn init() -> Result<Mpi> {
        // SAFETY: MPI_Init accepts null argc/argv; it is called once.
        let code = unsafe { ffi::PMPI_Init(std::ptr::null_mut(), std::ptr::null_mut()) };
        if code != 0 {
            bail!("MPI_Init failed (MPI error {code})");
        }
        Ok(Mpi {
            owned: true,
            ..Mpi::attach()
        })
    }

    /// The world of an MPI its caller initialised and will finalise.
    pub fn attach() -> Mpi {
        let (mut me, mut procs) = (0, 0);
        // SAFETY: MPI is initialised; the outputs are live ints.
        unsafe {
            ffi::PMPI_Comm_rank(c::COMM_WORLD(), &mut me);
            ffi::PMPI_Comm_size(c::COMM_WORLD(), &mut procs);
        }
        Mpi {
            me: me as u32,
            procs: procs as u32,
            owned: false,
        }
    }

    /// Ends every process of the job with exit code `code`: for an error
    /// met by some processes only, which would leave the others waiting
    /// in their next collective.
    pub fn abort(&self, code: u8) -> ! {
        // A moment first: a launcher that tears the job down at the first
        // abort (MPICH's Hydra under load) may otherwise drop what the
        // processes wrote before it read their pipes.
        std::thread::sleep(std::time::Duration::from_millis(200));
        // SAFETY: MPI is initialised (an Mpi exists only after init).
        unsafe { ffi::PMPI_Abort(c::COMM_WORLD(), c_int::from(code)) };
        std::process::exit(i32::from(code))
    }

    /// Waits until every process has called this, testing a barrier
    /// every millisecond in between: a process with nothing to do while
    /// another works (a replay one engine runs) leaves its core to it,
    /// where a blocking collective, or MPICH's `MPI_Finalize`, would spin.
    pub fn wait_quietly(&mut self) {
        let mut req = c::REQUEST_NULL();
        // SAFETY: MPI is initialised; `req` is a live request handle.
        check(
            unsafe { ffi::PMPI_Ibarrier(c::COMM_WORLD(), &mut req) },
            "MPI_Ibarrier",
        );
        loop {
            let mut done = 0;
            // SAFETY: `req` is the barrier's request; the status is ignored.
            check(
                unsafe { ffi::PMPI_Test(&mut req, &mut done, c::STATUS_IGNORE()) },
                "MPI_Test",
            );
            if done != 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The largest of every process's `v`, at all.
    pub fn max(&mut self, v: u64) -> u64 {
        let mut out = 0u64;
        // SAFETY: one u64 in, one out, both live across the call.
        let code = unsafe {
            ffi::PMPI_Allreduce(
                (&v as *const u64).cast(),
                (&mut out as *mut u64).cast(),
                1,
                c::UINT64_T(),
                c::MAX(),
                c::COMM_WORLD(),
            )
        };
        check(code, "MPI_Allreduce");
        out
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: MPI was initialised by Mpi::init and is finalised once.
            unsafe { ffi::PMPI_Finalize() };
        }
    }
}

/// Stops the job: `bytes` bytes in one exchange do not fit MPI's `int`
/// counts and displacements (`what`).
fn too_large(bytes: i64, what: &str) -> ! {
    eprintln!("pnmpi: {bytes} bytes in one exchange: more than MPI's int {what}");
    // SAFETY: MPI is initialised (every Mpi call comes after init).
    unsafe { ffi::PMPI_Abort(c::COMM_WORLD(), 1) };
    std::process::exit(1)
}

/// A byte count as MPI's `int`, or the run stops: no window or result is
/// 2 GiB.
fn count(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or_else(|_| too_large(n as i64, "counts"))
}

/// `v` with room for at least a byte: an empty vector's pointer is
/// dangling (`0x1`), which Open MPI reads as `MPI_IN_PLACE`.
fn backed(mut v: Vec<u8>) -> Vec<u8> {
    v.reserve(1);
    v
}

/// Where each of the blocks of `counts` bytes, laid end to end, starts:
/// summed in 64 bits, and `Err` with the first offset that MPI's `int`
/// displacements cannot hold (the blocks of one exchange may each fit
/// in an `int` but not their sum).
fn displacements(counts: &[c_int]) -> Result<Vec<c_int>, i64> {
    let mut at = 0i64;
    counts
        .iter()
        .map(|&n| {
            let d = c_int::try_from(at).map_err(|_| at)?;
            at += i64::from(n);
            Ok(d)
        })
        .collect()
}

/// [`displacements`], or the run stops.
fn checked_displacements(counts: &[c_int]) -> Vec<c_int> {
    displacements(counts).unwrap_or_else(|at| too_large(at, "displacements"))
}

impl Exchange for Mpi {
    fn me(&self) -> u32 {
        self.me
    }

    fn procs(&self) -> u32 {
        self.procs
    }

    fn alltoallv(&mut self, out: &[Vec<u8>]) -> Vec<u8> {
        let send: Vec<c_int> = out.iter().map(|v| count(v.len())).collect();
        let mut recv = vec![0 as c_int; out.len()];
        // SAFETY: one int to and from each process, in live vectors.
        let code = unsafe {
            ffi::PMPI_Alltoall(
                send.as_ptr().cast(),
                1,
                c::INT(),
                recv.as_mut_ptr().cast(),
                1,
                c::INT(),
                c::COMM_WORLD(),
            )
        };
        check(code, "MPI_Alltoall");
        let data = backed(out.concat());
        let (sd, rd) = (checked_displacements(&send), checked_displacements(&recv));
        let mut got = backed(vec![0u8; recv.iter().map(|&n| n as usize).sum()]);
        // SAFETY: counts and displacements describe `data` and `got`,
        // which live across the call.
        let code = unsafe {
            ffi::PMPI_Alltoallv(
                data.as_ptr().cast(),
                send.as_ptr(),
                sd.as_ptr(),
                c::BYTE(),
                got.as_mut_ptr().cast(),
                recv.as_ptr(),
                rd.as_ptr(),
                c::BYTE(),
                c::COMM_WORLD(),
            )
        };
        check(code, "MPI_Alltoallv");
        got
    }

    fn min_words(&mut self, v: Ballot) -> Ballot {
        let mut out: Ballot = [0; 3];
        // SAFETY: three i64 in, three out, both live across the call.
        let code = unsafe {
            ffi::PMPI_Allreduce(
                v.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                3,
                c::LONG_LONG(),
                c::MIN(),
                c::COMM_WORLD(),
            )
        };
        check(code, "MPI_Allreduce");
        out
    }

    fn gather(&mut self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let n = count(bytes.len());
        let mut counts = vec![0 as c_int; self.procs as usize];
        // SAFETY: one int from each process into a live vector at the root.
        let code = unsafe {
            ffi::PMPI_Gather(
                (&n as *const c_int).cast(),
                1,
                c::INT(),
                counts.as_mut_ptr().cast(),
                1,
                c::INT(),
                0,
                c::COMM_WORLD(),
            )
        };
        check(code, "MPI_Gather");
        let displs = checked_displacements(&counts);
        let mut all = backed(vec![
            0u8;
            if self.me == 0 {
                counts.iter().map(|&n| n as usize).sum()
            } else {
                0
            }
        ]);
        let bytes = backed(bytes.to_vec());
        // SAFETY: the root's counts and displacements describe `all`; the
        // others send `bytes`; all live across the call.
        let code = unsafe {
            ffi::PMPI_Gatherv(
                bytes.as_ptr().cast(),
                n,
                c::BYTE(),
                all.as_mut_ptr().cast(),
                counts.as_ptr(),
                displs.as_ptr(),
                c::BYTE(),
                0,
                c::COMM_WORLD(),
            )
        };
        check(code, "MPI_Gatherv");
        (self.me == 0).then(|| {
            counts
                .iter()
                .zip(&displs)
                .map(|(&n, &d)| all[d as usize..d as usize + n as usize].to_vec())
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displacements_are_summed_in_64_bits_and_refused_above_an_int() {
        assert_eq!(displacements(&[3, 0, 5, 2]), Ok(vec![0, 3, 3, 8]));
        // The last block may start at the largest int.
        assert_eq!(displacements(&[c_int::MAX, 7]), Ok(vec![0, c_int::MAX]));
        // Two 1 GiB blocks put the third at 2^31: it wrapped to -2^31.
        let gib = 1 << 30;
        assert_eq!(displacements(&[gib, gib, 5]), Err(1 << 31));
        assert_eq!(
            displacements(&[c_int::MAX, c_int::MAX, c_int::MAX]),
            Err(2 * i64::from(c_int::MAX))
        );
    }
}
