#!/usr/bin/env bash
# GPU check for a CUDA site (the lent device machine here): builds mrplan against the CUDA LibTorch
# that Python's torch ships, then, each step logged and time-limited:
# each group run where STEPS names it (all but switch by default):
#   step: one cosmoflow-mrt training step, mrplan against PyTorch on the GPU (32^3 and 64^3, batch 8);
#   mini: mini-CosmoFlow and mini-DeepCAM baseline and MRT on one GPU (the studies' plans with gpus 1,
#      batch 16);
#   calibrate: `calibrate all --device cuda` from microbenchmarks, then `validate` of mini's runs;
#   nccl: `calibrate allreduce --device cuda` on one rank: the NCCL communicator's set-up and collectives;
#   switch: mini-CosmoFlow and mini-DeepCAM MRT across their switch (deterministic kernels), then
#      killed at the switch and resumed: model.pt compared with the uninterrupted run's; where a run
#      fails, the same again without mpirun and under cuda-gdb (every thread's stack, the words at
#      the stack pointer: how the crash of 2026-11-27 was traced to std::filesystem::remove_all);
#   mrmf: the mini-MRMF study's plans (CosmoFlow and Neuron Inverter, one and two fusions) on two
#      ranks sharing the one GPU, gradients over MPI through host memory (run --comm mpi);
#   fullsize: `calibrate compute --device cuda` on the full-size networks, each step and phase
#      beside what a profile composed from the GPU's public numbers predicts (--predict-from);
#   capture: a whole step captured as a CUDA graph (exec/captured_step): bit for bit against the same
#      steps eagerly, then timed against LibTorch's and PyTorch's eager steps and PyTorch's own
#      captured and compiled ones, alternating, on the minis and full-size networks; then `run
#      --capture` on mini-CosmoFlow against eager runs, and killed at its switch and resumed.
# Usage: [STEPS="step mini calibrate nccl switch mrmf fullsize capture"] [STEP_ROUNDS=2] [CAL_BATCHES="4 8 16"]
#   [BUILD_TYPE=Release] [DEADLINE_S=seconds: steps past it are cut short or skipped, so that the
#   summary comes back] scripts/gpu_check.sh OUT_DIR. Where the machine lacks the build's Debian libraries, put their
#   .deb files in .gpu/debs (Debian 12): they are unpacked without overwriting any file. Only 8 files
#   come back from the lent machine: give a scratch OUT_DIR and tar it into $OUT.
set -uo pipefail
out=${1:?usage: scripts/gpu_check.sh OUT_DIR}
mkdir -p "$out"
cd "$(dirname "$0")/.." || exit 1
log() { echo "== $(date +%T) $*" | tee -a "$out/summary.txt"; }
step() {  # step NAME SECONDS CMD...: runs CMD with a limit, its output in NAME.log, the verdict in summary.txt
  local name=$1 limit=$2; shift 2
  local left=$(( ${DEADLINE_S:-100000} - SECONDS - 15 ))
  if ((left < 10)); then log "$name: skipped, ${DEADLINE_S} s deadline"; return 125; fi
  ((limit > left)) && limit=$left
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  log "$name: exit $rc after $((SECONDS - t0)) s"
  tail -4 "$out/$name.log" | sed 's/^/    /' | tee -a "$out/summary.txt"
  return $rc
}

wants() { [[ " ${STEPS:-step mini calibrate nccl} " == *" $1 "* ]]; }
if [[ -d .gpu/debs ]] && ! command -v mpicc > /dev/null; then
  stage=/tmp/debstage
  for d in .gpu/debs/*.deb; do dpkg -x "$d" "$stage"; done
  cp -an "$stage/usr/." /usr/  # never over a file the machine has
  for t in mpicc mpirun mpiexec; do [[ -e /usr/bin/$t ]] || ln -s "$t.openmpi" "/usr/bin/$t"; done
  ldconfig
  log "unpacked $(ls .gpu/debs | wc -l) Debian packages"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$out/summary.txt"
py=$(command -v python3)
torch_prefix=$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')
site=$($py -c 'import site; print(site.getsitepackages()[0])')
log "torch $($py -c 'import torch; print(torch.__version__, torch.version.cuda)'), $(g++ --version | head -1), $(cmake --version | head -1)"
nccl_h=$(find /usr/local/cuda/ /usr/include "$site/nvidia" -name nccl.h 2>/dev/null | head -1)
nccl_so=$(find /usr/local/cuda/ /usr/lib/x86_64-linux-gnu "$site/nvidia" -name 'libnccl.so*' 2>/dev/null | head -1)
log "nccl: ${nccl_h:-none} ${nccl_so:-none}"
export CCACHE_DIR=/tmp/ccache TORCH_CUDA_ARCH_LIST=9.0
# the built-in profiles' fits from this checkout's build (carry build/default/cli/prefitted_profiles.yaml):
# the MLPerf logs they are fitted to are not on the lent machine
prefit=()
[[ -f build/default/cli/prefitted_profiles.yaml ]] && prefit=(-DMRPLAN_PREFITTED="$PWD/build/default/cli/prefitted_profiles.yaml")
[[ -f .gpu/ccache.tar ]] && mkdir -p $CCACHE_DIR && tar xf .gpu/ccache.tar -C $CCACHE_DIR
build=build/gpu
step configure 300 cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} -DMRPLAN_WITH_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DCMAKE_CUDA_ARCHITECTURES=90 "${prefit[@]}" \
  ${nccl_h:+-DNCCL_INCLUDE_DIR=$(dirname "$nccl_h")} ${nccl_so:+-DNCCL_LIBRARY=$nccl_so} || exit 1
grep -E "mrplan:" "$out/configure.log" | tee -a "$out/summary.txt"
targets=(mrplan-exec)  # every command; mrplan only hands the training ones to it
{ wants step || wants capture; } && targets+=(mrplan_step_bench)
step build 420 cmake --build $build -j"$(nproc)" --target "${targets[@]}" -- -k 0
rc=$?
[[ -d $CCACHE_DIR ]] && tar cf "$out/ccache.tar" -C $CCACHE_DIR . 2>/dev/null
if ((rc)); then grep -E "error|Error" "$out/build.log" | head -60 >> "$out/summary.txt"; exit 1; fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=$build/mrplan-exec
{ readelf -d $build/mrplan-exec | grep -E "NEEDED.*(stdc|gcc_s)|RPATH|RUNPATH"; command -v mpirun; mpirun --version 2>&1 | head -2; ldd $build/mrplan-exec | grep -E "mpi|ucx|hdf5|fmt|torch_cuda|cudart"; } >> "$out/summary.txt" 2>&1
wants step && for r in $(seq 1 "${STEP_ROUNDS:-2}"); do  # alternating, so that drift falls on both
  for s in 32 64; do
    step "step-mrplan-$s-$r" 120 $build/bench/mrplan_step_bench $s 8 "$(nproc)" 50 cuda
    step "step-pytorch-$s-$r" 120 $py bench/step_pytorch.py $s 8 "$(nproc)" 50 cuda
  done
done

one_gpu() {  # the study's plan on one rank at twice the local batch (same global batch)
  sed -e 's/gpus: 2/gpus: 1/' -e 's/local_batch: 8/local_batch: 16/' "$1" > "$2"
}
data=/tmp/data
if wants mini || wants switch || wants calibrate || wants mrmf || wants capture; then
  step datagen-cosmo 180 $M datagen cosmoflow-mrt --out $data/cosmo/res1 --samples 1024 --size 32 --seed 1
  for f in 2 4; do step coarsen-cosmo-$f 60 $M coarsen $data/cosmo/res1 $data/cosmo/res$f --factor $f --op sum; done
  step datagen-deepcam 180 $M datagen deepcam --out $data/deepcam/res1 --samples 448 --size 64 --seed 1
  step coarsen-deepcam 60 $M coarsen $data/deepcam/res1 $data/deepcam/res2 --factor 2 --op mean --workload deepcam
  for app in cosmo deepcam; do
    study=studies/mini-$([[ $app == cosmo ]] && echo cosmoflow || echo deepcam)
    for p in baseline mrt; do one_gpu $study/$p.yaml "$out/$app-$p.yaml"; done
  done
fi
if wants mini; then
  for app in cosmo deepcam; do
    for p in baseline mrt; do
      step "$app-$p" 240 mpirun -np 1 $M run "$out/$app-$p.yaml" --data $data/$app --out "$out/$app-$p" --device cuda
    done
  done
fi
if wants switch; then  # MRT across its switch; a failure examined three ways
  X=$build/mrplan-exec
  for app in cosmo deepcam; do
    args=(run "$out/$app-mrt.yaml" --data "$data/$app" --device cuda)
    if step "$app-mrt" 120 mpirun -np 1 $X "${args[@]}" --out "$out/$app-mrt" --deterministic; then
      # killed right after the switch's hand-off, then resumed: the uninterrupted run's parameters, bit for bit
      switch=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['stages'][0]['models'][0]['per_epoch']))" "$out/$app-mrt/record.json")
      step "$app-mrt-killed" 120 mpirun -np 1 $X "${args[@]}" --out "$out/$app-mrt-k" --deterministic --stop-after "$switch"
      step "$app-mrt-resumed" 120 mpirun -np 1 $X "${args[@]}" --out "$out/$app-mrt-k" --deterministic --resume "$out/$app-mrt-k"
      cmp "$out/$app-mrt/model.pt" "$out/$app-mrt-k/model.pt"
      same=$?
      log "$app MRT killed at its switch (epoch $switch) and resumed: model.pt $( ((same == 0)) && echo identical || echo DIFFERS)"
      continue
    fi
    step "$app-mrt-nompirun" 120 $X "${args[@]}" --out "$out/$app-mrt-b"
    step "$app-mrt-gdb" 240 cuda-gdb -q -batch -ex 'set pagination off' -ex run -ex 'info threads' -ex 'thread apply all bt 40' \
      -ex 'x/48a $sp' -ex 'info registers rip' --args $X "${args[@]}" --out "$out/$app-mrt-d"
    grep -E "^#|^0x|Thread|signal|SIG" "$out/$app-mrt-gdb.log" | head -150 >> "$out/summary.txt"
  done
fi
if wants mrmf; then  # two ranks on the one GPU: NCCL refuses that, so gradients go through host memory over MPI
  step datagen-ni 120 $M datagen neuron-inverter --out $data/ni/res1 --samples 1280 --seed 1
  for f in 2 4; do step coarsen-ni-$f 60 $M coarsen $data/ni/res1 $data/ni/res$f --workload neuron-inverter --factor $f --op mean; done
  for app in cosmo ni; do
    for p in mrmf mrmf2; do  # the run checks that every rank holds the same fused model (exec/fusion)
      step "$app-$p" 150 mpirun -np 2 $M run studies/mini-mrmf/$app-$p.yaml --data $data/$app --device cuda --comm mpi --out "$out/$app-$p" --quiet
      grep -E "ends:|fused|time to target|target not reached|error" "$out/$app-$p.log" | head -8 | sed 's/^/    /' >> "$out/summary.txt"
      [[ -f $out/$app-$p/record.json ]] && python3 -c "import json,sys; r=json.load(open(sys.argv[1])); m=r['stages'][-1]['models'][0]; \
print('   ', r['plan'], 'allreduce', m.get('allreduce_library'), 'reached' if r['totals']['reached_target'] else 'NOT reached', \
round(r['totals']['time_to_target_s'], 1), 's')" "$out/$app-$p/record.json" | tee -a "$out/summary.txt"
    done
  done
fi
if wants fullsize; then  # full-size steps: measured per phase, predicted from public numbers (a) and after the fit (b)
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  part=$([[ $gpu == *H200* ]] && echo H200-SXM-141GB || echo H100-SXM5-80GB)
  $M profile compose --gpu "$part" --gpus-per-node 8 --node-network "8x NDR" --intra NVSwitch3 --cpu "2x EPYC-7742" --name public \
    --out "$out/public-profile.yaml" > "$out/compose.log" 2>&1
  log "fullsize: $gpu, public numbers of $part"
  # workloads resolutions batches, each fitted on its own, as the built-in plans run them (deepcam-mrt:
  # batch 2 at 768x1152); FULLSIZE="cosmoflow-mrt,deepcam,neuron-inverter 1,2 2,8" fits several together
  IFS=';' read -ra cfgs <<< "${FULLSIZE:-cosmoflow-mrt 1,2 8;deepcam 1,2 2;neuron-inverter 1,2 512;cosmoflow-mlperf 1 8}"
  for cfg in "${cfgs[@]}"; do
    read -r w res b <<< "$cfg"
    name=full-${w//,/-}
    step "$name" 150 $M calibrate compute --device cuda --workload "$w" --resolutions "$res" --batches "$b" --repeats 5 --threads 4 \
      --profile "$out/$name-profile.yaml" --predict-from "$out/public-profile.yaml" --csv "$out/$name-ops.csv" --steps-csv "$out/$name-steps.csv"
    grep -E "^configuration|batch [0-9]+ |the same steps|whole-step|captured step" "$out/$name.log" | sed 's/^/    /' >> "$out/summary.txt"
  done
fi
if wants capture; then  # [workload size batch] the minis (launch-bound) and the full-size networks
  B=$build/bench/mrplan_step_bench
  for w in cosmoflow-mrt:32 deepcam:64:0.125 neuron-inverter; do
    step "capture-check-${w%%:*}" 60 $B 0 8 4 12 cuda check "$w"
  done
  IFS=';' read -ra cfgs <<< "${CAPTURE:-cosmoflow-mrt 32 8;deepcam:64:0.125 64 8;cosmoflow-mrt 128 8;deepcam 768 2}"
  for r in $(seq 1 "${STEP_ROUNDS:-2}"); do
    for cfg in "${cfgs[@]}"; do
      read -r w s b <<< "$cfg"
      for m in eager fused graph; do step "cap-$r-${w%%:*}-$s-$m" 60 $B "$s" "$b" 4 "${CAP_STEPS:-50}" cuda $m "$w"; done
      [[ $w == cosmoflow-mrt ]] || continue  # the PyTorch peer builds cosmoflow-mrt only
      for m in ${PY_MODES:-eager graph compile}; do step "cap-$r-pytorch-$s-$m" 150 $py bench/step_pytorch.py "$s" "$b" 4 "${CAP_STEPS:-50}" cuda $m; done
    done
  done
  # channels-last order (NDHWC), which torch.compile picks: its CosmoFlow 128^3 step took a third of eager's
  IFS=';' read -ra cfgs <<< "${CAPTURE_NHWC:-cosmoflow-mrt 128 8;deepcam 768 2}"
  for cfg in "${cfgs[@]}"; do
    read -r w s b <<< "$cfg"
    for m in fused graph; do step "cap-nhwc-${w%%:*}-$s-$m" 60 $B "$s" "$b" 4 "${CAP_STEPS:-50}" cuda $m "$w" channels_last; done
    [[ $w == cosmoflow-mrt ]] && step "cap-nhwc-pytorch-$s-eager" 150 $py bench/step_pytorch.py "$s" "$b" 4 "${CAP_STEPS:-50}" cuda eager channels_last
  done
  grep -h "median step\|check " "$out"/cap*.log | tee "$out/capture.txt" >> "$out/summary.txt"
  # the trainer (run --capture): mini-CosmoFlow baseline and MRT eager and captured, alternating; then
  # the captured MRT with deterministic kernels killed at its switch and resumed, against its uninterrupted run
  for p in baseline mrt; do
    for c in eager captured; do
      flags=(); [[ $c == captured ]] && flags=(--capture)
      step "run-cosmo-$p-$c" 120 mpirun -np 1 $M run "$out/cosmo-$p.yaml" --data $data/cosmo --device cuda "${flags[@]}" --out "$out/run-cosmo-$p-$c" --quiet
      grep -E "time to target|target not reached|error" "$out/run-cosmo-$p-$c.log" | head -3 | sed 's/^/    /' >> "$out/summary.txt"
    done
  done
  step run-deepcam-captured 60 mpirun -np 1 $M run "$out/deepcam-mrt.yaml" --data $data/deepcam --device cuda --capture --out "$out/run-deepcam-cap"
  args=(run "$out/cosmo-mrt.yaml" --data "$data/cosmo" --device cuda --capture --deterministic --quiet)
  if step run-cosmo-mrt-det 120 mpirun -np 1 $M "${args[@]}" --out "$out/run-det"; then
    switch=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['stages'][0]['models'][0]['per_epoch']))" "$out/run-det/record.json")
    step run-cosmo-mrt-det-killed 120 mpirun -np 1 $M "${args[@]}" --out "$out/run-det-k" --stop-after "$switch"
    step run-cosmo-mrt-det-resumed 120 mpirun -np 1 $M "${args[@]}" --out "$out/run-det-k" --resume "$out/run-det-k"
    cmp "$out/run-det/model.pt" "$out/run-det-k/model.pt"
    same=$?
    log "captured cosmo MRT killed at its switch (epoch $switch) and resumed: model.pt $( ((same == 0)) && echo identical || echo DIFFERS)"
  fi
fi
if wants calibrate; then  # the loop on the GPU: calibrate from microbenchmarks only, then validate the runs above
  step calibrate 300 $M calibrate all --device cuda --ranks 1 --threads "$(nproc)" --data $data/cosmo/res1 \
    --workload cosmoflow-mrt:32:0.25 deepcam:64:0.125 --batches ${CAL_BATCHES:-4 8 16} --profile "$out/gpu-profile.yaml" --max-bytes 67108864
  step validate 120 $M validate --profile "$out/gpu-profile.yaml" --csv "$out/validate.csv" \
    "$out"/cosmo-{baseline,mrt}/record.json "$out"/deepcam-{baseline,mrt}/record.json
fi
wants nccl && step nccl-allreduce 120 mpirun -np 1 $M calibrate allreduce --device cuda --profile "$out/nccl-profile.yaml" --max-bytes 268435456
log "done"
