#!/usr/bin/env bash
# The pool on the real GPU (issue 11): the CI pool test (tests/e2e/pool_test.sh)
# with the cuda backend and real amounts: credentials, a shared GPU with two
# jobs of 2 GiB each (one allocating past its amount), an exclusive GPU,
# `rgpu smi`, the metrics, `rgpu job-end`; then the server's own
# per-session limit (--max-session-memory 2G) on the same allocation paths
# (RGPU_SUITE_BACKEND=host-test: the test backend, as a walk-through without
# GPU).
#   usage: tests/gpu/run_pool.sh BUILD_DIR OUT_DIR    (ports RGPU_PORT+20 to +23)
set -uo pipefail
build=$1 out=$2 port=$((${RGPU_PORT:-18515} + 20))
here=$(cd "$(dirname "$0")" && pwd)
programs=$here/../e2e/programs
mkdir -p "$out"
for p in pool_quota pool_hold; do
  nvcc -std=c++17 -o "$out/e2e_$p" "$programs/e2e_$p.cu" -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
done
rc=0
POOL_AMOUNT_MIB=${POOL_AMOUNT_MIB:-2048} "$here/../e2e/pool_test.sh" "$build/rgpu" "$build/rgpu-server" "$port" \
  "$out/e2e_pool_quota" "$out/e2e_pool_hold" "${RGPU_SUITE_BACKEND:-cuda}" || rc=1
POOL_AMOUNT_MIB=${POOL_AMOUNT_MIB:-2048} "$here/../e2e/session_memory_test.sh" "$build/rgpu" "$build/rgpu-server" \
  $((port + 3)) "$out/e2e_pool_quota" "${RGPU_SUITE_BACKEND:-cuda}" || rc=1
exit $rc
