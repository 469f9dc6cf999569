#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the header-only dependencies from this Debian machine into deps/include (ignored
# by git), so a GPU server without Debian packages can build with the gpu-server preset,
# and the text the transformer trains on (Debian's fortunes) into deps/fortunes, which
# scripts/gpu-session.sh installs where the GPU tests read it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p deps/include
for dir in /usr/include/CLI /usr/include/doctest; do
  [ -d "$dir" ] || { echo "missing $dir: run ./run.sh test first (it installs them)" >&2; exit 1; }
  cp -r "$dir" deps/include/
done
[ -d /usr/include/eigen3/Eigen ] && cp -r /usr/include/eigen3/Eigen deps/include/
echo "deps/include: $(ls deps/include | tr '\n' ' ')"
fortunes=/usr/share/games/fortunes
[ -d "$fortunes" ] || { echo "missing $fortunes: run ./run.sh test first (it installs fortunes)" >&2; exit 1; }
rm -rf deps/fortunes && cp -r "$fortunes" deps/fortunes
echo "deps/fortunes: $(ls deps/fortunes | wc -l) files"
