#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian package from a build folder, unpacks it into a scratch root with
# dpkg -x and runs the program from there (lab list, a step, figures, the Python module),
# then validates its desktop entry and AppStream metainfo. Usage: check-package.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
(cd "$build" && cpack -B "$scratch/out" >"$scratch/cpack.log") || { cat "$scratch/cpack.log"; exit 1; }
deb="$(ls "$scratch"/out/fp8lab_*_amd64.deb)"
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB; $(dpkg-deb -f "$deb" Depends)"
dpkg -x "$deb" "$scratch/root"
exe="$scratch/root/usr/bin/fp8lab"
# Nothing may come from the source tree or the build: no data variables, run elsewhere.
cd "$scratch"
env -u FP8LAB_CONTENT_DIR -u FP8LAB_ASSETS_DIR "$exe" labs >"$scratch/labs.txt"
grep -q "formats/bits-to-value" "$scratch/labs.txt"
env -u FP8LAB_CONTENT_DIR -u FP8LAB_ASSETS_DIR "$exe" run training/crossover >"$scratch/run.txt"  # reads a recorded asset
env -u FP8LAB_CONTENT_DIR -u FP8LAB_ASSETS_DIR "$exe" figures --lab formats --out "$scratch/figures" >/dev/null
test -s "$scratch/figures/manifest.json"
site="$(ls -d "$scratch"/root/usr/lib/python3*/dist-packages)"
PYTHONPATH="$site" /usr/bin/python3 -c "import fp8lab, numpy; assert fp8lab.encode(numpy.array([-431.99999999999994]), 'e4m3')[0] == 0xfd"
desktop-file-validate "$scratch"/root/usr/share/applications/*.desktop
appstreamcli validate --no-net "$scratch"/root/usr/share/metainfo/*.metainfo.xml
test -s "$scratch/root/usr/share/icons/hicolor/scalable/apps/io.github.fp8lab.fp8lab.svg"
grep -q "^License: Apache-2.0$" "$scratch/root/usr/share/doc/fp8lab/copyright"
echo "package: unpacked program ran labs, run and figures; desktop entry and metainfo valid, licence Apache-2.0"
