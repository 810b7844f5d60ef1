#!/usr/bin/env bash
# Installs every Debian package gtsim's build, tests and tools need. Safe to rerun (apt skips what is there).
# Works as root on a fresh Debian 12; uses sudo when not root.
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(
  build-essential cmake git jq
  libboost-graph-dev libeigen3-dev libspdlog-dev libfmt-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  gnuplot-nox chromium
  clang libclang-rt-14-dev
  openmpi-bin libopenmpi-dev
  pybind11-dev python3-dev python3-nbclient python3-ipykernel python3-nbformat python3-setuptools python3-pip python3-venv python3-matplotlib python3-pandas
)
missing=()
for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#PKGS[@]} packages present"
