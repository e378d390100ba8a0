#!/usr/bin/env bash
# The README's "Deploying with TLS and credentials" commands, run as written
# but for the host name (localhost for gpuhost), the port (PORT for 18515),
# the build folder and the server's test flags (host-test backend, no Unix
# socket). Then what the README promises around them: a client missing the
# certificate, the token or TLS is refused with a plain error, and a TLS
# client of a plain server is told at once.
#   usage: tls_readme_test.sh README BUILD_DIR PORT
set -euo pipefail
readme=$1 build=$2 port=$3
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
cd "$dir"

# The fenced block after "<!-- tls-example:NAME -->", adapted to this test.
example() {
  awk -v tag="<!-- tls-example:$1 -->" '
    $0 == tag { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$readme" |
    sed -e "s/gpuhost/localhost/g" -e "s/18515/$port/g" -e "s|build/|$build/|g" \
        -e "s|^\($build/rgpu-server .*\) &\$|\1 --backend host-test --unix-socket none --workers 1 --module-cache $dir/modules 2>server.log \&|"
}
fail() { echo "FAIL: $*"; cat "$dir"/*.log 2>/dev/null; exit 1; }
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

[ -n "$(example certs)" ] || fail "no tls-example blocks in $readme"
bash -euo pipefail -c "$(example certs)" >certs.log 2>&1 || fail "the certificate commands failed"
example rgpu-server.conf >rgpu-server.conf
eval "$(example server)"
pids+=($!)
wait_port "$port" || fail "the TLS server did not start"

# The README's client.
(eval "$(example client)") >client.log 2>&1 || fail "the README's client was refused"
grep -q "gpu 0" client.log || fail "the README's client listed no GPU"

client_env=(RGPU_TRANSPORT=tls RGPU_TLS_CA=ca.pem RGPU_TLS_CERT=alice.pem RGPU_TLS_KEY=alice.key
            RGPU_TOKEN_FILE=rgpu.token)
# Refused: expects the command's output to match PATTERN.
refused() {  # WHAT PATTERN ENV...
  local what=$1 pattern=$2
  shift 2
  if env "$@" "$build/rgpu" ls --server "localhost:$port" >refused.log 2>&1; then fail "$what was admitted"; fi
  grep -q "$pattern" refused.log || fail "$what: no '$pattern' in: $(cat refused.log)"
}
refused "a client without a certificate" "alert" "${client_env[@]}" RGPU_TLS_CERT= RGPU_TLS_KEY=
refused "a client without the token" "requires a token" "${client_env[@]}" RGPU_TOKEN_FILE=
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=other \
  -keyout other.key -out other.pem 2>/dev/null
refused "a client trusting another CA" "certificate verify failed" "${client_env[@]}" RGPU_TLS_CA=other.pem
start=$(date +%s)
refused "a plain client" "RGPU_TRANSPORT=tls" RGPU_TRANSPORT=tcp RGPU_TOKEN_FILE=rgpu.token
[ $(($(date +%s) - start)) -le 10 ] || fail "a plain client waited $(($(date +%s) - start)) s"

# A TLS client of a plain server: told at once.
plain=$((port + 1))
"$build/rgpu-server" --backend host-test --listen 127.0.0.1 --port $plain --workers 1 --unix-socket none \
  --module-cache "$dir/modules" 2>plain-server.log &
pids+=($!)
wait_port $plain || fail "the plain server did not start"
start=$(date +%s)
if env "${client_env[@]}" "$build/rgpu" ls --server "localhost:$plain" >plain.log 2>&1; then
  fail "a TLS client of a plain server succeeded"
fi
grep -q "does not speak TLS" plain.log || fail "TLS client of a plain server: $(cat plain.log)"
[ $(($(date +%s) - start)) -le 2 ] || fail "a TLS client of a plain server waited"
grep -q "killed by signal" server.log plain-server.log && fail "a worker crashed"
echo "TLS README test passed"
