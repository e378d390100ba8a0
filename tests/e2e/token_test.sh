#!/usr/bin/env bash
# `rgpu token` and the README's way of starting a server with it: the file is
# its owner's alone and never overwritten; a client with the token is
# admitted, one without it refused.
#   usage: token_test.sh RGPU RGPU_SERVER PORT
set -euo pipefail
rgpu=$1 server=$2 port=$3
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
"$rgpu" token "$dir/token" >/dev/null
[ "$(stat -c %a "$dir/token")" = 600 ] || { echo "token file mode $(stat -c %a "$dir/token")"; exit 1; }
if "$rgpu" token "$dir/token" 2>/dev/null; then echo "an existing token was overwritten"; exit 1; fi
"$server" --backend host-test --listen 127.0.0.1 --port "$port" --workers 1 --unix-socket none \
  --token-file "$dir/token" --module-cache "$dir/modules" 2>"$dir/server.log" &
pid=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
RGPU_TOKEN_FILE=$dir/token "$rgpu" ls --server "127.0.0.1:$port" >"$dir/ls.txt" ||
  { echo "a client with the token was refused"; cat "$dir/ls.txt" "$dir/server.log"; exit 1; }
if "$rgpu" ls --server "127.0.0.1:$port" >/dev/null 2>&1; then echo "a client without the token was admitted"; exit 1; fi
echo "token test passed"
