#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_rooms.py finds what it is for: an include that runs back up, one between peers, and
# a file outside every room, in a small tree made for the purpose; a clean tree passes.
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from check_rooms import check  # noqa: E402


def tree(files):
    root = Path(tempfile.mkdtemp())
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


clean = {"emulator/base/a.hpp": "", "emulator/training/b.hpp": '#include "emulator/base/a.hpp"\n'}
assert check(tree(clean)) == [], check(tree(clean))
up = dict(clean, **{"emulator/base/c.hpp": '#include "emulator/training/b.hpp"\n'})
assert any("a room above" in p for p in check(tree(up))), check(tree(up))
peers = {"emulator/models/mlp/m.hpp": '#include "emulator/models/transformer/t.hpp"\n',
         "emulator/models/transformer/t.hpp": ""}
assert any("a peer" in p for p in check(tree(peers))), check(tree(peers))
stray = {"emulator/attic/x.hpp": ""}
assert any("in no room" in p for p in check(tree(stray))), check(tree(stray))
print("check_rooms self-test: 4 cases")
