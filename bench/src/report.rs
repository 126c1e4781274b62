//! Turning the rounds into the paper's overhead model (section 5.1:
//! T = α + β·N), the table on stdout and the CSV file.

use crate::run::Setup;
use crate::stats::{median, slope};
use anyhow::{Context as _, Result};
use std::io::Write as _;
use std::path::Path;

/// The bar for α: libpnmpi with no module may cost at most this much
/// more than native MPI, in ns per call.
pub const ALPHA_BAR_NS: f64 = 1.0;
/// The bar for β: each added layer may cost at most this much, in ns.
pub const BETA_BAR_NS: f64 = 5.0;

/// What the rounds measured for one setup.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub setup: Setup,
    pub rounds: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Summarizes one setup's samples (one per round); `None` without any.
    pub fn new(setup: Setup, samples: &[f64]) -> Option<Summary> {
        Some(Summary {
            setup,
            rounds: samples.len(),
            median: median(samples)?,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The overhead model's terms, each `None` when the setups measured do
/// not determine it.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Native median, the baseline every overhead is relative to.
    pub native: Option<f64>,
    /// α: libpnmpi with no module minus native.
    pub alpha: Option<f64>,
    /// The first layer's cost: 1 module minus 0 modules. It is higher than
    /// β when entering the chain costs more than going one layer down.
    pub first_layer: Option<f64>,
    /// β: the least-squares slope of the medians over layer counts >= 1.
    pub beta: Option<f64>,
    /// One module restricted to MPI_Send minus 0 modules: what a module
    /// costs on a routine it does not apply to (it should be nothing).
    pub send_only: Option<f64>,
}

impl Model {
    /// Fits the model to the medians.
    pub fn fit(rows: &[Summary]) -> Model {
        let at = |layers: usize| {
            rows.iter()
                .find(|r| r.setup == Setup::Pnmpi { layers })
                .map(|r| r.median)
        };
        let native = rows.iter().find(|r| r.setup == Setup::Native).map(|r| r.median);
        let layered: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| match r.setup {
                Setup::Pnmpi { layers } if layers >= 1 => Some((layers as f64, r.median)),
                _ => None,
            })
            .collect();
        Model {
            native,
            alpha: native.zip(at(0)).map(|(native, zero)| zero - native),
            first_layer: at(0).zip(at(1)).map(|(zero, one)| one - zero),
            beta: slope(&layered),
            send_only: rows
                .iter()
                .find(|r| r.setup == Setup::SendOnly)
                .map(|r| r.median)
                .zip(at(0))
                .map(|(restricted, zero)| restricted - zero),
        }
    }
}

/// What one bench run measured, for the table title and the CSV columns.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub benchmark: &'a str,
    pub mpi: &'a str,
    pub launch: &'a str,
    pub calls: u64,
}

/// The human report: one line per setup, then α, the first layer and β
/// against the bars.
pub fn table(ctx: &Context, rows: &[Summary], model: &Model) -> String {
    let rounds = rows.first().map_or(0, |r| r.rounds);
    let mut lines = vec![
        format!(
            "{}: {} MPI, {} calls per run, median of {rounds} interleaved rounds, launched by {}",
            ctx.benchmark, ctx.mpi, ctx.calls, ctx.launch
        ),
        format!(
            "{:<18} {:>10} {:>8} {:>8} {:>10}",
            "setup", "median ns", "min", "max", "vs native"
        ),
    ];
    for r in rows {
        let delta = model
            .native
            .map_or_else(|| "-".into(), |n| format!("{:+.2}", r.median - n));
        lines.push(format!(
            "{:<18} {:>10.2} {:>8.2} {:>8.2} {:>10}",
            r.setup.label(),
            r.median,
            r.min,
            r.max,
            delta
        ));
    }
    let verdict = |value: f64, bar: f64| if value <= bar { "within" } else { "OVER" };
    if let Some(alpha) = model.alpha {
        let v = verdict(alpha, ALPHA_BAR_NS);
        lines.push(format!(
            "alpha (0 modules - native):   {alpha:+.2} ns   ({v} the bar of {ALPHA_BAR_NS} ns)"
        ));
    }
    if let Some(first) = model.first_layer {
        lines.push(format!("first layer (1 - 0 modules):  {first:+.2} ns"));
    }
    if let Some(beta) = model.beta {
        let v = verdict(beta, BETA_BAR_NS);
        lines.push(format!(
            "beta (slope over >= 1 layer): {beta:+.2} ns per layer   ({v} the bar of {BETA_BAR_NS} ns)"
        ));
    }
    if let Some(send_only) = model.send_only {
        lines.push(format!(
            "restricted to MPI_Send (- 0 modules): {send_only:+.2} ns"
        ));
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The CSV header of [`csv`]; kept as one row per setup so that later
/// benchmarks and layer counts add rows, not columns.
const CSV_HEADER: &str = "benchmark,mpi,launch,setup,layers,rounds,calls,median_ns,min_ns,max_ns,overhead_ns";

/// The CSV text: a header and one row per setup. `layers` is empty for
/// native; `overhead_ns` is the median minus the native median (empty
/// without a native row).
pub fn csv(ctx: &Context, rows: &[Summary], model: &Model) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for r in rows {
        let fields = [
            ctx.benchmark.to_string(),
            ctx.mpi.to_string(),
            ctx.launch.to_string(),
            r.setup.name().to_string(),
            r.setup.layers().map(|n| n.to_string()).unwrap_or_default(),
            r.rounds.to_string(),
            ctx.calls.to_string(),
            format!("{:.3}", r.median),
            format!("{:.3}", r.min),
            format!("{:.3}", r.max),
            model
                .native
                .map(|n| format!("{:.3}", r.median - n))
                .unwrap_or_default(),
        ];
        let escaped: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&escaped.join(","));
        out.push('\n');
    }
    out
}

/// Quotes a field that holds a comma, quote or line break (RFC 4180).
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// Writes `text` to `path` through a temporary file in the same folder and
/// a rename, so that a reader never sees half a file and an interrupted
/// run leaves the previous one intact.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // A missing folder would otherwise fail the run after all its rounds.
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot rename the temporary file to {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Summary> {
        let setups = [
            (Setup::Native, vec![4.0, 4.2, 9.0]),
            (Setup::Pnmpi { layers: 0 }, vec![4.5, 4.7, 4.6]),
            (Setup::Pnmpi { layers: 1 }, vec![10.6, 10.6, 10.6]),
            (Setup::Pnmpi { layers: 10 }, vec![37.6, 37.0, 38.0]),
        ];
        setups.iter().map(|(s, v)| Summary::new(*s, v).unwrap()).collect()
    }

    #[test]
    fn summary_and_model_follow_the_medians() {
        let rows = rows();
        assert_eq!((rows[0].median, rows[0].min, rows[0].max), (4.2, 4.0, 9.0));
        assert_eq!(Summary::new(Setup::Native, &[]), None);
        let m = Model::fit(&rows);
        assert!((m.alpha.unwrap() - 0.4).abs() < 1e-9);
        assert!((m.first_layer.unwrap() - 6.0).abs() < 1e-9);
        // (37.6 - 10.6) / 9 layers.
        assert!((m.beta.unwrap() - 3.0).abs() < 1e-9);
        // Without 0 modules or a second layer count those terms are unknown.
        let m = Model::fit(&rows[..1]);
        assert_eq!(
            (m.alpha, m.first_layer, m.beta, m.send_only),
            (None, None, None, None)
        );
    }

    #[test]
    fn the_restricted_module_is_compared_to_zero_modules_and_kept_out_of_beta() {
        let mut rows = rows();
        rows.push(Summary::new(Setup::SendOnly, &[4.7, 4.8, 4.9]).unwrap());
        let m = Model::fit(&rows);
        assert!((m.send_only.unwrap() - 0.2).abs() < 1e-9);
        assert!((m.beta.unwrap() - 3.0).abs() < 1e-9);
        assert!(table(&ctx(), &rows, &m).contains("restricted to MPI_Send (- 0 modules): +0.20 ns"));
    }

    fn ctx() -> Context<'static> {
        Context {
            benchmark: "comm_rank",
            mpi: "openmpi",
            launch: "mpirun",
            calls: 1000,
        }
    }

    #[test]
    fn csv_has_one_row_per_setup() {
        let rows = rows();
        let text = csv(&ctx(), &rows, &Model::fit(&rows));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(
            lines[1],
            "comm_rank,openmpi,mpirun,native,,3,1000,4.200,4.000,9.000,0.000"
        );
        assert_eq!(
            lines[4],
            "comm_rank,openmpi,mpirun,pnmpi,10,3,1000,37.600,37.000,38.000,33.400"
        );
        assert_eq!(lines.len(), 5);
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn csv_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old contents that are longer than the new ones\n").unwrap();
        write_atomically(&path, "a,b\n1,2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Missing folders are made.
        let deep = dir.path().join("a/b/out.csv");
        write_atomically(&deep, "x\n").unwrap();
        assert_eq!(std::fs::read_to_string(&deep).unwrap(), "x\n");
    }

    #[test]
    fn table_flags_what_is_over_the_bar() {
        let rows = rows();
        let mut model = Model::fit(&rows);
        let text = table(&ctx(), &rows, &model);
        assert!(text.contains("pnmpi, 10 modules"), "{text}");
        assert!(text.contains("+0.40 ns   (within the bar of 1 ns)"), "{text}");
        model.beta = Some(7.0);
        let text = table(&ctx(), &rows, &model);
        assert!(
            text.contains("+7.00 ns per layer   (OVER the bar of 5 ns)"),
            "{text}"
        );
    }
}
