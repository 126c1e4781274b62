//! A tracer folder replays, streamed, exactly as its merged trace does.

use pnmpi_sim::engine::{replay, Options, Outcome};
use pnmpi_sim::input::{self, OpSource};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model;
use pnmpi_trace::container;
use pnmpi_trace::rank::*;
use std::collections::BTreeMap;
use std::path::Path;

const ROUTINES: [&str; 8] = [
    "MPI_Init",
    "MPI_Finalize",
    "MPI_Isend",
    "MPI_Irecv",
    "MPI_Waitall",
    "MPI_Comm_split",
    "MPI_Allreduce",
    "MPI_Comm_rank",
];
const WORLD: u64 = 0x1000;
const RANKS: u32 = 4;

fn code(name: &str) -> u32 {
    ROUTINES.iter().position(|r| *r == name).unwrap() as u32
}

/// Rank `rank` of a ring exchange: each iteration receives from the left
/// (a wildcard every third time) and sends to the right, then waits; an
/// Allreduce on a split communicator of half the ranks every 25.
fn rank_file(rank: u32, iterations: u64) -> Vec<u8> {
    let header = RankHeader {
        rank,
        world_size: RANKS,
        run_id: 5,
        clock: Clock::Monotonic,
        start: ClockPair { tick: 1000, ns: 1000 },
        pid: 1,
        host: "h".into(),
        mpi: "openmpi".into(),
        values: MpiValues {
            comm_world: WORLD,
            comm_self: 0x2000,
            comm_null: 0x3000,
            request_null: 0,
            any_source: -1,
            proc_null: -2,
            any_tag: -1,
            root: -4,
        },
        routines: ROUTINES.iter().map(|s| s.to_string()).collect(),
    };
    let mut w = Writer {
        out: header.prologue(),
        enc: RawEncoder::new(1000),
        buf: vec![0u8; 1 << 20],
        len: 0,
    };
    let mut t = 1000 + u64::from(rank) * 37;
    w.ev(RawEvent::plain(code("MPI_Init"), t, t + 5000));
    t += 5000;
    w.sync(0, t);
    let (left, right) = ((rank + RANKS - 1) % RANKS, (rank + 1) % RANKS);
    let members: Vec<i64> = (0..i64::from(RANKS))
        .filter(|r| r % 2 == i64::from(rank % 2))
        .collect();
    for it in 0..iterations {
        let mut call = |gap: u64, dur: u64| {
            let s = t + gap;
            t = s + dur;
            (s, t)
        };
        if it % 25 == 0 {
            let handle = 0x9000 + it;
            let (s, e) = call(100, 400);
            w.ev(RawEvent {
                comm: Some(WORLD),
                newcomm: Some(RawNewComm {
                    handle,
                    members: &members,
                    remote: None,
                }),
                ..RawEvent::plain(code("MPI_Comm_split"), s, e)
            });
            let (s, e) = call(50, 800);
            w.ev(RawEvent {
                comm: Some(handle),
                bytes: Some(8),
                ..RawEvent::plain(code("MPI_Allreduce"), s, e)
            });
        }
        let wild = it % 3 == 0;
        let (s, e) = call(2000 + u64::from(rank) * 10, 50);
        w.ev(RawEvent {
            peer: Some(if wild { -1 } else { i64::from(left) }),
            tag: Some(if wild { -1 } else { 1 }),
            comm: Some(WORLD),
            bytes: Some(4096),
            reqs: &[0x500],
            ..RawEvent::plain(code("MPI_Irecv"), s, e)
        });
        let (s, e) = call(20, 60);
        w.ev(RawEvent {
            peer: Some(i64::from(right)),
            tag: Some(1),
            comm: Some(WORLD),
            bytes: Some(4096),
            reqs: &[0x540],
            ..RawEvent::plain(code("MPI_Isend"), s, e)
        });
        let done = [
            RawDone {
                handle: 0x500,
                status: Some((i64::from(left), 1)),
            },
            RawDone {
                handle: 0x540,
                status: None,
            },
        ];
        let (s, e) = call(10, 3000);
        w.ev(RawEvent {
            done: &done,
            ..RawEvent::plain(code("MPI_Waitall"), s, e)
        });
        let (s, e) = call(5, 5);
        w.ev(RawEvent::plain(code("MPI_Comm_rank"), s, e));
        if w.len > (1 << 20) - 4096 {
            w.flush(t);
        }
    }
    let (s, e) = (t + 100, t + 2000);
    w.ev(RawEvent::plain(code("MPI_Finalize"), s, e));
    w.sync(1, e);
    w.flush(e);
    container::push_chunk(&mut w.out, CHUNK_END, &end_payload(5 * iterations + 2));
    w.out
}

/// Encodes one thread's events into chunks, as the tracer does.
struct Writer {
    out: Vec<u8>,
    enc: RawEncoder,
    buf: Vec<u8>,
    len: usize,
}

impl Writer {
    fn ev(&mut self, e: RawEvent<'_>) {
        self.len += self.enc.encode(&e, &mut self.buf[self.len..]);
    }

    fn flush(&mut self, t: u64) {
        let info = self.enc.finish_chunk();
        let pair = ClockPair { tick: t, ns: t };
        let events = &self.buf[..self.len];
        self.out
            .extend_from_slice(&events_chunk_head(0, info, pair, events));
        self.out.extend_from_slice(events);
        self.len = 0;
    }

    fn sync(&mut self, phase: u8, t: u64) {
        let s = Sync {
            phase,
            pair: ClockPair { tick: t, ns: t },
            offset: 0,
            rtt: 100,
        };
        container::push_chunk(&mut self.out, CHUNK_SYNC, &s.encode());
    }
}

const MACHINE: &str = "[machine]\nnodes = 4\n[network]\nlatency = \"2us\"\nbandwidth = \"2GB/s\"\n";

fn run(path: &Path) -> (Outcome, Box<dyn OpSource>) {
    let m = Machine::parse("m.toml", MACHINE).unwrap();
    let mut model = model::build("simple", &m).unwrap();
    let mut src = input::open(path, 1.0).unwrap();
    let out = replay(src.as_mut(), &m, model.as_mut(), Options::default()).unwrap();
    (out, src)
}

/// Per routine name: (count, time, wait, measured time).
fn by_name(out: &Outcome, src: &dyn OpSource) -> BTreeMap<String, (u64, f64, f64, f64)> {
    let m = src.measured().unwrap();
    out.stats
        .routines
        .iter()
        .enumerate()
        .filter(|(_, r)| r.count > 0)
        .map(|(i, r)| {
            (
                src.routines()[i].clone(),
                (r.count, r.time, r.wait, m.routine_time[i]),
            )
        })
        .collect()
}

#[test]
fn a_folder_replays_as_its_merged_trace() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("trace");
    std::fs::create_dir(&folder).unwrap();
    for r in 0..RANKS {
        std::fs::write(folder.join(format!("rank-{r:05}.pnr")), rank_file(r, 3000)).unwrap();
    }
    let pnt = dir.path().join("t.pnt");
    pnmpi_trace::folder::save_merged(&folder, &pnt, &|_| {}).unwrap();
    let (a, sa) = run(&folder);
    let (b, sb) = run(&pnt);
    assert!(a.runtime > 3000.0 * 5000.0, "{}", a.runtime);
    assert_eq!(a.runtime, b.runtime);
    assert_eq!(a.stats.actors, b.stats.actors);
    assert_eq!(a.stats.messages, b.stats.messages);
    assert_eq!(a.stats.events, b.stats.events);
    assert_eq!(by_name(&a, sa.as_ref()), by_name(&b, sb.as_ref()));
    let (ma, mb) = (sa.measured().unwrap(), sb.measured().unwrap());
    assert_eq!((&ma.compute, &ma.mpi, &ma.span), (&mb.compute, &mb.mpi, &mb.span));
    assert_eq!(sa.warnings(), sb.warnings());
    assert!(sa.warnings().is_empty(), "{:?}", sa.warnings());
}
