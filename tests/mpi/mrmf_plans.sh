#!/usr/bin/env bash
# MRMF plans under `mpirun -np 2` through the fine-tune to their target (ctest label `mpi`): one and
# two fusions, CosmoFlow and Neuron Inverter, PreciseBN on, and a periodic checkpoint that falls in
# the fine-tune. Each rank trained another model for another number of epochs before the fusion;
# counted per rank, the checkpoint (a collective) fell on one rank alone and the job hung (issue 44).
#   tests/mpi/mrmf_plans.sh MPIEXEC MRPLAN
set -uo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
q() { "$MRPLAN" "$@" --threads 1 > /dev/null 2>&1; }
q datagen cosmoflow-mrt --out "$tmp/cosmo/res1" --samples 48 --size 32 --samples-per-file 16 --seed 1 || fail "datagen cosmoflow"
q datagen neuron-inverter --out "$tmp/ni/res1" --samples 160 --seed 1 || fail "datagen neuron-inverter"
for f in 2 4; do
  q coarsen "$tmp/cosmo/res1" "$tmp/cosmo/res$f" --factor $f --op sum || fail "coarsen cosmoflow $f"
  q coarsen "$tmp/ni/res1" "$tmp/ni/res$f" --workload neuron-inverter --factor $f --op mean || fail "coarsen neuron-inverter $f"
done

# plan APP FUSIONS TARGET: low trains 3 epochs beside high's 2, so the ranks arrive at the fine-tune
# with 3 and 2 epochs (two fusions: 6 and 4), and checkpoint_every 2 falls on one of them. CosmoFlow
# fine-tunes to its target; Neuron Inverter's validation on so few samples only worsens after the
# fine-tune's first epoch, so it trains 3 epochs (past the checkpoint) instead of a target.
plan() {
  local app=$1 fusions=$2 target=$3 workload options="" samples="{train_samples: 32, validation_samples: 16}" batch=4
  if [[ $app == cosmo ]]; then workload=cosmoflow-mrt; options="workload_options: {size: 32, width: 0.25}"
  else workload=neuron-inverter samples="{train_samples: 128, validation_samples: 32}" batch=16; fi
  cat <<YAML
name: $app-mrmf$fusions
workload: $workload
$options
machine: summit
method: mrmf
dataset: $samples
target: {metric: val_mse, value: $target, goal: minimize, precise_bn_batches: 2}
data: {dir: $tmp/$app}
checkpoint_every: 2
stages:
YAML
  local k from=$((fusions * 2))
  for ((k = 1; k <= fusions; ++k)); do
    cat <<YAML
  - name: fusion$k
    optimizer: adam
    learning_rate: 0.001
    models:
      - {name: low, resolution: $from, gpus: 1, local_batch: $batch, stop: {epochs: 3}}
      - {name: high, resolution: $((from / 2)), gpus: 1, local_batch: $batch, init: scratch, stop: {epochs: 2}}
    handoff: {fuse: {bottom_from: low, top_from: high}}
YAML
    from=$((from / 2))
  done
  local stop="{target: true, max_epochs: 6}"
  [[ $app == ni ]] && stop="{epochs: 3}"
  echo "  - {name: finetune, resolution: 1, gpus: 2, local_batch: $batch, optimizer: adam, learning_rate: 0.001, stop: $stop}"
}

# the targets: reached at the fine-tune's second epoch (first 0.327 and 0.342, then 0.309 and 0.315)
for c in cosmo:1:0.318 cosmo:2:0.328 ni:1:0 ni:2:0; do
  IFS=: read -r app fusions target <<< "$c"
  name="$app-mrmf$fusions"
  plan "$app" "$fusions" "$target" > "$tmp/$name.yaml"
  timeout 240 "$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/$name.yaml" --out "$tmp/$name" --threads 1 --watchdog-s 60 > "$tmp/$name.txt" 2>&1 \
    || fail "$name: exit $? (124: the job hung): $(tail -5 "$tmp/$name.txt")"
  /usr/bin/python3 - "$tmp/$name/record.json" "$tmp/$name/mllog.txt" "$fusions" <<'PY' || fail "$name: $(cat "$tmp/$name.txt")"
import json, sys
r = json.load(open(sys.argv[1]))
fusions = int(sys.argv[3])
stages = [s["name"] for s in r["stages"]]
assert stages == [f"fusion{k}" for k in range(1, fusions + 1)] + ["finetune"], stages
ft = r["stages"][-1]["models"][0]
cosmo = r["plan"].startswith("cosmo")
assert ft["stop_reason"] == ("target reached" if cosmo else "epochs"), ft["stop_reason"]
assert len(ft["per_epoch"]) >= 2, "the fine-tune ended before its periodic checkpoint"
assert r["totals"]["reached_target"] == cosmo, r["totals"]
stops = [l for l in open(sys.argv[2]) if '"key": "run_stop"' in l]
assert len(stops) == 1 and ('"success"' if cosmo else '"aborted"') in stops[0], stops
print(f"{r['plan']}: {fusions} fusion(s), fine-tune {len(ft['per_epoch'])} epochs, {ft['stop_reason']}")
PY
done
echo "mrmf plans: 4 runs through the fine-tune (CosmoFlow to its target)"
