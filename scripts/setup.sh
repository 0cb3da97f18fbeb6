#!/usr/bin/env bash
# Installs the Debian packages mrplan builds with, only those that are missing.
# Idempotent and silent when everything is present. Used by run.sh, test.sh and CI.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  libeigen3-dev libboost-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox libopenblas0-pthread
  libtorch-dev libhdf5-dev zlib1g-dev libopenmpi-dev openmpi-bin libfftw3-dev
  clang libclang-rt-14-dev shellcheck
)

# A cluster without root or without apt: the dependencies come from its modules or Spack
# (docs/building.md); nothing is installed here.
if [[ -n "${MRPLAN_SKIP_SETUP:-}" ]] || ! command -v dpkg-query > /dev/null 2>&1; then
  echo "setup: not installing packages (MRPLAN_SKIP_SETUP set or no dpkg); CMake finds the dependencies (docs/building.md)" >&2
  exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
