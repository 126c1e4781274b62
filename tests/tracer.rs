//! The `tracer` module and the `pnmpi trace` tools, end to end: real
//! programs traced under real mpirun, merged, dumped, exported, and the
//! SimGrid export replayed by `smpirun -replay`.

use crate::common;
use common::*;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// libtracer.so, built with the workspace.
fn tracer() -> PathBuf {
    let lib = target_dir().join("libtracer.so");
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --workspace` first",
        lib.display()
    );
    lib
}

/// Runs `pnmpi ARGS` and returns stdout, panicking with its output on failure.
fn pnmpi(args: &[&str]) -> String {
    let out = pnmpi_output(args);
    assert!(
        out.status.success(),
        "pnmpi {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn pnmpi_output(args: &[&str]) -> std::process::Output {
    Command::new(target_dir().join("pnmpi"))
        .args(args)
        .output()
        .expect("pnmpi runs")
}

/// A traced run: its case (kept for its folder), trace folder and merged trace.
struct Traced {
    case: Case,
    dir: PathBuf,
    merged: PathBuf,
    stdout: String,
}

fn trace_run(program_name: &str, np: usize, args: &[&str]) -> Traced {
    let mut case = Case::new();
    case.conf(&format!("module {}\n", tracer().display()));
    let dir = case.dir().join("trace");
    case.env("PNMPI_TRACE_DIR", &dir.display().to_string());
    let run = case.mpirun(np, &program(program_name, Link::Pnmpi), args);
    run.assert_ok();
    assert!(
        run.stderr.contains("pnmpi tracer: trace written to"),
        "{}",
        run.stderr
    );
    let merged = case.dir().join("run.pnt");
    let text = pnmpi(&[
        "trace",
        "merge",
        &dir.display().to_string(),
        "-o",
        &merged.display().to_string(),
    ]);
    assert!(text.contains(" events, "), "{text}");
    Traced {
        case,
        dir,
        merged,
        stdout: run.stdout,
    }
}

/// tracecheck.c under the tracer, once for all the tests that read it.
fn tracecheck() -> &'static Traced {
    static RUN: OnceLock<Traced> = OnceLock::new();
    RUN.get_or_init(|| {
        let t = trace_run("tracecheck", 4, &[]);
        assert!(t.stdout.contains("tracecheck: ok"), "{}", t.stdout);
        t
    })
}

/// One line of `pnmpi trace dump`.
#[derive(Debug, Clone)]
struct Line {
    rank: u32,
    thread: u32,
    routine: String,
    fields: HashMap<String, String>,
}

impl Line {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    fn num(&self, key: &str) -> Option<i64> {
        self.get(key)
            .map(|v| v.parse().unwrap_or_else(|_| panic!("{key}={v} in {self:?}")))
    }
}

struct Dump {
    comms: HashMap<i64, Vec<i64>>,
    lines: Vec<Line>,
}

fn dump(trace: &Path) -> Dump {
    let text = pnmpi(&["trace", "dump", &trace.display().to_string()]);
    let mut comms = HashMap::new();
    let mut lines = Vec::new();
    for l in text.lines() {
        let words: Vec<&str> = l.split_whitespace().collect();
        if l.starts_with('#') {
            continue;
        }
        if words[0] == "comm" {
            let members = words
                .iter()
                .find_map(|w| w.strip_prefix("members="))
                .map(|m| m.split(',').map(|r| r.parse().unwrap()).collect())
                .unwrap_or_default();
            comms.insert(words[1].parse().unwrap(), members);
            continue;
        }
        let (rank, thread) = words[0].split_once('.').expect("rank.thread");
        let fields = words[4..]
            .iter()
            .map(|w| {
                let (k, v) = w.split_once('=').expect("key=value");
                (k.to_string(), v.to_string())
            })
            .collect();
        lines.push(Line {
            rank: rank.parse().unwrap(),
            thread: thread.parse().unwrap(),
            routine: words[3].to_string(),
            fields,
        });
    }
    Dump { comms, lines }
}

fn of<'a>(d: &'a Dump, rank: u32, routine: &str) -> Vec<&'a Line> {
    d.lines
        .iter()
        .filter(|l| l.rank == rank && l.routine == routine)
        .collect()
}

#[test]
fn every_call_appears_once_with_its_arguments() {
    let t = tracecheck();
    let d = dump(&t.merged);
    // Calls per rank, from the header of c-tests/programs/tracecheck.c.
    for rank in 0..4u32 {
        let mut want: BTreeMap<&str, usize> = [
            ("MPI_Init", 1),
            ("MPI_Comm_rank", 1),
            ("MPI_Comm_size", 1),
            ("MPI_Irecv", 1),
            ("MPI_Isend", 1),
            ("MPI_Waitall", 1),
            ("MPI_Comm_split", 1),
            ("MPI_Allreduce", 2),
            ("MPI_Bcast", 1),
            ("MPI_Barrier", 2),
            ("MPI_Comm_free", 1),
            ("MPI_Reduce", 1),
            ("MPI_Iallreduce", 1),
            ("MPI_Wait", 1),
            ("MPI_Finalize", 1),
        ]
        .into_iter()
        .collect();
        match rank {
            0 => *want.entry("MPI_Recv").or_default() += 3,
            _ => *want.entry("MPI_Send").or_default() += 1,
        }
        if rank == 1 {
            *want.get_mut("MPI_Irecv").unwrap() += 1;
            *want.get_mut("MPI_Wait").unwrap() += 1;
        }
        if rank == 2 {
            *want.get_mut("MPI_Send").unwrap() += 1;
        }
        let mut got: BTreeMap<&str, usize> = BTreeMap::new();
        for l in d.lines.iter().filter(|l| l.rank == rank) {
            assert_eq!(l.thread, 0);
            *got.entry(l.routine.as_str()).or_default() += 1;
        }
        assert_eq!(got, want, "calls of rank {rank}");
    }

    for r in 0..4u32 {
        let (next, prev) = (i64::from((r + 1) % 4), i64::from((r + 3) % 4));
        let isend = of(&d, r, "MPI_Isend")[0];
        let irecv = of(&d, r, "MPI_Irecv")[0];
        for (l, peer) in [(isend, next), (irecv, prev)] {
            assert_eq!(
                (l.num("peer"), l.num("tag"), l.num("bytes"), l.num("comm")),
                (Some(peer), Some(10), Some(400), Some(0)),
                "{l:?}"
            );
        }
        // The Waitall completed exactly the ring's two requests.
        let mut done: Vec<&str> = of(&d, r, "MPI_Waitall")[0]
            .get("done")
            .unwrap()
            .split(',')
            .collect();
        done.sort();
        let mut want = vec![
            format!("{r}.0#{}", irecv.get("reqs").unwrap()),
            format!("{r}.0#{}", isend.get("reqs").unwrap()),
        ];
        want.sort();
        assert_eq!(done, want);

        // The split: members {r%2, r%2+2}, used by the three collectives.
        let newcomm = of(&d, r, "MPI_Comm_split")[0].num("newcomm").unwrap();
        assert_eq!(d.comms[&newcomm], [i64::from(r % 2), i64::from(r % 2 + 2)]);
        let on_split = |name: &str| {
            of(&d, r, name)
                .into_iter()
                .filter(|l| l.num("comm") == Some(newcomm))
                .count()
        };
        assert_eq!(
            (
                on_split("MPI_Allreduce"),
                on_split("MPI_Bcast"),
                on_split("MPI_Barrier")
            ),
            (1, 1, 1)
        );
        let bcast = of(&d, r, "MPI_Bcast")[0];
        assert_eq!(
            (bcast.num("bytes"), bcast.num("root")),
            (Some(64), Some(i64::from(r % 2)))
        );
        let allreduce = of(&d, r, "MPI_Allreduce");
        assert_eq!(allreduce[0].num("bytes"), Some(8));
        assert_eq!(of(&d, r, "MPI_Comm_free")[0].num("comm"), Some(newcomm));
        let reduce = of(&d, r, "MPI_Reduce")[0];
        assert_eq!(
            (reduce.num("bytes"), reduce.num("root"), reduce.num("comm")),
            (Some(8), Some(3), Some(0))
        );
        assert_eq!(of(&d, r, "MPI_Iallreduce")[0].num("bytes"), Some(4));
        if r > 0 {
            let send = of(&d, r, "MPI_Send")[0];
            let want = (Some(0), Some(20 + i64::from(r)), Some(8 * i64::from(r)));
            assert_eq!((send.num("peer"), send.num("tag"), send.num("bytes")), want);
        }
    }
    // Rank 0's wildcard receives: the real source and tag of each.
    let mut sources: Vec<(i64, i64)> = of(&d, 0, "MPI_Recv")
        .iter()
        .map(|l| {
            assert_eq!((l.num("wild"), l.num("bytes")), (Some(3), Some(32)), "{l:?}");
            (l.num("peer").unwrap(), l.num("tag").unwrap())
        })
        .collect();
    sources.sort();
    assert_eq!(sources, [(1, 21), (2, 22), (3, 23)]);
    // Rank 1's wildcard Irecv, completed by a Wait given MPI_STATUS_IGNORE.
    let irecv = of(&d, 1, "MPI_Irecv")
        .into_iter()
        .find(|l| l.num("tag") == Some(30))
        .unwrap();
    assert_eq!(irecv.num("peer"), Some(-2), "posted with MPI_ANY_SOURCE");
    let id = irecv.get("reqs").unwrap();
    let wait = of(&d, 1, "MPI_Wait")
        .into_iter()
        .find(|l| l.get("done").unwrap().starts_with(&format!("1.0#{id}")));
    assert_eq!(
        wait.expect("its Wait").get("done"),
        Some(format!("1.0#{id}@2/30").as_str())
    );
}

/// The smallest JSON reader that checks a Chrome trace.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn parse(text: &str) -> Result<Json, String> {
        let mut p = JsonParser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing data at byte {}", p.i));
        }
        Ok(v)
    }

    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }

    fn num(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Some(Json::Num(n)) => Some(*n),
            _ => None,
        }
    }
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        match self.s.get(self.i).copied() {
            Some(b'{') => {
                self.i += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(fields));
                }
                loop {
                    self.ws();
                    let Json::Str(k) = self.value()? else {
                        return Err(format!("object key at byte {}", self.i));
                    };
                    self.eat(b':')?;
                    fields.push((k, self.value()?));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Obj(fields));
                        }
                        _ => return Err(format!("expected ',' or '}}' at byte {}", self.i)),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(items));
                        }
                        _ => return Err(format!("expected ',' or ']' at byte {}", self.i)),
                    }
                }
            }
            Some(b'"') => {
                self.i += 1;
                let mut out = String::new();
                while let Some(&c) = self.s.get(self.i) {
                    self.i += 1;
                    match c {
                        b'"' => return Ok(Json::Str(out)),
                        b'\\' => {
                            let e = *self.s.get(self.i).ok_or("escape at end")?;
                            self.i += 1;
                            match e {
                                b'u' => {
                                    let hex = std::str::from_utf8(
                                        self.s.get(self.i..self.i + 4).ok_or("short \\u")?,
                                    )
                                    .map_err(|e| e.to_string())?;
                                    let code = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                                    out.push(char::from_u32(code).ok_or("bad \\u")?);
                                    self.i += 4;
                                }
                                b'n' => out.push('\n'),
                                b't' => out.push('\t'),
                                b'"' | b'\\' | b'/' => out.push(e as char),
                                _ => return Err(format!("bad escape at byte {}", self.i)),
                            }
                        }
                        c if c < 0x20 => {
                            return Err(format!("control character in string at byte {}", self.i))
                        }
                        c => out.push(c as char),
                    }
                }
                Err("unterminated string".into())
            }
            Some(b't') if self.s[self.i..].starts_with(b"true") => {
                self.i += 4;
                Ok(Json::Bool(true))
            }
            Some(b'f') if self.s[self.i..].starts_with(b"false") => {
                self.i += 5;
                Ok(Json::Bool(false))
            }
            Some(b'n') if self.s[self.i..].starts_with(b"null") => {
                self.i += 4;
                Ok(Json::Null)
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                text.parse()
                    .map(Json::Num)
                    .map_err(|_| format!("bad number {text} at byte {start}"))
            }
            _ => Err(format!("unexpected input at byte {}", self.i)),
        }
    }
}

#[test]
fn the_json_reader_reads_json() {
    let v = Json::parse(r#" {"a": [1, -2.5e3, true, null, "x\"\u0041"], "b": {}} "#).unwrap();
    assert_eq!(
        v.get("a"),
        Some(&Json::Arr(vec![
            Json::Num(1.0),
            Json::Num(-2500.0),
            Json::Bool(true),
            Json::Null,
            Json::Str("x\"A".into())
        ]))
    );
    assert!(Json::parse("{\"a\": 1,}").is_err());
    assert!(Json::parse("[1 2]").is_err());
}

#[test]
fn chrome_export_is_valid_json_with_an_arrow_per_message() {
    let t = tracecheck();
    let json = t.case.dir().join("run.json");
    let out = pnmpi(&[
        "trace",
        "export",
        "--format",
        "chrome",
        &t.merged.display().to_string(),
        "-o",
        &json.display().to_string(),
    ]);
    assert!(out.contains("8 message arrows"), "{out}");
    let v = Json::parse(&std::fs::read_to_string(&json).unwrap()).expect("valid JSON");
    let Some(Json::Arr(events)) = v.get("traceEvents") else {
        panic!("no traceEvents array")
    };
    let mut slices = Vec::new();
    let mut starts = HashMap::new();
    let mut finishes = HashMap::new();
    let mut names = 0;
    for e in events {
        let ph = e.str("ph").expect("every event has ph");
        assert!(e.num("pid").is_some() && e.num("tid").is_some(), "{e:?}");
        match ph {
            "X" => {
                for key in ["name", "cat"] {
                    assert!(e.str(key).is_some(), "{key} missing in {e:?}");
                }
                assert!(
                    e.num("ts").unwrap() >= 0.0 && e.num("dur").unwrap() >= 0.0,
                    "{e:?}"
                );
                slices.push(e);
            }
            "s" => assert!(
                starts.insert(e.num("id").unwrap() as u64, e).is_none(),
                "duplicate id"
            ),
            "f" => assert!(
                finishes.insert(e.num("id").unwrap() as u64, e).is_none(),
                "duplicate id"
            ),
            "M" => names += 1,
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(names >= 4, "a name per rank");
    // Each send has an arrow: from inside its slice to a slice on the receiver.
    let inside = |flow: &Json, name: Option<&str>| {
        let ts = flow.num("ts").unwrap();
        slices.iter().any(|s| {
            s.num("pid") == flow.num("pid")
                && s.num("tid") == flow.num("tid")
                && name.is_none_or(|n| s.str("name") == Some(n))
                && s.num("ts").unwrap() <= ts
                && ts <= s.num("ts").unwrap() + s.num("dur").unwrap()
        })
    };
    let sends: Vec<&&Json> = slices
        .iter()
        .filter(|s| matches!(s.str("name"), Some("MPI_Send" | "MPI_Isend")))
        .collect();
    assert_eq!(sends.len(), 8);
    assert_eq!((starts.len(), finishes.len()), (8, 8));
    for send in sends {
        let (pid, ts, dur) = (send.num("pid"), send.num("ts").unwrap(), send.num("dur").unwrap());
        let (id, s) = starts
            .iter()
            .find(|(_, s)| s.num("pid") == pid && (ts..=ts + dur).contains(&s.num("ts").unwrap()))
            .unwrap_or_else(|| panic!("no arrow from {send:?}"));
        assert!(inside(s, send.str("name")));
        let f = finishes.get(id).expect("the arrow ends");
        assert_ne!(f.num("pid"), pid);
        assert_eq!(f.str("bp"), Some("e"));
        assert!(inside(f, None), "{f:?} ends inside a slice of the receiver");
    }
}

#[test]
fn simgrid_export_replays_under_smpirun() {
    let t = tracecheck();
    let dir = t.case.dir().join("simgrid");
    let out = pnmpi(&[
        "trace",
        "export",
        "--format",
        "simgrid",
        &t.merged.display().to_string(),
        "-o",
        &dir.display().to_string(),
    ]);
    assert!(out.contains("smpirun -np 4"), "{out}");
    for f in [
        "index.txt",
        "platform.xml",
        "hostfile.txt",
        "rank-00000.txt",
        "rank-00003.txt",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let replay = Command::new("timeout")
        .args([
            "120",
            "smpirun",
            "-np",
            "4",
            "-platform",
            "platform.xml",
            "-hostfile",
            "hostfile.txt",
            "-replay",
            "index.txt",
        ])
        .current_dir(&dir)
        .output()
        .expect("timeout runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&replay.stderr)
    );
    assert_ne!(
        replay.status.code(),
        Some(127),
        "smpirun not found: install libsimgrid-dev (scripts/deps.sh does)\n{text}"
    );
    assert!(replay.status.success(), "smpirun -replay failed:\n{text}");
    // SimGrid exits 0 even when the replay deadlocks: check it completed.
    assert!(!text.contains("Deadlock"), "{text}");
    assert!(
        text.contains("Simulation time"),
        "the replay did not finish:\n{text}"
    );
}

#[test]
fn a_truncated_or_corrupt_rank_file_is_reported_with_its_offset() {
    let t = tracecheck();
    let copy = t.case.dir().join("damaged");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(&t.dir).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
    }
    let victim = copy.join("rank-00002.pnr");
    let data = std::fs::read(&victim).unwrap();
    // Cut inside the last chunk: the merge warns and keeps what is whole.
    std::fs::write(&victim, &data[..data.len() - 3]).unwrap();
    let out = pnmpi_output(&[
        "trace",
        "merge",
        &copy.display().to_string(),
        "-o",
        &copy.join("t.pnt").display().to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("rank-00002.pnr: byte ") && stderr.contains("truncated"),
        "{stderr}"
    );
    // A flipped byte in the middle is an error naming file and offset.
    let mut bad = data.clone();
    let middle = data.len() / 2;
    bad[middle] ^= 0x55;
    std::fs::write(&victim, &bad).unwrap();
    let out = pnmpi_output(&["trace", "stats", &copy.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("rank-00002.pnr: byte "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A merged trace cut short: dump warns, prints what is whole.
    let merged = std::fs::read(&t.merged).unwrap();
    let cut = copy.join("cut.pnt");
    std::fs::write(&cut, &merged[..merged.len() - 5]).unwrap();
    let out = pnmpi_output(&["trace", "dump", &cut.display().to_string()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
    // Not a trace at all.
    let out = pnmpi_output(&[
        "trace",
        "stats",
        &t.case.dir().join(".pnmpi-conf").display().to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".pnmpi-conf: not a merged trace (.pnt), a tracer folder or an OTF2 archive"),
        "{stderr}"
    );
}

#[test]
fn threads_get_their_own_streams() {
    let t = trace_run("threads", 2, &[]);
    let d = dump(&t.merged);
    for rank in 0..2u32 {
        let workers: Vec<u32> = {
            let mut th: Vec<u32> = d
                .lines
                .iter()
                .filter(|l| l.rank == rank && l.thread > 0)
                .map(|l| l.thread)
                .collect();
            th.sort();
            th.dedup();
            th
        };
        assert_eq!(workers, [1, 2, 3, 4], "rank {rank}: a stream per worker thread");
        let p2p = if rank == 0 { "MPI_Send" } else { "MPI_Recv" };
        for th in workers {
            let calls = |name: &str| {
                d.lines
                    .iter()
                    .filter(|l| l.rank == rank && l.thread == th && l.routine == name)
                    .count()
            };
            assert_eq!(
                (calls("MPI_Comm_rank"), calls(p2p)),
                (2000, 2000),
                "rank {rank} thread {th}"
            );
        }
    }
}

#[test]
fn a_freed_datatype_s_handle_reused_for_another_type_gets_its_own_size() {
    // The tracer keeps each thread's last datatype size; `MPI_Type_free`
    // must make it measure again, as the MPI may hand the freed handle to
    // the next type.
    let t = trace_run("typesize", 2, &[]);
    assert!(t.stdout.contains("typesize: reused"), "{}", t.stdout);
    let d = dump(&t.merged);
    let bytes = |rank: u32, routine: &str| -> Vec<(Option<i64>, Option<i64>)> {
        of(&d, rank, routine)
            .iter()
            .map(|l| (l.num("tag"), l.num("bytes")))
            .collect()
    };
    let want = [(Some(1), Some(12)), (Some(2), Some(20))];
    assert_eq!(bytes(0, "MPI_Send"), want, "{}", t.stdout);
    assert_eq!(bytes(1, "MPI_Recv"), want, "{}", t.stdout);
}

#[test]
fn the_stencil_trace_is_compact() {
    let t = trace_run("stencil", 4, &["32", "300", "10"]);
    assert!(t.stdout.contains("stencil: ranks 4"), "{}", t.stdout);
    let stats = pnmpi(&["trace", "stats", &t.merged.display().to_string()]);
    let per_event: f64 = stats
        .split("bytes/event ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no bytes/event in {stats}"));
    // 4 ranks x 300 iterations x (4 Irecv + 4 Isend + Waitall) and 30 Allreduce.
    assert!(stats.contains("MPI_Isend") && stats.contains("4800"), "{stats}");
    assert!(per_event <= 8.0, "{per_event} bytes per event\n{stats}");
    // The tracer reserves disk space ahead of its writes (8 MiB at a time
    // on a disk file system); the finished rank files keep none of it.
    for entry in std::fs::read_dir(&t.dir).expect("the trace folder") {
        let meta = entry.expect("an entry").metadata().expect("its metadata");
        let on_disk = meta.blocks() * 512;
        assert!(
            on_disk <= meta.len() + 64 * 1024,
            "{}: {on_disk} bytes on disk for {} written",
            t.dir.display(),
            meta.len()
        );
    }
}

#[test]
fn v_collectives_record_the_bytes_of_each_peer() {
    let t = trace_run("vcoll", 4, &["4", "2000"]);
    let d = dump(&t.merged);
    // Each rank prints what it sent to and received from each peer over
    // the run, per routine; the trace's per-peer bytes add up to it.
    let mut checked = 0;
    for l in t.stdout.lines().filter(|l| l.starts_with("vcoll ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (rank, routine, side) = (w[1].parse::<u32>().unwrap(), w[2], w[3]);
        let want: Vec<i64> = w[4].split(',').map(|x| x.parse().unwrap()).collect();
        let mut got = vec![0i64; want.len()];
        let calls = of(&d, rank, routine);
        assert_eq!(calls.len(), 4, "{routine} of rank {rank}");
        for e in calls {
            let v = e
                .get(side)
                .unwrap_or_else(|| panic!("{routine} of rank {rank} without {side}: {e:?}"));
            for (g, x) in got.iter_mut().zip(v.split(',')) {
                *g += x.parse::<i64>().unwrap();
            }
        }
        assert_eq!(got, want, "{l}");
        checked += 1;
    }
    // Per rank: Alltoallv and Ialltoallv both sides, Allgatherv and
    // Reduce_scatter received; the Gatherv root received, the Scatterv
    // root sent.
    assert_eq!(checked, 4 * 6 + 2, "{}", t.stdout);
    // Delta-encoded vectors keep the rank files small.
    let bytes: u64 = std::fs::read_dir(&t.dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes < 64 << 10, "{bytes} bytes of rank files");
}

/// The `site=` of the dump lines of `trace` whose routine is `routine`
/// and that contain `with`, in order.
fn sites_of(dump: &str, routine: &str, with: &str) -> Vec<String> {
    dump.lines()
        .filter(|l| l.split_whitespace().nth(3) == Some(routine) && l.contains(with))
        .map(|l| {
            l.split_whitespace()
                .find_map(|f| f.strip_prefix("site="))
                .unwrap_or("none")
                .to_string()
        })
        .collect()
}

#[test]
fn call_sites_name_the_program_lines_that_called() {
    // waits.c's main program: rank 0 sends (SITE_SEND), rank 1 receives
    // (SITE_RECV); each rank's ready message is sent and received in
    // late_by, and every call has its line.
    let (case, trace) = traced("waits", 2, &["sender", "0.1"]);
    let dump = succeeded(pnmpi_cli(
        &["trace", "dump", &trace.display().to_string()],
        case.dir(),
    ));
    let src = repo().join("c-tests/programs/waits.c").display().to_string();
    let at = |tag: &str| format!("{src}:{}", marked_line("c-tests/programs/waits.c", tag));
    assert_eq!(
        sites_of(&dump, "MPI_Send", "tag=7"),
        [at("// SITE_SEND")],
        "{dump}"
    );
    assert_eq!(
        sites_of(&dump, "MPI_Recv", "tag=7"),
        [at("// SITE_RECV")],
        "{dump}"
    );
    let every: Vec<&str> = dump.lines().filter(|l| l.contains(" MPI_")).collect();
    assert!(
        every.iter().all(|l| l.contains(&format!(" site={src}:"))),
        "{dump}"
    );
    // The merged trace carries the same sites.
    let pnt = case.dir().join("t.pnt");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "merge",
            &trace.display().to_string(),
            "-o",
            &pnt.display().to_string(),
        ],
        case.dir(),
    ));
    let merged = succeeded(pnmpi_cli(
        &["trace", "dump", &pnt.display().to_string()],
        case.dir(),
    ));
    assert_eq!(merged, dump);
    // The OTF2 export attaches them to the calls' Enter records.
    let otf2 = case.dir().join("t-otf2");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "export",
            "--format",
            "otf2",
            &pnt.display().to_string(),
            "-o",
            &otf2.display().to_string(),
        ],
        case.dir(),
    ));
    let out = Command::new("otf2-print")
        .arg("-A")
        .arg(otf2.join("traces.otf2"))
        .output()
        .expect("otf2-print runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let send = format!("SOURCE_CODE_LOCATION; \"{}\"", at("// SITE_SEND"));
    assert!(out.status.success() && text.contains(&send), "{send}:\n{text}");
    // `argument sites off`: no sites.
    let mut off = Case::new();
    off.conf(&format!(
        "module {}\nargument sites off\n",
        target_dir().join("libtracer.so").display()
    ));
    let trace = off.dir().join("trace");
    off.env("PNMPI_TRACE_DIR", &trace.display().to_string());
    off.mpirun(2, &program("waits", Link::Pnmpi), &["sender", "0.1"])
        .assert_ok();
    let dump = succeeded(pnmpi_cli(
        &["trace", "dump", &trace.display().to_string()],
        off.dir(),
    ));
    assert!(dump.contains("MPI_Send") && !dump.contains("site="), "{dump}");
}
