#!/usr/bin/env bash
# SLURM hands out remote GPUs: real munged, slurmctld and slurmd on
# localhost, configured by tests/slurm/slurm.conf and rgpu.conf with the
# scripts of tools/slurm installed as an administrator would, and a pool of
# two rgpu-servers, one GPU each: one exclusive, one shared (on the
# host-memory test backend, or RGPU_SLURM_BACKEND=cuda on a GPU machine,
# where both serve its GPU 0). Real jobs ask SLURM for GPUs and run CUDA
# programs through `rgpu run` with nothing else set up.
#   usage: slurm_pool_test.sh RGPU RGPU_SERVER MEMORY_PROGRAM ALLOC_PROGRAM BASE_PORT
# (MEMORY_PROGRAM: an end-to-end program; ALLOC_PROGRAM: pool_alloc.cu;
# BASE_PORT and the next three ports are used.)
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
  squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null || true
  for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do kill "${daemons[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    for f in "$dir"/log/* "$dir"/jobs/*; do echo "=== $f"; tail -n 40 "$f"; done >&2
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

# What an administrator installs: the scripts and rgpu.conf side by side,
# slurm.conf naming them.
fill() {
  sed -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" \
      -e "s|@EXCLUSIVE_SERVER@|$exclusive_server|g" -e "s|@SHARED_SERVER@|$shared_server|g" \
      -e "s|@RGPU@|$rgpu|g" "$1"
}
mkdir "$dir/rgpu-slurm"
cp "$source_root"/tools/slurm/* "$dir/rgpu-slurm/"
fill "$here/rgpu.conf" >"$dir/rgpu-slurm/rgpu.conf"
fill "$here/slurm.conf" >"$dir/slurm.conf"

wait_for() {  # wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "$what (waited ${seconds}s)"
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged -F --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/log/munged.log" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" 2>>"$dir/log/munged.log" &
daemons+=($!)
wait_for 10 "munged did not start" test -S "$dir/munge.sock"

start_server() {  # start_server NAME HOST:PORT
  "$server" --backend "${RGPU_SLURM_BACKEND:-host-test}" --listen 127.0.0.1 --port "${2#*:}" --gpus 0 \
    --workers 2 --unix-socket none --module-cache "$dir/modules-$1" --log-level info \
    >"$dir/log/rgpu-server-$1.log" 2>&1 &
  daemons+=($!)
  wait_for 30 "rgpu-server $1 did not start" port_open "${2#*:}"
}
start_server exclusive "$exclusive_server"
start_server shared "$shared_server"

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

# 1. Exclusive: a job asking for a remote GPU (-L rgpu:1) runs an
#    end-to-end program through `rgpu run`; a second one waits for it.
exclusive_a=$(submit exclusive_a -L rgpu:1 -- "$rgpu run -- $memory_program && $rgpu run -- $alloc_program 8 4")
exclusive_b=$(submit exclusive_b -L rgpu:1 -- "$rgpu run -- $alloc_program 8 0")
# 2. Shared: two jobs of 64 MiB each (-L rgpu_mem:64) at once on the
#    shared GPU, a third waits for the memory.
shared_a=$(submit shared_a -L rgpu_mem:64 -- "$rgpu run -- $alloc_program 32 6")
shared_b=$(submit shared_b -L rgpu_mem:64 -- "$rgpu run -- $alloc_program 48 6")
shared_c=$(submit shared_c -L rgpu_mem:64 -- "$rgpu run -- $alloc_program 16 0")

running() { [ "$(job_state "$1")" = RUNNING ]; }
wait_for 30 "the first exclusive job did not start" running "$exclusive_a"
wait_for 30 "the shared jobs did not start together" running "$shared_a"
wait_for 30 "the shared jobs did not start together" running "$shared_b"
for job in "$exclusive_b" "$shared_c"; do
  reason=$(squeue -h -j "$job" -o '%T %r')
  [ "$reason" = "PENDING Licenses" ] || fail "job $job should wait for licenses, squeue says '$reason'"
done
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
echo "slurm pool test passed"
