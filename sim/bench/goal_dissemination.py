#!/usr/bin/env python3
"""Writes a dissemination GOAL schedule as LogGOPSim's Schedgen2 writes one
(labels counted across ranks, each round's send requiring the previous
round's receive), fast enough for a million ranks.
usage: goal_dissemination.py RANKS BYTES OUT"""
import sys

n, size, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(out, "w", buffering=1 << 22) as f:
    f.write(f"num_ranks {n}\n")
    label = 0
    for r in range(n):
        lines = [f"\nrank {r} {{"]
        prev, dist, deps = None, 1, []
        while dist < n:
            s, v = label + 1, label + 2
            label += 2
            lines.append(f"l{s}: send {size}b to {(r + dist) % n} tag 42001")
            lines.append(f"l{v}: recv {size}b from {(r - dist) % n} tag 42001")
            if prev is not None:
                deps.append(f"l{s} requires l{prev}")
            prev, dist = v, dist * 2
        lines.extend(deps)
        lines.append("}\n")
        f.write("\n".join(lines))
