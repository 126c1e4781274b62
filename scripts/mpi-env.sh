# Sourced by the scripts: selects one MPI by name and sets MPICC, the
# launcher and the cargo target folder for it (one build per MPI).
#   usage: . scripts/mpi-env.sh openmpi|mpich
case "$1" in
    openmpi)
        export MPICC=mpicc.openmpi
        export CARGO_TARGET_DIR="$PWD/target"
        MPIRUN=(mpirun.openmpi --oversubscribe)
        # Open MPI refuses to run as root without these.
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        ;;
    mpich)
        export MPICC=mpicc.mpich
        export CARGO_TARGET_DIR="$PWD/target/mpich"
        MPIRUN=(mpirun.mpich)
        ;;
    *)
        echo "unknown MPI '$1': use openmpi or mpich" >&2
        return 1
        ;;
esac
