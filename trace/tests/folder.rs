//! Streaming a trace folder ([`FolderReader`], [`save_merged`]) gives
//! exactly what the in-memory merge ([`merge_dir`]) gives: the same events,
//! communicators, clocks and warnings, and the same merged file.

mod common;
use common::*;
use pnmpi_trace::fields::*;
use pnmpi_trace::folder::{save_merged, FolderReader};
use pnmpi_trace::merge::merge_dir;
use pnmpi_trace::rank::{RankFile, RawDone, RawEvent, RawNewComm, RawRecord};
use pnmpi_trace::rank_reader::RankReader;
use pnmpi_trace::trace::{Event, Trace};
use std::collections::HashMap;
use std::path::Path;

fn write_folder(dir: &Path, files: &[Vec<u8>]) {
    for (i, f) in files.iter().enumerate() {
        std::fs::write(dir.join(format!("rank-{i:05}.pnr")), f).unwrap();
    }
}

/// Every stream read to its end, one after the other, with routine
/// names for codes.
fn read_all(f: &mut FolderReader) -> Vec<Vec<(String, Event)>> {
    let n = f.streams().count();
    (0..n)
        .map(|i| {
            let mut out = Vec::new();
            while let Some(e) = f.next(i).unwrap() {
                out.push((f.routines()[e.routine as usize].clone(), e));
            }
            out
        })
        .collect()
}

/// A trace's events with routine names for codes.
fn named(t: &Trace) -> Vec<Vec<(String, Event)>> {
    t.streams
        .iter()
        .map(|s| {
            s.events
                .iter()
                .map(|e| (t.routine(e).to_owned(), e.clone()))
                .collect()
        })
        .collect()
}

/// Events with their routine codes cleared (the tables' orders differ).
fn without_codes(streams: Vec<Vec<(String, Event)>>) -> Vec<Vec<(String, Event)>> {
    streams
        .into_iter()
        .map(|s| {
            s.into_iter()
                .map(|(n, mut e)| {
                    e.routine = 0;
                    (n, e)
                })
                .collect()
        })
        .collect()
}

fn assert_same_as_merge(dir: &Path) {
    let (t, warnings) = merge_dir(dir, &|_| {}).unwrap();
    let mut f = FolderReader::open(dir).unwrap();
    assert_eq!(f.world_size, t.world_size);
    assert_eq!(f.mpi, t.mpi);
    assert_eq!(f.clocks, t.clocks);
    assert_eq!(f.event_count(), t.event_count());
    let streams: Vec<(u32, u32)> = f.streams().collect();
    let want: Vec<(u32, u32)> = t.streams.iter().map(|s| (s.rank, s.thread)).collect();
    assert_eq!(streams, want);
    let got = without_codes(read_all(&mut f));
    let want = without_codes(named(&t));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.len(), w.len(), "stream {i}");
        for (k, (a, b)) in g.iter().zip(w).enumerate() {
            assert_eq!(a, b, "stream {i} event {k}");
        }
    }
    assert_eq!(got, want);
    // Read stream by stream in rank order, ranks convert in merge order:
    // the communicator ids are the merge's.
    assert_eq!(f.comms(), &t.comms[..]);
    assert_eq!(f.warnings(), warnings);
    // The merged file, streamed, is the in-memory merge's, byte for byte.
    let out = tempfile::tempdir().unwrap();
    let (a, b) = (out.path().join("mem.pnt"), out.path().join("stream.pnt"));
    t.save(&a, &|_| {}).unwrap();
    let saved = save_merged(dir, &b, &|_| {}).unwrap();
    assert_eq!(saved.warnings, warnings);
    assert_eq!(saved.events, t.event_count());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(!out.path().join("stream.pnt.tmp").exists());
}

#[test]
fn a_small_folder_streams_as_it_merges() {
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &three_ranks());
    assert_same_as_merge(dir.path());
}

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const WORLD_SIZE: u32 = 4;

/// A busy run of four ranks, rank 3 with a second thread: tens of
/// thousands of calls in chunks of all sizes (some far above the reader's
/// window, with records larger than a window), communicators created
/// along the way, shared request handles, wildcards, a request of one
/// thread completed by the other, and interleaved thread chunks.
fn busy_run() -> Vec<Vec<u8>> {
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

#[test]
fn a_busy_folder_streams_as_it_merges() {
    let files = busy_run();
    // Some chunks are several windows long.
    let longest = files
        .iter()
        .flat_map(|f| {
            let c = pnmpi_trace::container::parse(f).unwrap();
            c.chunks.iter().map(|c| c.payload.remaining()).collect::<Vec<_>>()
        })
        .max()
        .unwrap();
    assert!(longest > 3 * pnmpi_trace::rank_reader::WINDOW, "{longest}");
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &files);
    // The rank reader gives each thread's records as the whole-file parse.
    for (i, data) in files.iter().enumerate() {
        let whole = RankFile::parse(data).unwrap();
        let mut r = RankReader::open(&dir.path().join(format!("rank-{i:05}.pnr"))).unwrap();
        assert_eq!(r.header, whole.header);
        assert_eq!(r.pairs, whole.pairs);
        assert_eq!(r.syncs, whole.syncs);
        assert_eq!(r.end, whole.end);
        assert_eq!(
            r.threads(),
            whole.streams.iter().map(|s| s.id).collect::<Vec<_>>()
        );
        for (slot, s) in whole.streams.iter().enumerate() {
            let mut rec = RawRecord::default();
            let mut got = Vec::new();
            while r.next_into(slot, &mut rec).unwrap() {
                got.push(rec.clone());
            }
            assert!(got == s.records, "rank {i} thread {}", s.id);
        }
        assert_eq!(
            r.records,
            whole.streams.iter().map(|s| s.records.len() as u64).sum()
        );
    }
    assert_same_as_merge(dir.path());
}

/// Communicator ids of `streams` renamed to `to`'s, checking that the
/// renaming is one to one and maps each id to a communicator of the same
/// members.
fn same_up_to_comm_ids(
    got: &[Vec<(String, Event)>],
    got_comms: &[pnmpi_trace::trace::Comm],
    want: &[Vec<(String, Event)>],
    want_comms: &[pnmpi_trace::trace::Comm],
) {
    let mut map: HashMap<i64, i64> = HashMap::new();
    let mut back: HashMap<i64, i64> = HashMap::new();
    let mut rename = |a: i64, b: i64| {
        assert_eq!(*map.entry(a).or_insert(b), b, "id {a}");
        assert_eq!(*back.entry(b).or_insert(a), a, "id {b}");
    };
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len());
        for ((gn, ge), (wn, we)) in g.iter().zip(w) {
            assert_eq!(gn, wn);
            let mut ge = ge.clone();
            if let (Some(a), Some(b)) = (ge.get(V::Comm), we.get(V::Comm)) {
                rename(a, b);
                ge.set(V::Comm, Some(b));
            }
            if let (Some(Some(a)), Some(Some(b))) = (ge.newcomm, we.newcomm) {
                rename(i64::from(a), i64::from(b));
                ge.newcomm = Some(Some(b));
            }
            assert_eq!(&ge, we);
        }
    }
    for (&a, &b) in &map {
        if a >= FIRST_TABLE_COMM {
            let (a, b) = ((a - FIRST_TABLE_COMM) as usize, (b - FIRST_TABLE_COMM) as usize);
            assert_eq!(got_comms[a], want_comms[b]);
        }
    }
    assert_eq!(got_comms.len(), want_comms.len());
}

#[test]
fn ranks_read_in_any_order_agree_on_communicators() {
    let files = busy_run();
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &files);
    let (t, warnings) = merge_dir(dir.path(), &|_| {}).unwrap();
    let want = without_codes(named(&t));
    // Last rank first (and rank 3's second thread before its first), and round robin a few events at a time, as a replay reads.
    for order in ["reverse", "round robin"] {
        let mut f = FolderReader::open(dir.path()).unwrap();
        let n = f.streams().count();
        let mut got: Vec<Vec<(String, Event)>> = vec![Vec::new(); n];
        let mut take = |f: &mut FolderReader, i: usize, k: usize| {
            let mut any = false;
            for _ in 0..k {
                match f.next(i).unwrap() {
                    Some(e) => {
                        got[i].push((f.routines()[e.routine as usize].clone(), e));
                        any = true;
                    }
                    None => break,
                }
            }
            any
        };
        if order == "reverse" {
            for i in (0..n).rev() {
                while take(&mut f, i, 1000) {}
            }
        } else {
            let mut k = 1;
            loop {
                let mut any = false;
                for i in 0..n {
                    any |= take(&mut f, i, k);
                }
                if !any {
                    break;
                }
                k = k % 7 + 1;
            }
        }
        let got = without_codes(got);
        if order == "reverse" {
            assert_ne!(f.comms(), &t.comms[..], "another order, other ids");
        }
        same_up_to_comm_ids(&got, f.comms(), &want, &t.comms);
        assert_eq!(f.warnings(), warnings, "{order}");
    }
}

#[test]
fn unfinished_truncated_and_missing_ranks_warn_as_the_merge_does() {
    let dir = tempfile::tempdir().unwrap();
    unfinished_folder(dir.path(), Some(2));
    let (_, warnings) = merge_dir(dir.path(), &|_| {}).unwrap();
    assert!(warnings.iter().any(|w| w.contains("truncated")), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("without a rank file: 2")),
        "{warnings:?}"
    );
    assert_same_as_merge(dir.path());
}

#[test]
fn a_corrupt_chunk_is_a_crc_error_naming_the_file() {
    let files = busy_run();
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &files);
    // A flipped byte in the middle of rank 2's longest chunk.
    let p = dir.path().join("rank-00002.pnr");
    let mut data = files[2].clone();
    let c = pnmpi_trace::container::parse(&data).unwrap();
    let longest = c.chunks.iter().max_by_key(|c| c.payload.remaining()).unwrap();
    let mid = longest.payload.offset() as usize + longest.payload.remaining() / 2;
    data[mid] ^= 0x55;
    std::fs::write(&p, &data).unwrap();
    let e = merge_dir(dir.path(), &|_| {}).unwrap_err().to_string();
    assert!(e.contains("rank-00002.pnr") && e.contains("CRC mismatch"), "{e}");
    let mut f = FolderReader::open(dir.path()).unwrap();
    let e = (|| {
        for i in 0..f.streams().count() {
            while f.next(i)?.is_some() {}
        }
        Ok::<_, pnmpi_trace::Error>(())
    })()
    .unwrap_err()
    .to_string();
    assert!(e.contains("rank-00002.pnr") && e.contains("CRC mismatch"), "{e}");
    let out = dir.path().join("out.pnt");
    let e = save_merged(dir.path(), &out, &|_| {}).unwrap_err().to_string();
    assert!(e.contains("CRC mismatch"), "{e}");
    assert!(!out.exists() && !dir.path().join("out.pnt.tmp").exists());
}
