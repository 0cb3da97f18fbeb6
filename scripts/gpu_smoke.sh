#!/usr/bin/env bash
# GPU smoke run for a CUDA site: builds mrplan against the CUDA LibTorch that Python's torch ships
# (unless Torch_DIR is set), generates a small CosmoFlow dataset and trains a one-rank MRT plan on
# the GPU, writing the Measurement to OUT_DIR. Usage: scripts/gpu_smoke.sh OUT_DIR [EXTRA_PREFIX]
set -euo pipefail
out=${1:?usage: scripts/gpu_smoke.sh OUT_DIR [EXTRA_PREFIX]}
extra=${2:-}
cd "$(dirname "$0")/.."
torch_prefix=${Torch_DIR:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')}
build=${BUILD_DIR:-build/gpu}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMRPLAN_WITH_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="${extra:+$extra;}$torch_prefix" > "$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; exit 1; }
grep -E "mrplan:|CUDA" "$out/configure.log" | head -5
cmake --build "$build" -j"$(nproc)" --target mrplan mrplan_allreduce_bench > "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=$build/mrplan
data=$build/smoke-data
if [[ ! -d $data/res2 ]]; then
  $M datagen cosmoflow-mrt --out $data/res1 --samples 1024 --size 32 --seed 1
  $M coarsen $data/res1 $data/res2 --factor 2 --op sum
fi
# the mini-CosmoFlow MRT plan on one rank, a few epochs per stage
sed -e 's/gpus: 2/gpus: 1/' -e 's/local_batch: 8/local_batch: 16/' -e 's/max_epochs: [0-9]*/max_epochs: 4/' \
  studies/mini-cosmoflow/mrt.yaml > "$out/mrt-1gpu.yaml"
for device in cuda cpu; do
  mpirun -np 1 $M run "$out/mrt-1gpu.yaml" --data $data --out "$out/run-$device" --device $device
  cp "$out/run-$device/record.json" "$out/record-$device.json"
done
