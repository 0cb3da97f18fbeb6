#!/usr/bin/env bash
# Fault injection on one rank (ctest label `faults`): a run killed at every kind of point of its
# checkpointing, a damaged file in each part of a checkpoint, a full disk, a changed plan, an
# existing output folder. Each case ends with final parameters byte-equal to an uninterrupted run's,
# or with a clear error and the previous checkpoint intact.
set -uo pipefail
MRPLAN="$1"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1
"$MRPLAN" datagen cosmoflow-mrt --out "$tmp/data/res1" --samples 48 --size 16 --samples-per-file 16 --threads 1 > /dev/null || fail datagen
"$MRPLAN" coarsen "$tmp/data/res1" "$tmp/data/res2" --factor 2 --op sum --threads 1 > /dev/null || fail coarsen
cat > "$tmp/plan.yaml" <<YAML
name: tiny
workload: cosmoflow-mrt
workload_options: {size: 16, width: 0.25}
machine: summit
method: mrt
dataset: {train_samples: 32, validation_samples: 16}
target: {metric: val_mse, value: 0.0001}
data: {dir: $tmp/data}
checkpoint_every: 1
stages:
  - {name: coarse, resolution: 2, gpus: 1, local_batch: 8, stop: {switch_rule: {patience: 1, epsilon: 10}, max_epochs: 5}}
  - {name: dense, resolution: 1, gpus: 1, local_batch: 8, stop: {epochs: 3}}
YAML
run() { "$MRPLAN" run "$tmp/plan.yaml" --threads 1 --quiet "$@"; }
run --out "$tmp/straight" || fail "the uninterrupted run"
# the same training, epoch for epoch (timings aside), and the same final parameters, byte for byte
same_as_straight() {
  cmp -s "$tmp/straight/model.pt" "$1/model.pt" || fail "$2: final parameters differ from the uninterrupted run"
  /usr/bin/python3 "$(dirname "$0")/same_training.py" "$tmp/straight/record.json" "$1/record.json" "$2" || exit 1
  ! ls -d "$1"/checkpoints/*/.gen-* "$1"/checkpoints/*/*/.gen-* 2>/dev/null | grep -q . || fail "$2: temporaries left behind"
}
# resume until done (a kill before the first checkpoint leaves nothing to resume: start again)
finish() {
  local out="$1" label="$2" rc
  for _ in 1 2 3; do
    run --out "$out" --resume "$out" > "$tmp/resume.txt" 2>&1; rc=$?
    [ $rc -eq 0 ] && return 0
    if grep -q "no checkpoint to resume from" "$tmp/resume.txt"; then run --out "$out" --overwrite > /dev/null 2>&1 && return 0; fi
    fail "$label: resume failed ($rc): $(cat "$tmp/resume.txt")"
  done
}
cases=0
# a kill at a durable write (25 in this run), before a checkpoint's rename and right after it
for fault in checkpoint-write:1 checkpoint-write:4 checkpoint-write:9 checkpoint-write:17 checkpoint-write:24 checkpoint-write:25 \
             before-publish:3 after-publish:2; do
  out="$tmp/kill-${fault//:/-}"
  MRPLAN_FAULT="$fault:kill" run --out "$out" > /dev/null 2>&1
  rc=$?; [ $rc -eq 137 ] || fail "$fault: expected the run killed (137), got $rc"
  finish "$out" "kill at $fault"
  same_as_straight "$out" "kill at $fault"
  cases=$((cases + 1))
done
# a kill mid-epoch after a checkpoint, then 6 s in the queue: the wait is not trained time
out="$tmp/queued"
MRPLAN_FAULT="step:18:kill" run --out "$out" > /dev/null 2>&1
sleep 6
finish "$out" "kill then a wait"
same_as_straight "$out" "kill then a wait"
/usr/bin/python3 - "$out" <<'PY' || fail "the queue wait was counted in time to target"
import json, sys
times = [json.loads(l.split(":::MLLOG ", 1)[1])["time_ms"] for l in open(sys.argv[1] + "/mllog.txt") if ":::MLLOG" in l]
ttt = json.load(open(sys.argv[1] + "/record.json"))["totals"]["time_to_target_s"]
sys.exit(0 if (max(times) - min(times)) / 1000 - ttt > 5 else 1)
PY
cases=$((cases + 1))
# a full disk at a write: an error naming the file, no temporaries, the previous checkpoint resumes
out="$tmp/enospc"
MRPLAN_FAULT=checkpoint-write:8:enospc run --out "$out" > "$tmp/enospc.txt" 2>&1
rc=$?; [ $rc -eq 2 ] || fail "full disk: expected exit 2, got $rc"
grep -q "No space left on device" "$tmp/enospc.txt" || fail "full disk: $(cat "$tmp/enospc.txt")"
grep -q "checkpoints/run/.gen-000002" "$tmp/enospc.txt" || fail "full disk: the file is not named: $(cat "$tmp/enospc.txt")"
grep -q '"status": "aborted"' "$out/mllog.txt" || fail "full disk: the log has no aborted run_stop"
finish "$out" "full disk"; same_as_straight "$out" "full disk"; cases=$((cases + 1))
# a damaged file in the newest generation: reported, skipped, the previous one resumes
stop_mid_dense() { run --out "$1" --stop-after 4 > /dev/null 2>&1 || fail "stop-after"; }
flip() { printf '\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$1" bs=1 seek=$(( $(stat -c %s "$1") / 2 )) conv=notrunc status=none; }
for target in stage1/model0/gen-000002/model.pt stage1/model0/gen-000002/optimizer.pt stage1/model0/gen-000002/rng.pt \
              stage1/model0/gen-000002/progress.json stage1/model0/gen-000002/MANIFEST.json run/gen-000002/state.json \
              run/gen-000002/handoff.pt; do
  hows=flip; case $target in */model.pt|*/MANIFEST.json|*/handoff.pt) hows="flip truncate";; esac
  for how in $hows; do
    out="$tmp/damaged-$how-${target//\//-}"
    stop_mid_dense "$out"
    [ -f "$out/checkpoints/$target" ] || fail "no $target in $(cd "$out/checkpoints" && find . | tr '\n' ' ')"
    if [ $how = flip ]; then flip "$out/checkpoints/$target"; else truncate -s 100 "$out/checkpoints/$target"; fi
    run --out "$out" --resume "$out" > "$tmp/damaged.txt" 2>&1 || fail "$how $target: resume failed: $(cat "$tmp/damaged.txt")"
    grep -q "skipping a damaged checkpoint: $out/checkpoints/${target%/*}" "$tmp/damaged.txt" || fail "$how $target: not reported: $(cat "$tmp/damaged.txt")"
    same_as_straight "$out" "$how $target"
    cases=$((cases + 1))
  done
done
# a state edited by hand (stage: 7) fails its checksum like any damage
out="$tmp/edited"; stop_mid_dense "$out"
sed -i 's/"stage": 1/"stage": 7/' "$out/checkpoints/run/gen-000002/state.json"
run --out "$out" --resume "$out" > "$tmp/edited.txt" 2>&1 || fail "edited state: $(cat "$tmp/edited.txt")"
grep -q "state.json: .*CRC-32" "$tmp/edited.txt" || fail "edited state not reported: $(cat "$tmp/edited.txt")"
same_as_straight "$out" "edited state"; cases=$((cases + 1))
# every generation damaged: an error listing each, nothing trained
out="$tmp/all-damaged"; stop_mid_dense "$out"
for g in "$out"/checkpoints/run/gen-*; do truncate -s 10 "$g/state.json"; done
run --out "$out" --resume "$out" > "$tmp/all.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no sound checkpoint here" "$tmp/all.txt" || fail "all damaged ($rc): $(cat "$tmp/all.txt")"; cases=$((cases + 1))
# a changed plan is refused with the field named; --force lets it through and the record says so
out="$tmp/changed"; stop_mid_dense "$out"
sed 's/stop: {epochs: 3}}/learning_rate: 0.01, stop: {epochs: 3}}/' "$tmp/plan.yaml" > "$tmp/changed.yaml"
"$MRPLAN" run "$tmp/changed.yaml" --threads 1 --quiet --out "$out" --resume "$out" > "$tmp/changed.txt" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "changed plan: expected exit 2, got $rc"
grep -q "stages\[1\].learning_rate: 0.001 -> 0.01" "$tmp/changed.txt" || fail "changed plan: $(cat "$tmp/changed.txt")"
"$MRPLAN" run "$tmp/changed.yaml" --threads 1 --quiet --out "$out" --resume "$out" --force 'stages[1].learning_rate' > /dev/null 2>&1 || fail "--force"
grep -q "resumed with a changed plan (--force): stages\[1\].learning_rate" "$out/record.json" || fail "--force not recorded"
grep -q '"resumed_with_changes": "stages\[1\].learning_rate"' "$out/record.json" || fail "--force not in the provenance"
cases=$((cases + 1))
# an existing output folder is refused; --overwrite replaces it; a finished run resumed changes nothing
run --out "$tmp/straight" > "$tmp/exists.txt" 2>&1 && fail "an existing --out was overwritten"
grep -q "holds a run already (record.json, mllog.txt, checkpoints): resume it with --resume" "$tmp/exists.txt" || fail "$(cat "$tmp/exists.txt")"
cp "$tmp/straight/record.json" "$tmp/record.before"
run --out "$tmp/straight" --resume "$tmp/straight" > /dev/null || fail "finished resume"
cmp -s "$tmp/record.before" "$tmp/straight/record.json" || fail "a finished run resumed rewrote its record"
run --out "$tmp/straight" --overwrite > /dev/null || fail "--overwrite"
same_as_straight "$tmp/straight" "--overwrite"
cases=$((cases + 3))
# --deterministic (for a GPU's resume checks) trains the same on a CPU, and the Record says so
run --out "$tmp/det" --deterministic > /dev/null || fail "--deterministic"
same_as_straight "$tmp/det" "--deterministic"
grep -q '"kernels": "deterministic"' "$tmp/det/record.json" || fail "--deterministic not in the provenance"
cases=$((cases + 1))
echo "checkpoint faults: $cases cases, all good"
