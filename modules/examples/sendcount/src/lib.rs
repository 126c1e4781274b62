//! sendcount: counts the MPI_Send calls of each rank and the bytes they
//! send. At MPI_Finalize, rank 0 prints one line per rank and the totals,
//! tagged with the configuration's `argument label NAME`.

use pnmpi_sdk::next::{self, MpiError};
use pnmpi_sdk::{constants, services};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

/// Sends and bytes so far; atomics, as threads may send concurrently.
static SENDS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// The `label` argument, read once, before MPI starts.
static LABEL: OnceLock<String> = OnceLock::new();

pnmpi_sdk::module! {
    name: "sendcount",
    init: || {
        let label = services::argument("label").unwrap_or_default();
        LABEL.get_or_init(|| label);
    },
}

pnmpi_sdk::wrap! {
    /// Counts the send, then passes it on unchanged.
    fn MPI_Send(_buf, count, datatype, _dest, _tag, _comm) {
        // A nested call: MPI_Type_size enters its own chain below us.
        let size = next::type_size(datatype).unwrap_or(0);
        SENDS.fetch_add(1, Relaxed);
        let bytes = i64::from(count) * i64::from(size);
        BYTES.fetch_add(u64::try_from(bytes).unwrap_or(0), Relaxed);
        next!()
    }

    /// Reports while MPI still runs, then finalizes.
    fn MPI_Finalize() {
        if let Err(e) = report() {
            pnmpi_sdk::say::warn("sendcount", format_args!("no report: {e}"));
        }
        next!()
    }
}

/// Gathers every rank's counts on rank 0, which prints them.
fn report() -> Result<(), MpiError> {
    let world = constants::COMM_WORLD();
    let mine = [SENDS.load(Relaxed), BYTES.load(Relaxed)];
    let totals = next::allreduce(&mine, constants::SUM(), world)?;
    if let Some(all) = next::gather(&mine, world)? {
        let label = LABEL.get().map_or("", String::as_str);
        for (rank, counts) in all.chunks(2).enumerate() {
            println!(
                "sendcount[{label}] rank {rank}: {} sends, {} bytes",
                counts[0], counts[1]
            );
        }
        println!(
            "sendcount[{label}] total: {} sends, {} bytes",
            totals[0], totals[1]
        );
    }
    Ok(())
}
