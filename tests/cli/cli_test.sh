#!/usr/bin/env bash
# End-to-end checks of the mrplan command line: outputs exist, errors exit 2 with a message.
set -euo pipefail
MRPLAN="$1"
source "$(dirname "$0")/../support/shell_prelude.sh"

"$MRPLAN" predict cosmoflow-mrt@summit --json "$tmp/r.json" > "$tmp/predict.txt"
grep -q "time to target" "$tmp/predict.txt" || fail "predict prints no total"
grep -q '"source": "predicted"' "$tmp/r.json" || fail "predict --json wrote no record"

"$MRPLAN" sweep --switch 10:60:10 --gpus 32,64 --csv "$tmp/s.csv" --plot "$tmp/s.png" > "$tmp/sweep.txt" 2> "$tmp/sweep.err"
! grep -q "warning" "$tmp/sweep.err" || fail "the sweep plot's script warns: $(grep warning "$tmp/sweep.err")"
head -1 "$tmp/s.csv" | grep -q "^method,gpus,switch_epoch,coarse_epochs,dense_epochs,time_to_target_s,io_s,comm_s,compute_s,gpu_hours" \
  || fail "sweep CSV header"
[[ $(wc -l < "$tmp/s.csv") -eq 17 ]] || fail "sweep CSV should have 16 rows"
# a plan without a switch (a baseline alone; transfer beside its baseline) plots time to target against the GPUs
for p in cosmoflow-baseline cosmoflow-transfer; do
  "$MRPLAN" sweep "$p@summit" --gpus 16,32 --samples 0 --plot "$tmp/$p.png" > /dev/null 2> "$tmp/$p.err"
  [[ -s "$tmp/$p.png" ]] && ! grep -q "warning" "$tmp/$p.err" || fail "$p sweep plot: $(cat "$tmp/$p.err")"
done

"$MRPLAN" plan deepcam-mrt@cori-gpu > "$tmp/plan.yaml"
"$MRPLAN" profile perlmutter > "$tmp/profile.yaml"
grep -q "transferred from cori-gpu" "$tmp/profile.yaml" || fail "perlmutter profile should say where its fits came from"
sed -i 's/machine: cori-gpu/machine: profile.yaml/' "$tmp/plan.yaml"
(cd "$tmp" && "$MRPLAN" predict plan.yaml > predict2.txt) || fail "edited plan with a profile file"

# MRMF: the built-in plans with one and two fusions, predicted per model and swept over the split
"$MRPLAN" plan cosmoflow-mrmf2@perlmutter > "$tmp/mrmf.yaml"
grep -q "handoff: {fuse: {bottom_from: low, top_from: high}}" "$tmp/mrmf.yaml" || fail "mrmf plan hands on by fusion"
"$MRPLAN" predict neuron-inverter-mrmf@perlmutter > "$tmp/mrmf.txt"
grep -q "fusion1 .*high" "$tmp/mrmf.txt" || fail "mrmf predict lists each model"
grep -q "stage fusion1: fusion" "$tmp/mrmf.txt" || fail "mrmf predict shows the fusion"
# sweep reads a GPU range as optimize does: A:B doubles from A
"$MRPLAN" sweep --switch 10:20:10 --gpus 4:64 --samples 0 2>/dev/null | grep -q "x 5 GPU counts" || fail "sweep --gpus 4:64 is 4, 8, 16, 32, 64"
"$MRPLAN" sweep cosmoflow-mrmf@perlmutter --gpus 32 --split 0.25,0.5 --switch 20,40 --csv "$tmp/m.csv" > /dev/null 2>&1
[[ $(grep -c "^mrmf" "$tmp/m.csv") -eq 6 ]] || fail "mrmf sweep: 2 splits x (2 switch points + the rule)"

"$MRPLAN" workload deepcam --resolution 2 --batch 2 > "$tmp/w.txt"
grep -q "coarse_output_upsample" "$tmp/w.txt" || fail "coarse deepcam needs its upsample"

"$MRPLAN" study mrt-paper --csv "$tmp/paper.csv" > "$tmp/study.txt"
head -1 "$tmp/paper.csv" | grep -q "^table,machine,gpus,dataset,quantity,paper,predicted,rel_error,used_for_calibration$" || fail "study CSV header"
"$MRPLAN" study preprocessing-paper --csv "$tmp/pre.csv" > "$tmp/pre.txt"
[[ $(grep -c ",true$" "$tmp/pre.csv") -eq 11 && $(grep -c ",false$" "$tmp/pre.csv") -eq 13 ]] || fail "preprocessing study: 11 calibration claims, 13 held out"
grep -q "^held-out claims: 13, median |error|" "$tmp/pre.txt" || fail "preprocessing study summarises the held-out claims"

expect_error() {  # expect_error "message fragment" args...
  local want="$1"; shift
  set +e
  "$MRPLAN" "$@" > "$tmp/out.txt" 2> "$tmp/err.txt"
  local rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "mrplan $* exited $rc, expected 2"
  grep -qF -- "$want" "$tmp/err.txt" || fail "mrplan $*: expected '$want' in: $(cat "$tmp/err.txt")"
}
expect_error "file not found" predict /nonexistent.yaml
"$MRPLAN" plan cosmoflow-mrt@summit | sed -E 's/gpus: [0-9]+/gpus: 1/g' > "$tmp/one-rank.yaml"
expect_error "--comm: nccl reduces GPU memory, and this run trains on the CPUs" run "$tmp/one-rank.yaml" --comm nccl --device cpu --out "$tmp/x"
expect_error "--device: 'gpu' is not a device: cpu, cuda or auto" run "$tmp/one-rank.yaml" --device gpu --out "$tmp/x"
expect_error "--comm: 'gloo' is not a communicator: auto, nccl or mpi" run "$tmp/one-rank.yaml" --comm gloo --out "$tmp/x"
expect_error "--device: 'auto' is not a device: cpu or cuda" calibrate compute --device auto
expect_error "--codec: 'zip' is not a codec: lut, diff, deflate or raw" encode "$tmp" "$tmp/enc" --codec zip
expect_error "--op: 'max' is not a block operation: mean or sum" coarsen "$tmp" "$tmp/c" --op max
expect_error "--scheduler: 'pbs' is not a scheduler: slurm, lsf or flux" jobscript cosmoflow-mrt@summit --scheduler pbs
expect_error "--precision: 'bf16' is not a precision: fp32 or amp" ingest-mllog "$tmp/x.txt" --precision bf16
expect_error "--minimize: 'cost' is not an objective: time, gpu-hours or node-hours" optimize cosmoflow@summit --minimize cost
expect_error "--capture: this mrplan-exec was built against a LibTorch without CUDA graphs" run "$tmp/one-rank.yaml" --capture --device cpu --out "$tmp/x"
expect_error "neither a plan file nor a built-in plan" predict resnet@summit
expect_error "builtin:cosmoflow-mrt@frontier: machine: unknown built-in machine 'frontier'" plan cosmoflow-mrt@frontier
expect_error "workload_options.size 30 or 33 works at resolutions 3" workload cosmoflow-mrt --resolution 3 --size 32
mkdir -p "$tmp/loop" && ln -sfn "$tmp/loop/b" "$tmp/loop/a" && ln -sfn "$tmp/loop/a" "$tmp/loop/b"
expect_error "$tmp/loop/a" predict "$tmp/loop/a"
printf 'name: x\nworkload: cosmoflow-mrt\nmachine: summit\ndataset: {train_samples: 100}\ntarget: {metric: val_mse, value: 1}\nstages:\n  - {gpus: 4, local_batch: 2, stop: {target: true}, colour: red}\n' > "$tmp/bad.yaml"
expect_error "bad.yaml: stages[0].colour: unknown key" predict "$tmp/bad.yaml"
sed -i 's/, colour: red//; s/gpus: 4/gpus: -4/' "$tmp/bad.yaml"
expect_error "stages[0].gpus: must be >= 1" predict "$tmp/bad.yaml"
sed -i 's/per_node_bandwidth_GBps: [0-9.]*/per_node_bandwidth_GBps: -3/' "$tmp/profile.yaml"
expect_error "io.tiers.pfs.per_node_bandwidth_GBps: expected a positive number" predict cosmoflow-mrt@summit --machine "$tmp/profile.yaml"
expect_error "'x' is not a number" sweep --switch 1,x
sed -i 's/^    models:/    gpus: 64\n    models:/' "$tmp/mrmf.yaml"
expect_error "stages[0].gpus: the stage has 64 GPUs but its models are given 16 (low) + 16 (high) = 32: the split does not add up" \
  predict "$tmp/mrmf.yaml"
"$MRPLAN" plan cosmoflow-mrmf@perlmutter | sed 's/top_from: high}/top_from: high, split_after: conv99}/' > "$tmp/mrmf1.yaml"
expect_error "fusion point 'conv99' does not exist" predict "$tmp/mrmf1.yaml"
sed -i 's/split_after: conv99/split_after: fc1/' "$tmp/mrmf1.yaml"
expect_error "op 'fc1' has 526336 parameters at resolution factor 2 but 4196352 in the fused model (factor 1): it cannot come from the bottom model" \
  predict "$tmp/mrmf1.yaml"
sed -i 's/bottom_from: low, top_from: high, split_after: fc1/bottom_from: high, top_from: low/' "$tmp/mrmf1.yaml"
expect_error "resolutions not increasing" predict "$tmp/mrmf1.yaml"
expect_error "only an mrmf plan has fusion stages to split" sweep --split 0.5

# optimize: a small space, the chosen plan written as a plan file that predict reproduces
small=(--gpus 12,24,48 --local-batch 1,4,8 --switch 10:40:10 --samples 20 --seed 3)
"$MRPLAN" optimize cosmoflow@summit "${small[@]}" --minimize gpu-hours --out "$tmp/best.yaml" --csv "$tmp/all.csv" > "$tmp/opt.txt"
grep -q "why it wins" "$tmp/opt.txt" || fail "optimize explains its choice"
want=$(grep -o "reproduces its P50 [0-9.]* s, [0-9.]* GPU-hours" "$tmp/opt.txt" | sed 's/reproduces its P50 //')
[[ -n "$want" ]] || fail "optimize names the chosen plan's P50"
"$MRPLAN" predict "$tmp/best.yaml" --samples 20 --seed 3 > "$tmp/best.txt"
grep -q "P50 ${want%% s,*} / " "$tmp/best.txt" || fail "predict of the chosen plan: expected P50 $want in $(grep spread "$tmp/best.txt")"
# the chosen plan's band by source, the line predict gives it (issue 45)
line=$(grep "^spread (chosen plan): P10-P90 width" "$tmp/opt.txt" | sed 's/^spread (chosen plan): //') || fail "optimize: no width by source"
grep -qF "warning: spread: $line" "$tmp/best.txt" || fail "optimize's width by source differs from predict's: $line"

[[ $(head -1 "$tmp/all.csv") == template,gpus,local_batch,* ]] || fail "optimize CSV header"
expect_error "unknown method 'mrx'" optimize cosmoflow@summit --methods mrt,mrx
expect_error "'8:4': need FROM <= TO" optimize cosmoflow@summit --local-batch 8:4
expect_error "no plan meets the deadline 60 s (0.02 h): the nearest is cosmoflow-mrmf2@summit on 48 GPUs" optimize cosmoflow@summit "${small[@]}" --deadline 60s
expect_error "is an mrmf plan: it gives its own method and its baseline; for mrt give APP@MACHINE" optimize "$tmp/best.yaml" --methods mrt
expect_error "expected GPU-hours or node-hours" optimize cosmoflow@summit --budget 500
expect_error "is MLPerf's reference training: --methods baseline only" optimize cosmoflow-mlperf@perlmutter --methods mrt
# optimize across data paths: on a starved file system a codec reading a quarter of the bytes wins
"$MRPLAN" profile summit | sed 's/per_node_bandwidth_GBps: 25,/per_node_bandwidth_GBps: 0.05,/; s/^    lut: {.*}$/    lut: {ratio: 4, host_decode_GBps: 50}/' > "$tmp/slow.yaml"
grep -q "^    lut: {ratio: 4, host_decode_GBps: 50}$" "$tmp/slow.yaml" || fail "summit's profile prices lut (the preprocessing paper's rates)"
"$MRPLAN" optimize cosmoflow@summit --machine "$tmp/slow.yaml" --methods baseline --gpus 12,24 --local-batch 4 --codecs raw,lut \
  --staging none,nearest --samples 0 --out "$tmp/io-best.yaml" > "$tmp/io-opt.txt"
grep -q "codec: lut, decoder: host" "$tmp/io-best.yaml" && grep -q "staging nearest, raw:host" "$tmp/io-opt.txt" \
  || fail "optimize over staging x codec: $(head -9 "$tmp/io-opt.txt")"
expect_error "unknown staging 'tape'" optimize cosmoflow@summit --staging none,tape
expect_error "command line: io.staging: 'device_memory' keeps encoded samples on the GPU" optimize cosmoflow@summit --staging device_memory
expect_error "io.codecs.lut: the profile has no rates for codec 'lut'" optimize cosmoflow@perlmutter --codecs lut:device --samples 0

# a stage that scales otherwise than its plan (the paper's DeepCAM coarse stage keeps global 512), and --keep over it
"$MRPLAN" predict deepcam-mrt@summit --gpus 128 | grep -q "^coarse .* 128 *4 *512 " || fail "deepcam-mrt's coarse stage does not keep its global batch"
"$MRPLAN" predict deepcam-mrt@summit --gpus 128 --keep local | grep -q "^coarse .* 128 *8 *1024 " || fail "--keep local does not override a stage's scaling"

# the built-ins a newcomer can name, MLPerf's reference plans among them
"$MRPLAN" list > "$tmp/list.txt"
for name in cosmoflow-mlperf@MACHINE deepcam-mlperf@MACHINE perlmutter cosmoflow-mlperf; do
  grep -q "^$name " "$tmp/list.txt" || fail "list lacks $name"
done
grep -q "^summit .* the MRT paper's rows " "$tmp/list.txt" || fail "list says what a machine's timing is fitted to"
"$MRPLAN" predict cosmoflow-mlperf@perlmutter --samples 20 > "$tmp/mlperf.txt"
grep -q "time to target .*GPU-hours" "$tmp/mlperf.txt" && ! grep -q "NOT reached" "$tmp/mlperf.txt" || fail "cosmoflow-mlperf does not reach its target"
# a CLI that explains itself: its version and build, a suggestion for a mistyped command
"$MRPLAN" --version > "$tmp/version.txt"
grep -q "^mrplan [0-9.]* (commit .*build; with: " "$tmp/version.txt" || fail "--version: $(cat "$tmp/version.txt")"
expect_error "unknown command 'predcit': did you mean 'predict'?" predcit cosmoflow-mrt@summit
if "$MRPLAN" calibrate --help > /dev/null 2>&1; then
  expect_error "--launcher: 'srun -n': expected {n} where the rank count goes" calibrate all --ranks 2 --launcher "srun -n" --profile "$tmp/l.yaml"
fi

# batch scripts where the users run, one per scheduler, with the centre's own conventions
"$MRPLAN" jobscript cosmoflow-mlperf@perlmutter --account m1 --time 2h --data /scratch/c --out "$tmp/js/pm.sh" 2> "$tmp/js.err" > /dev/null
for line in "#SBATCH -N 32" "#SBATCH -t 02:00:00" "#SBATCH -A m1" "#SBATCH -C gpu" "#SBATCH --gpus-per-node=4" \
    "srun -n 128 --ntasks-per-node=4 -c 32 --cpu-bind=cores --gpus-per-task=1 --gpu-bind=none \"\$MRPLAN\" run $tmp/js/cosmoflow-mlperf.yaml --out out/run --device \"\${MRPLAN_DEVICE:-cuda}\""; do
  grep -qxF -- "$line" "$tmp/js/pm.sh" || fail "perlmutter job script lacks: $line"
done
grep -q "data: {dir: /scratch/c}" "$tmp/js/cosmoflow-mlperf.yaml" || fail "jobscript writes the plan the job runs"
"$MRPLAN" plan cosmoflow-mrt@summit | sed 's/staging: none/staging: nvme/' > "$tmp/js/s.yaml"
expect_error "--account: summit charges every job to a project" jobscript "$tmp/js/s.yaml" --data /gpfs/c --time 30m --out "$tmp/js/summit.sh"
"$MRPLAN" jobscript "$tmp/js/s.yaml" --data /gpfs/c --time 30m --account a1 --out "$tmp/js/summit.sh" 2> /dev/null > /dev/null
for line in "#BSUB -nnodes 6" "#BSUB -W 0:30" "#BSUB -P a1" "STAGED=\"/mnt/bb/\$USER/mrplan\"" "DATA='/gpfs/c'" \
    "trap 'jsrun -n 6 -r1 -a1 -c1 rm -rf \"\$STAGED\"' EXIT" "[ -d \"\$DATA/res2\" ] || \"\$MRPLAN\" coarsen \"\$DATA/res1\" \"\$DATA/res2\" --factor 2 --workload cosmoflow-mrt"; do
  grep -qxF -- "$line" "$tmp/js/summit.sh" || fail "summit job script lacks: $line"
done
grep -q "^jsrun -n 32 -r6 -a1 -c7 -g1 -bpacked:7 \"\$MRPLAN\" run .* --data \"\$DATA\" --stage-to \"\$STAGED\"$" "$tmp/js/summit.sh" || fail "summit's run stages its nodes' shares"
grep -q "^# known limit: a stage that starts from the one before ends in a crash on a GPU" "$tmp/js/summit.sh" || fail "the MRT GPU limit is not flagged"
sed 's/staging: nvme/staging: nvme, staging_async: true/' "$tmp/js/s.yaml" > "$tmp/js/async.yaml"  # run --stage-to would refuse it
mkdir -p "$tmp/js/async"  # beside its own copy of the plan
"$MRPLAN" jobscript "$tmp/js/async.yaml" --data /gpfs/c --time 30m --account a1 --out "$tmp/js/async/a.sh" 2> /dev/null > /dev/null
grep -q "^# the plan copies its data beside the first epoch (io.staging_async), which .run. does not" "$tmp/js/async/a.sh" \
  && ! grep -q -- "--stage-to" "$tmp/js/async/a.sh" || fail "an asynchronous copy's job script: $(grep -n 'stag' "$tmp/js/async/a.sh")"
expect_error "exists: the job script would be written over" jobscript "$tmp/js/s.yaml" --data /gpfs/c --time 30m --account a1 --out "$tmp/js/summit.sh"
"$MRPLAN" jobscript "$tmp/js/s.yaml" --data /gpfs/c --time 30m --account a1 --out "$tmp/js/summit.sh" --overwrite > /dev/null 2>&1 || fail "--overwrite"
sed 's/local_batch: 8/local_batch: 64/' "$tmp/js/s.yaml" > "$tmp/js/big.yaml"  # 4.8 GB a GPU at 8: past Summit's 16 GB at 64
expect_error "GB per GPU, summit's GPUs have 16 GB: a smaller local batch, or more GPUs" jobscript "$tmp/js/big.yaml" --data /d --time 1h --account a1 --out "$tmp/js/big.sh"
# --set and --local-batch edit the plan the job runs, as predict's do
mkdir -p "$tmp/js/set"
"$MRPLAN" jobscript cosmoflow-mrt@perlmutter --set stages.0.gpus=16 --local-batch 4 --time 1h --out "$tmp/js/set/j.sh" > /dev/null 2>&1 || fail "jobscript --set"
grep -q "gpus: 16" "$tmp/js/set/cosmoflow-mrt.yaml" && grep -q "local_batch: 4" "$tmp/js/set/cosmoflow-mrt.yaml" || fail "jobscript --set: $(cat "$tmp/js/set/cosmoflow-mrt.yaml")"
expect_error "--deadline: '2 fortnights': expected a positive duration" optimize cosmoflow@summit --deadline "2 fortnights"
"$MRPLAN" jobscript deepcam-mlperf@perlmutter --scheduler flux --time 90m --out "$tmp/js/f.sh" 2> /dev/null > /dev/null
grep -qxF "flux run -N 64 -n 256 --gpus-per-task=1 \"\$MRPLAN\" run $tmp/js/deepcam-mlperf.yaml --out out/run --device \"\${MRPLAN_DEVICE:-cuda}\"" "$tmp/js/f.sh" \
  && grep -qxF "#FLUX: -t 90m" "$tmp/js/f.sh" || fail "flux job script"

# nothing a user or a shared plan file says becomes a command or a directive in the script (issue 44)
expect_error "--account: 'm1\\x0aecho injected' is not a name a batch script can carry" jobscript cosmoflow-mlperf@perlmutter --time 1h --account $'m1\necho injected'
expect_error "--name (default: the plan's name): '\$(touch x)' is not a name" jobscript cosmoflow-mlperf@perlmutter --time 1h --name '$(touch x)'
expect_error "--run-out: 'out\\x0a#SBATCH -A other' holds a control character" jobscript cosmoflow-mlperf@perlmutter --time 1h --run-out $'out\n#SBATCH -A other'
sed 's/^name: .*/name: ..\/..\/escaped/' "$tmp/js/s.yaml" > "$tmp/js/evil.yaml"
expect_error "'../../escaped' is not a name" jobscript "$tmp/js/evil.yaml" --data /d --time 1h --out "$tmp/js/evil.sh"
[[ ! -e "$tmp/escaped.yaml" && ! -e "$tmp/js/evil.sh" ]] || fail "jobscript wrote outside its folder"
mkdir -p "$tmp/js/bin" "$tmp/js/run"
mkdir -p "$tmp/js/my data \$(touch $tmp/js/pwned1)/res1" "$tmp/js/my data \$(touch $tmp/js/pwned1)/res2"
"$MRPLAN" jobscript "$tmp/js/s.yaml" --account a1 --data "$tmp/js/my data \$(touch $tmp/js/pwned1)" --run-out "out/\`touch $tmp/js/pwned2\`; touch $tmp/js/pwned3" \
  --time 1h --overwrite --out "$tmp/js/quoted.sh" 2> /dev/null > /dev/null
bash -n "$tmp/js/quoted.sh" || fail "the quoted job script is not valid bash"
# a data folder named like a command (`at`, found by the jobscript fuzzer) is still a quoted value
(cd "$tmp/js" && "$MRPLAN" jobscript s.yaml --data at --time 1h --account a1 --overwrite --out at.sh 2> /dev/null > /dev/null) || fail "jobscript --data at"
grep -qxF "DATA='$tmp/js/at'" "$tmp/js/at.sh" || fail "DATA=at is not quoted: $(grep '^DATA=' "$tmp/js/at.sh")"
for sh in pm summit f quoted at; do shellcheck -S warning "$tmp/js/$sh.sh" || fail "shellcheck: $sh.sh"; done
printf '#!/bin/sh\nexit 0\n' > "$tmp/js/bin/jsrun"; cp "$tmp/js/bin/jsrun" "$tmp/js/bin/module"; chmod +x "$tmp/js/bin/jsrun" "$tmp/js/bin/module"
(cd "$tmp/js/run" && USER=ci PATH="$tmp/js/bin:$PATH" bash "$tmp/js/quoted.sh") || fail "the quoted job script did not run under a stub jsrun"
[[ ! -e "$tmp/js/pwned1" && ! -e "$tmp/js/pwned2" && ! -e "$tmp/js/pwned3" ]] || fail "a value in a job script ran as a command"
grep -qF -- "--out 'out/\`touch $tmp/js/pwned2\`; touch $tmp/js/pwned3'" "$tmp/js/quoted.sh" || fail "--run-out quoted: $(tail -1 "$tmp/js/quoted.sh")"

# a profile from hardware parts, predicted with at once
"$MRPLAN" profile compose --gpu H100-SXM5-80GB --gpus-per-node 8 --node-network "8x NDR" --intra NVSwitch3 --cpu "2x Xeon-8480C" \
  --out "$tmp/eos.yaml" > /dev/null
grep -q "peak_fp16_TFLOPS: 989" "$tmp/eos.yaml" && grep -q "inter_node: {alpha_s: .*, bandwidth_GBps: 400}" "$tmp/eos.yaml" \
  || fail "profile compose: H100 peaks and 8 NDR adapters"
"$MRPLAN" predict cosmoflow-mlperf@perlmutter --machine "$tmp/eos.yaml" --samples 0 > "$tmp/eos.txt"
grep -q "time to target" "$tmp/eos.txt" || fail "predict on a composed profile"
"$MRPLAN" profile compose --list > "$tmp/parts.txt"
grep -q "^MI250X " "$tmp/parts.txt" || fail "profile compose --list"
expect_error "no site entry for machine 'composed': say which scheduler it runs" jobscript "$tmp/js/s.yaml" --machine "$tmp/eos.yaml"
expect_error "unknown link 'Myrinet'" profile compose --gpu A100-SXM4-40GB --node-network "2x Myrinet" --intra NVLink3
# the same parts from the submission's system description; what it does not say, from a flag
systems="$(dirname "$0")/../../../shared/mlperf-logs"
"$MRPLAN" profile compose --system-json "$systems/v3.0/NVIDIA/systems/eos_n64_ngc23.09_pytorch.json" --name eos --out "$tmp/eos-json.yaml" > /dev/null
"$MRPLAN" profile compose --gpu H100-SXM5-80GB --gpus-per-node 8 --node-network "8x NDR" --intra NVSwitch3 --cpu "2x Xeon-8480C" \
  --host-memory-GB 2000 --nvme-TB 30 --name eos --out "$tmp/eos-flags.yaml" > /dev/null
cmp -s "$tmp/eos-json.yaml" "$tmp/eos-flags.yaml" || fail "profile compose --system-json: not the profile its parts give"
pm_json="$systems/v1.0/LBNL/systems/perlmutter_512x4_ngc21.09_pytorch.json"
expect_error "host_networking 'HPE Cray Slingshot' names no part of the catalogue (nearest: Slingshot-10, Slingshot-11): give --node-network" \
  profile compose --system-json "$pm_json"
"$MRPLAN" profile compose --system-json "$pm_json" --node-network "2x Slingshot-10" --gpus-per-node 4 > "$tmp/pm-json.yaml"
grep -q "^name: perlmutter_512x4_ngc21.09_pytorch$" "$tmp/pm-json.yaml" && grep -q "inter_node: {alpha_s: .*, bandwidth_GBps: 25}" "$tmp/pm-json.yaml" \
  || fail "profile compose --system-json with the network it does not say"

# a public MLPerf log in, a profile fitted from it, its plan re-predicted
logs="$(dirname "$0")/../../../shared/mlperf-logs/v1.0/LBNL/perlmutter_512x4_ngc21.09_pytorch/deepcam"
if [[ -d "$logs" ]]; then
  "$MRPLAN" ingest-mllog --machine perlmutter --out "$tmp/ing" "$logs"/result_1.txt "$logs"/result_2.txt > "$tmp/ingest.txt"
  grep -q "deepcam on 2048 GPUs, global batch 2048 (local 1)" "$tmp/ingest.txt" || fail "ingest-mllog summary"
  grep -q "plan: batch norm pooled over 2 ranks (batchnorm_group_size)" "$tmp/ingest.txt" || fail "ingest-mllog: the log's settings"
  grep -q "^ML framework 'pytorch nvidia release': the system description beside the logs, .*/systems/perlmutter_512x4_ngc21.09_pytorch.json" \
    "$tmp/ingest.txt" || fail "ingest-mllog reads the framework beside the logs"
  "$MRPLAN" predict "$tmp/ing/result_1.record.json" --gpus 1024 --samples 0 > "$tmp/rec-predict.txt" \
    && grep -q "^dense .* 1024 " "$tmp/rec-predict.txt" && grep -q "^time to target" "$tmp/rec-predict.txt" || fail "predict takes a Record's plan"
  # the epochs' tuning named: LBNL's recipe at 2048, measured by the built-in's own runs; at 256 neither it nor the machine's runs
  "$MRPLAN" predict "$tmp/ing/result_1.record.json" --machine perlmutter --samples 0 > "$tmp/tuned.txt"
  grep -q "^epochs at global batch 2048 (recipe [0-9a-f]\{8\}): x[0-9.]*, the tuning this machine's own runs measured there" "$tmp/tuned.txt" \
    || fail "predict names the tuning its epochs took: $(tail -2 "$tmp/tuned.txt")"
  "$MRPLAN" predict "$tmp/ing/result_1.record.json" --gpus 256 --samples 0 > "$tmp/drawn.txt"
  grep -q "^epochs at global batch 256 (recipe [0-9a-f]\{8\}): no run measured its tuning there" "$tmp/drawn.txt" \
    || fail "predict says a batch's tuning is drawn: $(tail -2 "$tmp/drawn.txt")"
  if "$MRPLAN" calibrate --help > /dev/null 2>&1; then
    "$MRPLAN" calibrate records --profile perlmutter-paper --out "$tmp/fit.yaml" "$tmp/ing/result_1.record.json" > "$tmp/records.txt"
    grep -q "compute.efficiency.conv2d" "$tmp/records.txt" && grep -q "calibrate records: .*result_1.record.json" "$tmp/fit.yaml" \
      || fail "calibrate records fits and names its record"
    # one GPU count: what it cannot fit from the built-in machines that ran the code at two, named
    # again by the predictions from the fitted profile
    # (the logs' ML framework from their system description beside them: NVIDIA's NGC PyTorch)
    grep -q "prior of compute.step_time_cv: .*, the median of the step-time spreads of deepcam with ddp on pytorch nvidia release fitted in perlmutter (built-in), dgxa100 (built-in), eos (built-in)" \
      "$tmp/records.txt" && grep -q "prior of compute.eval_pass_ms: " "$tmp/records.txt" \
      || fail "calibrate records at one count takes the built-in code fits: $(head -3 "$tmp/records.txt")"
    "$MRPLAN" predict "$tmp/ing/result_1.record.json" --machine "$tmp/fit.yaml" --samples 0 > "$tmp/held.txt"
    grep -q "^from other machines (one GPU count cannot fit it): compute.step_time_cv .*, near the median of the step-time spreads of deepcam with ddp" \
      "$tmp/held.txt" || fail "predict names the priors its profile holds values near: $(tail -3 "$tmp/held.txt")"
    # the ML framework from the system JSON is part of the code: NVIDIA's NGC DeepCAM takes the NGC machines' fits alone
    "$MRPLAN" ingest-mllog --machine perlmutter --system-json "$pm_json" --out "$tmp/ngc" "$logs"/result_1.txt > /dev/null
    grep -qF 'software: \"pytorch nvidia release\"' "$tmp/ngc/result_1.record.json" \
      || fail "ingest-mllog --system-json writes the plan's software"
    "$MRPLAN" calibrate records --profile perlmutter-paper --out "$tmp/fitn.yaml" "$tmp/ngc/result_1.record.json" > "$tmp/records-n.txt"
    grep -q "prior of compute.step_time_cv: .*of deepcam with ddp on pytorch nvidia release fitted in perlmutter (built-in), dgxa100 (built-in), eos (built-in)" \
      "$tmp/records-n.txt" && ! grep -q "horeka (built-in)" "$tmp/records-n.txt" \
      || fail "calibrate records takes the fits of the records' framework: $(grep prior "$tmp/records-n.txt")"
    "$MRPLAN" ingest-mllog --machine perlmutter --framework horovod --out "$tmp/hvd" "$logs"/result_1.txt > /dev/null
    "$MRPLAN" calibrate records --profile perlmutter-paper --out "$tmp/fith.yaml" "$tmp/hvd/result_1.record.json" > "$tmp/records-h.txt"
    grep -q "no built-in machine has run deepcam with horovod on pytorch nvidia release at two GPU counts: what one count cannot fit .* has no prior (give --priors-from)" \
      "$tmp/records-h.txt" || fail "calibrate records says a code has no built-in spread"
    "$MRPLAN" validate --profile "$tmp/fit.yaml" "$tmp/ing"/*.record.json > "$tmp/val.txt"
    grep -q "result_2.record.json .*epoch_s" "$tmp/val.txt" || fail "validate re-predicts an ingested record"
    expect_error "is a built-in profile: give --out" calibrate records --profile perlmutter "$tmp/ing/result_1.record.json"
    sed 's/"machine": "[^"]*"/"machine": "my-laptop"/' "$tmp/ing/result_1.record.json" > "$tmp/other.record.json"
    expect_error "other.record.json: machine: 'my-laptop', but $tmp/ing/result_1.record.json is of" calibrate records --profile perlmutter \
      --out "$tmp/fit4.yaml" "$tmp/ing/result_1.record.json" "$tmp/other.record.json"
    # a run timed on this VM's CPU (50 GFLOP/s) is no Perlmutter run
    sed 's/"machine": \("[^"]*"\),/"machine": \1, "device_matmul_flops_per_s": 5e10,/' "$tmp/ing/result_1.record.json" > "$tmp/cpu.record.json"
    expect_error "cpu.record.json: device_matmul_flops_per_s: its device ran matmuls at 0.05 TFLOP/s, 390x below profile 'perlmutter''s" \
      calibrate records --profile perlmutter --out "$tmp/fit5.yaml" "$tmp/cpu.record.json"
    cp "$tmp/ing/result_1.record.json" "$tmp/copy.record.json"  # the same run twice counts once
    "$MRPLAN" calibrate records --profile perlmutter --out "$tmp/fit1.yaml" "$tmp/ing/result_1.record.json" "$tmp/copy.record.json" \
      > "$tmp/records1.txt" 2> "$tmp/records1.err"
    grep -q "copy.record.json is the same record as .*result_1.record.json: counted once" "$tmp/records1.err" && grep -q "fitted from 1 records" "$tmp/records1.txt" \
      || fail "calibrate records counts a record given twice once: $(cat "$tmp/records1.err")"
    # the smaller run's epochs at its global batch (1024), read straight from its logs, pin how the
    # epochs grow with the batch
    small_logs="$(dirname "$logs")/../perlmutter_10x128x4_ngc21.09_pytorch/deepcam"
    "$MRPLAN" calibrate records --profile perlmutter --out "$tmp/fit2.yaml" "$tmp/ing"/*.record.json \
      --epochs-from "$small_logs"/result_1.txt "$small_logs"/result_2.txt > "$tmp/records2.txt"
    grep -q "^convergence.deepcam.critical_batch " "$tmp/records2.txt" && grep -q "critical_batch: " "$tmp/fit2.yaml" \
      || fail "calibrate records --epochs-from fits the critical batch"
    # a folder of public logs: its DeepCAM logs join the epochs, its CosmoFlow logs and the fitted records' own runs are left out
    "$MRPLAN" ingest-mllog --machine perlmutter --out "$tmp/ingf" "$logs" > /dev/null
    [[ -f "$tmp/ingf/result_3.record.json" ]] || fail "ingest-mllog reads every result log of a folder"
    "$MRPLAN" calibrate records --profile perlmutter --out "$tmp/fitf.yaml" "$tmp/ingf"/*.record.json \
      --epochs-from "$(dirname "$logs")/.." > "$tmp/recordsf.txt" 2> "$tmp/recordsf.err"
    grep -q "note: --epochs-from: 3 of its runs are the fitted records' own" "$tmp/recordsf.err" \
      && grep -q "note: --epochs-from: [0-9]* logs or records in its folders are of another benchmark than deepcam: left out" "$tmp/recordsf.err" \
      && grep -q "perlmutter_10x128x4_ngc21.09_pytorch/deepcam/result_1.txt" "$tmp/recordsf.txt" \
      || fail "calibrate records --epochs-from a folder: $(cat "$tmp/recordsf.err")"
    # a copy of a fitted run's log elsewhere, and a record ingested from it, are that run
    mkdir -p "$tmp/elsewhere" && cp "$logs/result_1.txt" "$tmp/elsewhere/result_9.txt"
    "$MRPLAN" calibrate records --profile perlmutter --out "$tmp/fitc.yaml" "$tmp/ingf"/*.record.json \
      --epochs-from "$tmp/elsewhere/result_9.txt" "$tmp/ing/result_2.record.json" > /dev/null 2> "$tmp/recordsc.err"
    grep -q "note: --epochs-from: 2 of its runs are the fitted records' own" "$tmp/recordsc.err" \
      || fail "calibrate records --epochs-from: a copy of a fitted log counts once: $(cat "$tmp/recordsc.err")"
    expect_error "logs: the folder holds no MLPerf result logs (result*.txt)" ingest-mllog "$tmp/ingf"
    expect_error "missing.json: cannot open record file" calibrate records --profile perlmutter --out "$tmp/fit3.yaml" \
      "$tmp/ing/result_1.record.json" --epochs-from "$tmp/missing.json"
    [[ ! -s "$tmp/out.txt" ]] || fail "calibrate records printed a fit before refusing a missing --epochs-from file"
    # a spread fitted at one GPU count is no prior for another machine's (studies/mlperf-scaling: the two-count fits)
    expect_error "fit.yaml: fitted: no step-time spread, warm-up, validation pass's or staging's fixed part fitted by calibrate records at two or more GPU counts" \
      calibrate records --profile perlmutter --out "$tmp/fit4.yaml" "$tmp/ing/result_1.record.json" --priors-from "$tmp/fit.yaml"
    [[ ! -s "$tmp/out.txt" ]] || fail "calibrate records printed a fit before refusing a --priors-from profile"
  fi
  grep -q "^dgxa100 .* its MLPerf HPC runs " "$tmp/list.txt" && grep -q "^cori-a100 .* lent by perlmutter " "$tmp/list.txt" \
    || fail "list: the machines fitted to their MLPerf runs, and what they lend"
  # the leave-one-system-out fit (studies/mlperf-builtins) names a machine data/mlperf_fits.yaml lists
  fits="$(dirname "$0")/../../data/mlperf_fits.yaml"
  set +e
  "$(dirname "$MRPLAN")/cli/mrplan-fit-builtins" "$(dirname "$logs")/../../.." "$fits" --leave-out nosuch > /dev/null 2> "$tmp/loso.err"
  [[ $? -eq 1 ]] && grep -q "mlperf_fits.yaml: nosuch: no such machine to leave out" "$tmp/loso.err" \
    || fail "mrplan-fit-builtins --leave-out an unknown machine: $(cat "$tmp/loso.err")"
  set -e
  # the folders it ingests, as the build reads them: flags as ingest-mllog takes them, priors_only ones left out
  "$(dirname "$MRPLAN")/cli/mrplan-fit-builtins" /L "$fits" --list-folders > "$tmp/folders.txt"
  grep -qx "perlmutter|/L/v1.0/LBNL/perlmutter_256x4_ngc21.09_mxnet/cosmoflow|--framework horovod --precision amp" "$tmp/folders.txt" \
    && grep -qx "perlmutter|/L/v1.0/LBNL/perlmutter_512x4_ngc21.09_pytorch/deepcam|" "$tmp/folders.txt" \
    && ! grep -q "eos|.*/weak/deepcam" "$tmp/folders.txt" || fail "mrplan-fit-builtins --list-folders: $(head -3 "$tmp/folders.txt")"
  printf ':::MLLOG {"key": "run_start", "time_ms": 5}\n:::MLLOG {"key": "run_start", "time_ms": 6}\n' > "$tmp/two.txt"
  expect_error "two.txt: line 2: a second run_start" ingest-mllog --out "$tmp/ing" "$tmp/two.txt"
fi
echo "cli: 1 passed, 0 failed"
