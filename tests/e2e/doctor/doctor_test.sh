#!/usr/bin/env bash
# `rgpu --version` and `rgpu-server --version` agree; `rgpu doctor` on a good
# setup and on each failure it names: a server that is down, a token missing
# or wrong, TLS not used with a TLS server, a server certificate of an unknown
# CA, no client certificate, a server of another protocol version, a GPU the
# server does not export, a program that opens NVIDIA's driver by a file name
# rgpu does not redirect (and one that opens NVIDIA's runtime so, which runs
# on rgpu's driver), a program that fails. Each case checks the exit status
# and the words of the report.
#   usage: doctor_test.sh RGPU RGPU_SERVER OLD_PROTOCOL_SERVER PORT CUDA_PROGRAM FAKE_NVIDIA_LIBRARY CUDA_LIB_DIR
# Uses PORT (a server without token), PORT+1 (nothing), PORT+2 (a server with
# a token), PORT+3 (the old-protocol stand-in) and PORT+4 (a TLS server that
# asks for client certificates).
set -euo pipefail
rgpu=$1 server=$2 old_server=$3 port=$4 program=$5 fake_nvidia=$6 cuda_lib_dir=$7
dir=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return; sleep 0.1; done; echo "port $1 never opened"; exit 1; }
"$rgpu" token "$dir/token" >/dev/null
"$rgpu" token "$dir/wrong-token" >/dev/null
"$server" --backend host-test --listen 127.0.0.1 --port "$port" --workers 1 --module-cache "$dir/m1" \
  --log-level warn 2>"$dir/server.log" &
pids+=($!)
"$server" --backend host-test --listen 127.0.0.1 --port $((port + 2)) --workers 1 --unix-socket none \
  --token-file "$dir/token" --module-cache "$dir/m2" --log-level warn 2>"$dir/token-server.log" &
pids+=($!)
"$old_server" $((port + 3)) 2>"$dir/old-server.log" &
pids+=($!)
certs=$dir/certs
"$(dirname "$0")/../../unit/make_tls_certs.sh" "$certs" >/dev/null 2>&1 || { echo "no test certificates"; exit 1; }
"$server" --backend host-test --listen 127.0.0.1 --port $((port + 4)) --workers 1 --unix-socket none \
  --tls-cert "$certs/server.pem" --tls-key "$certs/server.key" --tls-client-ca "$certs/client-ca.pem" \
  --module-cache "$dir/m3" --log-level warn 2>"$dir/tls-server.log" &
pids+=($!)
wait_port "$port"; wait_port $((port + 2)); wait_port $((port + 3)); wait_port $((port + 4))

failures=0
# case NAME WANTED_STATUS PATTERN... -- COMMAND...: the report must hold every pattern.
case_() {
  local name=$1 want=$2 patterns=()
  shift 2
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  local status=0
  "$@" >"$dir/out" 2>"$dir/err" || status=$?
  local bad=
  [ "$status" = "$want" ] || bad="exit status $status, expected $want"
  for p in "${patterns[@]}"; do grep -qE -- "$p" "$dir/out" || bad="${bad:+$bad; }no line matching '$p'"; done
  if [ -n "$bad" ]; then
    echo "FAIL $name: $bad"; cat "$dir/out"; sed 's/^/  stderr: /' "$dir/err"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
here=127.0.0.1:$port
# One version scheme on both sides: "NAME X.Y.Z (protocol N, CUDA M.m)".
client_version=$("$rgpu" --version) server_version=$("$server" --version)
if [[ ! $client_version =~ ^rgpu\ [0-9]+\.[0-9]+\.[0-9]+\ \(protocol\ [0-9]+,\ CUDA\ [0-9]+\.[0-9]+\)$ ]] ||
   [ "${client_version#rgpu }" != "${server_version#rgpu-server }" ]; then
  echo "FAIL versions: '$client_version' and '$server_version'"; failures=$((failures + 1))
else
  echo "ok   versions: $client_version"
fi
case_ good 0 "ok   reachable, transport shm: the server is on this host" "protocol [0-9]+ on both sides" \
  "backend host-test" "GPU 0 exported" "no problem found" -- "$rgpu" doctor --server "$here"
case_ good-tcp 0 "transport tcp: asked for" "no problem found" -- env RGPU_TRANSPORT=tcp "$rgpu" doctor --server "$here"
case_ good-program 0 "libcudart.so.13: rgpu's runtime and driver" "no problem found" \
  -- "$rgpu" doctor --server "$here" -- "$program"
grep -q "RESULT PASS" "$dir/err" || { echo "FAIL good-program: the program did not pass under doctor"; failures=$((failures + 1)); }
case_ server-down 1 "FIX  not reachable: .*127.0.0.1:$((port + 1))" "start rgpu-server there" \
  -- "$rgpu" doctor --server 127.0.0.1:$((port + 1))
case_ token-missing 1 "FIX  server .* requires a token" "set RGPU_TOKEN_FILE" \
  -- env -u RGPU_TOKEN_FILE "$rgpu" doctor --server 127.0.0.1:$((port + 2))
case_ token-wrong 1 "FIX  .*authentication failed" "holds another token than the server's" \
  -- env RGPU_TOKEN_FILE="$dir/wrong-token" "$rgpu" doctor --server 127.0.0.1:$((port + 2))
case_ token-right 0 "authentication: admitted \\(RGPU_TOKEN_FILE $dir/token\\)" "transport tcp: the server is on this host but has no Unix socket" \
  "no problem found" -- env RGPU_TOKEN_FILE="$dir/token" "$rgpu" doctor --server 127.0.0.1:$((port + 2))
case_ old-protocol 1 "FIX  protocol: this client speaks ([0-9]+), the server " "rgpu-server --version" \
  -- "$rgpu" doctor --server 127.0.0.1:$((port + 3))
case_ gpu-not-exported 1 "FIX  GPU 7 is not among the server's GPUs" "GPU 0 exported" \
  -- env RGPU_DEVICES="$here:0,$here:7" "$rgpu" doctor
tls=127.0.0.1:$((port + 4))
case_ tls-plain-client 1 "FIX  .*set RGPU_TRANSPORT=tls" "the server speaks TLS" -- "$rgpu" doctor --server "$tls"
case_ tls-unknown-ca 1 "FIX  TLS: .*certificate verify failed" "set RGPU_TLS_CA to the CA" \
  -- env RGPU_TRANSPORT=tls "$rgpu" doctor --server "$tls"
case_ tls-no-client-certificate 1 "certificate required" "set RGPU_TLS_CERT and RGPU_TLS_KEY" \
  -- env RGPU_TRANSPORT=tls RGPU_TLS_CA="$certs/ca.pem" "$rgpu" doctor --server "$tls"
case_ tls-good 0 "transport tls: asked for" "no problem found" \
  -- env RGPU_TRANSPORT=tls RGPU_TLS_CA="$certs/ca.pem" RGPU_TLS_CERT="$certs/client.pem" \
     RGPU_TLS_KEY="$certs/client.key" "$rgpu" doctor --server "$tls"
# The stand-in for NVIDIA's libraries under their real files' names: the
# audit module redirects libcuda.so.1 and libcudart.so.13, not these.
cp "$fake_nvidia" "$dir/libcuda.so.580.95.05"
cp "$fake_nvidia" "$dir/libcudart.so.13.0.96"
opener='import ctypes, sys
for path in sys.argv[1:]: ctypes.CDLL(path)'
case_ nvidia-driver-by-path 1 "FIX  $dir/libcuda.so.580.95.05: NVIDIA's driver" "open libcuda.so.1 by that name" \
  -- "$rgpu" doctor --server "$here" -- python3 -c "$opener" "$dir/libcuda.so.580.95.05"
case_ nvidia-runtime-by-path 0 "ok   $dir/libcudart.so.13.0.96: NVIDIA's CUDA runtime, a second one beside rgpu's.*runs on rgpu's driver" \
  -- "$rgpu" doctor --server "$here" -- python3 -c "$opener" "$dir/libcudart.so.13.0.96"
case_ redirected-by-path 0 "libcudart.so.13: rgpu's runtime and driver" \
  -- "$rgpu" doctor --server "$here" -- python3 -c "$opener" "$cuda_lib_dir/libcudart.so.13"
case_ program-fails 1 "FIX  the program exited with status 3" -- "$rgpu" doctor --server "$here" -- sh -c "exit 3"
case_ no-such-program 1 "FIX  no-such-program-here: it could not be started" \
  -- "$rgpu" doctor --server "$here" -- no-such-program-here
[ "$failures" = 0 ] && echo "RESULT PASS" || { echo "RESULT FAIL ($failures)"; exit 1; }
