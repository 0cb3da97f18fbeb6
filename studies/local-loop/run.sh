#!/usr/bin/env bash
# The whole loop on this machine (issue 4's acceptance): calibrate from microbenchmarks only,
# run a grid of plans the calibration never saw (cosmoflow-mrt 32^3/16^3 and neuron-inverter
# 1600/800 time bins; ranks 1 and 2; two local batch sizes each), fit convergence from a
# baseline and two MRT switch points, then validate everything, including an MRT run at a third
# switch point that no fit used.
# Usage: studies/local-loop/run.sh [OUT_DIR]      (default out/local-loop)
# Environment: DEVICE=cuda runs everything on GPUs (one per rank); RANKS="1 2" the rank counts
# of the grid (the convergence runs use the last); MRPLAN=path uses that binary, unbuilt;
# COMPUTE_SECONDS (default 180) how long `calibrate compute` keeps timing rounds: this VM's speed
# wanders over minutes, and a 10-second calibration caught one spell of it; SHARING_SECONDS (default
# 60) the same for `calibrate sharing`, whose ten rounds took seconds and whose fit swung from run to run.
set -euo pipefail
cd "$(dirname "$0")/../.."
device=${DEVICE:-cpu}
read -r -a ranks_list <<< "${RANKS:-1 2}"
conv_ranks=${ranks_list[-1]}
if [[ -z ${MRPLAN:-} ]]; then
  ./scripts/setup.sh
  cmake --preset release > /dev/null
  cmake --build --preset release --target mrplan mrplan-exec -- -j"$(nproc)" > /dev/null
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=$(realpath "${MRPLAN:-build/release/mrplan}")
out=$(realpath -m "${1:-out/local-loop}")
data=$PWD/out/mini-cosmoflow-data
ni_data=$PWD/out/neuron-inverter-data
profile=$out/local-profile.yaml
start=$(date +%s)
if [[ ! -d $data/res2 ]]; then
  $M datagen cosmoflow-mrt --out "$data/res1" --samples 1024 --size 32 --seed 1
  $M coarsen "$data/res1" "$data/res2" --factor 2 --op sum
fi
if [[ ! -d $ni_data/res2 ]]; then
  $M datagen neuron-inverter --out "$ni_data/res1" --samples 640 --seed 1
  $M coarsen "$ni_data/res1" "$ni_data/res2" --workload neuron-inverter --factor 2 --op mean
fi
rm -rf "$out"
mkdir -p "$out/plans"

# plan WORKLOAD NAME METHOD TRAIN VAL TARGET STAGE_LINES...   (WORKLOAD: cosmo or ni)
plan() {
  local wl=cosmoflow-mrt wopts="{size: 32, width: 0.25}" dir=$data
  [[ $1 == ni ]] && wl=neuron-inverter wopts="{}" dir=$ni_data
  local name=$2 method=$3 train=$4 val=$5 target=$6
  shift 6
  local stages="" st
  for st in "$@"; do stages+="  - $st"$'\n'; done
  STAGES="$stages" perl -pe "s|\@NAME\@|$name|; s|\@PROFILE\@|$profile|; s|\@METHOD\@|$method|; s|\@TRAIN\@|$train|;
    s|\@VAL\@|$val|; s|\@TARGET\@|$target|; s|\@DATA\@|$dir|; s|\@WORKLOAD\@|$wl|; s|\@WOPTS\@|$wopts|; s|\@STAGES\@\n|\$ENV{STAGES}|" \
    studies/local-loop/plan.yaml.in > "$out/plans/$name.yaml"
}
run() {  # run RANKS NAME
  echo "-- run $2 on $1 rank(s)"
  mpirun -np "$1" "$M" run "$out/plans/$2.yaml" --out "$out/runs/$2" --threads 1 --device "$device" --quiet
}
stage() {  # stage NAME RES RANKS BATCH STOP
  echo "{name: $1, resolution: $2, gpus: $3, local_batch: $4, optimizer: adam, learning_rate: 0.001, stop: $5}"
}

echo "== 1. calibrate all (microbenchmarks only)"
"$M" calibrate all --profile "$profile" --data "$data/res1" --workload cosmoflow-mrt:32:0.25,neuron-inverter --ranks "$conv_ranks" --threads 1 --device "$device" \
  --compute-seconds "${COMPUTE_SECONDS:-180}" --sharing-seconds "${SHARING_SECONDS:-60}"

echo "== 2. per-epoch grid the calibration did not see"
for ranks in "${ranks_list[@]}"; do
  for res in 1 2; do
    for batch in 4 8; do
      name=grid-cosmo-r$ranks-b$batch-res$res
      plan cosmo "$name" baseline 256 64 0 "$(stage only $res $ranks $batch '{epochs: 2}')"
      run "$ranks" "$name"
    done
    for batch in 8 16; do
      name=grid-ni-r$ranks-b$batch-res$res
      plan ni "$name" baseline 512 64 0 "$(stage only $res $ranks $batch '{epochs: 2}')"
      run "$ranks" "$name"
    done
  done
done

echo "== 3. convergence runs: baseline and MRT switching after 1 and 4 coarse epochs (fit), 2 (held out)"
target=0.21
plan cosmo conv-baseline baseline 768 128 $target "$(stage dense 1 "$conv_ranks" 8 '{epochs: 6}')"
run "$conv_ranks" conv-baseline
for s in 1 4 2; do
  plan cosmo conv-mrt-s$s mrt 768 128 $target "$(stage coarse 2 "$conv_ranks" 8 "{epochs: $s}")" \
    "$(stage dense 1 "$conv_ranks" 8 '{target: true, max_epochs: 15}')"
  run "$conv_ranks" conv-mrt-s$s
done
"$M" calibrate convergence --profile "$profile" "$out/runs/conv-baseline/record.json" "$out/runs/conv-mrt-s1/record.json" \
  "$out/runs/conv-mrt-s4/record.json"

echo "== 4. validation"
"$M" validate --profile "$profile" "$out"/runs/*/record.json --csv "$out/validation.csv" --plot "$out/validation.png"
echo "== the loop took $(( $(date +%s) - start )) s; outputs in $out"
