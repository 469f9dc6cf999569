#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Executes a notebook headless with Debian's python3 and nbconvert; skipped (77) where
# nbconvert or its kernel is not installed. Usage: run_notebook.sh NOTEBOOK OUTPUT_DIR
set -euo pipefail
if ! /usr/bin/python3 -c "import nbconvert, ipykernel, matplotlib" 2>/dev/null; then
  echo "skipped: python3-nbconvert, python3-ipykernel and python3-matplotlib are needed to run $1"
  exit 77
fi
mkdir -p "$2"
exec /usr/bin/python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 --output-dir "$2" "$1"
