#!/usr/bin/env bash
# On a GPU machine: runs NVIDIA's own runtime and libraries over the driver
# tracer (tools/driver_trace, a libcuda.so.1 wrapping NVIDIA's) and collects
# what they ask the driver for: cuGetProcAddress requests, the private tables
# of cuGetExportTable and every call into them, every driver call's result.
#   usage: tools/driver-trace.sh OUT_DIR [PROGRAM...]
# PROGRAMs are corpus names (tests/gpu/corpus/manifest.txt, built with nvcc's
# default static runtime) or Python files; default: vector_add, every lib_*
# corpus program and the applications in tests/gpu/apps.
# Writes OUT_DIR/traces.tar.gz (one log per process) and OUT_DIR/summary.txt.
# TRACE_RGPU=BUILD_DIR traces rgpu's driver of that build instead, against
# the rgpu-server RGPU_DEVICES names (rgpu's runtime preloaded, as rgpu run does).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:?usage: driver-trace.sh OUT_DIR [PROGRAM...]}" && cd "$1" && pwd)
shift
export PATH=/usr/local/cuda/bin:$PATH
build=build-trace
python=${PYTHON:-$( [ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
cmake -S . -B $build -G Ninja -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1 &&
  ninja -C $build rgpu-driver-trace >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }

programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  programs=(vector_add $(grep -o '^lib_[a-z_0-9]*' tests/gpu/corpus/manifest.txt) tests/gpu/apps/[!_]*.py)
fi
traces=$out/traces
bin=$out/bin
mkdir -p "$traces" "$bin"
build_one() {
  local line name srcs flags
  line=$(grep "^$1|" tests/gpu/corpus/manifest.txt) || return 1
  IFS='|' read -r name srcs flags _ <<<"$line"
  # shellcheck disable=SC2086
  (cd tests/gpu/corpus && nvcc -O2 $flags -o "$bin/$name" $srcs) >"$traces/$name.build.log" 2>&1
}
for p in "${programs[@]}"; do [[ $p == *.py ]] || build_one "$p" & done
wait
for p in "${programs[@]}"; do
  name=$(basename "$p" .py)
  if [[ $p == *.py ]]; then cmd=("$python" "$p"); else cmd=("$bin/$p"); fi
  [[ $p == *.py || -x $bin/$p ]] || { echo "$name: build failed"; continue; }
  start=$(date +%s.%N)
  if [ -n "${TRACE_RGPU:-}" ]; then
    lib=$(realpath "$TRACE_RGPU")/lib
    env RGPU_REAL_LIBCUDA=$lib/libcuda.so.1 LD_PRELOAD=$lib/libcudart.so.13 \
      RGPU_DRIVER_TRACE=$traces/$name LD_LIBRARY_PATH=$PWD/$build/driver-trace:$lib \
      timeout -k 5 300 "${cmd[@]}" >"$traces/$name.out" 2>&1
  else
    RGPU_DRIVER_TRACE=$traces/$name LD_LIBRARY_PATH=$PWD/$build/driver-trace:/usr/local/cuda/lib64 \
      timeout -k 5 300 "${cmd[@]}" >"$traces/$name.out" 2>&1
  fi
  echo "$name: rc=$? $(tail -1 "$traces/$name.out") ($(awk "BEGIN {print $(date +%s.%N) - $start}") s)"
done | tee "$out/runs.txt"

{
  echo "# Driver trace summary"
  echo
  echo "## Private tables asked for (each process)"
  grep -h "^export-table" "$traces"/*.[0-9]* | sed 's/ slots:.*//' | sort | uniq -c
  echo
  echo "## Private table functions called (calls summed over processes)"
  grep -h '^  {' "$traces"/*.[0-9]* | awk '{c[$1]+=$2} END {for (k in c) print c[k], k}' | sort -k2
  echo
  echo "## Table layouts"
  grep -h "^export-table" "$traces"/*.[0-9]* | sort -u
  echo
  echo "## Driver functions that failed (summed)"
  grep -h '^  cu' "$traces"/*.[0-9]* | awk '$3 > 0 {f[$1" last="$4]+=$3} END {for (k in f) print f[k], k}' | sort -k2
  echo
  echo "## Driver functions asked for through cuGetProcAddress"
  grep -h "^proc " "$traces"/*.[0-9]* | awk '{print $2}' | sort -u | tr '\n' ' '
  echo
} >"$out/summary.txt"
tar -czf "$out/traces.tar.gz" -C "$out" traces
rm -rf "$traces" "$bin"
