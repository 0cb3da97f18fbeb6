#!/usr/bin/env bash
# A Slurm script from `mrplan jobscript` run as written, end to end, on this machine: stub `sbatch`,
# `srun` and `module` commands (srun starts `mpirun -np N` where the script asks for N tasks, the
# command once otherwise) and MRPLAN_DEVICE=cpu. The script makes the coarse folder from res1, the
# run stages its node's share into node memory, the script removes it at the end.
#   tests/cli/jobscript_run.sh MPIEXEC MRPLAN
set -uo pipefail
MPIEXEC="$1"; MRPLAN="$2"
source "$(dirname "$0")/../support/shell_prelude.sh"
export OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$tmp/bin" "$tmp/submit"
"$MRPLAN" datagen cosmoflow-mrt --out "$tmp/data/res1" --samples 48 --size 16 --samples-per-file 16 --threads 1 > /dev/null 2>&1 || fail datagen
cat > "$tmp/bin/srun" <<STUB
#!/usr/bin/env bash
n=1
while (( \$# )); do
  case "\$1" in
    -n) n="\$2"; shift 2 ;;
    -N|-c) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if (( n > 1 )); then exec "$MPIEXEC" -np "\$n" "\$@"; else exec "\$@"; fi
STUB
printf '#!/bin/sh\nexec bash "$@"\n' > "$tmp/bin/sbatch"
printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/module"
chmod +x "$tmp/bin"/*
cat > "$tmp/plan.yaml" <<YAML
name: tiny-mrt
workload: cosmoflow-mrt
workload_options: {size: 16, width: 0.25}
machine: perlmutter
method: mrt
dataset: {train_samples: 32, validation_samples: 16}
target: {metric: val_mse, value: 0.0001}
io: {staging: host_memory}
data: {dir: $tmp/data}
stages:
  - {name: coarse, resolution: 2, gpus: 2, local_batch: 4, stop: {epochs: 2}}
  - {name: dense, resolution: 1, gpus: 2, local_batch: 4, stop: {epochs: 2}}
YAML
"$MRPLAN" jobscript "$tmp/plan.yaml" --time 10m --run-out "$tmp/run" --name tiny-mrt-$$ --out "$tmp/job.sh" > /dev/null 2> "$tmp/js.err" \
  || fail "jobscript: $(cat "$tmp/js.err")"
shellcheck -S warning "$tmp/job.sh" || fail "shellcheck"
grep -q "^module load PrgEnv-gnu cudatoolkit cray-hdf5 nccl$" "$tmp/job.sh" || fail "the site's modules: $(cat "$tmp/job.sh")"
staged=$(sed -n 's/^STAGED="\(.*\)"$/\1/p' "$tmp/job.sh")
(cd "$tmp/submit" && PATH="$tmp/bin:$PATH" MRPLAN_DEVICE=cpu sbatch "$tmp/job.sh") > "$tmp/job.out" 2>&1 || fail "the job: $(tail -20 "$tmp/job.out")"
[ -d "$tmp/data/res2" ] || fail "the job did not make res2 from res1"
[ -f "$tmp/run/record.json" ] && grep -q '"name": "dense"' "$tmp/run/record.json" || fail "no record of both stages: $(tail -20 "$tmp/job.out")"
grep -q "^staged each node's share into $staged: 1 node(s), .* (6 file(s) copied, 0 already there)" "$tmp/job.out" \
  || fail "the run did not stage its node's share: $(grep -i "stag" "$tmp/job.out")"
grep -q '"key": "staging_stop"' "$tmp/run/mllog.txt" && grep -q '"staging_s"' "$tmp/run/record.json" || fail "the staging was not logged"
[ ! -e "$staged" ] || fail "the staged copy $staged was left behind"
echo "jobscript: the Slurm script ran as written (coarsened, staged, trained, cleaned up)"
