# Finds the header-only dependencies: Debian's packages first, then FP8LAB_DEPS_DIR.
find_package(Threads REQUIRED)

function(fp8lab_header_only target header package_hint)
  find_path(${target}_INCLUDE_DIR ${header}
            HINTS "${FP8LAB_DEPS_DIR}/include" PATHS /usr/include PATH_SUFFIXES ${ARGN} "")
  if(NOT ${target}_INCLUDE_DIR)
    message(FATAL_ERROR "${header} not found: install ${package_hint} or copy it to "
                        "${FP8LAB_DEPS_DIR}/include (see README, 'Building on a GPU server')")
  endif()
  add_library(fp8lab_dep_${target} INTERFACE)
  target_include_directories(fp8lab_dep_${target} SYSTEM INTERFACE "${${target}_INCLUDE_DIR}")
  add_library(fp8lab::${target} ALIAS fp8lab_dep_${target})
endfunction()

fp8lab_header_only(cli11 CLI/CLI.hpp libcli11-dev)
fp8lab_header_only(doctest doctest/doctest.h doctest-dev)
fp8lab_header_only(eigen Eigen/Dense libeigen3-dev eigen3)

# CUDA's host conversion functions (cuda_fp8.h ...) compile with plain g++: the tests and
# the emulator benchmark use them as an oracle wherever the toolkit's headers exist.
find_path(FP8LAB_CUDA_HOST_INCLUDE cuda_fp8.h
          PATHS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include NO_DEFAULT_PATH)
