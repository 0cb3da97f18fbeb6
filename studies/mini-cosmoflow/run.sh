#!/usr/bin/env bash
# Mini-CosmoFlow on this machine: synthetic data, coarsening, then the baseline and the MRT plan
# trained for real under `mpirun -np 2`, each writing a Measurement record; finally mrplan's
# own prediction of the same plans for comparison. Usage: studies/mini-cosmoflow/run.sh [SEEDS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
./scripts/setup.sh
cmake --preset release > /dev/null
cmake --build --preset release --target mrplan -- -j"$(nproc)" > /dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=./build/release/mrplan
data=out/mini-cosmoflow-data
if [[ ! -d $data/res2 ]]; then
  $M datagen cosmoflow-mrt --out $data/res1 --samples 1024 --size 32 --seed 1
  $M coarsen $data/res1 $data/res2 --factor 2 --op sum
fi
seeds=("${@:-1}")
for seed in "${seeds[@]}"; do
  for plan in baseline mrt; do
    out=out/mini-cosmoflow/$plan-seed$seed
    rm -rf "$out"
    start=$(date +%s.%N)
    mpirun -np 2 $M run studies/mini-cosmoflow/$plan.yaml --out "$out" --seed "$seed" --quiet
    end=$(date +%s.%N)
    python3 - "$out/record.json" "$plan" "$seed" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["stages"]
sw = s[0].get("switch_epoch")
print(f"{sys.argv[2]:8s} seed {sys.argv[3]}: wall {float(sys.argv[5]) - float(sys.argv[4]):6.1f} s, "
      f"time to target {r['totals']['time_to_target_s']:6.1f} s, epochs {[st['epochs'] for st in s]}, "
      f"switch {sw}, reached {r['totals']['reached_target']}, final val {s[-1]['per_epoch'][-1]['metric']:.4f}")
PY
  done
done
