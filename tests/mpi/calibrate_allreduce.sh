#!/usr/bin/env bash
# mrplan calibrate allreduce under two ranks: prints the fit and writes the fitted link into a profile.
set -euo pipefail
MPIEXEC="$1"; MRPLAN="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$MPIEXEC" -np 2 "$MRPLAN" calibrate allreduce --max-bytes 1e6 --repeats 3 --profile "$tmp/p.yaml" --csv "$tmp/a.csv" > "$tmp/out.txt"
grep -q "ring alpha-beta fit: alpha = " "$tmp/out.txt" || fail "no fit printed: $(cat "$tmp/out.txt")"
head -1 "$tmp/a.csv" | grep -q "^bytes,ranks,repeats,time_s,algbw_Bps,busbw_Bps$" || fail "CSV header"
[[ $(wc -l < "$tmp/a.csv") -eq 19 ]] || fail "4 B to 512 KiB is 18 sizes"
grep -q "key: comm.intra_node.bandwidth_Bps" "$tmp/p.yaml" || fail "profile lacks the fitted bandwidth: $(cat "$tmp/p.yaml")"
# The profile loads; it has no learning curves yet, and says how to get them.
"$MRPLAN" predict cosmoflow-mrt@summit --machine "$tmp/p.yaml" > /dev/null 2> "$tmp/err.txt" || true
grep -q "calibrate convergence" "$tmp/err.txt" || fail "the calibrated profile does not load: $(cat "$tmp/err.txt")"
echo "calibrate allreduce: passed"
