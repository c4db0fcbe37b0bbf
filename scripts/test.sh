#!/usr/bin/env bash
# The README's test command: installs dependencies, then builds and runs the whole test
# suite twice — a normal -Werror build and an ASan+UBSan build — and builds the libFuzzer
# targets with clang and runs each briefly. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JOBS=${JOBS:-$(nproc)}

echo "== build (RelWithDebInfo, -Werror)"
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_WERROR=ON >/dev/null
cmake --build build/ci -j"$JOBS"
echo "== tests"
ctest --test-dir build/ci --output-on-failure -j"$JOBS"

echo "== build (ASan + UBSan, -Werror)"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DINFERSCOPE_WERROR=ON \
      -DINFERSCOPE_SANITIZE=ON -DINFERSCOPE_BENCH=OFF >/dev/null
cmake --build build/asan -j"$JOBS"
echo "== tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$JOBS"

if [[ -f fuzz/CMakeLists.txt ]]; then
  echo "== fuzz targets (clang, libFuzzer), 5 s each"
  CXX=clang++-16 cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DINFERSCOPE_FUZZ=ON \
        -DINFERSCOPE_TESTS=OFF -DINFERSCOPE_BENCH=OFF >/dev/null
  cmake --build build/fuzz -j"$JOBS"
  for f in build/fuzz/fuzz/fuzz_*; do
    [[ -x "$f" ]] || continue
    corpus="fuzz/corpus/$(basename "$f" | sed 's/^fuzz_//')"
    args=(-max_total_time=5 -rss_limit_mb=2048)
    if [[ -d "$corpus" ]]; then "$f" "${args[@]}" "$corpus" >/dev/null 2>&1 || { echo "fuzzer $f failed"; "$f" "${args[@]}" "$corpus" 2>&1 | tail -30; exit 1; }
    else "$f" "${args[@]}" >/dev/null 2>&1 || { echo "fuzzer $f failed"; exit 1; }; fi
    echo "  $(basename "$f"): ok"
  done
fi
echo "== all tests passed"
