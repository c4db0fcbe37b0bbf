#!/usr/bin/env bash
# Installs every build and test dependency of inferscope from Debian (bookworm).
# Idempotent: safe to run on every invocation of the README commands.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config git
  libcurl4-openssl-dev libssl-dev
  libsimdjson-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
  libsqlite3-dev libpcre2-dev libsentencepiece-dev openssl
  libboost-dev libboost-system-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-16 libclang-rt-16-dev clang-format
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
