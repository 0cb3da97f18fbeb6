#!/usr/bin/env bash
# One training step of cosmoflow-mrt at 32^3, batch 8: mrplan (LibTorch C++) against PyTorch
# (Debian's python3-torch, the same LibTorch underneath), same threads and malloc settings.
# Usage: bench/compare_step.sh [BUILD_DIR] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
threads=${2:-$(nproc)}
dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed" || {
  echo "installing python3-torch (the PyTorch peer)" >&2
  apt-get install -y -qq --no-install-recommends python3-torch > /dev/null
}
export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 OMP_NUM_THREADS=$threads
for run in 1 2; do
  "$build/bench/mrplan_step_bench" 32 8 "$threads" 20
  /usr/bin/python3 bench/step_pytorch.py 32 8 "$threads" 20
done
