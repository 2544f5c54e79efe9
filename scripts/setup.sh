#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera builds and tests with. Idempotent:
# apt-get runs only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build make g++ python3
  libyaml-dev pkg-config nlohmann-json3-dev libcli11-dev catch2
  clang-14 lld-14 llvm-14 llvm-14-tools libclang-rt-14-dev
  libeigen3-dev
  python3-jsonschema python3-yaml python3-numpy
  libopenmpi-dev openmpi-bin
  chromium  # headless, for the test of loader --report's HTML page
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
