//! What the engine replays: per actor (one thread of one rank), a stream
//! of [`Op`]s, each a CPU burst followed by one MPI call reduced to what
//! timing needs. Readers turn our traces ([`trace`]) and SimGrid's
//! time-independent traces ([`simgrid`]) into ops, one op at a time, so a
//! replay never holds a whole trace.

pub mod events;
pub mod locks;
pub mod ops;
pub mod simgrid;
pub mod stream;
pub mod synth;
pub mod trace;

pub use ops::{
    fence_comm, fence_window, pscw_comm, Actor, Completion, Measured, Op, OpKind, OpSource, ReqId, RmaAct,
    VCounts, NO_SITE,
};

/// Opens a trace for replay, whatever its form: a tracer output folder
/// (its rank files streamed and merged on the fly), a merged `.pnt` file
/// (streamed), an OTF2 archive (its `.otf2` anchor file or the folder
/// holding `traces.otf2`; Score-P's included, read through libotf2), or a
/// SimGrid time-independent index (detected from the content, not the
/// name). `flops_per_ns` converts SimGrid's
/// `compute` actions.
pub fn open(path: &std::path::Path, flops_per_ns: f64) -> Result<Box<dyn OpSource>, crate::SimError> {
    Ok(opened(path, flops_per_ns, false)?.0)
}

/// [`open`], keeping each op's call site ([`Op::site`]), and the trace's
/// site table as its sites print (file:line and function): for the
/// reports by call site. A SimGrid trace records none.
pub fn open_with_sites(
    path: &std::path::Path,
    flops_per_ns: f64,
) -> Result<(Box<dyn OpSource>, Vec<String>), crate::SimError> {
    opened(path, flops_per_ns, true)
}

/// [`open`], with the site table if `sites` (else the merged reader skips
/// decoding sites: the engine does not use them, and not decoding them
/// spares the reader a value per event and its history a field).
fn opened(
    path: &std::path::Path,
    flops_per_ns: f64,
    sites: bool,
) -> Result<(Box<dyn OpSource>, Vec<String>), crate::SimError> {
    use crate::SimError;
    use pnmpi_otf2::Opened;
    /// Its streams' ops; `again` another reader of the same trace, for
    /// the lock order when the trace has locks to order.
    fn ops<R: pnmpi_trace::source::StreamedTrace + 'static>(
        reader: R,
        again: impl FnOnce() -> Result<R, SimError>,
    ) -> Result<Box<dyn OpSource>, SimError> {
        let ops = trace::TraceOps::new(stream::StreamSource::new(reader));
        if !ops.needs_lock_order() {
            return Ok(Box::new(ops));
        }
        let turns = locks::scan(&mut stream::StreamSource::new(again()?)).map_err(SimError::Trace)?;
        Ok(Box::new(ops.with_lock_order(turns)))
    }
    let opened = || pnmpi_otf2::open(path).map_err(SimError::Trace);
    /// A second opening of what the first opened as `$v`.
    macro_rules! again {
        ($v:ident) => {
            || match opened()? {
                Some(Opened::$v(r)) => Ok(r),
                _ => Err(SimError::Trace(pnmpi_trace::Error::Corrupt {
                    file: path.display().to_string(),
                    offset: 0,
                    what: "the trace changed while the replay read its lock order".into(),
                })),
            }
        };
    }
    /// The site table of `t`, if `sites`.
    fn table<R: pnmpi_trace::source::StreamedTrace>(t: &R, sites: bool) -> Vec<String> {
        if sites {
            t.sites().iter().map(ToString::to_string).collect()
        } else {
            Vec::new()
        }
    }
    match opened()? {
        Some(Opened::Otf2(r)) => {
            let t = table(&r, sites);
            Ok((ops(r, again!(Otf2))?, t))
        }
        Some(Opened::Folder(r)) => {
            let t = table(&r, sites);
            Ok((ops(r, again!(Folder))?, t))
        }
        Some(Opened::Merged(mut r)) => {
            if !sites {
                r.skip_sites();
            }
            let t = table(&r, sites);
            Ok((ops(r, again!(Merged))?, t))
        }
        None => Ok((
            Box::new(simgrid::SimgridOps::open(path, flops_per_ns)?),
            Vec::new(),
        )),
    }
}
