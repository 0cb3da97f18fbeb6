#!/usr/bin/env bash
# Strong-scaling pairs from the public MLPerf HPC logs (../shared/mlperf-logs): for each system with
# two GPU counts of one benchmark (systems.txt), compose its profile from the parts its system JSON
# lists, ingest both runs, `calibrate records` on the smaller run's three
# logs, predict the larger run's steady epoch, and compare with its logs and with linear scaling.
# Usage: studies/mlperf-scaling/run.sh [M=mrplan binary] (from the repository root; writes out/mlperf-scaling/)
set -euo pipefail
M=${1:-}
if [ -z "$M" ]; then source studies/prelude.sh; fi
LOGS=${MLPERF_LOGS:-../shared/mlperf-logs}
OUT=out/mlperf-scaling
rm -rf "$OUT" && mkdir -p "$OUT"
grep -v '^#' studies/mlperf-scaling/systems.txt | while IFS='|' read -r name bench small large compose ingest; do
  d="$OUT/$name"
  mkdir -p "$d/small" "$d/large"
  # the prior: the system composed from its parts, as its system JSON lists them (systems.txt)
  eval "$M profile compose --name $name $compose --out $d/prior.yaml" > /dev/null
  $M ingest-mllog $ingest --machine "$d/prior.yaml" --out "$d/small" "$LOGS/$small/$bench"/result_*.txt > "$d/ingest.txt"
  $M ingest-mllog $ingest --machine "$d/prior.yaml" --out "$d/large" "$LOGS/$large/$bench"/result_*.txt >> "$d/ingest.txt"
  $M calibrate records --profile "$d/prior.yaml" --out "$d/fitted.yaml" "$d"/small/*.record.json > "$d/calibrate.txt"
  first=$(ls "$d"/large/*.record.json | head -1)
  /usr/bin/python3 -c "import json,sys; open(sys.argv[2],'w').write(json.load(open(sys.argv[1]))['plan_spec'])" "$first" "$d/large-plan.yaml"
  $M predict "$d/large-plan.yaml" --machine "$d/fitted.yaml" --samples 0 --epochs --json "$d/predicted.json" > "$d/predict.txt"
done
/usr/bin/python3 studies/mlperf-scaling/summarize.py "$OUT" | tee "$OUT/summary.md"
