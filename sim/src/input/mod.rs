//! What the engine replays: per actor (one thread of one rank), a stream
//! of [`Op`]s, each a CPU burst followed by one MPI call reduced to what
//! timing needs. Readers turn our traces ([`trace`]) and SimGrid's
//! time-independent traces ([`simgrid`]) into ops, one op at a time, so a
//! replay never holds a whole trace.

pub mod events;
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
    use crate::SimError;
    use pnmpi_otf2::Opened;
    fn ops<R: pnmpi_trace::source::StreamedTrace + 'static>(reader: R) -> Box<dyn OpSource> {
        Box::new(trace::TraceOps::new(stream::StreamSource::new(reader)))
    }
    Ok(match pnmpi_otf2::open(path).map_err(SimError::Trace)? {
        Some(Opened::Otf2(r)) => ops(r),
        Some(Opened::Folder(r)) => ops(r),
        Some(Opened::Merged(mut r)) => {
            // The engine does not use call sites: not decoding them spares
            // the reader a value per event and its history a field.
            r.skip_sites();
            ops(r)
        }
        None => Box::new(simgrid::SimgridOps::open(path, flops_per_ns)?),
    })
}
