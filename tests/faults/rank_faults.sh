#!/usr/bin/env bash
# Fault injection on two ranks (ctest label `faults`): a rank that stalls ends the job with a
# message naming it; a rank killed during an MRMF fusion stage or an MRT run resumes to the
# uninterrupted run's parameters and per-epoch metrics (batch-norm statistics are per rank); an error on
# one rank ends every rank.
set -uo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$MRPLAN" datagen cosmoflow-mrt --out "$tmp/data/res1" --samples 64 --size 16 --samples-per-file 16 --threads 1 > /dev/null 2>&1 || fail datagen
"$MRPLAN" coarsen "$tmp/data/res1" "$tmp/data/res2" --factor 2 --op sum --threads 1 > /dev/null 2>&1 || fail coarsen
head_yaml() { tiny_plan_head "$1" "$1" "$tmp/data" "checkpoint_every: 1"; }
{ head_yaml mrt; cat <<'YAML'; } > "$tmp/mrt.yaml"
  - {name: coarse, resolution: 2, gpus: 2, local_batch: 4, stop: {epochs: 2}}
  - {name: dense, resolution: 1, gpus: 2, local_batch: 4, stop: {epochs: 3}}
YAML
{ head_yaml mrmf; cat <<'YAML'; } > "$tmp/mrmf.yaml"
  - name: fusion1
    models:
      - {name: low, resolution: 2, gpus: 1, local_batch: 8, stop: {epochs: 3}}
      - {name: high, resolution: 1, gpus: 1, local_batch: 8, init: scratch, stop: {epochs: 2}}
    handoff: {fuse: {bottom_from: low, top_from: high}}
  - {name: finetune, resolution: 1, gpus: 2, local_batch: 4, stop: {epochs: 2}}
YAML
run() { timeout 300 "$MPIEXEC" -np 2 "$MRPLAN" run "$@" --threads 1 --quiet; }
same() {  # final parameters byte-equal, and every epoch's loss and validation metric equal
  cmp -s "$1/model.pt" "$2/model.pt" || fail "$3: final parameters differ"
  /usr/bin/python3 "$(dirname "$0")/same_training.py" "$1/record.json" "$2/record.json" "$3" || exit 1
}
for plan in mrt mrmf; do
  run "$tmp/$plan.yaml" --out "$tmp/$plan-straight" > /dev/null 2>&1 || fail "$plan: the uninterrupted run"
done
# a rank killed in the middle of a stage (MRT: the dense stage; MRMF: the fusion stage, model high)
for c in mrt:step:14 mrmf:step:7; do
  plan=${c%%:*}; fault=${c#*:}; out="$tmp/$plan-killed"
  MRPLAN_FAULT="$fault:kill:1" run "$tmp/$plan.yaml" --out "$out" > "$tmp/killed.txt" 2>&1 && fail "$plan: rank 1 was not killed"
  run "$tmp/$plan.yaml" --out "$out" --resume "$out" > "$tmp/resumed.txt" 2>&1 || fail "$plan: resume: $(cat "$tmp/resumed.txt")"
  same "$tmp/$plan-straight" "$out" "$plan: rank 1 killed at $fault"
done
# a stalled rank (SIGSTOP) ends the job, naming it, within the watchdog's limit; its checkpoint resumes
out="$tmp/stalled"
MRPLAN_FAULT="step:15:stop:1" run "$tmp/mrt.yaml" --out "$out" --watchdog-s 4 > "$tmp/stalled.txt" 2>&1; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "stalled rank: exit $rc (124: the job hung): $(cat "$tmp/stalled.txt")"
grep -q "rank 0 made no progress for .* s (the watchdog's limit: [0-9]* s, --watchdog-s)" "$tmp/stalled.txt" || fail "stalled: $(cat "$tmp/stalled.txt")"
grep -q "rank 1 stopped responding .* s ago (stopped, killed or its node lost); its last progress: " "$tmp/stalled.txt" || fail "stalled rank not named: $(cat "$tmp/stalled.txt")"
grep -q "the last good checkpoint: .*/checkpoints/stage1/model0/gen-" "$tmp/stalled.txt" || fail "stalled: no checkpoint named: $(cat "$tmp/stalled.txt")"
run "$tmp/mrt.yaml" --out "$out" --resume "$out" > "$tmp/resumed.txt" 2>&1 || fail "stalled: resume: $(cat "$tmp/resumed.txt")"
same "$tmp/mrt-straight" "$out" "stalled rank, resumed"
# a bad plan, met alike by every rank, is reported once
printf 'name: x\nworkload: cosmoflow-mrt\n' > "$tmp/bad.yaml"
timeout 120 "$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/bad.yaml" --out "$tmp/bad" > "$tmp/bad.txt" 2>&1 && fail "a bad plan ran"
[ "$(grep -c "mrplan: error: $tmp/bad.yaml" "$tmp/bad.txt")" -eq 1 ] || fail "a bad plan is not reported once: $(cat "$tmp/bad.txt")"
# errors every rank meets in the run, before training (no data) and in it (divergence), are reported once
timeout 120 "$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/mrt.yaml" --out "$tmp/nodata" --data "$tmp/nodata" > "$tmp/nodata.txt" 2>&1 && fail "ran without data"
[ "$(grep -c "mrplan: error: $tmp/nodata/res2: data folder not found" "$tmp/nodata.txt")" -eq 1 ] || fail "no data, not reported once: $(cat "$tmp/nodata.txt")"
sed 's/stop: {epochs: 2}}/stop: {epochs: 2}, learning_rate: 1.0e+12}/' "$tmp/mrt.yaml" > "$tmp/diverges.yaml"
run "$tmp/diverges.yaml" --out "$tmp/diverges" > "$tmp/diverges.txt" 2>&1 && fail "a diverging run succeeded"
[ "$(grep -c "mrplan: error: stage 'coarse' epoch 1 iteration .*: the loss is" "$tmp/diverges.txt")" -eq 1 ] || fail "divergence, not reported once: $(cat "$tmp/diverges.txt")"
# an error that one rank meets alone (a bad sample in its shard) ends every rank at once, naming the
# rank, with the log ended (run_stop aborted): the other rank waits in a collective for it (issue 44)
start=$SECONDS
MRPLAN_FAULT="step:3:error:1" timeout 120 "$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/mrmf.yaml" --out "$tmp/one-rank" --threads 1 --quiet \
  > "$tmp/one-rank.txt" 2>&1; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "an error on one rank: exit $rc (124: the job hung): $(cat "$tmp/one-rank.txt")"
(( SECONDS - start < 60 )) || fail "an error on one rank took $((SECONDS - start)) s to end the job"
grep -q "mrplan: error: MRPLAN_FAULT: an injected input error .* (rank 1 of 2; ending every rank)" "$tmp/one-rank.txt" \
  || fail "an error on one rank, not named: $(cat "$tmp/one-rank.txt")"
[ "$(grep -c '"key": "run_stop"' "$tmp/one-rank/mllog.txt")" -eq 1 ] && grep -q '"key": "run_stop".*"aborted"' "$tmp/one-rank/mllog.txt" \
  || fail "an error on one rank: the log does not end with one run_stop aborted"
# the job ended from outside (SIGTERM to the launcher: a time limit, a cancel) says so and how to go on
# (the launcher's grace before SIGKILL as a scheduler's, Slurm's KillWait: Open MPI's default of 1 s
# can pass before a loaded machine schedules the ranks' handlers)
sed 's/stop: {epochs: 3}}/stop: {epochs: 200}}/' "$tmp/mrt.yaml" > "$tmp/long.yaml"
OMPI_MCA_odls_base_sigkill_timeout=10 "$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/long.yaml" --out "$tmp/term" --threads 1 --quiet > "$tmp/term.txt" 2>&1 &
launcher=$!
for _ in $(seq 100); do grep -q '"key": "epoch_start"' "$tmp/term/mllog.txt" 2> /dev/null && break; sleep 0.2; done
kill -TERM $launcher; wait $launcher
# said on stderr, which the launcher may not pass on as it ends itself, and kept in the run's folder
said="mrplan: the job was ended from outside (a time limit, a cancel or Ctrl-C); its checkpoints are in .*: go on with mrplan run .* --resume $tmp/term"
grep -q "$said" "$tmp/term/terminated.txt" || fail "SIGTERM: nothing kept in terminated.txt: $(cat "$tmp/term.txt")"
# a resume removes it: why an earlier attempt ended is history once the run goes on
"$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/long.yaml" --out "$tmp/term" --resume "$tmp/term" --threads 1 --quiet --stop-after 1 > /dev/null 2>&1
[ ! -e "$tmp/term/terminated.txt" ] || fail "a resume kept the earlier attempt's terminated.txt"
echo "rank faults: 8 cases, all good"
