"""torch.compile (Inductor, Triton kernels through the driver API) on the GPU."""
import sys

import torch

dev = torch.device("cuda")


@torch.compile
def fused(x, y):
    return torch.nn.functional.gelu(x * y + 1.0).sum(dim=-1)


x = torch.linspace(-2, 2, 4096 * 64, device=dev).reshape(64, 4096)
y = torch.linspace(1, 3, 4096 * 64, device=dev).reshape(64, 4096)
out = fused(x, y)
ref = torch.nn.functional.gelu(x * y + 1.0).sum(dim=-1)
ok = torch.allclose(out, ref, rtol=1e-4, atol=1e-2)
print(f"compiled sum: {float(out.sum()):.5g}")
print("RESULT PASS" if ok else "RESULT FAIL")
sys.exit(0 if ok else 1)
