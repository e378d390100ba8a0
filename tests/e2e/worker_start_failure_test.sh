#!/usr/bin/env bash
# A server whose workers cannot start tells its clients why at once, and
# keeps running. The cuda backend module is run against the CUDA toolkit's
# stub libcuda (no GPU on CI): the module must load in the worker (the
# symbols it takes from rgpu-server resolve), then fail to initialise the
# GPUs; without any libcuda.so.1 it fails to load. In both, a tcp client is
# refused with the worker's reason within seconds, a Unix socket client is
# closed within seconds (no way to send it a reason), and the server
# answers again once it can.
#   usage: worker_start_failure_test.sh RGPU RGPU_SERVER PORT PROGRAM STUB_LIBCUDA
set -euo pipefail
rgpu=$1 server=$2 port=$3 program=$4 stub=$5
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server log"
  cat "$dir/server.log"
  exit 1
}

# CASE LIBRARY_DIR EXPECTED: the worker's reason as the client must see it.
check() {
  local name=$1 libs=$2 expected=$3
  LD_LIBRARY_PATH=$libs "$server" --backend cuda --listen 127.0.0.1 --port "$port" --workers 1 \
    --module-cache "$dir/modules" 2>"$dir/server.log" &
  pid=$!
  for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
  # The first worker has failed once the log says so.
  for _ in $(seq 100); do grep -q "exited with status" "$dir/server.log" && break; sleep 0.1; done
  grep -q "undefined symbol" "$dir/server.log" && fail "$name: the backend module has unresolved symbols"
  local start=$SECONDS
  if RGPU_TRANSPORT=tcp timeout 20 "$rgpu" run --server 127.0.0.1:"$port" -- "$program" >"$dir/tcp.out" 2>&1; then
    fail "$name: the tcp client ran: $(cat "$dir/tcp.out")"
  fi
  grep -q "refused: rgpu-server cannot start a worker: $expected" "$dir/tcp.out" ||
    fail "$name: the tcp client was not told why: $(cat "$dir/tcp.out")"
  [ $((SECONDS - start)) -le 10 ] || fail "$name: the tcp client waited $((SECONDS - start)) s"
  start=$SECONDS
  RGPU_TRANSPORT=shm timeout 20 "$rgpu" run --server 127.0.0.1:"$port" -- "$program" >"$dir/unix.out" 2>&1 &&
    fail "$name: the Unix socket client ran: $(cat "$dir/unix.out")"
  [ $((SECONDS - start)) -le 10 ] || fail "$name: the Unix socket client waited $((SECONDS - start)) s"
  kill -0 "$pid" 2>/dev/null || fail "$name: the server died"
  grep -q "turned a client away: rgpu-server cannot start a worker: $expected" "$dir/server.log" ||
    fail "$name: the refusal is not in the server's log"
  echo "$name: $(grep -m1 "turned a client away" "$dir/server.log" | sed 's/^\[[^]]*\] //')"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
}

mkdir "$dir/stub" "$dir/none"
ln -s "$stub" "$dir/stub/libcuda.so.1"
check "stub libcuda" "$dir/stub" "backend 'cuda' cannot initialise the GPUs: "
check "no libcuda" "$dir/none" "cannot load backend 'cuda': .*libcuda.so.1"
