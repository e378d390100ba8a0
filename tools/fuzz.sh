#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang with the address and
# undefined-behaviour sanitizers, in build-fuzz/) and runs each for SECONDS
# (default 60), one after another, starting from its committed corpus and
# reproducers. Fails on any finding: a crash, sanitizer report, leak, time-out
# or memory blow-up, saved as build-fuzz/findings/<target>-*; reproduce it
# with `build-fuzz/tests/fuzz/fuzz_<target> FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=(frame_reader handshake dispatcher fatbin shm_ring shm_join unauthenticated_limits)
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 and line tables only, as OSS-Fuzz builds: quick to build, still fast.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRGPU_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_C_FLAGS_FUZZ="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
  "${launcher[@]}" >/dev/null
ninja -C build-fuzz "${targets[@]/#/fuzz_}"

mkdir -p build-fuzz/findings
failed=()
for t in "${targets[@]}"; do
  # New inputs go to build-fuzz/corpus/<target>; the committed corpus is only read.
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/findings/$t.log"
  inputs=("build-fuzz/corpus/$t" "tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/reproducers/$t" ] && inputs+=("tests/fuzz/reproducers/$t")
  # A session's objects live until its worker exits: the dispatcher target
  # drops them with each input, which leak checking (libFuzzer's during the
  # run, LeakSanitizer's at its end) would report.
  leaks=1; [ "$t" = dispatcher ] && leaks=0
  if ASAN_OPTIONS="detect_leaks=$leaks" "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -detect_leaks=$leaks -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" "${inputs[@]}" >"$log" 2>&1; then
    echo "fuzz $t: $(grep -o 'number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds} s, no finding"
  else
    echo "fuzz $t: FINDING (log $log)"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: findings in ${failed[*]}" >&2; exit 1; }
