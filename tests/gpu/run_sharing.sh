#!/usr/bin/env bash
# The sharing benchmark of issue 26 on GPU 0: N = 1, 2, 4, 8, 16 tenants at
# once, each running small_step (small kernels, a synchronize per step) for
# SECONDS, five ways: local processes, local processes under an MPS daemon
# of our own, through rgpu time slicing, and through rgpu with
# --gpu-sharing mps, over tcp and (rgpu-mps-shm) over shm. Writes OUT_DIR/sharing.jsonl (one line per tenant) and,
# with bench/sharing_report.py, OUT_DIR/sharing.md and sharing.png:
# aggregate and per-tenant steps/s, p99 step latency, fairness. Then a
# compute share: the SMs a session with a 25 % credential share sees through
# rgpu's MPS workers against a local MPS client at 25 %. Then fault
# containment: what two tenants see while a third faults, the same four ways
# (tests/gpu/sharing/tenant_fault.cu), and whether a new tenant runs after.
#   usage: tests/gpu/run_sharing.sh BUILD_DIR OUT_DIR [SECONDS] [COUNTS]
#   (ports RGPU_PORT, default 18600, and the one after it; the server's default Unix socket)
set -uo pipefail
build=$1 out=$2 seconds=${3:-10} counts=${4:-"1 2 4 8 16"} port=${RGPU_PORT:-18600}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/sharing"
out=$(cd "$out" && pwd)
program=$out/sharing/small_step
nvcc -O2 -cudart shared -o "$program" "$here/sharing/small_step.cu" || exit 1
results=$out/sharing.jsonl
: >"$results"
mps_dir=$out/sharing/mps
server_pid=
# A run that stops early leaves no server behind.
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null' EXIT

# N tenants at once with RUNNER (a command prefix); one json line each.
# Their timed steps start together (small_step.cu), after time for all to
# start: 16 local processes took over 2 s to make their contexts.
tenants() {  # MODE N RUNNER...
  local mode=$1 n=$2 pids=() i start_at
  shift 2
  start_at=$(python3 -c "import time; print(f'{time.time() + 1.5 + $n / 4:.3f}')")
  for i in $(seq 0 $((n - 1))); do
    SHARING_START_AT=$start_at "$@" "$program" "$seconds" >"$out/sharing/$mode-$n-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[i]}"
    python3 - "$mode" "$n" "$i" "$?" "$out/sharing/$mode-$n-$i.log" >>"$results" <<'PY'
import json, re, sys
mode, n, i, rc, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
text = open(log).read()
m = re.search(r"SHARING steps (\d+) seconds ([\d.]+) mean_us ([\d.]+) p50_us ([\d.]+) p99_us ([\d.]+)", text)
row = {"mode": mode, "clients": n, "client": i, "ok": rc == 0 and m is not None, "late": "LATE" in text}
if m:
    row.update(steps=int(m[1]), seconds=float(m[2]), mean_us=float(m[3]), p50_us=float(m[4]), p99_us=float(m[5]))
print(json.dumps(row))
PY
  done
}

local_mps() {  # start|stop: an MPS daemon of our own, in private directories
  export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
  if [ "$1" = start ]; then
    mkdir -p -m 700 "$mps_dir/pipe" "$mps_dir/log"
    CUDA_VISIBLE_DEVICES=0 nvidia-cuda-mps-control -d || { echo "local MPS did not start"; exit 1; }
  else
    echo quit | nvidia-cuda-mps-control
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    rm -rf "$mps_dir"
  fi
}

server() {  # start FLAGS... | stop
  if [ "$1" = stop ]; then
    kill "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=
    return
  fi
  shift
  CUDA_VISIBLE_DEVICES=0 "$build/rgpu-server" --port "$port" --metrics-port $((port + 1)) --gpus 0 --workers 16 \
    --mps-dir "$out/sharing/server-mps" "$@" 2>"$out/sharing/server.log" &
  server_pid=$!
  # With MPS, ready once the metrics name the GPU's sharing mode: the port
  # opens before the server has started its MPS daemon.
  local ready="(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null"
  [[ " $* " == *" --gpu-sharing mps "* ]] && ready="metric_sharing | grep -q mode="
  for _ in $(seq 300); do eval "$ready" && return; sleep 0.1; done
  echo "rgpu-server did not start"; cat "$out/sharing/server.log"; exit 1
}
metric_sharing() { curl -sf "http://127.0.0.1:$((port + 1))/metrics" | grep '^rgpu_gpu_sharing'; }

for n in $counts; do tenants local "$n" env; done
local_mps start
for n in $counts; do tenants local-mps "$n" env; done
local_mps stop
server start --gpu-sharing timeslice
for n in $counts; do tenants rgpu-timeslice "$n" "$build/rgpu" run --server 127.0.0.1:"$port" --; done
server stop
server start --gpu-sharing mps
metric_sharing | grep -q 'mode="mps"' || { echo "rgpu-server did not start MPS:"; cat "$out/sharing/server.log"; exit 1; }
for n in $counts; do tenants rgpu-mps "$n" "$build/rgpu" run --server 127.0.0.1:"$port" --; done
for n in $counts; do
  tenants rgpu-mps-shm "$n" env RGPU_TRANSPORT=shm RGPU_DEVICES=127.0.0.1:"$port":0 "$build/rgpu" run --
done
server stop
[ ! -e "$out/sharing/server-mps" ] || { echo "rgpu-server left its MPS directories"; exit 1; }

local_mps start
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 "$program" 0.2 >"$out/sharing/share-local.log" 2>&1
local_mps stop
"$build/rgpu" token "$out/sharing/job-key" >/dev/null
server start --gpu-sharing mps --job-key-file "$out/sharing/job-key"
credential=$("$build/rgpu" credential --key-file "$out/sharing/job-key" --job share --expires 600 \
  --gpu "127.0.0.1:$port:0=1G@25%")
RGPU_CREDENTIAL=$credential RGPU_DEVICES=127.0.0.1:$port:0 "$build/rgpu" run -- "$program" 0.2 \
  >"$out/sharing/share-rgpu.log" 2>&1
server stop

# Fault containment: two tenants run checked steps while a third writes
# through a wild pointer (a sticky fault of its context), then a new tenant
# starts; the same four ways. OUT/sharing/containment-WAY-*.log.
faulter=$out/sharing/tenant_fault
nvcc -O2 -cudart shared -o "$faulter" "$here/sharing/tenant_fault.cu" || exit 1
containment_rows=()
outcome() { grep -o 'CONTAINMENT.*' "$1" | sed 's/^CONTAINMENT [a-z]* //' | head -1 | grep . || echo "no result: $(tail -1 "$1")"; }
metric() { curl -sf "http://127.0.0.1:$((port + 1))/metrics" | awk -v m="$1" '$1 ~ "^"m {s += $2} END {print s + 0}'; }
contain() {  # WAY RUNNER...
  local way=$1 log=$out/sharing/containment-$1 pids=()
  shift
  "$@" "$faulter" victim 4 >"$log-victim0.log" 2>&1 & pids+=($!)
  "$@" "$faulter" victim 4 >"$log-victim1.log" 2>&1 & pids+=($!)
  "$@" "$faulter" fault 1 >"$log-fault.log" 2>&1 & pids+=($!)
  wait "${pids[@]}"
  sleep 1
  "$@" "$faulter" victim 0.5 >"$log-after.log" 2>&1
  local server_note=-
  [ -n "$server_pid" ] && server_note="sticky faults $(metric rgpu_sticky_faults_total), MPS restarts $(metric rgpu_mps_restarts_total)"
  containment_rows+=("| $way | $(outcome "$log-victim0.log") | $(outcome "$log-victim1.log") | $(outcome "$log-fault.log") | $(outcome "$log-after.log") | $server_note |")
}
contain local env
local_mps start
contain local-mps env
local_mps stop
for sharing in timeslice mps; do
  server start --gpu-sharing $sharing
  contain rgpu-$sharing "$build/rgpu" run --server 127.0.0.1:"$port" --
  server stop
  cp "$out/sharing/server.log" "$out/sharing/containment-rgpu-$sharing-server.log"
done

report_rc=0
python3 "$here/../../bench/sharing_report.py" "$results" "$out" || report_rc=1
sms() { sed -n 's/^SMS //p' "$1"; }
share_local=$(sms "$out/sharing/share-local.log") share_rgpu=$(sms "$out/sharing/share-rgpu.log")
share_same=no
[ -n "$share_local" ] && [ "$share_local" = "$share_rgpu" ] && share_same=yes
{
  echo
  echo "Compute share 25 %: SMs seen by a local MPS client ${share_local:-none}, by an rgpu session with the share in"
  echo "its credential ${share_rgpu:-none} ($([ $share_same = yes ] && echo same || echo '**differ**'))."
} | tee -a "$out/sharing.md"
{
  echo
  echo "## Fault containment"
  echo
  echo "Two tenants run checked steps for 4 s; after 1 s a third writes through a wild pointer; then a new tenant"
  echo "runs 0.5 s. Each cell: steps, the first CUDA error, and when it came (s from the tenant's start)."
  echo
  echo "| way | tenant 1 | tenant 2 | faulting tenant | new tenant after | server |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${containment_rows[@]}"
} | tee -a "$out/sharing.md"
[ $report_rc -eq 0 ] && [ $share_same = yes ]
