#!/usr/bin/env bash
# Runs tests/gpu/migration/address_probe.cu (docs/migration.md): a source
# process holds cudaMalloc'd memory while a fresh target process maps device
# memory at the same addresses, on the same GPU and, where there is one, on
# another. Given a build, also rgpu's own way (kOpMallocAt): two
# rgpu-servers, the target session making memory at the source session's
# addresses (BUILD_DIR/rgpu_fixed_address_check over tcp and shm; source on
# GPU 0, target on the last GPU). Writes OUT_DIR/address-probe.md; exit
# status 0 when the span kept every address and the check passed.
#   usage: tests/gpu/migration/run_address_probe.sh OUT_DIR [BUILD_DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:?usage: run_address_probe.sh OUT_DIR}" && cd "$1" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O2 -cudart shared -o "$out/address_probe" "$here/address_probe.cu" -lcuda || exit 1
gpus=$(nvidia-smi -L | grep -c '^GPU ')
rc=0
: >"$out/address-probe.md"
# The span also after the target made memory of its own first, as a worker may have.
for target in "0 ranges" "0 span" "0_span_malloc" "0_span_hostalloc" $([ "$gpus" -ge 2 ] && echo "1_ranges 1_span"); do
  read -r target_gpu mode first <<<"${target//_/ }"
  rm -f "$out/hold"
  mkfifo "$out/hold"
  "$out/address_probe" source "$out/allocations.txt" 0 <"$out/hold" >"$out/source.txt" 2>&1 &
  source_pid=$!
  exec 3>"$out/hold"  # the source holds its memory until this closes
  for _ in $(seq 100); do grep -q "PROBE source holding" "$out/source.txt" && break; sleep 0.1; done
  "$out/address_probe" target "$out/allocations.txt" "$target_gpu" "$mode" "${first:-nothing}" \
    >"$out/target-gpu$target_gpu-$mode.txt" 2>&1 ||
    [ "$mode" = ranges ] || rc=1  # ranges apart are expected to move (a baseline for the span)
  exec 3>&-
  wait "$source_pid" || rc=1
  { echo "## source on GPU 0, target on GPU $target_gpu, $mode reserved${first:+ after its own $first}"; echo; echo '```'
    cat "$out/source.txt" "$out/target-gpu$target_gpu-$mode.txt"; echo '```'; echo; } >>"$out/address-probe.md"
done
rm -f "$out/hold"
# Module globals and texture/surface object values (object_probe.cu): three
# processes alive at once, the last with 1 GB allocated before it loads.
nvcc -O2 -cudart shared -o "$out/object_probe" "$here/object_probe.cu" -lcuda || exit 1
rm -f "$out/hold"
mkfifo "$out/hold"
for run in first:0 second:0 after-1GB:1024; do
  "$out/object_probe" "${run#*:}" <"$out/hold" >"$out/objects-${run%%:*}.txt" 2>&1 &
done
exec 3>"$out/hold"
for run in first second after-1GB; do
  for _ in $(seq 100); do grep -q "PROBE texture after\|RESULT FAIL" "$out/objects-$run.txt" 2>/dev/null && break; sleep 0.1; done
done
exec 3>&-
wait
rm -f "$out/hold"
{ echo "## module globals and texture/surface objects: three processes at once (the third with 1 GB allocated first)"
  echo; echo "| object | first | second | after-1GB |"; echo "|---|---|---|---|"
  paste -d' ' <(awk '/^PROBE/ {print $2" "$3" "$4}' "$out/objects-first.txt") \
    <(awk '/^PROBE/ {print $4}' "$out/objects-second.txt") <(awk '/^PROBE/ {print $4}' "$out/objects-after-1GB.txt") |
    awk '{print "| "$1" "$2" | "$3" | "$4" | "$5" |"}'
  echo; grep -h "RESULT FAIL" "$out"/objects-*.txt; } >>"$out/address-probe.md"
grep -q "RESULT FAIL" "$out"/objects-*.txt && rc=1
if [ -n "${2:-}" ]; then
  build=$(cd "$2" && pwd)
  port=${PROBE_PORT:-18900}
  last=$((gpus - 1))
  for g in 0 1; do
    "$build/rgpu-server" --listen 127.0.0.1 --port $((port + g)) --gpus $([ $g = 0 ] && echo 0 || echo $last) --workers 1 \
      --unix-socket /tmp/rgpu-$((port + g)).sock >"$out/server-$g.log" 2>&1 &
  done
  for g in 0 1; do
    for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$((port + g))) 2>/dev/null && break; sleep 0.1; done
  done
  for t in tcp shm; do
    { echo "## rgpu: kOpMallocAt over $t, source GPU 0, target GPU $last (two rgpu-servers)"; echo; echo '```'
      timeout 120 "$build/rgpu_fixed_address_check" $t 127.0.0.1:$port:0 127.0.0.1:$((port + 1)):$last 2>&1 || rc=1
      echo '```'; echo; } >>"$out/address-probe.md"
  done
  kill $(jobs -p) 2>/dev/null
  wait
fi
cat "$out/address-probe.md"
exit $rc
