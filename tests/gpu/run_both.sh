# Sourced by run_corpus.sh and run_apps.sh: one program run locally and
# through rgpu, for compare_runs.py.
#   run_both NAME CMD...  runs CMD locally, then through `$RGPU run` against the
#   rgpu-server on 127.0.0.1:$PORT, its GPUs SUITE_GPUS (default 0; the suite
#   names every GPU of the machine, as the local run sees them all), or the
#   GPUs RGPU_DEVICES names, when set,
#   each for at most TIMEOUT seconds, with stdout and stderr in LOGS/NAME.{local,rgpu}.{out,err}, and appends both
#   exit codes and times (nanoseconds) to RESULTS. LOCAL_LIBRARY_PATH, when
#   set, comes first in the local run's LD_LIBRARY_PATH.
run_both() {
  local name=$1 t0 t1 t2 lrc=0 rrc=0
  shift
  local -a local_env=()
  [ -n "${LOCAL_LIBRARY_PATH:-}" ] &&
    local_env=("LD_LIBRARY_PATH=$LOCAL_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  t0=$(date +%s%N)
  env "${local_env[@]}" timeout -k 5 "$TIMEOUT" "$@" >"$LOGS/$name.local.out" 2>"$LOGS/$name.local.err" || lrc=$?
  t1=$(date +%s%N)
  local -a server=(--server "127.0.0.1:$PORT" --gpus "${SUITE_GPUS:-0}")
  [ -n "${RGPU_DEVICES:-}" ] && server=()
  timeout -k 5 "$TIMEOUT" "$RGPU" run "${server[@]}" -- "$@" \
    >"$LOGS/$name.rgpu.out" 2>"$LOGS/$name.rgpu.err" || rrc=$?
  t2=$(date +%s%N)
  printf '%s\tran\t%d\t%d\t%d\t%d\n' "$name" "$lrc" "$rrc" $((t1 - t0)) $((t2 - t1)) >>"$RESULTS"
  echo "[ran] $name local rc=$lrc rgpu rc=$rrc"
}
