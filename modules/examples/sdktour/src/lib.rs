//! sdktour: uses each part of pnmpi-sdk once, from real hooks and
//! wrappers, and has rank 0 print what each call gave, so that
//! tests/guide.rs checks the SDK under each MPI.
//!
//! Configured with `argument route STACK`, it sends the application's
//! `MPI_Send` calls into that stack (`next_in!`) instead of down its own,
//! and at `MPI_Finalize` reads the global `sends` of the module
//! `guide_example` there. Every hook is defined.

use pnmpi_sdk::next::{self, MpiError};
use pnmpi_sdk::services::{self, ServiceDescriptor, Stack};
use pnmpi_sdk::{constants, Comm};
use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

/// Offered to other modules as the global `served`.
static SERVED: AtomicI32 = AtomicI32::new(7);
/// What the hooks found, printed by rank 0 at MPI_Finalize.
static FOUND: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The stack of `argument route`, if any.
static ROUTE: OnceLock<Option<Stack>> = OnceLock::new();
/// The world rank, known from MPI_Finalize on; -1 before.
static RANK: AtomicI32 = AtomicI32::new(-1);

/// Offered as the service `answer` with signature `i`.
extern "C" fn answer() -> c_int {
    42
}

fn found(line: String) {
    FOUND.lock().unwrap_or_else(|e| e.into_inner()).push(line);
}

/// Prints on rank 0 once MPI has finished (the exit hooks).
fn after_mpi(what: &str) {
    if RANK.load(Relaxed) == 0 {
        println!("sdktour: {what}");
    }
}

pnmpi_sdk::module! {
    name: "sdktour",
    registration_point: || {
        let offered = services::register_global("served", &SERVED)
            .and_then(|()| services::register_service(&ServiceDescriptor::new("answer", "i", answer)?));
        found(format!("registered: {offered:?}"));
    },
    init: || {
        let greeting = services::argument("greeting");
        found(format!("arguments: greeting {greeting:?}, missing {:?}", services::argument("missing")));
        let me = services::module_self();
        found(format!("self is sdktour: {}", me == services::module_by_name("sdktour")));
        let Ok(me) = me else { return };
        match services::module_by_name("nope") {
            Ok(_) => found("module nope exists".into()),
            Err(e) => found(format!("module nope: {e:?}, {e}")),
        }
        let served = services::global_by_name::<AtomicI32>(me, "served");
        let same = served.is_ok_and(|g| std::ptr::eq(g, &SERVED));
        let wrong = services::global_by_name::<AtomicI64>(me, "served").err();
        found(format!("global served: same {same}, as a long {wrong:?}"));
        let service = services::service_by_name(me, "answer", "i");
        let named = service.map(|s| (s.name(), s.sig(), s.function().is_some()));
        let wrong = services::service_by_name(me, "answer", "p").err();
        found(format!("service answer: {named:?}, as p {wrong:?}"));
        found(format!("pcontrol reaches sdktour: {}", services::pcontrol_self()));
        let route = services::argument("route").map(|name| services::stack_by_name(&name));
        found(format!("route: {:?}, stack nope: {:?}", route.map(|r| r.is_ok()), services::stack_by_name("nope").err()));
        ROUTE.get_or_init(|| route.and_then(Result::ok));
    },
    fini: || after_mpi("fini"),
    unregistration_point: || after_mpi("unregistration point"),
}

pnmpi_sdk::wrap! {
    fn MPI_Send(_buf, _count, _datatype, _dest, _tag, _comm) {
        match ROUTE.get().copied().flatten() {
            Some(stack) => next_in!(stack),
            None => next!(),
        }
    }

    fn MPI_Finalize() {
        if let Err(e) = tour() {
            pnmpi_sdk::say::warn("sdktour", e);
        }
        next!()
    }
}

/// Rank 0 (ranks in order) and the others pass one value round a ring on
/// `comm`; returns what arrived.
fn ring(comm: Comm, rank: i32, size: i32) -> Result<(next::Received, i64), MpiError> {
    let (to, from) = ((rank + 1) % size, (rank + size - 1) % size);
    let mut got = [0i64];
    let received = if rank == 0 {
        next::send(&[i64::from(rank) * 10], to, 5, comm)?;
        next::recv(&mut got, constants::ANY_SOURCE(), constants::ANY_TAG(), comm)?
    } else {
        let received = next::recv(&mut got, from, 5, comm)?;
        next::send(&[i64::from(rank) * 10], to, 5, comm)?;
        received
    };
    Ok((received, got[0]))
}

/// The MPI calls of the SDK, on a communicator of the module's own.
fn tour() -> Result<(), MpiError> {
    let world = constants::COMM_WORLD();
    let rank = next::comm_rank(world)?;
    let size = next::comm_size(world)?;
    RANK.store(rank, Relaxed);
    let own = next::comm_dup(world)?;
    let (received, value) = ring(own, rank, size)?;
    let mine = vec![u8::try_from(rank).unwrap_or(0); usize::try_from(rank).unwrap_or(0) + 1];
    let blocks = next::gatherv(&mine, own)?;
    let start = next::wtime();
    next::barrier(own)?;
    let elapsed = next::wtime() - start;
    let int_size = next::type_size(constants::INT())?;
    next::comm_free(own)?;
    let counted = services::module_by_name("guide_example")
        .and_then(|m| services::global_by_name::<AtomicI64>(m, "sends"))
        .map(|g| g.load(Relaxed));
    if let Some(blocks) = blocks {
        for line in FOUND.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            println!("sdktour: {line}");
        }
        println!(
            "sdktour: rank 0 of {size}; an int is {int_size} bytes; time goes on: {}",
            elapsed >= 0.0
        );
        println!("sdktour: ring on a dup: {received:?}, value {value}");
        println!("sdktour: gatherv: {blocks:?}");
        println!("sdktour: sends counted by guide_example: {counted:?}");
    }
    Ok(())
}
