#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Formats the C++ and CUDA sources with the root .clang-format; --check only reports.
# The style is pinned to clang-format 14 (Debian 12's): other versions lay some
# constructs out differently, so --check on another version reports itself skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
pinned=14
if ! command -v clang-format > /dev/null; then
    echo "format check skipped: clang-format is not installed (apt-get install clang-format)"
    exit 77
fi
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "format check skipped: not a git checkout (the file list comes from git)"
    exit 77
fi
version=$(clang-format --version | sed -E 's/.*version ([0-9]+).*/\1/')
# Tracked files and new ones git does not ignore: a file not yet added is checked too.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' |
                     sort -u | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)
if [[ "${1:-}" == "--check" ]]; then
    if [[ "$version" != "$pinned" ]]; then
        echo "format check skipped: clang-format $version here, the style is pinned to $pinned"
        exit 77
    fi
    clang-format --dry-run -Werror "${files[@]}"
    echo "format check: ${#files[@]} files as .clang-format lays them out"
else
    clang-format -i "${files[@]}"
fi
