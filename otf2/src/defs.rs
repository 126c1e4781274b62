//! The global definitions of an OTF2 archive that this crate reads:
//! locations, groups, regions, communicators, one-sided windows and
//! strings.

use crate::ffi;
use rustc_hash::FxHashMap;

/// A location definition.
#[derive(Clone, Debug)]
pub struct LocationDef {
    /// Its reference.
    pub id: u64,
    /// `OTF2_LOCATION_TYPE_*`.
    pub ty: ffi::OTF2_LocationType,
    /// Records in its event file.
    pub events: u64,
    /// Its location group (process).
    pub group: u32,
}

/// A group definition.
#[derive(Clone, Debug)]
pub struct GroupDef {
    /// `OTF2_GROUP_TYPE_*`.
    pub ty: ffi::OTF2_GroupType,
    /// `OTF2_PARADIGM_*`.
    pub paradigm: ffi::OTF2_Paradigm,
    /// Its members (locations, or indices into the MPI locations group).
    pub members: Vec<u64>,
}

/// A region definition.
#[derive(Clone, Debug)]
pub struct RegionDef {
    /// Its name's reference.
    pub name: u32,
    /// `OTF2_PARADIGM_*`.
    pub paradigm: ffi::OTF2_Paradigm,
}

/// A communicator definition.
#[derive(Clone, Debug)]
pub struct CommDef {
    /// Its reference.
    pub id: u32,
    /// Its name's reference.
    pub name: u32,
    /// Its group.
    pub group: u32,
    /// The communicator it was created from (`u32::MAX`: none).
    pub parent: u32,
}

/// A one-sided window definition.
#[derive(Clone, Debug)]
pub struct WinDef {
    /// Its reference.
    pub id: u32,
    /// Its name's reference.
    pub name: u32,
    /// The communicator it was created over.
    pub comm: u32,
}

/// The global definitions this crate reads.
#[derive(Debug, Default)]
pub struct Defs {
    /// Ticks per second.
    pub resolution: u64,
    /// Time stamp of the trace's start.
    pub offset: u64,
    /// Strings by reference.
    pub strings: FxHashMap<u32, String>,
    /// Location groups (processes and accelerators): reference, type.
    pub location_groups: Vec<(u32, ffi::OTF2_LocationGroupType)>,
    /// Locations, in definition order.
    pub locations: Vec<LocationDef>,
    /// Regions by reference.
    pub regions: FxHashMap<u32, RegionDef>,
    /// Groups by reference.
    pub groups: FxHashMap<u32, GroupDef>,
    /// Communicators, in definition order.
    pub comms: Vec<CommDef>,
    /// One-sided windows, in definition order.
    pub wins: Vec<WinDef>,
    /// Intercommunicators defined (not replayed).
    pub intercomms: u64,
}
