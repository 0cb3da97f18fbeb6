#!/usr/bin/env bash
# The loop on the mini-MRMF runs of studies/mini-mrmf/run.sh 1 2 3: a profile from this machine's
# microbenchmarks, learning curves, transfer and fusion efficiency fitted from seeds 1 and 2 of each
# application, then every run validated (seed 3's convergence held out).
# Usage: studies/mini-mrmf/validate.sh [OUT_DIR]   (default out/mini-mrmf-loop)
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=./build/release/mrplan
out=${1:-out/mini-mrmf-loop}
runs=out/mini-mrmf
profile=$out/local-profile.yaml
mkdir -p "$out"
$M calibrate all --profile "$profile" --data out/mini-mrmf-data/cosmo/res1 --workload cosmoflow-mrt:32:0.25,neuron-inverter \
  --ranks 2 --threads 1 --compute-seconds "${COMPUTE_SECONDS:-90}" --sharing-seconds "${SHARING_SECONDS:-40}"
for app in cosmo ni; do
  $M calibrate convergence --profile "$profile" $runs/$app-{baseline,mrt,mrmf,mrmf2}-seed{1,2}/record.json
done
$M validate --profile "$profile" $runs/*/record.json --csv "$out/validation.csv" --plot "$out/validation.png"
