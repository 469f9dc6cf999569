# SPDX-License-Identifier: Apache-2.0
# Finds the header-only dependencies: Debian's packages first, then FP8LAB_DEPS_DIR.
find_package(Threads REQUIRED)

include(${CMAKE_CURRENT_LIST_DIR}/HeaderOnly.cmake)

fp8lab_header_only(cli11 CLI/CLI.hpp libcli11-dev)
fp8lab_header_only(doctest doctest/doctest.h doctest-dev)
fp8lab_header_only(eigen Eigen/Dense libeigen3-dev eigen3)

# CUDA's host conversion functions (cuda_fp8.h ...) compile with plain g++: the tests and
# the emulator benchmark use them as an oracle wherever the toolkit's headers exist.
find_path(FP8LAB_CUDA_HOST_INCLUDE cuda_fp8.h
          PATHS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include NO_DEFAULT_PATH)
