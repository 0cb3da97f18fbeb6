# Sourced by the shell tests: a scratch folder $tmp removed at exit, fail MESSAGE, and tiny_plan_head.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The tiny CosmoFlow plan's head that the shell tests train (16^3 voxels, a quarter of the filters,
# as tests/support/tiny_plan.hpp): tiny_plan_head NAME METHOD DATA_DIR [TOP_LEVEL_LINES]; its
# stages follow.
tiny_plan_head() {
  cat <<YAML
name: $1
workload: cosmoflow-mrt
workload_options: {size: 16, width: 0.25}
machine: summit
method: $2
dataset: {train_samples: 32, validation_samples: 16}
target: {metric: val_mse, value: 0.0001}
data: {dir: $3}
${4:-}
stages:
YAML
}
