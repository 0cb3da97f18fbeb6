# Sourced by the shell tests: a scratch folder $tmp removed at exit, and fail MESSAGE.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
