# numba @cuda.jit kernels through the driver API (cuInit, contexts, modules
# loaded from the PTX or cubin numba builds, cuLaunchKernel, cuMemAlloc,
# copies): an elementwise kernel, a shared-memory block reduction with
# atomics, and a kernel on a stream. Results checked on the host; the output
# is deterministic so a local run and a run through rgpu compare equal.
import sys

import numpy as np

# numba-cuda on the GPU machine still calls np.row_stack, which NumPy 2.5
# removed (np.vstack is the same function); without it no kernel compiles,
# locally or through rgpu.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda, float32, int64  # noqa: E402


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sums(values, total):
    tile = cuda.shared.array(256, dtype=int64)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tile[t] = values[i] if i < values.size else 0
    cuda.syncthreads()
    step = 128
    while step > 0:
        if t < step:
            tile[t] += tile[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(total, 0, tile[0])


@cuda.jit
def scale_in_place(data, factor):
    i = cuda.grid(1)
    if i < data.size:
        data[i] = data[i] * factor


def main():
    failures = 0
    threads = 256
    n = 100003
    blocks = (n + threads - 1) // threads
    x = (np.arange(n) % 1000).astype(np.float32)
    y = (np.arange(n) * 7 % 513).astype(np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array(n, dtype=np.float32)
    axpy[blocks, threads](float32(2.5), d_x, d_y, d_out)
    out = d_out.copy_to_host()
    ok = np.array_equal(out, np.float32(2.5) * x + y)
    failures += not ok
    print(f"axpy over {n} elements: {'ok' if ok else 'WRONG'}")

    values = (np.arange(n, dtype=np.int64) * 37) % 1001 - 500
    d_total = cuda.to_device(np.zeros(1, dtype=np.int64))
    block_sums[blocks, threads](cuda.to_device(values), d_total)
    total = int(d_total.copy_to_host()[0])
    ok = total == int(values.sum())
    failures += not ok
    print(f"shared-memory reduction: {total} ({'ok' if ok else 'WRONG'})")

    stream = cuda.stream()
    data = np.arange(1 << 16, dtype=np.float32)
    d_data = cuda.to_device(data, stream=stream)
    scale_in_place[data.size // threads, threads, stream](d_data, float32(0.5))
    back = d_data.copy_to_host(stream=stream)
    stream.synchronize()
    ok = np.array_equal(back, data * np.float32(0.5))
    failures += not ok
    print(f"kernel on a stream: {'ok' if ok else 'WRONG'}")

    print(f"RESULT {'FAIL' if failures else 'PASS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
