#!/usr/bin/env bash
# Fetches NVIDIA's CUDA-enabled UCX (the libucx-cu13 wheel from PyPI) into
# .whl/, for a GPU machine without network access: carry .whl/ there, where
# CMake builds the ucx transport against it and tools/gpu-suite.sh runs with
# it. Only the shared libraries (each once, under its soname), the headers
# and the tools are kept (~40 MB unpacked).
#   usage: tools/fetch-ucx.sh [VERSION]     (default 1.22.0)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-1.22.0}
rm -rf .whl
mkdir -p .whl
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest .whl "libucx-cu13==$version"
wheel=$(ls .whl/libucx_cu13-*.whl)
python3 - "$wheel" .whl <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
keep = ("libucx/include/", "libucx/bin/ucx_info", "libucx/bin/ucx_perftest", "libucx/etc/", "libucx_cu13.libs/")
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        # Zip files hold no links: each library is there under three names.
        lib = name.startswith("libucx/lib/") and name.endswith(".so.0")
        if lib or name.startswith(keep):
            z.extract(info, dest)
            if "/bin/" in name:
                import os
                os.chmod(f"{dest}/{name}", 0o755)
PY
rm "$wheel"
echo "UCX $version (CUDA) in .whl/libucx: $(du -sh .whl | cut -f1)"
