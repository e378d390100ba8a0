#!/usr/bin/env bash
# SLURM hands out remote GPUs: real munged, slurmctld and slurmd on
# localhost, configured by tests/slurm/slurm.conf and rgpu.conf with the
# scripts of tools/slurm installed as an administrator would, and a pool of
# two rgpu-servers: X with GPU 0 exclusive and GPU 1 shared, S with GPU 0
# shared (on the host-memory test backend, or RGPU_SLURM_BACKEND=cuda on a
# machine with two GPUs). Real jobs ask SLURM for GPUs and run CUDA
# programs through `rgpu run` with nothing else set up.
#   usage: slurm_pool_test.sh RGPU RGPU_SERVER MEMORY_PROGRAM ALLOC_PROGRAM BASE_PORT
# (MEMORY_PROGRAM: an end-to-end program; ALLOC_PROGRAM: pool_alloc.cu;
# BASE_PORT and the next five ports are used.)
# Needs root (slurmd starts jobs as their users) and SLURM and munge
# installed (tools/setup.sh): without them it fails, it never skips.
set -euo pipefail
rgpu=$(readlink -f "$1") server=$(readlink -f "$2") memory_program=$(readlink -f "$3")
alloc_program=$(readlink -f "$4") base_port=$5
here=$(cd "$(dirname "$0")" && pwd)
source_root=$(cd "$here/../.." && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
ctld_port=$base_port slurmd_port=$((base_port + 1))
exclusive_server=127.0.0.1:$((base_port + 2)) shared_server=127.0.0.1:$((base_port + 3))
exclusive_metrics=$((base_port + 4)) shared_metrics=$((base_port + 5))

fail() { echo "FAILED: $*" >&2; exit 1; }
for tool in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (tools/setup.sh installs slurmctld, slurmd, slurm-client and munge)"
done
[ "$(id -u)" -eq 0 ] || fail "needs root: slurmd runs jobs as their users"

dir=$(mktemp -d /tmp/rgpu-slurm.XXXXXX)
chmod 711 "$dir"  # jobs' users reach munge's socket in it
mkdir -p "$dir/log" "$dir/slurmctld" "$dir/slurmd" "$dir/jobs"
export SLURM_CONF=$dir/slurm.conf
daemons=()
cleanup() {
  local status=$?
  set +e  # every step of the clean-up runs, whatever fails
  # The cancel test's program that left its job, if it got that far.
  [ -f "$dir/jobs/both.pid" ] && kill "$(cat "$dir/jobs/both.pid")" 2>/dev/null
  squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null
  for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do kill "${daemons[i]}" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$status" -ne 0 ]; then
    for f in "$dir"/log/* "$dir"/jobs/*; do echo "=== $f"; tail -n 40 "$f"; done >&2
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

# What an administrator installs: the scripts and rgpu.conf side by side,
# slurm.conf naming them, and cli_filter.lua beside slurm.conf.
fill() {
  sed -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" \
      -e "s|@EXCLUSIVE_SERVER@|$exclusive_server|g" -e "s|@SHARED_SERVER@|$shared_server|g" \
      -e "s|@RGPU@|$rgpu|g" "$1"
}
mkdir "$dir/rgpu-slurm"
cp "$source_root"/tools/slurm/* "$dir/rgpu-slurm/"
fill "$here/rgpu.conf" >"$dir/rgpu-slurm/rgpu.conf"
fill "$here/slurm.conf" >"$dir/slurm.conf"
cp "$source_root/tools/slurm/cli_filter.lua" "$dir/"

wait_for() {  # wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "$what (waited ${seconds}s)"
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged -F --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/log/munged.log" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" >>"$dir/log/munged.log" 2>&1 &
daemons+=($!)
wait_for 10 "munged did not start" test -S "$dir/munge.sock"

"$rgpu" token "$dir/job.key" >/dev/null
start_server() {  # start_server NAME HOST:PORT METRICS_PORT GPUS GPU=MODE...: jobs only
  local name=$1 port=${2#*:} metrics_port=$3 gpus=$4 modes=()
  shift 4
  for m in "$@"; do modes+=(--gpu-mode "$m"); done
  "$server" --backend "${RGPU_SLURM_BACKEND:-host-test}" --listen 127.0.0.1 --port "$port" --gpus "$gpus" \
    "${modes[@]}" --job-key-file "$dir/job.key" --metrics-port "$metrics_port" --workers 2 --unix-socket none \
    --module-cache "$dir/modules-$name" --log-level info >"$dir/log/rgpu-server-$name.log" 2>&1 &
  daemons+=($!)
  wait_for 30 "rgpu-server $name did not start" port_open "$port"
}
start_server exclusive "$exclusive_server" "$exclusive_metrics" 0,1 0=exclusive 1=shared
start_server shared "$shared_server" "$shared_metrics" 0 0=shared

slurmctld -D -i >"$dir/log/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -N localhost >"$dir/log/slurmd.out" 2>&1 &
daemons+=($!)
node_idle() { [ "$(sinfo -h -n localhost -o %T)" = idle ]; }
wait_for 30 "the SLURM node did not become idle" node_idle

# submit NAME SBATCH_ARGS... -- COMMAND: a batch job with none of this
# script's environment (--export=NONE): what it knows of rgpu comes from
# SLURM. Prints the job id; its output goes to $dir/jobs/NAME.
submit() {
  local name=$1; shift
  local args=()
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  sbatch --parsable --export=NONE -J "$name" -o "$dir/jobs/$name" "${args[@]}" \
    --wrap "echo RGPU_DEVICES=\$RGPU_DEVICES; echo START \$(date +%s.%N); $*; s=\$?; echo END \$(date +%s.%N); exit \$s"
}
job_state() { scontrol -o show job "$1" | tr ' ' '\n' | sed -n 's/^JobState=//p'; }
job_done() { case $(job_state "$1") in COMPLETED | FAILED | CANCELLED | TIMEOUT) return 0 ;; esac; return 1; }
job_field() { sed -n "s/^$2 //p" "$dir/jobs/$1"; }
expect_in() { grep -q -- "$2" "$dir/jobs/$1" || fail "job $1 printed no '$2'"; }

# The pool as `rgpu smi --json` shows it, admitted by the job key.
smi_json() { "$rgpu" smi --json --key-file "$dir/job.key" "$exclusive_server" "$shared_server"; }
# smi_job SERVER JOB [GPU]: "USED AMOUNT" (bytes) of the job on the
# server's GPU (0 unless named), or "none" when it has neither sessions nor
# memory there.
smi_job() {
  smi_json | python3 -c '
import json, sys
server = next(s for s in json.load(sys.stdin)["servers"] if s["server"] == sys.argv[1])
gpu = next(g for g in server["gpus"] if g["gpu"] == int(sys.argv[3]))
job = gpu["jobs"].get(sys.argv[2])
print("%d %d" % (job["used"], job["amount"]) if job and (job["sessions"] or job["used"]) else "none")' "$1" "$2" "${3:-0}"
}
holds() { local got; got=$(smi_job "$1" "$2" "${4:-0}"); [ "$got" != none ] && [ "${got% *}" -ge "$3" ]; }
holds_nothing() { [ "$(smi_job "$1" "$2")" = none ]; }
printed() { grep -q -- "$2" "$dir/jobs/$1"; }
mib=$((1 << 20))

# 1. Exclusive: a job asking for a remote GPU (-L rgpu:1) runs an
#    end-to-end program through `rgpu run`; a second one, asking as rCUDA's
#    users do (--gres=rgpu:1), waits for it.
exclusive_a=$(submit exclusive_a -L rgpu:1 -- "$rgpu run -- $memory_program && $rgpu run -- $alloc_program 8 4")
exclusive_b=$(submit exclusive_b --gres=rgpu:1 -- "$rgpu run -- $alloc_program 8 0")
# 2. Shared: two jobs of 64 MiB each (-L rgpu_mem:64) at once on the shared
#    GPU, the second allocating past its amount; a third waits for memory.
shared_a=$(submit shared_a -L rgpu_mem:64 -- "$rgpu run -- $alloc_program 32 6")
shared_b=$(submit shared_b -L rgpu_mem:64 -- "$rgpu run -- $alloc_program 96 2")
shared_c=$(submit shared_c -L rgpu_mem:64 -- "$rgpu run -- $alloc_program 16 0")

running() { [ "$(job_state "$1")" = RUNNING ]; }
wait_for 30 "the first exclusive job did not start" running "$exclusive_a"
wait_for 30 "the shared jobs did not start together" running "$shared_a"
wait_for 30 "the shared jobs did not start together" running "$shared_b"
for job in "$exclusive_b" "$shared_c"; do
  reason=$(squeue -h -j "$job" -o '%T %r')
  [ "$reason" = "PENDING Licenses" ] || fail "job $job should wait for licenses, squeue says '$reason'"
done
# While it runs, smi shows the shared job's memory against its amount.
wait_for 20 "smi does not show shared_a holding 32 MiB" holds "$shared_server" "$shared_a" $((32 * mib))
[ "$(smi_job "$shared_server" "$shared_a" | cut -d' ' -f2)" = $((64 * mib)) ] ||
  fail "smi shows shared_a as '$(smi_job "$shared_server" "$shared_a")' (used, amount), not an amount of 64 MiB"

declare -A job_ids=([exclusive_a]=$exclusive_a [exclusive_b]=$exclusive_b [shared_a]=$shared_a
                    [shared_b]=$shared_b [shared_c]=$shared_c)
for name in "${!job_ids[@]}"; do
  wait_for 90 "job $name did not end" job_done "${job_ids[$name]}"
  [ "$(job_state "${job_ids[$name]}")" = COMPLETED ] || fail "job $name did not complete"
  expect_in "$name" "RESULT PASS"
done
for name in exclusive_a exclusive_b; do expect_in $name "RGPU_DEVICES=$exclusive_server:0\$"; done
for name in shared_a shared_b shared_c; do expect_in $name "RGPU_DEVICES=$shared_server:0\$"; done
awk -v a="$(job_field exclusive_a END)" -v b="$(job_field exclusive_b START)" 'BEGIN {
  printf "measured: the second exclusive job started %.2f s after the first ended\n", b - a; exit !(b >= a) }' ||
  fail "the second exclusive job started before the first ended"
awk -v a="$(job_field shared_a END)" -v b="$(job_field shared_b START)" 'BEGIN { exit !(b < a) }' ||
  fail "the two shared jobs did not run at once"
# Each shared job sees its amount as the GPU's memory; past it, the
# out-of-memory error, and the other job's memory stays intact (its PASS).
expect_in shared_a "gpu=0 total=64 alloc=cudaSuccess"
expect_in shared_b "gpu=0 total=64 alloc=cudaErrorMemoryAllocation"

# srun asks the same way, for a job step of its own.
out=$(srun --export=NONE -L rgpu_mem:16 "$rgpu" run -- "$alloc_program" 8 0 2>&1) || fail "srun -L rgpu_mem:16: $out"
grep -q "gpu=0 total=16 alloc=cudaSuccess" <<<"$out" || fail "srun -L rgpu_mem:16: $out"

# 3. Shared amounts on several GPUs, asked as rCUDA's users do:
#    --gres=rgpu:2:32M, which cli_filter.lua turns into 64 MiB split over
#    two shared GPUs (-L rgpu_shared:2,rgpu_mem:64): X's GPU 1 and S's
#    GPU 0, 32 MiB each. The program holds 24 MiB of the first and asks 48
#    of the second: out of memory there, the first untouched. rCUDA's
#    variables name the same GPUs: a program run with them alone sees both
#    amounts. A malformed request is refused before it is submitted.
out=$(sbatch --export=NONE --gres=rgpu:2:lots --wrap true 2>&1) && fail "--gres=rgpu:2:lots was submitted: $out"
grep -q "SIZE as 512M, 2G or 1024K, not 'lots'" <<<"$out" || fail "--gres=rgpu:2:lots was refused without saying why: $out"
multi=$(submit multi --gres=rgpu:2:32M -- "env | grep ^RCUDA_DEVICE | sort; $rgpu run -- $alloc_program 24,48 6 &&
  echo RCUDA only && env -u RGPU_DEVICES $rgpu run -- $alloc_program 8 0")
licenses=$(scontrol -o show job "$multi" | tr ' ' '\n' | sed -n 's/^Licenses=//p')
[ "$licenses" = rgpu_shared:2,rgpu_mem:64 ] || fail "--gres=rgpu:2:32M asked for licenses '$licenses'"
wait_for 30 "the job on two shared GPUs did not allocate" grep -q "^gpu=1 total=" "$dir/jobs/multi"
[ "$(smi_job "$exclusive_server" "$multi" 1)" = "$((24 * mib)) $((32 * mib))" ] ||
  fail "smi shows the job on X's GPU 1 as '$(smi_job "$exclusive_server" "$multi" 1)' (used, amount), not 24 of 32 MiB"
[ "$(smi_job "$shared_server" "$multi")" = "0 $((32 * mib))" ] ||
  fail "smi shows the job on S's GPU 0 as '$(smi_job "$shared_server" "$multi")' (used, amount), not 0 of 32 MiB"
wait_for 60 "the job on two shared GPUs did not end" job_done "$multi"
[ "$(job_state "$multi")" = COMPLETED ] || fail "the job on two shared GPUs did not complete"
expect_in multi "RGPU_DEVICES=$exclusive_server:1,$shared_server:0\$"
expect_in multi "^RCUDA_DEVICE_COUNT=2\$"
expect_in multi "^RCUDA_DEVICE_0=$exclusive_server:1\$"
expect_in multi "^RCUDA_DEVICE_1=$shared_server:0\$"
[ "$(sed -n '/^RCUDA only/q;p' "$dir/jobs/multi" | grep -E '^gpu=|^RESULT' | tr '\n' ' ')" = \
  "gpu=0 total=32 alloc=cudaSuccess gpu=1 total=32 alloc=cudaErrorMemoryAllocation RESULT PASS " ] ||
  fail "the job on two shared GPUs: $(cat "$dir/jobs/multi")"
[ "$(sed -n '/^RCUDA only/,$p' "$dir/jobs/multi" | grep -E '^gpu=|^RESULT' | tr '\n' ' ')" = \
  "gpu=0 total=32 alloc=cudaSuccess gpu=1 total=32 alloc=cudaSuccess RESULT PASS " ] ||
  fail "the job's program with rCUDA's variables only: $(cat "$dir/jobs/multi")"

# 3b. A compute share (--gres=rgpu:1:16M:25%): counted by SLURM as rgpu_sm,
#    carried in the job's credential beside its amount; a bad one refused.
out=$(sbatch --export=NONE --gres=rgpu:1:16M:0% --wrap true 2>&1) && fail "--gres=rgpu:1:16M:0% was submitted: $out"
grep -q "P% as 1% to 100%, not '0%'" <<<"$out" || fail "--gres=rgpu:1:16M:0% was refused without saying why: $out"
share=$(submit share --gres=rgpu:1:16M:25% -- "echo CREDENTIAL \$RGPU_CREDENTIAL; $rgpu run -- $alloc_program 8 0")
licenses=$(scontrol -o show job "$share" | tr ' ' '\n' | sed -n 's/^Licenses=//p')
[ "$licenses" = rgpu_shared:1,rgpu_mem:16,rgpu_sm:25 ] || fail "--gres=rgpu:1:16M:25% asked for licenses '$licenses'"
wait_for 60 "the job with a compute share did not end" job_done "$share"
[ "$(job_state "$share")" = COMPLETED ] || fail "the job with a compute share: $(cat "$dir/jobs/share")"
job_field share CREDENTIAL | grep -q ":[01]=16777216@25%" || fail "no share in the credential: $(cat "$dir/jobs/share")"

# 4. Cancel: a job with GPUs of both servers starts a program that leaves
#    the job (double fork: SLURM's process tracking loses it) and holds
#    memory on each. scancel runs the epilog, whose `rgpu job-end` ends its
#    sessions on both servers while the program still lives, and refuses
#    the job's credential from then on.
both=$(submit both -L rgpu:1,rgpu_mem:64 -- "echo \$RGPU_CREDENTIAL >$dir/jobs/both.credential;
  setsid sh -c '$rgpu run -- $alloc_program 48 300 >$dir/jobs/both.escaped 2>&1 & echo \$! >$dir/jobs/both.pid'; sleep 300")
wait_for 30 "the escaped program did not allocate" grep -q "gpu=1 total=64 alloc=cudaSuccess" "$dir/jobs/both.escaped"
escaped=$(cat "$dir/jobs/both.pid")
expect_in both "RGPU_DEVICES=$exclusive_server:0,$shared_server:0\$"
wait_for 10 "smi does not show the job on the exclusive server" holds "$exclusive_server" "$both" $((48 * mib))
wait_for 10 "smi does not show the job on the shared server" holds "$shared_server" "$both" $((48 * mib))
cancelled=$(date +%s.%N)
scancel "$both"
wait_for 20 "the cancelled job's sessions did not end on the exclusive server" holds_nothing "$exclusive_server" "$both"
wait_for 20 "the cancelled job's sessions did not end on the shared server" holds_nothing "$shared_server" "$both"
awk -v a="$cancelled" -v b="$(date +%s.%N)" 'BEGIN { printf "measured: a cancelled job'"'"'s sessions ended on both servers within %.2f s\n", b - a }'
kill -0 "$escaped" 2>/dev/null || fail "the escaped program died: the test shows nothing of rgpu job-end"
kill "$escaped"

# 5. Sessions without a credential, with a foreign one, with one for
#    another GPU or of an ended job are refused, with a clear error.
refused() {  # refused WHAT EXPECTED_ERROR ENV...: a client of the exclusive server
  local out
  if out=$(env -i PATH="$PATH" RGPU_DEVICES="$exclusive_server:0" "${@:3}" "$rgpu" run -- "$memory_program" 2>&1); then
    fail "a session $1 was admitted"
  fi
  grep -q -- "$2" <<<"$out" || fail "a session $1 was refused without saying '$2': $out"
}
"$rgpu" token "$dir/foreign.key" >/dev/null
refused "without a credential" "credential"
refused "with a foreign credential" "foreign" RGPU_CREDENTIAL="$("$rgpu" credential --key-file "$dir/foreign.key" \
  --job 4242 --expires 60 --gpu "$exclusive_server:0")"
refused "with a credential for another GPU" "does not name GPU 0 of this server" \
  RGPU_CREDENTIAL="$("$rgpu" credential --key-file "$dir/job.key" --job 4243 --expires 60 --gpu "$shared_server:0=64M")"
refused "with the credential of an ended job" "job $both has ended" RGPU_CREDENTIAL="$(cat "$dir/jobs/both.credential")"

# 6. The metrics endpoints count what ran: sessions admitted (exclusive:
#    exclusive_a's two programs, exclusive_b, both; shared: shared_a..c,
#    both) and refused, calls, the out-of-memory error; no job holds
#    memory any more.
metrics() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$1/metrics"; }
metric() { awk -v name="$2" '$1 == name { print $2 }' <<<"$1"; }
exclusive_text=$(metrics "$exclusive_metrics") shared_text=$(metrics "$shared_metrics")
[ "$(metric "$exclusive_text" rgpu_sessions_opened_total)" -ge 4 ] || fail "exclusive server's sessions: $exclusive_text"
[ "$(metric "$shared_text" rgpu_sessions_opened_total)" -ge 4 ] || fail "shared server's sessions: $shared_text"
[ "$(metric "$exclusive_text" rgpu_sessions_refused_total)" -ge 4 ] || fail "refused sessions not counted: $exclusive_text"
grep -q '^rgpu_calls_total{op=' <<<"$shared_text" || fail "no calls counted: $shared_text"
grep -q '^rgpu_call_errors_total{op=' <<<"$shared_text" || fail "the out-of-memory error is not counted: $shared_text"
if grep -q '^rgpu_job_memory_used_bytes{' <<<"$exclusive_text$shared_text"; then
  fail "ended jobs still hold memory: $exclusive_text $shared_text"
fi
echo "slurm pool test passed"
