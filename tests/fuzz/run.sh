#!/usr/bin/env bash
# Runs every fuzz harness of BUILD (preset `fuzz`) for at most SECONDS each, from its seed corpus
# and the inputs of past crashes (regressions/NAME/, each replayed first), with dicts/NAME.dict. With RUNS set (test.sh
# does) the inputs tried are a fixed sequence (seed 1, RUNS runs): CI replays what passed here.
# New corpus entries stay in a scratch folder; a crash leaves its input there and fails the run.
#   tests/fuzz/run.sh build/fuzz 60 [RUNS]
set -uo pipefail
BUILD="$1"; SECONDS_EACH="${2:-60}"; RUNS="${3:-}"
fixed=(); [ -n "$RUNS" ] && fixed=(-seed=1 -runs="$RUNS")
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
scripts="$work/scripts"; mkdir -p "$scripts"
for target in plan_yaml profile_yaml workload_yaml record_json mllog system_json manifest lut diff sample_store jobscript; do
  bin="$BUILD/tests/fuzz/${target}_fuzz"
  [ -x "$bin" ] || { echo "fuzz: $bin not built" >&2; exit 1; }
  mkdir -p "$work/$target" "$work/crashes"
  seeds=("$here/corpus/$target")
  [ -d "$here/regressions/$target" ] && seeds+=("$here/regressions/$target")
  dict=(); [ -f "$here/dicts/$target.dict" ] && dict=(-dict="$here/dicts/$target.dict")
  if ! MRPLAN_FUZZ_SCRIPTS="$scripts" "$bin" "${fixed[@]}" "${dict[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=0 \
       -artifact_prefix="$work/crashes/${target}-" "$work/$target" "${seeds[@]}" > "$work/$target.log" 2>&1; then
    tail -40 "$work/$target.log" >&2
    for c in "$work"/crashes/"$target"-*; do
      [ -f "$c" ] || continue
      mkdir -p "$here/regressions/$target"
      cp "$c" "$here/regressions/$target/"
      echo "fuzz: $target: crash input kept as tests/fuzz/regressions/$target/$(basename "$c") (now a regression input)" >&2
    done
    failed+=("$target")
  else
    echo "fuzz: $target: $(grep -o 'stat::number_of_executed_runs: *[0-9]*\|#[0-9]*.*DONE.*' "$work/$target.log" | tail -1 | tr -s ' ') clean"
  fi
done
# the job scripts jobscript_fuzz accepted (up to 300) are valid bash that shellcheck passes
n=0
for sh in "$scripts"/*.sh; do
  [ -f "$sh" ] || continue
  n=$((n + 1))
  bash -n "$sh" 2> "$work/bash-n.txt" || { echo "fuzz: jobscript: bash -n refuses $sh: $(cat "$work/bash-n.txt")" >&2; cp "$sh" "$here/regressions/" 2>/dev/null; failed+=(jobscript-bash); break; }
done
if command -v shellcheck > /dev/null && ((n > 0)); then
  shellcheck -S warning "$scripts"/*.sh > "$work/shellcheck.txt" 2>&1 || { head -40 "$work/shellcheck.txt" >&2; failed+=(jobscript-shellcheck); }
fi
echo "fuzz: jobscript: $n generated scripts pass bash -n$(command -v shellcheck > /dev/null && echo ' and shellcheck -S warning')"
((${#failed[@]} == 0)) || { echo "fuzz: crashes in ${failed[*]}" >&2; exit 1; }
