//! Compiles `src/consts.c` with the MPI's compiler wrapper (`$MPICC`, else
//! `mpicc`): the error codes and predefined handles the
//! checker compares against, which are macros bindgen cannot evaluate.

fn main() {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    println!("cargo:rerun-if-changed=src/consts.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    cc::Build::new()
        .compiler(&mpicc)
        .file("src/consts.c")
        .define("OMPI_SKIP_MPICXX", "1")
        .define("MPICH_SKIP_MPICXX", None)
        .warnings(true)
        .compile("pnmpi_checker_consts");
}
