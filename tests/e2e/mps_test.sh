#!/usr/bin/env bash
# --gpu-sharing mps on the host-test backend, with the stand-in control
# program: a daemon per shared GPU in private directories, workers that
# inherit its pipe directory, the mode in the metrics, quit and cleanup on
# shutdown, a crashed server's daemon stopped at the next start, time
# slicing (said so) when the daemon cannot start, none for exclusive GPUs;
# a failed daemon restarted; after a session's sticky fault (NVIDIA's MPS
# then fails every client of the GPU and takes no new one until all have
# exited) every worker stopped, a session still running too, then the
# daemon restarted and the next session served.
# With job credentials, a session's compute share reaches its worker before
# CUDA starts there, and smi and the metrics show it.
#   usage: mps_test.sh RGPU RGPU_SERVER FAKE_MPS_CONTROL PORT HOLD_PROGRAM FAULT_PROGRAM
#   (HOLD_PROGRAM: e2e_pool_hold, a session that lasts until told;
#   FAULT_PROGRAM: e2e_sticky_fault, a session whose work faults)
set -euo pipefail
rgpu=$1 server=$2 fake=$3 port=$4 program=$5 faulter=$6
metrics=$((port + 1))
dir=$(mktemp -d)
mps=$dir/mps
pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  [ -f "$mps/gpu0/pipe/control.pid" ] && kill "$(cat "$mps/gpu0/pipe/control.pid")" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- server log"; cat "$dir/server.log"; exit 1; }

start() {
  "$server" --backend host-test --listen 127.0.0.1 --port "$port" --metrics-port "$metrics" --workers 1 \
    --unix-socket none --gpus 0 --mps-dir "$mps" --module-cache none --log-level debug "$@" 2>"$dir/server.log" &
  pid=$!
  # The metrics endpoint starts once the MPS daemons have (or have not).
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/"$metrics") 2>/dev/null && return
    sleep 0.1
  done
  fail "server did not start"
}
stop() { kill "$pid"; wait "$pid" || true; pid=; }
sharing() {
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$metrics/metrics" >"$dir/metrics" && break; sleep 0.1; done
  grep '^rgpu_gpu_sharing{gpu="0"' "$dir/metrics" || true
}
# Workers say whose MPS client they are as they start (fork, no exec: their
# /proc environ is the daemon's as it started).
worker_env() { grep 'rgpu-worker.*an MPS client of' "$dir/server.log" || true; }
mode() { stat -c %a "$1"; }

# Started per shared GPU, private, and its pipe directory in every worker.
# The server's GPU 0 is the host's GPU 3: the daemon sees only that one, and
# workers, its clients, no CUDA_VISIBLE_DEVICES (NVIDIA's rule for clients).
export CUDA_VISIBLE_DEVICES=3,5
start --gpu-sharing mps --mps-control "$fake"
unset CUDA_VISIBLE_DEVICES
[ "$(mode "$mps")" = 700 ] || fail "mps dir mode $(mode "$mps")"
for d in gpu0 gpu0/pipe gpu0/log; do [ "$(mode "$mps/$d")" = 700 ] || fail "$d mode $(mode "$mps/$d")"; done
[ -p "$mps/gpu0/pipe/control" ] || fail "no control daemon listening"
grep -q "Startup CUDA_VISIBLE_DEVICES=3 " "$mps/gpu0/log/control.log" || fail "daemon not limited to the GPU"
[ "$(sharing)" = 'rgpu_gpu_sharing{gpu="0",mode="mps"} 1' ] || fail "metrics: '$(sharing)'"
"$rgpu" ls --server "127.0.0.1:$port" >/dev/null || fail "a session failed with mps"
worker_env | grep -q "an MPS client of $mps/gpu0/pipe, CUDA_VISIBLE_DEVICES unset\$" || fail "workers lack the pipe directory"
daemon=$(cat "$mps/gpu0/pipe/control.pid")

# A failed MPS daemon (killed here) is found within seconds, restarted and
# counted; the workers, clients of the lost server, are replaced.
kill -9 "$(cat "$mps/gpu0/pipe/control.pid")"
for _ in $(seq 100); do grep -q "MPS control daemon restarted" "$dir/server.log" && break; sleep 0.1; done
grep -q "GPU 0: its MPS control daemon does not answer" "$dir/server.log" || fail "failed daemon not found"
grep -q "MPS control daemon restarted" "$dir/server.log" || fail "failed daemon not restarted"
grep -q "stopped idle worker .*MPS server is lost to its sessions" "$dir/server.log" || fail "the lost server's clients were kept"
kill -0 "$(cat "$mps/gpu0/pipe/control.pid")" || fail "no daemon after the restart"
curl -sf "http://127.0.0.1:$metrics/metrics" | grep -qx 'rgpu_mps_restarts_total{gpu="0"} 1' || fail "restart not counted"
"$rgpu" ls --server "127.0.0.1:$port" >/dev/null || fail "no session after the restart"

# A sticky fault: a session holding memory (the other tenant) and the idle
# worker go, the daemon restarts once they have, and a new session runs.
POOL_HOLD=4096 POOL_RELEASE=$dir/never "$rgpu" run --server "127.0.0.1:$port" -- "$program" >"$dir/victim.out" 2>&1 &
victim=$!
for _ in $(seq 100); do grep -q HOLDING "$dir/victim.out" && break; sleep 0.1; done
grep -q HOLDING "$dir/victim.out" || fail "the other tenant: $(cat "$dir/victim.out")"
"$rgpu" run --server "127.0.0.1:$port" -- "$faulter" >"$dir/fault.out" 2>&1 || fail "faulting session: $(cat "$dir/fault.out")"
grep -q "FAULTED cudaErrorIllegalAddress" "$dir/fault.out" || fail "no fault: $(cat "$dir/fault.out")"
restarts() { grep -c "MPS control daemon restarted" "$dir/server.log" || true; }
for _ in $(seq 150); do [ "$(restarts)" -ge 2 ] && break; sleep 0.1; done
[ "$(restarts)" -eq 2 ] || fail "no restart after the fault"
grep -q "GPU 0: a session's sticky fault; its MPS server fails every session" "$dir/server.log" ||
  fail "the fault's consequence not logged"
vrc=0
wait "$victim" || vrc=$?
[ "$vrc" -eq 3 ] && grep -q LOST "$dir/victim.out" || fail "the other tenant ($vrc): $(cat "$dir/victim.out")"
grep -q "stopped worker .* and its session: the GPU's MPS server is lost to its sessions" "$dir/server.log" ||
  fail "the other tenant's worker was not stopped"
# Its worker was stopped before the daemon restarted, not after.
stopped_line=$(grep -n "and its session: the GPU's MPS server is lost" "$dir/server.log" | head -1 | cut -d: -f1)
restart_line=$(grep -n "MPS control daemon restarted" "$dir/server.log" | tail -1 | cut -d: -f1)
[ "$stopped_line" -lt "$restart_line" ] || fail "the daemon restarted while a client of its server ran"
curl -sf "http://127.0.0.1:$metrics/metrics" | grep -qx 'rgpu_mps_restarts_total{gpu="0"} 2' || fail "restart not counted"
"$rgpu" ls --server "127.0.0.1:$port" >/dev/null || fail "no session after the fault"
sleep 6  # past a periodic check: the ended sessions' own reports of the fault restart nothing
[ "$(restarts)" -eq 2 ] || fail "restarted again for the same fault"

# Shares: the credential's, set in the worker before its CUDA starts.
stop
"$rgpu" token "$dir/key" >/dev/null
start --gpu-sharing mps --mps-control "$fake" --job-key-file "$dir/key"
cred=$("$rgpu" credential --key-file "$dir/key" --job 77 --user tester --expires 600 --gpu "127.0.0.1:$port:0=1G@25%")
RGPU_CREDENTIAL=$cred RGPU_DEVICES=127.0.0.1:$port:0 POOL_HOLD=4096 POOL_RELEASE=$dir/release \
  "$rgpu" run -- "$program" >"$dir/hold.out" 2>&1 &
holder=$!
for _ in $(seq 100); do grep -q HOLDING "$dir/hold.out" && break; sleep 0.1; done
grep -q HOLDING "$dir/hold.out" || fail "session with a share: $(cat "$dir/hold.out")"
grep -q "rgpu-worker.*compute share 25 % of SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) set before CUDA starts" \
  "$dir/server.log" || fail "the share did not reach the worker"
grep -q "rgpu-worker.*CUDA starts once the session's compute share is known" "$dir/server.log" ||
  fail "workers started CUDA before their share was known"
"$rgpu" smi --key-file "$dir/key" "127.0.0.1:$port" >"$dir/smi.txt" || fail "smi: $(cat "$dir/smi.txt")"
grep -q "job 77 .*share 25 % of SMs" "$dir/smi.txt" || fail "smi: $(cat "$dir/smi.txt")"
curl -sf "http://127.0.0.1:$metrics/metrics" | grep -qx 'rgpu_job_compute_share_percent{job="77",gpu="0"} 25' ||
  fail "metrics lack the share"
touch "$dir/release"
wait "$holder" || fail "session with a share: $(cat "$dir/hold.out")"
# A share raised in the credential's claims is refused.
forged=${cred/@25%/@90%}
if out=$(RGPU_CREDENTIAL=$forged RGPU_DEVICES=127.0.0.1:$port:0 POOL_RELEASE=$dir/release "$rgpu" run -- "$program" 2>&1)
then
  fail "a forged share was admitted: $out"
fi
daemon=$(cat "$mps/gpu0/pipe/control.pid")

# A crashed server leaves its daemon; the next start stops it, starts anew.
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
kill -0 "$daemon" 2>/dev/null || fail "stand-in daemon died with the server (test cannot show cleanup)"
start --gpu-sharing mps --mps-control "$fake"
for _ in $(seq 50); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
kill -0 "$daemon" 2>/dev/null && fail "the crashed server's daemon still runs"
grep -q "previous server" "$dir/server.log" || fail "leftover daemon not reported"
new=$(cat "$mps/gpu0/pipe/control.pid")
kill -0 "$new" || fail "no new daemon"

# Shutdown: quit, and nothing left behind.
stop
for _ in $(seq 50); do kill -0 "$new" 2>/dev/null || break; sleep 0.1; done
kill -0 "$new" 2>/dev/null && fail "daemon still runs after shutdown"
[ ! -e "$mps" ] || fail "left behind: $(find "$mps")"

# A daemon that cannot start: time slicing, said so in the log and metrics.
start --gpu-sharing mps --mps-control /bin/false
grep -q "cannot start its MPS control daemon" "$dir/server.log" || fail "fallback not logged"
[ "$(sharing)" = 'rgpu_gpu_sharing{gpu="0",mode="timeslice-fallback"} 1' ] || fail "metrics: '$(sharing)'"
"$rgpu" ls --server "127.0.0.1:$port" >/dev/null || fail "a session failed after the fallback"
[ ! -e "$mps/gpu0" ] || fail "failed daemon's directories left"
[ -n "$(worker_env)" ] && fail "workers are MPS clients of no daemon"
stop

# Exclusive GPUs and the default never use MPS.
start --gpu-sharing mps --mps-control "$fake" --gpu-mode 0=exclusive
[ ! -e "$mps/gpu0" ] || fail "an MPS daemon for an exclusive GPU"
stop
start
[ ! -e "$mps/gpu0" ] || fail "an MPS daemon without --gpu-sharing mps"
stop
echo "mps test passed"
