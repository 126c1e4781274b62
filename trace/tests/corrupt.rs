//! Corrupt and truncated input: every decoder returns an error naming a
//! byte offset inside the file, or a truncation report, and never panics.

use crate::common;
use pnmpi_trace::merge::merge;
use pnmpi_trace::rank::{RankFile, RawRecord};
use pnmpi_trace::rank_reader::RankReader;
use pnmpi_trace::trace::Trace;
use proptest::prelude::*;

fn merged_bytes() -> Vec<u8> {
    let files = common::three_ranks()
        .iter()
        .map(|b| ("r".to_string(), RankFile::parse(b).unwrap()))
        .collect();
    let (t, _) = merge(files).unwrap();
    let mut out = Vec::new();
    t.write(&mut out, &|_| {}).unwrap();
    out
}

#[derive(Debug, Clone)]
enum Damage {
    Truncate(usize),
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Remove(usize, usize),
}

fn damage() -> impl Strategy<Value = Vec<Damage>> {
    let one = prop_oneof![
        any::<usize>().prop_map(Damage::Truncate),
        (any::<usize>(), 1..=255u8).prop_map(|(i, x)| Damage::Flip(i, x)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, v)| Damage::Insert(i, v)),
        (any::<usize>(), 1..32usize).prop_map(|(i, n)| Damage::Remove(i, n)),
    ];
    prop::collection::vec(one, 1..4)
}

fn apply(mut data: Vec<u8>, damage: &[Damage]) -> Vec<u8> {
    for d in damage {
        let n = data.len().max(1);
        match d {
            Damage::Truncate(i) => data.truncate(i % n),
            Damage::Flip(i, x) => {
                if !data.is_empty() {
                    data[i % n] ^= x;
                }
            }
            Damage::Insert(i, v) => {
                let at = i % (data.len() + 1);
                data.splice(at..at, v.iter().copied());
            }
            Damage::Remove(i, k) => {
                let at = i % n;
                let end = (at + k).min(data.len());
                data.drain(at.min(data.len())..end);
            }
        }
    }
    data
}

/// Decoding without the CRC's protection: the frames are rewritten with
/// fresh CRCs so that damaged payloads reach the event decoders.
fn recrc(data: &[u8]) -> Vec<u8> {
    let Ok(c) = pnmpi_trace::container::parse(data) else {
        return data.to_vec();
    };
    let mut out = Vec::new();
    let mut h = c.header.clone();
    let header = h.bytes(h.remaining()).unwrap().to_vec();
    let kind = c.kind;
    out.extend_from_slice(&pnmpi_trace::container::prologue(kind, &header));
    for chunk in c.chunks {
        let mut p = chunk.payload;
        let bytes = p.bytes(p.remaining()).unwrap();
        pnmpi_trace::container::push_chunk(&mut out, chunk.chunk_type, bytes);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn damaged_rank_files_never_panic(d in damage(), rank in 0..3usize, fix_crc in any::<bool>()) {
        let data = apply(common::three_ranks()[rank].clone(), &d);
        let data = if fix_crc { recrc(&data) } else { data };
        if let Err(e) = RankFile::parse(&data) {
            prop_assert!(e.offset <= data.len() as u64, "{e} beyond {} bytes", data.len());
        }
    }

    #[test]
    fn damaged_rank_files_stream_as_they_parse_or_fail_cleanly(
        d in damage(),
        rank in 0..3usize,
        fix_crc in any::<bool>(),
    ) {
        let data = apply(common::three_ranks()[rank].clone(), &d);
        let data = if fix_crc { recrc(&data) } else { data };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-00000.pnr");
        std::fs::write(&path, &data).unwrap();
        let streamed = RankReader::open(&path).and_then(|mut r| {
            let mut streams = Vec::new();
            for slot in 0..r.threads().len() {
                let mut rec = RawRecord::default();
                let mut records = Vec::new();
                while r.next_into(slot, &mut rec)? {
                    records.push(rec.clone());
                }
                streams.push(records);
            }
            Ok((r, streams))
        });
        match (RankFile::parse(&data), streamed) {
            (Ok(f), Ok((r, streams))) => {
                prop_assert_eq!(r.header, f.header);
                prop_assert_eq!(r.pairs, f.pairs);
                prop_assert_eq!(r.end, f.end);
                prop_assert_eq!(r.truncated, f.truncated);
                let want: Vec<Vec<RawRecord>> = f.streams.into_iter().map(|s| s.records).collect();
                prop_assert!(streams == want);
            }
            (Ok(_), Err(e)) => prop_assert!(false, "parses whole but not streamed: {e}"),
            (Err(_), Ok(_)) => {}
            (Err(_), Err(e)) => {
                if let pnmpi_trace::Error::Corrupt { offset, .. } = e {
                    prop_assert!(offset <= data.len() as u64, "{offset} beyond {} bytes", data.len());
                }
            }
        }
    }

    #[test]
    fn damaged_merged_traces_never_panic(d in damage(), fix_crc in any::<bool>()) {
        let data = apply(merged_bytes(), &d);
        let data = if fix_crc { recrc(&data) } else { data };
        if let Err(e) = Trace::parse(&data) {
            prop_assert!(e.offset <= data.len() as u64, "{e} beyond {} bytes", data.len());
        }
    }

    #[test]
    fn damaged_payloads_still_merge_or_fail_cleanly(d in damage()) {
        let mut files = Vec::new();
        for (i, f) in common::three_ranks().into_iter().enumerate() {
            let data = if i == 0 { recrc(&apply(f, &d)) } else { f };
            match RankFile::parse(&data) {
                Ok(f) => files.push((format!("r{i}"), f)),
                Err(_) => return Ok(()),
            }
        }
        let _ = merge(files);
    }
}

#[test]
fn every_truncation_of_a_rank_file_is_reported_not_fatal() {
    let data = common::three_ranks()[0].clone();
    let mut truncated = 0;
    for cut in 0..=data.len() {
        match RankFile::parse(&data[..cut]) {
            Ok(f) => {
                if cut < data.len() {
                    assert!(f.truncated.is_some() || f.end.is_none(), "cut at {cut}");
                }
                truncated += usize::from(f.truncated.is_some());
            }
            Err(e) => assert!(e.offset <= cut as u64, "cut at {cut}: {e}"),
        }
    }
    assert!(truncated > 0);
}
