"""Writes two small OTF2 archives with python3-otf2 (the reference
library's own Python bindings), independently of pnmpi's exporter, for
tests/otf2.rs: known compute intervals and messages whose replay under the
`simple` model is computed by hand in the test.

    /usr/bin/python3 write_archives.py OUT_DIR

writes OUT_DIR/blocking/traces.otf2 and OUT_DIR/nonblocking/traces.otf2.
Times are ns (a 1 GHz timer)."""

import os
import sys

import otf2
from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole, Undefined

P2P = RegionRole.POINT2POINT


def archive(path, ranks, script):
    """One archive of `ranks` MPI ranks; script(defs, writers, world, regions)."""
    with otf2.writer.open(path, timer_resolution=1_000_000_000) as trace:
        defs = trace.definitions
        machine = defs.system_tree_node("python machine")
        node = defs.system_tree_node("python node", parent=machine)
        groups = [defs.location_group(f"MPI Rank {r}", system_tree_parent=node) for r in range(ranks)]
        locations = [defs.location("Master thread", group=g) for g in groups]
        writers = [trace.event_writer_from_location(loc) for loc in locations]
        defs.group("MPI ranks", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locations)
        world_group = defs.group("world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=locations)
        world = defs.comm("MPI_COMM_WORLD", world_group)
        regions = {}

        def region(name, role=RegionRole.FUNCTION, paradigm=Paradigm.MPI):
            if name not in regions:
                regions[name] = defs.region(name, region_role=role, paradigm=paradigm)
            return regions[name]

        script(writers, world, region)


def call(w, region, start, end, inside=()):
    """An MPI call: Enter, its records (callables of a time), Leave."""
    w.enter(start, region)
    for record in inside:
        record()
    w.leave(end, region)


def blocking(writers, world, region):
    """Rank 0 sends 1000 B to rank 1 after 1000 ns, computes 500 ns (in a
    non-MPI region), receives 2000 B; rank 1 computes 2000 ns, receives,
    computes 300 ns, sends 2000 B back."""
    w0, w1 = writers
    init, fin = region("MPI_Init"), region("MPI_Finalize")
    send, recv = region("MPI_Send", P2P), region("MPI_Recv", P2P)
    work = region("work", paradigm=Paradigm.USER)
    call(w0, init, 0, 100)
    call(w0, send, 1100, 1150, [lambda: w0.mpi_send(1100, 1, world, 5, 1000)])
    call(w0, work, 1150, 1650)
    call(w0, recv, 1650, 9000, [lambda: w0.mpi_recv(9000, 1, world, 6, 2000)])
    call(w0, fin, 9000, 9100)
    call(w1, init, 0, 100)
    call(w1, recv, 2100, 2200, [lambda: w1.mpi_recv(2200, 0, world, 5, 1000)])
    call(w1, send, 2500, 2600, [lambda: w1.mpi_send(2500, 0, world, 6, 2000)])
    call(w1, fin, 2600, 2700)


def nonblocking(writers, world, region):
    """Both ranks post an Irecv and an Isend at once (rank 0 sends 4000 B,
    rank 1 3000 B), compute (5000 ns and 1000 ns), Waitall, then an
    8-byte Allreduce; rank 0 then computes 500 ns in a non-MPI region with
    an OpenMP fork record inside (which replay cannot use)."""
    w0, w1 = writers
    init, fin = region("MPI_Init"), region("MPI_Finalize")
    isend, irecv = region("MPI_Isend", P2P), region("MPI_Irecv", P2P)
    waitall = region("MPI_Waitall", P2P)
    allreduce = region("MPI_Allreduce", RegionRole.COLL_ALL2ALL)
    work = region("work", paradigm=Paradigm.USER)
    for rank, w, sent, tag_out, tag_in, received, wait_at in [
        (0, w0, 4000, 8, 7, 3000, 5120),
        (1, w1, 3000, 7, 8, 4000, 1120),
    ]:
        peer = 1 - rank
        call(w, init, 0, 100)
        call(w, irecv, 100, 110, [lambda w=w: w.mpi_irecv_request(100, 1)])
        call(w, isend, 110, 120, [lambda w=w, p=peer, t=tag_out, s=sent: w.mpi_isend(110, p, world, t, s, 2)])
        wait_end = wait_at + 80
        call(w, waitall, wait_at, wait_end, [
            lambda w=w, e=wait_end, p=peer, t=tag_in, s=received: w.mpi_irecv(e, p, world, t, s, 1),
            lambda w=w, e=wait_end: w.mpi_isend_complete(e, 2),
        ])
        coll_end = wait_end + 100
        call(w, allreduce, wait_end, coll_end, [
            lambda w=w, t=wait_end: w.mpi_collective_begin(t),
            lambda w=w, t=coll_end: w.mpi_collective_end(t, CollectiveOp.ALLREDUCE, world, Undefined.UINT32.value, 8, 8),
        ])
        end = coll_end
        if rank == 0:
            call(w, work, coll_end, coll_end + 500, [lambda w=w, t=coll_end: w.omp_fork(t + 10, 2)])
            end = coll_end + 500
        call(w, fin, end, end + 100)


def main():
    out = sys.argv[1]
    for name, script in [("blocking", blocking), ("nonblocking", nonblocking)]:
        archive(os.path.join(out, name), 2, script)


if __name__ == "__main__":
    main()
