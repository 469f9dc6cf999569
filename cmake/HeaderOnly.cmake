# SPDX-License-Identifier: Apache-2.0
# fp8lab_header_only(): a header-only dependency found in Debian's place or FP8LAB_DEPS_DIR.
function(fp8lab_header_only target header package_hint)
  find_path(${target}_INCLUDE_DIR ${header}
            HINTS "${FP8LAB_DEPS_DIR}/include" PATHS /usr/include PATH_SUFFIXES ${ARGN} "")
  if(NOT ${target}_INCLUDE_DIR)
    message(FATAL_ERROR "${header} not found: install ${package_hint} or copy it to "
                        "${FP8LAB_DEPS_DIR}/include (see docs/gpu-backend.md, 'Building on a GPU server')")
  endif()
  add_library(fp8lab_dep_${target} INTERFACE)
  target_include_directories(fp8lab_dep_${target} SYSTEM INTERFACE "${${target}_INCLUDE_DIR}")
  add_library(fp8lab::${target} ALIAS fp8lab_dep_${target})
endfunction()
