"""A Python program using CUDA through ctypes, as frameworks do underneath:
cudaMalloc, cudaMemcpy both ways, cudaMemset, cudaFree on rgpu's libcudart.so.13
(found by name, as `rgpu run` set it up). Prints RESULT PASS or RESULT FAIL."""
import ctypes
import sys

HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
rt.cudaMemset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
rt.cudaGetErrorString.restype = ctypes.c_char_p


def check(status, what):
    if status != 0:
        print(f"{what}: {rt.cudaGetErrorString(status).decode()}\nRESULT FAIL")
        sys.exit(1)


count = ctypes.c_int()
check(rt.cudaGetDeviceCount(ctypes.byref(count)), "cudaGetDeviceCount")
n = 3 << 20  # several pipeline blocks
pattern = bytes((i * 7 + 3) % 251 for i in range(n))
device = ctypes.c_void_p()
check(rt.cudaMalloc(ctypes.byref(device), n), "cudaMalloc")
check(rt.cudaMemcpy(device, pattern, n, HOST_TO_DEVICE), "cudaMemcpy to the device")
back = ctypes.create_string_buffer(n)
check(rt.cudaMemcpy(back, device, n, DEVICE_TO_HOST), "cudaMemcpy from the device")
check(rt.cudaMemset(device, 0x5A, 4096), "cudaMemset")
head = ctypes.create_string_buffer(8192)
check(rt.cudaMemcpy(head, device, 8192, DEVICE_TO_HOST), "cudaMemcpy of the set bytes")
check(rt.cudaFree(device), "cudaFree")
ok = back.raw == pattern and head.raw[:4096] == b"\x5a" * 4096 and head.raw[4096:] == pattern[4096:8192]
print(f"devices={count.value} bytes={n} " + ("RESULT PASS" if ok else "RESULT FAIL: the bytes differ"))
sys.exit(0 if ok else 1)
