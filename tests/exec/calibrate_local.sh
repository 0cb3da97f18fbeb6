#!/usr/bin/env bash
# calibrate compute, io and all on this machine, on a tiny network and dataset: each prints its
# fit and writes its fitted parameters (with sources) into a profile that then loads.
set -euo pipefail
MRPLAN="$1"
source "$(dirname "$0")/../support/shell_prelude.sh"
# 16 samples per file: cold reads of 1 and 16 samples are 16x apart, wide enough that the size
# term stands out of the open cost and the noise of the other tests running beside this one
"$MRPLAN" datagen cosmoflow-mrt --out "$tmp/d" --samples 32 --samples-per-file 16 --size 16 --seed 3 > /dev/null 2>&1 || fail "datagen"

"$MRPLAN" calibrate compute --workload cosmoflow-mrt:16:0.25 --batches 2,4 --repeats 2 --profile "$tmp/p.yaml" \
  --csv "$tmp/ops.csv" > "$tmp/compute.txt" 2> "$tmp/compute.err" || fail "calibrate compute: $(cat "$tmp/compute.err" "$tmp/compute.txt")"
grep -q "whole-step backward / its ops" "$tmp/compute.txt" || fail "no whole-step fit printed: $(cat "$tmp/compute.txt")"
for key in compute.efficiency.conv3d compute.kernel_overhead_s compute.step_forward.factor compute.step_backward.bytes_per_param; do
  grep -q "key: $key," "$tmp/p.yaml" || fail "profile lacks $key"
done
head -1 "$tmp/ops.csv" | grep -q "^configuration,op,family,fwd_flops,bytes,fwd_s,bwd_s$" || fail "ops CSV header"

"$MRPLAN" calibrate io --data "$tmp/d" --profile "$tmp/p.yaml" --codec lut,deflate > "$tmp/io.txt" 2> "$tmp/io.err" ||
  fail "calibrate io: $(cat "$tmp/io.txt" "$tmp/io.err")"
grep -q "per-file latency" "$tmp/io.txt" || fail "no io fit printed: $(cat "$tmp/io.txt")"
grep -q "key: io.tiers.pfs.per_file_latency_s," "$tmp/p.yaml" || fail "profile lacks the io fit"
grep -q "key: compute.step_forward.factor," "$tmp/p.yaml" || fail "calibrate io dropped the compute fit"
# deflate is measured on a deflated copy of the first file, read back as the loader reads it
for key in io.codecs.lut.host_decode_GBps io.codecs.deflate.ratio io.codecs.deflate.host_decode_GBps; do
  grep -q "key: $key," "$tmp/p.yaml" || fail "profile lacks $key: $(cat "$tmp/io.txt")"
done

# one sample per file (DeepCAM): the two read sizes are one image row and the whole image
"$MRPLAN" datagen deepcam --out "$tmp/c" --samples 3 --size 128 --seed 3 > /dev/null 2>&1 || fail "datagen deepcam"
"$MRPLAN" calibrate io --data "$tmp/c" --workload deepcam --profile "$tmp/c.yaml" --codec deflate > "$tmp/io.txt" 2> "$tmp/io.err" ||
  fail "calibrate io on deepcam: $(cat "$tmp/io.txt" "$tmp/io.err")"
grep -q "cold reads (.*): 6 reads" "$tmp/io.txt" || fail "deepcam cold reads: $(cat "$tmp/io.txt")"
grep -q "codec deflate: ratio" "$tmp/io.txt" || fail "deepcam deflate (its statistics file beside the copy): $(cat "$tmp/io.txt")"

# one rank per node: nothing to reduce, the allreduce step is skipped and said so
"$MRPLAN" calibrate all --ranks 1 --workload cosmoflow-mrt:16:0.25 --batches 2 4 8 --profile "$tmp/q.yaml" > "$tmp/all.txt" 2> "$tmp/all.err" ||
  fail "calibrate all: $(cat "$tmp/all.err" "$tmp/all.txt")"
grep -q -- "--batches 2,4,8 " "$tmp/all.txt" || fail "calibrate all did not pass --batches to the compute step"
grep -q "allreduce: skipped" "$tmp/all.txt" || fail "calibrate all did not skip the allreduce on one rank"
grep -q "node sharing: skipped" "$tmp/all.txt" || fail "calibrate all did not skip the sharing step on one rank"
grep -q "io: skipped (no --data)" "$tmp/all.txt" || fail "calibrate all without --data"

# bad input: one clear message, exit code 2
set +e
"$MRPLAN" calibrate compute --workload cosmoflow-mrt:16:0.25 --batches 1 --profile "$tmp/r.yaml" > /dev/null 2> "$tmp/err.txt"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "batch 1 exit code $rc"
grep -q "cannot train" "$tmp/err.txt" || fail "batch 1 message: $(cat "$tmp/err.txt")"
echo "calibrate compute, io, all: passed"
