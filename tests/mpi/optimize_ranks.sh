#!/usr/bin/env bash
# mrplan optimize spread over three MPI ranks gives one rank's answer: the same table, the same plan.
set -euo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
args=(optimize cosmoflow@perlmutter --gpus 4:256 --local-batch 1:16 --switch 5:60:5 --samples 10 --threads 1 --deadline 3h)
"$MRPLAN" "${args[@]}" --out "$tmp/one.yaml" > "$tmp/one.txt"
"$MPIEXEC" -np 3 "$MRPLAN" "${args[@]}" --out "$tmp/three.yaml" > "$tmp/three.txt"
grep -q "(3 ranks x 1 threads)" "$tmp/three.txt" || fail "three ranks did not share the search: $(head -1 "$tmp/three.txt")"
# everything after the first line (which says how long and on how many ranks) is the answer
diff <(tail -n +2 "$tmp/one.txt" | grep -v "^wrote") <(tail -n +2 "$tmp/three.txt" | grep -v "^wrote") || fail "the answers differ"
diff "$tmp/one.yaml" "$tmp/three.yaml" || fail "the chosen plans differ"
sed -n 1p "$tmp/one.txt" | sed 's/in [0-9.]* s (1 ranks/in ... (N ranks/' > "$tmp/h1"
sed -n 1p "$tmp/three.txt" | sed 's/in [0-9.]* s (3 ranks/in ... (N ranks/' > "$tmp/h3"
diff "$tmp/h1" "$tmp/h3" || fail "the counts differ"
echo "mpi optimize: 3 ranks = 1 rank"
