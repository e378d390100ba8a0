#!/bin/sh
# nvcc as the sanitizer builds call it (tools/sanitize.sh): the CUDA programs
# and images nvcc makes are never instrumented, so each output the normal
# build REFERENCE already has is copied from there instead of compiled again.
# Usage: prebuilt-nvcc.sh REFERENCE BUILD NVCC-ARGUMENTS...
reference=$1 build=$2
shift 2
out= previous=
for a in "$@"; do
  [ "$previous" = -o ] && out=$a
  previous=$a
done
case $out in
  "$build"/*) prebuilt=$reference/${out#"$build"/} ;;
  *) prebuilt= ;;
esac
if [ -n "$prebuilt" ] && [ -f "$prebuilt" ]; then
  exec cp "$prebuilt" "$out"
fi
exec "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" "$@"
