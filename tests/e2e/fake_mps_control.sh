#!/usr/bin/env bash
# A stand-in for nvidia-cuda-mps-control where no GPU is, speaking enough of
# its interface for the server's MPS tests: `-d` starts a control daemon in
# the background that listens in $CUDA_MPS_PIPE_DIRECTORY (there `control`,
# a FIFO here where the real one has a Unix socket) and logs to
# $CUDA_MPS_LOG_DIRECTORY/control.log; run with no argument it is the client,
# sending each line of its stdin (get_server_list, quit...) to the daemon
# and printing the answer, and fails when no daemon runs.
set -u
pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
logdir=${CUDA_MPS_LOG_DIRECTORY:-/var/log/nvidia-mps}
pidfile=$pipe/control.pid

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

serve() {
  echo "$$" >"$pidfile"
  echo "Startup CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset} pipe=$pipe" >>"$logdir/control.log"
  while :; do
    # Its directory removed (a test cleaned up after a killed server): nothing
    # can reach it any more, so it ends rather than spin on the missing FIFO.
    [ -p "$pipe/control" ] || exit 0
    read -r command reply <"$pipe/control" || continue
    echo "Command $command" >>"$logdir/control.log"
    case $command in
      quit)
        echo "Shutdown" >>"$logdir/control.log"
        rm -f "$pipe/control" "$pidfile"
        : >"$reply"
        exit 0 ;;
      get_server_list) : >"$reply" ;;
      *) echo "unknown command $command" >"$reply" ;;
    esac
  done
}

if [ "${1:-}" = -d ]; then
  if running; then echo "An instance of this daemon is already running" >&2; exit 1; fi
  [ -d "$pipe" ] && [ -d "$logdir" ] || { echo "no pipe or log directory" >&2; exit 1; }
  rm -f "$pipe/control"
  mkfifo -m 600 "$pipe/control"
  setsid bash "$0" --serve </dev/null >/dev/null 2>&1 &
  for _ in $(seq 50); do running && exit 0; sleep 0.1; done
  exit 1
fi
[ "${1:-}" = --serve ] && serve
running || { echo "Cannot find MPS control daemon process" >&2; exit 1; }
while read -r command; do
  reply=$pipe/reply.$$
  mkfifo -m 600 "$reply"
  echo "$command $reply" >"$pipe/control"
  cat "$reply"
  rm -f "$reply"
done
