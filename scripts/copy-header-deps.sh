#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the header-only dependencies from this Debian machine into deps/include (ignored
# by git), so a GPU server without Debian packages can build with the gpu-server preset.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p deps/include
for dir in /usr/include/CLI /usr/include/doctest; do
  [ -d "$dir" ] || { echo "missing $dir: run ./run.sh test first (it installs them)" >&2; exit 1; }
  cp -r "$dir" deps/include/
done
[ -d /usr/include/eigen3/Eigen ] && cp -r /usr/include/eigen3/Eigen deps/include/
echo "deps/include: $(ls deps/include | tr '\n' ' ')"
