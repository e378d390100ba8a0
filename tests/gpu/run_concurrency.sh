#!/usr/bin/env bash
# CLIENTS processes on one GPU through rgpu at the same time, each copying and
# launching for SECONDS with every result checked: all must finish correct,
# and none may be starved (the slowest must reach a quarter of the mean).
#   usage: tests/gpu/run_concurrency.sh BUILD_DIR OUT_DIR CLIENTS SECONDS
set -uo pipefail
build=$1 out=$2 clients=$3 seconds=$4 port=${RGPU_PORT:-18515}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/stress"
nvcc -O2 -cudart shared -o "$out/stress/stress_client" "$here/stress/stress_client.cu" || exit 1
pids=()
for i in $(seq 0 $((clients - 1))); do
  "$build/rgpu" run --server 127.0.0.1:"$port" -- "$out/stress/stress_client" "$seconds" "$i" \
    >"$out/stress/client$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
cat "$out/stress"/client*.log | grep -v "^\[rgpu" > "$out/stress/all.log"
python3 - "$out/stress/all.log" "$clients" "$failed" <<'PY'
import re, sys
log, clients, failed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
its = [int(m.group(1)) for m in re.finditer(r"iterations (\d+) errors 0", open(log).read())]
ok = len(its) == clients and failed == 0
mean = sum(its) / len(its) if its else 0
starved = ok and min(its) < mean / 4
print(f"concurrency: {clients} clients, {len(its)} finished correct, {failed} failed; "
      f"iterations min {min(its) if its else 0} mean {mean:.0f} max {max(its) if its else 0}"
      + ("; STARVED" if starved else ""))
sys.exit(0 if ok and not starved else 1)
PY
