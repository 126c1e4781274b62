//! Streaming a trace folder ([`FolderReader`], [`save_merged`]) gives
//! exactly what the in-memory merge ([`merge_dir`]) gives: the same events,
//! communicators, clocks and warnings, and the same merged file.

use crate::common;
use common::*;
use pnmpi_trace::fields::*;
use pnmpi_trace::folder::{save_merged, FolderReader};
use pnmpi_trace::merge::merge_dir;
use pnmpi_trace::rank::{RankFile, RawEvent, RawRecord};
use pnmpi_trace::rank_reader::RankReader;
use pnmpi_trace::trace::{Event, Trace};
use std::collections::HashMap;
use std::path::Path;

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
    // A stream read to its end (its conversion state dropped) stays at
    // its end, and starts over from its first event when restarted.
    for i in 0..f.streams().count() {
        assert!(f.next(i).unwrap().is_none(), "stream {i} after its end");
    }
    if let Some(first) = got.first().and_then(|s| s.first()) {
        f.restart(0).unwrap();
        let e = f.next(0).unwrap().expect("a first event again");
        assert_eq!(f.routines()[e.routine as usize], first.0);
        assert_eq!((e.start, e.end), (first.1.start, first.1.end));
    }
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
    let (_, dir) = busy_folder();
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
    let (files, dir) = busy_folder();
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
    // The same error, at the same offset, whole windows or the smallest.
    let read = |budget| {
        let mut f = FolderReader::open_within(dir.path(), budget).unwrap();
        (|| {
            for i in 0..f.streams().count() {
                while f.next(i)?.is_some() {}
            }
            Ok::<_, pnmpi_trace::Error>(())
        })()
        .unwrap_err()
        .to_string()
    };
    let e = read(pnmpi_trace::folder::WINDOW_BUDGET);
    assert!(e.contains("rank-00002.pnr") && e.contains("CRC mismatch"), "{e}");
    assert_eq!(read(0), e);
    let out = dir.path().join("out.pnt");
    let e = save_merged(dir.path(), &out, &|_| {}).unwrap_err().to_string();
    assert!(e.contains("CRC mismatch"), "{e}");
    assert!(!out.exists() && !dir.path().join("out.pnt.tmp").exists());
}

#[test]
fn a_window_is_a_share_of_the_budget_within_its_bounds() {
    use pnmpi_trace::folder::{shared_window, WINDOW_BUDGET};
    use pnmpi_trace::rank_reader::{MIN_WINDOW, WINDOW};
    let ranks = |n: usize, t: usize| std::iter::repeat_n(t, n);
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(1, 1)), WINDOW);
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(1024, 1)), WINDOW);
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(16_384, 1)), 4 << 10);
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(65_536, 1)), 1 << 10);
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(1 << 20, 1)), MIN_WINDOW);
    // A rank of 4 threads reads with 4 lanes of 4 windows.
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(4096, 4)), 1 << 10);
    assert_eq!(shared_window(WINDOW_BUDGET, ranks(0, 1)), WINDOW);
}

/// [`busy_run`]'s files, and a folder holding them.
fn busy_folder() -> (Vec<Vec<u8>>, tempfile::TempDir) {
    let files = busy_run();
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &files);
    (files, dir)
}

/// Reads every thread of `r` to its end, returning its records and the
/// most bytes `r` held for reading, per record read, in file order.
fn read_with_window(r: &mut RankReader) -> (Vec<Vec<RawRecord>>, Vec<usize>) {
    let mut held = Vec::new();
    let records = (0..r.threads().len())
        .map(|slot| {
            let mut rec = RawRecord::default();
            let mut got = Vec::new();
            while r.next_into(slot, &mut rec).unwrap() {
                held.push(r.buffered());
                got.push(rec.clone());
            }
            got
        })
        .collect();
    (records, held)
}

#[test]
fn a_small_window_reads_records_larger_than_itself_and_stays_small() {
    use pnmpi_trace::rank_reader::MIN_WINDOW;
    let (files, dir) = busy_folder();
    for (i, data) in files.iter().enumerate() {
        let whole = RankFile::parse(data).unwrap();
        let mut r = RankReader::open(&dir.path().join(format!("rank-{i:05}.pnr"))).unwrap();
        r.set_window(0);
        let (got, held) = read_with_window(&mut r);
        for (s, g) in whole.streams.iter().zip(&got) {
            assert!(*g == s.records, "rank {i} thread {}", s.id);
        }
        // A stream read to its end holds nothing.
        assert_eq!(r.buffered(), 0, "rank {i}");
        let most = *held.iter().max().unwrap();
        if i == 1 {
            // Its 30,000-request completion is read whole, in a window
            // grown for it, which is back to its size afterwards.
            let grown = held.iter().position(|&h| h > MIN_WINDOW).unwrap();
            assert!(most > 32 << 10, "{most}");
            assert!(held[grown..].iter().any(|&h| h <= MIN_WINDOW));
        } else {
            assert!(most <= MIN_WINDOW, "rank {i}: {most}");
        }
    }
}

/// Reads `f` as a replay does, an event of each stream in turn, every
/// stream started at once; returns the events and the most bytes its
/// readers held meanwhile.
fn read_interleaved(f: &mut FolderReader) -> (Vec<Vec<(String, Event)>>, usize) {
    let mut got = vec![Vec::new(); f.streams().count()];
    let mut most = 0;
    let mut live = got.len();
    while live > 0 {
        live = 0;
        for (i, out) in got.iter_mut().enumerate() {
            if let Some(e) = f.next(i).unwrap() {
                out.push((f.routines()[e.routine as usize].clone(), e));
                live += 1;
            }
            most = most.max(f.buffered());
        }
    }
    (got, most)
}

#[test]
fn a_folder_read_everywhere_at_once_keeps_its_windows_within_the_budget() {
    use pnmpi_trace::rank_reader::{MIN_WINDOW, WINDOW};
    let (_, dir) = busy_folder();
    // The most a reader of rank 1's file holds beyond its window: the
    // completion larger than a window.
    let mut r = RankReader::open(&dir.path().join("rank-00001.pnr")).unwrap();
    r.set_window(0);
    let large = read_with_window(&mut r).1.into_iter().max().unwrap() - MIN_WINDOW;
    // A rank of t threads: t lanes of t windows (rank 3 has 2 threads).
    let windows = 1 + 1 + 1 + 4;
    // The default budget gives these four ranks whole windows.
    let mut f = FolderReader::open(dir.path()).unwrap();
    assert_eq!(f.streams().count(), 5);
    let (want, most) = read_interleaved(&mut f);
    assert!(most > (windows - 1) * WINDOW, "{most}");
    // A budget of nothing: the smallest windows, the same events.
    let mut f = FolderReader::open_within(dir.path(), 0).unwrap();
    let (got, most) = read_interleaved(&mut f);
    assert!(most > (windows - 1) * MIN_WINDOW, "{most}");
    assert!(
        most <= windows * MIN_WINDOW + large,
        "{most} > {windows} windows and {large}"
    );
    assert_eq!(f.buffered(), 0);
    assert!(got == want, "the events depend on the window");
}

#[test]
fn call_sites_get_the_run_ids_in_merge_and_folder_alike() {
    use pnmpi_trace::sites::{rank_sites_payload, Site, CHUNK_SITES};
    let site = |file: &str, line| Site {
        function: Some("main".into()),
        file: Some(file.into()),
        line: Some(line),
        object: "/bin/app".into(),
        offset: u64::from(line) * 16,
    };
    let (loop_site, end_site) = (site("/src/app.c", 40), site("/src/app.c", 52));
    let mut files = Vec::new();
    for rank in 0..2u32 {
        let mut r = RankBuilder::new(rank, 2, 0);
        r.ev(plain("MPI_Init", 1_000_100, 1_001_000));
        // Rank 1 met the sites in the other order: other local ids.
        let (a, b) = if rank == 0 { (0, 1) } else { (7, 3) };
        for k in 0..3 {
            let at = 1_002_000 + k * 1000;
            r.ev(RawEvent {
                comm: Some(WORLD),
                bytes: Some(8),
                site: Some(a),
                ..plain("MPI_Allreduce", at, at + 500)
            });
        }
        r.ev(RawEvent {
            site: Some(b),
            ..plain("MPI_Finalize", 1_009_000, 1_009_100)
        });
        r.flush(1_009_100);
        let defs = [(a, loop_site.clone()), (b, end_site.clone())];
        pnmpi_trace::container::push_chunk(&mut r.chunks, CHUNK_SITES, &rank_sites_payload(&defs));
        files.push(r.finish(true));
    }
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &files);
    assert_same_as_merge(dir.path());
    let (t, _) = merge_dir(dir.path(), &|_| {}).unwrap();
    assert_eq!(t.sites, [loop_site, end_site]);
    for s in &t.streams {
        let sites: Vec<Option<i64>> = s.events.iter().map(|e| e.get(V::Site)).collect();
        assert_eq!(
            sites,
            [None, Some(0), Some(0), Some(0), Some(1)],
            "rank {}",
            s.rank
        );
    }
    // Read back from a `.pnt`: with the sites, and without them (a
    // replay's reader), the same events but for the site.
    let pnt = dir.path().join("t.pnt");
    t.save(&pnt, &|_| {}).unwrap();
    for skip in [false, true] {
        let mut m = pnmpi_trace::stream::MergedReader::open(&pnt).unwrap();
        if skip {
            m.skip_sites();
        }
        for (i, s) in t.streams.iter().enumerate() {
            for want in &s.events {
                let mut want = want.clone();
                if skip {
                    want.vals[V::Site as usize] = None;
                }
                assert_eq!(m.next(i).unwrap(), Some(want), "skip {skip}, rank {}", s.rank);
            }
            assert_eq!(m.next(i).unwrap(), None);
        }
    }
    let f = FolderReader::open(dir.path()).unwrap();
    assert_eq!(f.sites(), &t.sites[..]);
    let mut out = Vec::new();
    let mut f = f;
    pnmpi_trace::dump::dump(&mut f, None, &mut out, "dump", &|_| {}).unwrap();
    let dump = String::from_utf8(out).unwrap();
    assert_eq!(dump.matches(" site=/src/app.c:40").count(), 6, "{dump}");
    assert_eq!(dump.matches(" site=/src/app.c:52").count(), 2, "{dump}");
}
