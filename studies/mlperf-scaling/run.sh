#!/usr/bin/env bash
# Strong-scaling pairs from the public MLPerf HPC logs (../shared/mlperf-logs): for each system with
# two GPU counts of one benchmark, ingest both runs, `calibrate records` on the smaller run's three
# logs, predict the larger run's steady epoch, and compare with its logs and with linear scaling.
# Usage: studies/mlperf-scaling/run.sh [M=mrplan binary] (from the repository root; writes out/mlperf-scaling/)
set -euo pipefail
M=${1:-}
if [ -z "$M" ]; then source studies/prelude.sh; fi
LOGS=${MLPERF_LOGS:-../shared/mlperf-logs}
OUT=out/mlperf-scaling
rm -rf "$OUT" && mkdir -p "$OUT"
# name | benchmark | small run's folder | large run's folder | GPUs per node (system JSON)
PAIRS="dgxa100-cosmoflow|cosmoflow|v2.0/NVIDIA/dgxa100_n512_pytorch|v2.0/NVIDIA/dgxa100_n64_pytorch|8
dgxa100-deepcam|deepcam|v2.0/NVIDIA/dgxa100_n512_pytorch|v2.0/NVIDIA/dgxa100_n256_pytorch|8
horeka-deepcam|deepcam|v2.0/HelmholtzAI/horeka_gpu_n64_pytorch1.13|v2.0/HelmholtzAI/horeka_gpu_n512_pytorch1.13|4
juwels-deepcam|deepcam|v2.0/HelmholtzAI/juwelsbooster_gpu_n128_pytorch1.13|v2.0/HelmholtzAI/juwelsbooster_gpu_n2048_pytorch1.13|4
eos-cosmoflow|cosmoflow|v3.0/NVIDIA/eos_n256_ngc23.09_pytorch|v3.0/NVIDIA/eos_n64_ngc23.09_pytorch|8
perlmutter-cosmoflow|cosmoflow|v1.0/LBNL/perlmutter_10x128x4_ngc21.09_mxnet|v1.0/LBNL/perlmutter_256x4_ngc21.09_mxnet|4
perlmutter-deepcam|deepcam|v1.0/LBNL/perlmutter_10x128x4_ngc21.09_pytorch|v1.0/LBNL/perlmutter_512x4_ngc21.09_pytorch|4"
while IFS='|' read -r name bench small large per_node; do
  d="$OUT/$name"
  mkdir -p "$d/small" "$d/large"
  # the prior: mrplan's Perlmutter profile (A100) with the system's GPUs per node
  $M profile perlmutter | sed "s/^gpus_per_node: .*/gpus_per_node: $per_node/" > "$d/prior.yaml"
  $M ingest-mllog --machine "$d/prior.yaml" --out "$d/small" "$LOGS/$small/$bench"/result_*.txt > "$d/ingest.txt"
  $M ingest-mllog --machine "$d/prior.yaml" --out "$d/large" "$LOGS/$large/$bench"/result_*.txt >> "$d/ingest.txt"
  $M calibrate records --profile "$d/prior.yaml" --out "$d/fitted.yaml" "$d"/small/*.record.json > "$d/calibrate.txt"
  first=$(ls "$d"/large/*.record.json | head -1)
  /usr/bin/python3 -c "import json,sys; open(sys.argv[2],'w').write(json.load(open(sys.argv[1]))['plan_spec'])" "$first" "$d/large-plan.yaml"
  $M predict "$d/large-plan.yaml" --machine "$d/fitted.yaml" --samples 0 --epochs --json "$d/predicted.json" > "$d/predict.txt"
done <<< "$PAIRS"
/usr/bin/python3 studies/mlperf-scaling/summarize.py "$OUT" | tee "$OUT/summary.md"
