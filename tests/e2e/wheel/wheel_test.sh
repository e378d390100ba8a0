#!/usr/bin/env bash
# The client wheel as a user gets it: tools/build-wheel.sh builds it from
# this build, a fresh venv installs only the wheel, and with a PATH and
# library path that hold nothing of the build tree (nor the CUDA toolkit)
# its `rgpu` runs, against a host-test server of this build, a program with
# the shared runtime, one with NVIDIA's static runtime and a Python program
# (ctypes on libcudart); `rgpu doctor` shows their CUDA libraries are the
# wheel's.
#   usage: wheel_test.sh SOURCE_DIR BUILD_DIR PORT SHARED_PROGRAM STATIC_PROGRAM
set -euo pipefail
src=$1 build=$2 port=$3 shared_program=$4 static_program=$5
dir=$(mktemp -d)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "$*"; echo "RESULT FAIL"; exit 1; }

start=$SECONDS
wheel=$("$src/tools/build-wheel.sh" "$build" "$dir/dist" 2>"$dir/build-wheel.log") ||
  { cat "$dir/build-wheel.log"; fail "the wheel did not build"; }
echo "built $(basename "$wheel") in $((SECONDS - start)) s"
[[ $(basename "$wheel") =~ ^rgpu-[0-9.]+-py3-none-manylinux_2_[0-9]+_x86_64\.whl$ ]] || fail "not a manylinux wheel: $wheel"
# A venv without pip of its own (quicker to make): this pip installs into it.
python3 -m venv --without-pip "$dir/venv"
python3 -m pip --python "$dir/venv/bin/python" install -q --no-index --disable-pip-version-check "$wheel" \
  >"$dir/pip.log" 2>&1 || { cat "$dir/pip.log"; fail "pip could not install the wheel"; }
"$build/rgpu-server" --backend host-test --listen 127.0.0.1 --port "$port" --workers 2 --module-cache "$dir/modules" \
  --log-level warn 2>"$dir/server.log" &
server_pid=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done

# The programs away from the build tree, run with nothing of it on any path.
cp "$shared_program" "$dir/shared_runtime_program"
cp "$static_program" "$dir/static_runtime_program"
cp "$src/tests/e2e/wheel/cuda_memcpy.py" "$dir/"
clean() { env -i HOME="$dir" PATH="$dir/venv/bin:/usr/bin:/bin" "$@"; }
[ "$(clean sh -c 'command -v rgpu')" = "$dir/venv/bin/rgpu" ] || fail "rgpu is not the venv's"
version=$(clean rgpu --version)
[[ $(basename "$wheel") == "rgpu-$(cut -d' ' -f2 <<<"$version")-"* ]] || fail "wheel and '$version' differ"
echo "$version"
for program in ./shared_runtime_program ./static_runtime_program "python3 cuda_memcpy.py"; do
  for transport in tcp shm; do
    out=$(cd "$dir" && clean RGPU_TRANSPORT=$transport rgpu run --server 127.0.0.1:"$port" -- $program 2>&1) ||
      { echo "$out"; fail "$program over $transport failed"; }
    grep -q "RESULT PASS" <<<"$out" || { echo "$out"; fail "$program over $transport did not pass"; }
    echo "ok   $program over $transport"
  done
done
report=$(cd "$dir" && clean rgpu doctor --server 127.0.0.1:"$port" -- python3 cuda_memcpy.py 2>/dev/null) ||
  { echo "$report"; fail "rgpu doctor found problems"; }
grep -q "ok   $dir/venv/.*/rgpu/libexec/lib/libcudart.so.13: rgpu's runtime and driver" <<<"$report" ||
  { echo "$report"; fail "the program's runtime is not the wheel's"; }
! grep -q "$build" <<<"$report" || { echo "$report"; fail "the build tree shows in the report"; }
echo "ok   rgpu doctor: the wheel's libraries"
echo "wheel test took $((SECONDS - start)) s"
echo "RESULT PASS"
