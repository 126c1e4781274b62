//! Writes a synthetic stencil as a merged trace (`.pnt`), streamed, for
//! the replay's speed and memory figures on traces of any size:
//! `cargo run --release -p pnmpi-sim --example synth_pnt -- RANKS ITERATIONS OUT.pnt`.
//! Per iteration and rank: 100 us of compute, 4 `MPI_Irecv` and 4
//! `MPI_Isend` of 8 KiB to the 2-D grid neighbours, `MPI_Waitall`; an
//! `MPI_Allreduce` every 10 iterations.

use pnmpi_sim::input::synth::{Stencil, ROUTINES};
use pnmpi_trace::fields::V;
use pnmpi_trace::trace::{Done, Event, MergedWriter, ReqRef};

/// Rank `r`'s events, made as they are written.
fn events(s: &Stencil, r: u32) -> impl Iterator<Item = Event> + '_ {
    let nb = s.neighbours(r);
    let mut t = 0u64;
    let mut call = move |routine: u32, gap: u64| {
        let start = t + gap;
        t = start + 500;
        Event {
            routine,
            start,
            end: t,
            ..Event::default()
        }
    };
    let mut out = vec![call(0, 0)];
    let mut iteration = 0u64;
    let mut next_req = 0u32;
    std::iter::from_fn(move || {
        if iteration == s.iterations {
            if out.is_empty() {
                return None;
            }
            return out.pop();
        }
        if out.is_empty() {
            let mut batch = Vec::with_capacity(10);
            let first = next_req;
            for k in 0..8u32 {
                let mut e = call(if k < 4 { 1 } else { 2 }, if k == 0 { s.compute_ns } else { 0 });
                let d = (k % 4) as usize;
                e.set(V::Peer, Some(i64::from(nb[d])));
                e.set(V::Tag, Some(if k < 4 { d as i64 } else { (d ^ 1) as i64 }));
                e.set(V::Comm, Some(0));
                e.set(V::Bytes, Some(s.bytes as i64));
                e.set(V::Req, Some(1));
                e.first_req = next_req;
                next_req += 1;
                batch.push(e);
            }
            let mut w = call(3, 0);
            w.done = (first..next_req)
                .map(|index| Done {
                    req: Some(ReqRef { stream: r, index }),
                    status: None,
                })
                .collect();
            batch.push(w);
            iteration += 1;
            if s.allreduce_every > 0 && iteration.is_multiple_of(s.allreduce_every) {
                let mut a = call(4, 0);
                a.set(V::Comm, Some(0));
                a.set(V::Bytes, Some(8));
                batch.push(a);
            }
            if iteration == s.iterations {
                batch.push(call(5, 0));
            }
            batch.reverse();
            out = batch;
        }
        out.pop()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(ranks), Some(iterations), Some(path)) = (
        args.first().and_then(|a| a.parse().ok()),
        args.get(1).and_then(|a| a.parse().ok()),
        args.get(2),
    ) else {
        eprintln!("usage: synth_pnt RANKS ITERATIONS OUT.pnt");
        std::process::exit(2);
    };
    let s = Stencil {
        ranks,
        iterations,
        bytes: 8192,
        compute_ns: 100_000,
        allreduce_every: 10,
    };
    let tmp = format!("{path}.part");
    let run = || -> std::io::Result<u64> {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        let routines: Vec<String> = ROUTINES.iter().map(|r| r.to_string()).collect();
        let mut w = MergedWriter::new(&mut out, ranks, "synthetic", &routines, &[], &[])?;
        for r in 0..ranks {
            w.stream(r, r, 0, events(&s, r), &|_| {})?;
        }
        let n = w.written();
        std::io::Write::flush(&mut out)?;
        Ok(n)
    };
    match run().and_then(|n| std::fs::rename(&tmp, path).map(|_| n)) {
        Ok(n) => println!(
            "{path}: {ranks} ranks, {iterations} iterations, {} events, {n} bytes",
            u64::from(ranks) * s.ops_per_rank()
        ),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
