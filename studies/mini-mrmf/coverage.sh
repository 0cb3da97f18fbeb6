#!/usr/bin/env bash
# Does the predicted P10-P90 hold the measured runs? The mini-MRMF runs (studies/mini-mrmf/run.sh
# 1 2 3) against the profile of validate.sh with the seed-to-seed spread and the machine's run-to-run
# speed fitted from seeds 1 and 2 of each application; seed 3 is held out of every fit.
# Usage: studies/mini-mrmf/coverage.sh [OUT_DIR]   (default out/mini-mrmf-loop; needs validate.sh's profile)
set -euo pipefail
cd "$(dirname "$0")/../.."
M=./build/release/mrplan
out=${1:-out/mini-mrmf-loop}
runs=out/mini-mrmf
profile=$out/coverage-profile.yaml
cp "$out/local-profile.yaml" "$profile"
for app in cosmo ni; do
  $M calibrate convergence --profile "$profile" $runs/$app-{baseline,mrt,mrmf,mrmf2}-seed{1,2}/record.json | grep -E "seed-to-seed|machine speed"
done
$M validate --profile "$profile" $runs/*/record.json --samples "${SAMPLES:-200}" | sed -n '/measured time to target/,$p' | tee "$out/coverage.txt"
echo "held out (seed 3): $(grep -c 'seed3/record.json .* yes$' "$out/coverage.txt") of $(grep -c 'seed3/record.json' "$out/coverage.txt") inside"
