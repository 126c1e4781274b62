//! One-sided communication: the wrappers of the window routines, their
//! data movement and their synchronization (`docs/tracer.md`). A call's
//! MPI constants (operation, assertions, lock type) become the trace's
//! codes here ([`pnmpi_trace::rma`]), the same on every MPI; its target
//! stays a rank of the window, which the merge makes a world rank.

use crate::extract::Scratch;
pub(crate) use pnmpi_sdk::rma_codes::{assert_bits, lock_code, op_code};
use pnmpi_trace::rank::{RawEvent, RawNewWin};
use pnmpi_trace::rma::WinKind;

/// What a one-sided wrapper read of its call, besides the lists that
/// stay in the scratch space (a new window's or a group's members,
/// [`Scratch::members`]; a request, [`Scratch::handles`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct RmaArgs {
    /// The target, a rank of the window.
    pub peer: Option<i64>,
    /// Bytes sent to the target (a window's size, at creation).
    pub bytes: Option<i64>,
    /// Bytes fetched from it.
    pub rbytes: Option<i64>,
    /// The window handle.
    pub win: Option<u64>,
    /// The operation code.
    pub op: Option<i64>,
    /// The assertion bits.
    pub assert: Option<i64>,
    /// The lock type code.
    pub lock: Option<i64>,
    /// The communicator a window is created over.
    pub comm: Option<u64>,
    /// A window created: handle, kind, displacement unit (its members in
    /// the scratch space).
    pub newwin: Option<(u64, WinKind, i64)>,
    /// Whether the scratch space's members are the call's group.
    pub group: bool,
}

impl RmaArgs {
    /// The event of routine `id` from `t0` to `t1`, with the lists of `scr`.
    pub fn event(self, id: u32, t0: u64, t1: u64, scr: &Scratch) -> RawEvent<'_> {
        RawEvent {
            peer: self.peer,
            bytes: self.bytes,
            rbytes: self.rbytes,
            comm: self.comm,
            reqs: &scr.handles,
            win: self.win,
            newwin: self.newwin.map(|(handle, kind, disp_unit)| RawNewWin {
                handle,
                kind,
                disp_unit,
                members: &scr.members,
            }),
            op: self.op,
            assert: self.assert,
            lock: self.lock,
            group: self.group.then_some(&scr.members[..]),
            ..RawEvent::plain(id, t0, t1)
        }
    }
}

/// A one-sided routine: `pre` runs before the call (to read a handle the
/// call frees), `$read` after it, an expression of the scratch space
/// (named by `$sc`) and the return code (named by `$rc`) giving the
/// call's [`RmaArgs`]. The request of the `R` forms is `req`.
macro_rules! one_sided {
    ($id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, req [$($req:ident)?], pre { $($pre:tt)* },
        |$sc:ident, $rc:ident| $read:expr) => {
        traced!($id, $mpi, $x, $args -> $r,
            |s, scr, t0, t1, rc| pre { $($pre)* } post {
                scr.handles.clear();
                $(if ok(rc) { scr.handles.push(out!($req).bits()); })?
                let $rc = rc;
                let $sc = &mut scr;
                let a: rma::RmaArgs = $read;
                emit!(s, a.event($id, t0, t1, &scr));
            });
    };
}

/// `MPI_Win_create`, `MPI_Win_allocate(_shared)`, `MPI_Win_create_dynamic`
/// (and `_c` forms): the communicator, the size, the new window, its
/// displacement unit and members.
macro_rules! win_create {
    (create $id:expr, $mpi:ident, $x:ident, ($b:ident: $tb:ty, $sz:ident: $tsz:ty, $du:ident: $tdu:ty,
        $i:ident: $ti:ty, $c:ident: $tc:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_create!(@ $id, $mpi, $x, ($b: $tb, $sz: $tsz, $du: $tdu, $i: $ti, $c: $tc, $w: $tw) -> $r,
            Create, Some($sz as i64), $du as i64, $c, $w);
    };
    ($kind:ident $id:expr, $mpi:ident, $x:ident, ($sz:ident: $tsz:ty, $du:ident: $tdu:ty, $i:ident: $ti:ty,
        $c:ident: $tc:ty, $b:ident: $tb:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_create!(@ $id, $mpi, $x, ($sz: $tsz, $du: $tdu, $i: $ti, $c: $tc, $b: $tb, $w: $tw) -> $r,
            $kind, Some($sz as i64), $du as i64, $c, $w);
    };
    (dynamic $id:expr, $mpi:ident, $x:ident, ($i:ident: $ti:ty, $c:ident: $tc:ty, $w:ident: $tw:ty) -> $r:ty) => {
        win_create!(@ $id, $mpi, $x, ($i: $ti, $c: $tc, $w: $tw) -> $r, Dynamic, Some(0), 1, $c, $w);
    };
    (@ $id:expr, $mpi:ident, $x:ident, $args:tt -> $r:ty, $kind:ident, $size:expr, $du:expr, $c:ident, $w:ident) => {
        one_sided!($id, $mpi, $x, $args -> $r, req [], pre {}, |sc, rc| {
            let handle = ok(rc).then(|| out!($w).bits());
            if handle.is_some() {
                extract::members($c, sc);
            }
            rma::RmaArgs {
                comm: Some($c.bits()),
                bytes: $size,
                newwin: handle.map(|h| (h, pnmpi_trace::rma::WinKind::$kind, $du)),
                ..rma::RmaArgs::default()
            }
        });
    };
}

/// `MPI_Win_free` (win): the handle, read before MPI nulls it.
macro_rules! win_free {
    ($id:expr, $mpi:ident, $x:ident, ($w:ident: $tw:ty) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($w: $tw) -> $r, req [], pre { let handle = out!($w).bits(); }, |_sc, _rc| {
            rma::RmaArgs { win: Some(handle), ..rma::RmaArgs::default() }
        });
    };
}

/// `MPI_Put`, `MPI_Get` and `MPI_Rput`, `MPI_Rget` (origin, count, type,
/// target, displacement, target count, target type, win[, request]).
macro_rules! put {
    ($id:expr, $mpi:ident, $x:ident, ($o:ident: $to:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $tr:ident: $ttr:ty,
        $d:ident: $td:ty, $tn2:ident: $ttn2:ty, $tdt2:ident: $ttdt2:ty, $w:ident: $tw:ty $(, $req:ident: $treq:ty)?)
        -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($o: $to, $n: $tn, $dt: $tdt, $tr: $ttr, $d: $td, $tn2: $ttn2, $tdt2: $ttdt2,
            $w: $tw $(, $req: $treq)?) -> $r, req [$($req)?], pre {}, |_sc, _rc| rma::RmaArgs {
            peer: Some(i64::from($tr)),
            bytes: Some(bytes($n, $dt)),
            win: Some($w.bits()),
            ..rma::RmaArgs::default()
        });
    };
}

/// `MPI_Accumulate`, `MPI_Raccumulate`: `put`'s arguments and the
/// operation before the window.
macro_rules! accumulate {
    ($id:expr, $mpi:ident, $x:ident, ($o:ident: $to:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $tr:ident: $ttr:ty,
        $d:ident: $td:ty, $tn2:ident: $ttn2:ty, $tdt2:ident: $ttdt2:ty, $op:ident: $top:ty, $w:ident: $tw:ty
        $(, $req:ident: $treq:ty)?) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($o: $to, $n: $tn, $dt: $tdt, $tr: $ttr, $d: $td, $tn2: $ttn2, $tdt2: $ttdt2,
            $op: $top, $w: $tw $(, $req: $treq)?) -> $r, req [$($req)?], pre {}, |_sc, _rc| rma::RmaArgs {
            peer: Some(i64::from($tr)),
            bytes: Some(bytes($n, $dt)),
            win: Some($w.bits()),
            op: Some(rma::op_code($op)),
            ..rma::RmaArgs::default()
        });
    };
}

/// `MPI_Get_accumulate`, `MPI_Rget_accumulate`: origin (sent) and result
/// (fetched) buffers, then `accumulate`'s target side.
macro_rules! get_accumulate {
    ($id:expr, $mpi:ident, $x:ident, ($o:ident: $to:ty, $n:ident: $tn:ty, $dt:ident: $tdt:ty, $res:ident: $tres:ty,
        $rn:ident: $trn:ty, $rdt:ident: $trdt:ty, $tr:ident: $ttr:ty, $d:ident: $td:ty, $tn2:ident: $ttn2:ty,
        $tdt2:ident: $ttdt2:ty, $op:ident: $top:ty, $w:ident: $tw:ty $(, $req:ident: $treq:ty)?) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($o: $to, $n: $tn, $dt: $tdt, $res: $tres, $rn: $trn, $rdt: $trdt, $tr: $ttr,
            $d: $td, $tn2: $ttn2, $tdt2: $ttdt2, $op: $top, $w: $tw $(, $req: $treq)?) -> $r, req [$($req)?], pre {},
            |_sc, _rc| rma::RmaArgs {
                peer: Some(i64::from($tr)),
                bytes: Some(bytes($n, $dt)),
                rbytes: Some(bytes($rn, $rdt)),
                win: Some($w.bits()),
                op: Some(rma::op_code($op)),
                ..rma::RmaArgs::default()
            });
    };
}

/// `MPI_Fetch_and_op` (origin, result, type, target, displacement, op,
/// win): one element each way.
macro_rules! fetch_and_op {
    ($id:expr, $mpi:ident, $x:ident, ($o:ident: $to:ty, $res:ident: $tres:ty, $dt:ident: $tdt:ty, $tr:ident: $ttr:ty,
        $d:ident: $td:ty, $op:ident: $top:ty, $w:ident: $tw:ty) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($o: $to, $res: $tres, $dt: $tdt, $tr: $ttr, $d: $td, $op: $top, $w: $tw) -> $r,
            req [], pre {}, |_sc, _rc| rma::RmaArgs {
                peer: Some(i64::from($tr)),
                bytes: Some(bytes(1, $dt)),
                rbytes: Some(bytes(1, $dt)),
                win: Some($w.bits()),
                op: Some(rma::op_code($op)),
                ..rma::RmaArgs::default()
            });
    };
}

/// `MPI_Compare_and_swap` (origin, compare, result, type, target,
/// displacement, win): origin and compare values go, the result comes.
macro_rules! compare_and_swap {
    ($id:expr, $mpi:ident, $x:ident, ($o:ident: $to:ty, $cmp:ident: $tcmp:ty, $res:ident: $tres:ty, $dt:ident: $tdt:ty,
        $tr:ident: $ttr:ty, $d:ident: $td:ty, $w:ident: $tw:ty) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($o: $to, $cmp: $tcmp, $res: $tres, $dt: $tdt, $tr: $ttr, $d: $td, $w: $tw) -> $r,
            req [], pre {}, |_sc, _rc| rma::RmaArgs {
                peer: Some(i64::from($tr)),
                bytes: Some(bytes(2, $dt)),
                rbytes: Some(bytes(1, $dt)),
                win: Some($w.bits()),
                ..rma::RmaArgs::default()
            });
    };
}

/// Synchronization naming the window only, first (`MPI_Win_complete`,
/// `_wait`, `_test`, `_unlock_all`, `_flush_all`, `_flush_local_all`,
/// `_sync`).
macro_rules! win_only {
    ($id:expr, $mpi:ident, $x:ident, ($w:ident: $tw:ty $(, $a:ident: $t:ty)*) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($w: $tw $(, $a: $t)*) -> $r, req [], pre {}, |_sc, _rc| rma::RmaArgs {
            win: Some($w.bits()),
            ..rma::RmaArgs::default()
        });
    };
}

/// `MPI_Win_unlock`, `MPI_Win_flush`, `MPI_Win_flush_local` (target, win).
macro_rules! win_target {
    ($id:expr, $mpi:ident, $x:ident, ($tr:ident: $ttr:ty, $w:ident: $tw:ty) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($tr: $ttr, $w: $tw) -> $r, req [], pre {}, |_sc, _rc| rma::RmaArgs {
            peer: Some(i64::from($tr)),
            win: Some($w.bits()),
            ..rma::RmaArgs::default()
        });
    };
}

/// `MPI_Win_fence`, `MPI_Win_lock_all` (assert, win).
macro_rules! win_assert {
    ($id:expr, $mpi:ident, $x:ident, ($as:ident: $tas:ty, $w:ident: $tw:ty) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($as: $tas, $w: $tw) -> $r, req [], pre {}, |_sc, _rc| rma::RmaArgs {
            assert: Some(rma::assert_bits($as)),
            win: Some($w.bits()),
            ..rma::RmaArgs::default()
        });
    };
}

/// `MPI_Win_post`, `MPI_Win_start` (group, assert, win): the group's
/// members as world ranks.
macro_rules! win_group {
    ($id:expr, $mpi:ident, $x:ident, ($g:ident: $tg:ty, $as:ident: $tas:ty, $w:ident: $tw:ty) -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($g: $tg, $as: $tas, $w: $tw) -> $r, req [], pre {}, |sc, _rc| {
            extract::group_members($g, sc);
            rma::RmaArgs {
                assert: Some(rma::assert_bits($as)),
                win: Some($w.bits()),
                group: true,
                ..rma::RmaArgs::default()
            }
        });
    };
}

/// `MPI_Win_lock` (lock type, target, assert, win).
macro_rules! win_lock {
    ($id:expr, $mpi:ident, $x:ident, ($lt:ident: $tlt:ty, $tr:ident: $ttr:ty, $as:ident: $tas:ty, $w:ident: $tw:ty)
        -> $r:ty) => {
        one_sided!($id, $mpi, $x, ($lt: $tlt, $tr: $ttr, $as: $tas, $w: $tw) -> $r, req [], pre {}, |_sc, _rc| {
            rma::RmaArgs {
                peer: Some(i64::from($tr)),
                lock: Some(rma::lock_code($lt)),
                assert: Some(rma::assert_bits($as)),
                win: Some($w.bits()),
                ..rma::RmaArgs::default()
            }
        });
    };
}
