#!/usr/bin/env bash
# `rgpu migrate` (issue 25, docs/migration.md) between two servers with one
# job key, over TRANSPORT: a running program's session moves from server A
# to server B while two of its threads keep calling; its memory, streams,
# events, graphs and module variable hold and work there (e2e_migrate
# checks), A no longer lists it and B does. Then a session holding a CUDA
# array and a graph with a memory node is refused with the reasons, stays on A and keeps working; a move to an absent
# server and one without the job key are refused. A session is then moved
# through A's admin endpoint (HTTP, the job key proven over a challenge),
# and back from B to A.
# Last, `rgpu-server --drain --move-to` moves a session off A before A
# stops. CI runs it on the host-test backend.
#   usage: migrate_test.sh RGPU RGPU_SERVER PORT PROGRAM TRANSPORT [BACKEND]
#   (ports PORT and PORT+1; PORT+2 must be free; PORT+3: A's admin endpoint)
set -euo pipefail
rgpu=$1 server=$2 port=$3 program=$4 transport=$5 backend=${6:-host-test}
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  for log in "$dir"/*.log; do echo "--- $log"; cat "$log"; done
  exit 1
}
"$rgpu" token "$dir/key" >/dev/null
"$rgpu" token "$dir/other-key" >/dev/null
start_server() {  # NAME PORT [OPTIONS...]
  "$server" --backend "$backend" --listen 127.0.0.1 --port "$2" --gpus 0 --workers 2 \
    --job-key-file "$dir/key" --module-cache "$dir/modules-$1" "${@:3}" 2>"$dir/server-$1.log" &
  pids+=($!)
  for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/"$2") 2>/dev/null && return; sleep 0.1; done
  fail "server $1 did not start"
}
a=127.0.0.1:$port b=127.0.0.1:$((port + 1))
start_server A "$port" --metrics-port $((port + 3))
start_server B $((port + 1))
# Servers with a job key admit jobs: the program's job may use GPU 0 of both.
credential=$("$rgpu" credential --key-file "$dir/key" --job move-test --user tester --expires 600 --gpu "$a:0" --gpu "$b:0")

# The worker serving client pid PID on SERVER, per `rgpu smi --json`.
worker_of() {  # SERVER PID
  "$rgpu" smi --json --key-file "$dir/key" "$1" | python3 -c '
import json, sys
pid = int(sys.argv[1])
for s in json.load(sys.stdin)["servers"]:
    for g in s.get("gpus", []):
        sessions = list(g.get("sessions_without_job", []))
        for j in g.get("jobs", {}).values():
            sessions += j.get("sessions", [])
        for x in sessions:
            if x.get("pid") == pid:
                print(x["worker"])
                sys.exit(0)
' "$2"
}
# Starts PROGRAM on A (ARGS after the signal file); sets app_pid, worker.
start_program() {  # NAME ARGS...
  local name=$1
  shift
  RGPU_CREDENTIAL=$credential RGPU_TRANSPORT=$transport RGPU_DEVICES=$a:0 RGPU_PEER_TIMEOUT=2 RGPU_LOG_LEVEL=info \
    "$rgpu" run -- "$program" "$dir/signal-$name" "$@" >"$dir/$name.log" 2>&1 &
  app=$!
  pids+=($app)
  for _ in $(seq 300); do grep -q READY "$dir/$name.log" && break; sleep 0.1; done
  app_pid=$(awk '/READY/ {print $2}' "$dir/$name.log")
  [ -n "$app_pid" ] || fail "$name did not start"
  worker=$(worker_of "$a" "$app_pid")
  [ -n "$worker" ] || fail "server A does not list $name's session"
}
finish_program() {  # NAME
  touch "$dir/signal-$1"
  wait "$app" || fail "$1 failed: $(cat "$dir/$1.log")"
  grep -q "RESULT PASS" "$dir/$1.log" || fail "$1 did not pass"
}

# A move.
start_program moved
out=$("$rgpu" migrate --key-file "$dir/key" --session "$worker" --to "$b/0" "$a" 2>&1) || fail "migrate failed: $out"
grep -q "moved to" <<<"$out" || fail "migrate said: $out"
[ -z "$(worker_of "$a" "$app_pid")" ] || fail "server A still lists the moved session"
[ -n "$(worker_of "$b" "$app_pid")" ] || fail "server B does not list the moved session"
grep -q "session moved to" "$dir/moved.log" || fail "the client did not report the move"
finish_program moved
grep -o "paused [0-9.]* ms" "$dir/moved.log"
echo "move: the session left A for B and its state held"

# A refusal: the session holds a CUDA array, stays on A and keeps working.
start_program refused array
if out=$("$rgpu" migrate --key-file "$dir/key" --session "$worker" --to "$b/0" "$a" 2>&1); then
  fail "a session holding an array moved: $out"
fi
grep -q "CUDA arrays" <<<"$out" || fail "the refusal does not name the array: $out"
grep -q "memory nodes" <<<"$out" || fail "the refusal does not name the graph's memory node: $out"
[ "$(worker_of "$a" "$app_pid")" = "$worker" ] || fail "the refused session left A"
# A target that does not answer: refused, the session stays.
if out=$("$rgpu" migrate --key-file "$dir/key" --session "$worker" --to "127.0.0.1:$((port + 2))/0" "$a" 2>&1); then
  fail "a move to a server that is not there succeeded: $out"
fi
grep -q "cannot reach rgpu server" <<<"$out" || fail "the refusal for an absent target says: $out"
[ "$(worker_of "$a" "$app_pid")" = "$worker" ] || fail "the session left A for an absent target"
# Without the job key, nobody may move it.
if out=$("$rgpu" migrate --key-file "$dir/other-key" --session "$worker" --to "$b/0" "$a" 2>&1); then
  fail "a move without the job key was taken: $out"
fi
grep -q "needs this server's job key" <<<"$out" || fail "the refusal without the key says: $out"
finish_program refused
echo "refusals: named their reasons; the session stayed and worked"

# The same through A's admin endpoint, proving the job key over a challenge:
# a request with the wrong key, and one sent again, are refused.
start_program http-moved
http_move() {  # KEY_FILE WORKER TARGET: prints the HTTP status and answer
  python3 - "$1" "$2" "$3" "http://127.0.0.1:$((port + 3))" <<'PY'
import hmac, sys, urllib.error, urllib.request
key, worker, target, base = open(sys.argv[1]).read().strip(), sys.argv[2], sys.argv[3], sys.argv[4]
challenge = urllib.request.urlopen(base + "/v1/challenge").read().decode().strip()
proof = hmac.new(key.encode(), bytes.fromhex(challenge) + f"move {worker} {target}".encode(), "sha256").hexdigest()
def post():
    req = urllib.request.Request(f"{base}/v1/sessions/{worker}/move", data=target.encode(), method="POST",
                                 headers={"Authorization": f"RGPU-Job {challenge} {proof}"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read().decode().strip()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode().strip()
status, answer = post()
print(status, answer)
if status == 202:
    print("again:", *post())  # the challenge served once
PY
}
out=$(http_move "$dir/other-key" "$worker" "$b/0")
grep -q "^401" <<<"$out" || fail "a move with the wrong key over HTTP was not refused: $out"
out=$(http_move "$dir/key" "$worker" "$b/0")
grep -q "^202" <<<"$out" || fail "the admin endpoint did not take the move: $out"
grep -q "^again: 401" <<<"$out" || fail "a move request sent again was taken: $out"
for _ in $(seq 300); do [ -n "$(worker_of "$b" "$app_pid")" ] && break; sleep 0.1; done
[ -n "$(worker_of "$b" "$app_pid")" ] || fail "the session asked over HTTP did not reach B"
[ -z "$(worker_of "$a" "$app_pid")" ] || fail "server A still lists the session moved over HTTP"
status=$(python3 -c 'import sys, urllib.request, urllib.error
try: urllib.request.urlopen(sys.argv[1])
except urllib.error.HTTPError as e: print(e.code)' "http://127.0.0.1:$((port + 3))/v1/sessions/$worker/move")
[ "$status" = 404 ] || fail "the moved session's status on A is not 404: $status"
# And back from B to A: its graphs, made on B from their copies, move again.
worker_b=$(worker_of "$b" "$app_pid")
out=$("$rgpu" migrate --key-file "$dir/key" --session "$worker_b" --to "$a/0" "$b" 2>&1) || fail "the move back failed: $out"
[ -n "$(worker_of "$a" "$app_pid")" ] || fail "server A does not list the session moved back"
finish_program http-moved
echo "admin endpoint: the move taken by the job key's proof, refused without it and when replayed"

# Draining A with --move-to: its session moves to B first, then A stops.
start_program drained
out=$("$server" --drain --port "$port" --job-key-file "$dir/key" --move-to "$b/0" 2>&1) || fail "drain failed: $out"
grep -q "session $worker moved to" <<<"$out" || fail "the drain did not move the session: $out"
grep -q "stopped" <<<"$out" || fail "A did not stop: $out"
[ -n "$(worker_of "$b" "$app_pid")" ] || fail "server B does not list the drained session"
finish_program drained
echo "drain: the session moved to B, then A stopped"
echo "RESULT PASS"
