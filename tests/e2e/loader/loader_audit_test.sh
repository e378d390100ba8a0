#!/usr/bin/env bash
# rgpu's loader audit module under `rgpu run`: a program whose RPATH names a
# directory holding (a stand-in for) NVIDIA's libcuda.so.1, that opens it by
# absolute path and opens a video-engine library by name, gets rgpu's driver
# both times and no engine library, and rgpu's NCCL front-end for NCCL by
# path and by soname (NVIDIA's stand-in with RGPU_NCCL=native); run without
# rgpu, the same program loads the stand-ins (so the check can fail).
#   usage: loader_audit_test.sh RGPU PROBE NVIDIA_DIR ENGINE_DIR
set -euo pipefail
rgpu=$1 probe=$2 nvidia_dir=$3 engine_dir=$4
args=("$nvidia_dir/libcuda.so.1" libnvcuvid.so.1 "$nvidia_dir/libnccl.so.2")
expect() {
  local what=$1 want=$2 got=$3
  if ! grep -qx "$want" <<<"$got"; then
    echo "$what: expected '$want' in:"
    echo "$got"
    echo "RESULT FAIL"
    exit 1
  fi
}
plain=$(LD_LIBRARY_PATH=$engine_dir:$nvidia_dir "$probe" "${args[@]}")
expect "without rgpu" "rpath: nvidia" "$plain"
expect "without rgpu" "absolute: nvidia" "$plain"
expect "without rgpu" "engine: nvidia" "$plain"
expect "without rgpu" "nccl absolute: nvidia" "$plain"
expect "without rgpu" "nccl soname: nvidia" "$plain"
through=$(LD_LIBRARY_PATH=$engine_dir:$nvidia_dir "$rgpu" run -- "$probe" "${args[@]}" 2>&1)
expect "through rgpu" "rpath: rgpu" "$through"
expect "through rgpu" "absolute: rgpu" "$through"
expect "through rgpu" "engine: not-loaded" "$through"
expect "through rgpu" "nccl absolute: rgpu" "$through"
expect "through rgpu" "nccl soname: rgpu" "$through"
native=$(RGPU_NCCL=native LD_LIBRARY_PATH=$engine_dir:$nvidia_dir "$rgpu" run -- "$probe" "${args[@]}" 2>&1)
expect "through rgpu, RGPU_NCCL=native" "rpath: rgpu" "$native"
expect "through rgpu, RGPU_NCCL=native" "nccl absolute: nvidia" "$native"
expect "through rgpu, RGPU_NCCL=native" "nccl soname: nvidia" "$native"
grep -q "libnvcuvid.so.1 is not loaded" <<<"$through" || { echo "no log line for the refused library"; echo "RESULT FAIL"; exit 1; }
echo "RESULT PASS"
