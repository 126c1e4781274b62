//! `v` collectives through a merged trace and the SimGrid export: per-peer
//! counts survive saving and reading; the export writes SimGrid's `v`
//! actions with them, a nonblocking collective and a scan as messages
//! awaited where they complete, and refuses a count SimGrid would misread,
//! naming the rank, event and routine.

use pnmpi_trace::counts::PeerBytes;
use pnmpi_trace::fields::{COMM_WORLD, V};
use pnmpi_trace::trace::{Done, Event, ReqRef, Stream, Trace};

const ROUTINES: [&str; 6] = [
    "MPI_Init",
    "MPI_Alltoallv",
    "MPI_Ialltoallv",
    "MPI_Wait",
    "MPI_Scan",
    "MPI_Finalize",
];

fn ev(routine: u32, start: u64, end: u64) -> Event {
    Event {
        routine,
        start,
        end,
        ..Event::default()
    }
}

/// Two ranks: an Alltoallv whose rank 0 sends `big` bytes to rank 1, an
/// Ialltoallv finished by an MPI_Wait after some compute, a Scan.
fn trace(big: i64) -> Trace {
    let streams = (0..2u32)
        .map(|rank| {
            let r = i64::from(rank);
            let to_other = |me: i64, other: i64| {
                if me == 0 && other == 1 {
                    big
                } else {
                    100 + 10 * me + other
                }
            };
            let counts = PeerBytes {
                send: (0..2).map(|j| to_other(r, j)).collect(),
                recv: (0..2).map(|j| to_other(j, r)).collect(),
            };
            let coll = |routine, start, end, counts: Option<PeerBytes>, req: bool| {
                let mut e = ev(routine, start, end);
                e.set(V::Comm, Some(COMM_WORLD));
                e.set(V::Bytes, Some(8));
                if req {
                    e.set(V::Req, Some(1));
                }
                e.counts = counts;
                e
            };
            let mut wait = ev(3, 9_000, 9_500);
            wait.done = vec![Done {
                req: Some(ReqRef {
                    stream: rank,
                    index: 0,
                }),
                status: None,
            }];
            Stream {
                rank,
                thread: 0,
                events: vec![
                    ev(0, 0, 1_000),
                    coll(1, 2_000, 3_000, Some(counts.clone()), false),
                    coll(2, 4_000, 4_100, Some(counts), true),
                    wait,
                    coll(4, 10_000, 10_500, None, false),
                    ev(5, 11_000, 12_000),
                ],
            }
        })
        .collect();
    Trace {
        world_size: 2,
        mpi: "openmpi".into(),
        routines: ROUTINES.map(String::from).to_vec(),
        comms: Vec::new(),
        streams,
        clocks: Vec::new(),
        sites: Vec::new(),
        wins: Vec::new(),
    }
}

fn export(
    t: &Trace,
) -> (
    tempfile::TempDir,
    pnmpi_trace::Result<pnmpi_trace::simgrid::SimgridExport>,
) {
    let dir = tempfile::tempdir().unwrap();
    let pnt = dir.path().join("t.pnt");
    t.save(&pnt, &|_| {}).unwrap();
    let (back, damage) = Trace::read(&pnt).unwrap();
    assert!(damage.is_none());
    let counts = |t: &Trace| -> Vec<Option<PeerBytes>> {
        t.streams
            .iter()
            .flat_map(|s| s.events.iter().map(|e| e.counts.clone()))
            .collect()
    };
    assert_eq!(
        counts(&back),
        counts(t),
        "per-peer counts survive the merged format"
    );
    let mut src = pnmpi_trace::stream::MergedReader::open(&pnt).unwrap();
    let x = pnmpi_trace::simgrid::export(&mut src, &dir.path().join("sg"), &|_| {});
    (dir, x)
}

#[test]
fn v_actions_and_messages_of_what_simgrid_lacks() {
    let (dir, x) = export(&trace(7_000));
    let x = x.unwrap();
    assert!(x.approximated.is_empty(), "{:?}", x.approximated);
    let r0 = std::fs::read_to_string(dir.path().join("sg/rank-00000.txt")).unwrap();
    let lines: Vec<&str> = r0.lines().filter(|l| !l.contains(" compute ")).collect();
    let tag = pnmpi_trace::simgrid::coll::DIRECT_TAG;
    let want = [
        "0 init".to_string(),
        "0 alltoallv 7100 100 7000 210 100 110".into(),
        // The Ialltoallv's messages where it was posted...
        format!("0 irecv 1 {tag} 110"),
        format!("0 isend 1 {tag} 7000"),
        // ...awaited at the MPI_Wait.
        format!("0 wait 1 0 {tag}"),
        format!("0 wait 0 1 {tag}"),
        // The scan: rank 0 sends its 8 bytes up, and waits at once.
        format!("0 isend 1 {} 8", tag + 1),
        format!("0 wait 0 1 {}", tag + 1),
        "0 finalize".into(),
    ];
    assert_eq!(lines, want);
}

#[test]
fn a_count_simgrid_would_misread_stops_the_export_naming_the_event() {
    let (dir, x) = export(&trace(1 << 31));
    let e = x.unwrap_err().to_string();
    assert!(e.contains("rank 0, event 1 (MPI_Alltoallv)"), "{e}");
    assert!(e.contains("2147483648"), "{e}");
    // Nothing replayable is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("sg"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}
