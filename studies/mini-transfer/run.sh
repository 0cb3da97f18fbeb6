#!/usr/bin/env bash
# Transfer learning beside training from scratch and MRT, trained for real under `mpirun -np 2` to
# the same target, per seed: synthetic mini-CosmoFlow (32^3). The pretrained model is trained once,
# for 8 epochs, on a differently seeded synthetic dataset (seed 2: other fields, other cosmological
# parameters; cosmo-pretrain.yaml); each plan then trains on the target dataset (seed 1). Prints each run,
# the mean +- sd per plan, and `calibrate convergence`'s fit of the pretrained model's head start.
# Usage: studies/mini-transfer/run.sh [SEEDS...]   (PLANS="baseline mrt transfer transfer-frozen" narrows it)
set -euo pipefail
cd "$(dirname "$0")/../.."
source studies/prelude.sh
data=out/mini-transfer-data
for set in target:1 related:2; do
  name=${set%:*} seed=${set#*:}
  if [[ ! -d $data/$name/res2 ]]; then
    $M datagen cosmoflow-mrt --out $data/$name/res1 --samples 1024 --size 32 --seed "$seed"
    $M coarsen $data/$name/res1 $data/$name/res2 --factor 2 --op sum
  fi
done
pre=out/mini-transfer/pretrained
if [[ ! -f $pre/model.pt ]]; then
  rm -rf "$pre"
  mpirun -np 2 $M run studies/mini-transfer/cosmo-pretrain.yaml --out "$pre" --seed 1 --quiet
fi
seeds=("${@:-1}")
for seed in "${seeds[@]}"; do
  for plan in ${PLANS:-baseline mrt transfer transfer-frozen}; do
    out=out/mini-transfer/cosmo-$plan-seed$seed
    rm -rf "$out"
    mpirun -np 2 $M run studies/mini-transfer/cosmo-$plan.yaml --out "$out" --seed "$seed" --quiet
    python3 studies/mini-mrmf/summarize.py "$out/record.json"
  done
done
python3 studies/mini-mrmf/summarize.py out/mini-transfer/cosmo-*-seed*/record.json --table
# the head start, fitted from the transfer runs against the baselines and MRT runs (into a copy of
# a built-in profile), and the transfer plan predicted with it
prof=out/mini-transfer/profile.yaml
$M profile summit > "$prof"
runs=(out/mini-transfer/cosmo-{baseline,mrt,transfer}-seed*/record.json)
$M calibrate convergence "${runs[@]}" --profile "$prof"
$M predict studies/mini-transfer/cosmo-transfer.yaml --machine "$prof" --samples 0 | grep -E "epochs|time to target"
