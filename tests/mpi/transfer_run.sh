#!/usr/bin/env bash
# Transfer learning under `mpirun -np 2` to its end (ctest label `mpi`): a model trained on a
# differently seeded dataset, then fine-tuned from it (`run --pretrained`) with its bottom layers
# frozen for the first two epochs (the allreduce leaves them out), killed inside them and resumed
# frozen, thawed at the third; the refusals of a pretrained model for another method and of a transfer plan without one.
#   tests/mpi/transfer_run.sh MPIEXEC MRPLAN
set -uo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
q() { "$MRPLAN" "$@" > /dev/null 2>&1; }
q datagen cosmoflow-mrt --out "$tmp/related/res1" --samples 48 --size 16 --samples-per-file 8 --threads 1 --counts mini --seed 2 || fail datagen
q datagen cosmoflow-mrt --out "$tmp/target/res1" --samples 48 --size 16 --samples-per-file 8 --threads 1 --counts mini --seed 1 || fail datagen
plan() {  # METHOD DATA PRETRAINED
  tiny_plan_head "$1" "$1" "$tmp/$2"
  echo "  - {name: dense, resolution: 1, gpus: 2, local_batch: 4, $3stop: {epochs: 3}}"
}
plan baseline related "" > "$tmp/pretrain.yaml"
plan transfer target "pretrained: {freeze_through: relu3, freeze_epochs: 2}, " > "$tmp/transfer.yaml"
run() { "$MPIEXEC" -np 2 "$MRPLAN" run "$@" --threads 1; }
run "$tmp/pretrain.yaml" --out "$tmp/pre" > "$tmp/pre.out" 2>&1 || fail "pretraining: $(tail -20 "$tmp/pre.out")"
[ -f "$tmp/pre/model.pt" ] || fail "no model.pt from the pretraining"
run "$tmp/transfer.yaml" --out "$tmp/tl" --pretrained "$tmp/pre/model.pt" --stop-after 1 > "$tmp/first.out" 2>&1 \
  || fail "the transfer run: $(tail -20 "$tmp/first.out")"
grep -q "train from epoch" "$tmp/first.out" && fail "thawed inside the frozen epochs: $(cat "$tmp/first.out")"
run "$tmp/transfer.yaml" --out "$tmp/tl" --pretrained "$tmp/pre/model.pt" --resume "$tmp/tl" > "$tmp/second.out" 2>&1 \
  || fail "the resumed transfer run: $(tail -20 "$tmp/second.out")"
grep -q "^dense: layers through 'relu3' train from epoch 3 on" "$tmp/second.out" || fail "no thaw at epoch 3: $(cat "$tmp/second.out")"
grep -q '"method": "transfer"' "$tmp/tl/record.json" || fail "the record's method: $(grep method "$tmp/tl/record.json")"
grep -q "\"pretrained\": \"$tmp/pre/model.pt\"" "$tmp/tl/record.json" || fail "the record's provenance: $(grep pretrained "$tmp/tl/record.json")"
[ "$(grep -c '"key": "epoch_stop"' "$tmp/tl/mllog.txt")" == 3 ] || fail "epochs logged: $(grep -c epoch_stop "$tmp/tl/mllog.txt")"
# a pretrained model for a plan that does not start from one; a transfer plan with none
out=$(run "$tmp/pretrain.yaml" --out "$tmp/x" --pretrained "$tmp/pre/model.pt" 2>&1) && fail "a baseline plan took --pretrained"
grep -q -- "--pretrained: the plan $tmp/pretrain.yaml is a baseline plan: only a transfer plan starts from a pretrained model" <<< "$out" \
  || fail "refusal: $out"
out=$(run "$tmp/transfer.yaml" --out "$tmp/y" 2>&1) && fail "a transfer plan ran without a pretrained model"
grep -q "stages\[0\].pretrained.checkpoint: no pretrained model given" <<< "$out" || fail "refusal: $out"
echo "transfer learning under mpirun -np 2: pretrained, frozen, killed, resumed, thawed; refusals named"
