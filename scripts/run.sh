#!/usr/bin/env bash
# The README's main command: installs dependencies, builds the inferscope binary, and runs
# `inferscope run` (against the built-in simulated engine unless --url is given). Extra
# arguments go to `inferscope run`, e.g. `bash scripts/run.sh --url http://host:8000 --model M`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_TESTS=OFF -DINFERSCOPE_BENCH=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target inferscope
exec build/release/apps/inferscope/inferscope run "$@"
