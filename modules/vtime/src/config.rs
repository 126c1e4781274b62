//! The module's arguments (`argument KEY VALUE` after `module vtime`),
//! read once in `PNMPI_Init`, before MPI starts. A bad value, a bad
//! machine file or an unsupported model stops the run there, naming the
//! argument, or the machine file with its line and key: a user who asked
//! for a prediction never silently gets one for another machine.
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `machine` | a machine file (`sim/machine.example.toml`), shared with `pnmpi sim` | none |
//! | `latency`, `bandwidth` | a uniform network instead of a machine file (`5us`, `10GB/s`) | none |
//! | `eager` | with them: the eager/rendezvous threshold (`64KiB`) | 64 KiB |
//! | `model` | `simple` or `loggp`, as in `pnmpi sim replay --model` (a model whose state spans ranks needs one engine that sees every message: `--vranks`) | `simple` |
//! | `cpu_factor` | target CPU time per CPU second measured here | 1 |
//! | `report` | the JSON report rank 0 writes | `vtime-report.json` |

use pnmpi_sdk::services;
use pnmpi_sim::live::target::View;
pub use pnmpi_sim::live::target::{read, Config};
use std::sync::OnceLock;

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration, once `PNMPI_Init` has read it.
pub fn get() -> Option<&'static Config> {
    CONFIG.get()
}

/// Prints `what` and stops this process before MPI starts, as libpnmpi
/// does for its own configuration errors.
pub fn stop(what: &str) -> ! {
    use pnmpi_sdk::say::{self, Level};
    // MPI does not run yet: the rank is the launcher's, next to the name.
    let rank = launcher_var(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"])
        .map(|r| format!(" [rank {r}]"))
        .unwrap_or_default();
    let module = format!("vtime{rank}");
    // Two lines in one write.
    say::write_line(
        &(say::line(&module, Level::Error, None, what)
            + &say::line(&module, Level::Note, None, "stopping before MPI starts")),
    );
    // A moment for the launcher to read the message before it tears the
    // job down at the first failed rank.
    std::thread::sleep(std::time::Duration::from_millis(200));
    say::stop()
}

/// The first of `names` the launcher set to a number.
pub fn launcher_var(names: &[&str]) -> Option<u32> {
    names
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// The `PNMPI_Init` hook: reads the arguments, or stops the run.
pub fn load() {
    match read(services::argument, View::PerRank) {
        Ok(config) => {
            // The launcher's world size, when it says: a machine too small
            // for the run is refused before MPI starts too.
            if let Some(ranks) = launcher_var(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]) {
                if let Err(e) = config.machine(ranks).place(ranks) {
                    stop(&format!("machine {e}"));
                }
            }
            CONFIG.get_or_init(|| config);
            if let Err(e) = crate::state::publish() {
                stop(&format!(
                    "cannot publish the virtual clock to the modules above: {e}"
                ));
            }
        }
        Err(e) => stop(&e),
    }
}
