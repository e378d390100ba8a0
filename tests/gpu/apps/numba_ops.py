"""numba @cuda.jit kernels with device arrays."""
import sys

import numpy as np
from numba import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


x = np.arange(1 << 16, dtype=np.float32)
y = np.ones_like(x)
out = cuda.device_array_like(x)
saxpy[(x.size + 255) // 256, 256](2.0, cuda.to_device(x), cuda.to_device(y), out)
res = out.copy_to_host()
ok = np.allclose(res, 2 * x + 1)
print(f"saxpy sum: {float(res.sum()):.6g}")
print("RESULT PASS" if ok else "RESULT FAIL")
sys.exit(0 if ok else 1)
