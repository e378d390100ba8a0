#!/usr/bin/env bash
# The whole GPU run in one command, on a machine with a GPU: builds rgpu,
# starts rgpu-server on the GPU, runs the corpus locally and through rgpu
# over tcp, shm and ucx (outputs compared), runs many clients at once, runs
# `rgpu bench` (local vs each transport, tcp with TLS too, vs the raw transport, same run) and
# writes the report to OUT_DIR.
#   usage: tools/gpu-suite.sh OUT_DIR     (RGPU_COMMIT names the commit measured)
# The corpus's Python entries (numba) run with CORPUS_PYTHON (python3).
# RGPU_SUITE lists the parts to run (default: all): corpus (shared-runtime
# builds), static (the corpus built with nvcc's default static runtime),
# apps (PyTorch, CuPy, JAX, numba), mapped (JAX and PyTorch over tcp with every page-locked
# allocation mapped, RGPU_PAGE_LOCKED_MAPPED=1), pinned (page-locked memory handed to kernels
# over tcp without it: the corpus's programs that do, JAX and PyTorch, and with SAMPLES_DIR
# p2pBandwidthLatencyTest, UnifiedMemoryPerf and simpleZeroCopy), appbench (application timings, and the
# calls a training step forwards over tcp, counted from RGPU_TRACE), concurrency, bench,
# graphs (the corpus's graph programs over tcp and shm, and with SAMPLES_DIR NVIDIA's
# graphMemoryNodes, simpleCudaGraphs and jacobiCudaGraphs; not in the default list, the corpus
# part runs the same programs),
# APPS_NAMES (space-separated) limits the apps part to those tests/gpu/apps programs.
# samples (programs built elsewhere, e.g. NVIDIA's cuda-samples built in the session:
# every executable under SAMPLES_DIR, or only those SAMPLES_NAMES lists (space-separated),
# compared by verdict; skipped without SAMPLES_DIR),
# flood (rgpu-flood-bench over tcp and shm: one client flooding the server against another's small calls),
# soak (RGPU_SOAK_SESSIONS long soak sessions at once, default 64, for RGPU_SOAK_SECONDS, default 600,
# against a server of its own: random valid and invalid calls, beside corpus programs checked, malformed
# frames and killed clients; opens paced to the server's worker starts, which soak.md reports),
# slurm (tests/slurm's cluster test on this machine's GPUs 0 and 1: needs two GPUs, root,
# and SLURM and munge installed, which this machine's image lacks: not run without them),
# pool (exclusive and shared modes with real amounts, the server's --max-session-memory on the
# same allocation paths, `rgpu smi` and the server's metrics sampled while the concurrency part
# runs, when both are chosen),
# sharing (issue 26's benchmark, not in the default list: 1 to 16 tenants of small kernels on GPU 0,
# locally with and without MPS and through rgpu time slicing and --gpu-sharing mps, on ports
# RGPU_PORT+30 and +31: tests/gpu/run_sharing.sh, OUT_DIR/sharing/sharing.md and .png),
# multi (one application on the GPUs of several servers, one server per GPU:
# tests/gpu/run_multi.sh, then NCCL across those servers: tests/gpu/run_nccl.sh;
# in the default list on machines with two GPUs or more),
# ucx (the corpus over ucx, UCX's own figures, the transports `ucx_info -d` finds,
# rgpu's bench program over ucx with zero copy on and off;
# `rgpu bench` has a ucx column whenever the ucx transport is built).
# UCX is NVIDIA's CUDA-enabled build in .whl/ where tools/fetch-ucx.sh put it,
# else the system's. `rgpu smi` and the metrics need nlohmann's JSON and
# cpp-httplib headers: where their packages are missing (the GPU image), the
# build takes them from shared/include (ignored), filled on a Debian machine:
#   mkdir -p shared/include && cp -r /usr/include/nlohmann shared/include/ &&
#   git -C <cpp-httplib clone> show v0.11.4:httplib.h >shared/include/httplib.h
# (upstream's single header: Debian's own is split from its library).
# RGPU_SUITE_BACKEND=host-test walks the pool and concurrency parts through
# on a machine without GPU (the server's test backend: kernels do not run, so
# the concurrency clients' checks fail there); RGPU_BUILD_DIR=DIR uses that
# existing build instead of configuring build-gpu.
#   tools/gpu-suite.sh --multi OUT_DIR   is RGPU_SUITE=multi.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --multi ]; then
  export RGPU_SUITE=multi
  shift
fi
out=$(mkdir -p "${1:?usage: gpu-suite.sh [--multi] OUT_DIR}" && cd "$1" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
export RGPU_PORT=${RGPU_PORT:-18515}
RGPU_UCX_PORT=${RGPU_UCX_PORT:-$((RGPU_PORT + 3))}
ucx_bin=
if [ -d .whl/libucx/lib ]; then
  export LD_LIBRARY_PATH=$PWD/.whl/libucx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  ucx_bin=$PWD/.whl/libucx/bin/
fi
build=${RGPU_BUILD_DIR:-build-gpu}
backend=${RGPU_SUITE_BACKEND:-cuda}
commit=${RGPU_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

{ [ -n "${RGPU_BUILD_DIR:-}" ] ||
    cmake -S . -B $build -G Ninja -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1; } &&
  ninja -C $build >>"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }

if [ "$backend" = cuda ]; then
  gpu_count=$(nvidia-smi -L | grep -c '^GPU ')
  gpu_name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
else
  gpu_count=0 gpu_name="none: the server's $backend backend"
fi
# Programs run through rgpu see every GPU of the server, as they do locally.
SUITE_GPUS=$(seq -s, 0 $((gpu_count - 1)))
export SUITE_GPUS
parts=" ${RGPU_SUITE:-corpus static apps mapped pinned appbench concurrency pool bench ucx slurm soak flood$([ "$gpu_count" -ge 2 ] && echo " multi")} "
part() { [[ $parts == *" $1 "* ]]; }
if part pool && grep -q "built without cpp-httplib" $build/rgpu-server; then
  echo "the pool part needs the metrics endpoint: put httplib.h in shared/include (see the top of $0)" >&2
  exit 1
fi
# The server of every part but multi (which starts one per GPU); with the
# pool part, its metrics are scraped while the concurrency part runs.
: >"$out/server.log"
metrics_port=$((RGPU_PORT + 4)) metrics=()
part pool && metrics=(--metrics-port $metrics_port)
if [[ $parts != " multi " ]]; then
  $build/rgpu-server --backend "$backend" --listen 127.0.0.1 --port "$RGPU_PORT" --ucx-port "$RGPU_UCX_PORT" --workers 4 \
    "${metrics[@]}" --module-cache "$out/module-cache" --log-level info >"$out/server.log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/"$RGPU_PORT") 2>/dev/null && break; sleep 0.1; done
fi
set +e
# The corpus over each transport: tcp, and shm (same host, shared page-locked
# memory); shared-runtime builds, then static ones (NVIDIA's runtime on rgpu's
# driver); then the applications.
corpus_rc=0
for t in tcp shm; do
  if part corpus; then
    RGPU_TRANSPORT=$t tests/gpu/run_corpus.sh $build "$out/corpus-$t" | tee "$out/corpus-$t.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  fi
  if part static; then
    CORPUS_CUDART=static RGPU_TRANSPORT=$t tests/gpu/run_corpus.sh $build "$out/static-$t" | tee "$out/static-$t.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  fi
  if part apps; then
    RGPU_TRANSPORT=$t tests/gpu/run_apps.sh $build "$out/apps-$t" ${APPS_NAMES:-} | tee "$out/apps-$t.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  fi
  if part samples && [ -n "${SAMPLES_DIR:-}" ]; then
    RGPU_TRANSPORT=$t tests/gpu/run_samples.sh $build "$out/samples-$t" "$SAMPLES_DIR" ${SAMPLES_NAMES:-} | tee "$out/samples-$t.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  fi
  # Graph copies of pageable memory are staged differently over tcp and shm.
  if part graphs; then
    RGPU_TRANSPORT=$t tests/gpu/run_corpus.sh $build "$out/graphs-$t" \
      $(grep -v '^#' tests/gpu/corpus/manifest.txt | cut -d'|' -f1 | grep graph) | tee "$out/graphs-$t.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
    if [ -n "${SAMPLES_DIR:-}" ]; then
      RGPU_TRANSPORT=$t tests/gpu/run_samples.sh $build "$out/graph_samples-$t" "$SAMPLES_DIR" \
        graphMemoryNodes simpleCudaGraphs jacobiCudaGraphs | tee "$out/graph_samples-$t.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
    fi
  fi
done
# JAX's kernels take page-locked host pointers: over tcp every page-locked
# allocation is made mapped (coherent device memory); PyTorch's pinned
# copies go through such memory too.
if part mapped; then
  RGPU_PAGE_LOCKED_MAPPED=1 RGPU_TRANSPORT=tcp tests/gpu/run_apps.sh $build "$out/mapped-tcp" jax_ops torch_ops |
    tee "$out/mapped-tcp.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
fi
# Without it, launches promote the page-locked memory they are handed.
if part pinned; then
  RGPU_TRANSPORT=tcp tests/gpu/run_corpus.sh $build "$out/pinned-tcp" page_locked_kernels zero_copy |
    tee "$out/pinned-tcp.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  RGPU_TRANSPORT=tcp tests/gpu/run_apps.sh $build "$out/pinned_apps-tcp" jax_ops torch_ops | tee "$out/pinned_apps-tcp.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  if [ -n "${SAMPLES_DIR:-}" ]; then
    RGPU_TRANSPORT=tcp tests/gpu/run_samples.sh $build "$out/pinned_samples-tcp" "$SAMPLES_DIR" \
      p2pBandwidthLatencyTest UnifiedMemoryPerf simpleZeroCopy | tee "$out/pinned_samples-tcp.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
  fi
fi

# Application timings: locally, then through rgpu over each transport.
if part appbench; then
  python=${APPS_PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
  $python bench/apps_bench.py >"$out/appbench-local.json" 2>"$out/appbench-local.err"
  for t in shm tcp; do
    RGPU_TRANSPORT=$t $build/rgpu run --server 127.0.0.1:"$RGPU_PORT" --gpus "$SUITE_GPUS" -- $python bench/apps_bench.py \
      >"$out/appbench-$t.json" 2>"$out/appbench-$t.err"
  done
  python3 bench/apps_bench_report.py "$out/appbench-local.json" shm="$out/appbench-shm.json" \
    tcp="$out/appbench-tcp.json" >"$out/appbench.md"
  # The calls one warm training step forwards, counted from the trace (tcp).
  RGPU_TRACE=1 RGPU_TRANSPORT=tcp $build/rgpu run --server 127.0.0.1:"$RGPU_PORT" --gpus "$SUITE_GPUS" -- \
    $python bench/apps_bench.py trace-steps >/dev/null 2>"$out/appbench-trace-tcp.err" || true
  python3 bench/trace_per_step.py "$out/appbench-trace-tcp.err" >"$out/appbench-calls.md" 2>&1 || true
  # A program's first cuBLAS call on a fresh server: its module cache empty.
  fresh_port=$((RGPU_PORT + 1))
  $build/rgpu-server --backend cuda --listen 127.0.0.1 --port $fresh_port --workers 1 \
    --module-cache "$out/fresh-module-cache" >"$out/fresh-server.log" 2>&1 &
  fresh=$!
  for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$fresh_port) 2>/dev/null && break; sleep 0.1; done
  RGPU_TRANSPORT=shm $build/rgpu run --server 127.0.0.1:$fresh_port --gpus "$SUITE_GPUS" -- $python bench/apps_bench.py first-call \
    >"$out/appbench-fresh-shm.json" 2>"$out/appbench-fresh-shm.err"
  kill $fresh 2>/dev/null
  rm -rf "$out/fresh-module-cache"
fi
# UCX: which transports it finds here, the corpus over it, and its own raw
# figures (ucx_perftest on loopback: tag latency, bandwidth host to host and,
# with CUDA, host to GPU memory) to set rgpu's ucx figures against.
if part ucx; then
  if [ -f $build/lib/librgpu-transport-ucx.so ]; then
    ${ucx_bin}ucx_info -v >"$out/ucx-info.txt" 2>&1
    ${ucx_bin}ucx_info -d >>"$out/ucx-info.txt" 2>&1
    RGPU_TRANSPORT=ucx RGPU_PORT=$RGPU_UCX_PORT tests/gpu/run_corpus.sh $build "$out/corpus-ucx" | tee "$out/corpus-ucx.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || corpus_rc=1
    perftest() {  # NAME ARGS...: one ucx_perftest run over loopback, its summary kept
      local name=$1 port=$((RGPU_PORT + 40)); shift
      ${ucx_bin}ucx_perftest -p $port >/dev/null 2>&1 &
      local peer=$!
      sleep 1
      timeout 120 ${ucx_bin}ucx_perftest 127.0.0.1 -p $port "$@" >"$out/perftest-$name.txt" 2>&1
      kill $peer 2>/dev/null; wait $peer 2>/dev/null
    }
    perftest tag_lat_64B -t tag_lat -s 64 -n 100000
    perftest tag_bw_256MB -t tag_bw -s 268435456 -n 20
    perftest get_bw_256MB -t ucp_get -s 268435456 -n 20
    perftest tag_bw_256MB_host_to_cuda -t tag_bw -s 268435456 -n 20 -m host,cuda
    perftest get_bw_256MB_cuda_from_host -t ucp_get -s 268435456 -n 20 -m cuda,host
    # Zero copy (bulk copies read and written in place in GPU memory, where
    # UCX knows CUDA memory) against staging: rgpu's bench program over ucx
    # to one started with RGPU_UCX_ZERO_COPY=1, then to the suite's server.
    zc=$out/ucx-zero-copy
    mkdir -p "$zc"
    zc_port=$((RGPU_PORT + 41))
    RGPU_UCX_ZERO_COPY=1 $build/rgpu-server --backend cuda --listen 127.0.0.1 --port $zc_port \
      --ucx-port $((zc_port + 1)) --workers 2 --unix-socket none --module-cache "$out/module-cache" \
      --log-level info >"$zc/zero-copy-server.log" 2>&1 &
    zc_server=$!
    for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$zc_port) 2>/dev/null && break; sleep 0.1; done
    $build/rgpu-bench-cuda --max-bytes 268435456 >"$zc/local.json" 2>"$zc/local.err"
    for run in zero-copy:$((zc_port + 1)) staged:$RGPU_UCX_PORT; do
      LD_LIBRARY_PATH=$build/lib:$LD_LIBRARY_PATH RGPU_TRANSPORT=ucx RGPU_DEVICES=ucx://127.0.0.1:${run#*:}:0 \
        $build/rgpu-bench-cuda --max-bytes 268435456 >"$zc/${run%:*}.json" 2>"$zc/${run%:*}.err"
    done
    kill $zc_server 2>/dev/null
    # A run that failed partway left no whole JSON: it is left out, and the
    # report quotes its error output.
    python3 -c 'import json, sys; d = sys.argv[1]
runs = {}
for k, f in (("local", "local"), ("ucx zero copy", "zero-copy"), ("ucx staged", "staged")):
    try:
        runs[k] = json.load(open(f"{d}/{f}.json"))
    except ValueError:
        pass
print(json.dumps(runs))' "$zc" \
      >"$zc/bench.json" && python3 bench/plot_bench.py "$zc/bench.json" "$zc/bench.md" "$zc/bench.png" \
      >/dev/null 2>"$zc/plot.err"
  else
    echo "the ucx transport was not built (no UCX found): see $out/build.log" >"$out/ucx-info.txt"
  fi
fi
if part bench; then
  # tcp with TLS beside plain tcp: a second server whose tcp port speaks TLS,
  # with a throwaway self-signed certificate for 127.0.0.1.
  tls_port=$((RGPU_PORT + 2))
  mkdir -p "$out/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$out/tls/server.key" -out "$out/tls/server.pem" 2>/dev/null
  $build/rgpu-server --backend cuda --listen 127.0.0.1 --port $tls_port --workers 2 --unix-socket none \
    --tls-cert "$out/tls/server.pem" --tls-key "$out/tls/server.key" \
    --module-cache "$out/module-cache" >"$out/tls-server.log" 2>&1 &
  tls_server=$!
  for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$tls_port) 2>/dev/null && break; sleep 0.1; done
  ucx_bench=
  [ -f $build/lib/librgpu-transport-ucx.so ] && ucx_bench="--ucx-port $RGPU_UCX_PORT"
  RGPU_TLS_CA="$out/tls/server.pem" $build/rgpu bench --server 127.0.0.1:"$RGPU_PORT" \
    --tls-server 127.0.0.1:$tls_port $ucx_bench --out "$out/bench" >"$out/bench.txt" 2>&1
  kill $tls_server 2>/dev/null
fi
multi_rc=0
if part multi; then
  tests/gpu/run_multi.sh $build "$out/multi" | tee "$out/multi.txt"
  multi_rc=${PIPESTATUS[0]}
  # NCCL between the servers' GPUs: bandwidth sweep, DDP and FSDP (docs/nccl.md).
  tests/gpu/run_nccl.sh $build "$out/nccl" | tee "$out/nccl.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || multi_rc=1
fi
concurrency_rc=0
for t in tcp shm; do
  part concurrency || continue
  # `rgpu smi --json` every 2 s while the clients run (the pool part), and
  # its table and the metrics once, 10 s in.
  sampler=
  if part pool; then
    mkdir -p "$out/pool"
    (for i in $(seq 1000); do
       sleep 2
       if [ "$i" -eq 5 ]; then
         $build/rgpu smi 127.0.0.1:"$RGPU_PORT" >"$out/pool/smi-concurrency-$t.txt" 2>&1
         python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
           "http://127.0.0.1:$metrics_port/metrics" >"$out/pool/metrics-concurrency-$t.txt" 2>&1
       fi
       $build/rgpu smi --json 127.0.0.1:"$RGPU_PORT" | tr -d '\n'
       echo
     done) >"$out/pool/smi-concurrency-$t.jsonl" 2>/dev/null &
    sampler=$!
  fi
  RGPU_TRANSPORT=$t tests/gpu/run_concurrency.sh $build "$out/concurrency-$t" "${RGPU_CLIENTS:-32}" \
    "${RGPU_STRESS_SECONDS:-30}" >"$out/concurrency-$t.txt" 2>&1 || concurrency_rc=1
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
done
pool_rc=0
if part pool; then
  mkdir -p "$out/pool"
  RGPU_SUITE_BACKEND=$backend tests/gpu/run_pool.sh $build "$out/pool" >"$out/pool/pool.txt" 2>&1 || pool_rc=1
fi
sharing_rc=0
if part sharing; then
  RGPU_PORT=$((RGPU_PORT + 30)) tests/gpu/run_sharing.sh $build "$out/sharing" >"$out/sharing.txt" 2>&1 || sharing_rc=1
fi
# SLURM hands out these GPUs: the CI's cluster test with the real GPUs behind
# its servers.
slurm_rc=0
if part slurm; then
  if command -v slurmctld >/dev/null && command -v munged >/dev/null; then
    mkdir -p "$out/slurm"
    { nvcc -cudart shared -std=c++17 -o "$out/slurm/memory" tests/e2e/programs/e2e_memory.cu &&
      nvcc -cudart shared -std=c++17 -Itests/e2e/programs -o "$out/slurm/pool_alloc" tests/slurm/pool_alloc.cu &&
      RGPU_SLURM_BACKEND=$backend tests/slurm/slurm_pool_test.sh $build/rgpu $build/rgpu-server "$out/slurm/memory" \
        "$out/slurm/pool_alloc" $((RGPU_PORT + 10)); } >"$out/slurm.txt" 2>&1 || slurm_rc=1
  else
    echo "not run: SLURM (slurmctld, slurmd, slurm-client) and munge are not installed here" >"$out/slurm.txt"
  fi
fi
# Soak: many clients at once for a long while against a server of its own;
# tools/soak/soak.py says what it mixes and what it reports.
soak_rc=0
if part soak; then
  mkdir -p "$out/soak/bin"
  for p in vector_add matmul_tiled reduction streams_overlap stream_ordered_alloc; do
    nvcc -cudart shared -O2 -arch=sm_90 -o "$out/soak/bin/$p" tests/gpu/corpus/$p.cu || soak_rc=1
  done
  python3 tools/soak/soak.py $build "$out/soak" --backend "$backend" "$out/soak/bin"/* >"$out/soak.txt" 2>&1 || soak_rc=1
fi
# One client flooding the suite's server against another's small calls.
if part flood; then
  for t in tcp shm; do
    RGPU_TRANSPORT=$t $build/rgpu-flood-bench 127.0.0.1:"$RGPU_PORT" 5 4 >"$out/flood-$t.txt" 2>&1
  done
fi
set -e

crashes=$(grep -c "killed by signal" "$out/server.log" || true)
{
  echo "# rgpu GPU suite report"
  echo
  echo "- commit: \`$commit\`"
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- GPU: $gpu_name"
  echo "- transports: tcp over loopback, shm (shared-memory rings, shared page-locked memory); server workers crashed: $crashes"
  echo
  for t in tcp shm ucx; do
    for kind in corpus static apps mapped pinned pinned_apps pinned_samples samples graphs graph_samples; do
      [ -f "$out/$kind-$t/corpus.md" ] || continue
      case $kind in
        corpus) echo "## Corpus over $t (shared-runtime builds): each program run locally and through rgpu" ;;
        static) echo "## Corpus over $t, built with nvcc's default static runtime (NVIDIA's runtime on rgpu's driver)" ;;
        apps) echo "## Applications over $t (PyTorch, CuPy, JAX, numba): run locally and through rgpu" ;;
        mapped) echo "## JAX and PyTorch over $t with every page-locked allocation mapped (RGPU_PAGE_LOCKED_MAPPED=1)" ;;
        pinned) echo "## Page-locked memory handed to kernels over $t (promoted at launch): corpus programs" ;;
        pinned_apps) echo "## JAX and PyTorch over $t without RGPU_PAGE_LOCKED_MAPPED (page-locked memory promoted at launch)" ;;
        pinned_samples) echo "## p2pBandwidthLatencyTest, UnifiedMemoryPerf, simpleZeroCopy over $t without RGPU_PAGE_LOCKED_MAPPED" ;;
        samples) echo "## Programs built elsewhere over $t ($SAMPLES_DIR): run locally and through rgpu, verdicts compared" ;;
        graphs) echo "## The corpus's graph programs over $t" ;;
        graph_samples) echo "## graphMemoryNodes, simpleCudaGraphs, jacobiCudaGraphs over $t ($SAMPLES_DIR)" ;;
      esac
      echo
      cat "$out/$kind-$t/corpus.md"
      echo
    done
  done
  echo
  if [ -f "$out/appbench.md" ]; then
    echo "## Application timings (same run; seconds per step or call, ratios to local)"
    echo
    cat "$out/appbench.md"
    echo
    echo "First cuBLAS call on a fresh server (empty module cache), shm: $(cat "$out/appbench-fresh-shm.json" 2>/dev/null)"
    echo
    cat "$out/appbench-calls.md" 2>/dev/null
    echo
  fi
  if part concurrency; then
    echo "## Concurrency: ${RGPU_CLIENTS:-32} client processes on one GPU, ${RGPU_STRESS_SECONDS:-30} s each, results checked"
    echo
    for t in tcp shm; do echo "- $t: $(tail -1 "$out/concurrency-$t.txt")"; done
    echo
  fi
  if part pool; then
    echo "## Pool: exclusive and shared modes on the GPU (tests/e2e/pool_test.sh, $backend backend, 2 GiB amounts)"
    echo
    echo '```'
    grep -v "^\[rgpu" "$out/pool/pool.txt"
    echo '```'
    echo
    for t in tcp shm; do
      [ -s "$out/pool/smi-concurrency-$t.jsonl" ] || continue
      echo "rgpu smi during the concurrency test over $t: $(python3 tests/gpu/smi_summary.py "$out/pool/smi-concurrency-$t.jsonl")"
      echo
      echo "\`rgpu smi\` 10 s into it, and the server's metrics then (sessions, bytes, utilisation, the most frequent calls):"
      echo
      echo '```'
      cat "$out/pool/smi-concurrency-$t.txt" 2>/dev/null
      echo
      grep -E "^rgpu_(sessions|bytes_total|gpu_utilization_percent)" "$out/pool/metrics-concurrency-$t.txt" 2>/dev/null
      grep "^rgpu_calls_total" "$out/pool/metrics-concurrency-$t.txt" 2>/dev/null | sort -k2 -n -r | head -5
      echo '```'
      echo
    done
  fi
  if [ -f "$out/slurm.txt" ]; then
    echo "## SLURM hands out the GPU (tests/slurm/slurm_pool_test.sh on the real GPU)"
    echo
    grep -E "^(FAILED|measured|slurm pool)" "$out/slurm.txt" || tail -1 "$out/slurm.txt"
    echo
  fi
  if [ -f "$out/soak/soak.md" ]; then
    echo "## Soak (tools/soak/soak.py; details in soak/soak.json)"
    echo
    cat "$out/soak/soak.md"
    echo
  fi
  if part flood; then
    echo "## One client flooding the server against another's small calls (rgpu-flood-bench, 4 flooders)"
    for t in tcp shm; do
      echo
      echo "$t:"
      echo
      echo '```'
      cat "$out/flood-$t.txt"
      echo '```'
    done
    echo
  fi
  if part bench; then
    echo "## rgpu bench: local CUDA vs rgpu over tcp, shm, tcp with TLS and ucx vs the raw transports (same run; plot bench/bench.png)"
    echo
    cat "$out/bench/bench.md" 2>/dev/null || tail -5 "$out/bench.txt"
    echo
  fi
  if [ -f "$out/ucx-info.txt" ]; then
    echo "## UCX on this machine"
    echo
    rdma=$(grep -E "Transport: (rc|ud|dc)" "$out/ucx-info.txt" | sort -u)
    echo "- transports \`ucx_info -d\` found: $(grep -o "Transport: .*" "$out/ucx-info.txt" | sort -u | cut -d' ' -f2 | tr '\n' ' ')"
    if [ -z "$rdma" ]; then
      echo "- **no RDMA device (InfiniBand/RoCE) found: RDMA was not measured**; ucx ran over what it found (shared memory, tcp, CUDA copies)"
    fi
    for f in "$out"/perftest-*.txt; do
      [ -f "$f" ] || continue
      echo "- ucx_perftest $(basename "$f" .txt | cut -d- -f2-): \`$(grep -E "^ *Final:|^\s+[0-9]+ +[0-9]" "$f" | tail -1 | tr -s ' ')\`"
    done
    echo
    echo "\`ucx_info -d\` in full: ucx-info.txt"
    echo
    if [ -f "$out/ucx-zero-copy/bench.md" ]; then
      echo "### ucx bulk copies: zero copy (in place in GPU memory, RGPU_UCX_ZERO_COPY=1) vs staged (the default), same run"
      echo
      echo "- the workers said: zero-copy server \`$(grep -ho "bulk copies over this transport: .*" "$out/ucx-zero-copy/zero-copy-server.log" | sort -u | tr '\n' ' ')\`," \
        "staged server \`$(grep -ho "bulk copies over this transport: .*" "$out/server.log" | sort -u | tr '\n' ' ')\`"
      echo
      for run in zero-copy staged; do
        grep -q "RESULT FAIL" "$out/ucx-zero-copy/$run.json" "$out/ucx-zero-copy/$run.err" 2>/dev/null &&
          echo "- the $run run failed: \`$(grep -h "ERROR" "$out/ucx-zero-copy/$run.json" "$out/ucx-zero-copy/$run.err" | head -1 | cut -c1-200)\`"
      done
      echo
      cat "$out/ucx-zero-copy/bench.md"
      echo
    fi
  fi
  if part sharing; then
    cat "$out/sharing/sharing.md" 2>/dev/null || echo "sharing: no report (see sharing.txt)"
  fi
  # Last, so that a --multi run's tables end the output.
  if part multi; then
    cat "$out/multi/multi.md" 2>/dev/null || echo "multi: no report (see multi.txt)"
    echo "(plot: multi/multi.png; outputs: multi/)"
  fi
} >"$out/report.md"
cat "$out/report.md"
[ $corpus_rc -eq 0 ] && [ $concurrency_rc -eq 0 ] && [ $slurm_rc -eq 0 ] && [ $multi_rc -eq 0 ] && [ $pool_rc -eq 0 ] && [ $soak_rc -eq 0 ] && [ $sharing_rc -eq 0 ]
