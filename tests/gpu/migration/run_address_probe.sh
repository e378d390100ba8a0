#!/usr/bin/env bash
# Runs tests/gpu/migration/address_probe.cu (docs/migration.md): a source
# process holds cudaMalloc'd memory while a fresh target process maps device
# memory at the same addresses, on the same GPU and, where there is one, on
# another. Writes OUT_DIR/address-probe.md.
#   usage: tests/gpu/migration/run_address_probe.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:?usage: run_address_probe.sh OUT_DIR}" && cd "$1" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O2 -cudart shared -o "$out/address_probe" "$here/address_probe.cu" -lcuda || exit 1
gpus=$(nvidia-smi -L | grep -c '^GPU ')
rc=0
: >"$out/address-probe.md"
for target in "0 ranges" "0 span" $([ "$gpus" -ge 2 ] && echo "1_ranges 1_span"); do
  read -r target_gpu mode <<<"${target/_/ }"
  rm -f "$out/hold"
  mkfifo "$out/hold"
  "$out/address_probe" source "$out/allocations.txt" 0 <"$out/hold" >"$out/source.txt" 2>&1 &
  source_pid=$!
  exec 3>"$out/hold"  # the source holds its memory until this closes
  for _ in $(seq 100); do grep -q "PROBE source holding" "$out/source.txt" && break; sleep 0.1; done
  "$out/address_probe" target "$out/allocations.txt" "$target_gpu" "$mode" >"$out/target-gpu$target_gpu-$mode.txt" 2>&1 || rc=1
  exec 3>&-
  wait "$source_pid" || rc=1
  { echo "## source on GPU 0, target on GPU $target_gpu, $mode reserved"; echo; echo '```'
    cat "$out/source.txt" "$out/target-gpu$target_gpu-$mode.txt"; echo '```'; echo; } >>"$out/address-probe.md"
done
rm -f "$out/hold"
cat "$out/address-probe.md"
exit $rc
