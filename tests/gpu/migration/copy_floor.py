# The move's floor (run_migrate.sh): a move copies device memory through
# the client, reading from the old server and writing to the new in turn,
# so its floor is bytes / read bandwidth + bytes / write bandwidth. Prints
# both, for 1 GB of pageable memory, each the best of three.
import time

import torch

n = 1 << 30
dev = torch.device("cuda")
x = torch.ones(n // 4, device=dev)
host = torch.empty(n // 4)
best = {"read": 0.0, "write": 0.0}
for _ in range(3):
    torch.cuda.synchronize()
    t = time.perf_counter()
    host.copy_(x)
    best["read"] = max(best["read"], n / (time.perf_counter() - t))
    t = time.perf_counter()
    x.copy_(host)
    torch.cuda.synchronize()
    best["write"] = max(best["write"], n / (time.perf_counter() - t))
print(f"FLOOR read_GBps {best['read'] / 1e9:.3f} write_GBps {best['write'] / 1e9:.3f}")
