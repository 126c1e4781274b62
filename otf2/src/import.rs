//! Reading OTF2: an archive (Score-P's or anyone's) as a pnmpi
//! [`StreamedTrace`], so that every command reads it as it reads a `.pnt`:
//! `pnmpi sim replay`, `trace stats`, `dump` and the exports.
//!
//! Each CPU thread of an MPI rank is a stream; each outermost MPI region
//! (`Enter` ... `Leave`) is one call, and the MPI records inside it give
//! its fields. Time outside MPI regions (non-MPI regions included) is the
//! CPU burst. A nonblocking receive's source, tag and size come from its
//! completion (`MpiIrecv`), later in the stream: the call is held back
//! until then (a bounded look-ahead). Records replay cannot use are
//! counted and reported in [`StreamedTrace::warnings`].

use crate::assembler::{Assembler, CommMap, Shared};
use crate::defs::Defs;
use crate::reader::Reader;
use pnmpi_trace::fields::{COMM_SELF, COMM_WORLD, FIRST_TABLE_COMM};
use pnmpi_trace::rma::{RmaRole, Win};
use pnmpi_trace::routine::classify;
use pnmpi_trace::source::{count_by_reading, StreamedTrace};
use pnmpi_trace::trace::{Comm, Event};
use pnmpi_trace::{Error, Result};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::ffi;

/// Records read per call into libotf2.
const BATCH: u64 = 256;
/// An OTF2 archive read as a pnmpi trace, stream by stream.
pub struct Otf2Trace {
    reader: Reader,
    world_size: u32,
    routines: Vec<String>,
    comms: Vec<Comm>,
    wins: Vec<Win>,
    streams: Vec<(u32, u32)>,
    assemblers: Vec<Assembler>,
    /// Records in the archive's locations (from their definitions).
    records: u64,
    /// Definition-level warnings.
    notes: Vec<String>,
}

/// The anchor file of `path`: itself, or `path/traces.otf2` for a folder.
pub fn anchor(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(format!("{}.otf2", crate::export::ARCHIVE))
    } else {
        path.to_path_buf()
    }
}

/// Whether `path` is an OTF2 anchor file (or a folder holding `traces.otf2`).
pub fn is_otf2(path: &Path) -> bool {
    let a = anchor(path);
    a.extension().is_some_and(|e| e == "otf2") && a.is_file()
}

impl Otf2Trace {
    /// Opens the archive at `path` (its `.otf2` anchor file, or the folder
    /// holding `traces.otf2`) and reads its definitions.
    pub fn open(path: &Path) -> Result<Otf2Trace> {
        let anchor = anchor(path);
        let name = anchor.display().to_string();
        let (mut reader, defs) = Reader::open(&anchor)?;
        let mut notes = Vec::new();
        // Ranks: the MPI locations group lists each rank's location.
        let mpi_locations = defs
            .groups
            .values()
            .filter(|g| g.ty == ffi::OTF2_GROUP_TYPE_COMM_LOCATIONS as ffi::OTF2_GroupType)
            .find(|g| g.paradigm == ffi::OTF2_PARADIGM_MPI as ffi::OTF2_Paradigm)
            .map(|g| g.members.clone());
        let loc_group: FxHashMap<u64, u32> = defs.locations.iter().map(|l| (l.id, l.group)).collect();
        let mut rank_of_group: FxHashMap<u32, u32> = FxHashMap::default();
        let mut main: FxHashMap<u32, u64> = FxHashMap::default();
        match &mpi_locations {
            Some(members) => {
                for (rank, loc) in members.iter().enumerate() {
                    if let Some(&g) = loc_group.get(loc) {
                        rank_of_group.insert(g, rank as u32);
                        main.insert(g, *loc);
                    }
                }
            }
            None => {
                let mut processes: Vec<u32> = defs
                    .location_groups
                    .iter()
                    .filter(|(_, ty)| {
                        *ty == ffi::OTF2_LOCATION_GROUP_TYPE_PROCESS as ffi::OTF2_LocationGroupType
                    })
                    .map(|(id, _)| *id)
                    .collect();
                processes.sort_unstable();
                for (rank, g) in processes.into_iter().enumerate() {
                    rank_of_group.insert(g, rank as u32);
                }
            }
        }
        let world_size = mpi_locations.as_ref().map_or(rank_of_group.len(), Vec::len) as u32;
        // Streams: the CPU threads of ranks, the rank's MPI location first.
        let mut by_rank: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        let (mut others, mut other_records) = (0u64, 0u64);
        let mut records = 0;
        for l in &defs.locations {
            let rank = rank_of_group.get(&l.group).copied();
            match rank {
                Some(r) if l.ty == ffi::OTF2_LOCATION_TYPE_CPU_THREAD as ffi::OTF2_LocationType => {
                    by_rank.entry(r).or_default().push(l.id);
                    records += l.events;
                }
                _ => {
                    others += 1;
                    other_records += l.events;
                }
            }
        }
        if others > 0 {
            notes.push(format!(
                "{others} locations that are not CPU threads of MPI ranks (GPU streams, metric locations ...), \
                 {other_records} records: not replayed"
            ));
        }
        let mut streams = Vec::new();
        let mut locations = Vec::new();
        for (rank, mut locs) in by_rank {
            let first = rank_group_main(&rank_of_group, &main, rank);
            locs.sort_by_key(|&l| (Some(l) != first, l));
            for (thread, l) in locs.into_iter().enumerate() {
                streams.push((rank, thread as u32));
                locations.push(l);
            }
        }
        // Routines: the MPI regions.
        let mut region_ids: Vec<u32> = defs.regions.keys().copied().collect();
        region_ids.sort_unstable();
        let mut routines: Vec<String> = Vec::new();
        let mut index: FxHashMap<String, u32> = FxHashMap::default();
        let mut region_routine = FxHashMap::default();
        for id in region_ids {
            let r = &defs.regions[&id];
            let n = defs.string(r.name);
            if r.paradigm != ffi::OTF2_PARADIGM_MPI as ffi::OTF2_Paradigm && !n.starts_with("MPI_") {
                continue;
            }
            let next = routines.len() as u32;
            let i = *index.entry(n.to_owned()).or_insert_with(|| {
                routines.push(n.to_owned());
                next
            });
            region_routine.insert(id, i);
        }
        let (comm_map, comms) = communicators(&defs, world_size, &mut notes);
        let (wins, win_map) = crate::rma_import::windows(&defs, &comm_map, world_size);
        let shared = Rc::new(Shared {
            resolution: defs.resolution,
            offset: defs.offset,
            routines: region_routine,
            kinds: routines.iter().map(|n| classify(n)).collect(),
            comms: comm_map,
            parents: defs.comms.iter().map(|c| (c.id, c.parent)).collect(),
            rma: routines.iter().map(|n| RmaRole::of(n)).collect(),
            request_forms: routines
                .iter()
                .map(|n| matches!(RmaRole::of(n), Some(RmaRole::Data(_))) && n.starts_with("MPI_R"))
                .collect(),
            wins: win_map,
            win_comms: wins.iter().map(|w| w.comm).collect(),
            groups: crate::rma_import::rank_groups(&defs),
        });
        if streams.is_empty() {
            return Err(Error::Invalid(format!(
                "{name}: the archive has no CPU thread of an MPI rank"
            )));
        }
        reader.open_events(&locations)?;
        let assemblers = streams
            .iter()
            .enumerate()
            .map(|(i, &(rank, _))| Assembler::new(shared.clone(), i as u32, rank))
            .collect();
        Ok(Otf2Trace {
            reader,
            world_size,
            routines,
            comms,
            wins,
            streams,
            assemblers,
            records,
            notes,
        })
    }

    /// Records in the archive's replayed locations (an estimate of the
    /// work, for progress bars: each call takes two or more).
    pub fn records(&self) -> u64 {
        self.records
    }
}

/// The MPI location of a rank's process, if the archive names it.
fn rank_group_main(
    rank_of_group: &FxHashMap<u32, u32>,
    main: &FxHashMap<u32, u64>,
    rank: u32,
) -> Option<u64> {
    rank_of_group
        .iter()
        .find(|(_, &r)| r == rank)
        .and_then(|(g, _)| main.get(g).copied())
}

/// The communicators: OTF2 reference to pnmpi id and members, and the
/// pnmpi table (ids from 2). The first communicator whose group is every
/// rank in order is `MPI_COMM_WORLD` (or the one of that name).
fn communicators(defs: &Defs, world_size: u32, notes: &mut Vec<String>) -> (CommMap, Vec<Comm>) {
    let mut map = FxHashMap::default();
    let mut table = Vec::new();
    let all: Vec<u64> = (0..u64::from(world_size)).collect();
    let mut comms = defs.comms.clone();
    // The world first, wherever it is defined.
    comms.sort_by_key(|c| (defs.string(c.name) != "MPI_COMM_WORLD", c.id));
    let mut world = false;
    for c in comms {
        let Some(g) = defs.groups.get(&c.group) else {
            notes.push(format!(
                "communicator {} has no group definition: its records are not replayed",
                c.id
            ));
            continue;
        };
        if g.ty == ffi::OTF2_GROUP_TYPE_COMM_SELF as ffi::OTF2_GroupType {
            map.insert(c.id, (COMM_SELF, None));
        } else if !world && g.members == all {
            world = true;
            map.insert(c.id, (COMM_WORLD, None));
        } else {
            let members: Vec<i64> = g.members.iter().map(|&m| m as i64).collect();
            map.insert(
                c.id,
                (FIRST_TABLE_COMM + table.len() as i64, Some(members.clone())),
            );
            table.push(Comm {
                members,
                remote: None,
            });
        }
    }
    if defs.intercomms > 0 {
        notes.push(format!(
            "{} intercommunicators: their records are not replayed",
            defs.intercomms
        ));
    }
    (map, table)
}

impl StreamedTrace for Otf2Trace {
    fn world_size(&self) -> u32 {
        self.world_size
    }

    fn mpi(&self) -> &str {
        "otf2"
    }

    fn routines(&self) -> &[String] {
        &self.routines
    }

    fn comms(&self) -> &[Comm] {
        &self.comms
    }

    fn stream_list(&self) -> Vec<(u32, u32)> {
        self.streams.clone()
    }

    fn wins(&self) -> &[Win] {
        &self.wins
    }

    fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        let a = &mut self.assemblers[i];
        loop {
            if a.ready() {
                a.pop(ev);
                return Ok(true);
            }
            if a.ended {
                return Ok(false);
            }
            // A short read is the end: libotf2 fails a read past it.
            if self.reader.read(i, a, BATCH)? < BATCH {
                a.ended = true;
            }
        }
    }

    fn restart(&mut self, i: usize) -> Result<()> {
        self.reader.restart(i)?;
        self.assemblers[i].reset();
        Ok(())
    }

    fn count_events(&mut self, progress: &dyn Fn(u64)) -> Result<u64> {
        count_by_reading(self, progress)
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.notes.clone();
        let mut unusable: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
        let mut lost: BTreeMap<&str, u64> = BTreeMap::new();
        for a in &self.assemblers {
            for (&(record, category), &n) in &a.unusable {
                *unusable.entry(category).or_default().entry(record).or_insert(0) += n;
            }
            for (&why, &n) in &a.lost {
                *lost.entry(why).or_insert(0) += n;
            }
        }
        for (category, records) in unusable {
            let total: u64 = records.values().sum();
            let list: Vec<String> = records.iter().map(|(r, n)| format!("{r} {n}")).collect();
            w.push(format!(
                "{total} {category} records not replayed ({})",
                list.join(", ")
            ));
        }
        for (why, n) in lost {
            w.push(format!("{n} {why}: not replayed"));
        }
        w
    }
}
