"""NCCL (NVIDIA's collective library, through PyTorch's process group) with a
single-rank communicator: all-reduce, broadcast, all-gather, reduce-scatter
and a barrier on one GPU. Several ranks on several GPUs are the multi-GPU
part's (bench/ddp_train.py). Prints rounded results and RESULT PASS when
every check holds."""
import os
import tempfile

import torch
import torch.distributed as dist

from _checks import check, finish, r, step

dev = torch.device("cuda", 0)
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1, device_id=dev)
check("backend", dist.get_backend(), dist.get_backend() == "nccl")


def all_reduce():
    x = torch.arange(1 << 20, device=dev, dtype=torch.float32)
    want = x.sum().item()
    dist.all_reduce(x, op=dist.ReduceOp.SUM)
    check("all_reduce", r(x.sum()), x.sum().item() == want)


def broadcast():
    x = torch.full((4096,), 3.0, device=dev)
    dist.broadcast(x, src=0)
    check("broadcast", r(x.sum()), x.sum().item() == 3.0 * 4096)


def all_gather():
    x = torch.arange(1000, device=dev, dtype=torch.float64)
    out = torch.empty(1000, device=dev, dtype=torch.float64)
    dist.all_gather_into_tensor(out, x)
    check("all_gather", r(out.sum()), torch.equal(out, x))


def reduce_scatter():
    x = torch.linspace(0, 1, 8192, device=dev)
    out = torch.empty(8192, device=dev)
    dist.reduce_scatter_tensor(out, x)
    check("reduce_scatter", r(out.sum()), torch.equal(out, x))


def barrier():
    dist.barrier()
    torch.cuda.synchronize()
    check("barrier", "done")


for name, fn in [("all_reduce", all_reduce), ("broadcast", broadcast), ("all_gather", all_gather),
                 ("reduce_scatter", reduce_scatter), ("barrier", barrier)]:
    step(name, fn)
dist.destroy_process_group()
finish()
