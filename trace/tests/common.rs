//! Builds rank files in memory, as the tracer would write them.

use pnmpi_trace::container;
use pnmpi_trace::rank::*;
use std::path::Path;

pub const WORLD: u64 = 0x7f00_0000_1000;
pub const SELF: u64 = 0x7f00_0000_2000;
pub const NULL: u64 = 0x7f00_0000_3000;
pub const ROUTINES: [&str; 10] = [
    "MPI_Init",
    "MPI_Finalize",
    "MPI_Comm_split",
    "MPI_Isend",
    "MPI_Irecv",
    "MPI_Waitall",
    "MPI_Allreduce",
    "MPI_Recv",
    "MPI_Send",
    "MPI_Comm_rank",
];

pub fn code(name: &str) -> u32 {
    ROUTINES.iter().position(|r| *r == name).unwrap() as u32
}

/// One rank's file: ticks are 2 per ns; `skew` ns are added to this
/// rank's clock, and its syncs say so.
pub struct RankBuilder {
    header: RankHeader,
    enc: RawEncoder,
    /// The thread buffer a chunk is encoded into (64 KiB unless replaced).
    pub buf: Vec<u8>,
    len: usize,
    skew: i64,
    /// The stream (thread) the next flushed chunk belongs to.
    pub stream: u32,
    pub chunks: Vec<u8>,
}

impl RankBuilder {
    pub fn new(rank: u32, world: u32, skew: i64) -> RankBuilder {
        let start = ClockPair {
            tick: 2_000_000,
            ns: (1_000_000 + skew) as u64,
        };
        RankBuilder {
            header: RankHeader {
                rank,
                world_size: world,
                run_id: 99,
                clock: Clock::Tsc,
                start,
                pid: 100 + rank,
                // Skewed clocks: each rank on its own node.
                host: format!("node{rank}"),
                mpi: "openmpi".into(),
                values: MpiValues {
                    comm_world: WORLD,
                    comm_self: SELF,
                    comm_null: NULL,
                    request_null: 0,
                    any_source: -1,
                    proc_null: -2,
                    any_tag: -1,
                    root: -4,
                },
                routines: ROUTINES.iter().map(|s| s.to_string()).collect(),
            },
            enc: RawEncoder::new(start.tick),
            buf: vec![0; 1 << 16],
            len: 0,
            skew,
            stream: 0,
            chunks: Vec::new(),
        }
    }

    /// Ticks of rank-0 time `ns` on this rank's clock.
    pub fn tick(&self, ns: u64) -> u64 {
        2 * ns
    }

    /// Bytes encoded since the last flush.
    pub fn pending(&self) -> usize {
        self.len
    }

    pub fn ev(&mut self, ev: RawEvent<'_>) {
        let ev = RawEvent {
            start: self.tick(ev.start),
            end: self.tick(ev.end),
            ..ev
        };
        self.len += self.enc.encode(&ev, &mut self.buf[self.len..]);
    }

    pub fn flush(&mut self, at_ns: u64) {
        let info = self.enc.finish_chunk();
        let pair = self.pair(at_ns);
        self.chunks
            .extend_from_slice(&events_chunk_head(self.stream, info, pair, &self.buf[..self.len]));
        self.chunks.extend_from_slice(&self.buf[..self.len]);
        self.len = 0;
    }

    fn pair(&self, ns: u64) -> ClockPair {
        ClockPair {
            tick: self.tick(ns),
            ns: (ns as i64 + self.skew) as u64,
        }
    }

    pub fn sync(&mut self, phase: u8, at_ns: u64) {
        self.sync_measured(phase, at_ns, -self.skew, 500);
    }

    /// A sync that measured `offset` with a round trip of `rtt` ns,
    /// whatever this rank's skew.
    pub fn sync_measured(&mut self, phase: u8, at_ns: u64, offset: i64, rtt: u64) {
        let s = Sync {
            phase,
            pair: self.pair(at_ns),
            offset,
            rtt,
        };
        container::push_chunk(&mut self.chunks, CHUNK_SYNC, &s.encode());
    }

    /// This rank on `host`.
    pub fn on(mut self, host: &str) -> RankBuilder {
        self.header.host = host.into();
        self
    }

    pub fn finish(mut self, end: bool) -> Vec<u8> {
        if end {
            let n = self.enc.count();
            container::push_chunk(&mut self.chunks, CHUNK_END, &end_payload(n));
        }
        let mut out = self.header.prologue();
        out.extend_from_slice(&self.chunks);
        out
    }
}

pub fn plain(name: &str, start: u64, end: u64) -> RawEvent<'static> {
    RawEvent::plain(code(name), start, end)
}

/// A three-rank run: a split communicator {0, 2}, point-to-point with a
/// wildcard receive completed in a Waitall, an Allreduce on the split.
pub fn three_ranks() -> Vec<Vec<u8>> {
    let members = [0, 2];
    let sub = 0x7f00_0000_9000u64;
    // Rank 0.
    let mut r0 = RankBuilder::new(0, 3, 0);
    r0.ev(plain("MPI_Init", 1_000_100, 1_001_000));
    r0.sync(0, 1_001_000);
    let split = |h: u64| RawEvent {
        comm: Some(WORLD),
        newcomm: Some(RawNewComm {
            handle: h,
            members: &members,
            remote: None,
        }),
        ..plain("MPI_Comm_split", 1_002_000, 1_003_000)
    };
    r0.ev(split(sub));
    r0.ev(RawEvent {
        peer: Some(1),
        tag: Some(7),
        comm: Some(WORLD),
        bytes: Some(80),
        reqs: &[0x5500],
        ..plain("MPI_Isend", 1_004_000, 1_004_100)
    });
    r0.ev(RawEvent {
        peer: Some(-1),
        tag: Some(-1),
        comm: Some(WORLD),
        bytes: Some(16),
        reqs: &[0x5600],
        ..plain("MPI_Irecv", 1_004_200, 1_004_300)
    });
    r0.flush(1_004_300);
    let done = [
        RawDone {
            handle: 0x5500,
            status: Some((-1, -1)),
        },
        RawDone {
            handle: 0x5600,
            status: Some((2, 9)),
        },
    ];
    r0.ev(RawEvent {
        done: &done,
        ..plain("MPI_Waitall", 1_005_000, 1_008_000)
    });
    r0.ev(RawEvent {
        comm: Some(sub),
        bytes: Some(8),
        ..plain("MPI_Allreduce", 1_009_000, 1_010_000)
    });
    r0.ev(RawEvent {
        peer: Some(1),
        tag: Some(3),
        comm: Some(sub),
        bytes: Some(4),
        status: Some((1, 3)),
        ..plain("MPI_Recv", 1_011_000, 1_012_000)
    });
    r0.ev(plain("MPI_Finalize", 1_013_000, 1_014_000));
    r0.sync(1, 1_013_500);
    r0.flush(1_014_000);
    // Rank 1, whose clock runs 5 us ahead.
    let mut r1 = RankBuilder::new(1, 3, 5_000);
    r1.ev(plain("MPI_Init", 1_000_000, 1_001_000));
    r1.sync(0, 1_001_000);
    r1.ev(RawEvent {
        comm: Some(WORLD),
        newcomm: Some(RawNewComm {
            handle: NULL,
            members: &[],
            remote: None,
        }),
        ..plain("MPI_Comm_split", 1_002_000, 1_003_000)
    });
    r1.ev(RawEvent {
        peer: Some(0),
        tag: Some(7),
        comm: Some(WORLD),
        bytes: Some(80),
        status: Some((0, 7)),
        ..plain("MPI_Recv", 1_004_000, 1_005_000)
    });
    r1.ev(plain("MPI_Finalize", 1_013_000, 1_014_000));
    r1.sync(1, 1_013_500);
    r1.flush(1_014_000);
    // Rank 2.
    let mut r2 = RankBuilder::new(2, 3, -2_000);
    r2.ev(plain("MPI_Init", 1_000_000, 1_001_000));
    r2.sync(0, 1_001_000);
    r2.ev(split(0x7f00_0000_a000));
    r2.ev(RawEvent {
        peer: Some(0),
        tag: Some(9),
        comm: Some(WORLD),
        bytes: Some(16),
        ..plain("MPI_Send", 1_004_000, 1_004_500)
    });
    r2.ev(RawEvent {
        comm: Some(0x7f00_0000_a000),
        bytes: Some(8),
        ..plain("MPI_Allreduce", 1_009_000, 1_010_000)
    });
    r2.ev(RawEvent {
        peer: Some(0),
        tag: Some(3),
        comm: Some(0x7f00_0000_a000),
        bytes: Some(4),
        ..plain("MPI_Send", 1_010_500, 1_010_600)
    });
    r2.ev(plain("MPI_Finalize", 1_013_000, 1_014_000));
    r2.sync(1, 1_013_500);
    r2.flush(1_014_000);
    vec![r0.finish(true), r1.finish(true), r2.finish(true)]
}

/// Writes [`three_ranks`] into `dir` as a tracer folder in which rank 1
/// died (a `.part` file cut inside its last chunk) and, if `missing` says
/// so, one rank left no file.
pub fn unfinished_folder(dir: &std::path::Path, missing: Option<usize>) {
    for (i, f) in three_ranks().iter().enumerate() {
        if Some(i) == missing {
            continue;
        }
        let (name, data) = if i == 1 {
            ("rank-00001.pnr.part".to_string(), &f[..f.len() - 3])
        } else {
            (format!("rank-{i:05}.pnr"), &f[..])
        };
        std::fs::write(dir.join(name), data).unwrap();
    }
}

/// Writes rank files into `dir` as rank-NNNNN.pnr.
pub fn write_folder(dir: &Path, files: &[Vec<u8>]) {
    for (i, f) in files.iter().enumerate() {
        std::fs::write(dir.join(format!("rank-{i:05}.pnr")), f).unwrap();
    }
}

/// A small deterministic generator.
pub struct Lcg(u64);

impl Lcg {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

pub const WORLD_SIZE: u32 = 4;

/// A busy run of four ranks, rank 3 with a second thread: tens of
/// thousands of calls in chunks of all sizes (some far above the reader's
/// window, with records larger than a window), communicators created
/// along the way, shared request handles, wildcards, a request of one
/// thread completed by the other, and interleaved thread chunks.
pub fn busy_run() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    for rank in 0..WORLD_SIZE {
        let mut rng = Lcg(u64::from(rank) * 7919 + 1);
        let skew = [0i64, 3_000, -2_500, 800][rank as usize];
        let mut main = RankBuilder::new(rank, WORLD_SIZE, skew);
        main.buf = vec![0; 4 << 20];
        let mut worker = RankBuilder::new(rank, WORLD_SIZE, skew);
        worker.stream = 1;
        worker.buf = vec![0; 1 << 20];
        let mut file_chunks: Vec<u8> = Vec::new();
        let mut t = 1_000_000u64;
        let mut tw = 1_000_050u64;
        main.ev(plain("MPI_Init", t, t + 500));
        t += 500;
        main.sync(0, t);
        let mut live: Vec<u64> = Vec::new();
        let mut next_handle = 0x5000u64;
        let mut sub: Option<u64> = None;
        let mut since_flush = 0u64;
        let mut flush_at = 100 + rng.below(30_000);
        let mut worker_req: Option<u64> = None;
        for it in 0..40_000u64 {
            let mut call = |gap: u64, dur: u64| {
                let s = t + gap;
                t = s + dur;
                (s, t)
            };
            if it % 3_000 == 0 {
                // Every rank splits world; members by the iteration's parity.
                let k = it / 3_000;
                let members: Vec<i64> = (0..i64::from(WORLD_SIZE))
                    .filter(|r| (r + k as i64) % 2 == 0 || *r == 3)
                    .collect();
                let mine = members.contains(&i64::from(rank));
                let handle = if mine { 0x9000_0000 + k * 0x100 } else { NULL };
                let (s, e) = call(200, 300);
                main.ev(RawEvent {
                    comm: Some(WORLD),
                    newcomm: Some(RawNewComm {
                        handle,
                        members: if mine { &members } else { &[] },
                        remote: None,
                    }),
                    ..plain("MPI_Comm_split", s, e)
                });
                sub = mine.then_some(handle);
            }
            match rng.below(10) {
                0..=3 => {
                    // A shared handle now and then, as Open MPI gives.
                    if rng.below(5) > 0 || live.is_empty() {
                        next_handle += 0x40;
                    }
                    let h = next_handle;
                    live.push(h);
                    let wild = rng.below(4) == 0;
                    let (name, peer) = if rng.below(2) == 0 {
                        ("MPI_Isend", rng.below(u64::from(WORLD_SIZE)) as i64)
                    } else if wild {
                        ("MPI_Irecv", -1)
                    } else {
                        ("MPI_Irecv", rng.below(u64::from(WORLD_SIZE)) as i64)
                    };
                    let (s, e) = call(rng.below(2_000), 50);
                    main.ev(RawEvent {
                        peer: Some(peer),
                        tag: Some(if wild { -1 } else { 7 }),
                        comm: Some(WORLD),
                        bytes: Some(8 * rng.below(1000) as i64),
                        reqs: &[h],
                        ..plain(name, s, e)
                    });
                }
                4 => {
                    let done: Vec<RawDone> = live
                        .drain(..)
                        .map(|h| RawDone {
                            handle: h,
                            status: Some((rng.below(3) as i64, 7)),
                        })
                        .chain(worker_req.take().map(|h| RawDone {
                            handle: h,
                            status: None,
                        }))
                        .collect();
                    let (s, e) = call(100, 2_000);
                    main.ev(RawEvent {
                        done: &done,
                        ..plain("MPI_Waitall", s, e)
                    });
                }
                5 => {
                    let (s, e) = call(300, 400);
                    main.ev(RawEvent {
                        comm: Some(sub.unwrap_or(0xdead_0000)),
                        bytes: Some(8),
                        ..plain("MPI_Allreduce", s, e)
                    });
                }
                6 => {
                    let (s, e) = call(100, 700);
                    main.ev(RawEvent {
                        peer: Some(-1),
                        tag: Some(-1),
                        comm: Some(sub.unwrap_or(WORLD)),
                        bytes: Some(64),
                        status: Some((0, 11)),
                        ..plain("MPI_Recv", s, e)
                    });
                }
                7 => {
                    let (s, e) = call(100, 200);
                    main.ev(RawEvent {
                        peer: Some(0),
                        tag: Some(3),
                        comm: Some(sub.unwrap_or(SELF)),
                        bytes: Some(4),
                        ..plain("MPI_Send", s, e)
                    });
                }
                _ => {
                    let (s, e) = call(rng.below(100), 20);
                    main.ev(plain("MPI_Comm_rank", s, e));
                }
            }
            if rank == 1 && it == 20_000 {
                // A completion larger than a window: 30,000 unknown requests.
                let done: Vec<RawDone> = (0..30_000u64)
                    .map(|k| RawDone {
                        handle: 0x7777_0000 + k * 0x40,
                        status: None,
                    })
                    .collect();
                let (s, e) = call(10, 10);
                main.ev(RawEvent {
                    done: &done,
                    ..plain("MPI_Waitall", s, e)
                });
            }
            if rank == 3 && it % 3 == 0 {
                // The second thread: a send whose request the main thread
                // completes, and local calls, interleaved in time.
                tw = tw.max(t.saturating_sub(1_500)) + rng.below(400);
                if worker_req.is_none() && rng.below(4) == 0 {
                    next_handle += 0x40;
                    worker_req = Some(next_handle);
                    worker.ev(RawEvent {
                        peer: Some(1),
                        tag: Some(5),
                        comm: Some(WORLD),
                        bytes: Some(32),
                        reqs: &[next_handle],
                        ..plain("MPI_Isend", tw, tw + 30)
                    });
                } else {
                    worker.ev(plain("MPI_Comm_rank", tw, tw + 30));
                }
                tw += 30;
                if worker.pending() > 20_000 + rng.below(200_000) as usize {
                    worker.flush(tw);
                    file_chunks.extend(std::mem::take(&mut worker.chunks));
                }
            }
            since_flush += 1;
            if since_flush >= flush_at {
                main.flush(t);
                file_chunks.extend(std::mem::take(&mut main.chunks));
                since_flush = 0;
                flush_at = 100 + rng.below(30_000);
            }
        }
        main.ev(plain("MPI_Finalize", t + 100, t + 600));
        t += 600;
        main.sync(1, t);
        main.flush(t);
        if worker.pending() > 0 {
            worker.flush(tw);
        }
        file_chunks.extend(std::mem::take(&mut worker.chunks));
        file_chunks.extend(std::mem::take(&mut main.chunks));
        main.chunks = file_chunks;
        files.push(main.finish(true));
    }
    files
}
