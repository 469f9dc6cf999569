#!/usr/bin/env bash
# Checks that every place naming fp8lab's licence says Apache-2.0; --add gives a source its line.
# SPDX-License-Identifier: Apache-2.0
# Sources carry "SPDX-License-Identifier: Apache-2.0" in their first three lines (first, or
# after the shebang); LICENSE, the Debian copyright
# file, the AppStream metainfo and the Python package's metadata name the same licence.
set -euo pipefail
cd "$(dirname "$0")/.."
spdx="SPDX-License-Identifier: Apache-2.0"
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "licence check skipped: not a git checkout (the file list comes from git)"
    exit 77
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
                         '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.py' '*.sh' '*.cmake' '*CMakeLists.txt' \
                         '.ci/run' 'run.sh' 'pyproject.toml' |
                     sort -u | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)

comment_for() {
    case "$1" in
        *.cpp | *.hpp | *.cu | *.cuh | *.h) echo "// $spdx" ;;
        *) echo "# $spdx" ;;
    esac
}

if [[ "${1:-}" == "--add" ]]; then
    for f in "${files[@]}"; do
        head -n 3 "$f" | grep -q "$spdx" && continue
        line="$(comment_for "$f")"
        # First, or right after a shebang: a description comment of several lines stays whole.
        at=0
        [[ "$(head -c 2 "$f")" == "#!" ]] && at=1
        tmp="$(mktemp)"
        { head -n "$at" "$f"; echo "$line"; tail -n +"$((at + 1))" "$f"; } > "$tmp"
        chmod --reference="$f" "$tmp"
        mv "$tmp" "$f"
    done
    exit 0
fi

status=0
# One awk over every source, reading three lines of each (a process per file was most of
# this check's 11 CPU seconds); awk sees no line of an empty file, so those are listed here.
missing="$(
    for f in "${files[@]}"; do [[ -s "$f" ]] || echo "$f"; done
    awk -v spdx="$spdx" '
        FNR == 1 { if (NR > 1 && !found) print name; name = FILENAME; found = 0 }
        FNR <= 3 && index($0, spdx) { found = 1 }
        FNR >= 3 { nextfile }
        END { if (NR > 0 && !found) print name }' "${files[@]}"
)"
if [[ -n "$missing" ]]; then
    while IFS= read -r f; do
        echo "$f: no '$spdx' in its first three lines (scripts/licence.sh --add adds it)"
    done <<< "$missing"
    status=1
fi
expect() { # FILE PATTERN WHAT
    if ! grep -q -- "$2" "$1"; then
        echo "$1: does not say $3"
        status=1
    fi
}
expect LICENSE "^$spdx$" "$spdx"
expect LICENSE "Apache License, Version 2.0" "Apache License, Version 2.0"
expect packaging/copyright "^License: Apache-2.0$" "License: Apache-2.0"
expect packaging/copyright "/usr/share/common-licenses/Apache-2.0" "where Debian keeps the licence's text"
expect packaging/io.github.fp8lab.fp8lab.metainfo.xml "<project_license>Apache-2.0</project_license>" "<project_license>Apache-2.0</project_license>"
if [[ -f pyproject.toml ]]; then
    expect pyproject.toml '^license = { text = "Apache-2.0" }$' 'license = { text = "Apache-2.0" }'
    expect pyproject.toml '"License :: OSI Approved :: Apache Software License"' "the Apache classifier"
fi
if [[ $status -eq 0 ]]; then
    echo "licence check: ${#files[@]} sources, LICENSE, the Debian copyright file, the metainfo and the Python metadata all say Apache-2.0"
fi
exit $status
