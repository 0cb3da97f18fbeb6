#!/usr/bin/env bash
# Strong-scaling pairs from the public MLPerf HPC logs (../shared/mlperf-logs): for each system with
# two GPU counts of one benchmark (systems.txt), compose its profile from the parts its system JSON
# lists, ingest both runs, `calibrate records` on the smaller run's three
# logs (what one count cannot fit, from the other systems' fits at both their counts), predict the
# larger run's steady epoch, and compare with its logs and with linear scaling; the epochs to target
# at the larger run's global batch, with the other systems' runs of the benchmark.
# Usage: studies/mlperf-scaling/run.sh [M=mrplan binary] (from the repository root; writes out/mlperf-scaling/,
# or $MLPERF_OUT). MLPERF_PRIORS=builtin: what one count cannot fit from the built-in machines' fits (the
# documented path without --priors-from), each pair composed under its built-in's name, whose fits are left out.
set -euo pipefail
M=${1:-}
if [ -z "$M" ]; then source studies/prelude.sh; fi
LOGS=${MLPERF_LOGS:-../shared/mlperf-logs}
OUT=${MLPERF_OUT:-out/mlperf-scaling}
PRIORS=${MLPERF_PRIORS:-pairs}
rm -rf "$OUT" && mkdir -p "$OUT"
# a run's folder: in the repository where it is there (logs not in ../shared), else under $LOGS
folder() { if [ -d "$1" ]; then echo "$1"; else echo "$LOGS/$1"; fi; }
systems() { grep -v '^#' studies/mlperf-scaling/systems.txt; }
# every system's runs first: each pair's epochs to target are fitted with the other systems' runs
systems | while IFS='|' read -r name bench small large compose ingest small_only set builtin; do
  d="$OUT/$name"
  mkdir -p "$d/small" "$d/large"
  echo "$bench" > "$d/benchmark"
  echo "${set:-development}" > "$d/set"
  # the prior: the system composed from its parts, as its system JSON lists them (systems.txt)
  as=$name
  if [ "$PRIORS" = builtin ]; then as=$builtin; fi
  eval "$M profile compose --name $as $compose --out $d/prior.yaml" > /dev/null
  # the runs' ML framework from the same system JSON (part of the code whose fits make priors)
  json=$(eval "set -- $compose"; while [ $# -gt 0 ]; do if [ "$1" = --system-json ]; then echo "$2"; fi; shift; done)
  $M ingest-mllog $ingest $small_only --system-json "$json" --machine "$d/prior.yaml" --out "$d/small" "$(folder "$small")/$bench"/result_*.txt > "$d/ingest.txt"
  $M ingest-mllog $ingest --system-json "$json" --machine "$d/prior.yaml" --out "$d/large" "$(folder "$large")/$bench"/result_*.txt >> "$d/ingest.txt"
done
# every system fitted at both its GPU counts: what one count cannot fit (the wait for the slowest rank, the first epoch's warm-up,
# a validation pass's and staging's fixed parts)
systems | while IFS='|' read -r name _; do
  d="$OUT/$name"
  $M calibrate records --profile "$d/prior.yaml" --out "$d/both.yaml" "$d"/small/*.record.json "$d"/large/*.record.json > "$d/both.txt"
done
systems | while IFS='|' read -r name bench _; do
  d="$OUT/$name"
  # the epochs' growth with the global batch from the other systems of the benchmark (leave one system out)
  # and what one count cannot fit from their fits at both counts (calibrate records keeps those of
  # the same code: the benchmark, its allreduce library and its ML framework)
  others=() spreads=()
  for o in "$OUT"/*/; do
    if [ "$(basename "$o")" != "$name" ] && [ "$(cat "$o/benchmark")" = "$bench" ]; then
      others+=("$o"small/*.record.json "$o"large/*.record.json) spreads+=("$o"both.yaml)
    fi
  done
  # the one-count systems' logs of the benchmark, as a user's public logs (not the pair's own system's)
  while IFS='|' read -r folder obench pair; do
    if [ "$obench" = "$bench" ] && [ "$pair" != "$name" ]; then others+=("$LOGS/$folder/$bench"/result_*.txt); fi
  done < <(grep -v '^#' studies/mlperf-scaling/one-count.txt)
  extra=()
  if [ ${#others[@]} -gt 0 ]; then extra=(--epochs-from "${others[@]}"); fi
  if [ "$PRIORS" != builtin ] && [ ${#spreads[@]} -gt 0 ]; then extra+=(--priors-from "${spreads[@]}"); fi
  $M calibrate records --profile "$d/prior.yaml" --out "$d/fitted.yaml" "$d"/small/*.record.json "${extra[@]}" > "$d/calibrate.txt"
  first=$(ls "$d"/large/*.record.json | head -1)
  /usr/bin/python3 -c "import json,sys; open(sys.argv[2],'w').write(json.load(open(sys.argv[1]))['plan_spec'])" "$first" "$d/large-plan.yaml"
  $M predict "$d/large-plan.yaml" --machine "$d/fitted.yaml" --samples 0 --epochs --json "$d/predicted.json" > "$d/predict.txt"
  $M predict "$d/large-plan.yaml" --machine "$d/prior.yaml" --samples 0 --json "$d/predicted-prior.json" > /dev/null
  # the larger runs' time to train against the fitted profile's P10-P90 (its fitted values drawn within their errors)
  $M validate "$d"/large/*.record.json --profile "$d/fitted.yaml" --samples 1000 > "$d/validate.txt"
done
/usr/bin/python3 studies/mlperf-scaling/summarize.py "$OUT" | tee "$OUT/summary.md"
if ! command -v gnuplot > /dev/null; then echo "wrote $OUT/summary.md (gnuplot not found: no plots)"; exit 0; fi
# measured (solid), mrplan (dashed) and linear scaling (dotted) per system, from the calibration run
gnuplot <<GP
set terminal pngcairo size 1100,700
set output "$OUT/scaling.png"
set logscale xy
set xlabel "GPUs"; set ylabel "steady epoch time (s)"
set key outside right
set title "MLPerf HPC strong-scaling pairs, calibrated on the smaller run\\nsolid: measured; dashed: mrplan at the larger; dotted: linear scaling"
names = system("grep '^# ' $OUT/scaling.dat | cut -c3-")
plot for [i=0:words(names)-1] "$OUT/scaling.dat" index i using 1:2 with linespoints lw 2 lc i+1 title word(names, i+1)." measured", \
     for [i=0:words(names)-1] "$OUT/scaling.dat" index i using 1:3 with linespoints dt 2 lc i+1 notitle, \
     for [i=0:words(names)-1] "$OUT/scaling.dat" index i using 1:4 with lines dt 3 lc i+1 notitle
GP
# the same pairs' errors at the larger GPU count, mrplan beside linear scaling
gnuplot <<GP
set terminal pngcairo size 1100,500
set output "$OUT/errors.png"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "error of the larger run's epoch time (%)"
set xtics rotate by -20
set grid ytics
set yrange [-60:30]
set title "MLPerf HPC strong-scaling pairs: error at the larger GPU count (grey band: the 5% goal)"
set object 1 rect from graph 0, first -5 to graph 1, first 5 fc rgb "#e8e8e8" behind
plot "$OUT/errors.dat" using 2:xtic(1) title "mrplan" lc rgb "#1f77b4", "" using 3 title "linear scaling" lc rgb "#bbbbbb"
GP
# the larger runs' time to train inside their predicted band, each pair over its measured median
gnuplot <<GP
set terminal pngcairo size 1100,500
set output "$OUT/bands.png"
set logscale y
set ylabel "time to train / the pair's measured median"
set xtics rotate by -20
set offsets 0.5, 0.5, 0, 0
set grid ytics
set key top left
set title "MLPerf HPC strong-scaling pairs: the larger runs' time to train (points) and mrplan's P10-P50-P90"
plot "$OUT/bands.dat" using 1:3:4:5:xtic(2) with yerrorbars pt 7 ps 0.6 lc rgb "#1f77b4" title "mrplan P10-P50-P90", \
     for [c=6:8] "" using 1:c with points pt 6 ps 1.2 lc rgb "#d62728" title (c == 6 ? "measured" : "")
GP
echo "wrote $OUT/summary.md, $OUT/scaling.png, $OUT/errors.png, $OUT/bands.png"
