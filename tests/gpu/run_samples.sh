#!/usr/bin/env bash
# Runs already-built programs that were not written for rgpu (NVIDIA's
# cuda-samples, built in the session from their own sources; nothing here
# builds them) twice: locally, and through rgpu against an already running
# rgpu-server. Such programs print timings, so their outputs are compared by
# verdict (compare_runs.py --verdict): same exit code, same pass/fail lines.
#
# usage: tests/gpu/run_samples.sh BUILD_DIR OUT_DIR PROGRAMS_DIR [NAME...]
#   PROGRAMS_DIR  searched for executables (not .so); each runs from its own folder
#                 (samples find their data relative to it)
#   NAME...       only these programs (default: all found)
# environment:
#   RGPU_PORT (18515)      port of the rgpu-server on 127.0.0.1
#   RGPU_DEVICES           when set, the GPUs the rgpu runs use instead (several servers')
#   SAMPLES_TIMEOUT (120)  seconds per run
# Exit status: 0 when every program that passes locally passed through rgpu.
set -euo pipefail
BUILD_DIR=$(realpath "${1:?usage: run_samples.sh BUILD_DIR OUT_DIR PROGRAMS_DIR [NAME...]}")
mkdir -p "${2:?usage: run_samples.sh BUILD_DIR OUT_DIR PROGRAMS_DIR [NAME...]}"
OUT_DIR=$(realpath "$2")
PROGRAMS=$(realpath "${3:?usage: run_samples.sh BUILD_DIR OUT_DIR PROGRAMS_DIR [NAME...]}")
shift 3
HERE=$(dirname "$(realpath "$0")")
PORT=${RGPU_PORT:-18515}
TIMEOUT=${SAMPLES_TIMEOUT:-120}
LOGS=$OUT_DIR/logs
RESULTS=$OUT_DIR/results.tsv
RGPU=$BUILD_DIR/rgpu
mkdir -p "$LOGS"
: >"$RESULTS"
# shellcheck source=run_both.sh
source "$HERE/run_both.sh"
LOCAL_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64
while IFS= read -r exe; do
  name=$(basename "$exe")
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  (cd "$(dirname "$exe")" && run_both "$name" "./$name")
done < <(find "$PROGRAMS" -type f -executable ! -name '*.so*' ! -path '*/CMakeFiles/*' | sort)
python3 "$HERE/compare_runs.py" --verdict "$RESULTS" "$LOGS" "$OUT_DIR"
