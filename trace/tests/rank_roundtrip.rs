//! Rank files round-trip: random events, encoded as the tracer encodes
//! them (the point-to-point, single-completion and collective paths and
//! the general one, in chunks of random length), decode to the same events, whole and streamed. Arguments are
//! drawn from small pools so that events repeat their routine's
//! arguments, as in a loop, and routine codes past the repeat table's
//! slots share slots.

use pnmpi_trace::rank::*;
use pnmpi_trace::rank_reader::RankReader;
use pnmpi_trace::repeats::SLOTS;
use proptest::prelude::*;

const ROUTINES: u32 = 2 * SLOTS as u32 + 6;

/// An event to encode: a point-to-point call (through `encode_p2p` or
/// `encode`), a wait (through `encode_done` or `encode`), a blocking
/// collective (through `encode_coll` or `encode`) or any call through
/// `encode`.
#[derive(Clone, Debug)]
enum Ev {
    P2p {
        call: P2p,
        fast: bool,
    },
    Done {
        routine: u32,
        done: Option<RawDone>,
        fast: bool,
    },
    Coll {
        call: CollCall,
        fast: bool,
    },
    Any(Box<RawRecord>),
}

fn time() -> impl Strategy<Value = u64> {
    // Gaps and durations of every byte length, small ones most often.
    prop_oneof![
        0..300u64,
        0..70_000u64,
        (0..64u32, any::<u64>()).prop_map(|(bits, v)| v >> bits)
    ]
}

fn routine() -> impl Strategy<Value = u32> {
    prop_oneof![4 => prop::sample::select(vec![1, 2, 1 + SLOTS as u32]), 1 => 0..ROUTINES]
}

fn small() -> impl Strategy<Value = i64> {
    prop_oneof![9 => prop::sample::select(vec![0i64, 7]), 1 => any::<i64>()]
}

/// Message sizes: often 2- or 3-byte varints (the tracer writes those
/// with one store).
fn size() -> impl Strategy<Value = i64> {
    prop_oneof![2 => small(), 1 => -(1i64 << 22)..(1 << 22)]
}

fn comm() -> impl Strategy<Value = u64> {
    prop_oneof![9 => Just(0x7f00_1000u64), 1 => any::<u64>()]
}

fn p2p() -> impl Strategy<Value = Ev> {
    (
        (routine(), small(), small(), comm(), size()),
        prop::option::of(any::<u64>()),
        prop::option::of((small(), small())),
        any::<bool>(),
    )
        .prop_map(|((routine, peer, tag, comm, bytes), req, status, fast)| Ev::P2p {
            call: P2p {
                routine,
                start: 0,
                end: 0,
                peer,
                tag,
                comm,
                bytes,
                req,
                status,
                site: SiteCode::NONE,
            },
            fast,
        })
}

fn handle() -> impl Strategy<Value = u64> {
    // Request handles as an MPI's free list hands them out: often the
    // last one again, or one near it.
    prop_oneof![3 => prop::sample::select(vec![0x5600_0000u64, 0x5600_0100]), 1 => any::<u64>()]
}

fn done() -> impl Strategy<Value = Ev> {
    (
        routine(),
        prop::option::of(
            (handle(), prop::option::of((small(), small())))
                .prop_map(|(handle, status)| RawDone { handle, status }),
        ),
        any::<bool>(),
    )
        .prop_map(|(routine, done, fast)| Ev::Done { routine, done, fast })
}

fn coll() -> impl Strategy<Value = Ev> {
    (
        (routine(), comm()),
        (prop::option::of(small()), prop::option::of(small())),
        any::<bool>(),
    )
        .prop_map(|((routine, comm), (bytes, root), fast)| Ev::Coll {
            call: CollCall {
                routine,
                start: 0,
                end: 0,
                comm,
                bytes,
                root,
                site: SiteCode::NONE,
            },
            fast,
        })
}

fn any_call() -> impl Strategy<Value = Ev> {
    (
        (
            routine(),
            prop::option::of(small()),
            prop::option::of(small()),
            prop::option::of(comm()),
            prop::option::of(small()),
        ),
        (prop::option::of(small()), prop::option::of(small())),
        prop::collection::vec(any::<u64>(), 0..3),
        prop::collection::vec(
            (any::<u64>(), prop::option::of((small(), small())))
                .prop_map(|(handle, status)| RawDone { handle, status }),
            0..3,
        ),
    )
        .prop_map(
            |((routine, peer, tag, comm, bytes), (root, rbytes), reqs, done)| {
                Ev::Any(Box::new(RawRecord {
                    routine,
                    peer,
                    tag,
                    comm,
                    bytes,
                    root,
                    rbytes,
                    reqs,
                    done,
                    ..RawRecord::default()
                }))
            },
        )
}

/// Events with their times: (event, gap, duration, whether a chunk ends after it).
fn events() -> impl Strategy<Value = Vec<(Ev, u64, u64, bool)>> {
    let ev = prop_oneof![3 => p2p(), 2 => done(), 2 => coll(), 1 => any_call()];
    prop::collection::vec((ev, time(), time(), prop::bool::weighted(0.1)), 1..120)
}

fn header() -> RankHeader {
    RankHeader {
        rank: 0,
        world_size: 2,
        run_id: 5,
        clock: Clock::Tsc,
        start: ClockPair { tick: 1000, ns: 10 },
        pid: 1,
        host: "h".into(),
        mpi: "openmpi".into(),
        values: MpiValues::default(),
        routines: (0..ROUTINES).map(|r| format!("MPI_R{r}")).collect(),
    }
}

/// Encodes the events into a rank file; returns it and the records it
/// must decode to.
fn encode(evs: &[(Ev, u64, u64, bool)]) -> (Vec<u8>, Vec<RawRecord>) {
    let h = header();
    let mut out = h.prologue();
    let mut enc = RawEncoder::new(h.start.tick);
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0;
    let mut want = Vec::new();
    let mut t = h.start.tick;
    for (i, (ev, gap, dur, cut)) in evs.iter().enumerate() {
        // Now and then, a clock that steps back (a start before the last end).
        let start = if i % 17 == 5 {
            t.saturating_sub(*gap)
        } else {
            t.saturating_add(*gap)
        };
        let end = start.saturating_add(*dur);
        // Most events with a call site, of ids of 1 to 5 bytes.
        let site = (gap % 4 != 0).then(|| (*dur as u32) >> (gap % 32));
        let mut r = match ev {
            Ev::P2p { call, fast } => {
                let call = P2p {
                    start,
                    end,
                    site: SiteCode::new(site),
                    ..*call
                };
                let req: Vec<u64> = call.req.into_iter().collect();
                let n = if *fast {
                    enc.encode_p2p(&call, &mut buf[len..])
                } else {
                    enc.encode(&call.as_event(&req), &mut buf[len..])
                };
                assert!(n <= P2P_MAX);
                len += n;
                RawRecord {
                    routine: call.routine,
                    peer: Some(call.peer),
                    tag: Some(call.tag),
                    comm: Some(call.comm),
                    bytes: Some(call.bytes),
                    reqs: req,
                    status: call.status,
                    site,
                    ..RawRecord::default()
                }
            }
            Ev::Done { routine, done, fast } => {
                let r = RawRecord {
                    routine: *routine,
                    start,
                    end,
                    done: done.iter().copied().collect(),
                    site,
                    ..RawRecord::default()
                };
                let n = if *fast {
                    enc.encode_done(*routine, start, end, SiteCode::new(site), *done, &mut buf[len..])
                } else {
                    enc.encode(&r.as_event(), &mut buf[len..])
                };
                assert!(n <= SMALL_MAX);
                len += n;
                r
            }
            Ev::Coll { call, fast } => {
                let call = CollCall {
                    start,
                    end,
                    site: SiteCode::new(site),
                    ..*call
                };
                let n = if *fast {
                    enc.encode_coll(&call, &mut buf[len..])
                } else {
                    enc.encode(&call.as_event(), &mut buf[len..])
                };
                assert!(n <= SMALL_MAX);
                len += n;
                RawRecord {
                    routine: call.routine,
                    comm: Some(call.comm),
                    bytes: call.bytes,
                    root: call.root,
                    site,
                    ..RawRecord::default()
                }
            }
            Ev::Any(r) => {
                let r = RawRecord {
                    start,
                    end,
                    site,
                    ..(**r).clone()
                };
                let ev = r.as_event();
                let n = enc.encode(&ev, &mut buf[len..]);
                assert!(n <= ev.max_size());
                len += n;
                r
            }
        };
        // The decoder rebuilds times from the clamped gap and duration.
        let gap = start.saturating_sub(enc_prev(&want, h.start.tick, i));
        r.start = enc_prev(&want, h.start.tick, i).wrapping_add(gap);
        r.end = r.start.wrapping_add(end.saturating_sub(start));
        t = r.end;
        want.push(r);
        if *cut || i + 1 == evs.len() {
            let info = enc.finish_chunk();
            out.extend_from_slice(&events_chunk_head(
                0,
                info,
                ClockPair { tick: t, ns: 20 },
                &buf[..len],
            ));
            out.extend_from_slice(&buf[..len]);
            len = 0;
        }
    }
    (out, want)
}

/// The end of the event before event `i` (the start tick before the first).
fn enc_prev(want: &[RawRecord], start: u64, i: usize) -> u64 {
    if i == 0 {
        start
    } else {
        want[i - 1].end
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_events_decode_as_encoded_whole_and_streamed(evs in events()) {
        let (data, want) = encode(&evs);
        let f = RankFile::parse(&data).unwrap();
        prop_assert_eq!(f.streams.len(), 1);
        prop_assert_eq!(&f.streams[0].records, &want);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-00000.pnr");
        std::fs::write(&path, &data).unwrap();
        let mut r = RankReader::open(&path).unwrap();
        let mut rec = RawRecord::default();
        let mut got = Vec::new();
        while r.next_into(0, &mut rec).unwrap() {
            got.push(rec.clone());
        }
        prop_assert_eq!(got, want);
    }
}

#[test]
fn a_repeated_send_writes_no_argument() {
    let mut enc = RawEncoder::new(0);
    let mut buf = [0u8; P2P_MAX];
    let call = P2p {
        routine: 3,
        start: 10,
        end: 20,
        peer: 1,
        tag: 7,
        comm: 0x7f00_1000,
        bytes: 4,
        req: None,
        status: None,
        site: SiteCode::NONE,
    };
    let first = enc.encode_p2p(&call, &mut buf);
    let again = P2p {
        start: 30,
        end: 1000,
        ..call
    };
    let n = enc.encode_p2p(&again, &mut buf);
    // Routine (2 bytes), head (SAME, 4-byte times), gap, duration, mask.
    assert_eq!(
        buf[..n],
        [3, 0, SAME | 3 << 3 | 3, 10, 0, 0, 0, 0xca, 0x03, 0, 0, 0x0f]
    );
    assert!(first > n);
}
