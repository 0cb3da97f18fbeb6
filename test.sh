#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the default build (unit + CLI tests)
# and the debug-asan build (unit tests under AddressSanitizer + UndefinedBehaviorSanitizer).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
jobs=$(nproc)
cmake --preset default > /dev/null
cmake --build --preset default -- -j"$jobs"
ctest --preset default -j"$jobs"
# the built-ins' fits, the default build's (deterministic; fitting again under ASan takes minutes)
cmake --preset debug-asan -DMRPLAN_PREFITTED="$PWD/build/default/cli/prefitted_profiles.yaml" > /dev/null
cmake --build --preset debug-asan -- -j"$jobs"
# (not the preprocessing paper's two whole-study fits: 95 s each at -O0, their code run by the other tests)
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset debug-asan -j"$jobs"
# the readers of user files under libFuzzer (ASan + UBSan), a bounded time each; a crash fails
cmake --preset fuzz > /dev/null
cmake --build --preset fuzz -- -j"$jobs"
tests/fuzz/run.sh build/fuzz "${MRPLAN_FUZZ_SECONDS:-60}" "${MRPLAN_FUZZ_RUNS:-15000}"
