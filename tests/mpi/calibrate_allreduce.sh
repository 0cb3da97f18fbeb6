#!/usr/bin/env bash
# mrplan calibrate allreduce and sharing under two ranks: each prints its fit and writes it into a
# profile, the second keeping what the first wrote.
set -euo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
"$MPIEXEC" -np 2 "$MRPLAN" calibrate allreduce --max-bytes 1e6 --repeats 3 --profile "$tmp/p.yaml" --csv "$tmp/a.csv" > "$tmp/out.txt"
grep -q "ring alpha-beta fit: alpha = " "$tmp/out.txt" || fail "no fit printed: $(cat "$tmp/out.txt")"
head -1 "$tmp/a.csv" | grep -q "^bytes,ranks,repeats,time_s,algbw_Bps,busbw_Bps$" || fail "CSV header"
[[ $(wc -l < "$tmp/a.csv") -eq 19 ]] || fail "4 B to 512 KiB is 18 sizes"
grep -q "key: comm.intra_node.bandwidth_Bps" "$tmp/p.yaml" || fail "profile lacks the fitted bandwidth: $(cat "$tmp/p.yaml")"
# The profile loads; it has no learning curves yet, and says how to get them.
"$MRPLAN" predict cosmoflow-mrt@summit --machine "$tmp/p.yaml" > /dev/null 2> "$tmp/err.txt" || true
grep -q "calibrate convergence" "$tmp/err.txt" || fail "the calibrated profile does not load: $(cat "$tmp/err.txt")"

"$MPIEXEC" -np 2 "$MRPLAN" calibrate sharing --workload cosmoflow-mrt:16:0.25 --batches 2,4 --repeats 3 --profile "$tmp/p.yaml" \
  > "$tmp/sh.txt" 2> "$tmp/sh.err" || fail "calibrate sharing: $(cat "$tmp/sh.txt" "$tmp/sh.err")"
[[ $(grep -c "^cosmoflow-mrt .* batch [24] " "$tmp/sh.txt") -eq 4 ]] || fail "two resolutions x two batches: $(cat "$tmp/sh.txt")"
grep -q "shared step = alone x " "$tmp/sh.txt" || fail "no sharing fit printed: $(cat "$tmp/sh.txt")"
for key in node_sharing.slowdown node_sharing.comm_steal_fraction node_sharing.step_time_cv comm.intra_node.bandwidth_Bps; do
  grep -q "key: $key," "$tmp/p.yaml" || fail "profile lacks $key"
done
grep -q "cpu, 3 rounds\"" "$tmp/p.yaml" || fail "the sharing source does not say its 3 rounds: $(grep node_sharing "$tmp/p.yaml")"
# --min-seconds: more rounds, every configuration in each, until the time has passed (rank 0 decides for both)
"$MPIEXEC" -np 2 "$MRPLAN" calibrate sharing --workload cosmoflow-mrt:16:0.25 --batches 2,4 --repeats 2 --min-seconds 3 --profile "$tmp/p.yaml" \
  > "$tmp/sh.txt" 2> "$tmp/sh.err" || fail "calibrate sharing --min-seconds: $(cat "$tmp/sh.txt" "$tmp/sh.err")"
rounds=$(grep -o "cpu, [0-9]* rounds" "$tmp/p.yaml" | head -1 | grep -o "[0-9]*")
[[ ${rounds:-0} -gt 2 ]] || fail "--min-seconds 3 kept $rounds rounds: $(cat "$tmp/sh.txt")"
echo "calibrate allreduce, sharing: passed"
