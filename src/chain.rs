//! The configured chain as a whole: the loaded modules, the stacks they
//! form, and which of them apply right now. Selection by rank and by
//! Pcontrol phase changes which link stacks are live; each distinct choice
//! builds its table once and is cached, so a program that switches phases
//! often does not grow.
//!
//! Levels: 0 is the application (the top of the default stack); module `i`
//! (0-based, configuration order, all stacks) is level `i + 1`; the top of
//! the k-th named stack is level `N + k`. A stack handle is its top level.

use crate::binding::Binding;
use crate::config::{PcontrolMode, DEFAULT_STACK, INITIAL_PHASE};
use crate::dispatch::{self, StackLayout, Table};
use crate::entry::ByRoutine;
use crate::level;
use crate::loader::Module;
use once_cell::sync::OnceCell;
use parking_lot::Mutex;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use std::collections::HashMap;

/// The loaded chain; set once, by start-up, never dropped.
static LOADED: OnceCell<Chain> = OnceCell::new();

/// The chain, once the modules are loaded.
pub fn loaded() -> Option<&'static Chain> {
    LOADED.get()
}

/// Makes `make`'s chain the loaded one (unless one is already).
pub fn install(make: impl FnOnce() -> Chain) -> &'static Chain {
    LOADED.get_or_init(make)
}

/// The level of the module that called an `XMPI_X` fallback entry or a
/// `...Self` service, which returned to `return_address`: under direct
/// binding the module holding that address, else the thread's level (kept
/// by the dispatcher, and set while hooks run).
#[inline]
pub fn caller_level(return_address: usize) -> u32 {
    loaded()
        .filter(|chain| chain.binding == Binding::Direct)
        .and_then(|chain| chain.module_holding(return_address))
        .map_or_else(level::get, |i| i as u32 + 1)
}

/// One stack: its name, its top level and its members (module indices).
pub struct Stack {
    pub name: String,
    pub top: u32,
    pub members: Vec<usize>,
}

/// What decides which modules are live.
struct Live {
    rank: i64,
    phase: i64,
    /// Tables already built, by the set of live modules.
    tables: HashMap<Vec<bool>, &'static Table>,
}

/// The loaded chain.
pub struct Chain {
    pub modules: Vec<Module>,
    pub stacks: Vec<Stack>,
    /// Does `MPI_Pcontrol` reach module i?
    pcontrol: Vec<bool>,
    /// The wrappers of each module that its selection keeps, before rank
    /// and phase are applied.
    kept: Vec<Vec<(usize, *const ())>>,
    /// How layers reach each other.
    pub binding: Binding,
    /// The dispatcher's entry of each routine, for dispatch binding.
    dispatcher: ByRoutine,
    /// `(start, end, module index)` of every module segment, sorted, to
    /// find the module a return address lies in.
    code: Vec<(usize, usize, usize)>,
    live: Mutex<Live>,
}

// SAFETY: the raw pointers in `kept` are code addresses of modules that
// stay loaded; they are only read.
unsafe impl Send for Chain {}
// SAFETY: as above; mutable state is behind the mutex.
unsafe impl Sync for Chain {}

impl Chain {
    /// Groups `modules` into stacks (the default stack first, then named
    /// stacks in order of appearance) and applies the routine selection
    /// and Pcontrol delivery rules. `dispatcher` gives the dispatcher's
    /// entry of a routine (the stubs', above this layer).
    pub fn new(
        modules: Vec<Module>,
        pcontrol_mode: PcontrolMode,
        binding: Binding,
        dispatcher: ByRoutine,
        rank: i64,
    ) -> Chain {
        let mut stacks = vec![Stack {
            name: DEFAULT_STACK.into(),
            top: 0,
            members: vec![],
        }];
        let n = modules.len() as u32;
        for (i, m) in modules.iter().enumerate() {
            let s = match stacks.iter().position(|s| s.name == m.spec.stack) {
                Some(s) => s,
                None => {
                    let top = n + stacks.len() as u32;
                    stacks.push(Stack {
                        name: m.spec.stack.clone(),
                        top,
                        members: vec![],
                    });
                    stacks.len() - 1
                }
            };
            stacks[s].members.push(i);
        }
        let pcontrol_id = ROUTINE_NAMES.iter().position(|r| *r == "MPI_Pcontrol");
        let pcontrol: Vec<bool> = modules
            .iter()
            .enumerate()
            .map(|(i, m)| match pcontrol_mode {
                PcontrolMode::On => true,
                PcontrolMode::Off => false,
                PcontrolMode::Int => m
                    .spec
                    .pcontrol
                    .unwrap_or(stacks.iter().any(|s| s.members.first() == Some(&i))),
            })
            .collect();
        let kept = modules
            .iter()
            .zip(&pcontrol)
            .map(|(m, &gets_pcontrol)| {
                m.wraps
                    .iter()
                    .copied()
                    .filter(|&(id, _)| Some(id) != pcontrol_id || gets_pcontrol)
                    .filter(|&(id, _)| m.spec.select.covers(ROUTINE_NAMES[id]))
                    .collect()
            })
            .collect();
        let mut code: Vec<(usize, usize, usize)> = modules
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.ranges().map(move |(start, end)| (start, end, i)))
            .collect();
        code.sort_unstable();
        let live = Mutex::new(Live {
            rank,
            phase: INITIAL_PHASE,
            tables: HashMap::new(),
        });
        Chain {
            modules,
            stacks,
            pcontrol,
            kept,
            binding,
            dispatcher,
            code,
            live,
        }
    }

    /// Number of levels: the application, the modules, the named stacks' tops.
    fn levels(&self) -> usize {
        self.modules.len() + self.stacks.len()
    }

    /// Builds (or reuses) the table for the current rank and phase and
    /// makes it live: in the dispatcher's tables, and in the entry table
    /// and module GOT slots the binding writes.
    pub fn publish(&self) -> Result<(), String> {
        let mut live = self.live.lock();
        let active: Vec<bool> = self
            .modules
            .iter()
            .map(|m| m.spec.select.active(live.rank, live.phase))
            .collect();
        let table = *live.tables.entry(active.clone()).or_insert_with(|| {
            let layouts: Vec<StackLayout> = self
                .stacks
                .iter()
                .map(|s| StackLayout {
                    top: s.top,
                    members: s
                        .members
                        .iter()
                        .map(|&i| (i as u32 + 1, if active[i] { &self.kept[i][..] } else { &[][..] }))
                        .collect(),
                })
                .collect();
            Box::leak(Box::new(Table::build(self.levels(), &layouts)))
        });
        dispatch::publish(table);
        self.binding.apply(&self.modules, table, self.dispatcher)
    }

    /// The application called `MPI_Pcontrol(level)`: switch phase, if any
    /// module's activity depends on it.
    pub fn set_phase(&self, phase: i64) {
        if !self.modules.iter().any(|m| m.spec.select.phased()) {
            return;
        }
        let changed = {
            let mut live = self.live.lock();
            std::mem::replace(&mut live.phase, phase) != phase
        };
        if changed {
            self.republish();
        }
    }

    /// Publishes again during the run, when there is no error path back
    /// to the user: a failure to rewrite a module's GOT (which worked when
    /// the modules were loaded) stops the process with the reason.
    fn republish(&self) {
        if let Err(e) = self.publish() {
            pnmpi_sdk::say::fatal(
                pnmpi_sdk::say::LIBPNMPI,
                format_args!("cannot rebind the modules: {e}"),
            );
        }
    }

    /// MPI now knows the world rank: reselect if it differs from the
    /// launcher's, which the first selection used.
    pub fn set_rank(&self, rank: i64) {
        let changed = {
            let mut live = self.live.lock();
            std::mem::replace(&mut live.rank, rank) != rank
        };
        if changed {
            self.republish();
        }
    }

    /// Does any module select by rank?
    pub fn selects_ranks(&self) -> bool {
        self.modules.iter().any(|m| m.spec.select.ranks.is_some())
    }

    /// The module at `level`, if `level` is a module's.
    pub fn module_at(&self, level: u32) -> Option<(usize, &Module)> {
        let i = (level as usize).checked_sub(1)?;
        self.modules.get(i).map(|m| (i, m))
    }

    /// The module whose code or data holds `address`.
    pub fn module_holding(&self, address: usize) -> Option<usize> {
        let after = self.code.partition_point(|&(start, _, _)| start <= address);
        let &(_, end, i) = self.code[..after].last()?;
        (address < end).then_some(i)
    }

    /// The stack whose top is `top`.
    pub fn stack_with_top(&self, top: u32) -> Option<&Stack> {
        self.stacks.iter().find(|s| s.top == top)
    }

    /// Does `MPI_Pcontrol` reach module `index`?
    pub fn gets_pcontrol(&self, index: usize) -> bool {
        self.pcontrol[index]
    }

    /// Calls `hook` in module `index`, at that module's level, so that the
    /// hook's service calls know who is calling. Returns whether the module
    /// defines the hook.
    pub fn run_hook(&self, index: usize, hook: &str) -> bool {
        let _level = level::Guard::enter(index as u32 + 1);
        self.modules[index].call_hook(hook)
    }

    /// Runs `hook` in every module, in configuration order.
    pub fn run_hook_everywhere(&self, hook: &str) {
        (0..self.modules.len()).for_each(|i| {
            self.run_hook(i, hook);
        });
    }

    /// Calls `hook` in the first module below level `from`, in `from`'s
    /// stack, that defines it (LLNL's recursive hooks).
    pub fn call_hook_below(&self, from: u32, hook: &str) {
        let (stack, after) = match self.module_at(from) {
            Some((i, _)) => {
                let stack = self
                    .stacks
                    .iter()
                    .find(|s| s.members.contains(&i))
                    .expect("every module is in a stack");
                (
                    stack,
                    stack.members.iter().position(|&m| m == i).map_or(0, |p| p + 1),
                )
            }
            None => match self.stack_with_top(from) {
                Some(stack) => (stack, 0),
                None => return,
            },
        };
        let _ = stack.members[after..].iter().any(|&i| self.run_hook(i, hook));
    }
}
