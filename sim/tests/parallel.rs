//! The parallel replay's protocol, with K threads standing for K MPI
//! processes: on every motif, at rank counts that do and do not divide
//! evenly, under the simple and LogGP models, point-to-point and
//! collectives expanded or analytic, its outcome is the serial replay's,
//! bit for bit. (tests/sim_parallel.rs runs the same under mpirun.)

use pnmpi_sim::engine::parallel::Exchange;
use pnmpi_sim::engine::{replay, replay_parallel, Options, Outcome};
use pnmpi_sim::kernel::window::{min_words, Ballot};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model;
use pnmpi_sim::motif::{self, Motif, Params, MOTIFS};
use std::path::Path;
use std::sync::{Arc, Barrier, Mutex};

/// K threads' collectives: each call is a barrier-separated exchange
/// through shared slots.
struct Threads {
    me: u32,
    procs: u32,
    slots: Arc<Mutex<Vec<Vec<Vec<u8>>>>>,
    mins: Arc<Mutex<Vec<Ballot>>>,
    barrier: Arc<Barrier>,
}

impl Exchange for Threads {
    fn me(&self) -> u32 {
        self.me
    }
    fn procs(&self) -> u32 {
        self.procs
    }
    fn alltoallv(&mut self, out: &[Vec<u8>]) -> Vec<u8> {
        self.slots.lock().unwrap()[self.me as usize] = out.to_vec();
        self.barrier.wait();
        let got = {
            let s = self.slots.lock().unwrap();
            (0..self.procs as usize)
                .flat_map(|p| s[p][self.me as usize].clone())
                .collect()
        };
        self.barrier.wait();
        got
    }
    fn min_words(&mut self, v: Ballot) -> Ballot {
        self.mins.lock().unwrap()[self.me as usize] = v;
        self.barrier.wait();
        let m = min_words(self.mins.lock().unwrap().iter().copied());
        self.barrier.wait();
        m
    }
    fn gather(&mut self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.slots.lock().unwrap()[self.me as usize] = vec![bytes.to_vec()];
        self.barrier.wait();
        let all = (self.me == 0).then(|| self.slots.lock().unwrap().iter().map(|v| v[0].clone()).collect());
        self.barrier.wait();
        all
    }
}

fn machine(ranks: u32, algorithmic: bool) -> Machine {
    let colls = if algorithmic {
        "[collectives]\nmode = \"algorithmic\"\n"
    } else {
        ""
    };
    Machine::parse(
        "m.toml",
        &format!(
            "[machine]\nnodes = {}\ncores_per_node = 4\n[network]\neager_threshold = \"4KiB\"\n\
             [network.intra]\nlatency = \"0.4us\"\nbandwidth = \"20GB/s\"\n\
             [network.inter]\nlatency = \"1.5us\"\nbandwidth = \"5GB/s\"\n{colls}\
             [model.loggp]\nL = \"1.5us\"\no = \"0.3us\"\ng = \"0.5us\"\nG = \"0.2ns\"\n",
            ranks.div_ceil(4)
        ),
    )
    .unwrap()
}

fn serial(path: &Path, m: &Machine, model_name: &str) -> Outcome {
    let mut model = model::build(model_name, m).unwrap();
    let mut src = pnmpi_sim::input::open(path, 1.0).unwrap();
    replay(src.as_mut(), m, model.as_mut(), Options::default()).unwrap()
}

fn parallel(path: &Path, m: &Machine, model_name: &str, procs: u32) -> Outcome {
    let slots = Arc::new(Mutex::new(vec![Vec::new(); procs as usize]));
    let mins = Arc::new(Mutex::new(vec![[0; 3]; procs as usize]));
    let barrier = Arc::new(Barrier::new(procs as usize));
    let handles: Vec<_> = (0..procs)
        .map(|me| {
            let mut x = Threads {
                me,
                procs,
                slots: slots.clone(),
                mins: mins.clone(),
                barrier: barrier.clone(),
            };
            let (path, m, model_name) = (path.to_path_buf(), m.clone(), model_name.to_string());
            std::thread::spawn(move || {
                let mut model = model::build(&model_name, &m).unwrap();
                let mut src = pnmpi_sim::input::open(&path, 1.0).unwrap();
                replay_parallel(src.as_mut(), &m, model.as_mut(), &mut x, false, None).unwrap()
            })
        })
        .collect();
    let mut outs: Vec<Option<Outcome>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(outs[1..].iter().all(Option::is_none));
    outs[0].take().expect("process 0 has the outcome")
}

/// Everything but the per-process peak of unmatched messages.
fn same(a: &Outcome, b: &Outcome, what: &str) {
    assert_eq!(
        a.runtime.to_bits(),
        b.runtime.to_bits(),
        "{what}: runtime {} vs {}",
        a.runtime,
        b.runtime
    );
    assert_eq!(a.stats.actors, b.stats.actors, "{what}: per-rank figures");
    assert_eq!(a.stats.routines, b.stats.routines, "{what}: per-routine figures");
    assert_eq!(a.stats.sizes, b.stats.sizes, "{what}");
    assert_eq!(a.stats.bandwidths, b.stats.bandwidths, "{what}");
    assert_eq!(a.stats.messages, b.stats.messages, "{what}");
    assert_eq!(a.stats.events, b.stats.events, "{what}");
    assert_eq!(
        a.stats.resource_wait.to_bits(),
        b.stats.resource_wait.to_bits(),
        "{what}"
    );
}

#[test]
fn every_motif_replays_in_parallel_as_it_does_serially() {
    let dir = tempfile::tempdir().unwrap();
    for &(motif, name, _) in MOTIFS {
        for ranks in [7u32, 16] {
            let p = Params {
                motif,
                ranks,
                iterations: 12,
                bytes: if motif == Motif::Alltoall { 3000 } else { 6000 },
                compute_ns: 20_000 + 1_000 * u64::from(ranks),
                allreduce_every: 3,
                seed: 11,
            };
            let path = dir.path().join(format!("{name}-{ranks}.pnt"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            motif::pnt::write(&p, &mut f, &|_| {}).unwrap();
            drop(f);
            for algorithmic in [false, true] {
                let m = machine(ranks, algorithmic);
                for model_name in ["simple", "loggp"] {
                    let want = serial(&path, &m, model_name);
                    for procs in [2u32, 3, 4] {
                        let got = parallel(&path, &m, model_name, procs);
                        same(
                            &want,
                            &got,
                            &format!("{name} at {ranks} ranks, {model_name}, algorithmic {algorithmic}, {procs} processes"),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn models_with_state_across_ranks_are_refused_in_parallel() {
    let m = machine(4, false);
    let mut model = model::build("bus", &m).unwrap();
    let p = Params {
        motif: Motif::Halo2d,
        ranks: 4,
        iterations: 2,
        bytes: 100,
        compute_ns: 100,
        allreduce_every: 0,
        seed: 1,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.pnt");
    let mut f = std::fs::File::create(&path).unwrap();
    motif::pnt::write(&p, &mut f, &|_| {}).unwrap();
    let mut src = pnmpi_sim::input::open(&path, 1.0).unwrap();
    let mut x = Threads {
        me: 0,
        procs: 1,
        slots: Arc::new(Mutex::new(vec![Vec::new()])),
        mins: Arc::new(Mutex::new(vec![[0; 3]])),
        barrier: Arc::new(Barrier::new(1)),
    };
    let e = replay_parallel(src.as_mut(), &m, model.as_mut(), &mut x, false, None).unwrap_err();
    assert!(
        e.to_string().contains("bus model cannot replay in parallel"),
        "{e}"
    );
}
