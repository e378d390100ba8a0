#!/usr/bin/env bash
# The test suite under gcc's sanitizers: the whole ctest suite built with
# AddressSanitizer and UndefinedBehaviorSanitizer (part asan, build-asan/),
# then the multi-threaded client and worker tests with ThreadSanitizer (part
# tsan, build-tsan/). Every sanitizer report, from any process (workers, CUDA
# programs running on rgpu's library), fails the run; they are kept in
# build-*/sanitizer-reports/.
#   usage: tools/sanitize.sh [asan] [tsan]     (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
parts=" ${*:-asan tsan} "
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 and line tables, as the sanitizers' documentation advises: quicker to
# build than the normal -O2 -g, stack traces still name file and line.
flags=(-DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_C_FLAGS_SANITIZE="-O1 -g1" -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1")
# Each step says how long it took, in wall and CPU time (CI's budget).
TIMEFORMAT='%R s wall, %U+%S s CPU'
# The CUDA programs nvcc builds are not instrumented: a sanitizer build takes
# those the normal build (build/) has.
nvcc_from_build() { echo "-DNVCC=$PWD/tools/prebuilt-nvcc.sh;$PWD/build;$PWD/$1"; }

# Runs ctest in build dir $1 with args $2...; fails on any sanitizer report.
# Only rgpu's programs carry the runtime: `rgpu run` preloads it into the
# CUDA programs it starts (nvcc's, not instrumented; src/cli/sanitizer_runtime.hpp),
# so the system's tools the tests use (shells, python, SLURM's daemons) run as usual.
run_ctest() {
  local dir=$1
  shift
  rm -rf "$dir/sanitizer-reports"
  mkdir -p "$dir/sanitizer-reports"
  local status=0
  ctest --test-dir "$dir" --output-on-failure -j2 "$@" || status=$?
  if compgen -G "$dir/sanitizer-reports/*" >/dev/null; then
    echo "sanitizer reports in $dir/sanitizer-reports:" >&2
    head -n 40 "$dir"/sanitizer-reports/* >&2
    status=1
  fi
  return $status
}

# Reports go to files, so that a report from a process whose exit status
# no test sees (a worker) fails the run too. Leak checking is off: processes
# the suite kills on purpose (servers, workers) end with their memory held.
reports='log_path=sanitizer-reports/report:log_exe_name=1'

# A part whose tests fail does not stop the other part.
failed=0
if [[ $parts == *" asan "* ]]; then
  cmake -S . -B build-asan -G Ninja -DRGPU_SANITIZE=address,undefined "${flags[@]}" "$(nvcc_from_build build-asan)" \
    "${launcher[@]}" >/dev/null
  echo "sanitize: asan build" >&2
  time ninja -C build-asan
  echo "sanitize: asan tests" >&2
  time ASAN_OPTIONS="detect_leaks=0:${reports/sanitizer-reports/$PWD/build-asan/sanitizer-reports}" \
  UBSAN_OPTIONS="print_stacktrace=1:${reports/sanitizer-reports/$PWD/build-asan/sanitizer-reports}" \
    run_ctest build-asan || failed=1
fi

if [[ $parts == *" tsan "* ]]; then
  # ThreadSanitizer: the fault tests, whose sessions run a worker's lanes
  # and the client's connections at once, the ring, sequencing, function
  # attribute cache and host-test host-node fence unit tests, and the
  # end-to-end programs whose threads share the client (several application
  # threads, host callbacks, background copies, striped copies) over tcp and
  # shm, the client instrumented (`rgpu run` preloads libtsan into them).
  tsan_programs=(threads thread_progress threads_per_thread_stream static_runtime_threads host_callbacks
    async_pinned large_copy_3_stripes graphs_pageable_first_use)
  cmake -S . -B build-tsan -G Ninja -DRGPU_SANITIZE=thread "${flags[@]}" "$(nvcc_from_build build-tsan)" \
    "${launcher[@]}" >/dev/null
  echo "sanitize: tsan build" >&2
  time ninja -C build-tsan rgpu-server rgpu_unit_tests rgpu_fault_tests rgpu_fault_client rgpu cuda rgpu-audit \
    "${tsan_programs[@]/#/e2e_}"
  echo "sanitize: tsan tests" >&2
  programs=$(IFS='|'; echo "${tsan_programs[*]}")
  # UCX patches mmap and munmap in the processes that load it (the servers:
  # they listen on ucx too) unless told not to, which breaks under TSan's own
  # interception of them (a worker died of SIGSEGV at its first page-locked
  # staging slab); ASan and normal builds are unaffected.
  time UCX_MEM_MMAP_HOOK_MODE=none TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:${reports/sanitizer-reports/$PWD/build-tsan/sanitizer-reports}" \
    run_ctest build-tsan -R "^((ServerFault|ServerAuth|ShmRing|SequenceGate|FunctionAttributeCache|HostNodeFence|MoveGate)\\.|e2e\\.(tcp|shm)\\.($programs)\$)" || failed=1
fi
exit $failed
