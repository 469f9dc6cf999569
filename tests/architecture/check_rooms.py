#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The house's rooms and which way their arrows run: every #include of the project's own files
# must point to a room below the includer's (or its own room), and no two rooms may include
# each other through any path. Prints each include that runs back up, and each cycle.
"""Usage: check_rooms.py [SOURCE_DIR]"""
import re
import sys
from pathlib import Path

# Lowest first. A file may include files of its own room and of rooms earlier in the list;
# rooms on one line are peers and include neither each other nor anything of the others.
ORDER = [
    ["emulator/base"],
    ["emulator/io"],
    ["emulator/formats"],
    ["emulator/scaling"],
    ["emulator/gemm"],
    ["emulator/training"],
    ["emulator/models/mlp", "emulator/models/transformer"],
    ["emulator/models"],
    ["gpu"],  # the GPU library's public headers: what callers see, with or without CUDA
    ["gpu/src/runtime"],
    ["gpu/src/kernels"],
    ["gpu/src/gemm"],
    ["gpu/src/step"],
    ["gpu/src/scaling"],
    ["gpu/src/inference"],
    ["gpu/src/models/mlp", "gpu/src/models/transformer"],
    ["gpu/src/models"],
    ["gpu/src/ops"],
    ["gpu/tools"],
    ["labs"],
    ["app", "python"],
    ["tests"],
]
SOURCES = {".cpp", ".hpp", ".cu", ".cuh", ".h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rank_of(room):
    for rank, peers in enumerate(ORDER):
        if room in peers:
            return rank
    return None


def room_of(path):
    """The longest room of ORDER that holds the path, or None."""
    parts = Path(path).parent.parts
    for n in range(len(parts), 0, -1):
        room = "/".join(parts[:n])
        if rank_of(room) is not None:
            return room
    return None


def check(root):
    root = Path(root)
    problems, arrows = [], {}
    for path in sorted(p for p in root.rglob("*") if p.suffix in SOURCES and p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("build", "deps/", ".git/")):
            continue
        room = room_of(rel)
        if room is None:
            if rel.split("/")[0] in {"emulator", "gpu", "labs", "app", "python"}:
                problems.append(f"{rel}: in no room of tests/architecture/check_rooms.py's ORDER")
            continue
        for included in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            if not (root / included).is_file():
                continue  # a system or generated header
            target = room_of(included)
            if target is None or target == room:
                continue
            arrows.setdefault(room, set()).add(target)
            if rank_of(target) >= rank_of(room):
                way = "a peer" if rank_of(target) == rank_of(room) else "a room above"
                problems.append(f'{rel}: includes "{included}" of {way} ({target} from {room})')
    # Cycles between rooms (the order above already forbids them; this names any that slip by
    # a change to ORDER).
    state = {}

    def visit(room, trail):
        state[room] = "open"
        for target in sorted(arrows.get(room, ())):
            if state.get(target) == "open":
                problems.append("cycle: " + " -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[room] = "done"

    for room in sorted(arrows):
        if room not in state:
            visit(room, [room])
    return problems


if __name__ == "__main__":
    found = check(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    for line in found:
        print(line)
    print(f"check_rooms: {len(found)} problem(s)")
    sys.exit(1 if found else 0)
