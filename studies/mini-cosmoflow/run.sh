#!/usr/bin/env bash
# Mini-CosmoFlow on this machine: 1024 synthetic 32^3 samples, coarsened (summed) to 16^3, then
# baseline.yaml and mrt.yaml under `mpirun -np 2`. Usage: studies/mini-cosmoflow/run.sh [SEEDS...]
STUDY=mini-cosmoflow DATAGEN="cosmoflow-mrt --samples 1024 --size 32 --seed 1" COARSEN="--factor 2 --op sum" \
  exec "$(dirname "$0")/../train_pair.sh" "$@"
