//! One-sided calls replayed: constructed traces of a fence epoch, a
//! post/start/complete/wait epoch, a lock epoch and a request-form put,
//! against the kernel's rule computed by hand on the simple model (1 us,
//! 1 GB/s: 1,000 bytes take 1 us more than an empty message).

use crate::common::TWO_NODES;
use pnmpi_sim::engine::{replay, Options, Outcome};
use pnmpi_sim::input::events::MemorySource;
use pnmpi_sim::input::trace::TraceOps;
use pnmpi_sim::input::OpSource;
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model;
use pnmpi_trace::fields::V;
use pnmpi_trace::rma::{Win, WinKind};
use pnmpi_trace::trace::{Done, Event, ReqRef, Stream, Trace};

const ROUTINES: [&str; 13] = [
    "MPI_Init",
    "MPI_Finalize",
    "MPI_Win_fence",
    "MPI_Put",
    "MPI_Get",
    "MPI_Win_post",
    "MPI_Win_start",
    "MPI_Win_complete",
    "MPI_Win_wait",
    "MPI_Win_lock",
    "MPI_Win_unlock",
    "MPI_Rput",
    "MPI_Wait",
];

/// An event of `routine` at `t` (zero-length: the traced times add no
/// CPU time), on window 0.
fn ev(routine: &str, t: u64) -> Event {
    let mut e = Event {
        routine: ROUTINES.iter().position(|r| *r == routine).unwrap() as u32,
        start: t,
        end: t,
        ..Event::default()
    };
    if routine.starts_with("MPI_Win_")
        || routine.ends_with("put")
        || routine.ends_with("Put")
        || routine == "MPI_Get"
    {
        e.set(V::Win, Some(0));
    }
    e
}

/// A data operation (or a lock or unlock) with `target`.
fn to(routine: &str, target: i64, bytes: i64) -> Event {
    let mut e = ev(routine, 0);
    e.set(V::Peer, Some(target));
    e.set(V::Bytes, Some(bytes));
    e
}

/// `MPI_Win_post` or `MPI_Win_start` with `group`.
fn group(routine: &str, group: &[i64]) -> Event {
    let mut e = ev(routine, 0);
    e.group = Some(group.to_vec());
    e
}

/// Replays two ranks' events, each between `MPI_Init` and
/// `MPI_Finalize`, over one window of both.
fn replay_ranks(ranks: [Vec<Event>; 2]) -> Outcome {
    let (out, warnings) = try_replay(ranks);
    assert!(warnings.is_empty(), "{warnings:?}");
    out.unwrap()
}

/// [`replay_ranks`]'s outcome, or its error, and the input's warnings.
fn try_replay(ranks: [Vec<Event>; 2]) -> (Result<Outcome, pnmpi_sim::SimError>, Vec<String>) {
    let streams = ranks
        .into_iter()
        .enumerate()
        .map(|(r, body)| {
            let mut events = vec![ev("MPI_Init", 0)];
            events.extend(body);
            events.push(ev("MPI_Finalize", 0));
            Stream {
                rank: r as u32,
                thread: 0,
                events,
            }
        })
        .collect();
    let trace = Trace {
        world_size: 2,
        mpi: "test".into(),
        routines: ROUTINES.map(String::from).to_vec(),
        streams,
        wins: vec![Win {
            kind: WinKind::Allocate,
            comm: 0,
            members: vec![0, 1],
        }],
        ..Trace::default()
    };
    let m = Machine::parse("test.toml", TWO_NODES).unwrap();
    let mut model = model::build("simple", &m).unwrap();
    let mut src = TraceOps::new(MemorySource::new(trace));
    let out = replay(&mut src, &m, model.as_mut(), Options::default());
    (out, src.warnings())
}

fn ends(out: &Outcome) -> [f64; 2] {
    [out.stats.actors[0].end, out.stats.actors[1].end]
}

/// A put is its data there (2 us for 1,000 bytes) and an acknowledgement
/// back (1 us): the closing fence starts 3 us after the opening one on
/// the origin, and the target waits for it there.
#[test]
fn a_fence_waits_for_the_put_it_closes() {
    let fences = || vec![ev("MPI_Win_fence", 0), ev("MPI_Win_fence", 0)];
    let plain = replay_ranks([fences(), fences()]);
    let mut put = fences();
    put.insert(1, to("MPI_Put", 1, 1000));
    let out = replay_ranks([put, fences()]);
    let [a, b] = ends(&out);
    assert_eq!(a, b, "a fence ends together");
    assert_eq!(a - ends(&plain)[0], 3000.0);
    assert_eq!(out.stats.actors[1].wait - plain.stats.actors[1].wait, 3000.0);
}

/// The target's post reaches the origin after 1 us; its put is done 3 us
/// later; its complete's message reaches the target 1 us after that.
#[test]
fn post_start_complete_wait_exchange_empty_messages_around_the_epoch() {
    let origin = vec![
        group("MPI_Win_start", &[1]),
        to("MPI_Put", 1, 1000),
        ev("MPI_Win_complete", 0),
    ];
    let target = vec![group("MPI_Win_post", &[0]), ev("MPI_Win_wait", 0)];
    let out = replay_ranks([origin, target]);
    assert_eq!(ends(&out), [4000.0, 5000.0]);
}

/// A get is a request there (1 us) and its data back (2 us); the unlock
/// waits for it; the lock costs nothing; the target takes no part.
#[test]
fn an_unlock_waits_for_the_get_it_closes() {
    let origin = vec![
        to("MPI_Win_lock", 1, 0),
        to("MPI_Get", 1, 1000),
        to("MPI_Win_unlock", 1, 0),
    ];
    let out = replay_ranks([origin, vec![]]);
    assert_eq!(ends(&out), [3000.0, 0.0]);
}

/// A request-form put's wait ends at its local completion, its data
/// there (2 us), before the acknowledgement: a get issued then is done 3
/// us later, and the unlock waits for it.
#[test]
fn a_request_put_completes_its_request_at_local_completion() {
    // The first request of rank 0's stream.
    let rput = to("MPI_Rput", 1, 1000);
    let mut wait = ev("MPI_Wait", 0);
    wait.done = vec![Done {
        req: Some(ReqRef { stream: 0, index: 0 }),
        status: None,
    }];
    let origin = vec![
        to("MPI_Win_lock", 1, 0),
        rput,
        wait,
        to("MPI_Get", 1, 1000),
        to("MPI_Win_unlock", 1, 0),
    ];
    let out = replay_ranks([origin, vec![]]);
    assert_eq!(ends(&out), [2000.0 + 3000.0, 0.0]);
}

/// A start whose target never posts, and a fence one member never
/// enters, are deadlocks that name the call and the window.
#[test]
fn an_epoch_that_never_opens_is_a_deadlock_naming_its_call() {
    let deadlock = |out: Result<Outcome, pnmpi_sim::SimError>| match out {
        Ok(_) => panic!("no deadlock"),
        Err(e) => e.to_string(),
    };
    let (out, _) = try_replay([vec![group("MPI_Win_start", &[1])], vec![]]);
    let e = deadlock(out);
    assert!(e.contains("MPI_Win_start") && e.contains("window 0"), "{e}");
    let (out, _) = try_replay([vec![ev("MPI_Win_fence", 0)], vec![]]);
    let e = deadlock(out);
    assert!(e.contains("MPI_Win_fence") && e.contains("window 0"), "{e}");
}
