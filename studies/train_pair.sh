#!/usr/bin/env bash
# The baseline and the MRT plan of one mini study, trained for real under `mpirun -np 2` on
# synthetic data (generated and coarsened once), each writing a Measurement record.
# Called by studies/mini-*/run.sh with STUDY, DATAGEN and COARSEN set. Usage: ... [SEEDS...]
set -euo pipefail
cd "$(dirname "$0")/.."
source studies/prelude.sh
data=out/$STUDY-data
if [[ ! -d $data/res2 ]]; then
  $M datagen $DATAGEN --out $data/res1
  $M coarsen $data/res1 $data/res2 $COARSEN
fi
seeds=("${@:-1}")
for seed in "${seeds[@]}"; do
  for plan in baseline mrt; do
    out=out/$STUDY/$plan-seed$seed
    rm -rf "$out"
    start=$(date +%s.%N)
    mpirun -np 2 $M run studies/$STUDY/$plan.yaml --out "$out" --seed "$seed" --quiet
    end=$(date +%s.%N)
    python3 - "$out/record.json" "$plan" "$seed" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = [st["models"][0] for st in r["stages"]]  # baseline and MRT stages train one model
sw = s[0].get("switch_epoch")
print(f"{sys.argv[2]:8s} seed {sys.argv[3]}: wall {float(sys.argv[5]) - float(sys.argv[4]):6.1f} s, "
      f"time to target {r['totals']['time_to_target_s']:6.1f} s, epochs {[st['epochs'] for st in s]}, "
      f"iterations {[st['iterations'] for st in s]}, switch {sw}, reached {r['totals']['reached_target']}, "
      f"final {r['target']['metric']} {s[-1]['per_epoch'][-1]['metric']:.4f}")
PY
  done
done
