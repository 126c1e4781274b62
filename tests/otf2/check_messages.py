"""Reads an OTF2 archive with python3-otf2 (the reference library's Python
bindings) and checks that every message has its matching send and receive:
for each (sender, receiver, communicator, tag), as many sends
(MpiSend, MpiIsend) as receives (MpiRecv, MpiIrecv), in the same order,
each receive at least as large as its send.

    /usr/bin/python3 check_messages.py ARCHIVE/traces.otf2

Prints "ok: N messages matched" and exits 0, or names the first mismatch
and exits 1."""

import collections
import sys

import otf2
from otf2.enums import GroupType


def main():
    sends = collections.defaultdict(list)
    recvs = collections.defaultdict(list)
    with otf2.reader.open(sys.argv[1]) as trace:
        ranks = next(g for g in trace.definitions.groups if g.group_type == GroupType.COMM_LOCATIONS)
        rank_of = {loc: r for r, loc in enumerate(ranks.members)}
        group_rank = {loc.group: r for loc, r in rank_of.items()}

        def world(comm, local, me):
            if comm.group.group_type == GroupType.COMM_SELF:
                return me
            return rank_of[comm.group.members[local]]

        for location, ev in trace.events:
            me = group_rank[location.group]
            if isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                to = world(ev.communicator, ev.receiver, me)
                sends[(me, to, ev.communicator.name, ev.msg_tag)].append(ev.msg_length)
            elif isinstance(ev, (otf2.events.MpiRecv, otf2.events.MpiIrecv)):
                frm = world(ev.communicator, ev.sender, me)
                recvs[(frm, me, ev.communicator.name, ev.msg_tag)].append(ev.msg_length)
    total = 0
    for key in sorted(set(sends) | set(recvs)):
        s, r = sends.get(key, []), recvs.get(key, [])
        if len(s) != len(r):
            print(f"{key} (sender, receiver, comm, tag): {len(s)} sends, {len(r)} receives")
            return 1
        for i, (a, b) in enumerate(zip(s, r)):
            if b < a:
                print(f"{key} message {i}: {a} bytes sent into a {b}-byte receive")
                return 1
        total += len(s)
    if total == 0:
        print("no messages in the archive")
        return 1
    print(f"ok: {total} messages matched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
