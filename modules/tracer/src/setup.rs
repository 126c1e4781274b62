//! The tracer's own work at `MPI_Init` and `MPI_Finalize`: its
//! configuration, the output folder, the rank file's header, and the clock
//! offset measurements against rank 0. Its traffic goes over its own
//! duplicate of `MPI_COMM_WORLD`, straight to the MPI library (`PMPI_`,
//! past every module below: a profiler there must not count the tracer's
//! clock alignment as the application's), so it can never match the
//! application's messages and is never traced. Under the vtime clock no
//! offsets are measured.

use crate::clock;
use crate::record::{self, Run};
use pnmpi_mpi_sys::constants as mpi;
use pnmpi_mpi_sys::ffi::{
    MPI_Comm, PMPI_Bcast, PMPI_Comm_dup, PMPI_Comm_free, PMPI_Comm_rank, PMPI_Comm_size, PMPI_Recv, PMPI_Send,
};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::say;
use pnmpi_trace::rank::{Clock, ClockPair, MpiValues, RankHeader, Sync};
use std::ffi::{c_char, c_void, CStr, CString};
use std::os::raw::c_int;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

extern "C" {
    /// libpnmpi's service: this module's `argument KEY VALUE` line, or null.
    fn PNMPI_Service_GetArgumentSelf(key: *const c_char) -> *const c_char;
}

/// Default per-thread buffer, about 25,000 calls: small enough to stay in
/// a core's L2 cache, where encoding an event is a few stores that hit.
/// With 4 MiB each refill of the buffer missed the cache on every line
/// and cost a ping-pong (MPICH, 1 us a round) 70 ns a round, against 16
/// with 256 KiB; 128 KiB and 512 KiB measured the same as 256 KiB within
/// the noise. A write-out costs a few tens of us.
const DEFAULT_BUFFER: usize = 256 << 10;
/// Round trips per clock measurement; the shortest one counts.
const SYNC_ROUNDS: usize = 10;
/// Longest output folder path rank 0 can hand to the others.
const PATH_MAX: usize = 4096;

/// The tracer's duplicate of `MPI_COMM_WORLD`, as handle bits.
static OWN: AtomicU64 = AtomicU64::new(0);

/// Whether this rank took part in the clock measurement at `MPI_Init`.
static SYNCED: AtomicBool = AtomicBool::new(false);

fn own() -> MPI_Comm {
    MPI_Comm::from_bits(OWN.load(Relaxed))
}

/// A configuration value: the module argument `key`, else the
/// environment variable `env`.
fn setting(key: &str, env: &str) -> Option<String> {
    let key = CString::new(key).ok()?;
    // SAFETY: `key` is NUL-terminated; libpnmpi returns null or a string it
    // keeps for the life of the process, copied at once.
    let value = unsafe { PNMPI_Service_GetArgumentSelf(key.as_ptr()) };
    if !value.is_null() {
        // SAFETY: non-null: a NUL-terminated string (see above).
        return Some(unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned());
    }
    std::env::var(env).ok().filter(|v| !v.is_empty())
}

/// "4M", "512k", "1048576" as bytes.
fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mult)
}

/// Rank 0 decides the folder and run id, everyone else learns them. An
/// error here (rank 0 has no folder) is the same on every rank.
fn agree_on_output(rank: c_int) -> Result<(PathBuf, u64), String> {
    let mut path = [0u8; PATH_MAX];
    let mut run_id = 0u64;
    if rank == 0 {
        let dir = match setting("outdir", "PNMPI_TRACE_DIR") {
            Some(d) => std::fs::create_dir_all(&d).map(|()| PathBuf::from(d)),
            None => pnmpi_trace::rank_writer::fresh_folder(),
        };
        match dir {
            Ok(d) => {
                let bytes = d.as_os_str().as_encoded_bytes();
                if bytes.len() < PATH_MAX {
                    path[..bytes.len()].copy_from_slice(bytes);
                } else {
                    say::warn(
                        "tracer",
                        format_args!("output folder path too long: {}", d.display()),
                    );
                }
            }
            Err(e) => say::warn("tracer", format_args!("cannot create the output folder: {e}")),
        }
        run_id = clock::mono_ns() ^ (u64::from(std::process::id()) << 40);
    }
    // SAFETY: both buffers are local and as large as the counts; every
    // rank calls the same broadcasts on the tracer's own communicator.
    unsafe {
        PMPI_Bcast(path.as_mut_ptr().cast(), PATH_MAX as c_int, mpi::BYTE(), 0, own());
        PMPI_Bcast((&raw mut run_id).cast(), 1, mpi::UINT64_T(), 0, own());
    }
    let len = path.iter().position(|&b| b == 0).unwrap_or(0);
    if len == 0 {
        return Err("rank 0 has no output folder".into());
    }
    Ok((
        PathBuf::from(String::from_utf8_lossy(&path[..len]).into_owned()),
        run_id,
    ))
}

fn host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer and its length are valid; gethostname NUL-terminates
    // within them on success.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let len = buf.iter().position(|&b| b == 0).unwrap_or(0);
    if ok {
        String::from_utf8_lossy(&buf[..len]).into_owned()
    } else {
        String::new()
    }
}

/// Sets tracing up after the MPI library's `MPI_Init` returned: `start`
/// is both clocks at the wrapper's entry.
pub fn init(start: ClockPair, clock_kind: Clock) {
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    let mut own_comm = mpi::COMM_NULL();
    // SAFETY: MPI is initialised; outputs are local.
    unsafe {
        PMPI_Comm_rank(mpi::COMM_WORLD(), &mut rank);
        PMPI_Comm_size(mpi::COMM_WORLD(), &mut size);
        PMPI_Comm_dup(mpi::COMM_WORLD(), &mut own_comm);
    }
    OWN.store(own_comm.bits(), Relaxed);
    let buffer = match setting("buffer", "PNMPI_TRACE_BUFFER") {
        Some(text) => parse_size(&text).filter(|&n| n >= 4096).unwrap_or_else(|| {
            if rank == 0 {
                say::warn(
                    "tracer",
                    format_args!(
                        "buffer size '{text}' is not a size of 4k or more; using {}k",
                        DEFAULT_BUFFER >> 10
                    ),
                );
            }
            DEFAULT_BUFFER
        }),
        None => DEFAULT_BUFFER,
    };
    let sites = match setting("sites", "PNMPI_TRACE_SITES").as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => {
            if rank == 0 {
                say::warn(
                    "tracer",
                    format_args!("sites '{other}' is neither 'on' nor 'off'; recording call sites"),
                );
            }
            true
        }
    };
    let (dir, run_id) = match agree_on_output(rank) {
        Ok(x) => x,
        Err(e) => {
            say::warn("tracer", format_args!("{e}; not tracing"));
            return;
        }
    };
    // Every rank measures, whatever happens to its own file below: rank 0
    // waits for each of them.
    let sync = measure(rank, size, 0);
    SYNCED.store(true, Relaxed);
    let header = RankHeader {
        rank: rank as u32,
        world_size: size as u32,
        run_id,
        clock: clock_kind,
        start,
        pid: std::process::id(),
        host: host(),
        mpi: pnmpi_mpi_sys::FLAVOR.into(),
        values: MpiValues {
            comm_world: mpi::COMM_WORLD().bits(),
            comm_self: mpi::COMM_SELF().bits(),
            comm_null: mpi::COMM_NULL().bits(),
            request_null: mpi::REQUEST_NULL().bits(),
            any_source: i64::from(mpi::ANY_SOURCE()),
            proc_null: i64::from(mpi::PROC_NULL()),
            any_tag: i64::from(mpi::ANY_TAG()),
            root: i64::from(mpi::ROOT()),
        },
        routines: pnmpi_mpi_sys::ROUTINE_NAMES.to_vec(),
    };
    // The folder may be on a node-local file system: every rank creates it.
    let created = std::fs::create_dir_all(&dir).and_then(|()| Run::create(dir, &header, buffer, sites));
    match created {
        Ok(run) => {
            run.sync(&sync);
            record::start(run, start.tick);
        }
        Err(e) => say::warn(
            "tracer",
            format_args!("cannot create its trace file: {e}; not tracing"),
        ),
    }
}

/// The clock measurement at `MPI_Finalize`, on every rank that took part
/// in the first one (tracing or not, so that rank 0 never waits for a
/// rank that stopped); frees the tracer's communicator.
pub fn finalize() {
    if !SYNCED.swap(false, Relaxed) {
        return;
    }
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: MPI is still initialised; outputs are local.
    unsafe {
        PMPI_Comm_rank(mpi::COMM_WORLD(), &mut rank);
        PMPI_Comm_size(mpi::COMM_WORLD(), &mut size);
    }
    let sync = measure(rank, size, 1);
    if let Some(run) = record::run() {
        run.sync(&sync);
    }
    let mut own_comm = own();
    // SAFETY: the tracer's own communicator, freed once.
    unsafe { PMPI_Comm_free(&mut own_comm) };
}

/// Measures this rank's clock offset to rank 0 (none under the vtime
/// clock, see [`clock::is_virtual`]): rank 0 answers
/// `SYNC_ROUNDS` pings from each rank in turn with its clock; each rank
/// keeps the answer of its shortest round trip, taken to have been read
/// halfway through it.
fn measure(rank: c_int, size: c_int, phase: u8) -> Sync {
    const TAG: c_int = 0x7e57;
    let comm = own();
    let u64t = mpi::UINT64_T();
    let mut best = Sync {
        phase,
        pair: clock::pair(),
        offset: 0,
        rtt: 0,
    };
    if clock::is_virtual() {
        return best;
    }
    if rank == 0 {
        for peer in 1..size {
            for _ in 0..SYNC_ROUNDS {
                let mut ping = 0u64;
                // SAFETY: one local u64 each way, on the tracer's communicator.
                unsafe {
                    PMPI_Recv(
                        (&raw mut ping).cast(),
                        1,
                        u64t,
                        peer,
                        TAG,
                        comm,
                        mpi::STATUS_IGNORE(),
                    );
                    let now = clock::mono_ns();
                    PMPI_Send((&raw const now).cast::<c_void>(), 1, u64t, peer, TAG, comm);
                }
            }
        }
        return best;
    }
    best.rtt = u64::MAX;
    for _ in 0..SYNC_ROUNDS {
        let t1 = clock::mono_ns();
        let mut remote = 0u64;
        // SAFETY: as above.
        unsafe {
            PMPI_Send((&raw const t1).cast::<c_void>(), 1, u64t, 0, TAG, comm);
            PMPI_Recv(
                (&raw mut remote).cast(),
                1,
                u64t,
                0,
                TAG,
                comm,
                mpi::STATUS_IGNORE(),
            );
        }
        let pair = clock::pair();
        let rtt = pair.ns.saturating_sub(t1);
        if rtt < best.rtt {
            let mid = t1 + rtt / 2;
            best = Sync {
                phase,
                pair,
                offset: remote as i64 - mid as i64,
                rtt,
            };
        }
    }
    best
}
