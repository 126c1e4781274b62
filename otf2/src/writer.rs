//! A safe writer over libotf2's archive, event and definition writers: an
//! archive is created in a folder, each location's events are written
//! through [`EventWriter`] (one location at a time, closed when done so
//! that memory holds one location's buffer), then the global definitions
//! through [`Definitions`], and [`ArchiveWriter::close`] finishes the files.

use crate::ffi;
use crate::status::{check, error, install};
use pnmpi_trace::Result;
use rustc_hash::FxHashMap;
use std::ffi::CString;
use std::os::raw::c_void;
use std::path::Path;

/// OTF2's "no value" for 32-bit references and ranks.
pub const UNDEFINED_U32: u32 = u32::MAX;
/// OTF2's "no value" for 64-bit references and time stamps.
pub const UNDEFINED_U64: u64 = u64::MAX;

/// Bytes of libotf2's event chunks: its unit of buffering per location.
const EVENT_CHUNK: u64 = 1 << 20;
/// Bytes of its definition chunks.
const DEF_CHUNK: u64 = 4 << 20;

/// Every buffer is written out when full: an export is not a measurement,
/// so there is no reason to drop data.
unsafe extern "C" fn pre_flush(
    _user: *mut c_void,
    _file: ffi::OTF2_FileType,
    _location: ffi::OTF2_LocationRef,
    _caller: *mut c_void,
    _final: bool,
) -> ffi::OTF2_FlushType {
    ffi::OTF2_FLUSH as ffi::OTF2_FlushType
}

static FLUSH: ffi::OTF2_FlushCallbacks = ffi::OTF2_FlushCallbacks {
    otf2_pre_flush: Some(pre_flush),
    // No BufferFlush records: writing the export takes no traced time.
    otf2_post_flush: None,
};

/// An OTF2 archive being written.
pub struct ArchiveWriter {
    archive: *mut ffi::OTF2_Archive,
    /// The anchor file, for messages.
    name: String,
    strings: FxHashMap<String, u32>,
    defs: *mut ffi::OTF2_GlobalDefWriter,
}

/// One MPI-related record of the event writer.
#[derive(Clone, Copy, Debug)]
pub enum Record {
    /// Entry into a region.
    Enter(u32),
    /// Entry into a region from a call site: the region, and the
    /// `SourceCodeLocation` ([`ArchiveWriter::sites`]) attached to the
    /// `Enter` as the [`SITE_ATTRIBUTE`].
    EnterAt(u32, u32),
    /// Exit from a region.
    Leave(u32),
    /// Blocking send: receiver (rank in comm), comm, tag, bytes.
    Send(u32, u32, u32, u64),
    /// Nonblocking send: receiver, comm, tag, bytes, request.
    Isend(u32, u32, u32, u64, u64),
    /// A nonblocking send's completion.
    IsendComplete(u64),
    /// A nonblocking receive posted.
    IrecvRequest(u64),
    /// Blocking receive: sender (rank in comm), comm, tag, bytes.
    Recv(u32, u32, u32, u64),
    /// Nonblocking receive completed: sender, comm, tag, bytes, request.
    Irecv(u32, u32, u32, u64, u64),
    /// A request cancelled.
    Cancelled(u64),
    /// Start of a blocking collective.
    CollBegin,
    /// End of one: operation, comm, root (rank in comm or undefined), sent and received bytes.
    CollEnd(ffi::OTF2_CollectiveOp, u32, u32, u64, u64),
    /// A nonblocking collective posted.
    NbCollRequest(u64),
    /// Its completion: operation, comm, root, sent, received, request.
    NbCollComplete(ffi::OTF2_CollectiveOp, u32, u32, u64, u64, u64),
    /// A communicator created (its definition has the members).
    CommCreate(u32),
    /// A window created (its definition names its communicator).
    RmaWinCreate(u32),
    /// A window freed.
    RmaWinDestroy(u32),
    /// Start of a collective one-sided call (creation, fence, free).
    RmaCollBegin,
    /// Its end: operation, synchronization level, window, root, sent and
    /// received bytes.
    RmaCollEnd(ffi::OTF2_CollectiveOp, ffi::OTF2_RmaSyncLevel, u32, u32, u64, u64),
    /// A synchronization with a group (PSCW): level, window, group.
    RmaGroupSync(ffi::OTF2_RmaSyncLevel, u32, u32),
    /// A lock requested: window, target (rank of the window), lock id, type.
    RmaRequestLock(u32, u32, u64, ffi::OTF2_LockType),
    /// A lock released: window, target, lock id.
    RmaReleaseLock(u32, u32, u64),
    /// A put: window, target, bytes, matching id.
    RmaPut(u32, u32, u64, u64),
    /// A get: window, target, bytes, matching id.
    RmaGet(u32, u32, u64, u64),
    /// An atomic: window, target, type, sent and received bytes, matching id.
    RmaAtomic(u32, u32, ffi::OTF2_RmaAtomicType, u64, u64, u64),
    /// The completion of the operation of a matching id, at a blocking
    /// synchronization: window, matching id.
    RmaOpCompleteBlocking(u32, u64),
    /// The local completion of a request form's operation (`MPI_Rput`
    /// ...), in the call that completes its request: window, matching id.
    RmaOpCompleteNonBlocking(u32, u64),
}

/// The event writer of one location.
pub struct EventWriter<'a> {
    archive: &'a ArchiveWriter,
    writer: *mut ffi::OTF2_EvtWriter,
    records: u64,
    /// The attribute list of `Enter`s with a site (null until one).
    attrs: *mut ffi::OTF2_AttributeList,
}

/// The attribute (id) that names an `Enter`'s call site: a
/// `SourceCodeLocation`, defined by [`ArchiveWriter::sites`].
pub const SITE_ATTRIBUTE: u32 = 0;

impl ArchiveWriter {
    /// Creates the archive `dir/NAME.otf2` (with `dir/NAME/` for the
    /// location files); `dir` must exist and hold no archive of that name.
    pub fn create(dir: &Path, name: &str, creator: &str) -> Result<ArchiveWriter> {
        install();
        let anchor = dir.join(format!("{name}.otf2")).display().to_string();
        let cpath = c_string(&dir.display().to_string(), &anchor)?;
        let cname = c_string(name, &anchor)?;
        // SAFETY: both strings are NUL-terminated and outlive the call;
        // libotf2 copies them.
        let archive = unsafe {
            ffi::OTF2_Archive_Open(
                cpath.as_ptr(),
                cname.as_ptr(),
                ffi::OTF2_FILEMODE_WRITE as _,
                EVENT_CHUNK,
                DEF_CHUNK,
                ffi::OTF2_SUBSTRATE_POSIX as _,
                ffi::OTF2_COMPRESSION_NONE as _,
            )
        };
        if archive.is_null() {
            return Err(error(&anchor, "cannot create the archive", None));
        }
        let w = ArchiveWriter {
            archive,
            name: anchor,
            strings: FxHashMap::default(),
            defs: std::ptr::null_mut(),
        };
        // SAFETY: `archive` is open; FLUSH is a static with valid callbacks.
        let code = unsafe { ffi::OTF2_Archive_SetFlushCallbacks(archive, &FLUSH, std::ptr::null_mut()) };
        check(code, &w.name, "setting the flush callbacks")?;
        // SAFETY: `archive` is open; one process writes it.
        let code = unsafe { ffi::OTF2_Archive_SetSerialCollectiveCallbacks(archive) };
        check(code, &w.name, "setting serial mode")?;
        let creator = c_string(creator, &w.name)?;
        // SAFETY: `archive` is open, the string NUL-terminated (copied).
        let code = unsafe { ffi::OTF2_Archive_SetCreator(archive, creator.as_ptr()) };
        check(code, &w.name, "setting the creator")?;
        // SAFETY: `archive` is open for writing.
        let code = unsafe { ffi::OTF2_Archive_OpenEvtFiles(archive) };
        check(code, &w.name, "opening the event files")?;
        Ok(w)
    }

    /// The anchor file's path, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The event writer of `location`.
    pub fn events(&self, location: u64) -> Result<EventWriter<'_>> {
        // SAFETY: the archive is open with its event files.
        let writer = unsafe { ffi::OTF2_Archive_GetEvtWriter(self.archive, location) };
        if writer.is_null() {
            return Err(error(
                &self.name,
                &format!("cannot write location {location}"),
                None,
            ));
        }
        Ok(EventWriter {
            archive: self,
            writer,
            records: 0,
            attrs: std::ptr::null_mut(),
        })
    }

    /// Closes the event files and writes an (empty) local definition file
    /// per location, which readers expect beside each event file.
    pub fn finish_events(&mut self, locations: impl Iterator<Item = u64>) -> Result<()> {
        // SAFETY: the archive is open; every event writer was closed.
        let code = unsafe { ffi::OTF2_Archive_CloseEvtFiles(self.archive) };
        check(code, &self.name, "closing the event files")?;
        // SAFETY: as above.
        let code = unsafe { ffi::OTF2_Archive_OpenDefFiles(self.archive) };
        check(code, &self.name, "opening the local definition files")?;
        for location in locations {
            // SAFETY: the definition files are open.
            let w = unsafe { ffi::OTF2_Archive_GetDefWriter(self.archive, location) };
            if w.is_null() {
                return Err(error(&self.name, "cannot write local definitions", None));
            }
            // SAFETY: `w` came from this archive and is closed once.
            let code = unsafe { ffi::OTF2_Archive_CloseDefWriter(self.archive, w) };
            check(code, &self.name, "closing local definitions")?;
        }
        // SAFETY: the definition files are open.
        let code = unsafe { ffi::OTF2_Archive_CloseDefFiles(self.archive) };
        check(code, &self.name, "closing the local definition files")
    }

    /// The global definition writer.
    fn defs(&mut self) -> Result<*mut ffi::OTF2_GlobalDefWriter> {
        if self.defs.is_null() {
            // SAFETY: the archive is open for writing.
            self.defs = unsafe { ffi::OTF2_Archive_GetGlobalDefWriter(self.archive) };
            if self.defs.is_null() {
                return Err(error(&self.name, "cannot write the global definitions", None));
            }
        }
        Ok(self.defs)
    }

    /// The reference of string `s`, defined on first use.
    pub fn string(&mut self, s: &str) -> Result<u32> {
        if let Some(&r) = self.strings.get(s) {
            return Ok(r);
        }
        let r = self.strings.len() as u32;
        let c = c_string(s, &self.name)?;
        let defs = self.defs()?;
        // SAFETY: `defs` is the archive's global writer; `c` is NUL-terminated (copied).
        let code = unsafe { ffi::OTF2_GlobalDefWriter_WriteString(defs, r, c.as_ptr()) };
        check(code, &self.name, "writing a string definition")?;
        self.strings.insert(s.to_owned(), r);
        Ok(r)
    }

    /// The clock: 1 ns ticks from the trace origin, and its length.
    pub fn clock(&mut self, length: u64) -> Result<()> {
        let d = self.defs()?;
        // SAFETY: `d` is the archive's open global writer; plain values.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteClockProperties(d, 1_000_000_000, 0, length, UNDEFINED_U64)
        };
        check(code, &self.name, "writing the clock properties")
    }

    /// A system tree node (`parent` [`UNDEFINED_U32`] for the root).
    pub fn system_tree_node(&mut self, id: u32, name: &str, class: &str, parent: u32) -> Result<()> {
        let (name, class) = (self.string(name)?, self.string(class)?);
        let d = self.defs()?;
        // SAFETY: as in `clock`; the strings are defined.
        let code = unsafe { ffi::OTF2_GlobalDefWriter_WriteSystemTreeNode(d, id, name, class, parent) };
        check(code, &self.name, "writing a system tree node")
    }

    /// A process (MPI rank) under system tree node `node`.
    pub fn process(&mut self, id: u32, name: &str, node: u32) -> Result<()> {
        let name = self.string(name)?;
        let d = self.defs()?;
        // SAFETY: as in `clock`.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteLocationGroup(
                d,
                id,
                name,
                ffi::OTF2_LOCATION_GROUP_TYPE_PROCESS as _,
                node,
                UNDEFINED_U32,
            )
        };
        check(code, &self.name, "writing a location group")
    }

    /// A CPU thread of process `group`, with its number of records.
    pub fn thread(&mut self, id: u64, name: &str, records: u64, group: u32) -> Result<()> {
        let name = self.string(name)?;
        let d = self.defs()?;
        // SAFETY: as in `clock`.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteLocation(
                d,
                id,
                name,
                ffi::OTF2_LOCATION_TYPE_CPU_THREAD as _,
                records,
                group,
            )
        };
        check(code, &self.name, "writing a location")
    }

    /// An MPI routine's region, with its role.
    pub fn mpi_region(&mut self, id: u32, name: &str, role: ffi::OTF2_RegionRole) -> Result<()> {
        let (name, empty) = (self.string(name)?, self.string("")?);
        let d = self.defs()?;
        // SAFETY: as in `clock`.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteRegion(
                d,
                id,
                name,
                name,
                empty,
                role,
                ffi::OTF2_PARADIGM_MPI as _,
                ffi::OTF2_REGION_FLAG_NONE as _,
                empty,
                0,
                0,
            )
        };
        check(code, &self.name, "writing a region")
    }

    /// An MPI group of type `ty` (locations, or ranks of a communicator).
    pub fn group(&mut self, id: u32, name: &str, ty: ffi::OTF2_GroupType, members: &[u64]) -> Result<()> {
        let name = self.string(name)?;
        let d = self.defs()?;
        // SAFETY: as in `clock`; `members` holds the count it is given.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteGroup(
                d,
                id,
                name,
                ty,
                ffi::OTF2_PARADIGM_MPI as _,
                ffi::OTF2_GROUP_FLAG_NONE as _,
                members.len() as u32,
                members.as_ptr(),
            )
        };
        check(code, &self.name, "writing a group")
    }

    /// A communicator over group `group` (`parent` [`UNDEFINED_U32`] if none).
    pub fn comm(&mut self, id: u32, name: &str, group: u32, parent: u32) -> Result<()> {
        let name = self.string(name)?;
        let d = self.defs()?;
        // SAFETY: as in `clock`.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteComm(d, id, name, group, parent, ffi::OTF2_COMM_FLAG_NONE as _)
        };
        check(code, &self.name, "writing a communicator")
    }

    /// A one-sided window over communicator `comm`, whose creation and
    /// destruction the events record.
    pub fn rma_win(&mut self, id: u32, name: &str, comm: u32) -> Result<()> {
        let name = self.string(name)?;
        let d = self.defs()?;
        // SAFETY: as in `clock`.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteRmaWin(
                d,
                id,
                name,
                comm,
                ffi::OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS as _,
            )
        };
        check(code, &self.name, "writing a window")
    }

    /// A metric member: `name`, in ns (unit "s", exponent -9), accumulated
    /// from the start of the run (each value is the total so far).
    pub fn metric_member(&mut self, id: u32, name: &str, description: &str) -> Result<()> {
        let (name, description, unit) = (self.string(name)?, self.string(description)?, self.string("s")?);
        let d = self.defs()?;
        // SAFETY: as in `clock`; the strings are defined.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteMetricMember(
                d,
                id,
                name,
                description,
                ffi::OTF2_METRIC_TYPE_USER as _,
                ffi::OTF2_METRIC_ACCUMULATED_START as _,
                ffi::OTF2_TYPE_UINT64 as _,
                ffi::OTF2_BASE_DECIMAL as _,
                -9,
                unit,
            )
        };
        check(code, &self.name, "writing a metric member")
    }

    /// A metric class of `members` (at most 255), all recorded together
    /// in each of its metric events.
    pub fn metric_class(&mut self, id: u32, members: &[u32]) -> Result<()> {
        let n = u8::try_from(members.len())
            .map_err(|_| error(&self.name, "more than 255 members in a metric class", None))?;
        let d = self.defs()?;
        // SAFETY: as in `clock`; `members` holds `n` defined member ids.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteMetricClass(
                d,
                id,
                n,
                members.as_ptr(),
                ffi::OTF2_METRIC_SYNCHRONOUS_STRICT as _,
                ffi::OTF2_RECORDER_KIND_ABSTRACT as _,
            )
        };
        check(code, &self.name, "writing a metric class")
    }

    /// The call sites, `(file, line)` by id: `SourceCodeLocation` i, and
    /// the attribute [`SITE_ATTRIBUTE`] that `Enter`s refer to them by.
    pub fn sites(&mut self, sites: &[(String, u32)]) -> Result<()> {
        let (name, description) = (
            self.string("source code location")?,
            self.string("the call site of the MPI call (pnmpi tracer)")?,
        );
        let d = self.defs()?;
        // SAFETY: as in `clock`; the strings are defined.
        let code = unsafe {
            ffi::OTF2_GlobalDefWriter_WriteAttribute(
                d,
                SITE_ATTRIBUTE,
                name,
                description,
                ffi::OTF2_TYPE_SOURCE_CODE_LOCATION as _,
            )
        };
        check(code, &self.name, "writing the call-site attribute")?;
        for (i, (file, line)) in sites.iter().enumerate() {
            let file = self.string(file)?;
            let d = self.defs()?;
            // SAFETY: as in `clock`; the string is defined.
            let code = unsafe { ffi::OTF2_GlobalDefWriter_WriteSourceCodeLocation(d, i as u32, file, *line) };
            check(code, &self.name, "writing a source code location")?;
        }
        Ok(())
    }

    /// Finishes and closes the archive.
    pub fn close(mut self) -> Result<()> {
        let archive = std::mem::replace(&mut self.archive, std::ptr::null_mut());
        // SAFETY: `archive` is open; closing it closes the writers left open
        // and writes the anchor file. It is not used again.
        let code = unsafe { ffi::OTF2_Archive_Close(archive) };
        check(code, &self.name, "closing the archive")
    }
}

impl Drop for ArchiveWriter {
    fn drop(&mut self) {
        if !self.archive.is_null() {
            // SAFETY: an archive left open by an error path; closed once.
            unsafe { ffi::OTF2_Archive_Close(self.archive) };
            crate::status::take_message();
        }
    }
}

impl Drop for EventWriter<'_> {
    fn drop(&mut self) {
        if !self.attrs.is_null() {
            // SAFETY: the list this writer allocated, freed once.
            unsafe { ffi::OTF2_AttributeList_Delete(self.attrs) };
        }
    }
}

impl EventWriter<'_> {
    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes `rec` at `time` (ns).
    pub fn write(&mut self, time: u64, rec: Record) -> Result<()> {
        let w = self.writer;
        let none = std::ptr::null_mut();
        if let Record::EnterAt(_, site) = rec {
            if self.attrs.is_null() {
                // SAFETY: allocates an empty list, freed in `drop`.
                self.attrs = unsafe { ffi::OTF2_AttributeList_New() };
                if self.attrs.is_null() {
                    return Err(error(
                        &self.archive.name,
                        "cannot allocate an attribute list",
                        None,
                    ));
                }
            }
            // SAFETY: the list is this writer's, live; the values are plain.
            let code =
                unsafe { ffi::OTF2_AttributeList_AddSourceCodeLocationRef(self.attrs, SITE_ATTRIBUTE, site) };
            check(code, &self.archive.name, "attaching a call site")?;
        }
        let attrs = self.attrs;
        // SAFETY: `w` is this location's open writer; no attribute list is
        // passed; the arguments are plain values.
        let code = unsafe {
            match rec {
                Record::Enter(region) => ffi::OTF2_EvtWriter_Enter(w, none, time, region),
                // The writer empties the list once the record is written.
                Record::EnterAt(region, _) => ffi::OTF2_EvtWriter_Enter(w, attrs, time, region),
                Record::Leave(region) => ffi::OTF2_EvtWriter_Leave(w, none, time, region),
                Record::Send(to, comm, tag, len) => {
                    ffi::OTF2_EvtWriter_MpiSend(w, none, time, to, comm, tag, len)
                }
                Record::Isend(to, comm, tag, len, req) => {
                    ffi::OTF2_EvtWriter_MpiIsend(w, none, time, to, comm, tag, len, req)
                }
                Record::IsendComplete(req) => ffi::OTF2_EvtWriter_MpiIsendComplete(w, none, time, req),
                Record::IrecvRequest(req) => ffi::OTF2_EvtWriter_MpiIrecvRequest(w, none, time, req),
                Record::Recv(from, comm, tag, len) => {
                    ffi::OTF2_EvtWriter_MpiRecv(w, none, time, from, comm, tag, len)
                }
                Record::Irecv(from, comm, tag, len, req) => {
                    ffi::OTF2_EvtWriter_MpiIrecv(w, none, time, from, comm, tag, len, req)
                }
                Record::Cancelled(req) => ffi::OTF2_EvtWriter_MpiRequestCancelled(w, none, time, req),
                Record::CollBegin => ffi::OTF2_EvtWriter_MpiCollectiveBegin(w, none, time),
                Record::CollEnd(op, comm, root, sent, recvd) => {
                    ffi::OTF2_EvtWriter_MpiCollectiveEnd(w, none, time, op, comm, root, sent, recvd)
                }
                Record::NbCollRequest(req) => {
                    ffi::OTF2_EvtWriter_NonBlockingCollectiveRequest(w, none, time, req)
                }
                Record::NbCollComplete(op, comm, root, sent, recvd, req) => {
                    ffi::OTF2_EvtWriter_NonBlockingCollectiveComplete(
                        w, none, time, op, comm, root, sent, recvd, req,
                    )
                }
                Record::CommCreate(comm) => ffi::OTF2_EvtWriter_CommCreate(w, none, time, comm),
                Record::RmaWinCreate(win) => ffi::OTF2_EvtWriter_RmaWinCreate(w, none, time, win),
                Record::RmaWinDestroy(win) => ffi::OTF2_EvtWriter_RmaWinDestroy(w, none, time, win),
                Record::RmaCollBegin => ffi::OTF2_EvtWriter_RmaCollectiveBegin(w, none, time),
                Record::RmaCollEnd(op, level, win, root, sent, recvd) => {
                    ffi::OTF2_EvtWriter_RmaCollectiveEnd(w, none, time, op, level, win, root, sent, recvd)
                }
                Record::RmaGroupSync(level, win, group) => {
                    ffi::OTF2_EvtWriter_RmaGroupSync(w, none, time, level, win, group)
                }
                Record::RmaRequestLock(win, remote, id, ty) => {
                    ffi::OTF2_EvtWriter_RmaRequestLock(w, none, time, win, remote, id, ty)
                }
                Record::RmaReleaseLock(win, remote, id) => {
                    ffi::OTF2_EvtWriter_RmaReleaseLock(w, none, time, win, remote, id)
                }
                Record::RmaPut(win, remote, bytes, id) => {
                    ffi::OTF2_EvtWriter_RmaPut(w, none, time, win, remote, bytes, id)
                }
                Record::RmaGet(win, remote, bytes, id) => {
                    ffi::OTF2_EvtWriter_RmaGet(w, none, time, win, remote, bytes, id)
                }
                Record::RmaAtomic(win, remote, ty, sent, recvd, id) => {
                    ffi::OTF2_EvtWriter_RmaAtomic(w, none, time, win, remote, ty, sent, recvd, id)
                }
                Record::RmaOpCompleteBlocking(win, id) => {
                    ffi::OTF2_EvtWriter_RmaOpCompleteBlocking(w, none, time, win, id)
                }
                Record::RmaOpCompleteNonBlocking(win, id) => {
                    ffi::OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, none, time, win, id)
                }
            }
        };
        self.records += 1;
        check(code, &self.archive.name, "writing an event")
    }

    /// Writes a metric event of class `metric` at `time`: one unsigned
    /// value per member of the class, in its order (at most 255).
    pub fn metric(&mut self, time: u64, metric: u32, values: &[u64]) -> Result<()> {
        let n = u8::try_from(values.len())
            .map_err(|_| error(&self.archive.name, "more than 255 values in a metric event", None))?;
        let types = vec![ffi::OTF2_TYPE_UINT64 as ffi::OTF2_Type; values.len()];
        let values: Vec<ffi::OTF2_MetricValue> = values
            .iter()
            .map(|&v| ffi::OTF2_MetricValue { unsigned_int: v })
            .collect();
        // SAFETY: `self.writer` is this location's open writer; `types` and
        // `values` hold `n` entries each and outlive the call.
        let code = unsafe {
            ffi::OTF2_EvtWriter_Metric(
                self.writer,
                std::ptr::null_mut(),
                time,
                metric,
                n,
                types.as_ptr(),
                values.as_ptr(),
            )
        };
        self.records += 1;
        check(code, &self.archive.name, "writing a metric event")
    }

    /// Closes the location's writer, writing out its buffer.
    pub fn close(self) -> Result<()> {
        // SAFETY: the writer came from this archive and is closed once.
        let code = unsafe { ffi::OTF2_Archive_CloseEvtWriter(self.archive.archive, self.writer) };
        check(code, &self.archive.name, "closing a location's events")
    }
}

/// `s` as a C string; an interior NUL is an error naming `file`.
pub(crate) fn c_string(s: &str, file: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| pnmpi_trace::Error::Invalid(format!("{file}: a name contains a NUL byte: {s:?}")))
}
