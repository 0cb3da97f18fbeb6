#!/usr/bin/env bash
# One training step of cosmoflow-mrt at 32^3, batch 8: mrplan (LibTorch C++) against PyTorch
# (Debian's python3-torch, the same LibTorch underneath), same threads and malloc settings.
# The two programs alternate for ROUNDS rounds, so that the VM's drift falls on both alike; each
# round's ratio of medians is printed, then their median.
# Usage: bench/compare_step.sh [BUILD_DIR] [THREADS] [ROUNDS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
threads=${2:-$(nproc)}
rounds=${3:-2}
steps=${4:-20}
dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed" || {
  echo "installing python3-torch (the PyTorch peer)" >&2
  apt-get install -y -qq --no-install-recommends python3-torch > /dev/null
}
export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 OMP_NUM_THREADS=$threads
ratios=()
for ((r = 1; r <= rounds; r++)); do
  a=$("$build/bench/mrplan_step_bench" 32 8 "$threads" "$steps")
  b=$(/usr/bin/python3 bench/step_pytorch.py 32 8 "$threads" "$steps")
  echo "$a"; echo "$b"
  ms() { sed -E 's/.*median step ([0-9.]+) ms.*/\1/' <<< "$1"; }
  ratios+=("$(awk -v x="$(ms "$a")" -v y="$(ms "$b")" 'BEGIN { printf "%.3f", x / y }')")
done
printf '%s\n' "${ratios[@]}" | sort -g | awk -v t="$threads" '{ v[NR] = $1 } END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "mrplan / PyTorch step time, %d thread(s), per round:", t; for (i = 1; i <= NR; i++) printf " %s", v[i]; printf "; median %.3f\n", m }'
