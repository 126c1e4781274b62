//! The walk's [`Types`] answered by MPI itself: each type's envelope and
//! contents (`MPI_Type_get_envelope`, `MPI_Type_get_contents`), extent
//! and size, asked natively (`PMPI_`), past the modules below.

use crate::consts;
use crate::contents::{self, Combiner, Contents};
use crate::flatten::{Error, Shape, Types};
use pnmpi_mpi_sys::combiner::Envelope;
use pnmpi_sdk::constants;
use pnmpi_sdk::sys::ffi::{self, MPI_Aint, MPI_Datatype};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;
use std::rc::Rc;

/// A type handle; `owned` when `MPI_Type_get_contents` handed it out, a
/// reference the walk frees when it is done with it.
pub struct Owned {
    pub dt: MPI_Datatype,
    owned: bool,
}

impl Drop for Owned {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: a derived type's handle MPI_Type_get_contents gave
            // this walk, freed once (the Rc's last reference).
            unsafe { ffi::PMPI_Type_free(&mut self.dt) };
        }
    }
}

/// A handle the application owns (never freed by the walk).
pub fn borrowed(dt: MPI_Datatype) -> Rc<Owned> {
    Rc::new(Owned { dt, owned: false })
}

/// MPI as the walk's source of types.
pub struct Mpi;

fn check(routine: &'static str, rc: c_int) -> Result<(), Error> {
    if rc == constants::SUCCESS() {
        Ok(())
    } else {
        Err(Error::Mpi(routine, rc))
    }
}

/// `dt`'s envelope.
fn envelope(dt: MPI_Datatype) -> Result<Envelope, Error> {
    pnmpi_mpi_sys::combiner::envelope(dt).map_err(|rc| Error::Mpi("MPI_Type_get_envelope", rc))
}

/// Whether `dt` is a named (predefined) type, never freed.
fn is_named(dt: MPI_Datatype) -> bool {
    envelope(dt).is_ok_and(|e| e.combiner == Some(Combiner::Named))
}

impl Types for Mpi {
    type Handle = Rc<Owned>;
    type Basic = MPI_Datatype;

    fn shape(&self, t: &Rc<Owned>) -> Result<Shape<Rc<Owned>>, Error> {
        let e = envelope(t.dt)?;
        let combiner = e
            .combiner
            .ok_or_else(|| Error::Unsupported(format!("the combiner numbered {}", e.value)))?;
        if combiner == Combiner::Named {
            let pair = consts::pairs().iter().find(|p| p.pair.bits() == t.dt.bits());
            return Ok(match pair {
                Some(p) => Shape::Parts(vec![(0, borrowed(p.first)), (p.second_at, borrowed(p.second))]),
                None => Shape::Basic,
            });
        }
        let (ints, addrs, types) =
            pnmpi_sdk::contents::raw(t.dt, e.counts).map_err(|rc| Error::Mpi("MPI_Type_get_contents", rc))?;
        let contents = Contents {
            combiner,
            ints,
            addrs,
            types: types
                .into_iter()
                .map(|dt| {
                    Rc::new(Owned {
                        dt,
                        owned: !is_named(dt),
                    })
                })
                .collect(),
        };
        contents::shape(&contents, &consts::consts(), |h| self.extent(h))
    }

    fn extent(&self, t: &Rc<Owned>) -> Result<i64, Error> {
        let (mut lb, mut extent): (MPI_Aint, MPI_Aint) = (0, 0);
        // SAFETY: local out-parameters; MPI checks the handle.
        let rc = unsafe { ffi::PMPI_Type_get_extent(t.dt, &mut lb, &mut extent) };
        check("MPI_Type_get_extent", rc)?;
        #[allow(clippy::unnecessary_cast)]
        Ok(extent as i64)
    }

    fn size(&self, t: &Rc<Owned>) -> Result<i64, Error> {
        let mut size: c_int = 0;
        // SAFETY: a local out-parameter; MPI checks the handle.
        let rc = unsafe { ffi::PMPI_Type_size(t.dt, &mut size) };
        check("MPI_Type_size", rc)?;
        Ok(i64::from(size))
    }

    fn basic(&self, t: &Rc<Owned>) -> MPI_Datatype {
        t.dt
    }
}
