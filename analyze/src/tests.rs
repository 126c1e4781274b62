//! The analysis on small traces built in memory, whose waits and paths
//! are known by construction.

use crate::load::{from_trace, Options, Run};
use crate::path::{critical_path, Activity};
use crate::summary;
use crate::waits::Pattern;
use pnmpi_trace::fields::V;
use pnmpi_trace::trace::{Event, Stream, Trace};

const ROUTINES: [&str; 7] = [
    "MPI_Init",
    "MPI_Finalize",
    "MPI_Send",
    "MPI_Recv",
    "MPI_Barrier",
    "MPI_Reduce",
    "MPI_Bcast",
];

/// A call of routine `name` from `start` to `end` (ns), with fields.
fn call(name: &str, start: u64, end: u64, fields: &[(V, i64)]) -> Event {
    let mut e = Event {
        routine: ROUTINES.iter().position(|r| *r == name).unwrap() as u32,
        start,
        end,
        ..Event::default()
    };
    e.set(V::Comm, Some(0));
    for &(v, x) in fields {
        e.set(v, Some(x));
    }
    e
}

/// A run of one stream per rank: `MPI_Init` over [0, 10], the calls,
/// `MPI_Finalize` at `fin`; sends above `eager` bytes are rendezvous.
fn run_eager(ranks: Vec<Vec<Event>>, fin: u64, eager: u64) -> Run {
    let streams = ranks
        .into_iter()
        .enumerate()
        .map(|(r, calls)| {
            let mut events = vec![call("MPI_Init", 0, 10, &[])];
            events.extend(calls);
            events.push(call("MPI_Finalize", fin, fin + 10, &[]));
            Stream {
                rank: r as u32,
                thread: 0,
                events,
            }
        })
        .collect::<Vec<_>>();
    from_trace(
        Trace {
            world_size: streams.len() as u32,
            mpi: "test".into(),
            routines: ROUTINES.iter().map(|r| r.to_string()).collect(),
            streams,
            ..Trace::default()
        },
        Options {
            eager,
            ..Options::default()
        },
    )
    .unwrap()
}

/// [`run_eager`] with a 64 KiB eager threshold.
fn run(ranks: Vec<Vec<Event>>, fin: u64) -> Run {
    run_eager(ranks, fin, 65536)
}

#[test]
fn late_sender_and_its_path() {
    let send = call(
        "MPI_Send",
        2010,
        2020,
        &[(V::Peer, 1), (V::Tag, 0), (V::Bytes, 8)],
    );
    let recv = call("MPI_Recv", 20, 2025, &[(V::Peer, 0), (V::Tag, 0), (V::Bytes, 8)]);
    let r = run(vec![vec![send], vec![recv]], 2030);
    let w = &r.waits;
    assert_eq!(w.len(), 1);
    assert_eq!(
        (w[0].pattern, w[0].time, r.rank(w[0].at.actor)),
        (Pattern::LateSender, 1990.0, 1)
    );
    assert_eq!((r.rank(w[0].cause.actor), r.routine(w[0].cause)), (0, "MPI_Send"));
    // Back from rank 1's MPI_Finalize: its last burst, the receive after
    // the send entered, then rank 0's compute from MPI_Init to the send.
    let p = critical_path(&r);
    let got: Vec<(u32, f64, f64, bool)> = p
        .iter()
        .map(|s| {
            (
                s.actor,
                s.start,
                s.end,
                matches!(s.what, Activity::Compute { .. }),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 10.0, 2010.0, true),
            (1, 2010.0, 2025.0, false),
            (1, 2025.0, 2030.0, true)
        ]
    );
    let s = summary::path(&r, &p);
    assert_eq!((s.length_s, s.hops), (2020e-9, 1));
}

#[test]
fn late_receiver_only_for_synchronous_sends() {
    let send = call("MPI_Send", 20, 2025, &[(V::Peer, 1), (V::Tag, 0), (V::Bytes, 8)]);
    let recv = call(
        "MPI_Recv",
        2010,
        2030,
        &[(V::Peer, 0), (V::Tag, 0), (V::Bytes, 8)],
    );
    // 8 bytes above an eager threshold of 4: a rendezvous.
    let r = run_eager(vec![vec![send.clone()], vec![recv.clone()]], 2040, 4);
    let w = &r.waits;
    let got: Vec<(u32, Pattern, f64, u32)> = w
        .iter()
        .map(|w| (r.rank(w.at.actor), w.pattern, w.time, r.rank(w.cause.actor)))
        .collect();
    assert_eq!(got, vec![(0, Pattern::LateReceiver, 1990.0, 1)]);
    // Eager: the sender did not wait for the receive.
    assert!(run(vec![vec![send], vec![recv]], 2040).waits.is_empty());
}

#[test]
fn collective_patterns_and_causes() {
    let barrier = |start| call("MPI_Barrier", start, 3110, &[]);
    let reduce = |start, end| call("MPI_Reduce", start, end, &[(V::Root, 0), (V::Bytes, 8)]);
    let bcast = |start, end| call("MPI_Bcast", start, end, &[(V::Root, 1), (V::Bytes, 8)]);
    let r = run(
        vec![
            vec![barrier(100), reduce(3200, 3800), bcast(3900, 4100)],
            vec![barrier(200), reduce(3600, 3610), bcast(4000, 4010)],
            vec![barrier(3100), reduce(3700, 3710), bcast(3950, 4100)],
        ],
        5000,
    );
    let w = &r.waits;
    let got: Vec<(u32, Pattern, f64, u32)> = w
        .iter()
        .map(|w| (r.rank(w.at.actor), w.pattern, w.time, r.rank(w.cause.actor)))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, Pattern::WaitBarrier, 3000.0, 2),
            (0, Pattern::EarlyReduce, 400.0, 1),
            (0, Pattern::LateBroadcast, 100.0, 1),
            (1, Pattern::WaitBarrier, 2900.0, 2),
            (2, Pattern::LateBroadcast, 50.0, 1),
        ]
    );
    let s = summary::waits(&r, w, 2);
    assert_eq!(s.worst.len(), 2);
    assert_eq!((s.worst[0].call.rank, s.worst[0].cause.rank), (0, 2));
    let total: f64 = s.by_rank.iter().map(|r| r.total_s).sum();
    assert!((total - s.total_s).abs() < 1e-12);
}
