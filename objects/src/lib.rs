//! The process's loaded objects, read from memory as the loader mapped
//! them: where an object's segments and dynamic tables are ([`layout`],
//! [`image`]), its dynamic symbols ([`dynsym`]), the MPI routines it
//! imports, defines and calls through its GOT ([`inspect`]), the objects
//! loaded so far ([`deps`], [`foreign`]), the calling thread's TLS
//! blocks ([`tls`]), and writes to GOT slots ([`got`]).
//!
//! The loader layer under libpnmpi (its modules and the Fortran bindings
//! it binds into the chain) and libvranks (the Fortran bindings it binds
//! to the virtual ranks): nothing here knows of chains or ranks.

pub mod deps;
pub mod dynsym;
pub mod foreign;
pub mod got;
pub mod image;
pub mod inspect;
pub mod layout;
pub mod tls;
