"""GPU memory as the driver accounts it, read without a CUDA context of our
own: NVML's used bytes of a GPU (libnvidia-ml through ctypes) and the
processes on it (nvidia-smi). None where the machine has no NVIDIA driver.

Why the soak needs this beside a reading through a session: the driver
places small per-context objects of many processes together in 2 MiB pages
and frees a page only when its last user exits. A reading taken while some
processes live (the daemon's idle workers, the reading session's worker)
depends on where earlier, concurrent contexts put theirs, so it can be a
few pages lower after many sessions with nothing leaked. With only the same
processes on the GPU as before the soak, the used bytes must be the same.
"""
import ctypes
import shutil
import subprocess


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def _nvml():
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    return lib if lib.nvmlInit_v2() == 0 else None


def used_bytes(index=0):
    """Bytes in use on GPU `index`, or None without NVML."""
    lib = _nvml()
    if lib is None:
        return None
    device = ctypes.c_void_p()
    memory = _Memory()
    ok = (lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(device)) == 0
          and lib.nvmlDeviceGetMemoryInfo(device, ctypes.byref(memory)) == 0)
    lib.nvmlShutdown()
    return memory.used if ok else None


def processes(index=0):
    """Process ids on GPU `index` (compute contexts), or None without nvidia-smi."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader", "-i", str(index)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return sorted(int(p) for p in out.stdout.split() if p.isdigit())


def reading(index=0):
    """Used bytes and the processes on the GPU, or None off a GPU machine."""
    used, pids = used_bytes(index), processes(index)
    return None if used is None or pids is None else dict(used=used, processes=pids)
