#!/usr/bin/env bash
# One application on the GPUs of several servers (aggregation), on a machine
# with two or more GPUs: one rgpu-server per GPU, each exporting only its GPU
# on a port and Unix socket of its own, as separate hosts would; the
# application names them all in RGPU_DEVICES. Runs, locally and through rgpu
# over shm and tcp:
#   - bench/multi_gpu_scaling.cu: fixed compute-bound work on 1..N GPUs
#     (speed-up, efficiency, rgpu against local);
#   - bench/peer_copy_bench.cu: peer copies between devices 0 and 1 (GB/s);
#   - bench/ddp_train.py: PyTorch DistributedDataParallel, one process per
#     GPU, losses compared with local (NCCL, else gloo, said which);
#   - multi-GPU programs built elsewhere (SAMPLES_DIR, e.g. NVIDIA's
#     cuda-samples built in the session), compared by verdict.
# Writes OUT_DIR/multi.md (tables) and OUT_DIR/multi.png (bench/plot_multi.py).
#
# usage: tests/gpu/run_multi.sh BUILD_DIR OUT_DIR
# environment:
#   MULTI_PORT (18600)  first server's port; server g listens on MULTI_PORT+g
#   MULTI_GPUS          how many GPUs (default: all the machine has)
#   MULTI_BACKEND       the servers' backend (cuda; host-test tries the plumbing on a
#                       machine without GPUs, where the local runs and checks fail)
#   SAMPLES_DIR         built programs to run (skipped when unset)
#   MULTI_SAMPLES       their names (default: the multi-GPU samples below)
#   SAMPLES_TIMEOUT     seconds per sample run (60)
#   DDP_TIMEOUT         seconds per DDP run of both processes (90)
#   APPS_PYTHON         Python with PyTorch (default /opt/torch/.venv/bin/python3 if present)
# Exit status: 0 when every check passed (targets of the scaling table are
# reported, not enforced).
set -uo pipefail
BUILD_DIR=$(realpath "${1:?usage: run_multi.sh BUILD_DIR OUT_DIR}")
mkdir -p "${2:?usage: run_multi.sh BUILD_DIR OUT_DIR}"
OUT=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
BASE_PORT=${MULTI_PORT:-18600}
PYTHON=${APPS_PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
SAMPLES=${MULTI_SAMPLES:-simpleMultiGPU MonteCarloMultiGPU simpleP2P p2pBandwidthLatencyTest \
conjugateGradientMultiDeviceCG simpleCUFFT_MGPU cudaOpenMP simpleCallback}
export SAMPLES_TIMEOUT=${SAMPLES_TIMEOUT:-60} DDP_TIMEOUT=${DDP_TIMEOUT:-90}
LOCAL_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64
gpus=${MULTI_GPUS:-$(nvidia-smi -L | grep -c '^GPU ')}
if [ "$gpus" -lt 2 ]; then
  echo "run_multi: needs two GPUs or more, this machine has $gpus" | tee "$OUT/multi.md"
  exit 1
fi

servers=() devices=""
stop_servers() { for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_servers EXIT
for g in $(seq 0 $((gpus - 1))); do
  port=$((BASE_PORT + g))
  "$BUILD_DIR/rgpu-server" --backend "${MULTI_BACKEND:-cuda}" --listen 127.0.0.1 --port $port --gpus $g --workers 2 \
    --unix-socket /tmp/rgpu-$port.sock --module-cache "$OUT/module-cache-$g" --log-level info \
    >"$OUT/server$g.log" 2>&1 &
  servers+=($!)
  devices+="${devices:+,}127.0.0.1:$port:$g"
done
for g in $(seq 0 $((gpus - 1))); do
  for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$((BASE_PORT + g))) 2>/dev/null && break; sleep 0.1; done
done
echo "run_multi: $gpus servers, RGPU_DEVICES=$devices"

rc=0
# PROGRAM's output locally and through rgpu over each transport, as
# OUT/NAME-{local,shm,tcp}.txt; the JSON line it prints as NAME-*.json.
run_three() {
  local name=$1
  shift
  LD_LIBRARY_PATH=$LOCAL_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout -k 5 300 "$@" \
    >"$OUT/$name-local.txt" 2>&1 || rc=1
  for t in shm tcp; do
    RGPU_TRANSPORT=$t RGPU_DEVICES=$devices timeout -k 5 300 "$BUILD_DIR/rgpu" run -- "$@" \
      >"$OUT/$name-$t.txt" 2>&1 || rc=1
  done
  for run in local shm tcp; do
    grep '^{' "$OUT/$name-$run.txt" | tail -1 >"$OUT/$name-$run.json"
    echo "[$name $run] $(grep '^RESULT' "$OUT/$name-$run.txt" || echo "no result: $(tail -1 "$OUT/$name-$run.txt")")"
  done
}
# OUT/multi.md from what has run so far, after each stage, so that a run cut
# short still leaves its tables; returns the report's verdict.
report() {
  local crashes
  crashes=$(cat "$OUT"/server*.log | grep -c "killed by signal")
  "$PYTHON" "$ROOT/bench/plot_multi.py" "$OUT" "$gpus" "$devices" "$crashes" >"$OUT/multi.md" 2>"$OUT/plot.err" &&
    [ "$crashes" -eq 0 ]
}
run_three scaling "$BUILD_DIR/multi_gpu_scaling"
run_three peer "$BUILD_DIR/peer_copy_bench"
report

"$PYTHON" "$ROOT/bench/ddp_train.py" compare "$OUT" --rgpu "$BUILD_DIR/rgpu" --devices "$devices" \
  >"$OUT/ddp.txt" 2>&1 || rc=1
echo "[ddp] $(grep '^| ' "$OUT/ddp.txt" | tail -n +3 | cut -d'|' -f2,3,6,8 | tr '\n' ';')"
report

if [ -n "${SAMPLES_DIR:-}" ]; then
  for t in shm tcp; do
    # shellcheck disable=SC2086
    RGPU_DEVICES=$devices RGPU_TRANSPORT=$t "$HERE/run_samples.sh" "$BUILD_DIR" "$OUT/samples-$t" \
      "$SAMPLES_DIR" $SAMPLES >"$OUT/samples-$t.txt" 2>&1 || rc=1
    echo "[samples $t] $(grep -c '^\[ran\]' "$OUT/samples-$t.txt") run"
  done
fi
report || rc=1
exit $rc
