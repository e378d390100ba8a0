#!/usr/bin/env bash
# Issue 25 on GPUs: PyTorch training (a CNN with cuDNN, a transformer with
# cuBLAS) moved mid-run by `rgpu migrate` from server A (GPU 0) to server B
# (GPU 1, or GPU 0 on a one-GPU machine) over each transport, against the
# same run unmoved: losses must be equal, step for step. Pause time (the
# client's log) against its floor (copy_floor.py: the bytes moved over the
# measured read and write bandwidths of the same transport). A training step
# captured in a CUDA graph moves too: its graph is made again on B. Model
# "jax" trains an MLP with JAX instead (train_moved_jax.py: XLA's command buffers).
# Writes OUT/migration.md.
#   usage: run_migrate.sh OUT_DIR [BUILD_DIR] [TRANSPORTS] [MODELS]   (ports RGPU_PORT+40, +41)
set -uo pipefail
out=$1 build=${2:-build-gpu} transports=${3:-"tcp shm"} models=${4:-"cnn transformer graphed jax"}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/migration"
out=$(cd "$out" && pwd)
build=$(cd "$build" && pwd)
dir=$out/migration
port=$((${RGPU_PORT:-18600} + 40))
rgpu=$build/rgpu
gpus=$(nvidia-smi -L | wc -l)
gpu_b=$((gpus > 1 ? 1 : 0))
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null' EXIT
"$rgpu" token "$dir/key" >/dev/null
a=127.0.0.1:$port b=127.0.0.1:$((port + 1))
start_server() {  # NAME PORT GPU
  "$build/rgpu-server" --listen 127.0.0.1 --port "$2" --gpus "$3" --workers 2 \
    --job-key-file "$dir/key" 2>"$dir/server-$1.log" &
  pids+=($!)
  for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/"$2") 2>/dev/null && return; sleep 0.1; done
  echo "server $1 did not start"; exit 1
}
start_server A "$port" 0
start_server B $((port + 1)) "$gpu_b"
credential=$("$rgpu" credential --key-file "$dir/key" --job moves --user tester --expires 7200 --gpu "$a:0" --gpu "$b:$gpu_b")
export RGPU_CREDENTIAL=$credential RGPU_PEER_TIMEOUT=2 RGPU_LOG_LEVEL=info CUBLAS_WORKSPACE_CONFIG=:4096:8
worker_of() {  # SERVER PID
  "$rgpu" smi --json --key-file "$dir/key" "$1" | python3 -c '
import json, sys
pid = int(sys.argv[1])
for s in json.load(sys.stdin)["servers"]:
    for g in s.get("gpus", []):
        sessions = list(g.get("sessions_without_job") or [])
        for j in (g.get("jobs") or {}).values():
            sessions += j.get("sessions") or []
        for x in sessions:
            if x.get("pid") == pid:
                print(x["worker"]); sys.exit(0)' "$2"
}
steps=200 at=40
rows=() phases=()
for t in $transports; do
  export RGPU_TRANSPORT=$t RGPU_DEVICES=$a:0
  floor=$("$rgpu" run -- python3 "$here/copy_floor.py" 2>/dev/null | awk '/FLOOR/ {print $3, $5}')
  for model in $models; do
    base=$dir/$t-$model-unmoved.log run=$dir/$t-$model-moved.log
    trainer=$here/train_moved.py
    [ "$model" = jax ] && trainer=$here/train_moved_jax.py
    "$rgpu" run -- python3 "$trainer" "$model" $steps >"$base" 2>&1
    rm -f "$dir/ready" "$dir/moved"
    "$rgpu" run -- python3 "$trainer" "$model" $steps $at "$dir/ready" "$dir/moved" >"$run" 2>&1 &
    app=$!
    for _ in $(seq 1200); do [ -e "$dir/ready" ] && break; sleep 0.05; done
    app_pid=$(cat "$dir/ready" 2>/dev/null)
    worker=$(worker_of "$a" "$app_pid")
    migrate=$("$rgpu" migrate --key-file "$dir/key" --session "${worker:-0}" --to "$b/$gpu_b" "$a" 2>&1)
    echo "$migrate" >"$dir/$t-$model-migrate.txt"
    touch "$dir/moved"
    wait $app; rc=$?
    same=no
    cmp -s <(grep '^STEP' "$base") <(grep '^STEP' "$run") && [ "$(grep -c '^STEP' "$run")" = $steps ] && same=yes
    moved=$(grep -o 'session moved to [^ ]*: [0-9.]* MB of device memory, paused [0-9.]* ms[^)]*)' "$run" | head -1)
    mb=$(sed -n 's/.*: \([0-9.]*\) MB.*/\1/p' <<<"$moved") ms=$(sed -n 's/.*paused \([0-9.]*\) ms.*/\1/p' <<<"$moved")
    floor_ms=$(python3 -c "import sys; mb, r, w = sys.argv[1:]; print(f'{float(mb) / 1e3 / float(r) * 1e3 + float(mb) / 1e3 / float(w) * 1e3:.1f}')" \
               "${mb:-0}" $floor 2>/dev/null)
    refusal=$(grep -o 'stays: .*' <<<"$migrate" | head -1)
    rows+=("| $t | $model | ${rc} | $same | ${mb:--} | ${ms:--} | ${floor_ms:--} | ${refusal:-} |")
    [ -n "$moved" ] && phases+=("- $t $model: $moved")
    echo "$t $model: rc $rc, losses equal: $same, ${moved:-not moved} ${refusal}"
  done
  rows+=("| $t | (floor: read / write GB/s) | | | | | $floor | |")
done
{
  echo "# Live migration of PyTorch training (issue 25)"
  echo
  echo "$steps steps; the move is asked at step $at (\`rgpu migrate\` from A, GPU 0, to B, GPU $gpu_b; $gpus GPU(s) here)."
  echo "Losses equal: every step's loss, bit for bit, against the same run unmoved. Pause: the client's"
  echo "log, from stopping the calls to letting them go. Floor: MB moved over the read and the write"
  echo "bandwidth of 1 GB pageable copies over the same transport (copy_floor.py), read then write."
  echo
  echo "| transport | model | exit | losses equal | MB moved | pause ms | floor ms | refused |"
  echo "|---|---|---:|---|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Where each pause went (the client's log):"
  echo
  printf '%s\n' "${phases[@]}"
} >"$out/migration.md"
cat "$out/migration.md"
