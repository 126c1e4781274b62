use super::*;
use crate::model::LogGopsParams;

/// A dissemination barrier of `bytes` messages over `p` ranks, as
/// Schedgen2 writes one: in round k, rank r sends to r + 2^k and receives
/// from r - 2^k; a round's send requires the previous round's receive.
fn dissemination(p: u32, bytes: u64) -> String {
    let mut g = format!("num_ranks {p}\n");
    for r in 0..p {
        g += &format!("\nrank {r} {{\n");
        let (mut dist, mut k) = (1, 0);
        while dist < p {
            g += &format!("s{k}: send {bytes}b to {} tag {k}\n", (r + dist) % p);
            g += &format!("r{k}: recv {bytes}b from {} tag {k}\n", (r + p - dist) % p);
            if k > 0 {
                g += &format!("s{k} requires r{}\n", k - 1);
            }
            dist *= 2;
            k += 1;
        }
        g += "}\n";
    }
    g
}

fn run_on(text: &str, p: LogGopsParams) -> Outcome {
    let mut s = parse(text, "t.goal").unwrap();
    let mut m = LogGops::new(p, s.ranks(), s.cpus, s.nics);
    run(&mut s, &mut m).unwrap()
}

#[test]
fn dissemination_takes_rounds_times_2o_l_and_7g() {
    let p = LogGopsParams::LOGGOPSIM;
    for ranks in [2u32, 5, 8, 33, 100] {
        let out = run_on(&dissemination(ranks, 8), p);
        let rounds = u64::from(32 - (ranks - 1).leading_zeros());
        let want = rounds * (2 * p.o + p.L + 7 * p.G);
        assert_eq!(out.latest().1, want, "{ranks} ranks");
        assert!(out.finish.iter().all(|&f| f == want), "{:?}", out.finish);
        // Every op and every message is an event.
        assert_eq!(out.events, u64::from(ranks) * rounds * 3);
    }
}

/// A rendezvous whose receiver computes first: the message waits for the
/// receiver's CPU, is taken in (o + (s-1) G of CPU), and the send ends
/// when the receive matches it, which frees the sender's next op.
#[test]
fn a_rendezvous_ends_its_send_when_the_receive_matches() {
    let p = LogGopsParams::LOGGOPSIM;
    let s = 100_000u64;
    let text = format!(
        "num_ranks 2\nrank 0 {{\na: send {s}b to 1 tag 3\nb: calc 500\nb requires a\n}}\n\
         rank 1 {{\nc: calc 10000\nd: recv {s}b from 0 tag 3\nd requires c\n}}\n"
    );
    let out = run_on(&text, p);
    // Rank 1 computes until 10,000; the message (first byte at o + L) is
    // taken in then, and the receive, freed when the calc started, matches
    // it at 10,000 too.
    let taken = 10_000 + p.o + (s - 1) * p.G;
    // The send ends at the match: rank 0's CPU is held until 10,000, then
    // computes 500.
    assert_eq!(out.finish, [10_000 + 500, taken]);
    // Below S, the same send is eager: the calc follows its overhead.
    let eager = run_on(&text.replace(&format!("{s}b"), "8b"), p);
    assert_eq!(eager.finish[0], p.o + 500);
}

#[test]
fn a_receive_no_message_matches_is_reported() {
    let text = "num_ranks 2\nrank 0 {\nsend 8b to 1 tag 1\n}\nrank 1 {\nrecv 8b from 0 tag 2\n}\n";
    let mut s = parse(text, "t.goal").unwrap();
    let mut m = LogGops::new(LogGopsParams::LOGGOPSIM, 2, 1, 1);
    let e = run(&mut s, &mut m).unwrap_err();
    assert!(e.contains("rank 1: a receive from rank 0 (tag 2)"), "{e}");
    assert!(e.contains("rank 1: a message from rank 0 (tag 1)"), "{e}");
}

#[test]
fn wildcards_match_in_arrival_order() {
    // Rank 0 receives from any source: rank 2's message arrives first
    // (rank 1 computes before sending).
    let text = "num_ranks 3\nrank 0 {\na: recv 8b from -1 tag -1\nb: recv 8b from -1 tag -1\n}\n\
                rank 1 {\nc: calc 50000\nd: send 8b to 0 tag 1\nd requires c\n}\n\
                rank 2 {\ne: send 8b to 0 tag 2\n}\n";
    let p = LogGopsParams::LOGGOPSIM;
    let out = run_on(text, p);
    // Rank 1's message arrives at 50,000 + o + L and is taken in.
    assert_eq!(out.finish[0], 50_000 + p.o + p.L + p.o + 7 * p.G);
}
