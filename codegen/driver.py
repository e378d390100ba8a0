"""The driver-API half of the generator: rgpu's libcuda.so.1 glue from cuda.h.

Inputs: cuda.h and cudaProfiler.h (parsed with __CUDA_API_VERSION_INTERNAL, so
the legacy unversioned names NVIDIA still exports are declared too),
codegen/cuda_exports.txt (the dynamic symbols of NVIDIA's libcuda.so.1, read
from the toolkit's stub with `nm -D`) and codegen/cuda.toml (which exports are
hand-written in src/client/cuda/). Everything else becomes a stub returning
CUDA_ERROR_NOT_SUPPORTED.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field

from generate import CODEGEN, GenError, Decl, banner, params_decl, sort_exports, unsupported_reasons

OUT = {
    "unsupported": "src/client/cuda/generated/cuda_unsupported.cpp",
    "per_thread": "src/client/cuda/generated/cuda_per_thread.cpp",
    "map": "src/client/cuda/generated/libcuda.map",
    "proc_names": "src/client/cuda/generated/proc_names.cpp",
    "error_names": "src/client/cuda/generated/driver_error_names.cpp",
}

HEADERS = ["cuda.h", "cudaProfiler.h"]
PRELUDE = "#define __CUDA_API_VERSION_INTERNAL\n" + "".join(f"#include <{h}>\n" for h in HEADERS)


@dataclass
class DriverModel:
    exports: list[str]
    manual: list[str]
    per_thread: list[tuple[Decl, str]]
    unsupported: list[Decl]
    # cuGetProcAddress: the API name cuda.h maps to a versioned symbol, and
    # whether per-thread builds add _ptds or _ptsz.
    proc_names: list[tuple[str, str, str]]
    errors: list[tuple[str, int, str]]  # CUresult: name, value, the header's description
    reasons: dict[str, str]  # [unsupported]: why a function cannot work remotely


def build_driver_model(parser) -> DriverModel:
    exports = [l.strip() for l in (CODEGEN / "cuda_exports.txt").read_text().splitlines()
               if l.strip() and not l.startswith("#")]
    if len(set(exports)) != len(exports):
        raise GenError("cuda_exports.txt lists a name twice")
    with open(CODEGEN / "cuda.toml", "rb") as f:
        conf = tomllib.load(f)
    if set(conf) - {"manual", "unsupported"}:
        raise GenError(f"cuda.toml: unknown tables {sorted(set(conf) - {'manual', 'unsupported'})}")
    manual = list(conf.get("manual", {}).get("names", []))
    if len(set(manual)) != len(manual):
        raise GenError("cuda.toml lists a manual name twice")
    for n in manual:
        if n not in exports:
            raise GenError(f"cuda.toml names {n}, which libcuda.so.1 does not export")

    reasons = unsupported_reasons(conf, set(exports), set(manual), "cuda.toml")

    tu = parser.parse(PRELUDE)
    decls = parser.functions(tu, set(HEADERS))
    per_thread, unsupported = sort_exports(exports, set(manual), decls.get, decls, "CUresult", "cuda.toml")
    return DriverModel(exports, manual, per_thread, unsupported, proc_names(parser, exports),
                       error_descriptions(parser, tu), reasons)


def error_descriptions(parser, tu) -> list[tuple[str, int, str]]:
    ci = parser.ci
    for c in tu.cursor.walk_preorder():
        if c.kind == ci.CursorKind.ENUM_DECL and c.spelling == "cudaError_enum" and c.is_definition():
            return [(e.spelling, e.enum_value, " ".join((e.brief_comment or e.spelling).split()))
                    for e in c.get_children() if e.kind == ci.CursorKind.ENUM_CONSTANT_DECL]
    raise GenError("enum cudaError_enum not found in cuda.h")


MAPPING = re.compile(r"^\s*#define\s+(cu\w+)\s+(?:__CUDA_API_(PTDS|PTSZ)\((cu\w+)\)|(cu\w+))\s*$")


def proc_names(parser, exports) -> list[tuple[str, str, str]]:
    """The `#define cuX cuX_vN` / `__CUDA_API_PTSZ(...)` lines of cuda.h, first of each name."""
    found: dict[str, tuple[str, str]] = {}
    for line in (parser.cuda_inc / "cuda.h").read_text().splitlines():
        m = MAPPING.match(line)
        # Lines naming a _ptsz/_ptds symbol itself are cuda.h's internal redirects.
        if m and m.group(1) not in found and not re.search(r"_pt(sz|ds)$", m.group(3) or m.group(4)):
            found[m.group(1)] = (m.group(3) or m.group(4), (m.group(2) or "").lower())
    result = []
    for api, (symbol, per_thread) in sorted(found.items()):
        if symbol not in exports:
            raise GenError(f"cuda.h maps {api} to {symbol}, which libcuda.so.1 does not export")
        result.append((api, symbol, per_thread))
    return result


def includes() -> str:
    return PRELUDE.rstrip()


def emit_unsupported(m: DriverModel) -> str:
    out = [banner(), "// Every exported driver function rgpu does not implement: logs its name once",
           "// and returns CUDA_ERROR_NOT_SUPPORTED.", includes(), "",
           '#include "client/cuda/driver_errors.hpp"', ""]
    for d in m.unsupported:
        out.append(f'extern "C" CUresult CUDAAPI {d.name}({params_decl(d, names=False) or "void"}) {{ '
                   f'return rgpu::client::driver_unsupported("{d.name}"); }}')
    out.append("")
    return "\n".join(out)


def emit_per_thread(m: DriverModel) -> str:
    out = [banner(), "// The per-thread default stream entry points of implemented driver functions",
           "// run the plain function with stream 0 meaning the calling thread's stream.",
           includes(), "", '#include "client/core/per_thread_stream.hpp"', ""]
    for d, base in m.per_thread:
        args = ", ".join(p.name for p in d.params)
        out += [f'extern "C" CUresult CUDAAPI {d.name}({params_decl(d) or "void"}) {{',
                "  rgpu::client::PerThreadStreamScope scope;",
                f"  return {base}({args});", "}", ""]
    return "\n".join(out)


def emit_map(m: DriverModel) -> str:
    # NVIDIA's libcuda.so.1 versions nothing; programs linked against it hold
    # unversioned references, which bind to this node's default versions. The
    # node is named because it is linked beside libcudart.map (one library
    # serves both APIs, see CMakeLists.txt), whose `local: *` hides the rest.
    lines = [banner("/*").rstrip(),
             "/* Every symbol NVIDIA's libcuda.so.1 exports. */",
             "libcuda.so.1 {", "  global:"]
    lines += [f"    {n};" for n in m.exports]
    lines += ["};", ""]
    return "\n".join(lines)


LIMITS = [
    "Contexts are emulated: every context of a device is its primary context, and the current "
    "context is the runtime's current device (so cuCtxGetCurrent is never NULL once CUDA is "
    "initialised). cuCtxCreate retains the primary context and pushes it, cuCtxDestroy releases it; "
    "a release frees nothing (memory goes with cuMemFree, cuDevicePrimaryCtxReset or the end of the "
    "session). cuDevicePrimaryCtxSetFlags records the flags without applying them. cuCtxCreate_v4 "
    "with CUctxCreateParams returns CUDA_ERROR_NOT_SUPPORTED.",
    "cuModuleUnload and cuLibraryUnload forget the handles; the server frees the module when the "
    "session ends. JIT options are accepted and ignored (the server's driver compiles PTX).",
    "Libraries are modules loaded on the current device when the library is loaded. "
    "CU_LIBRARY_BINARY_IS_PRESERVED is accepted (rgpu keeps its own copy of the image); "
    "CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE returns CUDA_ERROR_NOT_SUPPORTED.",
    "cuLaunchKernelEx forwards its launch attributes, events translated and an access policy "
    "window checked to lie in the session's memory; the graph-only "
    "CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE returns CUDA_ERROR_NOT_SUPPORTED.",
    "A library is loaded on the current device, and on another device (from a copy of its image "
    "the client keeps) when one of its kernels or variables is first used there. "
    "cuLibraryEnumerateKernels hands out new handles at each call.",
    "cuLogs* report rgpu's own error log: the errors and warnings this process's rgpu client logs "
    "(unsupported calls, refused arguments, lost servers), at its log level (RGPU_LOG_LEVEL); the "
    "remote driver's log is about the worker's calls and is not relayed.",
    "cuGetProcAddress returns the binding cuda.h of this toolkit gives each name, whatever "
    "cudaVersion asks for.",
    "cuMemsetD16/D32 whose value's bytes differ copy a host pattern (same result, more traffic).",
    "cuPointerGetAttribute answers context, memory type, device and host pointer, device ordinal "
    "and range; page-locked host memory has no device pointer (the GPU cannot reach client "
    "memory); other attributes return CUDA_ERROR_NOT_SUPPORTED.",
    "CUDA arrays take single-plane formats only (1, 2 or 4 channels of 8/16/32-bit integers, "
    "half or float); sparse and deferred-mapping arrays return CUDA_ERROR_NOT_SUPPORTED, so the "
    "plane, sparse-property and memory-requirement queries answer CUDA_ERROR_INVALID_VALUE as CUDA "
    "does for such arrays. Mipmapped-array levels count for copies and textures but are not freed on "
    "their own.",
    "Texture and surface references are forwarded to the server's driver (deprecated: nvcc has "
    "emitted none since CUDA 12, so cuModuleGetTexRef/SurfRef find none in current modules).",
    "cuPointerGetAttribute answers context, memory type, device and host pointer, device ordinal, "
    "range and whether memory is managed; page-locked host memory has a device pointer only once "
    "mapped (shm, cuMemHostGetDevicePointer); other attributes return CUDA_ERROR_NOT_SUPPORTED.",
    "CUDA arrays (cuArray*, CU_MEMORYTYPE_ARRAY copies) are not supported.",
    "The legacy unversioned functions with 32-bit device pointers (cuMemAlloc, cuMemcpyHtoD...) are "
    "unsupported; programs built with this toolkit bind the _v2 names.",
    "Peers: GPUs of one server are peers as its driver says; GPUs of different servers never are, "
    "and cuMemcpyPeer between them goes through client memory (after the stream's earlier work).",
    "Mapped host memory (CU_MEMHOSTALLOC_DEVICEMAP, cuMemHostGetDevicePointer) and managed memory "
    "(cuMemAllocManaged) need every server on the application's host (the shm transport): the "
    "memory is shared memory the GPU maps in place (managed memory at the same address on host and "
    "device, coherent at all times; nothing migrates, advice and prefetches are recorded). Elsewhere "
    "they return CUDA_ERROR_NOT_SUPPORTED. cuMemHostRegister with DEVICEMAP is not supported.",
    "Virtual memory management: reservations live on the current device's server and map "
    "allocations of that server's GPUs; only read-write ranges take part in copies; "
    "cuMemAddressReserve ignores the address hint. Shareable handles (POSIX fds, fabric handles), "
    "cuMemGetHandleForAddressRange (dma-buf fds) and multicast objects are unsupported: a file "
    "descriptor of the server cannot reach the application.",
    "IPC handles name memory and events of one server: opening one on another server's GPU, or a "
    "forged one, returns CUDA_ERROR_INVALID_HANDLE.",
    "Graphs live on one device (its primary context: a node's CUcontext is not looked at); copy nodes, "
    "and copies queued during a capture, cannot involve host memory (CU_MEMORYTYPE_HOST), nor can a "
    "captured cuMemsetD16/D32 whose value's bytes differ (it is a copy of the pattern from the host); "
    "kernel nodes take kernelParams, not `extra`.",
]


def emit_coverage(m: DriverModel) -> str:
    status = {n: ("implemented", "hand-written (src/client/cuda)") for n in m.manual}
    for d, base in m.per_thread:
        status[d.name] = ("implemented", f"per-thread default stream variant of {base}")
    exported = set(m.exports)
    for d in m.unsupported:
        newer = [f"{d.name}_v{v}" for v in range(2, 10) if f"{d.name}_v{v}" in exported]
        why = (f"legacy binding, superseded by {newer[-1]}" if newer
               else m.reasons.get(d.name, "not implemented yet"))
        status[d.name] = ("unsupported", f"{why}: returns CUDA_ERROR_NOT_SUPPORTED, logs its name once")
    done = [n for n in m.exports if status[n][0] != "unsupported"]
    lines = ["", "# CUDA driver coverage", "",
             f"{len(done)} of {len(m.exports)} functions exported by libcuda.so.1 are implemented "
             f"({100 * len(done) / len(m.exports):.1f} %).", "",
             "Limits of the implemented ones:", "",
             *[f"- {limit}" for limit in LIMITS], "",
             "| function | status | how |", "|---|---|---|"]
    lines += [f"| `{n}` | {status[n][0]} | {status[n][1]} |" for n in sorted(m.exports, key=str.lower)]
    return "\n".join(lines) + "\n"


def emit_proc_names(m: DriverModel) -> str:
    out = [banner(), "// The symbol cuda.h binds each API name to, for cuGetProcAddress.",
           '#include "client/cuda/proc_names.hpp"', "", "namespace rgpu::client {", "",
           "const ProcName kProcNames[] = {"]
    out += [f'    {{"{a}", "{s}", "{p}"}},' for a, s, p in m.proc_names]
    out += ["};", f"const size_t kProcNameCount = {len(m.proc_names)};", "",
            "}  // namespace rgpu::client", ""]
    return "\n".join(out)


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def emit_error_names(m: DriverModel) -> str:
    out = [banner(), "// Each CUresult's identifier and the description cuda.h documents for it.",
           '#include "client/cuda/driver_error_names.hpp"', "", "namespace rgpu::client {", "",
           "const DriverErrorName* driver_error_name(CUresult e) {",
           "  static const DriverErrorName names[] = {"]
    seen = set()
    for name, value, text in m.errors:
        if value not in seen:
            seen.add(value)
            out.append(f"      {{{name}, {c_string(name)}, {c_string(text)}}},")
    out += ["  };", "  for (const auto& n : names)", "    if (n.value == e) return &n;",
            "  return nullptr;", "}", "", "}  // namespace rgpu::client", ""]
    return "\n".join(out)


def render_driver(m: DriverModel) -> dict[str, str]:
    return {OUT["error_names"]: emit_error_names(m), OUT["proc_names"]: emit_proc_names(m), OUT["unsupported"]: emit_unsupported(m), OUT["per_thread"]: emit_per_thread(m),
            OUT["map"]: emit_map(m)}
