//! How one layer reaches the next.
//!
//! - **Direct** (the default on x86-64): every `XMPI_X` GOT slot of every
//!   module is written with the address of the next wrapper of X below
//!   that module in its own stack, or with `PMPI_X`, and the entry table
//!   behind the application's `MPI_X` holds the first wrapper. A call goes
//!   from layer to layer exactly as under static PMPI linking: no lookup,
//!   no thread-local state, no frame of libpnmpi's.
//! - **Dispatch**: the entry table holds the dispatcher, which keeps the
//!   calling thread's level and finds each next layer in the link stacks;
//!   modules' `XMPI_X` imports reach libpnmpi's exported `XMPI_X`. Chosen
//!   with `PNMPI_BINDING=dispatch`, on other architectures, and when a
//!   module moves the thread between stacks with
//!   `PNMPI_Service_ChangeStack`, keeps an `XMPI_X` address in data, or
//!   brings in a library of its own that calls `XMPI_X`.
//!
//! Rebinding (a phase or rank selection change) writes the slots of the
//! lowest module first and the entry table last, one aligned pointer store
//! each, so a thread inside the chain meanwhile always finds a complete
//! chain: old above, new below.

use crate::dispatch::Table;
use crate::entry::{self, ByRoutine};
use crate::loader::Module;
use pnmpi_mpi_sys::ROUTINE_COUNT;
use pnmpi_objects::got;

/// The environment variable that chooses the binding.
pub const VARIABLE: &str = "PNMPI_BINDING";

/// Level of the application, the top of the default stack.
const TOP: u32 = 0;

/// How layers reach each other for the whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// Module GOT slots point straight at the next layer.
    Direct,
    /// Every layer goes through the dispatcher, for the reason given.
    Dispatch(String),
}

impl Binding {
    /// The binding for `modules`, given the value of `PNMPI_BINDING`.
    pub fn choose(requested: Option<&str>, modules: &[Module]) -> Result<Binding, String> {
        match requested.unwrap_or_default() {
            "" | "direct" => {}
            "dispatch" => return Ok(Binding::Dispatch(format!("{VARIABLE}=dispatch"))),
            other => {
                return Err(format!(
                    "{VARIABLE}={other:?} is not a binding; use `direct` (the default) or `dispatch`"
                ))
            }
        }
        if !cfg!(target_arch = "x86_64") {
            return Ok(Binding::Dispatch(
                "direct binding is implemented for x86-64 only".into(),
            ));
        }
        for m in modules {
            if m.file().changes_stack {
                return Ok(Binding::Dispatch(format!(
                    "module `{}` calls PNMPI_Service_ChangeStack, whose thread-local stack switch only the \
                     dispatcher follows",
                    m.display_name()
                )));
            }
            if let Some(helper) = m.helpers_calling_xmpi.first() {
                return Ok(Binding::Dispatch(format!(
                    "module `{}` loaded {}, which calls XMPI_ routines from a GOT libpnmpi does not bind",
                    m.display_name(),
                    helper.display()
                )));
            }
            if let Some(name) = m.file().unbindable.first() {
                return Ok(Binding::Dispatch(format!(
                    "module `{}` keeps the address of {name} in data, where binding cannot follow it",
                    m.display_name()
                )));
            }
        }
        Ok(Binding::Direct)
    }

    /// Points the entry table, and under direct binding every module's
    /// `XMPI_X` slots, at the layers of `table`; under dispatch binding a
    /// wrapped routine's entry goes to `dispatcher(id)`.
    pub fn apply(&self, modules: &[Module], table: &Table, dispatcher: ByRoutine) -> Result<(), String> {
        match self {
            Binding::Direct => {
                for (i, m) in modules.iter().enumerate().rev() {
                    bind_module(m, i as u32 + 1, table)?;
                }
                for id in 0..ROUTINE_COUNT {
                    entry::set(id, table.next(id, TOP).map_or(entry::native(id), |hop| hop.func));
                }
            }
            Binding::Dispatch(_) => {
                for id in 0..ROUTINE_COUNT {
                    let wrapped = table.depth(id) > 0;
                    entry::set(
                        id,
                        if wrapped {
                            dispatcher(id)
                        } else {
                            entry::native(id)
                        },
                    );
                }
            }
        }
        Ok(())
    }
}

/// Writes every `XMPI_X` slot of module `m` (at `level`) with the next
/// layer below it.
fn bind_module(m: &Module, level: u32, table: &Table) -> Result<(), String> {
    let file = m.file();
    let slots: Vec<(usize, usize)> = file
        .xmpi_slots
        .iter()
        .map(|&(id, vaddr)| {
            let target = table.next(id, level).map_or(entry::native(id), |hop| hop.func);
            (m.address(vaddr), target as usize)
        })
        .collect();
    if slots.is_empty() {
        return Ok(());
    }
    // SAFETY: the slots are the module's own `XMPI_X` GOT entries, and each
    // target is the next layer of the same routine, of its signature.
    unsafe {
        got::write(
            &format!("module `{}`", m.display_name()),
            m.address(0),
            file.layout.relro,
            &slots,
        )
    }
}
