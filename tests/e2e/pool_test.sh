#!/usr/bin/env bash
# The GPU pool (issue 11) on GPU 0 of two servers sharing one job key: S
# shares it, X gives it to one job at a time. Job credentials (none,
# foreign, expired, another GPU's, another host's, altered: refused with the
# reason; valid: admitted); two shared jobs with amounts (one allocates past
# its own through runtime and driver API while the other is untouched); the
# exclusive GPU refusing a second job; `rgpu smi --json` and the metrics
# endpoint checked against what runs; `rgpu job-end` ending a job's session
# within a second. CI runs it on the host-test backend; the GPU suite on the
# real GPU (BACKEND cuda, POOL_AMOUNT_MIB larger).
#   usage: pool_test.sh RGPU RGPU_SERVER PORT QUOTA_PROGRAM HOLD_PROGRAM [BACKEND]
#   (ports PORT, PORT+1: servers S and X; PORT+2: S's metrics)
set -euo pipefail
rgpu=$1 server=$2 port=$3 quota=$4 hold=$5 backend=${6:-host-test}
mib=${POOL_AMOUNT_MIB:-64}
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  for log in "$dir"/server-*.log; do echo "--- $log"; cat "$log"; done
  exit 1
}

"$rgpu" token "$dir/key" >/dev/null
"$rgpu" token "$dir/foreign-key" >/dev/null
start_server() {  # NAME PORT FLAGS...
  local name=$1 p=$2
  shift 2
  "$server" --backend "$backend" --listen 127.0.0.1 --port "$p" --gpus 0 --workers 2 --unix-socket none \
    --job-key-file "$dir/key" --module-cache "$dir/modules-$name" "$@" 2>"$dir/server-$name.log" &
  pids+=($!)
  for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null && return; sleep 0.1; done
  fail "server $name did not start"
}
s=127.0.0.1:$port x=127.0.0.1:$((port + 1)) metrics=http://127.0.0.1:$((port + 2))/metrics
start_server S "$port" --metrics-port $((port + 2))
start_server X $((port + 1)) --gpu-mode 0=exclusive

credential() {  # JOB KEY EXPIRES GPU...
  local job=$1 key=$2 expires=$3
  shift 3
  local gpus=()
  for g in "$@"; do gpus+=(--gpu "$g"); done
  "$rgpu" credential --key-file "$key" --job "$job" --user tester --expires "$expires" "${gpus[@]}"
}
# A run on S that must be refused, saying why.
refused() {  # REASON CREDENTIAL
  local out
  if out=$(RGPU_CREDENTIAL=$2 RGPU_DEVICES=$s:0 POOL_AMOUNT=1 "$rgpu" run -- "$quota" 2>&1); then
    fail "admitted where '$1' was expected: $out"
  fi
  grep -q -- "$1" <<<"$out" || fail "refusal does not say '$1': $out"
}
# Waits until a holder says it holds its memory.
holding() {  # OUT_FILE
  for _ in $(seq 300); do grep -q HOLDING "$1" && return; sleep 0.1; done
  fail "holder did not start: $(cat "$1")"
}

# Admission.
refused "holds no credential" ""
refused "foreign or altered" "$(credential 1 "$dir/foreign-key" 600 "$s:0")"
expiring=$(credential 2 "$dir/key" 1 "$s:0")
sleep 2
refused "credential of job 2 expired" "$expiring"
refused "does not name GPU 0 of this server" "$(credential 3 "$dir/key" 600 "$x:0")"
refused "does not name GPU 0 of this server" "$(credential 4 "$dir/key" 600 "192.0.2.1:$port:0")"
refused "foreign or altered" "$(credential 5 "$dir/key" 600 "$s:0=${mib}M" | sed "s/=$((mib << 20))/=$((mib << 21))/")"
echo "admission: refusals named their reasons"

# Two shared jobs on S, an amount each: B holds half of its own while A
# runs past its amount on every allocation path; then B takes 3/8 more.
amount=$((mib << 20))
job_a=$(credential 10 "$dir/key" 600 "$s:0=${mib}M")
job_b=$(credential 11 "$dir/key" 600 "$s:0=${mib}M")
RGPU_CREDENTIAL=$job_b RGPU_DEVICES=$s:0 POOL_HOLD=$((amount / 2)) POOL_MORE=$((amount / 8 * 3)) \
  POOL_RELEASE=$dir/release-b "$rgpu" run -- "$hold" >"$dir/b.out" 2>&1 &
b=$!
pids+=($b)
holding "$dir/b.out"
RGPU_CREDENTIAL=$job_a RGPU_DEVICES=$s:0 POOL_AMOUNT=$amount "$rgpu" run -- "$quota" >"$dir/a.out" 2>&1 ||
  fail "job A's quota run: $(cat "$dir/a.out")"
grep -q "RESULT PASS" "$dir/a.out" || fail "job A: $(cat "$dir/a.out")"
echo "shared: job A was held to its amount of $mib MiB on every path while job B held $((mib / 2)) MiB of its own:"
grep -E "^(holding|cudaMalloc)" "$dir/a.out"

# The exclusive GPU of X: job C holds it, job D is refused there.
job_c=$(credential 12 "$dir/key" 600 "$x:0")
job_d=$(credential 13 "$dir/key" 600 "$x:0")
RGPU_CREDENTIAL=$job_c RGPU_DEVICES=$x:0 POOL_HOLD=$((1 << 20)) POOL_RELEASE=$dir/never \
  "$rgpu" run -- "$hold" >"$dir/c.out" 2>&1 &
c=$!
pids+=($c)
holding "$dir/c.out"
out=$(RGPU_CREDENTIAL=$job_d RGPU_DEVICES=$x:0 POOL_HOLD=1 "$rgpu" run -- "$hold" 2>&1) &&
  fail "job D was admitted to job C's exclusive GPU"
grep -q "GPU 0 is held exclusively by job 12" <<<"$out" || fail "exclusive refusal: $out"
echo "exclusive: while job 12 runs, job 13 was refused: $(grep -o "server [^ ]* refused: .*" <<<"$out" | head -1)"

# `rgpu smi --json` (by the job key) and the metrics, against what runs now.
"$rgpu" smi --json --key-file "$dir/key" "$s" "$x" >"$dir/smi.json" || fail "rgpu smi: $(cat "$dir/smi.json")"
python3 - "$dir/smi.json" "$amount" "$backend" <<'PY' || fail "smi: $(cat "$dir/smi.json")"
import json, sys
smi, amount, backend = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
s, x = smi["servers"]
assert s["credentials"] and x["credentials"] and s["backend"] == backend
gs, gx = s["gpus"][0], x["gpus"][0]
assert gs["mode"] == "shared" and gx["mode"] == "exclusive", (gs, gx)
b = gs["jobs"]["11"]
assert b["amount"] == amount and b["used"] == amount // 2, b
assert [p["process"] for p in b["sessions"]] == ["e2e_pool_hold"], b
assert "10" not in gs["jobs"], "job A ended, its session must be gone"
c = gx["jobs"]["12"]
assert c["amount"] == 0 and c["used"] == 1 << 20 and len(c["sessions"]) == 1, c
assert (gs["utilization"] is None) == (backend == "host-test"), gs
PY
"$rgpu" smi --key-file "$dir/key" "$s" "$x" >"$dir/smi.txt" || fail "rgpu smi: $(cat "$dir/smi.txt")"
grep -q "job 11 .*$((mib / 2)) MiB used of $mib MiB" "$dir/smi.txt" || fail "smi table: $(cat "$dir/smi.txt")"
# A job's own credential admits it to smi; no credential does not.
RGPU_CREDENTIAL=$job_b "$rgpu" smi --json "$s" >/dev/null || fail "smi with a credential was refused"
"$rgpu" smi --json "$s" >/dev/null 2>&1 && fail "smi without credential or key was admitted"
python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
  "$metrics" >"$dir/metrics.txt" || fail "metrics endpoint"
python3 - "$dir/metrics.txt" "$amount" <<'PY' || fail "metrics: $(cat "$dir/metrics.txt")"
import re, sys
text, amount = open(sys.argv[1]).read(), int(sys.argv[2])
def value(name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    m = re.search(rf"^{name}{{{re.escape(want)}}} (\d+)$" if labels else rf"^{name} (\d+)$", text, re.M)
    assert m, f"no {name}{labels} in:\n{text}"
    return int(m.group(1))
assert value("rgpu_sessions", gpu=0) == 1, "job B's session"
assert value("rgpu_sessions_opened_total") == 2, "jobs A and B"
assert value("rgpu_sessions_refused_total") == 6, "the six refusals"
assert value("rgpu_calls_total", op="Malloc") >= 3
assert value("rgpu_call_errors_total", op="Malloc") >= 1, "job A's refused cudaMalloc"
assert value("rgpu_job_memory_used_bytes", job=11, gpu=0) == amount // 2
assert value("rgpu_job_memory_amount_bytes", job=11, gpu=0) == amount
to_server = re.findall(r'^rgpu_bytes_total\{direction="to_server",transport="\w+"\} (\d+)$', text, re.M)
assert sum(map(int, to_server)) > 0, "job B's page, over whichever transport it took"
assert "# TYPE rgpu_gpu_utilization_percent gauge" in text
assert value("rgpu_worker_start_seconds_count") >= 2, "the workers of jobs A and B started"
assert value("rgpu_client_wait_seconds_count") >= 2, "jobs A and B waited for their workers"
assert re.search(r"^rgpu_worker_start_seconds_sum [0-9.e+-]+$", text, re.M), "worker start seconds"
PY
echo "smi and metrics: jobs, sessions and memory as they run. rgpu smi:"
cat "$dir/smi.txt"
echo "S's metrics (sessions, jobs' memory, errors, utilisation):"
grep -E "^rgpu_(sessions|job_memory|call_errors_total|gpu_utilization)" "$dir/metrics.txt"

# Job B was untouched by A: it takes 3/8 of its amount more.
touch "$dir/release-b"
wait "$b" || fail "job B: $(cat "$dir/b.out")"
grep -q "RESULT PASS" "$dir/b.out" || fail "job B: $(cat "$dir/b.out")"

# `rgpu job-end` ends job C's session within a second; its credential is
# refused from then on, and job D gets the exclusive GPU.
"$rgpu" job-end --key-file "$dir/foreign-key" --job 12 "$x" >/dev/null 2>&1 && fail "a foreign key ended a job"
start=$(date +%s%N)
"$rgpu" job-end --key-file "$dir/key" --job 12 "$x" | grep -q "job 12 ended: 1 session" || fail "job-end"
wait "$c" && fail "job C's session outlived its job"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
grep -q LOST "$dir/c.out" || fail "job C: $(cat "$dir/c.out")"
[ "$elapsed_ms" -lt 3000 ] || fail "job C's session took ${elapsed_ms} ms to end"
out=$(RGPU_CREDENTIAL=$job_c RGPU_DEVICES=$x:0 POOL_HOLD=1 "$rgpu" run -- "$hold" 2>&1) &&
  fail "an ended job's credential was admitted"
grep -q "job 12 has ended" <<<"$out" || fail "ended job refusal: $out"
touch "$dir/release-d"
RGPU_CREDENTIAL=$job_d RGPU_DEVICES=$x:0 POOL_HOLD=1 POOL_RELEASE=$dir/release-d "$rgpu" run -- "$hold" \
  >"$dir/d.out" 2>&1 || fail "job D after job C ended: $(cat "$dir/d.out")"
echo "job-end: job C's session ended ${elapsed_ms} ms after the call, its credential refused since"
for log in "$dir"/server-*.log; do
  grep "killed by signal" "$log" | grep -v "signal 9" && fail "a worker crashed"
done
echo "pool test passed"
