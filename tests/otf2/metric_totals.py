"""Reads an OTF2 archive with python3-otf2 (the reference library's Python
bindings) and prints, as JSON, each MPI rank's last value of each metric
member: {"RANK": {"MEMBER": value, ...}, ...}. It checks on the way that
every metric event's time lies within its location's records (not before
the previous record) and that accumulated values never decrease.

    /usr/bin/python3 metric_totals.py ARCHIVE/traces.otf2"""

import json
import sys

import otf2
from otf2.enums import GroupType


def main():
    last = {}
    with otf2.reader.open(sys.argv[1]) as trace:
        ranks = next(g for g in trace.definitions.groups if g.group_type == GroupType.COMM_LOCATIONS)
        rank_of = {loc.group: r for r, loc in enumerate(ranks.members)}
        seen = {}
        for location, ev in trace.events:
            if ev.time < seen.get(location, 0):
                print(f"{location.name} of rank {rank_of[location.group]}: a record goes back in time")
                return 1
            seen[location] = ev.time
            if not isinstance(ev, otf2.events.Metric):
                continue
            values = last.setdefault(rank_of[location.group], {})
            for member, value in zip(ev.metric.members, ev.values):
                if value < values.get(member.name, 0):
                    print(f"{member.name} of rank {rank_of[location.group]} decreases")
                    return 1
                values[member.name] = value
    print(json.dumps(last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
