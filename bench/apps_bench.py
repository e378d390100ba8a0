"""Application timings for rgpu's GPU report, run once locally and once
through rgpu in the same suite run (tools/gpu-suite.sh compares them):
PyTorch training-step time of a CNN and a small transformer, cuBLAS SGEMM
with its pageable host<->device copies (the rCUDA paper's benchmark), and the
time of a process's first cuBLAS call, synchronising loops (a small matmul
then `.item()`; a CuPy kernel then `.get()`: per iteration, the cost a
round trip adds), and copies of 256 MB: asynchronous between page-locked
host memory and the GPU (`non_blocking=True`), synchronous from and to
pageable memory. Prints one JSON object; with the
argument first-call, only that time (run against a fresh server, it is the
cost of shipping cuBLAS's kernels there the first time). With the argument
trace-steps, run under RGPU_TRACE=1, it runs warm training steps of each
model between marker lines on stderr, for bench/trace_per_step.py to count
the calls each step forwards."""
import json
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = torch.device("cuda")
out = {}


TRACED_STEPS = 10


def traced_steps(name, step):
    """Warm steps between stderr markers, beside rgpu's trace lines."""
    step()
    torch.cuda.synchronize()
    sys.stderr.write(f"apps_bench: steps {name} {TRACED_STEPS} begin\n")
    sys.stderr.flush()
    for _ in range(TRACED_STEPS):
        step()
    torch.cuda.synchronize()
    sys.stderr.write(f"apps_bench: steps {name} end\n")
    sys.stderr.flush()


def timed(fn, repeat):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / repeat


def first_cublas_call():
    a = torch.ones(64, 64, device=dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    (a @ a).sum().item()
    return time.perf_counter() - t0


def train_step(model, data, target, loss_fn):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss_fn(model(data), target).backward()
        opt.step()
    return step


def cnn_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(128, 10)).to(dev)
    data = torch.randn(64, 3, 64, 64, device=dev)
    target = torch.randint(0, 10, (64,), device=dev)
    return train_step(model, data, target, F.cross_entropy)


def transformer_step():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, 4).to(dev)
    data = torch.randn(16, 256, 512, device=dev)
    return train_step(model, data, data, F.mse_loss)


def sgemm_with_copies(n):
    a = np.random.RandomState(0).rand(n, n).astype(np.float32)
    b = np.random.RandomState(1).rand(n, n).astype(np.float32)

    def run():
        c = torch.from_numpy(a).to(dev) @ torch.from_numpy(b).to(dev)
        return c.cpu()
    return timed(run, 3)


def item_loop_step():
    a = torch.randn(64, 64, device=dev)

    def step():
        (a @ a).sum().item()
    return step


def cupy_get_step():
    import cupy as cp
    x = cp.arange(1024, dtype=cp.float32)
    k = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * 2.0f + 1.0f", "rgpu_bench_axpb")

    def step():
        k(x)[:4].get()
    return step


def per_iteration(step, iterations):
    step()
    t0 = time.perf_counter()
    for _ in range(iterations):
        step()
    return (time.perf_counter() - t0) / iterations


def big_copies(mb=256):
    """Seconds for an upload and a download of `mb` MB: asynchronous between
    page-locked memory and the GPU (waited for at the end), and synchronous
    from and to pageable memory (what rgpu stripes over tcp), best of 3."""
    n = mb << 20
    pinned = torch.empty(n, dtype=torch.uint8).pin_memory()
    pinned.fill_(7)
    pageable = torch.full((n,), 7, dtype=torch.uint8)
    gpu = torch.empty(n, dtype=torch.uint8, device=dev)
    times = {}
    for name, dst, src, non_blocking in (("pinned_async_h2d", gpu, pinned, True), ("pinned_async_d2h", pinned, gpu, True),
                                         ("pageable_sync_h2d", gpu, pageable, False),
                                         ("pageable_sync_d2h", pageable, gpu, False)):
        best = float("inf")
        for _ in range(4):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            dst.copy_(src, non_blocking=non_blocking)
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t0)
        times[f"{name}_{mb}MB_s"] = best
    return times


LOOPS = [("item_loop", item_loop_step, 100), ("cupy_get_loop", cupy_get_step, 200)]

if sys.argv[1:] == ["trace-steps"]:
    for name, make in [("cnn", cnn_step), ("transformer", transformer_step),
                       ("item_loop", item_loop_step), ("cupy_get_loop", cupy_get_step)]:
        traced_steps(name, make())
    sys.exit(0)
out["first_cublas_call_s"] = first_cublas_call()
if sys.argv[1:] == ["first-call"]:
    json.dump(out, sys.stdout)
    print()
    sys.exit(0)
for name, make in [("cnn_step_s", cnn_step), ("transformer_step_s", transformer_step)]:
    try:
        out[name] = timed(make(), 20)
    except Exception as e:  # noqa: BLE001 - reported in the JSON
        out[name] = f"error: {type(e).__name__}"
for name, make, iterations in LOOPS:
    try:
        out[f"{name}_iteration_s"] = per_iteration(make(), iterations)
    except Exception as e:  # noqa: BLE001 - reported in the JSON
        out[f"{name}_iteration_s"] = f"error: {type(e).__name__}"
try:
    out.update(big_copies())
except Exception as e:  # noqa: BLE001 - reported in the JSON
    out["copies_256MB_s"] = f"error: {type(e).__name__}"
for n in (4096, 8192, 16384):
    try:
        out[f"sgemm_copies_{n}_s"] = sgemm_with_copies(n)
    except Exception as e:  # noqa: BLE001 - reported in the JSON
        out[f"sgemm_copies_{n}_s"] = f"error: {type(e).__name__}"
json.dump(out, sys.stdout)
print()
