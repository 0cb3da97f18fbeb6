#!/usr/bin/env bash
# MRMF beside baseline and MRT on this machine, trained for real under `mpirun -np 2` (a fusion
# stage: one rank per model) to the same target, per seed: synthetic Neuron Inverter (1600/800/400
# time bins) and mini-CosmoFlow (32^3/16^3/8^3). Prints each run and the mean +- sd per plan.
# Usage: studies/mini-mrmf/run.sh [SEEDS...]   (APPS="ni cosmo" and PLANS="baseline mrt mrmf mrmf2" narrow it)
set -euo pipefail
cd "$(dirname "$0")/../.."
source studies/prelude.sh
data=out/mini-mrmf-data
if [[ ! -d $data/ni/res4 ]]; then
  $M datagen neuron-inverter --out $data/ni/res1 --samples 1280 --seed 1
  for f in 2 4; do $M coarsen $data/ni/res1 $data/ni/res$f --workload neuron-inverter --factor $f --op mean; done
fi
if [[ ! -d $data/cosmo/res4 ]]; then
  $M datagen cosmoflow-mrt --out $data/cosmo/res1 --samples 1024 --size 32 --seed 1
  for f in 2 4; do $M coarsen $data/cosmo/res1 $data/cosmo/res$f --factor $f --op sum; done
fi
seeds=("${@:-1}")
for app in ${APPS:-ni cosmo}; do
  for seed in "${seeds[@]}"; do
    for plan in ${PLANS:-baseline mrt mrmf mrmf2}; do
      out=out/mini-mrmf/$app-$plan-seed$seed
      rm -rf "$out"
      mpirun -np 2 $M run studies/mini-mrmf/$app-$plan.yaml --out "$out" --seed "$seed" --quiet
      python3 studies/mini-mrmf/summarize.py "$out/record.json"
    done
  done
done
python3 studies/mini-mrmf/summarize.py out/mini-mrmf/*/record.json --table
