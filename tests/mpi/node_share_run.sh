#!/usr/bin/env bash
# `run --stage-to` under `mpirun -np 2` with one rank per node (--ranks-per-node 1, a folder per
# node through {node}): each node copies only the files its ranks read, in both stages of an MRT
# plan; the run reads those copies, logs the staging as MLPerf does, and a resume stages again
# keeping what is there. A plan that does not stage, or stages beside its first epoch, is refused. (ctest label `mpi`)
#   tests/mpi/node_share_run.sh MPIEXEC MRPLAN
set -uo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
q() { "$MRPLAN" "$@" > /dev/null 2>&1; }
# 48 samples in 6 files of 8: 32 training (files 0-3), 16 validation (files 4-5)
q datagen cosmoflow-mrt --out "$tmp/data/res1" --samples 48 --size 16 --samples-per-file 8 --threads 1 --counts mini || fail datagen
q coarsen "$tmp/data/res1" "$tmp/data/res2" --factor 2 --op sum || fail coarsen
plan() {
  cat <<YAML
name: staged-mrt
workload: cosmoflow-mrt
workload_options: {size: 16, width: 0.25}
machine: perlmutter
method: mrt
dataset: {train_samples: 32, validation_samples: 16}
target: {metric: val_mse, value: 0.0001}
io: {staging: $1}
data: {dir: $tmp/data}
stages:
  - {name: coarse, resolution: 2, gpus: 2, local_batch: 4, stop: {epochs: 2}}
  - {name: dense, resolution: 1, gpus: 2, local_batch: 4, stop: {epochs: 2}}
YAML
}
plan host_memory > "$tmp/plan.yaml"
run() { "$MPIEXEC" -np 2 "$MRPLAN" run "$tmp/plan.yaml" --out "$tmp/${OUT:-run}" --threads 1 --stage-to "$tmp/staged/node{node}" --ranks-per-node 1 "$@"; }
run --stop-after 2 > "$tmp/first.out" 2>&1 || fail "the staged run: $(tail -20 "$tmp/first.out")"
grep -q "^staged each node's share into $tmp/staged/node{node}: 2 node(s), .* (12 file(s) copied, 0 already there)" "$tmp/first.out" \
  || fail "staging: $(grep -i stag "$tmp/first.out")"
# node 0's ranks read training groups 0-15 (files 0, 1) and validation block 32-39 (file 4); node 1 the rest
for res in res1 res2; do
  [ "$(cd "$tmp/staged/node0/$res" && echo *)" == "cosmo_0000.h5 cosmo_0001.h5 cosmo_0004.h5" ] || fail "node 0 $res: $(ls "$tmp/staged/node0/$res")"
  [ "$(cd "$tmp/staged/node1/$res" && echo *)" == "cosmo_0002.h5 cosmo_0003.h5 cosmo_0005.h5" ] || fail "node 1 $res: $(ls "$tmp/staged/node1/$res")"
done
run --resume "$tmp/run" > "$tmp/resume.out" 2>&1 || fail "the resume: $(tail -20 "$tmp/resume.out")"
grep -q "(0 file(s) copied, 12 already there)" "$tmp/resume.out" || fail "the resume staged again: $(grep -i stag "$tmp/resume.out")"
grep -q '"name": "dense"' "$tmp/run/record.json" && grep -q '"staging_s"' "$tmp/run/record.json" || fail "record: $(head -c 600 "$tmp/run/record.json")"
[ "$(grep -c '"key": "staging_stop"' "$tmp/run/mllog.txt")" == 2 ] || fail "the log's staging: $(grep staging "$tmp/run/mllog.txt")"
plan none > "$tmp/plan.yaml"
OUT=none run > "$tmp/none.out" 2>&1 && fail "a plan with io.staging none ran with --stage-to"
grep -q "io.staging.*is none but --stage-to stages the data" "$tmp/none.out" || fail "refusal: $(tail -5 "$tmp/none.out")"
plan "host_memory, staging_async: true" > "$tmp/plan.yaml"
OUT=async run > "$tmp/async.out" 2>&1 && fail "a plan with io.staging_async ran with --stage-to"
grep -q "io.staging_async: is true but --stage-to copies the data before training" "$tmp/async.out" || fail "refusal: $(tail -5 "$tmp/async.out")"
echo "node share: each of 2 nodes staged its 3 of 6 files per resolution, trained on them, resumed keeping them"
