//! vtime: runs an unmodified MPI application on a model of another
//! machine, with a virtual clock per rank, as xSim does (Böhm and
//! Engelmann), in a pnmpi chain.
//!
//! - **Processor model.** The CPU time the rank's thread spends between
//!   two MPI calls (`CLOCK_THREAD_CPUTIME_ID`), times `cpu_factor` and
//!   over the node's `cpu_ratio`, moves the clock. Time inside MPI does
//!   not; time waiting for a core does not either, so an oversubscribed
//!   run predicts what a run with a core per rank would.
//! - **Network model.** Each message's send time travels with it on a
//!   shadow communicator ([`p2p`]); a receive completes at the model's
//!   arrival time, a collective at the latest member's entry plus the
//!   model's cost ([`coll`]). The model is `pnmpi sim`'s own
//!   (`pnmpi_sim::model`), on the same machine file.
//! - **`MPI_Wtime`** returns the virtual clock, seconds since the end of
//!   `MPI_Init`; `MPI_Wtick` 1 ns. Modules above vtime in the chain see
//!   virtual time, modules below it real time.
//! - **At `MPI_Finalize`** rank 0 prints a table and writes a JSON report
//!   ([`report`]).
//!
//! Arguments: see [`config`]. The model and its limits: docs/vtime.md.

mod coll;
mod comms;
mod complete;
mod config;
mod deadlock;
mod order;
mod p2p;
mod report;
mod rma;
mod split;
mod state;
mod threads;
mod turns;

use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, raw};
use pnmpi_sim::input::VCounts;
use pnmpi_sim::kernel::coll::Member;
use pnmpi_trace::rma::DataOp;
use pnmpi_trace::routine::Coll;
use std::collections::HashMap;
use std::ffi::c_int;

// Called for MPI_Wtime and MPI_Wtick: its MPI_Wtime is the virtual clock.
pnmpi_sdk::wraps_clock!();

pnmpi_sdk::module! {
    name: "vtime",
    init: before_mpi_starts,
}

/// The `PNMPI_Init` hook: names Open MPI's shared segments uniquely, then
/// reads the configuration (or stops the run).
fn before_mpi_starts() {
    comms::unique_shared_segments();
    config::load();
}

pnmpi_sdk::wrap! {
    /// Starts the virtual clock at the end of MPI's initialization.
    fn MPI_Init(_argc, _argv) {
        start(|| next!())
    }

    /// Starts like `MPI_Init`, at the level MPI grants: under
    /// `MPI_THREAD_MULTIPLE` threads call MPI at once, each on its own
    /// clock.
    fn MPI_Init_thread(_argc, _argv, _required, provided) {
        start(|| {
            let rc = next!();
            // SAFETY: MPI wrote the granted level of a successful call.
            let granted = (rc == constants::SUCCESS() && !provided.is_null()).then(|| unsafe { *provided });
            state::set_multiple(granted == Some(constants::THREAD_MULTIPLE()));
            rc
        })
    }

    /// Reports, then finalizes.
    fn MPI_Finalize() {
        state::enter();
        if let Some(st) = state::take() {
            report::finish(&st);
        }
        p2p::drain();
        next!()
    }

    /// The virtual clock, in seconds since the end of `MPI_Init`.
    fn MPI_Wtime() {
        state::call(|timed| {
            if !timed {
                return next!();
            }
            let now = state::with(|st| st.clock).unwrap_or(0.0);
            now * 1e-9
        })
    }

    /// The virtual clock's resolution: 1 ns.
    fn MPI_Wtick() {
        if state::with(|_| ()).is_some() {
            1e-9
        } else {
            next!()
        }
    }
}

/// Runs MPI's initialization, then sets up the rank's model, shadows and
/// clock. A setup that fails after MPI started aborts the job, naming why.
fn start(init: impl FnOnce() -> c_int) -> c_int {
    pnmpi_sdk::threads::before_init();
    let rc = init();
    pnmpi_sdk::threads::after_init();
    if rc != constants::SUCCESS() {
        return rc;
    }
    if let Err(e) = setup() {
        // MPI is initialized: the job ends.
        pnmpi_sdk::say::fatal("vtime", format_args!("{e}; aborting the run"));
    }
    rc
}

fn setup() -> Result<(), String> {
    let config = config::get().ok_or("the module's PNMPI_Init hook did not run")?;
    let world = constants::COMM_WORLD();
    let rank = native::comm_rank(world).map_err(|e| e.to_string())?;
    let size = native::comm_size(world).map_err(|e| e.to_string())?;
    let (rank, size) = (rank.max(0) as u32, size.max(1) as u32);
    let machine = config.machine(size);
    let node_of = machine.place(size).map_err(|e| format!("machine {e}"))?;
    let mut model = pnmpi_sim::model::build(&config.model, &machine).map_err(|e| format!("machine {e}"))?;
    if let Some(why) = pnmpi_sim::model::unshared(
        model.as_mut(),
        "vtime runs one process per rank, each seeing only its own messages",
    ) {
        return Err(why);
    }
    let node = node_of.get(rank as usize).copied().unwrap_or(0);
    let shadow_world =
        native::comm_dup(world).map_err(|e| format!("cannot duplicate MPI_COMM_WORLD: {e}"))?;
    let ack_comm = native::comm_dup(world).map_err(|e| format!("cannot duplicate MPI_COMM_WORLD: {e}"))?;
    let shadow_self = native::comm_dup(constants::COMM_SELF())
        .map_err(|e| format!("cannot duplicate MPI_COMM_SELF: {e}"))?;
    let mut comms = HashMap::new();
    comms.insert(
        world.bits(),
        state::CommInfo {
            shadow: shadow_world.bits(),
            inter: false,
            peers: (0..size).collect(),
            nodes: node_of.clone(),
            me: rank,
        },
    );
    comms.insert(
        constants::COMM_SELF().bits(),
        state::CommInfo {
            shadow: shadow_self.bits(),
            inter: false,
            peers: vec![rank],
            nodes: vec![node],
            me: 0,
        },
    );
    let lookahead = model.lookahead();
    state::install(state::State {
        rank,
        node_of,
        model,
        machine,
        model_name: config.model.clone(),
        charge: pnmpi_sim::kernel::CpuCharge {
            factor: config.cpu_factor,
            bias: pnmpi_sdk::clock::thread_cpu_read_cost(),
        },
        recorded: state::recorded_compute(),
        clock: 0.0,
        call_start: 0.0,
        call_late: f64::NEG_INFINITY,
        threads: threads::Threads::start(pnmpi_sdk::clock::thread_cpu_ns()),
        totals: state::Totals::default(),
        comms,
        reqs: HashMap::new(),
        displaced: Vec::new(),
        messages: HashMap::new(),
        ack_comm: ack_comm.bits(),
        sends: 0,
        recvs: 0,
        channels: Default::default(),
        lookahead,
        acks: HashMap::new(),
        wall_start: pnmpi_sdk::clock::monotonic_ns(),
    });
    Ok(())
}

/// A message's size: `count` elements of `datatype`.
fn bytes<C: Into<i64>>(count: C, datatype: pnmpi_sdk::Datatype) -> u64 {
    coll::bytes(count, datatype)
}

/// Defines `MPI_X` with the routine table's C signature; the body runs in
/// the SDK's panic guard, and unsafe operations in it need their own
/// blocks.
macro_rules! export {
    ($mpi:ident, ($($a:ident : $t:ty),*) -> $r:ty, $body:block) => {
        #[doc = concat!("vtime's `", stringify!($mpi), "`.")]
        ///
        /// # Safety
        /// Called by libpnmpi with the arguments of the MPI routine it is
        /// named after.
        #[no_mangle]
        #[deny(unsafe_op_in_unsafe_fn)]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            pnmpi_sdk::hooks::guard(concat!("the vtime ", stringify!($mpi), " wrapper"), move || -> $r { $body })
        }
    };
}

/// The last of a list of identifiers.
macro_rules! last {
    ($a:ident) => { $a };
    ($a:ident, $($rest:ident),+) => { last!($($rest),+) };
}

/// The flag argument of a test, or null for a wait.
macro_rules! flag_or_null {
    () => {
        std::ptr::null_mut()
    };
    ($flag:ident) => {
        $flag
    };
}

/// A routine the model does not time: its CPU time is not the
/// application's.
macro_rules! untimed {
    ($mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            // SAFETY: the call's own arguments, unchanged, to the next layer.
            state::untimed(|| unsafe { raw::$x($($a),*) })
        });
    };
}

/// A successful send: a blocking one frees the sender's CPU, a
/// nonblocking one remembers its request.
macro_rules! send_done {
    ($posted:ident) => {
        p2p::sent($posted)
    };
    ($posted:ident, $req:ident) => {
        // SAFETY: the call succeeded, so it wrote the request.
        p2p::send_posted($posted, unsafe { *$req }.bits())
    };
}

/// A send down the chain, in the rank's posting turn `$turn`: a blocking
/// rendezvous (any blocking send under `MPI_THREAD_MULTIPLE`) as
/// [`p2p::rendezvous_send`], the others as they are.
macro_rules! send_call {
    ($turn:ident, $posted:ident, $mpi:ident, $x:ident, ($buf:ident, $n:ident, $dt:ident, $dest:ident, $tag:ident, $comm:ident)) => {
        match ($posted, p2p::small($n)) {
            // SAFETY: the call's own arguments, to its nonblocking form.
            (Some(p), Some(n)) if p2p::posted_apart(&$posted) => unsafe {
                p2p::rendezvous_send(stringify!($mpi), $buf, n, $dt, $dest, $tag, $comm, p, $turn)
            },
            _ => {
                // An untimed send needs no turn; a large-count one keeps it.
                let $turn = $turn.filter(|_| $posted.is_some());
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($buf, $n, $dt, $dest, $tag, $comm) };
                drop($turn);
                if rc == constants::SUCCESS() {
                    send_done!($posted);
                }
                rc
            }
        }
    };
    ($turn:ident, $posted:ident, $mpi:ident, $x:ident, ($($a:ident),*), $req:ident) => {{
        // SAFETY: the call's own arguments, unchanged, to the next layer.
        let rc = unsafe { raw::$x($($a),*, $req) };
        drop($turn);
        if rc == constants::SUCCESS() {
            send_done!($posted, $req);
        }
        rc
    }};
}

/// Send, Bsend, Ssend, Rsend and their nonblocking forms.
macro_rules! send {
    ($mpi:ident, $x:ident, ($buf:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $dest:ident: $td:ty,
        $tag:ident: $tt:ty, $comm:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        export!($mpi, ($buf: $tb, $n: $tn, $dt: $tdt, $dest: $td, $tag: $tt, $comm: $tc $(, $req: $tr)?) -> $r, {
            state::call(|timed| {
                // The timestamp and the send go down in one turn of the rank.
                let turn = turns::posting();
                let posted = if timed { p2p::post_send($comm, $dest, $tag, bytes($n, $dt), p2p::Mode::of(stringify!($mpi))) } else { None };
                send_call!(turn, posted, $mpi, $x, ($buf, $n, $dt, $dest, $tag, $comm) $(, $req)?)
            })
        });
    };
}

/// Send_init, Bsend_init, Ssend_init, Rsend_init.
macro_rules! send_init {
    ($mpi:ident, $x:ident, ($buf:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $dest:ident: $td:ty,
        $tag:ident: $tt:ty, $comm:ident: $tc:ty, $req:ident: $tr:ty) -> $r:ty) => {
        export!($mpi, ($buf: $tb, $n: $tn, $dt: $tdt, $dest: $td, $tag: $tt, $comm: $tc, $req: $tr) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($buf, $n, $dt, $dest, $tag, $comm, $req) };
                if timed && rc == constants::SUCCESS() {
                    let send = state::PersistentSend { comm: $comm.bits(), dest: $dest, tag: $tag, bytes: bytes($n, $dt), mode: p2p::Mode::of(stringify!($mpi)) };
                    // SAFETY: the call succeeded, so it wrote the request.
                    p2p::send_init(unsafe { *$req }.bits(), send);
                }
                rc
            })
        });
    };
}

/// Recv; under `MPI_THREAD_MULTIPLE` as its nonblocking form `$irecv`
/// and a wait ([`split::recv`]).
macro_rules! recv {
    ($irecv:ident, $mpi:ident, $x:ident, ($buf:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $src:ident: $ts:ty,
        $tag:ident: $tt:ty, $comm:ident: $tc:ty, $st:ident: $tst:ty) -> $r:ty) => {
        export!($mpi, ($buf: $tb, $n: $tn, $dt: $tdt, $src: $ts, $tag: $tt, $comm: $tc, $st: $tst) -> $r, {
            state::call(|timed| {
                if timed && state::multiple() {
                    // SAFETY: the call's own arguments, to its nonblocking form.
                    return unsafe {
                        split::recv($comm, ($src, $tag), $st, |req| raw::$irecv($buf, $n, $dt, $src, $tag, $comm, req))
                    };
                }
                let posted = state::with(|s| s.clock);
                let mut own = state::blank_status();
                let status = if $st == constants::STATUS_IGNORE() { &raw mut own } else { $st };
                // SAFETY: the call's own arguments, with a status of ours if
                // the application ignores it.
                let rc = unsafe { raw::$x($buf, $n, $dt, $src, $tag, $comm, status) };
                if let (true, Some(posted)) = (rc == constants::SUCCESS(), posted) {
                    // SAFETY: MPI filled `status` for this receive.
                    unsafe { p2p::received($comm.bits(), status, posted) };
                }
                rc
            })
        });
    };
}

/// Irecv and Recv_init (`$persistent`).
macro_rules! irecv {
    ($persistent:literal, $mpi:ident, $x:ident, ($buf:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $src:ident: $ts:ty, $tag:ident: $tt:ty, $comm:ident: $tc:ty, $req:ident: $tr:ty) -> $r:ty) => {
        export!($mpi, ($buf: $tb, $n: $tn, $dt: $tdt, $src: $ts, $tag: $tt, $comm: $tc, $req: $tr) -> $r, {
            state::call(|timed| {
                // Numbered and posted in one turn of the rank.
                let _turn = turns::posting();
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($buf, $n, $dt, $src, $tag, $comm, $req) };
                if timed && rc == constants::SUCCESS() && $src != constants::PROC_NULL() {
                    // SAFETY: the call succeeded, so it wrote the request.
                    p2p::recv_posted($comm, unsafe { *$req }.bits(), $persistent, ($src, $tag));
                }
                rc
            })
        });
    };
}

/// Sendrecv; under `MPI_THREAD_MULTIPLE` as `$irecv`, `$isend` and a
/// wait ([`split::sendrecv`]).
macro_rules! sendrecv {
    ($irecv:ident, $isend:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty, $dest:ident: $td:ty,
        $stag:ident: $tstag:ty, $rb:ident: $trb:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $src:ident: $tsrc:ty,
        $rtag:ident: $trtag:ty, $comm:ident: $tc:ty, $st:ident: $tst:ty) -> $r:ty) => {
        export!($mpi, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $dest: $td, $stag: $tstag, $rb: $trb, $rn: $trn,
            $rdt: $trdt, $src: $tsrc, $rtag: $trtag, $comm: $tc, $st: $tst) -> $r, {
            state::call(|timed| {
                if timed && state::multiple() {
                    // SAFETY: the call's own arguments, to its nonblocking forms.
                    return unsafe {
                        split::sendrecv($comm, ($dest, $stag, bytes($sn, $sdt)), ($src, $rtag), $st,
                            |req| raw::$irecv($rb, $rn, $rdt, $src, $rtag, $comm, req),
                            |req| raw::$isend($sb, $sn, $sdt, $dest, $stag, $comm, req))
                    };
                }
                let posted = state::with(|s| s.clock);
                let sent = if timed { p2p::post_send($comm, $dest, $stag, bytes($sn, $sdt), p2p::Mode::Standard) } else { None };
                let mut own = state::blank_status();
                let status = if $st == constants::STATUS_IGNORE() { &raw mut own } else { $st };
                // SAFETY: the call's own arguments, with a status of ours if
                // the application ignores it.
                let rc = unsafe { raw::$x($sb, $sn, $sdt, $dest, $stag, $rb, $rn, $rdt, $src, $rtag, $comm, status) };
                if let (true, Some(posted)) = (rc == constants::SUCCESS(), posted) {
                    // SAFETY: MPI filled `status` for the receive.
                    unsafe { p2p::received($comm.bits(), status, posted) };
                    p2p::sent(sent);
                }
                rc
            })
        });
    };
}

/// Sendrecv_replace.
macro_rules! sendrecv_replace {
    ($mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $dest:ident: $td:ty,
        $stag:ident: $tstag:ty, $src:ident: $tsrc:ty, $rtag:ident: $trtag:ty, $comm:ident: $tc:ty,
        $st:ident: $tst:ty) -> $r:ty) => {
        export!($mpi, ($b: $tb, $n: $tn, $dt: $tdt, $dest: $td, $stag: $tstag, $src: $tsrc, $rtag: $trtag,
            $comm: $tc, $st: $tst) -> $r, {
            state::call(|timed| {
                if let (true, Some(n)) = (timed && state::multiple(), p2p::small($n)) {
                    // SAFETY: the call's own arguments ([`split::sendrecv_replace`]).
                    return unsafe { split::sendrecv_replace($b, n, $dt, ($dest, $stag), ($src, $rtag), $comm, $st) };
                }
                let posted = state::with(|s| s.clock);
                let sent = if timed { p2p::post_send($comm, $dest, $stag, bytes($n, $dt), p2p::Mode::Standard) } else { None };
                let mut own = state::blank_status();
                let status = if $st == constants::STATUS_IGNORE() { &raw mut own } else { $st };
                // SAFETY: the call's own arguments, with a status of ours if
                // the application ignores it.
                let rc = unsafe { raw::$x($b, $n, $dt, $dest, $stag, $src, $rtag, $comm, status) };
                if let (true, Some(posted)) = (rc == constants::SUCCESS(), posted) {
                    // SAFETY: MPI filled `status` for the receive.
                    unsafe { p2p::received($comm.bits(), status, posted) };
                    p2p::sent(sent);
                }
                rc
            })
        });
    };
}

/// Mprobe (`(source, tag, comm, message, status)`) and Improbe (with a
/// flag before the message).
macro_rules! mprobe {
    (@ $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty,
        ($src:ident, $tag:ident, $comm:ident, [$($flag:ident)?], $msg:ident, $st:ident)) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                let mut own = state::blank_status();
                let status = if $st == constants::STATUS_IGNORE() { &raw mut own } else { $st };
                // SAFETY: the call's own arguments, with a status of ours if
                // the application ignores it.
                let rc = unsafe { raw::$x($src, $tag, $comm, $($flag,)? $msg, status) };
                #[allow(unused_mut)]
                let mut found = timed && rc == constants::SUCCESS();
                // SAFETY: MPI wrote the flag of a successful call.
                $(found = found && unsafe { *$flag } != 0;)?
                if found {
                    // SAFETY: MPI wrote the message and the status.
                    unsafe { p2p::matched($comm, (*$msg).bits(), (*status).MPI_SOURCE) };
                }
                rc
            })
        });
    };
    ($mpi:ident, $x:ident, ($src:ident: $ts:ty, $tag:ident: $tt:ty, $comm:ident: $tc:ty, $msg:ident: $tm:ty,
        $st:ident: $tst:ty) -> $r:ty) => {
        mprobe!(@ $mpi, $x, ($src: $ts, $tag: $tt, $comm: $tc, $msg: $tm, $st: $tst) -> $r,
            ($src, $tag, $comm, [], $msg, $st));
    };
    ($mpi:ident, $x:ident, ($src:ident: $ts:ty, $tag:ident: $tt:ty, $comm:ident: $tc:ty, $flag:ident: $tf:ty,
        $msg:ident: $tm:ty, $st:ident: $tst:ty) -> $r:ty) => {
        mprobe!(@ $mpi, $x, ($src: $ts, $tag: $tt, $comm: $tc, $flag: $tf, $msg: $tm, $st: $tst) -> $r,
            ($src, $tag, $comm, [$flag], $msg, $st));
    };
}

/// Mrecv (`(buf, count, type, message, status)`).
macro_rules! mrecv {
    ($mpi:ident, $x:ident, ($buf:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $msg:ident: $tm:ty,
        $st:ident: $tst:ty) -> $r:ty) => {
        export!($mpi, ($buf: $tb, $n: $tn, $dt: $tdt, $msg: $tm, $st: $tst) -> $r, {
            state::call(|timed| {
                // SAFETY: the application's message handle.
                let matched = if timed && !$msg.is_null() { p2p::take_message(unsafe { *$msg }.bits()) } else { None };
                let mut own = state::blank_status();
                let status = if $st == constants::STATUS_IGNORE() { &raw mut own } else { $st };
                // SAFETY: the call's own arguments, with a status of ours if
                // the application ignores it.
                let rc = unsafe { raw::$x($buf, $n, $dt, $msg, status) };
                if let (true, Some((comm, posted))) = (rc == constants::SUCCESS(), matched) {
                    // SAFETY: MPI filled `status` for the receive.
                    unsafe { p2p::received(comm, status, posted) };
                }
                rc
            })
        });
    };
}

/// Imrecv (`(buf, count, type, message, request)`).
macro_rules! imrecv {
    ($mpi:ident, $x:ident, ($buf:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $msg:ident: $tm:ty,
        $req:ident: $tr:ty) -> $r:ty) => {
        export!($mpi, ($buf: $tb, $n: $tn, $dt: $tdt, $msg: $tm, $req: $tr) -> $r, {
            state::call(|timed| {
                // SAFETY: the application's message handle.
                let matched = if timed && !$msg.is_null() { p2p::take_message(unsafe { *$msg }.bits()) } else { None };
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($buf, $n, $dt, $msg, $req) };
                if let (true, Some((comm, posted))) = (rc == constants::SUCCESS(), matched) {
                    // SAFETY: the call succeeded, so it wrote the request.
                    p2p::mrecv_posted(comm, posted, unsafe { *$req }.bits());
                }
                rc
            })
        });
    };
}

/// Start (`(request)`) and Startall (`(count, requests)`).
macro_rules! start {
    (@ $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, $count:expr, $req:ident) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                // Timestamps and posts in one turn of the rank.
                let _turn = turns::posting();
                if timed && !$req.is_null() {
                    let count: c_int = $count;
                    for i in 0..count.max(0) as usize {
                        // SAFETY: the application's `count` requests.
                        p2p::start(unsafe { *$req.add(i) }.bits());
                    }
                }
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($($a),*) };
                rc
            })
        });
    };
    ($mpi:ident, $x:ident, ($req:ident: $tr:ty) -> $r:ty) => {
        start!(@ $mpi, $x, ($req: $tr) -> $r, 1, $req);
    };
    ($mpi:ident, $x:ident, ($n:ident: $tn:ty, $req:ident: $tr:ty) -> $r:ty) => {
        start!(@ $mpi, $x, ($n: $tn, $req: $tr) -> $r, $n, $req);
    };
}

/// Wait (`(request, status)`) and Test (`(request, flag, status)`).
macro_rules! wait_one {
    (@ $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, ($req:ident, [$($flag:ident)?], $st:ident)) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            let flag: *mut c_int = flag_or_null!($($flag)?);
            // SAFETY: the application's arguments, valid for the call;
            // `real` passes them on with the status to use.
            unsafe { complete::one($req, flag, $st, |status| raw::$x($req, $($flag,)? status)) }
        });
    };
    ($mpi:ident, $x:ident, ($req:ident: $tr:ty, $st:ident: $tst:ty) -> $r:ty) => {
        wait_one!(@ $mpi, $x, ($req: $tr, $st: $tst) -> $r, ($req, [], $st));
    };
    ($mpi:ident, $x:ident, ($req:ident: $tr:ty, $flag:ident: $tf:ty, $st:ident: $tst:ty) -> $r:ty) => {
        wait_one!(@ $mpi, $x, ($req: $tr, $flag: $tf, $st: $tst) -> $r, ($req, [$flag], $st));
    };
}

/// Waitall (`(count, requests, statuses)`) and Testall (with a flag).
macro_rules! wait_all {
    (@ $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, ($n:ident, $req:ident, [$($flag:ident)?], $st:ident)) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            let flag: *mut c_int = flag_or_null!($($flag)?);
            // SAFETY: as for wait_one.
            unsafe { complete::all($n, $req, flag, $st, |statuses| raw::$x($n, $req, $($flag,)? statuses)) }
        });
    };
    ($mpi:ident, $x:ident, ($n:ident: $tn:ty, $req:ident: $tr:ty, $st:ident: $tst:ty) -> $r:ty) => {
        wait_all!(@ $mpi, $x, ($n: $tn, $req: $tr, $st: $tst) -> $r, ($n, $req, [], $st));
    };
    ($mpi:ident, $x:ident, ($n:ident: $tn:ty, $req:ident: $tr:ty, $flag:ident: $tf:ty, $st:ident: $tst:ty) -> $r:ty) => {
        wait_all!(@ $mpi, $x, ($n: $tn, $req: $tr, $flag: $tf, $st: $tst) -> $r, ($n, $req, [$flag], $st));
    };
}

/// Waitany (`(count, requests, index, status)`) and Testany (with a flag).
macro_rules! wait_any {
    (@ $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty,
        ($n:ident, $req:ident, $idx:ident, [$($flag:ident)?], $st:ident)) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            let flag: *mut c_int = flag_or_null!($($flag)?);
            // SAFETY: as for wait_one.
            unsafe { complete::any($n, $req, $idx, flag, $st, |status| raw::$x($n, $req, $idx, $($flag,)? status)) }
        });
    };
    ($mpi:ident, $x:ident, ($n:ident: $tn:ty, $req:ident: $tr:ty, $idx:ident: $ti:ty, $st:ident: $tst:ty) -> $r:ty) => {
        wait_any!(@ $mpi, $x, ($n: $tn, $req: $tr, $idx: $ti, $st: $tst) -> $r, ($n, $req, $idx, [], $st));
    };
    ($mpi:ident, $x:ident, ($n:ident: $tn:ty, $req:ident: $tr:ty, $idx:ident: $ti:ty, $flag:ident: $tf:ty,
        $st:ident: $tst:ty) -> $r:ty) => {
        wait_any!(@ $mpi, $x, ($n: $tn, $req: $tr, $idx: $ti, $flag: $tf, $st: $tst) -> $r,
            ($n, $req, $idx, [$flag], $st));
    };
}

/// Waitsome and Testsome (`(count, requests, outcount, indices, statuses)`).
macro_rules! wait_some {
    ($mpi:ident, $x:ident, ($n:ident: $tn:ty, $req:ident: $tr:ty, $out:ident: $to:ty, $idx:ident: $ti:ty,
        $st:ident: $tst:ty) -> $r:ty) => {
        export!($mpi, ($n: $tn, $req: $tr, $out: $to, $idx: $ti, $st: $tst) -> $r, {
            // SAFETY: as for wait_one.
            unsafe { complete::some($n, $req, $out, $idx, $st, |statuses| raw::$x($n, $req, $out, $idx, statuses)) }
        });
    };
}

/// Request_free and Cancel (`(request)`), through `$what`.
macro_rules! request {
    ($what:ident, $mpi:ident, $x:ident, ($req:ident: $tr:ty) -> $r:ty) => {
        export!($mpi, ($req: $tr) -> $r, {
            state::call(|timed| {
                // SAFETY: the application's request.
                let handle = if $req.is_null() { None } else { Some(unsafe { *$req }.bits()) };
                if let (true, Some(h)) = (timed, handle) {
                    p2p::$what(h);
                }
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($req) };
                rc
            })
        });
    };
}

/// A routine whose last argument receives a new communicator.
macro_rules! creates {
    ($mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty $(, then $then:path)?) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($($a),*) };
                let out = last!($($a),*);
                if timed && rc == constants::SUCCESS() && !out.is_null() {
                    // SAFETY: the call succeeded, so it wrote the communicator.
                    let made = unsafe { *out };
                    comms::created(made);
                    // SAFETY: as above: the application's out-pointer.
                    $($then(unsafe { &mut *out });)?
                }
                rc
            })
        });
    };
}

/// Comm_free and Comm_disconnect (`(comm)`).
macro_rules! frees {
    ($mpi:ident, $x:ident, ($c:ident: $tc:ty) -> $r:ty) => {
        export!($mpi, ($c: $tc) -> $r, {
            state::call(|timed| {
                // SAFETY: the application's communicator.
                let old = if $c.is_null() { None } else { Some(unsafe { *$c }) };
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($c) };
                if let (true, Some(old)) = (timed && rc == constants::SUCCESS(), old) {
                    comms::freed(old);
                }
                rc
            })
        });
    };
}

/// A window's creation (`$c` its communicator; the window the last
/// argument): the window gets its fences' communicator.
macro_rules! win_creates {
    ($mpi:ident, $x:ident, $c:ident, ($($a:ident : $t:ty),*) -> $r:ty) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($($a),*) };
                let out = last!($($a),*);
                if timed && rc == constants::SUCCESS() && !out.is_null() {
                    // SAFETY: the call succeeded, so it wrote the window.
                    let win = unsafe { *out }.bits();
                    rma::created(win, $c);
                    rma::synchronize(win);
                }
                rc
            })
        });
    };
}

/// Win_create (`(base, size, disp_unit, info, comm, win)`).
macro_rules! win_create {
    ($mpi:ident, $x:ident, ($b:ident: $tb:ty, $s:ident: $ts:ty, $d:ident: $td:ty, $i:ident: $ti:ty,
        $c:ident: $tc:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_creates!($mpi, $x, $c, ($b: $tb, $s: $ts, $d: $td, $i: $ti, $c: $tc, $w: $tw) -> $r);
    };
}

/// Win_allocate, Win_allocate_shared (`(size, disp_unit, info, comm,
/// baseptr, win)`).
macro_rules! win_allocate {
    ($mpi:ident, $x:ident, ($s:ident: $ts:ty, $d:ident: $td:ty, $i:ident: $ti:ty, $c:ident: $tc:ty,
        $b:ident: $tb:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_creates!($mpi, $x, $c, ($s: $ts, $d: $td, $i: $ti, $c: $tc, $b: $tb, $w: $tw) -> $r);
    };
}

/// Win_create_dynamic (`(info, comm, win)`).
macro_rules! win_dynamic {
    ($mpi:ident, $x:ident, ($i:ident: $ti:ty, $c:ident: $tc:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_creates!($mpi, $x, $c, ($i: $ti, $c: $tc, $w: $tw) -> $r);
    };
}

/// Win_free (`(win)`).
macro_rules! win_frees {
    ($mpi:ident, $x:ident, ($w:ident: $tw:ty) -> $r:ty) => {
        export!($mpi, ($w: $tw) -> $r, {
            state::call(|timed| {
                // SAFETY: the application's window.
                let old = if $w.is_null() { None } else { Some(unsafe { *$w }.bits()) };
                if let (true, Some(old)) = (timed, old) {
                    rma::synchronize(old);
                }
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($w) };
                if let (true, Some(old)) = (timed && rc == constants::SUCCESS(), old) {
                    rma::freed(old);
                }
                rc
            })
        });
    };
}

/// The request a request form (`MPI_Rput` ...) wrote, or `None`.
macro_rules! request_of {
    () => {
        None
    };
    ($req:ident) => {
        // SAFETY: the call succeeded, so it wrote the request.
        Some(unsafe { *$req }.bits())
    };
}

/// A one-sided data operation `$op` to rank `$target` of window `$win`,
/// moving `$bytes` there and `$rbytes` back (the fetching ones).
macro_rules! rma_data {
    ($op:ident, $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, $target:ident, $win:ident,
        $bytes:expr, $rbytes:expr $(, $req:ident)?) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($($a),*) };
                if timed && rc == constants::SUCCESS() {
                    let req: Option<u64> = request_of!($($req)?);
                    rma::issue($win.bits(), $target, DataOp::$op, ($bytes, $rbytes), req);
                }
                rc
            })
        });
    };
}

/// Put, Get and their request forms (`(origin, count, type, target,
/// disp, target count, target type, win[, request])`).
macro_rules! put_like {
    ($op:ident, $mpi:ident, $x:ident, ($oa:ident: $toa:ty, $on:ident: $ton:ty, $odt:ident: $todt:ty,
        $tr:ident: $ttr:ty, $td:ident: $ttd:ty, $tn:ident: $ttn:ty, $tdt:ident: $ttdt:ty, $w:ident: $tw:ty
        $(, $req:ident: $treq:ty)?) -> $r:ty) => {
        rma_data!($op, $mpi, $x, ($oa: $toa, $on: $ton, $odt: $todt, $tr: $ttr, $td: $ttd, $tn: $ttn,
            $tdt: $ttdt, $w: $tw $(, $req: $treq)?) -> $r, $tr, $w, coll::bytes($on, $odt), 0 $(, $req)?);
    };
}

/// Accumulate, Raccumulate (`(origin, count, type, target, disp, target
/// count, target type, op, win[, request])`).
macro_rules! accumulate {
    ($op:ident, $mpi:ident, $x:ident, ($oa:ident: $toa:ty, $on:ident: $ton:ty, $odt:ident: $todt:ty,
        $tr:ident: $ttr:ty, $td:ident: $ttd:ty, $tn:ident: $ttn:ty, $tdt:ident: $ttdt:ty, $o:ident: $to:ty,
        $w:ident: $tw:ty $(, $req:ident: $treq:ty)?) -> $r:ty) => {
        rma_data!($op, $mpi, $x, ($oa: $toa, $on: $ton, $odt: $todt, $tr: $ttr, $td: $ttd, $tn: $ttn,
            $tdt: $ttdt, $o: $to, $w: $tw $(, $req: $treq)?) -> $r, $tr, $w, coll::bytes($on, $odt), 0
            $(, $req)?);
    };
}

/// Get_accumulate, Rget_accumulate (`(origin, count, type, result,
/// count, type, target, disp, target count, target type, op, win[,
/// request])`).
macro_rules! get_accumulate {
    ($op:ident, $mpi:ident, $x:ident, ($oa:ident: $toa:ty, $on:ident: $ton:ty, $odt:ident: $todt:ty,
        $ra:ident: $tra:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $tr:ident: $ttr:ty, $td:ident: $ttd:ty,
        $tn:ident: $ttn:ty, $tdt:ident: $ttdt:ty, $o:ident: $to:ty, $w:ident: $tw:ty
        $(, $req:ident: $treq:ty)?) -> $r:ty) => {
        rma_data!($op, $mpi, $x, ($oa: $toa, $on: $ton, $odt: $todt, $ra: $tra, $rn: $trn, $rdt: $trdt,
            $tr: $ttr, $td: $ttd, $tn: $ttn, $tdt: $ttdt, $o: $to, $w: $tw $(, $req: $treq)?) -> $r,
            $tr, $w, coll::bytes($on, $odt), coll::bytes($rn, $rdt) $(, $req)?);
    };
}

/// Fetch_and_op (`(origin, result, type, target, disp, op, win)`): one
/// element there and back.
macro_rules! fetch_and_op {
    ($op:ident, $mpi:ident, $x:ident, ($oa:ident: $toa:ty, $ra:ident: $tra:ty, $dt:ident: $tdt:ty,
        $tr:ident: $ttr:ty, $td:ident: $ttd:ty, $o:ident: $to:ty, $w:ident: $tw:ty) -> $r:ty) => {
        rma_data!($op, $mpi, $x, ($oa: $toa, $ra: $tra, $dt: $tdt, $tr: $ttr, $td: $ttd, $o: $to, $w: $tw) -> $r,
            $tr, $w, coll::bytes(1, $dt), coll::bytes(1, $dt));
    };
}

/// Compare_and_swap (`(origin, compare, result, type, target, disp,
/// win)`): two elements there, one back.
macro_rules! compare_and_swap {
    ($op:ident, $mpi:ident, $x:ident, ($oa:ident: $toa:ty, $ca:ident: $tca:ty, $ra:ident: $tra:ty,
        $dt:ident: $tdt:ty, $tr:ident: $ttr:ty, $td:ident: $ttd:ty, $w:ident: $tw:ty) -> $r:ty) => {
        rma_data!($op, $mpi, $x, ($oa: $toa, $ca: $tca, $ra: $tra, $dt: $tdt, $tr: $ttr, $td: $ttd, $w: $tw) -> $r,
            $tr, $w, coll::bytes(2, $dt), coll::bytes(1, $dt));
    };
}

/// Win_fence (`(assert, win)`).
macro_rules! win_fence {
    ($mpi:ident, $x:ident, ($a:ident: $ta:ty, $w:ident: $tw:ty) -> $r:ty) => {
        export!($mpi, ($a: $ta, $w: $tw) -> $r, {
            // SAFETY: the call's own arguments, unchanged, to the next layer.
            rma::fence($w.bits(), || unsafe { raw::$x($a, $w) })
        });
    };
}

/// Win_post, Win_start (`(group, assert, win)`): the epoch's
/// notifications, once the call returned.
macro_rules! win_opens {
    ($side:ident, $mpi:ident, $x:ident, ($g:ident: $tg:ty, $a:ident: $ta:ty, $w:ident: $tw:ty) -> $r:ty) => {
        export!($mpi, ($g: $tg, $a: $ta, $w: $tw) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($g, $a, $w) };
                if timed && rc == constants::SUCCESS() {
                    rma::opened($w, $g, rma::Side::$side);
                }
                rc
            })
        });
    };
}

/// Win_complete, Win_wait (`(win)`) and Win_test (`(win, flag)`: once it
/// ended the epoch).
macro_rules! win_closes {
    ($then:ident, $mpi:ident, $x:ident, ($w:ident: $tw:ty $(, $f:ident: $tf:ty)?) -> $r:ty) => {
        export!($mpi, ($w: $tw $(, $f: $tf)?) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($w $(, $f)?) };
                // SAFETY: a test's flag, which MPI set as the call succeeded.
                let ended = true $(&& unsafe { *$f } != 0)?;
                if timed && rc == constants::SUCCESS() && ended {
                    rma::$then($w.bits());
                }
                rc
            })
        });
    };
}

/// Unlock, Flush, Flush_local (`(rank, win)`) and their `_all` forms
/// (`(win)`): the operations they complete are done when they return
/// (`rma::$then`: `settle`, or `unlocked`, which also releases the lock).
macro_rules! win_settles {
    ($then:ident, $mpi:ident, $x:ident, ($t:ident: $tt:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_settles!(@ $then, $mpi, $x, ($t: $tt, $w: $tw) -> $r, $w, Some($t));
    };
    ($then:ident, $mpi:ident, $x:ident, ($w:ident: $tw:ty) -> $r:ty) => {
        win_settles!(@ $then, $mpi, $x, ($w: $tw) -> $r, $w, None);
    };
    (@ $then:ident, $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, $w:ident, $target:expr) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                let rc = unsafe { raw::$x($($a),*) };
                if timed && rc == constants::SUCCESS() {
                    rma::$then($w, $target);
                }
                rc
            })
        });
    };
}

/// Lock (`(lock_type, rank, assert, win)`) and Lock_all (`(assert,
/// win)`): the lock is handed over by its holders before, in the order
/// vtime's own lock of the window's shadow gives (`rma::lock`), before
/// the call goes on.
macro_rules! win_lock {
    ($mpi:ident, $x:ident, ($l:ident: $tl:ty, $t:ident: $tt:ty, $a:ident: $ta:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_lock!(@ $mpi, $x, ($l: $tl, $t: $tt, $a: $ta, $w: $tw) -> $r, $w, Some(($t, $l == constants::LOCK_EXCLUSIVE())));
    };
    ($mpi:ident, $x:ident, ($a:ident: $ta:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_lock!(@ $mpi, $x, ($a: $ta, $w: $tw) -> $r, $w, None);
    };
    (@ $mpi:ident, $x:ident, ($($a:ident : $t:ty),*) -> $r:ty, $w:ident, $which:expr) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            state::call(|timed| {
                if timed {
                    rma::lock($w, $which);
                }
                // SAFETY: the call's own arguments, unchanged, to the next layer.
                unsafe { raw::$x($($a),*) }
            })
        });
    };
}

/// A rooted collective's root argument, or `None`.
macro_rules! root_of {
    () => {
        None
    };
    ($root:ident) => {
        Some($root)
    };
}

/// Times a collective: blocking, or nonblocking with a request.
macro_rules! coll_call {
    ($comm:ident, $coll:expr, $root:ident, $part:ident, $real:ident) => {
        coll::blocking($comm, $coll, $root, $part, $real)
    };
    ($comm:ident, $coll:expr, $root:ident, $part:ident, $real:ident, $req:ident) => {
        // SAFETY: the application's request argument of `real`.
        unsafe { coll::nonblocking($comm, $coll, $root, $part, $req, $real) }
    };
}

/// A collective: blocking, or nonblocking with a request after `comm`.
/// `$part` gives the member's (vector?, bytes sent, bytes received,
/// per-peer bytes), which the kernel's rule turns into its part
/// ([`coll::part`]).
macro_rules! collective {
    ($mpi:ident, $x:ident, $coll:ident, ($($a:ident : $t:ty),*) -> $r:ty, $comm:ident, ($($req:ident)?),
        [$($root:ident)?], $part:expr) => {
        export!($mpi, ($($a: $t),*) -> $r, {
            #[allow(unused_variables)]
            let root: Option<c_int> = root_of!($($root)?);
            let part = || -> Member {
                let (vector, send, recv, counts): (bool, u64, u64, Option<VCounts>) = $part;
                coll::part($comm, Coll::$coll, vector, send, recv, counts)
            };
            // SAFETY: the call's own arguments, unchanged, to the next layer.
            let real = || unsafe { raw::$x($($a),*) };
            coll_call!($comm, Coll::$coll, root, part, real $(, $req)?)
        });
    };
}

/// A collective of one size, `bytes` both ways.
fn one(bytes: u64) -> (bool, u64, u64, Option<VCounts>) {
    (false, bytes, bytes, None)
}

/// A `v` collective's sizes: what it sends and receives, each side's
/// per-peer bytes summed where it has them (`send`, `recv`; empty: a
/// side not significant here, or a single count), else `mine`.
fn vector(mine: u64, send: Vec<u64>, recv: Vec<u64>) -> (bool, u64, u64, Option<VCounts>) {
    let sum = |v: &[u64]| if v.is_empty() { mine } else { v.iter().sum() };
    (true, sum(&send), sum(&recv), Some(VCounts { send, recv }))
}

/// Barrier (`(comm)`), Ibarrier.
macro_rules! barrier {
    ($coll:ident, $mpi:ident, $x:ident, ($c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [], one(0));
    };
}

/// Bcast (`(buf, count, type, root, comm)`).
macro_rules! bcast {
    ($coll:ident, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty,
        $root:ident: $tro:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($b: $tb, $n: $tn, $dt: $tdt, $root: $tro, $c: $tc $(, $req: $tr)?) -> $r,
            $c, ($($req)?), [$root], one(bytes($n, $dt)));
    };
}

/// Reduce (`(sbuf, rbuf, count, type, op, root, comm)`).
macro_rules! reduce {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $n:ident: $tn:ty,
        $dt:ident: $tdt:ty, $op:ident: $top:ty, $root:ident: $tro:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?)
        -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $rb: $trb, $n: $tn, $dt: $tdt, $op: $top, $root: $tro, $c: $tc
            $(, $req: $tr)?) -> $r, $c, ($($req)?), [$root], one(bytes($n, $dt)));
    };
}

/// Allreduce, Scan, Exscan (`(sbuf, rbuf, count, type, op, comm)`), and
/// Reduce_scatter_block (the count of a block: the rule takes the whole
/// vector, a block per process).
macro_rules! allreduce {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $n:ident: $tn:ty,
        $dt:ident: $tdt:ty, $op:ident: $top:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $rb: $trb, $n: $tn, $dt: $tdt, $op: $top, $c: $tc
            $(, $req: $tr)?) -> $r, $c, ($($req)?), [], one(bytes($n, $dt)));
    };
}

/// Reduce_scatter (`(sbuf, rbuf, rcounts, type, op, comm)`): the sum of
/// the counts and each process's share, as the tracer records them.
macro_rules! reduce_scatter {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $rb:ident: $trb:ty, $ns:ident: $tn:ty,
        $dt:ident: $tdt:ty, $op:ident: $top:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $rb: $trb, $ns: $tn, $dt: $tdt, $op: $top, $c: $tc
            $(, $req: $tr)?) -> $r, $c, ($($req)?), [],
            {
                // SAFETY: one receive count per process of the communicator.
                let shares = unsafe { coll::per_peer($ns, coll::size($c), $dt) };
                let whole = shares.iter().sum();
                (true, whole, whole, Some(VCounts { send: Vec::new(), recv: shares }))
            });
    };
}

/// Gather and Scatter (`(sbuf, scount, stype, rbuf, rcount, rtype, root,
/// comm)`): one process's block. In place (Gather's root, Scatter's),
/// the other side's arguments describe the block it contributes or keeps.
macro_rules! gather {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty,
        $rb:ident: $trb:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $root:ident: $tro:ty, $c:ident: $tc:ty
        $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rn: $trn, $rdt: $trdt,
            $root: $tro, $c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [$root], {
            let (send, recv) = (bytes($sn, $sdt), bytes($rn, $rdt));
            let send_of = if coll::in_place($sb) { recv } else { send };
            let recv_of = if coll::in_place($rb.cast_const()) { send } else { recv };
            (false, send_of, recv_of, None)
        });
    };
}

/// Allgather and Alltoall (`(sbuf, scount, stype, rbuf, rcount, rtype,
/// comm)`): one block (in place, as the receive side describes it).
macro_rules! allgather {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty,
        $rb:ident: $trb:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?)
        -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rn: $trn, $rdt: $trdt,
            $c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [], {
            let recv = bytes($rn, $rdt);
            let send = if coll::in_place($sb) { recv } else { bytes($sn, $sdt) };
            (false, send, recv, None)
        });
    };
}

/// Gatherv (`(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root,
/// comm)`): this process's contribution, and at the root every one.
macro_rules! gatherv {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty,
        $rb:ident: $trb:ty, $rns:ident: $trn:ty, $dis:ident: $tdis:ty, $rdt:ident: $trdt:ty,
        $root:ident: $tro:ty, $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rns: $trn, $dis: $tdis,
            $rdt: $trdt, $root: $tro, $c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [$root], {
            let me = coll::rank($c);
            let mine = if coll::in_place($sb) {
                // SAFETY: in place (at the root), the receive counts are significant.
                bytes(unsafe { coll::at($rns, me) }, $rdt)
            } else {
                bytes($sn, $sdt)
            };
            if me == $root {
                // SAFETY: at the root, one receive count per process.
                vector(mine, Vec::new(), unsafe { coll::per_peer($rns, coll::size($c), $rdt) })
            } else {
                (true, mine, 0, None)
            }
        });
    };
}

/// Allgatherv (`(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
/// comm)`): this process's contribution, and every one.
macro_rules! allgatherv {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sn:ident: $tsn:ty, $sdt:ident: $tsdt:ty,
        $rb:ident: $trb:ty, $rns:ident: $trn:ty, $dis:ident: $tdis:ty, $rdt:ident: $trdt:ty,
        $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $sn: $tsn, $sdt: $tsdt, $rb: $trb, $rns: $trn, $dis: $tdis,
            $rdt: $trdt, $c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [], {
            let mine = if coll::in_place($sb) {
                // SAFETY: one receive count per process.
                bytes(unsafe { coll::at($rns, coll::rank($c)) }, $rdt)
            } else {
                bytes($sn, $sdt)
            };
            // SAFETY: one receive count per process.
            vector(mine, Vec::new(), unsafe { coll::per_peer($rns, coll::size($c), $rdt) })
        });
    };
}

/// Scatterv (`(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root,
/// comm)`): this process's block, and at the root every one.
macro_rules! scatterv {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sns:ident: $tsn:ty, $dis:ident: $tdis:ty,
        $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty, $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $root:ident: $tro:ty,
        $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $sns: $tsn, $dis: $tdis, $sdt: $tsdt, $rb: $trb, $rn: $trn,
            $rdt: $trdt, $root: $tro, $c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [$root], {
            let mine = if coll::in_place($rb.cast_const()) {
                // SAFETY: at the root, the send counts are significant.
                bytes(unsafe { coll::at($sns, $root) }, $sdt)
            } else {
                bytes($rn, $rdt)
            };
            if coll::rank($c) == $root {
                // SAFETY: at the root, one send count per process.
                vector(mine, unsafe { coll::per_peer($sns, coll::size($c), $sdt) }, Vec::new())
            } else {
                (true, 0, mine, None)
            }
        });
    };
}

/// Alltoallv (`(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
/// rtype, comm)`): every block sent and received (in place, the receive
/// side describes both).
macro_rules! alltoallv {
    ($coll:ident, $mpi:ident, $x:ident, ($sb:ident: $tsb:ty, $sns:ident: $tsn:ty, $sd:ident: $tsd:ty,
        $sdt:ident: $tsdt:ty, $rb:ident: $trb:ty, $rns:ident: $trn:ty, $rd:ident: $trd:ty, $rdt:ident: $trdt:ty,
        $c:ident: $tc:ty $(, $req:ident: $tr:ty)?) -> $r:ty) => {
        collective!($mpi, $x, $coll, ($sb: $tsb, $sns: $tsn, $sd: $tsd, $sdt: $tsdt, $rb: $trb, $rns: $trn,
            $rd: $trd, $rdt: $trdt, $c: $tc $(, $req: $tr)?) -> $r, $c, ($($req)?), [], {
            let n = coll::size($c);
            // SAFETY: one count per process.
            let recv = unsafe { coll::per_peer($rns, n, $rdt) };
            let send = if coll::in_place($sb) {
                recv.clone()
            } else {
                // SAFETY: one count per process.
                unsafe { coll::per_peer($sns, n, $sdt) }
            };
            vector(0, send, recv)
        });
    };
}

/// Every routine of the table: the ones the model times by their shape,
/// the others untimed.
macro_rules! routine {
    ($id:literal, $mpi:ident, $pmpi:ident, $x:ident, $ns:ident, $kind:ident $args:tt -> $r:ty) => {
        routine!(@ $mpi, $x, $args -> $r);
    };
    // Defined with pnmpi_sdk::wrap! above.
    (@ MPI_Init, $($t:tt)*) => {};
    (@ MPI_Init_thread, $($t:tt)*) => {};
    (@ MPI_Finalize, $($t:tt)*) => {};
    (@ MPI_Wtime, $($t:tt)*) => {};
    (@ MPI_Wtick, $($t:tt)*) => {};
    // Point to point.
    (@ MPI_Send, $($t:tt)*) => { send!(MPI_Send, $($t)*); };
    (@ MPI_Bsend, $($t:tt)*) => { send!(MPI_Bsend, $($t)*); };
    (@ MPI_Ssend, $($t:tt)*) => { send!(MPI_Ssend, $($t)*); };
    (@ MPI_Rsend, $($t:tt)*) => { send!(MPI_Rsend, $($t)*); };
    (@ MPI_Isend, $($t:tt)*) => { send!(MPI_Isend, $($t)*); };
    (@ MPI_Ibsend, $($t:tt)*) => { send!(MPI_Ibsend, $($t)*); };
    (@ MPI_Issend, $($t:tt)*) => { send!(MPI_Issend, $($t)*); };
    (@ MPI_Irsend, $($t:tt)*) => { send!(MPI_Irsend, $($t)*); };
    (@ MPI_Send_c, $($t:tt)*) => { send!(MPI_Send_c, $($t)*); };
    (@ MPI_Bsend_c, $($t:tt)*) => { send!(MPI_Bsend_c, $($t)*); };
    (@ MPI_Ssend_c, $($t:tt)*) => { send!(MPI_Ssend_c, $($t)*); };
    (@ MPI_Rsend_c, $($t:tt)*) => { send!(MPI_Rsend_c, $($t)*); };
    (@ MPI_Isend_c, $($t:tt)*) => { send!(MPI_Isend_c, $($t)*); };
    (@ MPI_Ibsend_c, $($t:tt)*) => { send!(MPI_Ibsend_c, $($t)*); };
    (@ MPI_Issend_c, $($t:tt)*) => { send!(MPI_Issend_c, $($t)*); };
    (@ MPI_Irsend_c, $($t:tt)*) => { send!(MPI_Irsend_c, $($t)*); };
    (@ MPI_Send_init, $($t:tt)*) => { send_init!(MPI_Send_init, $($t)*); };
    (@ MPI_Bsend_init, $($t:tt)*) => { send_init!(MPI_Bsend_init, $($t)*); };
    (@ MPI_Ssend_init, $($t:tt)*) => { send_init!(MPI_Ssend_init, $($t)*); };
    (@ MPI_Rsend_init, $($t:tt)*) => { send_init!(MPI_Rsend_init, $($t)*); };
    (@ MPI_Send_init_c, $($t:tt)*) => { send_init!(MPI_Send_init_c, $($t)*); };
    (@ MPI_Bsend_init_c, $($t:tt)*) => { send_init!(MPI_Bsend_init_c, $($t)*); };
    (@ MPI_Ssend_init_c, $($t:tt)*) => { send_init!(MPI_Ssend_init_c, $($t)*); };
    (@ MPI_Rsend_init_c, $($t:tt)*) => { send_init!(MPI_Rsend_init_c, $($t)*); };
    (@ MPI_Recv, $($t:tt)*) => { recv!(XMPI_Irecv, MPI_Recv, $($t)*); };
    (@ MPI_Recv_c, $($t:tt)*) => { recv!(XMPI_Irecv_c, MPI_Recv_c, $($t)*); };
    (@ MPI_Irecv, $($t:tt)*) => { irecv!(false, MPI_Irecv, $($t)*); };
    (@ MPI_Irecv_c, $($t:tt)*) => { irecv!(false, MPI_Irecv_c, $($t)*); };
    (@ MPI_Recv_init, $($t:tt)*) => { irecv!(true, MPI_Recv_init, $($t)*); };
    (@ MPI_Recv_init_c, $($t:tt)*) => { irecv!(true, MPI_Recv_init_c, $($t)*); };
    (@ MPI_Sendrecv, $($t:tt)*) => { sendrecv!(XMPI_Irecv, XMPI_Isend, MPI_Sendrecv, $($t)*); };
    (@ MPI_Sendrecv_c, $($t:tt)*) => { sendrecv!(XMPI_Irecv_c, XMPI_Isend_c, MPI_Sendrecv_c, $($t)*); };
    (@ MPI_Sendrecv_replace, $($t:tt)*) => { sendrecv_replace!(MPI_Sendrecv_replace, $($t)*); };
    (@ MPI_Sendrecv_replace_c, $($t:tt)*) => { sendrecv_replace!(MPI_Sendrecv_replace_c, $($t)*); };
    (@ MPI_Mprobe, $($t:tt)*) => { mprobe!(MPI_Mprobe, $($t)*); };
    (@ MPI_Improbe, $($t:tt)*) => { mprobe!(MPI_Improbe, $($t)*); };
    (@ MPI_Mrecv, $($t:tt)*) => { mrecv!(MPI_Mrecv, $($t)*); };
    (@ MPI_Mrecv_c, $($t:tt)*) => { mrecv!(MPI_Mrecv_c, $($t)*); };
    (@ MPI_Imrecv, $($t:tt)*) => { imrecv!(MPI_Imrecv, $($t)*); };
    (@ MPI_Imrecv_c, $($t:tt)*) => { imrecv!(MPI_Imrecv_c, $($t)*); };
    // Requests.
    (@ MPI_Start, $($t:tt)*) => { start!(MPI_Start, $($t)*); };
    (@ MPI_Startall, $($t:tt)*) => { start!(MPI_Startall, $($t)*); };
    (@ MPI_Wait, $($t:tt)*) => { wait_one!(MPI_Wait, $($t)*); };
    (@ MPI_Test, $($t:tt)*) => { wait_one!(MPI_Test, $($t)*); };
    (@ MPI_Waitall, $($t:tt)*) => { wait_all!(MPI_Waitall, $($t)*); };
    (@ MPI_Testall, $($t:tt)*) => { wait_all!(MPI_Testall, $($t)*); };
    (@ MPI_Waitany, $($t:tt)*) => { wait_any!(MPI_Waitany, $($t)*); };
    (@ MPI_Testany, $($t:tt)*) => { wait_any!(MPI_Testany, $($t)*); };
    (@ MPI_Waitsome, $($t:tt)*) => { wait_some!(MPI_Waitsome, $($t)*); };
    (@ MPI_Testsome, $($t:tt)*) => { wait_some!(MPI_Testsome, $($t)*); };
    (@ MPI_Request_free, $($t:tt)*) => { request!(forget, MPI_Request_free, $($t)*); };
    (@ MPI_Cancel, $($t:tt)*) => { request!(cancel, MPI_Cancel, $($t)*); };
    // Communicators.
    (@ MPI_Comm_dup, $($t:tt)*) => { creates!(MPI_Comm_dup, $($t)*); };
    (@ MPI_Comm_dup_with_info, $($t:tt)*) => { creates!(MPI_Comm_dup_with_info, $($t)*); };
    (@ MPI_Comm_split, $($t:tt)*) => { creates!(MPI_Comm_split, $($t)*); };
    (@ MPI_Comm_split_type, $($t:tt)*) => { creates!(MPI_Comm_split_type, $($t)*, then comms::split_by_node); };
    (@ MPI_Comm_create, $($t:tt)*) => { creates!(MPI_Comm_create, $($t)*); };
    (@ MPI_Comm_create_group, $($t:tt)*) => { creates!(MPI_Comm_create_group, $($t)*); };
    (@ MPI_Cart_create, $($t:tt)*) => { creates!(MPI_Cart_create, $($t)*); };
    (@ MPI_Cart_sub, $($t:tt)*) => { creates!(MPI_Cart_sub, $($t)*); };
    (@ MPI_Graph_create, $($t:tt)*) => { creates!(MPI_Graph_create, $($t)*); };
    (@ MPI_Dist_graph_create, $($t:tt)*) => { creates!(MPI_Dist_graph_create, $($t)*); };
    (@ MPI_Dist_graph_create_adjacent, $($t:tt)*) => { creates!(MPI_Dist_graph_create_adjacent, $($t)*); };
    (@ MPI_Intercomm_create, $($t:tt)*) => { creates!(MPI_Intercomm_create, $($t)*); };
    (@ MPI_Intercomm_merge, $($t:tt)*) => { creates!(MPI_Intercomm_merge, $($t)*); };
    (@ MPI_Comm_free, $($t:tt)*) => { frees!(MPI_Comm_free, $($t)*); };
    (@ MPI_Comm_disconnect, $($t:tt)*) => { frees!(MPI_Comm_disconnect, $($t)*); };
    // Collectives.
    (@ MPI_Barrier, $($t:tt)*) => { barrier!(Barrier, MPI_Barrier, $($t)*); };
    (@ MPI_Ibarrier, $($t:tt)*) => { barrier!(Barrier, MPI_Ibarrier, $($t)*); };
    (@ MPI_Bcast, $($t:tt)*) => { bcast!(Bcast, MPI_Bcast, $($t)*); };
    (@ MPI_Ibcast, $($t:tt)*) => { bcast!(Bcast, MPI_Ibcast, $($t)*); };
    (@ MPI_Reduce, $($t:tt)*) => { reduce!(Reduce, MPI_Reduce, $($t)*); };
    (@ MPI_Ireduce, $($t:tt)*) => { reduce!(Reduce, MPI_Ireduce, $($t)*); };
    (@ MPI_Allreduce, $($t:tt)*) => { allreduce!(Allreduce, MPI_Allreduce, $($t)*); };
    (@ MPI_Iallreduce, $($t:tt)*) => { allreduce!(Allreduce, MPI_Iallreduce, $($t)*); };
    (@ MPI_Scan, $($t:tt)*) => { allreduce!(Scan, MPI_Scan, $($t)*); };
    (@ MPI_Iscan, $($t:tt)*) => { allreduce!(Scan, MPI_Iscan, $($t)*); };
    (@ MPI_Exscan, $($t:tt)*) => { allreduce!(Scan, MPI_Exscan, $($t)*); };
    (@ MPI_Iexscan, $($t:tt)*) => { allreduce!(Scan, MPI_Iexscan, $($t)*); };
    (@ MPI_Reduce_scatter_block, $($t:tt)*) => {
        allreduce!(ReduceScatter, MPI_Reduce_scatter_block, $($t)*);
    };
    (@ MPI_Ireduce_scatter_block, $($t:tt)*) => {
        allreduce!(ReduceScatter, MPI_Ireduce_scatter_block, $($t)*);
    };
    (@ MPI_Reduce_scatter, $($t:tt)*) => { reduce_scatter!(ReduceScatter, MPI_Reduce_scatter, $($t)*); };
    (@ MPI_Ireduce_scatter, $($t:tt)*) => { reduce_scatter!(ReduceScatter, MPI_Ireduce_scatter, $($t)*); };
    (@ MPI_Gather, $($t:tt)*) => { gather!(Gather, MPI_Gather, $($t)*); };
    (@ MPI_Igather, $($t:tt)*) => { gather!(Gather, MPI_Igather, $($t)*); };
    (@ MPI_Scatter, $($t:tt)*) => { gather!(Scatter, MPI_Scatter, $($t)*); };
    (@ MPI_Iscatter, $($t:tt)*) => { gather!(Scatter, MPI_Iscatter, $($t)*); };
    (@ MPI_Allgather, $($t:tt)*) => { allgather!(Allgather, MPI_Allgather, $($t)*); };
    (@ MPI_Iallgather, $($t:tt)*) => { allgather!(Allgather, MPI_Iallgather, $($t)*); };
    (@ MPI_Alltoall, $($t:tt)*) => { allgather!(Alltoall, MPI_Alltoall, $($t)*); };
    (@ MPI_Ialltoall, $($t:tt)*) => { allgather!(Alltoall, MPI_Ialltoall, $($t)*); };
    (@ MPI_Gatherv, $($t:tt)*) => { gatherv!(Gather, MPI_Gatherv, $($t)*); };
    (@ MPI_Igatherv, $($t:tt)*) => { gatherv!(Gather, MPI_Igatherv, $($t)*); };
    (@ MPI_Allgatherv, $($t:tt)*) => { allgatherv!(Allgather, MPI_Allgatherv, $($t)*); };
    (@ MPI_Iallgatherv, $($t:tt)*) => { allgatherv!(Allgather, MPI_Iallgatherv, $($t)*); };
    (@ MPI_Scatterv, $($t:tt)*) => { scatterv!(Scatter, MPI_Scatterv, $($t)*); };
    (@ MPI_Iscatterv, $($t:tt)*) => { scatterv!(Scatter, MPI_Iscatterv, $($t)*); };
    (@ MPI_Alltoallv, $($t:tt)*) => { alltoallv!(Alltoall, MPI_Alltoallv, $($t)*); };
    (@ MPI_Ialltoallv, $($t:tt)*) => { alltoallv!(Alltoall, MPI_Ialltoallv, $($t)*); };
    // One-sided.
    (@ MPI_Win_create, $($t:tt)*) => { win_create!(MPI_Win_create, $($t)*); };
    (@ MPI_Win_create_c, $($t:tt)*) => { win_create!(MPI_Win_create_c, $($t)*); };
    (@ MPI_Win_allocate, $($t:tt)*) => { win_allocate!(MPI_Win_allocate, $($t)*); };
    (@ MPI_Win_allocate_c, $($t:tt)*) => { win_allocate!(MPI_Win_allocate_c, $($t)*); };
    (@ MPI_Win_allocate_shared, $($t:tt)*) => { win_allocate!(MPI_Win_allocate_shared, $($t)*); };
    (@ MPI_Win_allocate_shared_c, $($t:tt)*) => { win_allocate!(MPI_Win_allocate_shared_c, $($t)*); };
    (@ MPI_Win_create_dynamic, $($t:tt)*) => { win_dynamic!(MPI_Win_create_dynamic, $($t)*); };
    (@ MPI_Win_free, $($t:tt)*) => { win_frees!(MPI_Win_free, $($t)*); };
    (@ MPI_Put, $($t:tt)*) => { put_like!(Put, MPI_Put, $($t)*); };
    (@ MPI_Put_c, $($t:tt)*) => { put_like!(Put, MPI_Put_c, $($t)*); };
    (@ MPI_Rput, $($t:tt)*) => { put_like!(Put, MPI_Rput, $($t)*); };
    (@ MPI_Rput_c, $($t:tt)*) => { put_like!(Put, MPI_Rput_c, $($t)*); };
    (@ MPI_Get, $($t:tt)*) => { put_like!(Get, MPI_Get, $($t)*); };
    (@ MPI_Get_c, $($t:tt)*) => { put_like!(Get, MPI_Get_c, $($t)*); };
    (@ MPI_Rget, $($t:tt)*) => { put_like!(Get, MPI_Rget, $($t)*); };
    (@ MPI_Rget_c, $($t:tt)*) => { put_like!(Get, MPI_Rget_c, $($t)*); };
    (@ MPI_Accumulate, $($t:tt)*) => { accumulate!(Accumulate, MPI_Accumulate, $($t)*); };
    (@ MPI_Accumulate_c, $($t:tt)*) => { accumulate!(Accumulate, MPI_Accumulate_c, $($t)*); };
    (@ MPI_Raccumulate, $($t:tt)*) => { accumulate!(Accumulate, MPI_Raccumulate, $($t)*); };
    (@ MPI_Raccumulate_c, $($t:tt)*) => { accumulate!(Accumulate, MPI_Raccumulate_c, $($t)*); };
    (@ MPI_Get_accumulate, $($t:tt)*) => { get_accumulate!(GetAccumulate, MPI_Get_accumulate, $($t)*); };
    (@ MPI_Get_accumulate_c, $($t:tt)*) => { get_accumulate!(GetAccumulate, MPI_Get_accumulate_c, $($t)*); };
    (@ MPI_Rget_accumulate, $($t:tt)*) => { get_accumulate!(GetAccumulate, MPI_Rget_accumulate, $($t)*); };
    (@ MPI_Rget_accumulate_c, $($t:tt)*) => { get_accumulate!(GetAccumulate, MPI_Rget_accumulate_c, $($t)*); };
    (@ MPI_Fetch_and_op, $($t:tt)*) => { fetch_and_op!(FetchAndOp, MPI_Fetch_and_op, $($t)*); };
    (@ MPI_Compare_and_swap, $($t:tt)*) => { compare_and_swap!(CompareAndSwap, MPI_Compare_and_swap, $($t)*); };
    (@ MPI_Win_fence, $($t:tt)*) => { win_fence!(MPI_Win_fence, $($t)*); };
    (@ MPI_Win_post, $($t:tt)*) => { win_opens!(Post, MPI_Win_post, $($t)*); };
    (@ MPI_Win_start, $($t:tt)*) => { win_opens!(Start, MPI_Win_start, $($t)*); };
    (@ MPI_Win_complete, $($t:tt)*) => { win_closes!(completed, MPI_Win_complete, $($t)*); };
    (@ MPI_Win_wait, $($t:tt)*) => { win_closes!(waited, MPI_Win_wait, $($t)*); };
    (@ MPI_Win_test, $($t:tt)*) => { win_closes!(waited, MPI_Win_test, $($t)*); };
    (@ MPI_Win_lock, $($t:tt)*) => { win_lock!(MPI_Win_lock, $($t)*); };
    (@ MPI_Win_lock_all, $($t:tt)*) => { win_lock!(MPI_Win_lock_all, $($t)*); };
    (@ MPI_Win_unlock, $($t:tt)*) => { win_settles!(unlocked, MPI_Win_unlock, $($t)*); };
    (@ MPI_Win_flush, $($t:tt)*) => { win_settles!(settle, MPI_Win_flush, $($t)*); };
    (@ MPI_Win_flush_local, $($t:tt)*) => { win_settles!(settle, MPI_Win_flush_local, $($t)*); };
    (@ MPI_Win_unlock_all, $($t:tt)*) => { win_settles!(unlocked, MPI_Win_unlock_all, $($t)*); };
    (@ MPI_Win_flush_all, $($t:tt)*) => { win_settles!(settle, MPI_Win_flush_all, $($t)*); };
    (@ MPI_Win_flush_local_all, $($t:tt)*) => { win_settles!(settle, MPI_Win_flush_local_all, $($t)*); };
    // Everything else.
    (@ $mpi:ident, $x:ident, $args:tt -> $r:ty) => { untimed!($mpi, $x, $args -> $r); };
}

pnmpi_mpi_sys::for_each_routine!(routine);
