"""Writes two small OTF2 archives with python3-otf2 (the reference
library's own Python bindings), independently of pnmpi's exporter, for
tests/otf2.rs: known compute intervals and messages whose replay under the
`simple` model is computed by hand in the test.

    /usr/bin/python3 write_archives.py OUT_DIR

writes OUT_DIR/blocking/traces.otf2, OUT_DIR/nonblocking/traces.otf2 and
OUT_DIR/rma/traces.otf2 (one-sided calls as Score-P records them). Times
are ns (a 1 GHz timer)."""

import os
import sys

import otf2
from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole, RmaSyncLevel, Undefined

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

        script(writers, world, region, defs)


def call(w, region, start, end, inside=()):
    """An MPI call: Enter, its records (callables of a time), Leave."""
    w.enter(start, region)
    for record in inside:
        record()
    w.leave(end, region)


def blocking(writers, world, region, _defs):
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


def nonblocking(writers, world, region, _defs):
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


def rma(writers, world, region, defs):
    """Score-P's records of a fence epoch: both ranks create a window over
    MPI_COMM_WORLD, fence, rank 0 puts 1000 B into rank 1's window and
    then 500 B with MPI_Rput (waited for), both fence again and free it.
    The calls' own durations are the tracer's, not the replay's."""
    w0, w1 = writers
    win = defs.rma_win("window", world)
    init, fin = region("MPI_Init"), region("MPI_Finalize")
    create, free = region("MPI_Win_create", RegionRole.COLL_ALL2ALL), region("MPI_Win_free", RegionRole.COLL_ALL2ALL)
    fence = region("MPI_Win_fence", RegionRole.BARRIER)
    put, rput = region("MPI_Put", RegionRole.RMA), region("MPI_Rput", RegionRole.RMA)
    wait = region("MPI_Wait", P2P)
    sync = RmaSyncLevel.PROCESS | RmaSyncLevel.MEMORY
    none = Undefined.UINT32.value

    def collective(w, op, t0, t1, inside=()):
        return [lambda: w.rma_collective_begin(t0), *inside,
                lambda: w.rma_collective_end(t1, op, sync, win, none, 0, 0)]

    for rank, w in [(0, w0), (1, w1)]:
        call(w, init, 0, 100)
        call(w, create, 200, 300, collective(w, CollectiveOp.CREATE_HANDLE, 200, 300, [lambda w=w: w.rma_win_create(300, win)]))
        call(w, fence, 400, 500, collective(w, CollectiveOp.BARRIER, 400, 500))
        t = 500
        if rank == 0:
            call(w, put, 600, 610, [lambda: w.rma_put(600, win, 1, 1000, 7)])
            call(w, rput, 700, 710, [lambda: w.rma_put(700, win, 1, 500, 8)])
            call(w, wait, 800, 900, [lambda: w.rma_op_complete_non_blocking(900, win, 8)])
            t = 900
        done = [lambda w=w: w.rma_op_complete_blocking(t + 150, win, 7), lambda w=w: w.rma_op_complete_blocking(t + 150, win, 8)]
        call(w, fence, t + 100, t + 200, collective(w, CollectiveOp.BARRIER, t + 100, t + 200, done if rank == 0 else []))
        call(w, free, t + 300, t + 400, collective(w, CollectiveOp.DESTROY_HANDLE, t + 300, t + 400, [lambda w=w, e=t + 400: w.rma_win_destroy(e, win)]))
        call(w, fin, t + 500, t + 600)


def main():
    out = sys.argv[1]
    for name, script in [("blocking", blocking), ("nonblocking", nonblocking), ("rma", rma)]:
        archive(os.path.join(out, name), 2, script)


if __name__ == "__main__":
    main()
