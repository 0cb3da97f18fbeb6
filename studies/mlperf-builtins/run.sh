#!/usr/bin/env bash
# Leave one system out, for the built-in machines (docs/validation/mlperf-scaling.md, "Every MLPerf
# system a built-in machine"): each machine of data/mlperf_fits.yaml fitted as the build fits it, but
# as if its logs were not there (neither its own runs nor in any population: it borrows like a
# built-in without runs, `mrplan-fit-builtins --leave-out`), predicting its runs; beside it, the
# built-in fitted to them. About 13 minutes (eight builds' fits).
#   studies/mlperf-builtins/run.sh [BUILD_DIR]   (build/default; writes out/mlperf-builtins/)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build/default}
M=$B/mrplan F=$B/cli/mrplan-fit-builtins
LOGS=${MLPERF_LOGS:-../shared/mlperf-logs} OUT=${MLPERF_BUILTINS_OUT:-out/mlperf-builtins}
# machine|folder (under the logs, or in the repository)|ingest flags: data/mlperf_fits.yaml as the build reads it
folders() { $F "$LOGS" data/mlperf_fits.yaml --list-folders; }
rm -rf "$OUT" && mkdir -p "$OUT"
folders | while IFS='|' read -r m f flags; do
  mkdir -p "$OUT/$m/runs"
  name=${f#"$LOGS"/} && name=${name#"$PWD"/}
  # shellcheck disable=SC2086  # the flags are words
  $M ingest-mllog $flags --machine "$m" --out "$OUT/$m/runs/$(echo "$name" | tr / _)" "$f"/result_*.txt >> "$OUT/$m/ingest.txt"
done
for d in "$OUT"/*/; do
  m=$(basename "$d")
  $F "$LOGS" data/mlperf_fits.yaml --leave-out "$m" > "$d/all.yaml" 2> "$d/fit.log"
  # its profile: the document that starts with its name
  /usr/bin/python3 -c '
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
open(sys.argv[3], "w").write(next(d for d in docs if d.startswith("name: %s\n" % sys.argv[2])))' "$d/all.yaml" "$m" "$d/left-out.yaml"
  $M validate --profile "$d/left-out.yaml" --samples 200 "$d"/runs/*/*.record.json > "$d/left-out.txt"
  $M validate --profile "$m" --samples 200 "$d"/runs/*/*.record.json > "$d/own.txt"
done
/usr/bin/python3 studies/mlperf-builtins/summarize.py "$OUT" | tee "$OUT/summary.md"
