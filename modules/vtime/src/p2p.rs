//! Point-to-point: virtual time travels with the messages.
//!
//! Each send of the application is preceded by a *timestamp* on the
//! communicator's shadow, to the same destination with the same tag: the
//! sender's virtual time at the post, when its CPU is free again, the
//! size, an eager message's arrival (or none: a rendezvous) and the send's
//! number. When a receive completes, the real status names the source and
//! tag, and the receiver takes the next timestamp of that source and tag
//! from the shadow: MPI's non-overtaking rule orders both streams alike,
//! so it is this message's, once the receives of that source and tag
//! posted before it (which MPI matched first, whenever they complete)
//! have taken theirs. The sender keeps the kernel's channel order
//! ([`rule::Channels`]): the arrival a timestamp carries is never before
//! an earlier envelope of its channel. Both sides' times are the kernel's
//! ([`pnmpi_sim::kernel::p2p`]), the rule `pnmpi sim replay` and virtual
//! ranks call too: the receiver's clock moves to the receive's
//! completion. An eager send completes at `free`. A rendezvous send (a
//! standard send above the eager threshold, every synchronous send)
//! completes when its data has arrived, which depends on when the receive
//! was posted: the receiver sends an *acknowledgement* back (the send's
//! number, its completion and the receive's post) on the module's world
//! duplicate, and the sender waits for it when its send completes.
//! Eager messages cost no acknowledgement. A blocking send that is a
//! rendezvous goes down the chain as its nonblocking form, so that the
//! sender waits in the module, not in MPI, for both: a wait that lasts
//! may be a deadlock, which [`crate::deadlock`] tells.

use crate::deadlock::{self, Hop};
use crate::state::{self, blank_status, Req, SendClock};
use crate::turns;
use pnmpi_mpi_sys::ffi::{self, MPI_Request, MPI_Status};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
pub use pnmpi_sim::kernel::p2p::Mode;
use pnmpi_sim::kernel::p2p::{self as rule, unstretched};
use pnmpi_sim::units::Ns;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::time::Instant;

/// The timestamp of one message: six `u64`s on the wire (post, free,
/// bytes, eager arrival or NaN, the send's number, 1 for `MPI_Ssend`).
const STAMP: usize = 6;

/// An acknowledgement: three `u64`s (the send's number, its completion,
/// the receive's post).
const ACK: usize = 3;

/// Tag of the acknowledgements on the module's world duplicate (which
/// carries nothing else point-to-point).
const ACK_TAG: c_int = 0;

/// Timestamps still being sent: the request and its buffer, which must
/// live until the send completes.
struct InFlight {
    reqs: Vec<MPI_Request>,
    /// From `Box::into_raw`: MPI reads them until the sends complete.
    bufs: Vec<*mut [u64; STAMP]>,
    /// Reclaim completed ones when this many are in flight.
    high: usize,
}

// SAFETY: MPI request handles name the same request in every thread of
// the process, and the buffers are the module's own heap allocations;
// the lock around them serialises their use.
unsafe impl Send for InFlight {}

static IN_FLIGHT: Mutex<InFlight> = Mutex::new(InFlight {
    reqs: Vec::new(),
    bufs: Vec::new(),
    high: 64,
});

/// Keeps a timestamp's send until it completes; reclaims the completed
/// ones from time to time (without ever waiting: a timestamp completes
/// when its receiver takes it, which may be much later).
fn keep(req: MPI_Request, buf: *mut [u64; STAMP]) {
    let mut f = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    f.reqs.push(req);
    f.bufs.push(buf);
    if f.reqs.len() < f.high {
        return;
    }
    let n = f.reqs.len();
    let mut outcount: c_int = 0;
    let mut indices = vec![0 as c_int; n];
    // SAFETY: `reqs` holds `n` requests of the module's own sends, whose
    // buffers are alive in `bufs`; `indices` has room for `n`.
    unsafe {
        ffi::PMPI_Testsome(
            n as c_int,
            f.reqs.as_mut_ptr(),
            &mut outcount,
            indices.as_mut_ptr(),
            constants::STATUSES_IGNORE(),
        )
    };
    let null = constants::REQUEST_NULL().bits();
    let InFlight { reqs, bufs, high } = &mut *f;
    let mut i = 0;
    while i < reqs.len() {
        if reqs[i].bits() == null {
            reqs.swap_remove(i);
            // SAFETY: from Box::into_raw in `isend_words`; its send is
            // complete, and it leaves the list here, once.
            drop(unsafe { Box::from_raw(bufs.swap_remove(i)) });
        } else {
            i += 1;
        }
    }
    *high = (reqs.len() * 2).max(64);
}

/// At `MPI_Finalize`: every timestamp of a message that was received has
/// been taken; those of messages never received are let go.
pub fn drain() {
    let mut f = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    let null = constants::REQUEST_NULL().bits();
    let InFlight { reqs, bufs, .. } = &mut *f;
    for (req, buf) in reqs.iter_mut().zip(bufs.drain(..)) {
        let mut done: c_int = 0;
        // SAFETY: a request of the module's own send; `done` is local.
        unsafe { ffi::PMPI_Test(req, &mut done, constants::STATUS_IGNORE()) };
        if done == 0 && req.bits() != null {
            // SAFETY: as above. Freeing an active send lets it complete
            // on its own; its buffer must then outlive it: it is leaked.
            unsafe { ffi::PMPI_Request_free(req) };
        } else {
            // SAFETY: from Box::into_raw in `isend_words`; its send is
            // complete, and it leaves the list here, once.
            drop(unsafe { Box::from_raw(buf) });
        }
    }
    reqs.clear();
}

/// Sends `words` (of a timestamp or an acknowledgement) to `dest` with
/// `tag` on `comm` without waiting: the buffer lives until the send
/// completes ([`keep`]).
pub fn isend_words(words: [u64; STAMP], n: usize, dest: c_int, tag: c_int, comm: Comm) {
    let buf = Box::into_raw(Box::new(words));
    let mut req = constants::REQUEST_NULL();
    // SAFETY: `buf` holds STAMP >= n u64s and is freed only once the send
    // has completed (`keep`, `drain`); `req` is a local out-parameter.
    let rc = unsafe {
        ffi::PMPI_Isend(
            buf.cast_const().cast(),
            n as c_int,
            constants::UINT64_T(),
            dest,
            tag,
            comm,
            &mut req,
        )
    };
    if rc == constants::SUCCESS() {
        keep(req, buf);
    } else {
        // SAFETY: from Box::into_raw above; MPI did not take it.
        drop(unsafe { Box::from_raw(buf) });
    }
}

/// The application posts a send of `bytes` to `dest` of `comm` in `mode`:
/// sends its timestamp. `None` when it is not timed (`MPI_PROC_NULL`, a
/// communicator without a shadow, MPI not running).
pub fn post_send(comm: Comm, dest: c_int, tag: c_int, bytes: u64, mode: Mode) -> Option<SendClock> {
    if dest == constants::PROC_NULL() || dest < 0 {
        return None;
    }
    let (shadow, posted, arrival) = state::with(|st| {
        let info = st.comms.get(&comm.bits())?;
        let dst = *info.peers.get(dest as usize)?;
        let shadow = info.shadow;
        let m = st.msg(st.rank, dst, bytes);
        let p = rule::post(&mut *st.model, &m, mode, st.clock, &mut unstretched);
        let envelope = st.channels.send((dst, comm.bits()), &p, st.lookahead);
        st.totals.sent += 1;
        st.totals.sent_bytes += bytes;
        let ack = p.eager.is_none().then(|| {
            st.sends += 1;
            Hop {
                rank: st.rank,
                dst,
                bytes,
                seq: st.sends,
                synchronous: mode == Mode::Synchronous,
            }
        });
        let posted = SendClock {
            post: p.post,
            free: p.free,
            ack,
        };
        Some((shadow, posted, envelope.arrival.unwrap_or(f64::NAN)))
    })??;
    let seq = posted.ack.map_or(0, |h| h.seq);
    let stamp = [
        posted.post.to_bits(),
        posted.free.to_bits(),
        bytes,
        arrival.to_bits(),
        seq,
        u64::from(mode == Mode::Synchronous),
    ];
    isend_words(stamp, STAMP, dest, tag, Comm::from_bits(shadow));
    Some(posted)
}

/// A send completed: the sender's CPU was busy until `free`, and a
/// rendezvous's sender until its data arrived, which its receiver's
/// acknowledgement says (waited for here).
pub fn sent(posted: Option<SendClock>) {
    let Some(p) = posted else { return };
    state::with(|st| st.clock = st.clock.max(p.free));
    if let Some(hop) = p.ack {
        let (ack, _) = await_ack(hop, None);
        took(ack);
    }
}

/// The clock after a rendezvous's acknowledgement (`None`: not timed).
fn took(ack: Option<(Ns, Ns)>) {
    if let Some((done, recv_post)) = ack {
        state::with(|st| {
            st.clock = st.clock.max(done);
            st.call_late = st.call_late.max(recv_post);
        });
    }
}

/// A send's count as a C `int`, `None` above it (a large-count `_c`
/// send then goes down the chain as it is, its wait not watched).
pub fn small<C: TryInto<c_int>>(count: C) -> Option<c_int> {
    count.try_into().ok()
}

/// Whether a blocking send posted as `posted` goes down the chain as
/// [`rendezvous_send`]: a rendezvous, or any timed send under
/// `MPI_THREAD_MULTIPLE` (its post in the rank's turn, its wait outside).
pub fn posted_apart(posted: &Option<SendClock>) -> bool {
    posted.is_some_and(|p| p.ack.is_some() || state::multiple())
}

/// A blocking send `name` (`MPI_Send`, `MPI_Bsend`, `MPI_Ssend`,
/// `MPI_Rsend`) that the kernel makes a rendezvous (`posted.ack`), or any
/// under `MPI_THREAD_MULTIPLE`: its nonblocking form goes down the chain,
/// `turn` (the rank's posting turn, [`turns::posting`]) is let go, and
/// the sender waits for the send and for the acknowledgement in the
/// module, where a deadlock is told ([`crate::deadlock`]). Returns the
/// send's error code.
///
/// # Safety
/// The arguments are the application's, valid for a send.
#[allow(clippy::too_many_arguments)]
pub unsafe fn rendezvous_send(
    name: &str,
    buf: *const c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    posted: SendClock,
    turn: turns::Turn,
) -> c_int {
    let mut req = constants::REQUEST_NULL();
    // SAFETY: the application's send arguments (the caller's contract);
    // `req` is a local out-parameter.
    let rc = unsafe {
        match Mode::of(name) {
            Mode::Synchronous => pnmpi_sdk::raw::XMPI_Issend(buf, count, dt, dest, tag, comm, &mut req),
            Mode::Buffered => pnmpi_sdk::raw::XMPI_Ibsend(buf, count, dt, dest, tag, comm, &mut req),
            _ if name.contains("Rsend") => {
                pnmpi_sdk::raw::XMPI_Irsend(buf, count, dt, dest, tag, comm, &mut req)
            }
            _ => pnmpi_sdk::raw::XMPI_Isend(buf, count, dt, dest, tag, comm, &mut req),
        }
    };
    drop(turn);
    if rc != constants::SUCCESS() {
        return rc;
    }
    state::with(|st| st.clock = st.clock.max(posted.free));
    let Some(hop) = posted.ack else {
        // SAFETY: the request just made.
        return unsafe { pnmpi_sdk::raw::XMPI_Wait(&mut req, constants::STATUS_IGNORE()) };
    };
    let (ack, rc) = await_ack(hop, Some(req));
    took(ack);
    rc
}

/// The acknowledgement of this rank's send `hop.seq` to world rank
/// `hop.dst` (its completion and its receive's post), and the error code
/// of `real`, the application's send, waited for too. Acknowledgements of
/// `dst` that arrive first (its receives may complete in another order
/// than this rank's sends) are kept for their own sends. A wait longer
/// than [`deadlock::PROBE_AFTER`] probes for a cycle of such waits.
fn await_ack(hop: Hop, mut real: Option<MPI_Request>) -> (Option<(Ns, Ns)>, c_int) {
    let ok = constants::SUCCESS();
    let Some(ack_comm) = state::with(|st| st.ack_comm) else {
        return (None, real.map_or(ok, wait));
    };
    let comm = Comm::from_bits(ack_comm);
    let (start, mut probed) = (Instant::now(), false);
    let mut got: Option<Option<(Ns, Ns)>> = None;
    let mut rc = ok;
    loop {
        if got.is_none() {
            got = take_ack(hop, comm);
        }
        if let Some(r) = real.as_mut() {
            let mut done: c_int = 0;
            // SAFETY: the application's send's request, made by this module.
            rc = unsafe { pnmpi_sdk::raw::XMPI_Test(r, &mut done, constants::STATUS_IGNORE()) };
            if rc != ok || done != 0 {
                real = None;
            }
        }
        match got {
            Some(ack) if real.is_none() => return (ack, rc),
            _ => {}
        }
        settle_receives();
        // A rank with another thread may still post the receive: its
        // waits are not a deadlock's.
        if state::live_threads() > 1 {
            std::thread::yield_now();
            continue;
        }
        deadlock::handle(hop, comm);
        if !probed && start.elapsed() >= deadlock::PROBE_AFTER {
            deadlock::start(hop, comm);
            probed = true;
        }
        std::thread::yield_now();
    }
}

/// The application's request `req`, waited for down the chain.
fn wait(mut req: MPI_Request) -> c_int {
    // SAFETY: a request of the application's send, made by this module.
    unsafe { pnmpi_sdk::raw::XMPI_Wait(&mut req, constants::STATUS_IGNORE()) }
}

/// `hop`'s acknowledgement if it is in (`Some(None)`: one that cannot be
/// read, the send not timed), keeping the others that came.
fn take_ack(hop: Hop, comm: Comm) -> Option<Option<(Ns, Ns)>> {
    // A probe and its receive, with no other thread's in between.
    let _own = turns::own_receive();
    loop {
        if let Some(Some(t)) = state::with(|st| st.acks.remove(&(hop.dst, hop.seq))) {
            return Some(Some(t));
        }
        let mut flag: c_int = 0;
        let mut status = blank_status();
        // SAFETY: the module's own communicator; `flag` and `status` are
        // local out-parameters.
        let rc = unsafe { ffi::PMPI_Iprobe(hop.dst as c_int, ACK_TAG, comm, &mut flag, &mut status) };
        if rc != constants::SUCCESS() || flag == 0 {
            return None;
        }
        let mut ack = [0u64; ACK];
        match native::recv(&mut ack, hop.dst as c_int, ACK_TAG, comm) {
            Ok(r) if r.len == ACK => {}
            Ok(r) => {
                pnmpi_sdk::say::warn(
                    "vtime",
                    format_args!(
                        "an acknowledgement of {} words instead of {ACK}: send not timed",
                        r.len
                    ),
                );
                return Some(None);
            }
            Err(e) => {
                pnmpi_sdk::say::warn(
                    "vtime",
                    format_args!("cannot receive an acknowledgement ({e}): send not timed"),
                );
                return Some(None);
            }
        }
        let t = (f64::from_bits(ack[1]), f64::from_bits(ack[2]));
        if ack[0] == hop.seq {
            return Some(Some(t));
        }
        state::with(|st| st.acks.insert((hop.dst, ack[0]), t));
    }
}

/// A receive on `comm`, posted at `posted`, completed with `status`:
/// takes the message's timestamp and moves the clock.
///
/// # Safety
/// `status` points to a status MPI filled for the receive.
pub unsafe fn received(comm: u64, status: *const MPI_Status, posted: Ns) {
    let _turn = turns::stamping();
    // SAFETY: the caller's contract.
    if let Some((done, post)) = unsafe { timestamp(comm, status, posted, u64::MAX) } {
        arrived(done, post);
    }
}

/// A receive numbered `seq` (a blocking one: `u64::MAX`) completed on
/// `comm` with `source` and `tag`: the receives of that source and tag
/// posted before it were matched before it (MPI gives a message to the
/// first posted receive that fits), so they take their timestamps first,
/// in posting order, each keeping its completion for when the
/// application completes it.
fn stamp_earlier(comm: u64, source: c_int, tag: c_int, seq: u64) {
    let mut earlier: Vec<(u64, u64, Ns)> = state::with(|st| {
        st.reqs
            .iter()
            .filter_map(|(&h, r)| match *r {
                Req::Recv {
                    comm: c,
                    posted,
                    active: true,
                    cancelled: false,
                    early: None,
                    from: Some(f),
                    seq: s,
                    ..
                } if c == comm && f == (source, tag) && s < seq => Some((s, h, posted)),
                _ => None,
            })
            .collect()
    })
    .unwrap_or_default();
    earlier.sort_unstable_by_key(|e| e.0);
    for (_, handle, posted) in earlier {
        let Some(t) = stamp_of(comm, source, tag, posted) else {
            return;
        };
        keep_early(handle, t);
    }
}

/// Receive `handle` keeps its completion `t` (and its sender's post) for
/// when the application completes it.
pub fn keep_early(handle: u64, t: (Ns, Ns)) {
    state::with(|st| {
        if let Some(Req::Recv { early, .. }) = st.reqs.get_mut(&handle) {
            *early = Some(t);
        }
    });
}

/// A receive completes at `done`, of a message posted at `post`.
fn arrived(done: Ns, post: Ns) {
    state::with(|st| {
        st.clock = st.clock.max(done);
        st.call_late = st.call_late.max(post);
    });
}

/// A receive on `comm`, posted at `posted`, matched as `status` says:
/// takes the message's timestamp, acknowledges a rendezvous, and gives
/// the receive's completion and the send's post.
///
/// # Safety
/// `status` points to a status MPI filled for the receive.
pub unsafe fn timestamp(comm: u64, status: *const MPI_Status, posted: Ns, seq: u64) -> Option<(Ns, Ns)> {
    // SAFETY: the caller's contract.
    let (source, tag) = unsafe { ((*status).MPI_SOURCE, (*status).MPI_TAG) };
    if source == constants::PROC_NULL() || source < 0 {
        return None;
    }
    stamp_earlier(comm, source, tag, seq);
    stamp_of(comm, source, tag, posted)
}

/// The next timestamp of `source` and `tag` on `comm`, for a receive
/// posted at `posted`: read (waiting for it), a rendezvous acknowledged;
/// the receive's completion and the send's post.
pub fn stamp_of(comm: u64, source: c_int, tag: c_int, posted: Ns) -> Option<(Ns, Ns)> {
    let Some(Some((shadow, src))) = state::with(|st| {
        let info = st.comms.get(&comm)?;
        Some((info.shadow, *info.peers.get(source as usize)?))
    }) else {
        return None;
    };
    let mut stamp = [0u64; STAMP];
    match native::recv(&mut stamp, source, tag, Comm::from_bits(shadow)) {
        Ok(r) if r.len == STAMP => {}
        Ok(r) => {
            pnmpi_sdk::say::warn(
                "vtime",
                format_args!(
                    "a timestamp of {} words instead of {STAMP}: message not timed",
                    r.len
                ),
            );
            return None;
        }
        Err(e) => {
            pnmpi_sdk::say::warn(
                "vtime",
                format_args!("cannot receive a timestamp ({e}): message not timed"),
            );
            return None;
        }
    }
    let (post, free, bytes) = (f64::from_bits(stamp[0]), f64::from_bits(stamp[1]), stamp[2]);
    let arrival = Some(f64::from_bits(stamp[3])).filter(|a| !a.is_nan());
    let ack = state::with(|st| {
        let m = st.msg(src, st.rank, bytes);
        let mode = if stamp[5] == 1 {
            Mode::Synchronous
        } else {
            Mode::Standard
        };
        let k = rule::matched(&mut *st.model, &m, mode, free, arrival, posted, &mut unstretched);
        st.totals.received += 1;
        let ack = arrival.is_none().then_some((st.ack_comm, k.send_done));
        if ack.is_some() {
            st.totals.acks += 1;
        }
        (ack, k.recv_done)
    })?;
    if let (Some((ack_comm, done)), _) = ack {
        let words = [stamp[4], done.to_bits(), posted.to_bits(), 0, 0, 0];
        isend_words(words, ACK, src as c_int, ACK_TAG, Comm::from_bits(ack_comm));
    }
    Some((ack.1, post))
}

/// The receives of this rank that MPI has matched but the application
/// has not completed yet, read now: this rank waits for an
/// acknowledgement, and their senders may wait for theirs (a receive
/// posted before a blocking send to a rank that does the same). Each
/// keeps its completion for when the application completes it.
pub fn settle_receives() {
    let _turn = turns::stamping();
    let me = crate::threads::mine().number;
    let mut open: Vec<(u64, u64, Ns, u64, bool)> = state::with(|st| {
        st.reqs
            .iter()
            .filter_map(|(&h, r)| match *r {
                // Another thread's request may be completing in MPI now:
                // only the calling thread's are asked about.
                Req::Recv {
                    comm,
                    posted,
                    active: true,
                    cancelled: false,
                    early: None,
                    from,
                    seq,
                    owner,
                    ..
                } if owner == me => Some((h, comm, posted, seq, from.is_none())),
                _ => None,
            })
            .collect()
    })
    .unwrap_or_default();
    open.sort_unstable_by_key(|o| o.3);
    let mut matched = Vec::new();
    for (handle, comm, posted, seq, wild) in open {
        let mut flag: c_int = 0;
        let mut status = blank_status();
        // SAFETY: an active request of the application's receive (the
        // table drops it when it completes or is freed); MPI only reports
        // its state and frees nothing.
        let rc =
            unsafe { ffi::PMPI_Request_get_status(MPI_Request::from_bits(handle), &mut flag, &mut status) };
        if rc == constants::SUCCESS() && flag != 0 {
            matched.push((handle, comm, posted, status, seq, wild));
        }
    }
    // Timestamps are read in the order their messages were sent, which
    // for receives of one source and tag is their posting order (the
    // order of `matched`); a wildcard receive among matched receives of
    // the same source and tag cannot tell which is first here, so those
    // wait for the application's completion.
    let key = |s: &MPI_Status, comm: u64| (comm, s.MPI_SOURCE, s.MPI_TAG);
    for &(handle, comm, posted, status, seq, _) in &matched {
        let k = key(&status, comm);
        let mut same = matched.iter().filter(|m| key(&m.3, m.1) == k);
        if same.clone().count() > 1 && same.any(|m| m.5) {
            continue;
        }
        // The timestamp may have been read for a later receive of its
        // source and tag, in posting order.
        if state::with(|st| matches!(st.reqs.get(&handle), Some(Req::Recv { early: Some(_), .. })))
            == Some(true)
        {
            continue;
        }
        // Another thread's wildcard receive, posted before, takes its
        // timestamp first.
        if !turns::first(comm, seq, status.MPI_SOURCE, status.MPI_TAG) {
            continue;
        }
        // SAFETY: MPI filled `status` for the matched receive.
        let Some(t) = (unsafe { timestamp(comm, &status, posted, seq) }) else {
            continue;
        };
        keep_early(handle, t);
    }
}

/// The request whose handle was `handle` completed with `status`: a
/// receive takes its timestamp, a send frees the sender's CPU, a
/// nonblocking collective completes at the members' latest entry plus
/// its cost.
///
/// # Safety
/// `status` points to the status MPI filled for this completion.
pub unsafe fn completed(handle: u64, status: *const MPI_Status) {
    // SAFETY: the caller's contract.
    let _turn = unsafe { turns::in_turn(handle, status) };
    let then = state::with(|st| {
        // A request of this handle that MPI completed before it gave the
        // handle to a newer one is this completion's.
        let newer = st.claim_displaced(handle);
        let then = complete_entry(st, handle);
        if let Some(newer) = newer {
            st.reqs.insert(handle, newer);
        }
        then
    })
    .flatten();
    match then {
        None => {}
        Some(Then::Send(posted)) => sent(Some(posted)),
        Some(Then::Recv(comm, posted, cancelled, seq)) => {
            if cancelled {
                let mut flag: c_int = 0;
                // SAFETY: the caller's status; `flag` is local.
                unsafe { ffi::PMPI_Test_cancelled(status, &mut flag) };
                if flag != 0 {
                    return;
                }
            }
            // SAFETY: the caller's contract.
            if let Some((done, post)) = unsafe { timestamp(comm, status, posted, seq) } {
                arrived(done, post);
            }
        }
        Some(Then::Early(done, post)) => arrived(done, post),
        Some(Then::Coll(p)) => crate::coll::finish(*p),
    }
}

/// What a completed request's timing takes: a receive's communicator,
/// post, cancellation and number, or its timestamp already read; a send's
/// post; a nonblocking collective's reduction.
enum Then {
    Recv(u64, Ns, bool, u64),
    Early(Ns, Ns),
    Send(SendClock),
    Coll(Box<state::Pending>),
}

/// What the completion of request `handle` does with its entry (taken
/// out of the table unless persistent), and then.
fn complete_entry(st: &mut state::State, handle: u64) -> Option<Then> {
    let (keep, then) = match st.reqs.get_mut(&handle)? {
        Req::Recv {
            comm,
            posted,
            persistent,
            active,
            cancelled,
            early,
            seq,
            ..
        } => {
            if !*active {
                return None;
            }
            *active = false;
            let t = match early.take() {
                Some((done, post)) => Then::Early(done, post),
                None => Then::Recv(*comm, *posted, *cancelled, *seq),
            };
            *cancelled = false;
            (*persistent, t)
        }
        Req::Send {
            posted,
            persistent,
            active,
        } => {
            if !*active {
                return None;
            }
            *active = false;
            (persistent.is_some(), Then::Send(*posted))
        }
        Req::Coll(_) => match st.reqs.remove(&handle) {
            Some(Req::Coll(p)) => return Some(Then::Coll(p)),
            _ => return None,
        },
    };
    if !keep {
        st.reqs.remove(&handle);
    }
    Some(then)
}

/// Reusable space for the completion calls: request handles read before
/// the call, and statuses for calls given `MPI_STATUSES_IGNORE`.
#[derive(Default)]
pub struct Scratch {
    /// Handles before the call.
    pub handles: Vec<u64>,
    /// Statuses, when the application ignores them.
    pub statuses: Vec<MPI_Status>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch space.
pub fn scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        // Not reentrant in practice; a fresh one keeps it correct anyway.
        Err(_) => f(&mut Scratch::default()),
    })
}

/// Reads `n` request handles.
///
/// # Safety
/// `reqs` points to `n` requests (or `n` is 0).
pub unsafe fn snapshot(reqs: *const MPI_Request, n: c_int, out: &mut Vec<u64>) {
    out.clear();
    if reqs.is_null() || n <= 0 {
        return;
    }
    // SAFETY: the caller's contract.
    let reqs = unsafe { std::slice::from_raw_parts(reqs, n as usize) };
    out.extend(reqs.iter().map(|r| r.bits()));
}

/// `statuses`, or `n` statuses of the scratch space if the application
/// passed `MPI_STATUSES_IGNORE`.
pub fn statuses(statuses: *mut MPI_Status, n: c_int, scratch: &mut Vec<MPI_Status>) -> *mut MPI_Status {
    if statuses != constants::STATUSES_IGNORE() {
        return statuses;
    }
    let n = n.max(1) as usize;
    if scratch.len() < n {
        scratch.resize(n, blank_status());
    }
    scratch.as_mut_ptr()
}

/// Whether any request is tracked: completion calls skip their
/// bookkeeping when none is.
pub fn tracking() -> bool {
    state::with(|st| !st.reqs.is_empty()).unwrap_or(false)
}

/// A nonblocking or persistent receive on `comm` returned request
/// `handle`: remembered, so that its completion is timed.
pub fn recv_posted(comm: Comm, handle: u64, persistent: bool, (source, tag): (c_int, c_int)) {
    let wild = source == constants::ANY_SOURCE() || tag == constants::ANY_TAG();
    state::with(|st| {
        if !st.comms.contains_key(&comm.bits()) {
            return;
        }
        let posted = st.clock;
        st.recvs += 1;
        st.track(
            handle,
            Req::Recv {
                comm: comm.bits(),
                posted,
                persistent,
                active: !persistent,
                cancelled: false,
                early: None,
                from: (!wild).then_some((source, tag)),
                seq: st.recvs,
                pattern: (source, tag),
                owner: crate::threads::mine().number,
            },
        );
    });
}

/// A nonblocking send returned request `handle`: remembered if the model
/// charges the sender an overhead, or the send is a rendezvous, which its
/// completion then waits for.
pub fn send_posted(posted: Option<SendClock>, handle: u64) {
    if let Some(p) = posted.filter(|p| p.free > p.post || p.ack.is_some()) {
        state::with(|st| {
            st.track(
                handle,
                Req::Send {
                    posted: p,
                    persistent: None,
                    active: true,
                },
            )
        });
    }
}

/// A persistent send (`MPI_Send_init` ...) returned request `handle`.
pub fn send_init(handle: u64, send: state::PersistentSend) {
    state::with(|st| {
        st.track(
            handle,
            Req::Send {
                posted: SendClock {
                    post: 0.0,
                    free: 0.0,
                    ack: None,
                },
                persistent: Some(send),
                active: false,
            },
        )
    });
}

/// `MPI_Start` of request `handle`, before the real call: a persistent
/// receive is posted now; a persistent send sends its timestamp.
pub fn start(handle: u64) {
    let send = state::with(|st| match st.reqs.get_mut(&handle) {
        Some(Req::Recv {
            posted,
            persistent: true,
            active,
            seq,
            owner,
            ..
        }) => {
            *posted = st.clock;
            *active = true;
            st.recvs += 1;
            *seq = st.recvs;
            *owner = crate::threads::mine().number;
            None
        }
        Some(Req::Send {
            persistent: Some(s), ..
        }) => Some(*s),
        _ => None,
    })
    .flatten();
    let Some(s) = send else { return };
    let posted = post_send(Comm::from_bits(s.comm), s.dest, s.tag, s.bytes, s.mode);
    state::with(|st| {
        if let Some(Req::Send {
            posted: slot, active, ..
        }) = st.reqs.get_mut(&handle)
        {
            if let Some(p) = posted {
                *slot = p;
            }
            *active = posted.is_some();
        }
    });
}

/// `MPI_Request_free` of request `handle`: forgotten. (An active receive
/// freed this way leaves its timestamp unread: see docs/vtime.md.)
pub fn forget(handle: u64) {
    state::with(|st| st.reqs.remove(&handle));
}

/// `MPI_Cancel` of request `handle`: its completion checks whether the
/// receive was cancelled before taking a timestamp.
pub fn cancel(handle: u64) {
    state::with(|st| {
        if let Some(Req::Recv { cancelled, .. }) = st.reqs.get_mut(&handle) {
            *cancelled = true;
        }
    });
}

/// `MPI_Mprobe`/`MPI_Improbe` matched message `message` on `comm`: its
/// receive (`MPI_Mrecv`, `MPI_Imrecv`) counts as posted now.
pub fn matched(comm: Comm, message: u64, source: c_int) {
    if source == constants::PROC_NULL() || source < 0 {
        return;
    }
    state::with(|st| {
        if st.comms.contains_key(&comm.bits()) {
            let now = st.clock;
            st.messages.insert(message, (comm.bits(), now));
        }
    });
}

/// The matched message `message` is being received: its communicator and
/// probe time, forgotten here.
pub fn take_message(message: u64) -> Option<(u64, Ns)> {
    state::with(|st| st.messages.remove(&message)).flatten()
}

/// A matched message's nonblocking receive (`MPI_Imrecv`) returned
/// request `handle`.
pub fn mrecv_posted(comm: u64, posted: Ns, handle: u64) {
    state::with(|st| {
        st.recvs += 1;
        st.track(
            handle,
            Req::Recv {
                comm,
                posted,
                persistent: false,
                active: true,
                cancelled: false,
                early: None,
                from: None,
                seq: st.recvs,
                // Matched already: no later message can be its.
                pattern: (constants::PROC_NULL(), constants::ANY_TAG()),
                owner: crate::threads::mine().number,
            },
        )
    });
}
