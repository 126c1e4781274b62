//! A safe reader over libotf2's: the global definitions into [`Defs`], then
//! one event reader per location, read a batch of records at a time into
//! an [`Assembler`] (through the callbacks of [`crate::callbacks`]).

use crate::assembler::Assembler;
use crate::callbacks;
use crate::defs::Defs;
use crate::ffi;
use crate::status::{check, error, install};
use crate::writer::c_string;
use pnmpi_trace::Result;
use std::path::Path;

impl Defs {
    /// The string `r` ("" if undefined).
    pub fn string(&self, r: u32) -> &str {
        self.strings.get(&r).map_or("", String::as_str)
    }
}

/// An OTF2 archive open for reading.
pub struct Reader {
    reader: *mut ffi::OTF2_Reader,
    name: String,
    callbacks: *mut ffi::OTF2_EvtReaderCallbacks,
    evt: Vec<*mut ffi::OTF2_EvtReader>,
    locations: Vec<u64>,
}

impl Reader {
    /// Opens the archive whose anchor file is `anchor` and reads its global
    /// definitions.
    pub fn open(anchor: &Path) -> Result<(Reader, Defs)> {
        install();
        let name = anchor.display().to_string();
        if let Err(e) = std::fs::metadata(anchor) {
            return Err(pnmpi_trace::Error::io(&name, e));
        }
        let c = c_string(&name, &name)?;
        // SAFETY: `c` is NUL-terminated and outlives the call.
        let reader = unsafe { ffi::OTF2_Reader_Open(c.as_ptr()) };
        if reader.is_null() {
            return Err(error(&name, "cannot open the archive", None));
        }
        // SAFETY: an empty callback set, filled and freed by this reader.
        let callbacks = unsafe { ffi::OTF2_EvtReaderCallbacks_New() };
        let r = Reader {
            reader,
            name,
            callbacks,
            evt: Vec::new(),
            locations: Vec::new(),
        };
        if callbacks.is_null() {
            return Err(error(&r.name, "out of memory", None));
        }
        // SAFETY: `reader` is open; this process reads it alone.
        let code = unsafe { ffi::OTF2_Reader_SetSerialCollectiveCallbacks(reader) };
        check(code, &r.name, "setting serial mode")?;
        let mut defs = Defs::default();
        // SAFETY: `reader` is open.
        let gdr = unsafe { ffi::OTF2_Reader_GetGlobalDefReader(reader) };
        if gdr.is_null() {
            return Err(error(&r.name, "cannot read the global definitions", None));
        }
        let set = callbacks::global_defs();
        // SAFETY: `set` is a valid callback set; `defs` outlives the
        // reading below, which is the only time the callbacks run.
        let code = unsafe {
            ffi::OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, set, (&mut defs as *mut Defs).cast())
        };
        // SAFETY: `set` was created by `global_defs` and is copied by the registration.
        unsafe { ffi::OTF2_GlobalDefReaderCallbacks_Delete(set) };
        check(code, &r.name, "registering the definition callbacks")?;
        let mut read = 0u64;
        // SAFETY: the global reader and its callbacks are registered; `defs` is alive.
        let code = unsafe { ffi::OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &mut read) };
        check(code, &r.name, "reading the global definitions")?;
        // SAFETY: `gdr` came from this reader and is closed once.
        unsafe { ffi::OTF2_Reader_CloseGlobalDefReader(reader, gdr) };
        if defs.resolution == 0 {
            return Err(pnmpi_trace::Error::Invalid(format!(
                "{}: the archive defines no clock resolution (no ClockProperties definition)",
                r.name
            )));
        }
        callbacks::events(r.callbacks);
        r.take_message();
        Ok((r, defs))
    }

    fn take_message(&self) {
        crate::status::take_message();
    }

    /// Opens the event files of `locations` (reading their local
    /// definitions first: the id mappings and clock offsets libotf2 applies).
    pub fn open_events(&mut self, locations: &[u64]) -> Result<()> {
        for &l in locations {
            // SAFETY: the reader is open; any location id is accepted.
            let code = unsafe { ffi::OTF2_Reader_SelectLocation(self.reader, l) };
            check(code, &self.name, "selecting a location")?;
        }
        // SAFETY: the reader is open.
        let defs_open = unsafe { ffi::OTF2_Reader_OpenDefFiles(self.reader) } == ffi::OTF2_SUCCESS;
        for &l in locations {
            if !defs_open {
                break;
            }
            // SAFETY: the definition files are open.
            let dr = unsafe { ffi::OTF2_Reader_GetDefReader(self.reader, l) };
            if dr.is_null() {
                // An archive without local definitions (a writer that had
                // none to write) is valid.
                crate::status::take_message();
                continue;
            }
            let mut read = 0u64;
            // SAFETY: `dr` is this reader's, with no callbacks: only the
            // mappings are kept.
            let code = unsafe { ffi::OTF2_Reader_ReadAllLocalDefinitions(self.reader, dr, &mut read) };
            check(
                code,
                &self.name,
                &format!("reading the local definitions of location {l}"),
            )?;
            // SAFETY: closed once.
            unsafe { ffi::OTF2_Reader_CloseDefReader(self.reader, dr) };
        }
        if defs_open {
            // SAFETY: they were opened above.
            unsafe { ffi::OTF2_Reader_CloseDefFiles(self.reader) };
        }
        crate::status::take_message();
        // SAFETY: the reader is open.
        let code = unsafe { ffi::OTF2_Reader_OpenEvtFiles(self.reader) };
        check(code, &self.name, "opening the event files")?;
        self.locations = locations.to_vec();
        self.evt = vec![std::ptr::null_mut(); locations.len()];
        Ok(())
    }

    /// Reads up to `n` records of location `i` into `sink`; the number
    /// read (0 at the end of its events).
    pub(crate) fn read(&mut self, i: usize, sink: &mut Assembler, n: u64) -> Result<u64> {
        if self.evt[i].is_null() {
            // SAFETY: the event files are open; the location was selected.
            let er = unsafe { ffi::OTF2_Reader_GetEvtReader(self.reader, self.locations[i]) };
            if er.is_null() {
                return Err(error(
                    &self.name,
                    &format!("cannot read location {}", self.locations[i]),
                    None,
                ));
            }
            self.evt[i] = er;
        }
        // SAFETY: the callbacks were filled by `callbacks::events`; `sink`
        // is registered for the duration of the read below only (it is
        // registered again before every read).
        let code = unsafe {
            ffi::OTF2_Reader_RegisterEvtCallbacks(
                self.reader,
                self.evt[i],
                self.callbacks,
                (sink as *mut Assembler).cast(),
            )
        };
        check(code, &self.name, "registering the event callbacks")?;
        let mut read = 0u64;
        // SAFETY: as above; the callbacks catch every panic.
        let code = unsafe { ffi::OTF2_Reader_ReadLocalEvents(self.reader, self.evt[i], n, &mut read) };
        if let Some(e) = sink.take_error() {
            return Err(pnmpi_trace::Error::Invalid(format!(
                "{}: location {}: {e}",
                self.name, self.locations[i]
            )));
        }
        if code != ffi::OTF2_SUCCESS {
            // The location's event file, as libotf2 names it.
            let l = self.locations[i];
            let file = Path::new(&self.name).with_extension("").join(format!("{l}.evt"));
            let doing = format!("reading the events of location {l} ({})", file.display());
            check(code, &self.name, &doing)?;
        }
        Ok(read)
    }

    /// Starts location `i`'s events over.
    pub fn restart(&mut self, i: usize) -> Result<()> {
        let er = std::mem::replace(&mut self.evt[i], std::ptr::null_mut());
        if !er.is_null() {
            // SAFETY: `er` came from this reader and is closed once; the
            // next read opens a new one from the start of the file.
            let code = unsafe { ffi::OTF2_Reader_CloseEvtReader(self.reader, er) };
            check(code, &self.name, "closing an event reader")?;
        }
        Ok(())
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // SAFETY: both were created by this reader and are freed once;
        // closing the reader closes its event readers and files.
        unsafe {
            ffi::OTF2_EvtReaderCallbacks_Delete(self.callbacks);
            ffi::OTF2_Reader_Close(self.reader);
        }
        crate::status::take_message();
    }
}
