#!/usr/bin/env bash
# The server's per-session memory limit (--max-session-memory, no pool):
# the pool's quota program with the limit as its amount. cudaMemGetInfo and
# cuMemGetInfo report the limit as the total; every allocation path past it
# fails with the API's out-of-memory error; memory freed is usable again;
# the refusals are in the server's log with the limit. CI runs it on the
# host-test backend; the GPU suite (pool part) on the real GPU.
#   usage: session_memory_test.sh RGPU RGPU_SERVER PORT QUOTA_PROGRAM [BACKEND]
set -euo pipefail
rgpu=$1 server=$2 port=$3 quota=$4 backend=${5:-host-test}
mib=${POOL_AMOUNT_MIB:-64}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server log"
  cat "$dir/server.log"
  exit 1
}

"$server" --backend "$backend" --listen 127.0.0.1 --port "$port" --gpus 0 --workers 1 --unix-socket none \
  --module-cache "$dir/modules" --max-session-memory "${mib}M" 2>"$dir/server.log" &
pid=$!
for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
RGPU_DEVICES=127.0.0.1:$port:0 POOL_AMOUNT=$((mib << 20)) "$rgpu" run -- "$quota" >"$dir/run.out" 2>&1 ||
  fail "quota run: $(cat "$dir/run.out")"
grep -q "RESULT PASS" "$dir/run.out" || fail "$(cat "$dir/run.out")"
grep -q "refused: the session holds .* of its max-session-memory $((mib << 20))" "$dir/server.log" ||
  fail "no refusal with the limit in the server's log"
echo "max-session-memory ${mib}M held the session to it on every path:"
grep -E "^(holding|cudaMalloc)" "$dir/run.out"
echo "server log: $(grep -m1 "max-session-memory" "$dir/server.log")"
