"""PyTorch DistributedDataParallel (or FullyShardedDataParallel) on two GPUs,
one process per GPU, launched as torchrun launches its ranks (RANK,
WORLD_SIZE, MASTER_ADDR/PORT, LOCAL_RANK): a small model trained a few steps
with fixed seeds, the losses compared between a local run and runs through
rgpu where each process uses one GPU of its own rgpu-server (RGPU_DEVICES
names that server's GPU).

Through rgpu, NCCL is rgpu's front-end (docs/nccl.md): the collectives run
in NCCL on the servers, GPU to GPU over the servers' own network. With
`--nccl native` too, each transport is also run with RGPU_NCCL=native:
NVIDIA's NCCL in the application's process on rgpu's driver (which needs
peer memory and mapped host memory between the ranks: shm only). Each rgpu
run tries NCCL first and, if it fails or hangs, gloo, and says which backend
gave the losses and why NCCL did not.

With `--launcher torchrun` every run (local too) is one torchrun with
--nproc-per-node N: through rgpu one `rgpu run` whose RGPU_DEVICES names
every server's GPU, each rank on the GPU of its LOCAL_RANK.

usage:
  ddp_train.py compare OUT_DIR --rgpu BUILD/rgpu --devices H:P:G,H:P:G [--transports shm,tcp]
                       [--ucx-devices H:P:G,H:P:G (the servers' ucx ports, for --transports ...,ucx)]
                       [--mode ddp|fsdp] [--nccl front-end,native] [--launcher ranks|torchrun]
                       [--local-env K=V,K=V]
      local run (one GPU per process), then the rgpu runs; writes
      OUT_DIR/MODE.json and OUT_DIR/MODE.md, each process's output in OUT_DIR/MODE-logs/
  ddp_train.py rank   one rank (environment: RANK, WORLD_SIZE, MASTER_ADDR,
      MASTER_PORT, DDP_BACKEND, DDP_STEPS, DDP_MODE); prints one JSON line.
      With DDP_MARK_STEPS=1 it marks its timed steps on stderr, for
      bench/trace_per_step.py to count the calls of a step under RGPU_TRACE=1
      (under torchrun, DDP_RANK_LOGS=DIR keeps each rank's stderr apart).
Exit status of compare: 0 when every run's losses match the local ones.
"""
import json
import os
import re
import signal
import statistics
import socket
import subprocess
import sys
import time
from pathlib import Path

STEPS = int(os.environ.get("DDP_STEPS", "60"))
TIMEOUT = float(os.environ.get("DDP_TIMEOUT", "150"))
NCCL_TRANSPORT = re.compile(r"NCCL INFO Channel \d+/\d+ : \d+\[[0-9a-f]+\] -> \d+\[[0-9a-f]+\] via (\S+)")
TOLERANCE = 1e-5  # relative; two ranks' sums do not depend on order, so runs agree to rounding


def rank_main():
    import datetime
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    backend = os.environ["DDP_BACKEND"]
    # Each rank is started seeing one GPU (CUDA_VISIBLE_DEVICES locally,
    # RGPU_DEVICES naming one server's through rgpu), or under torchrun all
    # of them, its own the one of its LOCAL_RANK.
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) if os.environ.get("DDP_TORCHRUN") else 0)
    torch.cuda.set_device(device)
    dist.init_process_group(backend, rank=rank, world_size=world, timeout=datetime.timedelta(seconds=TIMEOUT / 2))
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).to(device)
    fsdp = os.environ.get("DDP_MODE", "ddp") == "fsdp"
    if fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel
        ddp = FullyShardedDataParallel(model, device_id=device)
    else:
        ddp = DistributedDataParallel(model, device_ids=[device.index])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    data = torch.Generator().manual_seed(1000 + rank)
    inputs = torch.randn(STEPS, 256, 512, generator=data).to(device)
    targets = torch.randint(0, 10, (STEPS, 256), generator=data).to(device)
    # Each step ends in loss.item(), which waits for it: the step's time is
    # from one to the next. The median over the warm steps (the first pays
    # start-up: modules, NCCL's channels) leaves out a rank's wait for its
    # peer's start and the odd pause.
    losses, ends = [], []
    for step in range(STEPS):
        if step == 1:
            torch.cuda.synchronize()
            ends.append(time.perf_counter())
            if os.environ.get("DDP_MARK_STEPS"):
                print(f"ddp_train: steps {os.environ.get('DDP_MODE', 'ddp')}-rank{rank} {STEPS - 1} begin",
                      file=sys.stderr, flush=True)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(inputs[step]), targets[step])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step >= 1:
            ends.append(time.perf_counter())
    torch.cuda.synchronize()
    step_seconds = statistics.median(b - a for a, b in zip(ends, ends[1:]))
    if os.environ.get("DDP_MARK_STEPS"):
        print(f"ddp_train: steps {os.environ.get('DDP_MODE', 'ddp')}-rank{rank} end", file=sys.stderr, flush=True)
    # Every rank ends with the same weights when the gradients were averaged
    # (FSDP's, gathered from the shards).
    if fsdp:
        with FullyShardedDataParallel.summon_full_params(ddp):
            weights = sum(p.double().sum().item() for p in ddp.parameters())
    else:
        weights = sum(p.double().sum().item() for p in model.parameters())
    # One write: under torchrun the ranks share stdout, and print() writes
    # the line and its end separately.
    sys.stdout.write(json.dumps(dict(rank=rank, backend=backend, device=torch.cuda.get_device_name(device),
                                     losses=losses, step_seconds=step_seconds, weights=weights)) + "\n")
    sys.stdout.flush()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(label, backend, rank_envs, prefix, logs):
    """Both ranks at once; returns (results by rank, None) or (None, why)."""
    port = free_port()
    procs = []
    for rank, extra in enumerate(rank_envs):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(len(rank_envs)),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), DDP_BACKEND=backend,
                   NCCL_DEBUG=os.environ.get("NCCL_DEBUG", "INFO"), **extra)
        base = logs / f"{label}-{backend}-rank{rank}"
        with open(f"{base}.out", "w") as out, open(f"{base}.err", "w") as err:
            procs.append((subprocess.Popen(prefix + [sys.executable, os.path.abspath(__file__), "rank"], env=env,
                                           stdout=out, stderr=err, start_new_session=True), base))
    # Until all have exited, one has failed (its peer would wait for it until
    # its own timeout), or the time is up.
    deadline = time.monotonic() + TIMEOUT
    why = None
    while any(p.poll() is None for p, _ in procs) and not any(p.poll() for p, _ in procs):
        if time.monotonic() > deadline:
            why = f"timed out after {TIMEOUT:.0f} s"
            break
        time.sleep(0.2)
    for proc, _ in procs:  # a rank left waiting for a failed peer, or a hang
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    results, failed = [], []
    for proc, base in procs:
        lines = [l for l in Path(f"{base}.out").read_text(errors="replace").splitlines() if l.startswith("{")]
        if proc.returncode != 0 or not lines:
            failed.append((proc.returncode, base))
        else:
            result = json.loads(lines[-1])
            # NCCL's INFO lines name the transport of each channel ("... via P2P/CUMEM").
            result["nccl_transports"] = sorted(set(NCCL_TRANSPORT.findall(
                Path(f"{base}.err").read_text(errors="replace"))))
            results.append(result)
    if why is None and failed:
        # The rank that failed by itself, not one killed here for waiting on it.
        rc, base = sorted(failed, key=lambda f: f[0] == -signal.SIGKILL)[0]
        lines = [l for l in Path(f"{base}.err").read_text(errors="replace").splitlines() if l.strip()]
        errors = [l for l in lines if "error" in l.lower()] or lines
        why = f"{base.name} exited {rc}: " + (errors[-1][:300] if errors else "no output")
    return (results, None) if why is None else (None, why)


def merged_env(rank_envs):
    """One environment for all ranks (torchrun's): every rank's GPU listed."""
    env = {}
    for key in {k for e in rank_envs for k in e}:
        values = [e[key] for e in rank_envs if key in e]
        if key == "RGPU_DEVICES":
            env[key] = ",".join(values)
        elif key == "CUDA_VISIBLE_DEVICES":
            # Through rgpu each rank saw its one GPU as 0; together they are 0..N-1.
            env[key] = ",".join(values) if len(set(values)) == len(values) else ",".join(map(str, range(len(values))))
        else:
            env[key] = values[0]
    return env


def launch_torchrun(label, backend, rank_envs, prefix, logs):
    """All ranks by one torchrun; returns (results by rank, None) or (None, why)."""
    env = dict(os.environ, DDP_BACKEND=backend, DDP_TORCHRUN="1", NCCL_DEBUG=os.environ.get("NCCL_DEBUG", "INFO"),
               **merged_env(rank_envs))
    base = logs / f"{label}-{backend}-torchrun"
    # DDP_RANK_LOGS=DIR: each rank's stderr in a file of its own under DIR
    # (torchrun's --log-dir), for a trace per rank.
    rank_logs = ["--log-dir", os.environ["DDP_RANK_LOGS"], "--redirects", "2"] if os.environ.get("DDP_RANK_LOGS") else []
    command = prefix + [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={len(rank_envs)}",
                        "--master-addr=127.0.0.1", f"--master-port={free_port()}", *rank_logs,
                        os.path.abspath(__file__), "rank"]
    with open(f"{base}.out", "w") as out, open(f"{base}.err", "w") as err:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=err, start_new_session=True)
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None, f"timed out after {TIMEOUT:.0f} s"
    lines = [l for l in Path(f"{base}.out").read_text(errors="replace").splitlines() if l.startswith("{")]
    results = sorted((json.loads(l) for l in lines), key=lambda r: r["rank"])
    if proc.returncode != 0 or len(results) != len(rank_envs):
        errors = [l for l in Path(f"{base}.err").read_text(errors="replace").splitlines() if "error" in l.lower()]
        return None, f"{base.name} exited {proc.returncode}: " + (errors[-1][:300] if errors else "no output")
    transports = sorted(set(NCCL_TRANSPORT.findall(Path(f"{base}.err").read_text(errors="replace"))))
    for r in results:
        r["nccl_transports"] = transports
    return results, None


def max_relative_difference(a, b):
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))


def compare(argv):
    out = Path(argv[0])
    opts = dict(zip(argv[1::2], argv[2::2]))
    rgpu, devices = opts["--rgpu"], opts["--devices"].split(",")
    transports = opts.get("--transports", "shm,tcp").split(",")
    mode = opts.get("--mode", "ddp")
    os.environ["DDP_MODE"] = mode
    nccls = opts.get("--nccl", "front-end").split(",")
    start = launch_torchrun if opts.get("--launcher", "ranks") == "torchrun" else launch
    logs = out / f"{mode}-logs"
    logs.mkdir(parents=True, exist_ok=True)
    runs = []
    # --local-env K=V,K=V: the local run's NCCL set as the servers' is (their
    # --nccl-env), so that the comparison is of like transports.
    extra = dict(kv.split("=", 1) for kv in opts.get("--local-env", "").split(",") if kv)
    local_envs = [dict(CUDA_VISIBLE_DEVICES=str(r), **extra) for r in range(len(devices))]
    local, why = start("local", "nccl", local_envs, [], logs)
    runs.append(dict(label="local", backend="nccl", ranks=local, failure=why))
    ucx_devices = [d for d in opts.get("--ucx-devices", "").split(",") if d]
    if "ucx" in transports and len(ucx_devices) != len(devices):
        sys.exit("--transports ucx needs --ucx-devices: each server's ucx port, one per device")
    for t, which in [(t, n) for n in nccls for t in transports]:
        # CUDA_VISIBLE_DEVICES only for PyTorch: on this GPU host it counts the
        # host's GPUs through NVML, and must count the one rgpu GPU each rank has.
        envs = [dict(RGPU_DEVICES=d, RGPU_TRANSPORT=t, CUDA_VISIBLE_DEVICES="0",
                     **({"RGPU_NCCL": "native"} if which == "native" else {}))
                for d in (ucx_devices if t == "ucx" else devices)]
        label = f"rgpu {t}" + (", NCCL native" if which == "native" else "")
        tag = t if which == "front-end" else f"{t}-native"
        nccl, nccl_why = start(tag, "nccl", envs, [rgpu, "run", "--"], logs)
        run = dict(label=label, backend="nccl", ranks=nccl, failure=nccl_why)
        if nccl is None:
            gloo, gloo_why = start(tag, "gloo", envs, [rgpu, "run", "--"], logs)
            run = dict(label=label, backend="gloo", ranks=gloo, failure=gloo_why, nccl_failure=nccl_why)
        runs.append(run)
    ok = local is not None
    for run in runs:
        if run["ranks"] is None:
            ok = False
            continue
        run["losses"] = run["ranks"][0]["losses"]
        run["step_seconds"] = max(r["step_seconds"] for r in run["ranks"])
        run["ranks_agree"] = len({r["weights"] for r in run["ranks"]}) == 1
        ok &= run["ranks_agree"]
        if local is not None:
            run["max_loss_difference"] = max(max_relative_difference(lr["losses"], r["losses"])
                                             for lr, r in zip(local, run["ranks"]))
            run["matches_local"] = run["max_loss_difference"] <= TOLERANCE
            ok &= run["matches_local"]
    (out / f"{mode}.json").write_text(json.dumps(runs, indent=2) + "\n")
    local_step = runs[0].get("step_seconds")
    launcher = "torchrun" if start is launch_torchrun else "one launch per rank"
    md = [f"{mode.upper()} ({launcher}): {len(devices)} processes, one GPU each, {STEPS} steps (median step time); losses compared per rank and step with the "
          f"local run (relative tolerance {TOLERANCE:g})", "",
          "| run | backend | step (ms) | vs local | losses match local | ranks' weights agree | note |",
          "|---|---|---|---|---|---|---|"]
    for run in runs:
        if run["ranks"] is None:
            md.append(f"| {run['label']} | {run['backend']} | - | - | - | - | FAILED: {run['failure']} |")
            continue
        ratio = f"{run['step_seconds'] / local_step:.2f}x" if local_step else "-"
        transports = sorted({t for r in run["ranks"] for t in r["nccl_transports"]})
        note = (f"NCCL failed: {run['nccl_failure']}" if run.get("nccl_failure") else
                f"NCCL via {', '.join(transports)}" if transports else "")
        match = ("yes" if run.get("matches_local") else "**no**") + (
            f" (max rel. diff {run['max_loss_difference']:.1e})" if "max_loss_difference" in run else "")
        md.append(f"| {run['label']} | {run['backend']} | {run['step_seconds'] * 1e3:.2f} | {ratio} | {match} | "
                  f"{'yes' if run['ranks_agree'] else '**no**'} | {note.replace('|', '/')} |")
    (out / f"{mode}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank"]:
        rank_main()
    elif sys.argv[1:2] == ["compare"]:
        sys.exit(compare(sys.argv[2:]))
    else:
        sys.exit(__doc__)
