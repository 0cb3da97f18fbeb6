#!/usr/bin/env bash
# Mini-DeepCAM on this machine: 448 synthetic 64x96 samples, coarsened (averaged) to 32x48 with
# the masks kept at 64x96, then baseline.yaml and mrt.yaml under `mpirun -np 2`.
# Usage: studies/mini-deepcam/run.sh [SEEDS...]
STUDY=mini-deepcam DATAGEN="deepcam --samples 448 --size 64 --seed 1" COARSEN="--factor 2 --op mean --workload deepcam" \
  exec "$(dirname "$0")/../train_pair.sh" "$@"
