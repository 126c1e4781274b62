//! One-sided communication (RMA) in traces: the codes the format gives
//! window kinds, reduction operations, assertions and lock types (the
//! same on every MPI, where the MPIs' own constants differ), the merged
//! trace's window table, and what each one-sided routine does, for the
//! tools that summarise and export traces.
//!
//! The tracer translates the MPI's constants into these codes when it
//! records a call (`docs/trace-format.md`, "One-sided communication"), so
//! that a trace reads the same whatever MPI wrote it.

use crate::error::Malformed;
use crate::varint::{self, Cursor};

/// Chunk type of a merged trace (format 4): the window table.
pub const CHUNK_WINS: u8 = 20;

/// How a window's memory came to be, by its creating routine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WinKind {
    /// `MPI_Win_create`: memory the application passed.
    #[default]
    Create = 0,
    /// `MPI_Win_allocate`: memory MPI allocated.
    Allocate = 1,
    /// `MPI_Win_allocate_shared`: memory shared by the processes of a node.
    AllocateShared = 2,
    /// `MPI_Win_create_dynamic`: memory attached later.
    Dynamic = 3,
}

impl WinKind {
    /// The kind of code `k`, if any.
    pub fn from_code(k: u64) -> Option<WinKind> {
        [
            WinKind::Create,
            WinKind::Allocate,
            WinKind::AllocateShared,
            WinKind::Dynamic,
        ]
        .get(usize::try_from(k).ok()?)
        .copied()
    }

    /// Its name, as `dump` and `stats` print it.
    pub fn name(self) -> &'static str {
        ["create", "allocate", "allocate_shared", "dynamic"][self as usize]
    }

    /// The kind a creating routine makes, by routine name.
    pub fn of_routine(name: &str) -> Option<WinKind> {
        match name.strip_suffix("_c").unwrap_or(name) {
            "MPI_Win_create" => Some(WinKind::Create),
            "MPI_Win_allocate" => Some(WinKind::Allocate),
            "MPI_Win_allocate_shared" => Some(WinKind::AllocateShared),
            "MPI_Win_create_dynamic" => Some(WinKind::Dynamic),
            _ => None,
        }
    }
}

/// The predefined reduction operations, in the order of their codes (an
/// [`OP`](crate::fields::OP) value is an index here; [`OP_USER`] a
/// user-defined operation). `pnmpi-mpi-sys` lists the MPI's handles in
/// this order, and the checker names operations from it.
pub const OP_NAMES: [&str; 14] = [
    "MPI_MAX",
    "MPI_MIN",
    "MPI_SUM",
    "MPI_PROD",
    "MPI_LAND",
    "MPI_BAND",
    "MPI_LOR",
    "MPI_BOR",
    "MPI_LXOR",
    "MPI_BXOR",
    "MPI_MAXLOC",
    "MPI_MINLOC",
    "MPI_REPLACE",
    "MPI_NO_OP",
];

/// The operation code of a user-defined operation.
pub const OP_USER: i64 = OP_NAMES.len() as i64;

/// The name of operation code `op`.
pub fn op_name(op: i64) -> &'static str {
    usize::try_from(op)
        .ok()
        .and_then(|i| OP_NAMES.get(i))
        .copied()
        .unwrap_or("user-defined")
}

/// The assertions, by bit: bit `i` of an [`ASSERT`](crate::fields::ASSERT)
/// value is `MPI_MODE_` + the i-th name, upper-cased.
pub const ASSERT_NAMES: [&str; 5] = ["nocheck", "nostore", "noput", "noprecede", "nosucceed"];

/// The assertion bits as names joined by `|` ("0" for none).
pub fn assert_text(bits: i64) -> String {
    let names: Vec<&str> = ASSERT_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits >> i & 1 != 0)
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "0".into()
    } else {
        names.join("|")
    }
}

/// Lock type code: `MPI_LOCK_EXCLUSIVE`.
pub const LOCK_EXCLUSIVE: i64 = 1;
/// Lock type code: `MPI_LOCK_SHARED`.
pub const LOCK_SHARED: i64 = 2;

/// The name of lock type code `lock`.
pub fn lock_name(lock: i64) -> &'static str {
    match lock {
        LOCK_EXCLUSIVE => "exclusive",
        LOCK_SHARED => "shared",
        _ => "unknown",
    }
}

/// A window of a merged trace's table (ids from 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Win {
    /// How it was created.
    pub kind: WinKind,
    /// The communicator it was created over (a communicator id).
    pub comm: i64,
    /// World ranks of its group, in window rank order.
    pub members: Vec<i64>,
}

/// The payload of a `WINS` chunk.
pub(crate) fn wins_payload(wins: &[Win]) -> Vec<u8> {
    let mut p = Vec::new();
    varint::push(&mut p, wins.len() as u64);
    for w in wins {
        varint::push(&mut p, w.kind as u64);
        varint::push_i(&mut p, w.comm);
        varint::put_ranks(&mut p, &w.members);
    }
    p
}

/// A `WINS` chunk's windows, appended to `out`.
pub(crate) fn parse_wins(c: &mut Cursor<'_>, out: &mut Vec<Win>) -> Result<(), Malformed> {
    let n = c.count(3)?;
    for _ in 0..n {
        let k = c.u64()?;
        let kind = WinKind::from_code(k).ok_or_else(|| c.error(format!("unknown window kind {k}")))?;
        let comm = c.i64()?;
        let members = c.ranks()?;
        out.push(Win { kind, comm, members });
    }
    Ok(())
}

/// What a one-sided routine does, by name (the `_c` large-count forms
/// as their base routine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmaRole {
    /// Creates a window.
    Create(WinKind),
    /// `MPI_Win_free`.
    Free,
    /// Moves data: `MPI_Put`, `MPI_Get`, the accumulates and atomics, and
    /// their request forms.
    Data(DataOp),
    /// `MPI_Win_fence`: closes and opens an epoch of the window's group.
    Fence,
    /// `MPI_Win_post`: exposes the window to a group.
    Post,
    /// `MPI_Win_start`: opens an access epoch to a group.
    Start,
    /// `MPI_Win_complete`: closes the access epoch of `MPI_Win_start`.
    Complete,
    /// `MPI_Win_wait`, `MPI_Win_test`: closes the exposure epoch.
    Wait,
    /// `MPI_Win_lock`.
    Lock,
    /// `MPI_Win_unlock`.
    Unlock,
    /// `MPI_Win_lock_all`.
    LockAll,
    /// `MPI_Win_unlock_all`.
    UnlockAll,
    /// `MPI_Win_flush`, `MPI_Win_flush_local` (local: the origin's
    /// buffers only).
    Flush {
        /// `_local`.
        local: bool,
    },
    /// `MPI_Win_flush_all`, `MPI_Win_flush_local_all`.
    FlushAll {
        /// `_local`.
        local: bool,
    },
    /// `MPI_Win_sync`.
    Sync,
}

/// The data-moving one-sided operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataOp {
    /// `MPI_Put`, `MPI_Rput`: origin to target.
    Put,
    /// `MPI_Get`, `MPI_Rget`: target to origin.
    Get,
    /// `MPI_Accumulate`, `MPI_Raccumulate`: origin combined into target.
    Accumulate,
    /// `MPI_Get_accumulate`, `MPI_Rget_accumulate`: fetch then combine.
    GetAccumulate,
    /// `MPI_Fetch_and_op`: one element's [`DataOp::GetAccumulate`].
    FetchAndOp,
    /// `MPI_Compare_and_swap`.
    CompareAndSwap,
}

impl RmaRole {
    /// The role of routine `name`, if it is one-sided.
    pub fn of(name: &str) -> Option<RmaRole> {
        if let Some(kind) = WinKind::of_routine(name) {
            return Some(RmaRole::Create(kind));
        }
        let base = name.strip_suffix("_c").unwrap_or(name);
        Some(match base {
            "MPI_Win_free" => RmaRole::Free,
            "MPI_Put" | "MPI_Rput" => RmaRole::Data(DataOp::Put),
            "MPI_Get" | "MPI_Rget" => RmaRole::Data(DataOp::Get),
            "MPI_Accumulate" | "MPI_Raccumulate" => RmaRole::Data(DataOp::Accumulate),
            "MPI_Get_accumulate" | "MPI_Rget_accumulate" => RmaRole::Data(DataOp::GetAccumulate),
            "MPI_Fetch_and_op" => RmaRole::Data(DataOp::FetchAndOp),
            "MPI_Compare_and_swap" => RmaRole::Data(DataOp::CompareAndSwap),
            "MPI_Win_fence" => RmaRole::Fence,
            "MPI_Win_post" => RmaRole::Post,
            "MPI_Win_start" => RmaRole::Start,
            "MPI_Win_complete" => RmaRole::Complete,
            "MPI_Win_wait" | "MPI_Win_test" => RmaRole::Wait,
            "MPI_Win_lock" => RmaRole::Lock,
            "MPI_Win_unlock" => RmaRole::Unlock,
            "MPI_Win_lock_all" => RmaRole::LockAll,
            "MPI_Win_unlock_all" => RmaRole::UnlockAll,
            "MPI_Win_flush" => RmaRole::Flush { local: false },
            "MPI_Win_flush_local" => RmaRole::Flush { local: true },
            "MPI_Win_flush_all" => RmaRole::FlushAll { local: false },
            "MPI_Win_flush_local_all" => RmaRole::FlushAll { local: true },
            "MPI_Win_sync" => RmaRole::Sync,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routines_have_their_roles() {
        assert_eq!(RmaRole::of("MPI_Put"), Some(RmaRole::Data(DataOp::Put)));
        assert_eq!(
            RmaRole::of("MPI_Rget_accumulate"),
            Some(RmaRole::Data(DataOp::GetAccumulate))
        );
        assert_eq!(
            RmaRole::of("MPI_Win_allocate_shared_c"),
            Some(RmaRole::Create(WinKind::AllocateShared))
        );
        assert_eq!(
            RmaRole::of("MPI_Win_flush_local_all"),
            Some(RmaRole::FlushAll { local: true })
        );
        assert_eq!(RmaRole::of("MPI_Send"), None);
        assert_eq!(RmaRole::of("MPI_Win_get_group"), None);
    }

    #[test]
    fn codes_have_names() {
        assert_eq!(op_name(2), "MPI_SUM");
        assert_eq!(op_name(OP_USER), "user-defined");
        assert_eq!(assert_text(0), "0");
        assert_eq!(assert_text(1 | 8), "nocheck|noprecede");
        assert_eq!(lock_name(LOCK_SHARED), "shared");
    }

    #[test]
    fn the_window_table_round_trips() {
        let wins = vec![
            Win {
                kind: WinKind::Allocate,
                comm: 0,
                members: vec![0, 1, 2, 3],
            },
            Win {
                kind: WinKind::AllocateShared,
                comm: 2,
                members: vec![3, 1],
            },
        ];
        let p = wins_payload(&wins);
        let mut back = Vec::new();
        let mut c = Cursor::new(&p, 0);
        parse_wins(&mut c, &mut back).unwrap();
        assert!(c.is_empty());
        assert_eq!(back, wins);
    }
}
