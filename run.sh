#!/usr/bin/env bash
# The main job on built-in defaults: installs what is missing, builds, and runs the what-if
# sweep of CosmoFlow MRT on Summit (switch point x GPU count) with a table, a CSV and a plot.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
cmake --preset release > /dev/null
cmake --build --preset release --target mrplan -- -j"$(nproc)" > /dev/null
mkdir -p out
./build/release/mrplan sweep --csv out/sweep.csv --plot out/sweep.png "$@"
