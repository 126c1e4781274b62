//! The bundled `status` and `requests` modules, LLNL PnMPI's building blocks, used by a module of
//! our own written only against LLNL's documented service API (c-tests/modules/reqinfo.c), loaded
//! between them, on real programs at 2 ranks: every request it sees made is described by
//! `map-request` as the call made it, every completion brings that request's parameters and the
//! module's own stamp back in the status extension, and the application's own output and statuses
//! are those of a run without modules. And `piggyback`, used by c-tests/modules/pbcheck.c: each
//! message brings the bytes its sender attached. And `datatype`, used by c-tests/modules/dtwalk.c:
//! each send of c-tests/programs/dtypes.c (every type constructor) walks as the flattened
//! signature computed here by hand. And `comm`, used by c-tests/modules/commtrack.c: every
//! communicator c-tests/programs/comms.c makes at 4 ranks is listed with the id, members and
//! parent computed here by hand.

use crate::common;
use common::*;

/// Runs `program args` at 2 ranks, linked with libpnmpi, without modules and with the modules
/// `conf` lists; returns both runs.
fn with_and_without(program_name: &str, args: &[&str], conf: &str) -> (Run, Run) {
    let exe = program(program_name, Link::Pnmpi);
    let native = Case::new().mpirun(2, &exe, args);
    native.assert_ok();
    let mut case = Case::new();
    case.conf(conf);
    let run = case.mpirun(2, &exe, args);
    run.assert_ok();
    (native, run)
}

/// A bundled module's `module` line.
fn bundled(name: &str) -> String {
    format!(
        "module {}\n",
        target_dir().join(format!("lib{name}.so")).display()
    )
}

/// `status`, `reqinfo` and `requests` (`argument check 1`).
fn request_stack() -> String {
    let reqinfo = api_module("reqinfo", "reqinfo", &[]);
    format!(
        "{}module {}\n{}argument check 1\n",
        bundled("status"),
        reqinfo.display(),
        bundled("requests")
    )
}

/// The lines of `run` that start with `prefix`, sorted (ranks print in any order).
fn sorted(run: &Run, prefix: &str) -> Vec<String> {
    let mut lines: Vec<String> = run.lines(prefix).iter().map(|l| l.to_string()).collect();
    lines.sort();
    lines
}

#[test]
fn a_completed_request_brings_its_call_back_in_its_status() {
    let (native, run) = with_and_without("bsp_llnl", &[], &request_stack());
    assert_eq!(sorted(&run, "bsp_llnl:"), sorted(&native, "bsp_llnl:"));
    // 3 phases of 2 Irecv and 2 Isend, each completed by the phase's Waitall.
    for rank in 0..2 {
        let want = format!("reqinfo rank {rank}: made 12 persistent 0 completed 12 mismatches 0");
        assert_eq!(
            run.lines(&format!("reqinfo rank {rank}:")),
            vec![want.as_str()],
            "{}",
            run.stdout
        );
        let left = format!("requests: rank {rank}: 0 request(s) never completed or freed");
        assert_eq!(run.lines(&format!("requests: rank {rank}:")), vec![left.as_str()]);
    }
}

#[test]
fn every_kind_of_request_is_tracked_at_eager_and_rendezvous_sizes() {
    for bytes in ["64", "200000"] {
        let (native, run) = with_and_without("reqkinds", &[bytes], &request_stack());
        // The application's statuses are untouched: its sums (which read
        // counts, sources and tags) are those of the run without modules.
        assert_eq!(sorted(&run, "reqkinds:"), sorted(&native, "reqkinds:"));
        for rank in 0..2 {
            let line = run.lines(&format!("reqinfo rank {rank}:"));
            assert_eq!(line.len(), 1, "{}", run.stdout);
            let numbers: Vec<i64> = line[0]
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let [made, persistent, completed, mismatches] = numbers[..] else {
                panic!("{}", line[0])
            };
            assert_eq!(mismatches, 0, "{}", run.stdout);
            assert!(persistent >= 1 && made > persistent, "{}", line[0]);
            assert!(completed >= made - persistent && completed > 0, "{}", line[0]);
            let left = format!("requests: rank {rank}: 0 request(s) never completed or freed");
            assert_eq!(run.lines(&format!("requests: rank {rank}:")), vec![left.as_str()]);
        }
    }
}

#[test]
fn a_request_never_freed_is_listed_at_finalize() {
    let (_, run) = with_and_without("bsp_llnl", &["1", "leak"], &request_stack());
    for rank in 0..2 {
        let peer = 1 - rank;
        assert_eq!(
            run.lines(&format!("requests: rank {rank}:")),
            vec![
                format!("requests: rank {rank}: 1 request(s) never completed or freed"),
                format!("requests: rank {rank}: send peer {peer} tag 9 count 8 persistent 1"),
            ],
            "{}",
            run.stdout
        );
    }
}

/// Runs `program args` at 2 ranks with `status`, `pbcheck`, `piggyback` and `requests`, and
/// without modules; the program's output must not change, and on each rank every message
/// received must have brought the bytes its sender attached (`bad 0`, `received > 0`).
fn piggybacked(program_name: &str, args: &[&str]) -> Run {
    let pbcheck = api_module("pbcheck", "pbcheck", &[]);
    let conf = format!(
        "{}module {}\n{}{}",
        bundled("status"),
        pbcheck.display(),
        bundled("piggyback"),
        bundled("requests")
    );
    let (native, run) = with_and_without(program_name, args, &conf);
    let prefix = format!("{program_name}:");
    assert_eq!(sorted(&run, &prefix), sorted(&native, &prefix), "{}", run.stderr);
    for rank in 0..2 {
        let line = run.lines(&format!("pbcheck rank {rank}:"));
        assert_eq!(line.len(), 1, "{}", run.stdout);
        assert!(line[0].ends_with(" bad 0"), "{}", run.stdout);
        assert!(!line[0].contains(" received 0 "), "{}", run.stdout);
    }
    run
}

#[test]
fn piggybacked_bytes_come_with_each_message_of_a_halo_exchange() {
    let run = piggybacked("bsp_llnl", &[]);
    // Per phase: 2 Isend and 2 Irecv (Waitall), and one vector-typed Send
    // from rank 0, received by rank 1.
    assert_eq!(
        run.lines("pbcheck rank 0:"),
        vec!["pbcheck rank 0: sent 9 received 6 bad 0"]
    );
    assert_eq!(
        run.lines("pbcheck rank 1:"),
        vec!["pbcheck rank 1: sent 6 received 9 bad 0"]
    );
}

#[test]
fn piggybacked_bytes_come_with_every_kind_of_message() {
    for bytes in ["64", "200000"] {
        piggybacked("reqkinds", &[bytes]);
    }
}

#[test]
fn every_type_constructor_walks_as_its_flattened_signature() {
    let dtwalk = api_module("dtwalk", "dtwalk", &[]);
    let conf = format!("module {}\n{}", dtwalk.display(), bundled("datatype"));
    let (native, run) = with_and_without("dtypes", &[], &conf);
    assert_eq!(run.lines("dtypes:"), native.lines("dtypes:"));
    assert_eq!(run.lines("dtypes:"), vec!["dtypes: received 16"]);
    let mut want = vec!["dtwalk rank 0: count -1 refused".to_string()];
    want.extend(dtypes::WALKS.iter().map(|w| format!("dtwalk rank 0 {w}")));
    assert_eq!(run.lines("dtwalk rank 0"), want, "{}", run.stderr);
    assert_eq!(
        run.lines("dtwalk rank 1"),
        vec!["dtwalk rank 1: count -1 refused"]
    );
    // The refusal says why, on each rank.
    let why = "error: getDatatypeReference: cannot walk -1 element(s) of the type: the count is negative";
    assert_eq!(run.stderr.matches(why).count(), 2, "{}", run.stderr);
}

/// The members of the half (`MPI_Comm_split` by rank % 2, keys reversed) of world rank `r`.
fn half(r: usize) -> [usize; 2] {
    if r.is_multiple_of(2) {
        [2, 0]
    } else {
        [3, 1]
    }
}

fn joined(ranks: &[usize]) -> String {
    ranks.iter().map(|r| format!(" {r}")).collect()
}

/// What commtrack lists on world rank `r` after comms.c, computed from the program's calls: ids
/// agreed as the members' highest proposal (ranks 1 and 3 know one more communicator, the
/// created pair, when the intercommunicator is made: its id is theirs, 7, on every rank).
fn comms_listing(r: usize) -> Vec<String> {
    let (hm, hr, hl) = (half(r), usize::from(r < 2), r % 2);
    let row = [r / 2 * 2, r / 2 * 2 + 1];
    let merged = [2, 0, 3, 1];
    let mr = merged.iter().position(|&m| m == r).unwrap();
    let mut lines = vec![
        format!("#0 id 0 leader 0 kind world parent -1 rank {r} freed 0 members 0 1 2 3"),
        format!("#1 id 1 leader {r} kind self parent -1 rank 0 freed 0 members {r}"),
        format!(
            "#2 id 2 leader {hl} kind split parent 0 rank {hr} freed 0 members{}",
            joined(&hm)
        ),
        format!(
            "#3 id 3 leader {hl} kind dup parent 2 rank {hr} freed 1 members{}",
            joined(&hm)
        ),
        format!("#4 id 4 leader 0 kind cart parent 0 rank {r} freed 0 members 0 1 2 3"),
        format!(
            "#5 id 5 leader {} kind cart parent 4 rank {} freed 0 members{}",
            row[0],
            r % 2,
            joined(&row)
        ),
    ];
    if r % 2 == 1 {
        lines.push(format!(
            "#6 id 6 leader 1 kind create parent 0 rank {} freed 1 members 1 3",
            r / 2
        ));
    }
    let k = lines.len();
    lines.push(format!(
        "#{k} id 7 leader 0 kind intercomm parent 2 rank {hr} freed 0 members{} remote{}",
        joined(&hm),
        joined(&half(r + 1))
    ));
    lines.push(format!(
        "#{} id 8 leader 0 kind merge parent 7 rank {mr} freed 0 members 2 0 3 1",
        k + 1
    ));
    lines.push(format!(
        "#{} id 9 leader 0 kind graph parent 0 rank {r} freed 0 members 0 1 2 3",
        k + 2
    ));
    lines
        .into_iter()
        .map(|l| format!("commtrack rank {r}: {l}"))
        .collect()
}

#[test]
fn every_communicator_is_listed_with_its_agreed_id_members_and_parent() {
    let commtrack = api_module("commtrack", "commtrack", &[]);
    let exe = program("comms", Link::Pnmpi);
    let mut case = Case::new();
    case.conf(&format!("module {}\n{}", commtrack.display(), bundled("comm")));
    let run = case.mpirun(4, &exe, &[]);
    run.assert_ok();
    for r in 0..4 {
        assert_eq!(
            run.lines(&format!("comms: rank {r} ")),
            vec![format!("comms: rank {r} sum 6")]
        );
        assert_eq!(
            run.lines(&format!("commtrack rank {r}:")),
            comms_listing(r),
            "{}",
            run.stdout
        );
    }
}

/// LLNL's communication callbacks (pnmpi/commsub.h) registered by c-tests/modules/commevents.c
/// with `comm`, on the halo exchange at 2 ranks: each phase makes 2 Isend and 2 Irecv completed by
/// one Waitall, one blocking Send (rank 0) and Recv (rank 1), an Allreduce and a Barrier; every
/// _START's `ptr` comes back to its _END, and every async _END gets its wait's `midptr`.
#[test]
fn llnl_communication_callbacks_see_every_message_and_collective() {
    let commevents = api_module("commevents", "commevents", &[]);
    let conf = format!("module {}\n{}", commevents.display(), bundled("comm"));
    let (native, run) = with_and_without("bsp_llnl", &[], &conf);
    assert_eq!(sorted(&run, "bsp_llnl:"), sorted(&native, "bsp_llnl:"));
    assert_eq!(
        run.lines("commevents rank 0:"),
        vec!["commevents rank 0: init 1 sends 9/9 recvs 6/6 mid1 12 mid2 3 completions 3 colls 6/6 bad 0"],
        "{}",
        run.stderr
    );
    assert_eq!(
        run.lines("commevents rank 1:"),
        vec!["commevents rank 1: init 1 sends 6/6 recvs 9/9 mid1 12 mid2 3 completions 3 colls 6/6 bad 0"],
        "{}",
        run.stderr
    );
}

/// The same callbacks through every wait and test (c-tests/programs/completions.c): each rank
/// makes 12 Isend and 12 Irecv (one MID1 each), one Sendrecv, rank 0 one Ssend and rank 1 one
/// Recv, and 8 collectives; every START has its END with its `ptr`, and every MID2 (one per wait
/// or test call, as many as the polling took) its COMPLETION.
#[test]
fn llnl_communication_callbacks_complete_through_every_wait_and_test() {
    let commevents = api_module("commevents", "commevents", &[]);
    let conf = format!("module {}\n{}", commevents.display(), bundled("comm"));
    let (native, run) = with_and_without("completions", &[], &conf);
    assert_eq!(sorted(&run, "completions:"), sorted(&native, "completions:"));
    for (rank, sends, recvs) in [(0, 14, 13), (1, 13, 14)] {
        let line = run.lines(&format!("commevents rank {rank}:"));
        assert_eq!(line.len(), 1, "{}", run.stdout);
        let numbers: Vec<i64> = line[0]
            .split([' ', '/', ':'])
            .filter_map(|w| w.parse().ok())
            .collect();
        // rank, init, sends start/end, recvs start/end, mid1, mid2, completions, colls start/end, bad.
        let [r, init, s0, s1, r0, r1, mid1, mid2, done, c0, c1, bad] = numbers[..] else {
            panic!("{}", line[0])
        };
        assert_eq!(
            [r, init, s0, s1, r0, r1, mid1],
            [rank, 1, sends, sends, recvs, recvs, 24],
            "{}",
            line[0]
        );
        // At least one call per wait or test round: 2 Waits, 2 Tests, 4 Waitany, 4 Testany, and one
        // Waitsome, Testsome and Testall at the least.
        let least = 2 + 2 + 4 + 4 + 1 + 1 + 1;
        assert!(mid2 >= least && mid2 == done, "{}", line[0]);
        assert_eq!([c0, c1, bad], [8, 8, 0], "{}", line[0]);
    }
}
