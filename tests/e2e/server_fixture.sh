#!/usr/bin/env bash
# CTest fixture: starts or stops an rgpu-server with the host-memory TEST
# backend for the end-to-end tests; arguments after STATE go to the server.
#   usage: server_fixture.sh start|stop RGPU_SERVER PORT STATE [FLAG...]
set -euo pipefail
action=$1 server=$2 port=$3 state=$4
shift 4
case $action in
  start)
    mkdir -p "$state"
    # A device memory budget, so that allocations beyond it raise
    # over-budget notifications (e2e_async_notifications.cu).
    RGPU_HOST_TEST_MEMORY_BUDGET=$((64 << 20)) \
    "$server" --backend host-test --listen 127.0.0.1 --port "$port" --workers 2 \
      --module-cache "$state/modules" --log-level warn "$@" >"$state/server.log" 2>&1 &
    echo $! >"$state/server.pid"
    for _ in $(seq 100); do
      if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then exit 0; fi
      sleep 0.1
    done
    echo "rgpu-server did not start:" >&2
    cat "$state/server.log" >&2
    exit 1 ;;
  stop)
    if [ -f "$state/server.pid" ]; then
      kill "$(cat "$state/server.pid")" 2>/dev/null || true
      rm -f "$state/server.pid"
    fi
    # The server must have stayed up through every test, bad input included.
    if grep -q "killed by signal" "$state/server.log"; then
      echo "a worker crashed:" >&2
      cat "$state/server.log" >&2
      exit 1
    fi ;;
esac
