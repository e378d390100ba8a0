#!/usr/bin/env bash
# The applications (tests/gpu/apps/*.py: PyTorch, CuPy, JAX, numba, each
# carrying NVIDIA's own runtime and libraries) run twice: locally, and through
# rgpu against an already running rgpu-server; outputs compared as the
# corpus's are (compare_runs.py).
#
# usage: tests/gpu/run_apps.sh BUILD_DIR OUT_DIR [APP...]
#   APP...  app names (default: every tests/gpu/apps/*.py but the helper _checks.py)
# environment:
#   RGPU_PORT (18515)      port of the rgpu-server on 127.0.0.1
#   APPS_PYTHON            interpreter (default /opt/torch/.venv/bin/python3 if present, else python3)
#   APPS_TIMEOUT (600)     seconds per run
# Exit status: 0 when every app passed, 1 otherwise.
set -euo pipefail
BUILD_DIR=$(realpath "${1:?usage: run_apps.sh BUILD_DIR OUT_DIR [APP...]}")
mkdir -p "${2:?usage: run_apps.sh BUILD_DIR OUT_DIR [APP...]}"
OUT_DIR=$(realpath "$2")
shift 2
HERE=$(dirname "$(realpath "$0")")
APPS=$HERE/apps
PORT=${RGPU_PORT:-18515}
TIMEOUT=${APPS_TIMEOUT:-600}
PYTHON=${APPS_PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
LOGS=$OUT_DIR/logs
RESULTS=$OUT_DIR/results.tsv
mkdir -p "$LOGS"
: >"$RESULTS"
names=("$@")
[ ${#names[@]} -gt 0 ] || for f in "$APPS"/[!_]*.py; do names+=("$(basename "$f" .py)"); done
RGPU=$BUILD_DIR/rgpu
# shellcheck source=run_both.sh
source "$HERE/run_both.sh"
for name in "${names[@]}"; do run_both "$name" "$PYTHON" "$APPS/$name.py"; done
python3 "$HERE/compare_runs.py" "$RESULTS" "$LOGS" "$OUT_DIR"
