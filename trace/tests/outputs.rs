//! What `pnmpi trace stats`, `dump` and both exports write, on folders
//! and on their merged traces, checked against the CRCs of what the
//! in-memory code (the whole trace decoded first) wrote on the same
//! inputs before the commands streamed: the streamed outputs are the
//! same bytes. The inputs cover communicators created along the way,
//! wildcard receives, a rank of two threads completing each other's
//! requests, a dead rank's truncated `.part` file and a missing rank, and
//! a merged trace cut inside its last chunk.

use crate::common;
use common::*;
use pnmpi_trace::folder::{save_merged, FolderReader};
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::{chrome, dump, simgrid, stats};
use std::path::Path;

/// Each output of `input` (a folder or a `.pnt`), named, as (CRC-32,
/// length).
fn outputs(input: &Path) -> Vec<(String, u32, usize)> {
    let open = || -> Box<dyn StreamedTrace> {
        if input.is_dir() {
            Box::new(FolderReader::open(input).unwrap())
        } else {
            Box::new(MergedReader::open(input).unwrap())
        }
    };
    let size = (!input.is_dir()).then(|| std::fs::metadata(input).unwrap().len());
    let mut out = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| out.push((name.to_owned(), crc32fast::hash(bytes), bytes.len()));
    put(
        "stats",
        stats::stats(&mut *open(), size, &|_| {})
            .unwrap()
            .to_string()
            .as_bytes(),
    );
    for only in [None, Some(1), Some(3)] {
        let mut text = Vec::new();
        dump::dump(&mut *open(), only, &mut text, "text", &|_| {}).unwrap();
        put(&format!("dump {only:?}"), &text);
    }
    let mut json = Vec::new();
    let sum = chrome::write(&mut *open(), &mut json, "json", &|_| {}).unwrap();
    put("chrome", &json);
    put("chrome summary", format!("{sum:?}").as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let mut src = open();
    let x = simgrid::export(&mut *src, dir.path(), &|_| {}).unwrap();
    put(
        "simgrid summary",
        format!(
            "{} {:?} {}",
            x.actions,
            x.approximated,
            x.command(src.world_size())
        )
        .as_bytes(),
    );
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        put(&format!("simgrid {name}"), &std::fs::read(&f).unwrap());
    }
    out
}

/// The inputs: (name, folder or file), in a temporary folder.
fn inputs(root: &Path) -> Vec<(String, std::path::PathBuf)> {
    let mut out = Vec::new();
    let mut folder = |name: &str, fill: &dyn Fn(&Path)| {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        fill(&dir);
        let pnt = root.join(format!("{name}.pnt"));
        save_merged(&dir, &pnt, &|_| {}).unwrap();
        out.push((name.to_owned(), dir));
        out.push((format!("{name}.pnt"), pnt));
    };
    folder("three", &|d| write_folder(d, &three_ranks()));
    folder("busy", &|d| write_folder(d, &busy_run()));
    folder("unfinished", &|d| unfinished_folder(d, Some(2)));
    let data = std::fs::read(root.join("busy.pnt")).unwrap();
    let cut = root.join("busy-cut.pnt");
    std::fs::write(&cut, &data[..data.len() - 1000]).unwrap();
    out.push(("busy-cut.pnt".to_owned(), cut));
    out
}

/// What the in-memory code wrote: (input, output, CRC-32, length).
const GOLDEN: &[(&str, &str, u32, usize)] = &[
    ("three", "stats", 0x2c5da8bc, 1284),
    ("three", "dump None", 0xe078fd07, 869),
    ("three", "dump Some(1)", 0x9175644d, 266),
    ("three", "dump Some(3)", 0x2edb15af, 117),
    ("three", "chrome", 0x1b39d61e, 4602),
    ("three", "chrome summary", 0xe9cbdae4, 38),
    ("three", "simgrid summary", 0x2be607c2, 261),
    ("three", "simgrid README.txt", 0xafd52b83, 651),
    ("three", "simgrid hostfile.txt", 0x80cc7afb, 21),
    ("three", "simgrid index.txt", 0xaee9dbf3, 45),
    ("three", "simgrid machine.toml", 0x9824cb40, 662),
    ("three", "simgrid platform.xml", 0x0fe040bf, 1499),
    ("three", "simgrid rank-00000.txt", 0x7b1a38d2, 217),
    ("three", "simgrid rank-00001.txt", 0xc8299dda, 62),
    ("three", "simgrid rank-00002.txt", 0xaaaaa2ba, 146),
    ("three.pnt", "stats", 0x115f1edc, 1367),
    ("three.pnt", "dump None", 0xe078fd07, 869),
    ("three.pnt", "dump Some(1)", 0x9175644d, 266),
    ("three.pnt", "dump Some(3)", 0x2edb15af, 117),
    ("three.pnt", "chrome", 0x1b39d61e, 4602),
    ("three.pnt", "chrome summary", 0xe9cbdae4, 38),
    ("three.pnt", "simgrid summary", 0x2be607c2, 261),
    ("three.pnt", "simgrid README.txt", 0xafd52b83, 651),
    ("three.pnt", "simgrid hostfile.txt", 0x80cc7afb, 21),
    ("three.pnt", "simgrid index.txt", 0xaee9dbf3, 45),
    ("three.pnt", "simgrid machine.toml", 0x9824cb40, 662),
    ("three.pnt", "simgrid platform.xml", 0x0fe040bf, 1499),
    ("three.pnt", "simgrid rank-00000.txt", 0x7b1a38d2, 217),
    ("three.pnt", "simgrid rank-00001.txt", 0xc8299dda, 62),
    ("three.pnt", "simgrid rank-00002.txt", 0xaaaaa2ba, 146),
    ("busy", "stats", 0xf8d2dd48, 1452),
    ("busy", "dump None", 0xaecb1570, 9675316),
    ("busy", "dump Some(1)", 0x381dc300, 2344955),
    ("busy", "dump Some(3)", 0xc3094666, 2775010),
    ("busy", "chrome", 0xcd28d45d, 41864147),
    ("busy", "chrome summary", 0xd84014ad, 46),
    ("busy", "simgrid summary", 0x5228ffd9, 288),
    ("busy", "simgrid README.txt", 0x0304788a, 651),
    ("busy", "simgrid hostfile.txt", 0xf65a290d, 28),
    ("busy", "simgrid index.txt", 0x00611c8a, 60),
    ("busy", "simgrid machine.toml", 0xfdef23b7, 662),
    ("busy", "simgrid platform.xml", 0x75414bde, 1825),
    ("busy", "simgrid rank-00000.txt", 0x94853bb7, 1121849),
    ("busy", "simgrid rank-00001.txt", 0x52f68d3f, 1029855),
    ("busy", "simgrid rank-00002.txt", 0x025f2f0c, 1037470),
    ("busy", "simgrid rank-00003.txt", 0x481406cf, 1216678),
    ("busy.pnt", "stats", 0x6db58b87, 1542),
    ("busy.pnt", "dump None", 0xaecb1570, 9675316),
    ("busy.pnt", "dump Some(1)", 0x381dc300, 2344955),
    ("busy.pnt", "dump Some(3)", 0xc3094666, 2775010),
    ("busy.pnt", "chrome", 0xcd28d45d, 41864147),
    ("busy.pnt", "chrome summary", 0xd84014ad, 46),
    ("busy.pnt", "simgrid summary", 0x5228ffd9, 288),
    ("busy.pnt", "simgrid README.txt", 0x0304788a, 651),
    ("busy.pnt", "simgrid hostfile.txt", 0xf65a290d, 28),
    ("busy.pnt", "simgrid index.txt", 0x00611c8a, 60),
    ("busy.pnt", "simgrid machine.toml", 0xfdef23b7, 662),
    ("busy.pnt", "simgrid platform.xml", 0x75414bde, 1825),
    ("busy.pnt", "simgrid rank-00000.txt", 0x94853bb7, 1121849),
    ("busy.pnt", "simgrid rank-00001.txt", 0x52f68d3f, 1029855),
    ("busy.pnt", "simgrid rank-00002.txt", 0x025f2f0c, 1037470),
    ("busy.pnt", "simgrid rank-00003.txt", 0x481406cf, 1216678),
    ("unfinished", "stats", 0x0d05ba8f, 1194),
    ("unfinished", "dump None", 0xce052ce1, 630),
    ("unfinished", "dump Some(1)", 0x15254ea9, 266),
    ("unfinished", "dump Some(3)", 0x7c7a9e4a, 117),
    ("unfinished", "chrome", 0x8209decc, 3057),
    ("unfinished", "chrome summary", 0xaad63679, 38),
    ("unfinished", "simgrid summary", 0xec657b36, 261),
    ("unfinished", "simgrid README.txt", 0xafd52b83, 651),
    ("unfinished", "simgrid hostfile.txt", 0x80cc7afb, 21),
    ("unfinished", "simgrid index.txt", 0xaee9dbf3, 45),
    ("unfinished", "simgrid machine.toml", 0x9824cb40, 662),
    ("unfinished", "simgrid platform.xml", 0x0fe040bf, 1499),
    ("unfinished", "simgrid rank-00000.txt", 0x7b1a38d2, 217),
    ("unfinished", "simgrid rank-00001.txt", 0xc8299dda, 62),
    ("unfinished", "simgrid rank-00002.txt", 0xba7dc282, 18),
    ("unfinished.pnt", "stats", 0x14433d43, 1277),
    ("unfinished.pnt", "dump None", 0xce052ce1, 630),
    ("unfinished.pnt", "dump Some(1)", 0x15254ea9, 266),
    ("unfinished.pnt", "dump Some(3)", 0x7c7a9e4a, 117),
    ("unfinished.pnt", "chrome", 0x8209decc, 3057),
    ("unfinished.pnt", "chrome summary", 0xaad63679, 38),
    ("unfinished.pnt", "simgrid summary", 0xec657b36, 261),
    ("unfinished.pnt", "simgrid README.txt", 0xafd52b83, 651),
    ("unfinished.pnt", "simgrid hostfile.txt", 0x80cc7afb, 21),
    ("unfinished.pnt", "simgrid index.txt", 0xaee9dbf3, 45),
    ("unfinished.pnt", "simgrid machine.toml", 0x9824cb40, 662),
    ("unfinished.pnt", "simgrid platform.xml", 0x0fe040bf, 1499),
    ("unfinished.pnt", "simgrid rank-00000.txt", 0x7b1a38d2, 217),
    ("unfinished.pnt", "simgrid rank-00001.txt", 0xc8299dda, 62),
    ("unfinished.pnt", "simgrid rank-00002.txt", 0xba7dc282, 18),
    ("busy-cut.pnt", "stats", 0x69e3ac0b, 1542),
    ("busy-cut.pnt", "dump None", 0x5da3ef74, 9197611),
    ("busy-cut.pnt", "dump Some(1)", 0x4a57f863, 2344955),
    ("busy-cut.pnt", "dump Some(3)", 0x7755dac1, 2297305),
    ("busy-cut.pnt", "chrome", 0x14b2c926, 39283930),
    ("busy-cut.pnt", "chrome summary", 0xa6ae8bb7, 46),
    ("busy-cut.pnt", "simgrid summary", 0x8bd09886, 288),
    ("busy-cut.pnt", "simgrid README.txt", 0x0304788a, 651),
    ("busy-cut.pnt", "simgrid hostfile.txt", 0xf65a290d, 28),
    ("busy-cut.pnt", "simgrid index.txt", 0x00611c8a, 60),
    ("busy-cut.pnt", "simgrid machine.toml", 0xfdef23b7, 662),
    ("busy-cut.pnt", "simgrid platform.xml", 0x75414bde, 1825),
    ("busy-cut.pnt", "simgrid rank-00000.txt", 0x94853bb7, 1121849),
    ("busy-cut.pnt", "simgrid rank-00001.txt", 0x52f68d3f, 1029855),
    ("busy-cut.pnt", "simgrid rank-00002.txt", 0x025f2f0c, 1037470),
    ("busy-cut.pnt", "simgrid rank-00003.txt", 0x4b9d82ca, 1143183),
];

#[test]
fn streamed_outputs_are_the_in_memory_bytes() {
    let root = tempfile::tempdir().unwrap();
    let mut got = Vec::new();
    for (name, path) in inputs(root.path()) {
        for (output, crc, len) in outputs(&path) {
            got.push((name.clone(), output, crc, len));
        }
    }
    let want: Vec<(String, String, u32, usize)> = GOLDEN
        .iter()
        .map(|&(a, b, c, d)| (a.to_owned(), b.to_owned(), c, d))
        .collect();
    assert_eq!(got, want);
}
