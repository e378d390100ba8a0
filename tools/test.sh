#!/usr/bin/env bash
# Runs every test that needs no GPU: unit, generated-code freshness, fault
# and end-to-end tests against the server's host-memory test backend.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
ninja -C build
ctest --test-dir build --output-on-failure -j2 "$@"
