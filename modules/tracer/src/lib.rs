//! The `tracer` module: records every MPI call of every rank, PSINS-style,
//! into compact per-rank files that `pnmpi trace` merges, summarises and
//! exports (Chrome/Perfetto, SimGrid).
//!
//! For each call it records the routine, its start and duration and so the
//! CPU burst before it, and for the calls that matter to replay and
//! analysis their arguments: peer, tag, communicator, bytes, root, the
//! requests created and completed (with the status of wildcard receives),
//! and the members of each communicator created. It wraps every routine
//! of the MPI's table (`for_each_routine!`); the arguments of
//! point-to-point, collective, request, communicator and one-sided
//! routines are read by per-shape wrappers chosen by routine name below
//! (the one-sided ones in [`rma`]).
//!
//! Configuration (`argument KEY VALUE` lines, else environment variables):
//! `outdir` / `PNMPI_TRACE_DIR` (default: a fresh `pnmpi-trace-<UTC time>`
//! in the working folder), `buffer` / `PNMPI_TRACE_BUFFER` (bytes per
//! thread, `256k` by default; a full buffer is written out whole),
//! `PNMPI_TRACE_CLOCK=tsc|monotonic|vtime` to force the clock (`vtime`:
//! the virtual clock of the `vtime` module below the tracer).

mod clock;
mod extract;
mod matched;
mod output;
mod record;
#[macro_use]
mod rma;
mod setup;
mod sites;

use extract::bytes;
use pnmpi_mpi_sys::constants as mpi;
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::say;
use pnmpi_trace::counts::PeerBytesOf;
use pnmpi_trace::rank::{CollCall, P2p, P2pEnd, RawDone, RawEvent, RawNewComm, SiteCode};
use std::ffi::c_char;

/// The module's name, for libpnmpi's messages (`PNMPI_ModuleName`).
#[repr(transparent)]
pub struct ModuleName(*const c_char);

// SAFETY: the pointer is to a string literal, immutable for the life of
// the program.
unsafe impl Sync for ModuleName {}

/// Read by libpnmpi at load time.
#[no_mangle]
pub static PNMPI_ModuleName: ModuleName = ModuleName(c"tracer".as_ptr());

// Called for MPI_Wtime and MPI_Wtick: clock reads are traced (the analysis
// folds them into the compute around them).
pnmpi_sdk::wraps_clock!();

/// libpnmpi's exit hook: a rank that never reached `MPI_Finalize` (it
/// exited early, or another rank aborted) still writes what it buffered,
/// as an unfinished `.part` file that the merge accepts.
#[no_mangle]
pub extern "C" fn PNMPI_Fini() {
    if let Some(run) = record::run() {
        if record::tracing() {
            record::finish(false);
            say::warn(
                "tracer",
                format_args!(
                    "exited without MPI_Finalize; its partial trace is in {}",
                    run.dir.display()
                ),
            );
        }
    }
}

/// The exported `MPI_X` with `$body`, and the `XMPI_X` import it calls
/// down with: the frame every wrapper shape below shares.
macro_rules! export {
    ($mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, $doc:expr, $body:block) => {
        extern "C" {
            fn $x($($a: $t),*) -> $r;
        }

        #[doc = $doc]
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r $body
    };
}

/// The common body of an argument-reading wrapper: `pre` runs before the
/// traced call (it may shadow arguments, e.g. to supply a status), `post`
/// after it, and records the event.
macro_rules! traced {
    (
        $id:expr, $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty,
        |$s:ident, $scr:ident, $t0:ident, $t1:ident, $rc:ident| pre { $($pre:tt)* } post $post:block
    ) => {
        export!($mpi, $x, ($($a: $t),*) -> $r, concat!("Traces `", stringify!($mpi), "` with its arguments."), {
            let $s = record::enter();
            if $s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                return unsafe { $x($($a),*) };
            }
            // SAFETY: `enter` returned this thread's stream.
            #[allow(unused_mut)]
            let mut $scr = unsafe { record::borrow($s) };
            $($pre)*
            // SAFETY: the caller's arguments (a status the caller ignores
            // possibly replaced by the tracer's own) to the next layer.
            let ($t0, $rc, $t1) = clock::timed(|| unsafe { $x($($a),*) });
            #[allow(unused_unsafe)]
            $post
            // SAFETY: `$s` is still this thread's stream.
            unsafe { record::give_back($s, $scr) };
            $rc
        });
    };
}

/// Records the event built by the post block.
macro_rules! emit {
    ($s:ident, $ev:expr) => {
        // SAFETY: `$s` came from `enter` on this thread, and the traced call
        // has returned.
        unsafe {
            let ev = $ev;
            record::event($s, record::site($s, ev.routine), &ev)
        }
    };
}

/// Reads an output argument that MPI has written.
macro_rules! out {
    ($p:expr) => {
        // SAFETY: MPI wrote this output argument; the pointer is the caller's.
        unsafe { *$p }
    };
}

fn ok(rc: i32) -> bool {
    rc == mpi::SUCCESS()
}

/// Any routine: times only; `then` runs after the call, traced or not.
macro_rules! plain {
    ($id:expr, $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty) => {
        plain!($id, $mpi, $x, ($($a: $t),*) -> $r, then {});
    };
    ($id:expr, $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, then $then:block) => {
        export!($mpi, $x, ($($a: $t),*) -> $r, concat!("Traces `", stringify!($mpi), "`."), {
            let s = record::enter();
            let rc = if s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                unsafe { $x($($a),*) }
            } else {
                // SAFETY: as above.
                let (t0, rc, t1) = clock::timed(|| unsafe { $x($($a),*) });
                // SAFETY: `s` came from `enter` on this thread; the call returned.
                unsafe { record::plain(s, $id, t0, t1) };
                rc
            };
            $then
            rc
        });
    };
}

/// Sends, and receives that create a request: (buf, count, type, peer, tag, comm[, request]).
/// The point-to-point path: no event struct, no scratch space.
macro_rules! p2p {
    ($id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $peer:ident: $tp:ty,
        $tag:ident: $tt:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        export!($mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $peer: $tp, $tag: $tt, $c: $tc $(, $req: $tr)?) -> $r,
            concat!("Traces `", stringify!($mpi), "` with its arguments."), {
            let s = record::enter();
            if s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                return unsafe { $x($b, $n, $dt, $peer, $tag, $c $(, $req)?) };
            }
            // Taken before the call, so that none is kept across it.
            // SAFETY: `s` came from `enter` on this thread.
            let same = unsafe {
                let bytes = record::bytes(s, $n, $dt);
                record::take_p2p(s, $id, i64::from($peer), i64::from($tag), $c.bits(), bytes)
            };
            // SAFETY: as above.
            let (t0, rc, t1) = clock::timed(|| unsafe { $x($b, $n, $dt, $peer, $tag, $c $(, $req)?) });
            #[allow(unused_mut)]
            let mut req = None;
            $(if ok(rc) { req = Some(out!($req).bits()); })?
            let call = P2pEnd {
                routine: $id,
                start: t0,
                end: t1,
                same,
                req,
                status: None,
                site: SiteCode::NONE,
            };
            // SAFETY: `s` came from `enter` on this thread, which took its
            // arguments; the call returned.
            unsafe { record::p2p_taken(s, &call) };
            rc
        });
    };
}

/// Blocking receives: (buf, count, type, source, tag, comm, status).
macro_rules! recv {
    ($id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $src:ident: $tp:ty,
        $tag:ident: $tt:ty, $c:ident: $tc:ty, $st:ident: $ts:ty) -> $r:ty) => {
        export!($mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $src: $tp, $tag: $tt, $c: $tc, $st: $ts) -> $r,
            concat!("Traces `", stringify!($mpi), "` with its arguments."), {
            let s = record::enter();
            if s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                return unsafe { $x($b, $n, $dt, $src, $tag, $c, $st) };
            }
            if extract::wildcard($src, $tag) {
                let sp = pnmpi_sdk::callsite::stack_pointer();
                // SAFETY: `s` came from `enter` on this thread, `sp` is this
                // wrapper's; the rest are the caller's arguments.
                return unsafe { wild(s, sp, $b, $n, $dt, $src, $tag, $c, $st) };
            }
            let same = recv!(@take s, $id, $n, $dt, $src, $tag, $c);
            // SAFETY: the caller's arguments, unchanged, to the next layer.
            let (t0, rc, t1) = clock::timed(|| unsafe { $x($b, $n, $dt, $src, $tag, $c, $st) });
            let sp = pnmpi_sdk::callsite::stack_pointer();
            recv!(@record s, sp, $id, t0, t1, same, None);
            return rc;

            /// A wildcard receive, whose status tells its source (one of
            /// the tracer's own if the caller ignores it): out of the way
            /// of the commonest receive, the loop of a fixed exchange.
            ///
            /// # Safety
            /// `s` comes from [`record::enter`] on this thread, `sp` is the
            /// stack pointer of the wrapper that calls this, and the rest
            /// are its caller's arguments.
            #[cold]
            #[inline(never)]
            // MPI_Recv's seven arguments, and the wrapper's stream and stack.
            #[allow(clippy::too_many_arguments)]
            unsafe fn wild(s: *mut record::Stream, sp: usize, $b: $tb, $n: $tn, $dt: $tdt, $src: $tp,
                $tag: $tt, $c: $tc, $st: $ts) -> $r {
                let mut own = std::mem::MaybeUninit::<pnmpi_mpi_sys::ffi::MPI_Status>::uninit();
                let $st = if $st == mpi::STATUS_IGNORE() { own.as_mut_ptr() } else { $st };
                let same = recv!(@take s, $id, $n, $dt, $src, $tag, $c);
                // SAFETY: the caller's arguments, with a status of the
                // tracer's own in place of an ignored one, to the next layer.
                let (t0, rc, t1) = clock::timed(|| unsafe { $x($b, $n, $dt, $src, $tag, $c, $st) });
                // SAFETY: MPI filled the status of a successful receive.
                let status = ok(rc).then(|| unsafe { extract::status($st) });
                recv!(@record s, sp, $id, t0, t1, same, status);
                rc
            }
        });
    };
    // The arguments, taken before the call (`record::take_p2p`).
    (@take $s:ident, $id:expr, $n:ident, $dt:ident, $src:ident, $tag:ident, $c:ident) => {
        // SAFETY: `$s` came from `enter` on this thread.
        unsafe {
            let bytes = record::bytes($s, $n, $dt);
            record::take_p2p($s, $id, i64::from($src), i64::from($tag), $c.bits(), bytes)
        }
    };
    (@record $s:ident, $sp:ident, $id:expr, $t0:ident, $t1:ident, $same:ident, $status:expr) => {
        let call = P2pEnd {
            routine: $id,
            start: $t0,
            end: $t1,
            same: $same,
            req: None,
            status: $status,
            site: SiteCode::NONE,
        };
        // SAFETY: `$s` came from `enter` on this thread, which took the
        // arguments; the call returned, and `$sp` is the stack pointer of
        // the wrapper, which still runs.
        unsafe { record::p2p_taken_at($s, $sp, &call) };
    };
}

/// `MPI_Sendrecv`.
macro_rules! sendrecv {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty, $dest:ident: $td:ty,
        $stag:ident: $tst:ty, $rb:ident: $trb:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $src:ident: $tsrc:ty,
        $rtag:ident: $trt:ty, $c:ident: $tc:ty, $st:ident: $ts:ty) -> $r:ty) => {
        traced!($id, $mpi, $x, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $dest: $td, $stag: $tst, $rb: $trb, $rn: $trn,
            $rdt: $trdt, $src: $tsrc, $rtag: $trt, $c: $tc, $st: $ts) -> $r,
            |s, scr, t0, t1, rc| pre {
                let mut own = extract::blank_status();
                let wild = extract::wildcard($src, $rtag);
                let $st = if wild && $st == mpi::STATUS_IGNORE() { &raw mut own } else { $st };
            } post {
                // SAFETY: MPI filled the status of a successful call.
                let status = (wild && ok(rc)).then(|| unsafe { extract::status($st) });
                emit!(s, RawEvent {
                    peer: Some(i64::from($dest)),
                    tag: Some(i64::from($stag)),
                    comm: Some($c.bits()),
                    bytes: Some(bytes($sn, $sdt)),
                    src: Some(i64::from($src)),
                    rtag: Some(i64::from($rtag)),
                    rbytes: Some(bytes($rn, $rdt)),
                    status,
                    ..RawEvent::plain($id, t0, t1)
                });
            });
    };
}

/// `MPI_Sendrecv_replace`.
macro_rules! sendrecv_replace {
    ($id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $dest:ident: $td:ty,
        $stag:ident: $tst:ty, $src:ident: $tsrc:ty, $rtag:ident: $trt:ty, $c:ident: $tc:ty, $st:ident: $ts:ty)
        -> $r:ty) => {
        traced!($id, $mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $dest: $td, $stag: $tst, $src: $tsrc, $rtag: $trt,
            $c: $tc, $st: $ts) -> $r,
            |s, scr, t0, t1, rc| pre {
                let mut own = extract::blank_status();
                let wild = extract::wildcard($src, $rtag);
                let $st = if wild && $st == mpi::STATUS_IGNORE() { &raw mut own } else { $st };
            } post {
                // SAFETY: MPI filled the status of a successful call.
                let status = (wild && ok(rc)).then(|| unsafe { extract::status($st) });
                let n = bytes($n, $dt);
                emit!(s, RawEvent {
                    peer: Some(i64::from($dest)),
                    tag: Some(i64::from($stag)),
                    comm: Some($c.bits()),
                    bytes: Some(n),
                    src: Some(i64::from($src)),
                    rtag: Some(i64::from($rtag)),
                    rbytes: Some(n),
                    status,
                    ..RawEvent::plain($id, t0, t1)
                });
            });
    };
}

/// `MPI_Probe` (source, tag, comm, status), `MPI_Iprobe` (..., flag,
/// status), and the matched probes `MPI_Mprobe` (source, tag, comm,
/// message, status) and `MPI_Improbe` (..., flag, message, status), which
/// keep their message's communicator for its receive.
macro_rules! probe {
    ($id:expr, $mpi:ident, $x:ident, ($src:ident: $tp:ty, $tag:ident: $tt:ty, $c:ident: $tc:ty, $st:ident: $ts:ty)
        -> $r:ty) => {
        probe!(@ $id, $mpi, $x, ($src: $tp, $tag: $tt, $c: $tc, $st: $ts) -> $r, $src, $tag, $c, [], [], $st);
    };
    ($id:expr, $mpi:ident, $x:ident, ($src:ident: $tp:ty, $tag:ident: $tt:ty, $c:ident: $tc:ty, $flag:ident: $tf:ty,
        $st:ident: $ts:ty) -> $r:ty) => {
        probe!(@ $id, $mpi, $x, ($src: $tp, $tag: $tt, $c: $tc, $flag: $tf, $st: $ts) -> $r, $src, $tag, $c, [$flag],
            [], $st);
    };
    (mprobe $id:expr, $mpi:ident, $x:ident, ($src:ident: $tp:ty, $tag:ident: $tt:ty, $c:ident: $tc:ty,
        $m:ident: $tm:ty, $st:ident: $ts:ty) -> $r:ty) => {
        probe!(@ $id, $mpi, $x, ($src: $tp, $tag: $tt, $c: $tc, $m: $tm, $st: $ts) -> $r, $src, $tag, $c, [], [$m],
            $st);
    };
    (mprobe $id:expr, $mpi:ident, $x:ident, ($src:ident: $tp:ty, $tag:ident: $tt:ty, $c:ident: $tc:ty,
        $flag:ident: $tf:ty, $m:ident: $tm:ty, $st:ident: $ts:ty) -> $r:ty) => {
        probe!(@ $id, $mpi, $x, ($src: $tp, $tag: $tt, $c: $tc, $flag: $tf, $m: $tm, $st: $ts) -> $r, $src, $tag,
            $c, [$flag], [$m], $st);
    };
    (@ $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $src:ident, $tag:ident, $c:ident, [$($flag:ident)?],
        [$($m:ident)?], $st:ident) => {
        traced!($id, $mpi, $x, $args -> $r,
            |s, scr, t0, t1, rc| pre {
                let mut own = extract::blank_status();
                let wild = extract::wildcard($src, $tag);
                let $st = if wild && $st == mpi::STATUS_IGNORE() { &raw mut own } else { $st };
            } post {
                #[allow(unused_mut)]
                let mut found = ok(rc);
                $(found = found && out!($flag) != 0;)?
                $(if found { matched::probed(out!($m).bits(), $c.bits()); })?
                // SAFETY: MPI filled the status of a successful probe.
                let status = (wild && found).then(|| unsafe { extract::status($st) });
                emit!(s, RawEvent {
                    peer: Some(i64::from($src)),
                    tag: Some(i64::from($tag)),
                    comm: Some($c.bits()),
                    status,
                    ..RawEvent::plain($id, t0, t1)
                });
            });
    };
}

/// The receives of a matched probe's message: `MPI_Mrecv` (buf, count,
/// type, message, status) and `MPI_Imrecv` (..., message, request). They
/// are traced as receives posted with wildcards on the probe's
/// communicator, so that the status (of the call, or of the request's
/// completion) names the source, as for `MPI_Recv(MPI_ANY_SOURCE)`. A
/// message no traced probe matched is traced as a plain call.
macro_rules! mrecv {
    ($id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $m:ident: $tm:ty,
        $st:ident: $ts:ty) -> $r:ty) => {
        mrecv!(@ $id, $mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $m: $tm, $st: $ts) -> $r, $n, $dt, $m, status $st);
    };
    (imrecv $id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $m:ident: $tm:ty, $req:ident: $tr:ty) -> $r:ty) => {
        mrecv!(@ $id, $mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $m: $tm, $req: $tr) -> $r, $n, $dt, $m, req $req);
    };
    (@ $id:expr, $mpi:ident, $x:ident, ($($a:ident: $t:ty),*) -> $r:ty, $n:ident, $dt:ident, $m:ident,
        $out:ident $o:ident) => {
        export!($mpi, $x, ($($a: $t),*) -> $r, concat!("Traces `", stringify!($mpi), "` with its arguments."), {
            let s = record::enter();
            if s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                return unsafe { $x($($a),*) };
            }
            // The message before the call, which frees it.
            let comm = if $m.is_null() { None } else { matched::received(out!($m).bits()) };
            mrecv!(status_of $out $o);
            // SAFETY: the caller's arguments, with a status of the tracer's
            // own in place of an ignored one, to the next layer.
            let (t0, rc, t1) = clock::timed(|| unsafe { $x($($a),*) });
            match comm {
                Some(comm) if ok(rc) => {
                    let call = P2p {
                        routine: $id,
                        start: t0,
                        end: t1,
                        peer: i64::from(mpi::ANY_SOURCE()),
                        tag: i64::from(mpi::ANY_TAG()),
                        comm,
                        // SAFETY: `s` came from `enter` on this thread.
                        bytes: unsafe { record::bytes(s, $n, $dt) },
                        req: mrecv!(req_of $out $o),
                        status: mrecv!(received $out $o),
                        site: SiteCode::NONE,
                    };
                    // SAFETY: `s` came from `enter` on this thread; the call returned.
                    unsafe { record::p2p(s, &call) };
                }
                // SAFETY: `s` came from `enter` on this thread; the call returned.
                _ => unsafe { record::plain(s, $id, t0, t1) },
            }
            rc
        });
    };
    (status_of status $st:ident) => {
        let mut own = extract::blank_status();
        let $st = if $st == mpi::STATUS_IGNORE() { &raw mut own } else { $st };
    };
    (status_of req $req:ident) => {};
    (req_of status $st:ident) => { None };
    (req_of req $req:ident) => { Some(out!($req).bits()) };
    // SAFETY: MPI filled the status of a successful receive.
    (received status $st:ident) => { Some(unsafe { extract::status($st) }) };
    (received req $req:ident) => { None };
}

/// Collectives whose arguments are read by `$read`, an expression of the
/// arguments and of the wrapper's scratch space (named by `$sc`)
/// returning (bytes, rbytes, root, per-peer): with per-peer, the scratch's
/// `send` and `recv` vectors are recorded as the call's per-peer bytes.
/// The request of the nonblocking forms is the last argument.
macro_rules! collective {
    ($id:expr, $mpi:ident, $x:ident, ($($a:ident: $t:ty),*) -> $r:ty, comm $c:ident, req $($req:ident)?,
        |$sc:ident| $read:expr) => {
        traced!($id, $mpi, $x, ($($a: $t),*) -> $r,
            |s, scr, t0, t1, rc| pre {} post {
                scr.handles.clear();
                $(if ok(rc) { scr.handles.push(out!($req).bits()); })?
                let $sc = &mut scr;
                let (bytes, rbytes, root, peers): (Option<i64>, Option<i64>, Option<i64>, bool) = $read;
                let counts = peers.then_some(PeerBytesOf { send: &scr.send[..], recv: &scr.recv[..] });
                emit!(s, RawEvent {
                    comm: Some($c.bits()),
                    bytes,
                    rbytes,
                    root,
                    reqs: &scr.handles,
                    counts,
                    ..RawEvent::plain($id, t0, t1)
                });
            });
    };
    ($id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, comm $c:ident, req $($req:ident)?, $read:expr) => {
        collective!($id, $mpi, $x, $args -> $r, comm $c, req $($req)?, |_sc| {
            let (bytes, rbytes, root): (Option<i64>, Option<i64>, Option<i64>) = $read;
            (bytes, rbytes, root, false)
        });
    };
}

/// Blocking collectives with at most bytes and a root, read by `$read`
/// (an expression of the arguments and of the stream, named by `$s`,
/// returning (bytes, root)): the collective path, no event struct, no
/// scratch space.
macro_rules! coll {
    ($id:expr, $mpi:ident, $x:ident, ($($a:ident: $t:ty),*) -> $r:ty, comm $c:ident, |$s:ident| $read:expr) => {
        export!($mpi, $x, ($($a: $t),*) -> $r, concat!("Traces `", stringify!($mpi), "` with its arguments."), {
            let $s = record::enter();
            if $s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                return unsafe { $x($($a),*) };
            }
            // SAFETY: as above.
            let (t0, rc, t1) = clock::timed(|| unsafe { $x($($a),*) });
            let (bytes, root): (Option<i64>, Option<i64>) = $read;
            let call = CollCall {
                routine: $id,
                start: t0,
                end: t1,
                comm: $c.bits(),
                bytes,
                root,
                site: SiteCode::NONE,
            };
            // SAFETY: `$s` came from `enter` on this thread; the call returned.
            unsafe { record::coll($s, &call) };
            rc
        });
    };
}

macro_rules! barrier {
    ($id:expr, $mpi:ident, $x:ident, ($c:ident: $tc:ty) -> $r:ty) => {
        coll!($id, $mpi, $x, ($c: $tc) -> $r, comm $c, |_s| (None, None));
    };
    ($id:expr, $mpi:ident, $x:ident, ($c:ident: $tc:ty, $req:ident: $tr:ty) -> $r:ty) => {
        collective!($id, $mpi, $x, ($c: $tc, $req: $tr) -> $r, comm $c, req $req, (None, None, None));
    };
}

macro_rules! bcast {
    ($id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $root:ident: $tr0:ty,
        $c:ident: $tc:ty) -> $r:ty) => {
        coll!($id, $mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $root: $tr0, $c: $tc) -> $r, comm $c,
            // SAFETY: `s` came from `enter` on this thread.
            |s| (Some(unsafe { record::bytes(s, $n, $dt) }), Some(i64::from($root))));
    };
    ($id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $root:ident: $tr0:ty,
        $c:ident: $tc:ty, $req:ident: $tr:ty) -> $r:ty) => {
        collective!($id, $mpi, $x, ($b: $tb, $n: $tn, $dt: $tdt, $root: $tr0, $c: $tc, $req: $tr) -> $r,
            comm $c, req $req, (Some(bytes($n, $dt)), None, Some(i64::from($root))));
    };
}

macro_rules! reduce {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $op:ident: $top:ty, $root:ident: $tr0:ty, $c:ident: $tc:ty) -> $r:ty) => {
        coll!($id, $mpi, $x, ($sb: $tsb, $rb: $trb, $n: $tn, $dt: $tdt, $op: $top, $root: $tr0, $c: $tc) -> $r,
            comm $c,
            // SAFETY: `s` came from `enter` on this thread.
            |s| (Some(unsafe { record::bytes(s, $n, $dt) }), Some(i64::from($root))));
    };
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $op:ident: $top:ty, $root:ident: $tr0:ty, $c:ident: $tc:ty, $req:ident: $tr:ty) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $rb: $trb, $n: $tn, $dt: $tdt, $op: $top, $root: $tr0, $c: $tc,
            $req: $tr) -> $r,
            comm $c, req $req, (Some(bytes($n, $dt)), None, Some(i64::from($root))));
    };
}

/// Allreduce, Scan, Exscan, Reduce_scatter_block: (sbuf, rbuf, count, type, op, comm[, request]).
macro_rules! allreduce {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $op:ident: $top:ty, $c:ident: $tc:ty) -> $r:ty) => {
        coll!($id, $mpi, $x, ($sb: $tsb, $rb: $trb, $n: $tn, $dt: $tdt, $op: $top, $c: $tc) -> $r, comm $c,
            // SAFETY: `s` came from `enter` on this thread.
            |s| (Some(unsafe { record::bytes(s, $n, $dt) }), None));
    };
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $op:ident: $top:ty, $c:ident: $tc:ty, $req:ident: $tr:ty) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $rb: $trb, $n: $tn, $dt: $tdt, $op: $top, $c: $tc, $req: $tr) -> $r,
            comm $c, req $req, (Some(bytes($n, $dt)), None, None));
    };
}

/// Gather, Scatter: (sbuf, scount, stype, rbuf, rcount, rtype, root, comm[, request]).
macro_rules! gather {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty,
        $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $root:ident: $tr0:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?)
        -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rn: $trn, $rdt: $trdt, $root: $tr0,
            $c: $tc $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, (Some(bytes($sn, $sdt)), Some(bytes($rn, $rdt)), Some(i64::from($root))));
    };
}

/// Allgather, Alltoall: (sbuf, scount, stype, rbuf, rcount, rtype, comm[, request]).
macro_rules! allgather {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty,
        $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rn: $trn, $rdt: $trdt, $c: $tc
            $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, (Some(bytes($sn, $sdt)), Some(bytes($rn, $rdt)), None));
    };
}

/// Whether this process is `root` of `comm`: the `v` counts of the root
/// side are significant there only.
fn is_root(root: i32, comm: pnmpi_mpi_sys::ffi::MPI_Comm) -> bool {
    let mut rank = -1;
    // SAFETY: the application's communicator; the output is local. Past
    // the chain: the tracer's own question, not the application's.
    unsafe { pnmpi_mpi_sys::ffi::PMPI_Comm_rank(comm, &mut rank) };
    rank == root
}

macro_rules! gatherv {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty,
        $rns:ident: $trn:ty, $dis:ident: $tdis:ty, $rdt:ident: $trdt:ty, $root:ident: $tr0:ty, $c:ident: $tc:ty
        $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rns: $trn, $dis: $tdis, $rdt: $trdt,
            $root: $tr0, $c: $tc $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, |sc| {
                sc.send.clear();
                sc.recv.clear();
                let root = is_root($root, $c);
                // SAFETY: receive counts are significant (one per process) at the root.
                let r = root.then(|| unsafe { extract::per_peer($rns, $rdt, extract::peers($c), &mut sc.recv) });
                (Some(bytes($sn, $sdt)), r, Some(i64::from($root)), root)
            });
    };
}

macro_rules! scatterv {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sns:ident: $tsn:ty, $dis:ident: $tdis:ty, $sdt:ident: $tsdt:ty,
        $rb:ident: $trb:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $root:ident: $tr0:ty, $c:ident: $tc:ty
        $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $sns: $tsn, $dis: $tdis, $sdt: $tsdt, $rb: $trb, $rn: $trn, $rdt: $trdt,
            $root: $tr0, $c: $tc $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, |sc| {
                sc.send.clear();
                sc.recv.clear();
                let root = is_root($root, $c);
                // SAFETY: send counts are significant (one per process) at the root.
                let s = root.then(|| unsafe { extract::per_peer($sns, $sdt, extract::peers($c), &mut sc.send) });
                (s, Some(bytes($rn, $rdt)), Some(i64::from($root)), root)
            });
    };
}

macro_rules! allgatherv {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty,
        $rns:ident: $trn:ty, $dis:ident: $tdis:ty, $rdt:ident: $trdt:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?)
        -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rns: $trn, $dis: $tdis, $rdt: $trdt,
            $c: $tc $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, |sc| {
                sc.send.clear();
                // SAFETY: one receive count per process.
                let r = unsafe { extract::per_peer($rns, $rdt, extract::peers($c), &mut sc.recv) };
                (Some(bytes($sn, $sdt)), Some(r), None, true)
            });
    };
}

/// `MPI_Alltoallv` (`$per`: [`extract::per_peer`]) and `MPI_Alltoallw`
/// (a datatype per peer: [`extract::per_peer_typed`]).
macro_rules! alltoallv {
    ($per:path, $id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sns:ident: $tsn:ty, $sd:ident: $tsd:ty,
        $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty, $rns:ident: $trn:ty, $rd:ident: $trd:ty, $rdt:ident: $trdt:ty,
        $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $sns: $tsn, $sd: $tsd, $sdt: $tsdt, $rb: $trb, $rns: $trn, $rd: $trd,
            $rdt: $trdt, $c: $tc $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, |sc| {
                let n = extract::peers($c);
                // SAFETY: one count (and datatype) per process in each array.
                let r = unsafe { $per($rns, $rdt, n, &mut sc.recv) };
                // With MPI_IN_PLACE the receive side describes both.
                let s = if std::ptr::eq($sb, mpi::IN_PLACE()) {
                    sc.send.clone_from(&sc.recv);
                    r
                } else {
                    // SAFETY: as above.
                    unsafe { $per($sns, $sdt, n, &mut sc.send) }
                };
                (Some(s), Some(r), None, true)
            });
    };
}

macro_rules! reduce_scatter {
    ($id:expr, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $rns:ident: $trn:ty, $dt:ident: $tdt:ty,
        $op:ident: $top:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($id, $mpi, $x, ($sb: $tsb, $rb: $trb, $rns: $trn, $dt: $tdt, $op: $top, $c: $tc $(, $req: $tr)?) -> $r,
            comm $c, req $($req)?, |sc| {
                sc.send.clear();
                // SAFETY: one receive count per process.
                let total = unsafe { extract::per_peer($rns, $dt, extract::peers($c), &mut sc.recv) };
                (Some(total), None, None, true)
            });
    };
}

/// `MPI_Wait` (request, status) and `MPI_Test` (request, flag, status):
/// the single-request path, no event struct, no scratch space.
macro_rules! wait {
    ($id:expr, $mpi:ident, $x:ident, ($req:ident: $tr:ty, $st:ident: $ts:ty) -> $r:ty) => {
        wait!(@ $id, $mpi, $x, ($req: $tr, $st: $ts) -> $r, $req, [], $st);
    };
    ($id:expr, $mpi:ident, $x:ident, ($req:ident: $tr:ty, $flag:ident: $tf:ty, $st:ident: $ts:ty) -> $r:ty) => {
        wait!(@ $id, $mpi, $x, ($req: $tr, $flag: $tf, $st: $ts) -> $r, $req, [$flag], $st);
    };
    (@ $id:expr, $mpi:ident, $x:ident, ($($a:ident: $t:ty),*) -> $r:ty, $req:ident, [$($flag:ident)?], $st:ident) => {
        export!($mpi, $x, ($($a: $t),*) -> $r, concat!("Traces `", stringify!($mpi), "` with its arguments."), {
            let s = record::enter();
            if s.is_null() {
                // SAFETY: the caller's arguments, unchanged, to the next layer.
                return unsafe { $x($($a),*) };
            }
            // The handle before the call, which frees it.
            let handle = if $req.is_null() { None } else { Some(out!($req).bits()) };
            let mut own = extract::blank_status();
            let $st = if $st == mpi::STATUS_IGNORE() { &raw mut own } else { $st };
            // SAFETY: the caller's arguments, with a status of the tracer's
            // own in place of an ignored one, to the next layer.
            let (t0, rc, t1) = clock::timed(|| unsafe { $x($($a),*) });
            #[allow(unused_mut)]
            let mut complete = ok(rc);
            $(complete = complete && out!($flag) != 0;)?
            let done = match handle {
                Some(handle) if complete && handle != mpi::REQUEST_NULL().bits() => Some(RawDone {
                    handle,
                    // SAFETY: MPI filled the status of a completed request.
                    status: Some(unsafe { extract::status($st) }),
                }),
                _ => None,
            };
            // SAFETY: `s` came from `enter` on this thread; the call returned.
            unsafe { record::done(s, $id, t0, t1, done) };
            rc
        });
    };
}

/// `MPI_Waitall` (count, requests, statuses) and `MPI_Testall` (..., flag, statuses).
macro_rules! waitall {
    ($id:expr, $mpi:ident, $x:ident, ($n:ident: $tn:ty, $reqs:ident: $tr:ty, $sts:ident: $ts:ty) -> $r:ty) => {
        waitall!(@ $id, $mpi, $x, ($n: $tn, $reqs: $tr, $sts: $ts) -> $r, $n, $reqs, [], $sts);
    };
    ($id:expr, $mpi:ident, $x:ident, ($n:ident: $tn:ty, $reqs:ident: $tr:ty, $flag:ident: $tf:ty, $sts:ident: $ts:ty)
        -> $r:ty) => {
        waitall!(@ $id, $mpi, $x, ($n: $tn, $reqs: $tr, $flag: $tf, $sts: $ts) -> $r, $n, $reqs, [$flag], $sts);
    };
    (@ $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $n:ident, $reqs:ident, [$($flag:ident)?], $sts:ident) => {
        traced!($id, $mpi, $x, $args -> $r,
            |s, scr, t0, t1, rc| pre {
                // SAFETY: the caller's `count` requests.
                unsafe { extract::snapshot($reqs, $n, &mut scr) };
                let $sts = extract::statuses($sts, $n, &mut scr);
            } post {
                scr.done.clear();
                #[allow(unused_mut)]
                let mut done = ok(rc);
                $(done = done && out!($flag) != 0;)?
                if done {
                    for i in 0..scr.handles.len() {
                        // SAFETY: MPI filled one status per request.
                        unsafe { extract::complete(&mut scr, i, $sts.add(i)) };
                    }
                }
                emit!(s, RawEvent { done: &scr.done, ..RawEvent::plain($id, t0, t1) });
            });
    };
}

/// `MPI_Waitany` (count, requests, index, status) and `MPI_Testany` (..., index, flag, status).
macro_rules! waitany {
    ($id:expr, $mpi:ident, $x:ident, ($n:ident: $tn:ty, $reqs:ident: $tr:ty, $idx:ident: $ti:ty, $st:ident: $ts:ty)
        -> $r:ty) => {
        waitany!(@ $id, $mpi, $x, ($n: $tn, $reqs: $tr, $idx: $ti, $st: $ts) -> $r, $n, $reqs, $idx, [], $st);
    };
    ($id:expr, $mpi:ident, $x:ident, ($n:ident: $tn:ty, $reqs:ident: $tr:ty, $idx:ident: $ti:ty, $flag:ident: $tf:ty,
        $st:ident: $ts:ty) -> $r:ty) => {
        waitany!(@ $id, $mpi, $x, ($n: $tn, $reqs: $tr, $idx: $ti, $flag: $tf, $st: $ts) -> $r, $n, $reqs, $idx, [$flag], $st);
    };
    (@ $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $n:ident, $reqs:ident, $idx:ident, [$($flag:ident)?],
        $st:ident) => {
        traced!($id, $mpi, $x, $args -> $r,
            |s, scr, t0, t1, rc| pre {
                // SAFETY: the caller's `count` requests.
                unsafe { extract::snapshot($reqs, $n, &mut scr) };
                let mut own = extract::blank_status();
                let $st = if $st == mpi::STATUS_IGNORE() { &raw mut own } else { $st };
            } post {
                scr.done.clear();
                #[allow(unused_mut)]
                let mut done = ok(rc);
                $(done = done && out!($flag) != 0;)?
                let i = out!($idx);
                if done && i != mpi::UNDEFINED() && i >= 0 {
                    // SAFETY: MPI filled the status of the completed request.
                    unsafe { extract::complete(&mut scr, i as usize, $st) };
                }
                emit!(s, RawEvent { done: &scr.done, ..RawEvent::plain($id, t0, t1) });
            });
    };
}

/// `MPI_Waitsome`, `MPI_Testsome`: (count, requests, outcount, indices, statuses).
macro_rules! waitsome {
    ($id:expr, $mpi:ident, $x:ident, ($n:ident: $tn:ty, $reqs:ident: $tr:ty, $out:ident: $to:ty, $idx:ident: $ti:ty,
        $sts:ident: $ts:ty) -> $r:ty) => {
        traced!($id, $mpi, $x, ($n: $tn, $reqs: $tr, $out: $to, $idx: $ti, $sts: $ts) -> $r,
            |s, scr, t0, t1, rc| pre {
                // SAFETY: the caller's `count` requests.
                unsafe { extract::snapshot($reqs, $n, &mut scr) };
                let $sts = extract::statuses($sts, $n, &mut scr);
            } post {
                scr.done.clear();
                let k = out!($out);
                if ok(rc) && k != mpi::UNDEFINED() {
                    for j in 0..k.max(0) as usize {
                        let i = out!($idx.add(j));
                        // SAFETY: MPI filled `outcount` indices and statuses.
                        unsafe { extract::complete(&mut scr, i.max(0) as usize, $sts.add(j)) };
                    }
                }
                emit!(s, RawEvent { done: &scr.done, ..RawEvent::plain($id, t0, t1) });
            });
    };
}

/// `MPI_Request_free`: the request is released (recorded as completed, no status).
/// `MPI_Request_free` and `MPI_Cancel` (request): the request they name.
macro_rules! request_free {
    ($id:expr, $mpi:ident, $x:ident, ($req:ident: $tr:ty) -> $r:ty) => {
        traced!($id, $mpi, $x, ($req: $tr) -> $r,
            |s, scr, t0, t1, rc| pre {
                // SAFETY: the caller's request.
                unsafe { extract::snapshot($req, 1, &mut scr) };
            } post {
                scr.done.clear();
                if ok(rc) {
                    // SAFETY: no status (null).
                    unsafe { extract::complete(&mut scr, 0, std::ptr::null()) };
                }
                emit!(s, RawEvent { done: &scr.done, ..RawEvent::plain($id, t0, t1) });
            });
    };
}

/// `MPI_Start` (request) and `MPI_Startall` (count, requests).
macro_rules! start {
    ($id:expr, $mpi:ident, $x:ident, ($reqs:ident: $tr:ty) -> $r:ty) => {
        start!(@ $id, $mpi, $x, ($reqs: $tr) -> $r, 1, $reqs);
    };
    ($id:expr, $mpi:ident, $x:ident, ($n:ident: $tn:ty, $reqs:ident: $tr:ty) -> $r:ty) => {
        start!(@ $id, $mpi, $x, ($n: $tn, $reqs: $tr) -> $r, $n, $reqs);
    };
    (@ $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $count:expr, $reqs:ident) => {
        traced!($id, $mpi, $x, $args -> $r,
            |s, scr, t0, t1, rc| pre {
                let count = $count;
                // SAFETY: the caller's `count` requests.
                unsafe { extract::snapshot($reqs, count, &mut scr) };
            } post {
                if !ok(rc) {
                    scr.handles.clear();
                }
                emit!(s, RawEvent { reqs: &scr.handles, ..RawEvent::plain($id, t0, t1) });
            });
    };
}

/// The event of a communicator constructor: the parent `comm`, the new
/// communicator's `handle`, and the members [`extract::members`] left in
/// `scr` (with the remote group if `inter`).
fn newcomm_event(
    id: u32,
    t0: u64,
    t1: u64,
    comm: u64,
    handle: u64,
    inter: bool,
    scr: &extract::Scratch,
) -> RawEvent<'_> {
    RawEvent {
        comm: Some(comm),
        newcomm: Some(RawNewComm {
            handle,
            members: &scr.members,
            remote: inter.then_some(&scr.remote[..]),
        }),
        ..RawEvent::plain(id, t0, t1)
    }
}

/// Communicator constructors: parent first, new communicator last (any
/// number of arguments between; `@last` finds the last one's name).
macro_rules! newcomm {
    ($id:expr, $mpi:ident, $x:ident, ($c:ident: $tc:ty $(, $a:ident: $t:ty)+) -> $r:ty) => {
        newcomm!(@last $id, $mpi, $x, ($c: $tc $(, $a: $t)+) -> $r, $c, [$($a)+]);
    };
    (@last $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $c:ident, [$new:ident]) => {
        newcomm!(@ $id, $mpi, $x, $args -> $r, $c, $new);
    };
    (@last $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $c:ident, [$skip:ident $($rest:ident)+]) => {
        newcomm!(@last $id, $mpi, $x, $args -> $r, $c, [$($rest)+]);
    };
    (@ $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $c:ident, $new:ident) => {
        traced!($id, $mpi, $x, $args -> $r,
            |s, scr, t0, t1, rc| pre {} post {
                let handle = if ok(rc) { out!($new) } else { mpi::COMM_NULL() };
                let inter = handle != mpi::COMM_NULL() && extract::members(handle, &mut scr);
                if handle == mpi::COMM_NULL() {
                    scr.members.clear();
                }
                emit!(s, newcomm_event($id, t0, t1, $c.bits(), handle.bits(), inter, &scr));
            });
    };
}

/// `MPI_Comm_idup` (comm, newcomm, request): the new communicator may not
/// be used before the request completes, so its members are the parent's.
macro_rules! idup {
    ($id:expr, $mpi:ident, $x:ident, ($c:ident: $tc:ty, $new:ident: $tnew:ty, $req:ident: $tr:ty) -> $r:ty) => {
        traced!($id, $mpi, $x, ($c: $tc, $new: $tnew, $req: $tr) -> $r,
            |s, scr, t0, t1, rc| pre {} post {
                let handle = if ok(rc) { out!($new) } else { mpi::COMM_NULL() };
                let inter = extract::members($c, &mut scr);
                scr.handles.clear();
                if ok(rc) {
                    scr.handles.push(out!($req).bits());
                }
                emit!(s, RawEvent {
                    reqs: &scr.handles,
                    ..newcomm_event($id, t0, t1, $c.bits(), handle.bits(), inter, &scr)
                });
            });
    };
}

/// `MPI_Comm_free`, `MPI_Comm_disconnect`: the handle, read before MPI nulls it.
macro_rules! comm_free {
    ($id:expr, $mpi:ident, $x:ident, ($c:ident: $tc:ty) -> $r:ty) => {
        traced!($id, $mpi, $x, ($c: $tc) -> $r,
            |s, scr, t0, t1, rc| pre {
                let handle = out!($c).bits();
            } post {
                emit!(s, RawEvent { comm: Some(handle), ..RawEvent::plain($id, t0, t1) });
            });
    };
}

/// `MPI_Init`, `MPI_Init_thread`: tracing starts once MPI is up. The
/// recorded call includes the tracer's set-up (folder, clock offsets).
macro_rules! init {
    ($id:expr, $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty) => {
        export!($mpi, $x, ($($a: $t),*) -> $r, concat!("Starts tracing after `", stringify!($mpi), "`."), {
            let kind = clock::choose();
            let start = clock::pair();
            // SAFETY: the caller's arguments, unchanged, to the next layer.
            let rc = unsafe { $x($($a),*) };
            if ok(rc) && !record::tracing() {
                setup::init(start, kind);
                let s = record::enter();
                if !s.is_null() {
                    // SAFETY: `s` came from `enter` on this thread.
                    unsafe { record::plain(s, $id, start.tick, clock::now()) };
                }
            }
            rc
        });
    };
}

/// `MPI_Finalize`: the last clock measurement, then every buffer is
/// written out and the rank file gets its final name.
macro_rules! finalize {
    ($id:expr, $mpi:ident, $x:ident, () -> $r:ty) => {
        export!($mpi, $x, () -> $r, "Finishes the trace around `MPI_Finalize`.", {
            let s = record::enter();
            let t0 = clock::now();
            setup::finalize();
            // SAFETY: no arguments.
            let (entry, rc, t1) = clock::timed(|| unsafe { $x() });
            if s.is_null() {
                return rc;
            }
            // Under vtime the call starts where vtime's own does, after the
            // compute before it (and the set-up's calls) were charged.
            let t0 = if clock::is_virtual() { entry } else { t0 };
            // SAFETY: `s` came from `enter` on this thread.
            unsafe { record::plain(s, $id, t0, t1) };
            record::finish(true);
            if let Some(run) = record::run().filter(|r| r.rank == 0) {
                let dir = run.dir.display();
                say::note(
                    "tracer",
                    format_args!("trace written to {dir}; merge it with: pnmpi trace merge {dir} -o trace.pnt"),
                );
            }
            rc
        });
    };
}

/// `MPI_Abort`: what was recorded is written before the process dies.
macro_rules! abort {
    ($id:expr, $mpi:ident, $x:ident, ($c:ident: $tc:ty, $code:ident: $tcode:ty) -> $r:ty) => {
        export!($mpi, $x, ($c: $tc, $code: $tcode) -> $r, "Writes the trace out, then aborts.", {
            let s = record::enter();
            if !s.is_null() {
                let t = clock::now();
                // SAFETY: `s` came from `enter` on this thread.
                unsafe { record::plain(s, $id, t, t) };
                record::finish(false);
            }
            // SAFETY: the caller's arguments, unchanged, to the next layer.
            unsafe { $x($c, $code) }
        });
    };
}

/// Routes each routine of the table to the wrapper of its shape.
macro_rules! wrap {
    ($id:expr, $mpi:ident, $p:ident, $x:ident, $ns:ident, $k:ident $args:tt -> $r:ty) => {
        wrap!(@ $mpi, $id, $mpi, $x, $args -> $r);
    };
    (@ MPI_Init, $($t:tt)*) => { init!($($t)*); };
    (@ MPI_Init_thread, $($t:tt)*) => { init!($($t)*); };
    (@ MPI_Finalize, $($t:tt)*) => { finalize!($($t)*); };
    (@ MPI_Abort, $($t:tt)*) => { abort!($($t)*); };
    (@ MPI_Send, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Bsend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Ssend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Rsend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Isend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Ibsend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Issend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Irsend, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Send_init, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Bsend_init, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Ssend_init, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Rsend_init, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Irecv, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Recv_init, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Send_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Bsend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Ssend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Rsend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Isend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Ibsend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Issend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Irsend_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Send_init_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Bsend_init_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Ssend_init_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Rsend_init_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Irecv_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Recv_init_c, $($t:tt)*) => { p2p!($($t)*); };
    (@ MPI_Recv, $($t:tt)*) => { recv!($($t)*); };
    (@ MPI_Recv_c, $($t:tt)*) => { recv!($($t)*); };
    (@ MPI_Sendrecv, $($t:tt)*) => { sendrecv!($($t)*); };
    (@ MPI_Sendrecv_c, $($t:tt)*) => { sendrecv!($($t)*); };
    (@ MPI_Sendrecv_replace, $($t:tt)*) => { sendrecv_replace!($($t)*); };
    (@ MPI_Sendrecv_replace_c, $($t:tt)*) => { sendrecv_replace!($($t)*); };
    (@ MPI_Probe, $($t:tt)*) => { probe!($($t)*); };
    (@ MPI_Iprobe, $($t:tt)*) => { probe!($($t)*); };
    (@ MPI_Mprobe, $($t:tt)*) => { probe!(mprobe $($t)*); };
    (@ MPI_Improbe, $($t:tt)*) => { probe!(mprobe $($t)*); };
    (@ MPI_Mrecv, $($t:tt)*) => { mrecv!($($t)*); };
    (@ MPI_Mrecv_c, $($t:tt)*) => { mrecv!($($t)*); };
    (@ MPI_Imrecv, $($t:tt)*) => { mrecv!(imrecv $($t)*); };
    (@ MPI_Imrecv_c, $($t:tt)*) => { mrecv!(imrecv $($t)*); };
    (@ MPI_Barrier, $($t:tt)*) => { barrier!($($t)*); };
    (@ MPI_Ibarrier, $($t:tt)*) => { barrier!($($t)*); };
    (@ MPI_Bcast, $($t:tt)*) => { bcast!($($t)*); };
    (@ MPI_Ibcast, $($t:tt)*) => { bcast!($($t)*); };
    (@ MPI_Reduce, $($t:tt)*) => { reduce!($($t)*); };
    (@ MPI_Ireduce, $($t:tt)*) => { reduce!($($t)*); };
    (@ MPI_Allreduce, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Iallreduce, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Scan, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Iscan, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Exscan, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Iexscan, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Reduce_scatter_block, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Ireduce_scatter_block, $($t:tt)*) => { allreduce!($($t)*); };
    (@ MPI_Gather, $($t:tt)*) => { gather!($($t)*); };
    (@ MPI_Igather, $($t:tt)*) => { gather!($($t)*); };
    (@ MPI_Scatter, $($t:tt)*) => { gather!($($t)*); };
    (@ MPI_Iscatter, $($t:tt)*) => { gather!($($t)*); };
    (@ MPI_Allgather, $($t:tt)*) => { allgather!($($t)*); };
    (@ MPI_Iallgather, $($t:tt)*) => { allgather!($($t)*); };
    (@ MPI_Alltoall, $($t:tt)*) => { allgather!($($t)*); };
    (@ MPI_Ialltoall, $($t:tt)*) => { allgather!($($t)*); };
    (@ MPI_Gatherv, $($t:tt)*) => { gatherv!($($t)*); };
    (@ MPI_Igatherv, $($t:tt)*) => { gatherv!($($t)*); };
    (@ MPI_Scatterv, $($t:tt)*) => { scatterv!($($t)*); };
    (@ MPI_Iscatterv, $($t:tt)*) => { scatterv!($($t)*); };
    (@ MPI_Allgatherv, $($t:tt)*) => { allgatherv!($($t)*); };
    (@ MPI_Iallgatherv, $($t:tt)*) => { allgatherv!($($t)*); };
    (@ MPI_Alltoallv, $($t:tt)*) => { alltoallv!(extract::per_peer, $($t)*); };
    (@ MPI_Ialltoallv, $($t:tt)*) => { alltoallv!(extract::per_peer, $($t)*); };
    (@ MPI_Alltoallw, $($t:tt)*) => { alltoallv!(extract::per_peer_typed, $($t)*); };
    (@ MPI_Ialltoallw, $($t:tt)*) => { alltoallv!(extract::per_peer_typed, $($t)*); };
    (@ MPI_Reduce_scatter, $($t:tt)*) => { reduce_scatter!($($t)*); };
    (@ MPI_Ireduce_scatter, $($t:tt)*) => { reduce_scatter!($($t)*); };
    (@ MPI_Wait, $($t:tt)*) => { wait!($($t)*); };
    (@ MPI_Test, $($t:tt)*) => { wait!($($t)*); };
    (@ MPI_Waitall, $($t:tt)*) => { waitall!($($t)*); };
    (@ MPI_Testall, $($t:tt)*) => { waitall!($($t)*); };
    (@ MPI_Waitany, $($t:tt)*) => { waitany!($($t)*); };
    (@ MPI_Testany, $($t:tt)*) => { waitany!($($t)*); };
    (@ MPI_Waitsome, $($t:tt)*) => { waitsome!($($t)*); };
    (@ MPI_Testsome, $($t:tt)*) => { waitsome!($($t)*); };
    (@ MPI_Request_free, $($t:tt)*) => { request_free!($($t)*); };
    // A cancel names its request, which its wait completes later.
    (@ MPI_Cancel, $($t:tt)*) => { request_free!($($t)*); };
    (@ MPI_Start, $($t:tt)*) => { start!($($t)*); };
    (@ MPI_Startall, $($t:tt)*) => { start!($($t)*); };
    (@ MPI_Comm_dup, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Comm_dup_with_info, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Comm_create, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Comm_create_group, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Comm_split, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Comm_split_type, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Cart_create, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Cart_sub, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Graph_create, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Dist_graph_create, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Dist_graph_create_adjacent, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Intercomm_create, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Intercomm_merge, $($t:tt)*) => { newcomm!($($t)*); };
    (@ MPI_Comm_idup, $($t:tt)*) => { idup!($($t)*); };
    (@ MPI_Comm_free, $($t:tt)*) => { comm_free!($($t)*); };
    (@ MPI_Win_create, $($t:tt)*) => { win_create!(create $($t)*); };
    (@ MPI_Win_create_c, $($t:tt)*) => { win_create!(create $($t)*); };
    (@ MPI_Win_allocate, $($t:tt)*) => { win_create!(Allocate $($t)*); };
    (@ MPI_Win_allocate_c, $($t:tt)*) => { win_create!(Allocate $($t)*); };
    (@ MPI_Win_allocate_shared, $($t:tt)*) => { win_create!(AllocateShared $($t)*); };
    (@ MPI_Win_allocate_shared_c, $($t:tt)*) => { win_create!(AllocateShared $($t)*); };
    (@ MPI_Win_create_dynamic, $($t:tt)*) => { win_create!(dynamic $($t)*); };
    (@ MPI_Win_free, $($t:tt)*) => { win_free!($($t)*); };
    (@ MPI_Put, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Put_c, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Get, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Get_c, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Rput, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Rput_c, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Rget, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Rget_c, $($t:tt)*) => { put!($($t)*); };
    (@ MPI_Accumulate, $($t:tt)*) => { accumulate!($($t)*); };
    (@ MPI_Accumulate_c, $($t:tt)*) => { accumulate!($($t)*); };
    (@ MPI_Raccumulate, $($t:tt)*) => { accumulate!($($t)*); };
    (@ MPI_Raccumulate_c, $($t:tt)*) => { accumulate!($($t)*); };
    (@ MPI_Get_accumulate, $($t:tt)*) => { get_accumulate!($($t)*); };
    (@ MPI_Get_accumulate_c, $($t:tt)*) => { get_accumulate!($($t)*); };
    (@ MPI_Rget_accumulate, $($t:tt)*) => { get_accumulate!($($t)*); };
    (@ MPI_Rget_accumulate_c, $($t:tt)*) => { get_accumulate!($($t)*); };
    (@ MPI_Fetch_and_op, $($t:tt)*) => { fetch_and_op!($($t)*); };
    (@ MPI_Compare_and_swap, $($t:tt)*) => { compare_and_swap!($($t)*); };
    (@ MPI_Win_complete, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_wait, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_test, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_unlock_all, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_flush_all, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_flush_local_all, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_sync, $($t:tt)*) => { win_only!($($t)*); };
    (@ MPI_Win_unlock, $($t:tt)*) => { win_target!($($t)*); };
    (@ MPI_Win_flush, $($t:tt)*) => { win_target!($($t)*); };
    (@ MPI_Win_flush_local, $($t:tt)*) => { win_target!($($t)*); };
    (@ MPI_Win_fence, $($t:tt)*) => { win_assert!($($t)*); };
    (@ MPI_Win_lock_all, $($t:tt)*) => { win_assert!($($t)*); };
    (@ MPI_Win_post, $($t:tt)*) => { win_group!($($t)*); };
    (@ MPI_Win_start, $($t:tt)*) => { win_group!($($t)*); };
    (@ MPI_Win_lock, $($t:tt)*) => { win_lock!($($t)*); };
    (@ MPI_Comm_disconnect, $($t:tt)*) => { comm_free!($($t)*); };
    // The freed handle may name another type from now on.
    (@ MPI_Type_free, $($t:tt)*) => { plain!($($t)*, then { pnmpi_sdk::sizes::forget_sizes(); }); };
    (@ $mpi:ident, $($t:tt)*) => { plain!($($t)*); };
}

pnmpi_mpi_sys::for_each_routine!(wrap);
