#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fp8lab set-up and run: installs the Debian packages it needs, builds, then opens the lab
# (`./run.sh lab`) or runs the whole test suite (`./run.sh test`).
set -euo pipefail
cd "$(dirname "$0")"

# Compiler and build tools; header-only libraries; Cairo and a font for figure export;
# xmllint, with which the tests check every SVG; the desktop app (GLFW, OpenGL, Dear ImGui,
# md4c, FreeType); Mesa's software OpenGL and Xvfb, in which the tests open a real window;
# pybind11, Python's headers and NumPy for the Python module (built for /usr/bin/python3);
# fortunes, plain English text (quotations, literature, poems) that the transformer trains on.
packages=(build-essential cmake ninja-build pkg-config libcli11-dev doctest-dev libeigen3-dev
          libcairo2-dev fonts-dejavu-core libxml2-utils
          libglfw3-dev libgl-dev libimgui-dev libmd4c-dev libfreetype-dev
          libgl1-mesa-dri libglx-mesa0 xvfb xauth
          pybind11-dev python3-dev python3-numpy librsvg2-bin fortunes)

# The checking stages of the test command: clang for libFuzzer, with its runtime; pytest
# for the Python module's tests, and nbconvert, a kernel and matplotlib for the notebook;
# the validators of the package's desktop entry and AppStream metainfo; venv, pip,
# setuptools and wheel, with which a test runs `pip install .` offline in a fresh venv; the
# American English word list, against which a test reads what the transformer writes.
test_packages=(clang libclang-rt-14-dev python3-pytest python3-nbconvert python3-ipykernel python3-matplotlib
               desktop-file-utils appstream python3-venv python3-pip python3-setuptools python3-wheel wamerican)

install_packages() {
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "fp8lab: installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
  # CUDA is used where the toolkit sits in its usual place; AUTO otherwise decides alone.
  local cuda=()
  [ -x /usr/local/cuda/bin/nvcc ] && cuda=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  cmake --preset default "${cuda[@]}"
  # One compile per core: Ninja's default of two more than the cores took 10-40% longer
  # on a 2-core machine (the compilers' working sets crowd each other out).
  cmake --build --preset default --parallel "$(nproc)"
}

case "${1:-lab}" in
  lab)
    install_packages
    build
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
      echo "fp8lab: no display (DISPLAY is not set), so the desktop lab cannot open here." >&2
      echo "Run ./build/app/fp8lab figures --out out/figures for every figure, or xvfb-run ./build/app/fp8lab gui --tour --screenshots out/tour." >&2
      exit 1
    fi
    exec ./build/app/fp8lab gui
    ;;
  test)
    install_packages "${test_packages[@]}"
    build
    # Every test, as many at a time as there are cores: the exhaustive sweeps spread
    # themselves over all cores and the others fill the gaps.
    ctest --preset default --parallel "$(nproc)"
    # The Debian package, unpacked into a scratch root and run from there.
    tests/package/check-package.sh build
    # The checking stages share one tree, built once by clang with AddressSanitizer and
    # UndefinedBehaviorSanitizer (no CUDA, no Python module: its tests are not unit tests).
    # Debug keeps the assertions; -O1, as the sanitizers' authors advise, runs the suites
    # many times faster than -O0 with the same reports; line tables are all the reports'
    # file:line needs, and compile faster than full debug information.
    start=$SECONDS
    cmake -S . -B build-check -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" \
      -DCMAKE_CXX_COMPILER=clang++ -DFP8LAB_SANITIZE=ON -DFP8LAB_FUZZ=ON -DFP8LAB_CUDA=OFF -DFP8LAB_PYTHON=OFF
    cmake --build build-check --target unit_suites fuzzers --parallel "$(nproc)"
    echo "fp8lab: the checking build took $((SECONDS - start)) s"
    # The unit suites under the sanitizers: any report aborts its test.
    start=$SECONDS
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      LSAN_OPTIONS=suppressions="$PWD/tests/sanitizer/lsan.supp" \
      ctest --test-dir build-check -L unit --output-on-failure --parallel "$(nproc)"
    echo "fp8lab: sanitizer stage took $((SECONDS - start)) s"
    # libFuzzer over everything the program parses, a bounded time per target.
    start=$SECONDS
    tests/fuzz/run-fuzzers.sh build-check 10
    echo "fp8lab: fuzz stage took $((SECONDS - start)) s"
    ;;
  *)
    echo "usage: $0 [lab|test]" >&2
    exit 2
    ;;
esac
