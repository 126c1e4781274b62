//! Per-module selection: which routines, which ranks and which Pcontrol
//! phases a module applies to. A deselected module is simply absent from
//! the link stacks, so it costs nothing where it does not apply.

use glob::Pattern;
use pnmpi_mpi_sys::ROUTINE_NAMES;

/// A set of non-negative integers written as `0,4-7`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntSet(Vec<(i64, i64)>);

impl IntSet {
    /// Parses `0,4-7` (whitespace allowed around items).
    pub fn parse(text: &str) -> Result<IntSet, String> {
        let mut ranges = Vec::new();
        for item in text.split(',').map(str::trim) {
            let number = |s: &str| {
                s.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("`{s}` in `{text}` is not a whole number"))
            };
            let (lo, hi) = match item.split_once('-') {
                Some((lo, hi)) if !lo.trim().is_empty() => (number(lo)?, number(hi)?),
                _ => (number(item)?, number(item)?),
            };
            if lo > hi {
                return Err(format!("range `{item}` in `{text}` runs backwards"));
            }
            ranges.push((lo, hi));
        }
        Ok(IntSet(ranges))
    }

    pub fn contains(&self, n: i64) -> bool {
        self.0.iter().any(|&(lo, hi)| (lo..=hi).contains(&n))
    }
}

/// Routine-name patterns (`MPI_Send`, `MPI_*send*`), each checked to name
/// at least one routine of this MPI, so that a typo is an error and not a
/// module that silently sees nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Routines(Vec<Pattern>);

impl Routines {
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Routines, String> {
        let mut patterns = Vec::new();
        for word in words {
            let pattern = Pattern::new(word).map_err(|e| format!("bad routine pattern `{word}`: {e}"))?;
            if !ROUTINE_NAMES.iter().any(|r| pattern.matches(r)) {
                return Err(format!(
                    "`{word}` matches no MPI routine of this MPI (names look like MPI_Send; `*` and `?` are wildcards)"
                ));
            }
            patterns.push(pattern);
        }
        Ok(Routines(patterns))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn matches(&self, routine: &str) -> bool {
        self.0.iter().any(|p| p.matches(routine))
    }

    fn extend(&mut self, other: Routines) {
        self.0.extend(other.0);
    }
}

/// What one module is applied to; the default applies it everywhere.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// Only these routines (all when empty).
    pub routines: Routines,
    /// Never these routines.
    pub exclude: Routines,
    /// Only on these world ranks.
    pub ranks: Option<IntSet>,
    /// Only while the last `MPI_Pcontrol` level is in this set (before
    /// any call the level is 1, MPI's "profiling on").
    pub phases: Option<IntSet>,
}

/// The Pcontrol level in force before the application calls MPI_Pcontrol.
pub const INITIAL_PHASE: i64 = 1;

impl Selection {
    /// Adds `routines` patterns (repeated lines accumulate).
    pub fn add_routines(&mut self, more: Routines) {
        self.routines.extend(more);
    }

    /// Adds `exclude` patterns.
    pub fn add_exclude(&mut self, more: Routines) {
        self.exclude.extend(more);
    }

    /// Does the module apply to `routine` (an `MPI_` name)?
    pub fn covers(&self, routine: &str) -> bool {
        (self.routines.is_empty() || self.routines.matches(routine)) && !self.exclude.matches(routine)
    }

    /// Is the module active on `rank` in Pcontrol `phase`?
    pub fn active(&self, rank: i64, phase: i64) -> bool {
        self.ranks.as_ref().is_none_or(|r| r.contains(rank))
            && self.phases.as_ref().is_none_or(|p| p.contains(phase))
    }

    /// Does activity depend on the phase (so Pcontrol must re-select)?
    pub fn phased(&self) -> bool {
        self.phases.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sets_parse_lists_and_ranges() {
        let s = IntSet::parse("0, 4-7,10").unwrap();
        assert!(s.contains(0) && s.contains(4) && s.contains(7) && s.contains(10));
        assert!(!s.contains(1) && !s.contains(8));
        assert!(IntSet::parse("3-1").unwrap_err().contains("backwards"));
        assert!(IntSet::parse("a").unwrap_err().contains("not a whole number"));
        assert!(IntSet::parse("1,").is_err());
    }

    #[test]
    fn routines_and_exclude_combine() {
        let mut sel = Selection::default();
        assert!(sel.covers("MPI_Send"));
        sel.add_routines(Routines::parse(["MPI_Send", "MPI_*ecv"]).unwrap());
        sel.add_exclude(Routines::parse(["MPI_Irecv"]).unwrap());
        assert!(sel.covers("MPI_Send") && sel.covers("MPI_Recv"));
        assert!(!sel.covers("MPI_Irecv") && !sel.covers("MPI_Barrier"));
    }

    #[test]
    fn a_pattern_matching_no_routine_is_an_error() {
        let err = Routines::parse(["MPI_Sned"]).unwrap_err();
        assert!(err.contains("`MPI_Sned` matches no MPI routine"), "{err}");
    }

    #[test]
    fn activity_follows_ranks_and_phases() {
        let sel = Selection {
            ranks: Some(IntSet::parse("1-2").unwrap()),
            phases: Some(IntSet::parse("2").unwrap()),
            ..Selection::default()
        };
        assert!(sel.active(1, 2));
        assert!(!sel.active(0, 2));
        assert!(!sel.active(1, INITIAL_PHASE));
        assert!(sel.phased());
    }
}
