#!/usr/bin/env bash
# GPU check for a CUDA site (the lent device machine here): builds mrplan against the CUDA LibTorch
# that Python's torch ships, then, each step logged and time-limited:
#   1. one cosmoflow-mrt training step, mrplan against PyTorch on the GPU (32^3 and 64^3, batch 8);
#   2. mini-CosmoFlow baseline and MRT on one GPU (studies/mini-cosmoflow with gpus 1, batch 16);
#   3. mini-DeepCAM baseline and MRT on one GPU;
#   4. `calibrate all --device cuda` from microbenchmarks, then `validate` of the runs of 2 and 3;
#   5. `calibrate allreduce --device cuda` on one rank: the NCCL communicator's set-up and collectives.
# Usage: [STEP_ROUNDS=2] [CAL_BATCHES="4 8 16"] scripts/gpu_check.sh OUT_DIR. Where the machine lacks the build's Debian libraries, put
# their .deb files in .gpu/debs (Debian 12): they are unpacked without overwriting any file.
set -uo pipefail
out=${1:?usage: scripts/gpu_check.sh OUT_DIR}
mkdir -p "$out"
cd "$(dirname "$0")/.."
log() { echo "== $(date +%T) $*" | tee -a "$out/summary.txt"; }
step() {  # step NAME SECONDS CMD...: runs CMD with a limit, its output in NAME.log, the verdict in summary.txt
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  log "$name: exit $rc after $((SECONDS - t0)) s"
  tail -4 "$out/$name.log" | sed 's/^/    /' | tee -a "$out/summary.txt"
  return $rc
}

if [[ -d .gpu/debs ]] && ! command -v mpicc > /dev/null; then
  stage=/tmp/debstage
  for d in .gpu/debs/*.deb; do dpkg -x "$d" "$stage"; done
  cp -an "$stage/usr/." /usr/  # never over a file the machine has
  for t in mpicc mpirun mpiexec; do [[ -e /usr/bin/$t ]] || ln -s "$t.openmpi" "/usr/bin/$t"; done
  ldconfig
  log "unpacked $(ls .gpu/debs | wc -l) Debian packages"
fi
nvidia-smi -L | tee -a "$out/summary.txt"
py=$(command -v python3)
torch_prefix=$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')
site=$($py -c 'import site; print(site.getsitepackages()[0])')
log "torch $($py -c 'import torch; print(torch.__version__, torch.version.cuda)'), $(g++ --version | head -1), $(cmake --version | head -1)"
nccl_h=$(find /usr/local/cuda/ /usr/include "$site/nvidia" -name nccl.h 2>/dev/null | head -1)
nccl_so=$(find /usr/local/cuda/ /usr/lib/x86_64-linux-gnu "$site/nvidia" -name 'libnccl.so*' 2>/dev/null | head -1)
log "nccl: ${nccl_h:-none} ${nccl_so:-none}"
export CCACHE_DIR=/tmp/ccache TORCH_CUDA_ARCH_LIST=9.0
[[ -f .gpu/ccache.tar ]] && mkdir -p $CCACHE_DIR && tar xf .gpu/ccache.tar -C $CCACHE_DIR
build=build/gpu
step configure 300 cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMRPLAN_WITH_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DCMAKE_CUDA_ARCHITECTURES=90 \
  ${nccl_h:+-DNCCL_INCLUDE_DIR=$(dirname "$nccl_h")} ${nccl_so:+-DNCCL_LIBRARY=$nccl_so} || exit 1
grep -E "mrplan:" "$out/configure.log" | tee -a "$out/summary.txt"
step build 420 cmake --build $build -j"$(nproc)" --target mrplan mrplan-exec mrplan_step_bench -- -k 0
rc=$?
[[ -d $CCACHE_DIR ]] && tar cf "$out/ccache.tar" -C $CCACHE_DIR . 2>/dev/null
if ((rc)); then grep -E "error|Error" "$out/build.log" | head -60 >> "$out/summary.txt"; exit 1; fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=$build/mrplan
for r in $(seq 1 "${STEP_ROUNDS:-2}"); do  # alternating, so that drift falls on both
  for s in 32 64; do
    step "step-mrplan-$s-$r" 120 $build/bench/mrplan_step_bench $s 8 "$(nproc)" 50 cuda
    step "step-pytorch-$s-$r" 120 $py bench/step_pytorch.py $s 8 "$(nproc)" 50 cuda
  done
done

one_gpu() {  # the study's plan on one rank at twice the local batch (same global batch)
  sed -e 's/gpus: 2/gpus: 1/' -e 's/local_batch: 8/local_batch: 16/' "$1" > "$2"
}
data=/tmp/data
step datagen-cosmo 180 $M datagen cosmoflow-mrt --out $data/cosmo/res1 --samples 1024 --size 32 --seed 1
step coarsen-cosmo 60 $M coarsen $data/cosmo/res1 $data/cosmo/res2 --factor 2 --op sum
for p in baseline mrt; do
  one_gpu studies/mini-cosmoflow/$p.yaml "$out/cosmo-$p.yaml"
  step "cosmo-$p" 240 mpirun -np 1 $M run "$out/cosmo-$p.yaml" --data $data/cosmo --out "$out/cosmo-$p" --device cuda
done
step datagen-deepcam 180 $M datagen deepcam --out $data/deepcam/res1 --samples 448 --size 64 --seed 1
step coarsen-deepcam 60 $M coarsen $data/deepcam/res1 $data/deepcam/res2 --factor 2 --op mean --workload deepcam
for p in baseline mrt; do
  one_gpu studies/mini-deepcam/$p.yaml "$out/deepcam-$p.yaml"
  step "deepcam-$p" 240 mpirun -np 1 $M run "$out/deepcam-$p.yaml" --data $data/deepcam --out "$out/deepcam-$p" --device cuda
done
# the loop on the GPU: calibrate from microbenchmarks only, then validate the four runs above
step calibrate 300 $M calibrate all --device cuda --ranks 1 --threads "$(nproc)" --data $data/cosmo/res1 \
  --workload cosmoflow-mrt:32:0.25 deepcam:64:0.125 --batches ${CAL_BATCHES:-4 8 16} --profile "$out/gpu-profile.yaml" --max-bytes 67108864
step validate 120 $M validate --profile "$out/gpu-profile.yaml" --csv "$out/validate.csv" \
  "$out"/cosmo-{baseline,mrt}/record.json "$out"/deepcam-{baseline,mrt}/record.json
step nccl-allreduce 120 mpirun -np 1 $M calibrate allreduce --device cuda --profile "$out/nccl-profile.yaml" --max-bytes 268435456
log done
