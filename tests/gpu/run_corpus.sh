#!/usr/bin/env bash
# Build the GPU corpus (tests/gpu/corpus/manifest.txt) and run every program
# twice: locally against NVIDIA's libcudart, and through rgpu against an
# already running rgpu-server. A program passes when stdout and exit code are
# identical in both runs and, except for the error-case programs (err_*), the
# local run exits 0 and prints "RESULT PASS".
#
# usage: tests/gpu/run_corpus.sh BUILD_DIR OUT_DIR [NAME...]
#   BUILD_DIR  rgpu build tree (holds the `rgpu` launcher)
#   OUT_DIR    gets bin/, logs/, corpus.json, corpus.md
#   NAME...    only these manifest entries (default: all)
# environment:
#   RGPU_PORT (18515)    port of the rgpu-server on 127.0.0.1
#   NVCC                 nvcc to use (default: nvcc in PATH, else /usr/local/cuda/bin/nvcc)
#   NVCC_CCBIN           host compiler for nvcc (default: g++ in PATH, else /opt/gcc/bin/g++)
#   CUDA_HOME            toolkit root for the local runs' libcudart (/usr/local/cuda)
#   CORPUS_TIMEOUT (60)  seconds per run;  CORPUS_JOBS (16)  parallel builds
#   CORPUS_CUDART        shared (default) or static: how programs link NVIDIA's
#                        runtime (static is nvcc's default; it runs on rgpu's driver)
#   CORPUS_PYTHON        interpreter of the Python entries (python3); it needs numpy
#                        and numba's CUDA target (numba-cuda, or numba's own)
# A Python entry (its source ends in .py, no flags) is not compiled: its
# "build" is a launcher script that runs the source with CORPUS_PYTHON, so
# through rgpu the interpreter loads rgpu's libcuda.so.1 (and libcuda.so).
# Exit status: 0 when every program passed, 1 otherwise, 2 on usage errors.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,23p' "$0" >&2
  exit 2
fi
BUILD_DIR=$(realpath "$1")
mkdir -p "$2"
OUT_DIR=$(realpath "$2")
shift 2
ONLY=("$@")

HERE=$(dirname "$(realpath "$0")")
CORPUS=$HERE/corpus
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PORT=${RGPU_PORT:-18515}
TIMEOUT=${CORPUS_TIMEOUT:-60}
JOBS=${CORPUS_JOBS:-16}
RGPU=$BUILD_DIR/rgpu
BIN=$OUT_DIR/bin
LOGS=$OUT_DIR/logs
RESULTS=$OUT_DIR/results.tsv
rm -rf "$BIN" "$LOGS"
mkdir -p "$BIN" "$LOGS"

NVCC=${NVCC:-$(command -v nvcc || echo "$CUDA_HOME/bin/nvcc")}
CCBIN_FLAGS=()
if [[ -n ${NVCC_CCBIN:-} ]]; then
  CCBIN_FLAGS=(-ccbin "$NVCC_CCBIN")
elif ! command -v g++ >/dev/null && [[ -x /opt/gcc/bin/g++ ]]; then
  CCBIN_FLAGS=(-ccbin /opt/gcc/bin/g++)
fi
[[ -x $RGPU ]] || { echo "run_corpus: $RGPU not found" >&2; exit 2; }

# Manifest entries (comments and blank lines dropped), optionally filtered.
mapfile -t ENTRIES < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$CORPUS/manifest.txt")
if [[ ${#ONLY[@]} -gt 0 ]]; then
  keep=()
  for e in "${ENTRIES[@]}"; do
    for n in "${ONLY[@]}"; do [[ ${e%%|*} == "$n" ]] && keep+=("$e"); done
  done
  ENTRIES=("${keep[@]}")
fi
# An entry may name the only transports it runs on (fifth field, e.g. "shm");
# without RGPU_TRANSPORT rgpu picks shm for this local server.
TRANSPORT=${RGPU_TRANSPORT:-shm}
keep=()
for e in "${ENTRIES[@]}"; do
  IFS='|' read -r _ _ _ _ needs <<<"$e"
  if [[ -z $needs || ",$needs," == *",$TRANSPORT,"* ]]; then
    keep+=("$e")
  else
    echo "[skipped] ${e%%|*}: runs over $needs only"
  fi
done
ENTRIES=("${keep[@]}")

# ---- build, in parallel: one nvcc per entry; a failure is recorded, not fatal
build_one() {
  local name srcs flags args
  IFS='|' read -r name srcs flags args <<<"$1"
  if [[ $srcs == *.py ]]; then
    printf '#!/usr/bin/env bash\nexec %q %q "$@"\n' "$PYTHON" "$CORPUS/$srcs" >"$BIN/$name"
    chmod +x "$BIN/$name"
    touch "$BIN/$name.built"
    return 0
  fi
  IFS='|' read -r name srcs flags args _ <<<"$1"
  # shellcheck disable=SC2086  # flags and sources are word lists on purpose
  if (cd "$CORPUS" && "$NVCC" -cudart "$CUDART" -O2 "${CCBIN_FLAGS[@]}" $flags -o "$BIN/$name" $srcs) \
      >"$LOGS/$name.build.log" 2>&1; then
    touch "$BIN/$name.built"
  fi
  return 0
}
export -f build_one
PYTHON=${CORPUS_PYTHON:-python3}
CUDART=${CORPUS_CUDART:-shared}
export CORPUS NVCC BIN LOGS PYTHON CUDART
export CCBIN_FLAGS_STR="${CCBIN_FLAGS[*]:-}"
# shellcheck disable=SC2016  # expanded by the inner bash
printf '%s\n' "${ENTRIES[@]}" |
  xargs -d '\n' -P "$JOBS" -n 1 bash -c 'CCBIN_FLAGS=($CCBIN_FLAGS_STR); build_one "$1"' _

# ---- run, one program at a time (the GPU and the server are shared)
# shellcheck source=run_both.sh
source "$HERE/run_both.sh"
LOCAL_LIBRARY_PATH=$CUDA_HOME/lib64
: >"$RESULTS"
cd "$BIN"  # programs run from their build folder
for e in "${ENTRIES[@]}"; do
  IFS='|' read -r name srcs flags args _ <<<"$e"
  read -r -a argv <<<"$args"
  if [[ ! -f $BIN/$name.built ]]; then
    printf '%s\tbuild_failed\t\t\t\t\n' "$name" >>"$RESULTS"
    echo "[build FAILED] $name (see logs/$name.build.log)"
    continue
  fi
  run_both "$name" "./$name" "${argv[@]}"
done

# ---- compare and report
python3 "$HERE/compare_runs.py" "$RESULTS" "$LOGS" "$OUT_DIR"
