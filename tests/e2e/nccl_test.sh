#!/usr/bin/env bash
# NCCL through rgpu's libnccl.so.2 with the host-test backend, on three
# rgpu-server processes of this host (as three GPU servers would be):
# - two ranks in two processes, one GPU of each of two servers (tcp, shm);
# - one process driving GPUs of two servers (ncclCommInitAll, groups);
# - a rank's server killed while another rank waits in an all-reduce: the
#   survivor gets an NCCL error in bounded time, no hang, and so does the
#   rank whose server it was.
#   usage: nccl_test.sh RGPU RGPU_SERVER E2E_NCCL PORT STATE
# NCCL_TEST_BACKEND=cuda runs the same on a machine with two GPUs (servers
# on GPUs 0 and 1; NCCL_TEST_SERVER_FLAGS for their other flags, such as
# --nccl-library), where no communicator may hold one GPU twice.
set -euo pipefail
rgpu=$1 server=$2 program=$3 port=$4 state=$5
backend=${NCCL_TEST_BACKEND:-host-test}
rm -rf "$state"
mkdir -p "$state"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill -9 $(pgrep -P "$pid" 2>/dev/null) "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

start_server() {  # PORT GPUS -> its pid in $server_pid
  # shellcheck disable=SC2086
  "$server" --backend "$backend" --listen 127.0.0.1 --port "$1" --gpus "$2" --workers 2 \
    --module-cache "$state/modules-$1" --log-level warn ${NCCL_TEST_SERVER_FLAGS:-} \
    >"$state/server-$1.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 100); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "rgpu-server on $1 did not start:"; cat "$state/server-$1.log"; exit 1
}

start_server "$port" 0,1
start_server $((port + 1)) 1
start_server $((port + 2)) 1
doomed=$server_pid
status=0

expect_pass() {  # NAME LOG
  if grep -q "RESULT PASS" "$2" && ! grep -q "RESULT FAIL" "$2"; then
    echo "ok: $1"
  else
    echo "FAILED: $1"; cat "$2"; status=1
  fi
}

for transport in tcp shm; do
  rm -f "$state/id"
  RGPU_TRANSPORT=$transport RGPU_DEVICES=127.0.0.1:$port:0 timeout 120 "$rgpu" run -- "$program" rank 0 2 "$state/id" \
    >"$state/rank0-$transport.log" 2>&1 &
  r0=$!
  RGPU_TRANSPORT=$transport RGPU_DEVICES=127.0.0.1:$((port + 1)):1 timeout 120 "$rgpu" run -- "$program" rank 1 2 "$state/id" \
    >"$state/rank1-$transport.log" 2>&1 || true
  wait $r0 || true
  expect_pass "$transport: rank 0 of 2 on server 1" "$state/rank0-$transport.log"
  expect_pass "$transport: rank 1 of 2 on server 2" "$state/rank1-$transport.log"
done

# One process: two GPUs of two servers; two GPUs of one server (one group
# frame holds both ranks); three GPUs, two of them on one server.
all_case() {  # NAME DEVICES COUNT
  RGPU_DEVICES=$2 timeout 120 "$rgpu" run -- "$program" all >"$state/all-$1.log" 2>&1 || true
  expect_pass "one process, $1 (ncclCommInitAll, groups)" "$state/all-$1.log"
  grep -q "devices=$3" "$state/all-$1.log" || { echo "FAILED: not $3 devices"; status=1; }
}
all_case "GPUs of two servers" 127.0.0.1:$port:0,127.0.0.1:$((port + 1)):1 2
all_case "two GPUs of one server" 127.0.0.1:$port:0,127.0.0.1:$port:1 2
[ "$backend" = host-test ] &&
  all_case "three GPUs of two servers" 127.0.0.1:$port:0,127.0.0.1:$((port + 1)):1,127.0.0.1:$port:1 3

rm -f "$state/id" "$state/ready"
RGPU_DEVICES=127.0.0.1:$port:0 timeout 60 "$rgpu" run -- "$program" survive 0 2 "$state/id" "$state/ready" \
  >"$state/survivor.log" 2>&1 &
survivor=$!
RGPU_DEVICES=127.0.0.1:$((port + 2)):1 timeout 60 "$rgpu" run -- "$program" survive 1 2 "$state/id" "$state/ready" \
  >"$state/victim.log" 2>&1 &
victim=$!
for _ in $(seq 300); do [ -f "$state/ready" ] && break; sleep 0.1; done
sleep 1  # rank 0 is in its all-reduce now
killed_at=$(date +%s)
kill -9 $(pgrep -P "$doomed") "$doomed"
wait $survivor || true
wait $victim || true
took=$(( $(date +%s) - killed_at ))
expect_pass "a rank's server killed mid-collective: the survivor's error" "$state/survivor.log"
expect_pass "a rank's server killed mid-collective: that rank's own error" "$state/victim.log"
[ "$took" -le 30 ] || { echo "FAILED: the ranks took ${took} s to see the error"; status=1; }
grep -h "dead peer\|own server lost" "$state/survivor.log" "$state/victim.log" || true

for p in "$port" $((port + 1)); do
  if grep -q "killed by signal" "$state/server-$p.log"; then
    echo "FAILED: a worker of server $p crashed:"; cat "$state/server-$p.log"; status=1
  fi
done
exit $status
