"""CuPy (which carries NVIDIA's runtime statically): elementwise, reductions,
RawKernel, matmul (cuBLAS), FFT (cuFFT), random (cuRAND), linalg (cuSOLVER),
sort. Prints rounded results and RESULT PASS when every check holds."""
import cupy as cp
import numpy as np

from _checks import check, finish, r, step

check("device count", cp.cuda.runtime.getDeviceCount(), cp.cuda.runtime.getDeviceCount() >= 1)


def elementwise():
    x = cp.arange(1 << 20, dtype=cp.float32)
    check("elementwise", r(cp.sin(x * 2 + 1).sum()))
    check("reduction", int(cp.ones(1000, dtype=cp.int64).sum()), int(cp.ones(1000, dtype=cp.int64).sum()) == 1000)


def raw_kernel():
    add = cp.RawKernel(r'''
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}''', "add")
    a = cp.arange(1024, dtype=cp.float32)
    c = cp.empty_like(a)
    add((4,), (256,), (a, a, c, cp.int32(1024)))
    check("raw kernel", float(c.sum()), float(c.sum()) == 2 * float(a.sum()))


def host(seed):
    return np.random.RandomState(seed)


def matmul():
    rs = host(0)
    ma = rs.randn(256, 256).astype(np.float32)
    mb = rs.randn(256, 256).astype(np.float32)
    mc = cp.asnumpy(cp.asarray(ma) @ cp.asarray(mb))
    check("matmul", r(mc.sum()), np.allclose(mc, ma @ mb, atol=1e-3))


def fft():
    sig = host(1).randn(4096)
    f = cp.asnumpy(cp.fft.fft(cp.asarray(sig)))
    check("fft", r(np.abs(f).sum()), np.allclose(f, np.fft.fft(sig), atol=1e-6))


def random():
    u = cp.random.default_rng(1).random(1 << 20)
    check("random mean", r(u.mean(), 2), abs(float(u.mean()) - 0.5) < 0.01)


def linalg():
    ma = host(2).randn(256, 256)
    spd = ma @ ma.T + 256 * np.eye(256)
    rhs = host(3).randn(256)
    sol = cp.asnumpy(cp.linalg.solve(cp.asarray(spd), cp.asarray(rhs)))
    check("linalg solve", r(sol.sum()), np.allclose(spd @ sol, rhs, atol=1e-6))
    check("cholesky", r(np.trace(cp.asnumpy(cp.linalg.cholesky(cp.asarray(spd))))))


def sort():
    perm = host(4).permutation(1000)
    check("sort", cp.asnumpy(cp.sort(cp.asarray(perm)))[:5].tolist())


for name, part in [("elementwise", elementwise), ("raw kernel", raw_kernel), ("matmul", matmul), ("fft", fft),
                   ("random", random), ("linalg", linalg), ("sort", sort)]:
    step(name, part)
cp.cuda.Device().synchronize()
finish()
