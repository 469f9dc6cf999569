#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pip install .` as a student runs it, offline: a copy of the source (the files git
# tracks or would add), a fresh virtual environment of PYTHON with the system's packages
# (setuptools, wheel, pybind11's CMake files, NumPy), --no-build-isolation --no-index; then
# the source copy is removed, and the installed module runs a lab step from the lab texts it
# carries, the READMEs' examples (tests/python/test_readme_examples.py) and has the package
# metadata. Differences from a student's install: the module is compiled without
# optimisation and as a unity build (CMAKE_ARGS, which setup.py passes to CMake), and by
# clang where it is installed (./run.sh test installs it). The release tree compiles the
# same sources optimised with the default compiler and python_tests runs that module;
# optimising them a second time here was 60 of this test's 145 CPU seconds, and its
# examples run in about a second either way; the unity build then took the compile from 85
# to 54 CPU seconds (pybind11's headers parsed once for the module's five files, not five
# times); clang took the whole install from 105-117 CPU seconds to 72-74 (GCC's front end
# is the slower at -O0).
# Skipped (77) where venv, pip or git is missing. Usage: pip_install.sh SOURCE PYTHON
set -euo pipefail
source="$(cd "$1" && pwd)"
python="$2"
if ! "$python" -c "import venv, ensurepip" 2>/dev/null; then
  echo "skipped: $python has no venv and pip (Debian: python3-venv, python3-pip)"
  exit 77
fi
if ! git -C "$source" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "skipped: $source is not a git checkout (the file list comes from git)"
  exit 77
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/src"
(cd "$source" && git ls-files -z --cached --others --exclude-standard |
   while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
   xargs -0 cp --parents -t "$scratch/src")
"$python" -m venv --system-site-packages "$scratch/venv"
venv_python="$scratch/venv/bin/python"
cmake_args="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_UNITY_BUILD=ON"
compiler="the default C++ compiler"
if command -v clang++ >/dev/null 2>&1; then
  cmake_args="$cmake_args -DCMAKE_CXX_COMPILER=clang++"
  compiler="clang++"
fi
echo "pip install: compiling the module with $compiler, unoptimised"
(cd "$scratch" && CMAKE_ARGS="$cmake_args" "$venv_python" -m pip install --no-build-isolation --no-index --no-cache-dir --quiet "$scratch/src")
cd "$scratch"
# The installed package needs nothing of its source: run_step reads the lab texts it carries.
rm -rf "$scratch/src"
# The module comes from the environment, not from a build folder on PYTHONPATH.
env -u PYTHONPATH "$venv_python" - "$scratch/venv" <<'PY'
import importlib.metadata, pathlib, sys
import fp8lab
assert pathlib.Path(fp8lab.__file__).is_relative_to(pathlib.Path(sys.argv[1])), fp8lab.__file__
meta = importlib.metadata.metadata("fp8lab")
assert meta["Version"] == fp8lab.__version__, (meta["Version"], fp8lab.__version__)
assert meta["License"] == "Apache-2.0", meta["License"]
step = fp8lab.run_step("formats", "special-values")
assert step["tables"] and step["exercise"]["prompt"], step
assert fp8lab.run_step("tensor-core", "tensor-cores")["tables"], "the recorded measurement (assets/) is missing"
print(f"pip install: fp8lab {fp8lab.__version__} for Python {sys.version.split()[0]} in a fresh venv, "
      f"licence {meta['License']}")
PY
env -u PYTHONPATH "$venv_python" -m pytest -q -p no:cacheprovider "$source/tests/python/test_readme_examples.py"
