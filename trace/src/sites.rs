//! Call sites (format version 4): where in the application each MPI call
//! was made, as the tracer found it (the call's return address into the
//! application) and named it (function, file and line from the object's
//! debug information).
//!
//! An event carries a small site id; the sites themselves are defined
//! once, in `SITES` chunks: a rank file's ids are the rank's own (the
//! tracer interns each return address once per rank), a merged trace's
//! are the run's, one per distinct site of any rank ([`SiteTable`]), so
//! that the same line of the program has the same id on every rank.

use crate::error::Malformed;
use crate::varint::{self, Cursor};
use std::collections::HashMap;

/// Chunk type of a rank file: site definitions (rank-local ids).
pub const CHUNK_SITES: u8 = 4;
/// Chunk type of a merged trace: the run's site table (id = position).
pub const CHUNK_MERGED_SITES: u8 = 19;

/// Where a call was made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Site {
    /// The calling function, if the object names it.
    pub function: Option<String>,
    /// The source file, if the object has debug information.
    pub file: Option<String>,
    /// The source line, likewise.
    pub line: Option<u32>,
    /// The object's path (the program's for the main executable).
    pub object: String,
    /// The return address's offset in the object.
    pub offset: u64,
}

impl Site {
    /// `file:line` where the trace has it, else `object+0xoffset`: what
    /// `--what-if "compute site ..."` and the reports name a site by.
    pub fn place(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            _ => format!("{}+{:#x}", self.object, self.offset),
        }
    }

    /// Whether `spec` names this site: its `file:line`, or a `file:line`
    /// whose file is a trailing part of the site's path (`cg.f:512`
    /// names `/src/nas/cg.f:512`), or its `object+0xoffset`.
    pub fn matches(&self, spec: &str) -> bool {
        let place = self.place();
        place == spec || (place.ends_with(spec) && place[..place.len() - spec.len()].ends_with('/'))
    }

    fn encode(&self, out: &mut Vec<u8>) {
        varint::push_str(out, &self.object);
        varint::push(out, self.offset);
        varint::push_str(out, self.function.as_deref().unwrap_or(""));
        varint::push_str(out, self.file.as_deref().unwrap_or(""));
        varint::push(out, self.line.map_or(0, u64::from));
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Site, Malformed> {
        let object = c.string()?;
        let offset = c.u64()?;
        let some = |s: String| (!s.is_empty()).then_some(s);
        let function = some(c.string()?);
        let file = some(c.string()?);
        let line = match c.u32()? {
            0 => None,
            l => Some(l),
        };
        Ok(Site {
            function,
            file,
            line,
            object,
            offset,
        })
    }
}

impl std::fmt::Display for Site {
    /// [`Site::place`], then the function in parentheses.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.place())?;
        if let Some(function) = &self.function {
            write!(f, " ({function})")?;
        }
        Ok(())
    }
}

/// The payload of a rank file's `SITES` chunk: varint n, then n times
/// varint id and the site.
pub fn rank_sites_payload(sites: &[(u32, Site)]) -> Vec<u8> {
    let mut out = Vec::new();
    varint::push(&mut out, sites.len() as u64);
    for (id, site) in sites {
        varint::push(&mut out, u64::from(*id));
        site.encode(&mut out);
    }
    out
}

/// Decodes a rank file's `SITES` chunk into `out`.
pub(crate) fn parse_rank_sites(c: &mut Cursor<'_>, out: &mut Vec<(u32, Site)>) -> Result<(), Malformed> {
    let n = c.count(6)?;
    for _ in 0..n {
        let id = c.u32()?;
        out.push((id, Site::decode(c)?));
    }
    Ok(())
}

/// The payload of a merged trace's `SITES` chunk: varint n, then the n
/// sites, ids 0 to n - 1.
pub fn merged_sites_payload(sites: &[Site]) -> Vec<u8> {
    let mut out = Vec::new();
    varint::push(&mut out, sites.len() as u64);
    for site in sites {
        site.encode(&mut out);
    }
    out
}

/// Decodes a merged trace's `SITES` chunk, appending to `out`.
pub(crate) fn parse_merged_sites(c: &mut Cursor<'_>, out: &mut Vec<Site>) -> Result<(), Malformed> {
    let n = c.count(5)?;
    for _ in 0..n {
        out.push(Site::decode(c)?);
    }
    Ok(())
}

/// The run's sites: each distinct site once, ids in order of first sight.
#[derive(Clone, Debug, Default)]
pub struct SiteTable {
    /// The sites, by id.
    pub sites: Vec<Site>,
    ids: HashMap<Site, u32>,
}

impl SiteTable {
    /// The id of `site`, added when first seen.
    pub fn intern(&mut self, site: &Site) -> u32 {
        if let Some(&id) = self.ids.get(site) {
            return id;
        }
        let id = self.sites.len() as u32;
        self.sites.push(site.clone());
        self.ids.insert(site.clone(), id);
        id
    }

    /// A rank's map from its own site ids to the run's (local ids the
    /// rank did not define map to none).
    pub fn map_rank(&mut self, defs: &[(u32, Site)]) -> Vec<Option<u32>> {
        let len = defs.iter().map(|(id, _)| *id as usize + 1).max().unwrap_or(0);
        let mut map = vec![None; len];
        for (id, site) in defs {
            map[*id as usize] = Some(self.intern(site));
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(file: &str, line: u32) -> Site {
        Site {
            function: Some("main".into()),
            file: Some(file.into()),
            line: Some(line),
            object: "/bin/app".into(),
            offset: 0x1234,
        }
    }

    #[test]
    fn interning_gives_each_distinct_site_one_id_across_ranks() {
        let mut t = SiteTable::default();
        let (a, b) = (site("/src/cg.f", 512), site("/src/cg.f", 600));
        let r0 = t.map_rank(&[(0, a.clone()), (1, b.clone())]);
        // Rank 1 saw them in the other order, with a gap in its ids.
        let r1 = t.map_rank(&[(0, b.clone()), (3, a.clone())]);
        assert_eq!(r0, [Some(0), Some(1)]);
        assert_eq!(r1, [Some(1), None, None, Some(0)]);
        assert_eq!(t.sites, [a, b]);
    }

    #[test]
    fn chunks_round_trip() {
        let bare = Site {
            object: "/lib/libx.so".into(),
            offset: 0xbeef,
            ..Site::default()
        };
        let defs = vec![(0, site("/src/cg.f", 512)), (70_000, bare.clone())];
        let data = rank_sites_payload(&defs);
        let mut got = Vec::new();
        parse_rank_sites(&mut Cursor::new(&data, 0), &mut got).unwrap();
        assert_eq!(got, defs);
        let sites = vec![site("a.c", 1), bare];
        let data = merged_sites_payload(&sites);
        let mut c = Cursor::new(&data, 0);
        let mut got = Vec::new();
        parse_merged_sites(&mut c, &mut got).unwrap();
        assert!(c.is_empty());
        assert_eq!(got, sites);
        // A count larger than the bytes left is an error, not an allocation.
        let e = parse_merged_sites(&mut Cursor::new(&[0xff, 0x7f], 0), &mut got).unwrap_err();
        assert!(e.what.contains("count"), "{e}");
    }

    #[test]
    fn places_name_sites_by_file_and_line_or_object_offset() {
        let s = site("/src/nas/cg.f", 512);
        assert_eq!(s.place(), "/src/nas/cg.f:512");
        assert_eq!(s.to_string(), "/src/nas/cg.f:512 (main)");
        assert!(s.matches("cg.f:512") && s.matches("nas/cg.f:512") && s.matches("/src/nas/cg.f:512"));
        assert!(!s.matches("g.f:512") && !s.matches("cg.f:51"));
        let bare = Site {
            object: "/lib/libx.so".into(),
            offset: 0xbeef,
            ..Site::default()
        };
        assert_eq!(bare.place(), "/lib/libx.so+0xbeef");
    }
}
