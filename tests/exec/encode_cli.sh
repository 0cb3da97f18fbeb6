#!/usr/bin/env bash
# `mrplan encode` as a user meets it: the report line, a run on the encoded copy that says which
# codec it reads, and the refusals (unknown codec, missing folder, an already encoded input).
set -uo pipefail
MRPLAN="$1"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1
"$MRPLAN" datagen cosmoflow-mrt --out "$tmp/data/res1" --samples 24 --size 16 --samples-per-file 8 --threads 1 > /dev/null 2>&1 || fail datagen
"$MRPLAN" coarsen "$tmp/data/res1" "$tmp/data/res2" --op sum --threads 1 > /dev/null 2>&1 || fail coarsen
out=$("$MRPLAN" encode "$tmp/data" "$tmp/lut" --codec lut --threads 1 2>/dev/null) || fail "encode lut"
grep -q "^encode: 48 samples in 6 files, lut: samples .* MB -> .* MB (ratio " <<< "$out" || fail "encode's report: $out"
[ -f "$tmp/lut/res1/cosmo_0002.h5" ] && [ -f "$tmp/lut/res2/cosmo_0000.h5" ] || fail "the encoded copy keeps the res folders"
! ls -a "$tmp/lut/res1" | grep -q '\.tmp' || fail "temporaries left behind"
cat > "$tmp/plan.yaml" <<YAML
name: tiny
workload: cosmoflow-mrt
workload_options: {size: 16, width: 0.25}
machine: summit
method: baseline
dataset: {train_samples: 16, validation_samples: 8}
target: {metric: val_mse, value: 0.0001}
data: {dir: $tmp/lut}
stages:
  - {name: dense, resolution: 1, gpus: 1, local_batch: 8, stop: {epochs: 1}}
YAML
run=$("$MRPLAN" run "$tmp/plan.yaml" --threads 1 --out "$tmp/run" 2>&1) || fail "run on the encoded copy: $run"
grep -q "^run 'tiny': 1 stage(s), 1 rank(s) on .*, data $tmp/lut (lut)" <<< "$run" || fail "the run's header names the codec: $run"
grep -q '"data_codec": "lut"' "$tmp/run/record.json" || fail "the record names the codec"
err=$("$MRPLAN" encode "$tmp/data" "$tmp/x" --codec zstd 2>&1); [ $? -ne 0 ] && grep -q "zstd" <<< "$err" || fail "unknown codec: $err"
err=$("$MRPLAN" encode "$tmp/nothing" "$tmp/x" 2>&1); [ $? -eq 2 ] && grep -q "nothing: not a folder" <<< "$err" || fail "missing input: $err"
err=$("$MRPLAN" encode "$tmp/lut" "$tmp/x" 2>&1); [ $? -eq 2 ] && grep -q "is already encoded (lut)" <<< "$err" || fail "encoding twice: $err"
err=$("$MRPLAN" encode "$tmp/data" "$tmp/y" --codec diff 2>&1); [ $? -eq 2 ] && grep -q "the diff codec is DeepCAM's" <<< "$err" \
  && [ ! -d "$tmp/y" ] || fail "diff on CosmoFlow data: $err"
# the files say whose samples they hold: DeepCAM's are encoded without --workload
"$MRPLAN" datagen deepcam --out "$tmp/cam/res1" --samples 4 --threads 1 > /dev/null 2>&1 || fail "datagen deepcam"
out=$("$MRPLAN" encode "$tmp/cam" "$tmp/cam-diff" --codec diff --threads 1 2>&1) && grep -q "^encode: 4 samples in 4 files, diff" <<< "$out" \
  || fail "encode takes the workload from the files: $out"
echo "encode: all checks passed"
