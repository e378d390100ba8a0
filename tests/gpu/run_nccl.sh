#!/usr/bin/env bash
# NCCL between GPUs of several rgpu servers (docs/nccl.md), on a machine with
# two GPUs or more: one rgpu-server per GPU, as separate hosts would be.
# Each part runs locally (NVIDIA's NCCL in the processes) and through rgpu
# (rgpu's libnccl.so.2: NCCL runs on the servers), twice over:
#   servers "default": the workers' NCCL picks its own transport between
#     them (on one host: P2P or SHM);
#   servers "net": --nccl-env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, so NCCL
#     goes over its network transport (sockets, or IB where there is some),
#     as between two hosts.
# Parts:
#   - all-reduce bus bandwidth by size, 8 B..256 MB (bench/nccl_bandwidth.cu:
#     one process, ncclCommInitAll over the servers' GPUs, grouped calls);
#   - DDP (one launch per rank, and torchrun) and FSDP (torchrun), 2 ranks,
#     one GPU each (bench/ddp_train.py), over the client transports tcp and
#     shm, and ucx where the build has the ucx transport (UCX from .whl/,
#     where tools/fetch-ucx.sh puts it, else the system's; the servers then
#     listen for ucx on NCCL_PORT+50+g): losses against local, step time.
# Writes OUT_DIR/nccl.md (markdown tables).
#
# usage: tests/gpu/run_nccl.sh BUILD_DIR OUT_DIR
# environment:
#   NCCL_PORT (18700)   first server's port; server g listens on NCCL_PORT+g
#   APPS_PYTHON         Python with PyTorch (default /opt/torch/.venv/bin/python3 if present)
#   NCCL_LIBRARY        NVIDIA's libnccl.so.2 for the local runs and the servers
#                       (default: the one of APPS_PYTHON's nvidia-nccl-cu13 wheel)
#   NCCL_SERVERS        which server kinds to run ("default net")
#   NCCL_RUNS           which training runs ("ddp:ranks ddp:torchrun fsdp:torchrun"; "" for none),
#                       so that a session short of device time can split the parts
#   NCCL_TRACE_STEPS    1 (default): on the default servers, DDP over tcp once more under
#                       RGPU_TRACE=1, one launch per rank and under torchrun, and the calls a
#                       rank forwards per step (bench/trace_per_step.py)
# Exit status: 0 when every run gave right results (targets are reported, not enforced).
set -uo pipefail
BUILD_DIR=$(realpath "${1:?usage: run_nccl.sh BUILD_DIR OUT_DIR}")
mkdir -p "${2:?usage: run_nccl.sh BUILD_DIR OUT_DIR}"
OUT=$(realpath "$2")
ROOT=$(realpath "$(dirname "$(realpath "$0")")/../..")
BASE_PORT=${NCCL_PORT:-18700}
PYTHON=${APPS_PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
NCCL_LIBRARY=${NCCL_LIBRARY:-$("$PYTHON" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)}
gpus=$(nvidia-smi -L | grep -c '^GPU ')
if [ "$gpus" -lt 2 ] || [ ! -f "$NCCL_LIBRARY" ]; then
  echo "run_nccl: needs two GPUs (has $gpus) and NVIDIA's libnccl.so.2 (NCCL_LIBRARY='$NCCL_LIBRARY')" | tee "$OUT/nccl.md"
  exit 1
fi
SERVER_KINDS=${NCCL_SERVERS:-default net}
TRAINING_RUNS=${NCCL_RUNS-ddp:ranks ddp:torchrun fsdp:torchrun}
LOCAL_LIBRARY_PATH=$(dirname "$NCCL_LIBRARY"):${CUDA_HOME:-/usr/local/cuda}/lib64
ucx=
[ -f "$BUILD_DIR/lib/librgpu-transport-ucx.so" ] && ucx=ucx
[ -d "$ROOT/.whl/libucx/lib" ] && export LD_LIBRARY_PATH=$ROOT/.whl/libucx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
servers=()
stop_servers() { for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; servers=(); sleep 1; }
trap stop_servers EXIT
start_servers() {  # NAME [server flags...]: RGPU_DEVICES in $devices (and over ucx, $ucx_devices)
  local name=$1
  shift
  devices="" ucx_devices=""
  for g in $(seq 0 $((gpus - 1))); do
    local port=$((BASE_PORT + g))
    "$BUILD_DIR/rgpu-server" --listen 127.0.0.1 --port $port --gpus $g --workers 2 --unix-socket /tmp/rgpu-$port.sock \
      ${ucx:+--ucx-port $((port + 50))} --module-cache "$OUT/module-cache-$g" --nccl-library "$NCCL_LIBRARY" \
      --log-level info "$@" >"$OUT/server-$name-$g.log" 2>&1 &
    servers+=($!)
    devices+="${devices:+,}127.0.0.1:$port:$g"
    ucx_devices+="${ucx_devices:+,}127.0.0.1:$((port + 50)):$g"
  done
  for g in $(seq 0 $((gpus - 1))); do
    for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$((BASE_PORT + g))) 2>/dev/null && break; sleep 0.1; done
  done
}

rc=0
{
  echo "# NCCL across rgpu servers ($gpus GPUs, one rgpu-server each)"
  echo
  echo "NVIDIA's NCCL: $NCCL_LIBRARY. Locally it runs in the processes; through rgpu, in the servers' workers."
  echo
} >"$OUT/nccl.md"

LD_LIBRARY_PATH=$LOCAL_LIBRARY_PATH timeout -k 5 600 "$BUILD_DIR/nccl_bandwidth" >"$OUT/bandwidth-local.txt" 2>&1 || rc=1
# The "net" servers' baseline: NVIDIA's NCCL locally with the same transports off.
case " $SERVER_KINDS " in *" net "*)
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 LD_LIBRARY_PATH=$LOCAL_LIBRARY_PATH timeout -k 5 600 "$BUILD_DIR/nccl_bandwidth" \
    >"$OUT/bandwidth-local-net.txt" 2>&1 || rc=1 ;;
esac
for servers_kind in $SERVER_KINDS; do
  flags=() local_env=
  [ $servers_kind = net ] && flags=(--nccl-env NCCL_P2P_DISABLE=1 --nccl-env NCCL_SHM_DISABLE=1) &&
    local_env=NCCL_P2P_DISABLE=1,NCCL_SHM_DISABLE=1
  start_servers $servers_kind "${flags[@]}"
  for t in tcp shm $ucx; do
    d=$devices
    [ $t = ucx ] && d=$ucx_devices
    RGPU_TRANSPORT=$t RGPU_DEVICES=$d timeout -k 5 600 "$BUILD_DIR/rgpu" run -- "$BUILD_DIR/nccl_bandwidth" \
      >"$OUT/bandwidth-$servers_kind-$t.txt" 2>&1 || rc=1
  done
  # DDP launched per rank and by torchrun (one `rgpu run` for both ranks),
  # FSDP by torchrun.
  for run in $TRAINING_RUNS; do
    mode=${run%%:*} launcher=${run##*:}
    mkdir -p "$OUT/$mode-$launcher-$servers_kind"
    "$PYTHON" "$ROOT/bench/ddp_train.py" compare "$OUT/$mode-$launcher-$servers_kind" --rgpu "$BUILD_DIR/rgpu" \
      --devices "$devices" --ucx-devices "$ucx_devices" --mode $mode --launcher $launcher \
      --transports tcp,shm${ucx:+,ucx} --local-env "$local_env" \
      >"$OUT/$mode-$launcher-$servers_kind.txt" 2>&1 || rc=1
  done
  if [ $servers_kind = default ] && [ "${NCCL_TRACE_STEPS:-1}" = 1 ]; then
    RGPU_TRACE=1 DDP_MARK_STEPS=1 "$PYTHON" "$ROOT/bench/ddp_train.py" compare "$OUT/ddp-traced" --rgpu "$BUILD_DIR/rgpu" \
      --devices "$devices" --mode ddp --transports tcp >"$OUT/ddp-traced.txt" 2>&1
    for r in 0 1; do
      python3 "$ROOT/bench/trace_per_step.py" "$OUT/ddp-traced/ddp-logs/tcp-nccl-rank$r.err" >"$OUT/ddp-calls-rank$r.md" 2>&1
    done
    RGPU_TRACE=1 DDP_MARK_STEPS=1 DDP_RANK_LOGS=$OUT/ddp-traced-torchrun/rank-logs "$PYTHON" "$ROOT/bench/ddp_train.py" \
      compare "$OUT/ddp-traced-torchrun" --rgpu "$BUILD_DIR/rgpu" --devices "$devices" --mode ddp --launcher torchrun \
      --transports tcp >"$OUT/ddp-traced-torchrun.txt" 2>&1
    # The local run's rank logs hold no trace: only rgpu's ranks give a table.
    : >"$OUT/ddp-calls-torchrun.md"
    for f in $(find "$OUT/ddp-traced-torchrun/rank-logs" -name stderr.log | sort); do
      table=$(python3 "$ROOT/bench/trace_per_step.py" "$f" 2>/dev/null)
      grep -q '(none)' <<<"$table" || echo "$table" >>"$OUT/ddp-calls-torchrun.md"
    done
  fi
  stop_servers
done

# The bandwidth tables side by side: busbw by size, and rgpu over local.
"$PYTHON" - "$OUT" >>"$OUT/nccl.md" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
runs = {}
for name in ["local", "local-net", "default-tcp", "default-shm", "default-ucx", "net-tcp", "net-shm", "net-ucx"]:
    if not (out / f"bandwidth-{name}.txt").exists():
        continue
    lines = [l for l in (out / f"bandwidth-{name}.txt").read_text(errors="replace").splitlines() if l.startswith("{")]
    ok = "RESULT PASS" in (out / f"bandwidth-{name}.txt").read_text(errors="replace")
    runs[name] = (json.loads(lines[-1]) if lines else None, ok)
print("## All-reduce bus bandwidth (GB/s; float sum, nccl-tests' busbw)\n")
print("Servers *default*: the workers' NCCL chooses its transport; *net*: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 "
      "on the servers (NCCL's network transport, as between hosts). tcp/shm: the client's transport to its servers.\n")
names = list(runs)
def busbw(name):
    return {s["bytes"]: s["busbw"] for s in (runs[name][0] or {}).get("sizes", [])}
# Each rgpu run against NVIDIA's NCCL run locally with the same transports.
def baseline(name):
    return "local-net" if name.startswith("net") and "local-net" in runs else "local"
through = [n for n in names if not n.startswith("local")]
print("| bytes | " + " | ".join(names) + " | " + " | ".join(f"{n} / {baseline(n)}" for n in through) + " |")
print("|---" * (len(names) + len(through) + 1) + "|")
sizes = sorted({s["bytes"] for r, _ in runs.values() if r for s in r["sizes"]})
for b in sizes:
    row = [busbw(n).get(b) for n in names]
    ratios = []
    for n in through:
        v, base = busbw(n).get(b), busbw(baseline(n)).get(b)
        ratios.append(f"{v / base:.2f}" if v is not None and base else "-")
    print(f"| {b} | " + " | ".join(f"{v:.2f}" if v is not None else "-" for v in row) + " | " + " | ".join(ratios) + " |")
print()
print("| run | GPUs | ncclCommInitAll (s) | sums right |\n|---|---|---|---|")
for n, (r, ok) in runs.items():
    print(f"| {n} | {r['gpus'] if r else '-'} | {r['init_s']:.2f} |" if r else f"| {n} | - | - |", "yes" if ok else "**no**", "|")
print()
for n in through:
    base = busbw(baseline(n))
    big = [b for b in sizes if b >= 64 << 20 and base.get(b) and b in busbw(n)]
    if big:
        worst = min(busbw(n)[b] / base[b] for b in big)
        print(f"- {n}: busbw for messages of 64 MB and more at least {worst:.2f} of {baseline(n)} (target 0.8)")
PY
for servers_kind in $SERVER_KINDS; do
  for run in $TRAINING_RUNS; do
    mode=${run%%:*} launcher=${run##*:} dir=$OUT/${run/:/-}-$servers_kind
    { echo; echo "## ${mode^^} ($launcher), servers $servers_kind"; echo; cat "$dir/$mode.md" 2>/dev/null ||
      echo "no result: $(tail -3 "$dir.txt")"; } >>"$OUT/nccl.md"
  done
done
for r in 0 1; do
  [ -f "$OUT/ddp-calls-rank$r.md" ] &&
    { echo; echo "## DDP over tcp, rank $r, traced (RGPU_TRACE=1: slower than the timed runs)"; echo; cat "$OUT/ddp-calls-rank$r.md"; } >>"$OUT/nccl.md"
done
[ -s "$OUT/ddp-calls-torchrun.md" ] &&
  { echo; echo "## DDP over tcp under torchrun, traced"; echo; cat "$OUT/ddp-calls-torchrun.md"; } >>"$OUT/nccl.md"
echo >>"$OUT/nccl.md"
echo "Targets: DDP step through rgpu over tcp at most 1.15x local; over shm at most 1.1x; busbw >= 0.8 of local from 64 MB." >>"$OUT/nccl.md"
crashes=$(cat "$OUT"/server-*.log | grep -c "killed by signal")
[ "$crashes" -eq 0 ] || { echo "**$crashes worker crashes** (server logs)" >>"$OUT/nccl.md"; rc=1; }
cat "$OUT/nccl.md"
exit $rc
