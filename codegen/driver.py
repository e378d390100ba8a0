"""The driver-API half of the generator: rgpu's libcuda.so.1 glue from cuda.h.

Inputs: cuda.h and cudaProfiler.h (parsed with __CUDA_API_VERSION_INTERNAL, so
the legacy unversioned names NVIDIA still exports are declared too),
codegen/cuda_exports.txt (the dynamic symbols of NVIDIA's libcuda.so.1, read
from the toolkit's stub with `nm -D`) and codegen/cuda.toml (which exports are
hand-written in src/client/cuda/, which are forwarded, and why some cannot be).
Legacy names whose newer version rgpu implements become wrappers of it (see
legacy_binding). Everything else becomes a stub returning
CUDA_ERROR_NOT_SUPPORTED.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from generate import (CODEGEN, DRIVER_KINDS, Decl, Forward, GenError, banner, is_graphics_interop,
                      check_forward, keeping_answer, params_decl, run_returning, sort_exports)

OUT = {
    "unsupported": "src/client/cuda/generated/cuda_unsupported.cpp",
    "per_thread": "src/client/cuda/generated/cuda_per_thread.cpp",
    "map": "src/client/cuda/generated/libcuda.map",
    "proc_names": "src/client/cuda/generated/proc_names.cpp",
    "error_names": "src/client/cuda/generated/driver_error_names.cpp",
    "forwarded": "src/client/cuda/generated/cuda_forwarded.cpp",
    "legacy": "src/client/cuda/generated/cuda_legacy.cpp",
}

HEADERS = ["cuda.h", "cudaProfiler.h"]
PRELUDE = "#define __CUDA_API_VERSION_INTERNAL\n" + "".join(f"#include <{h}>\n" for h in HEADERS)


@dataclass
class Legacy:
    """A legacy export wrapping its newer version: same parameters, or 32-bit
    sizes where the newer one has 64-bit ones (`narrowed`: the output
    parameters whose value must fit)."""
    decl: Decl
    target: Decl
    narrowed: list[str]


@dataclass
class DriverModel:
    exports: list[str]
    manual: list[str]
    forwards: list[Forward]
    legacy: list[Legacy]
    per_thread: list[tuple[Decl, str]]
    unsupported: list[Decl]
    reasons: dict[str, str]  # why an unsupported export cannot be implemented
    # cuGetProcAddress: the API name cuda.h maps to a versioned symbol, and
    # whether per-thread builds add _ptds or _ptsz.
    proc_names: list[tuple[str, str, str]]
    errors: list[tuple[str, int, str]]  # CUresult: name, value, the header's description


def build_driver_model(parser, first_op: int) -> DriverModel:
    exports = [l.strip() for l in (CODEGEN / "cuda_exports.txt").read_text().splitlines()
               if l.strip() and not l.startswith("#")]
    if len(set(exports)) != len(exports):
        raise GenError("cuda_exports.txt lists a name twice")
    with open(CODEGEN / "cuda.toml", "rb") as f:
        conf = tomllib.load(f)
    tables = {"manual", "forward", "unsupported"}
    if set(conf) - tables:
        raise GenError(f"cuda.toml: unknown tables {sorted(set(conf) - tables)}")
    manual = list(conf.get("manual", {}).get("names", []))
    forward_specs: dict = conf.get("forward", {})
    reasons: dict = conf.get("unsupported", {})
    if len(set(manual)) != len(manual):
        raise GenError("cuda.toml lists a manual name twice")
    for n in manual + list(forward_specs) + list(reasons):
        if n not in exports:
            raise GenError(f"cuda.toml names {n}, which libcuda.so.1 does not export")
    twice = (set(manual) & set(forward_specs)) | ((set(manual) | set(forward_specs)) & set(reasons))
    if twice:
        raise GenError(f"cuda.toml lists {sorted(twice)} in more than one table")

    tu = parser.parse(PRELUDE)
    decls = parser.functions(tu, set(HEADERS))
    names = proc_names(parser, exports)
    # The server includes cuda.h as applications do: a forwarded name must be
    # the symbol its API name binds to there.
    renamed = {api: symbol for api, symbol, _ in names if api != symbol}
    forwards = []
    for i, (name, spec) in enumerate(forward_specs.items()):
        if name in renamed:
            raise GenError(f"cuda.toml forwards {name}, which cuda.h renames to {renamed[name]}")
        if name not in decls:
            raise GenError(f"forward function {name} is not declared in {', '.join(HEADERS)}")
        forwards.append(check_forward(decls[name], spec, first_op + i, "CUresult", "cuda.toml",
                                      DRIVER_KINDS))
    implemented = set(manual) | set(forward_specs)
    legacy, legacy_reasons = legacy_bindings(exports, implemented, decls)
    if set(legacy_reasons) & set(reasons):
        raise GenError(f"cuda.toml gives reasons for {sorted(set(legacy_reasons) & set(reasons))}, "
                       f"legacy bindings with reasons of their own")
    per_thread, unsupported = sort_exports(exports, implemented | {l.decl.name for l in legacy},
                                           decls.get, decls, "CUresult", "cuda.toml")
    for n in reasons:
        if n not in {d.name for d in unsupported}:
            raise GenError(f"cuda.toml gives a reason for {n}, which is implemented")
    return DriverModel(exports, manual, forwards, legacy, per_thread, unsupported,
                       {**legacy_reasons, **reasons}, names, error_descriptions(parser, tu))


def scalar(t) -> str:
    return t.get_canonical().kind.name


def legacy_bindings(exports, implemented, decls) -> tuple[list[Legacy], dict[str, str]]:
    """Each export X not implemented whose newest implemented X_vN takes the
    same parameters, or wider integers in the same places, becomes a wrapper
    of X_vN. One whose parameters hold a 32-bit device address
    (CUdeviceptr_v1) or a legacy struct gets a reason instead."""
    exported = set(exports)
    legacy, reasons = [], {}
    for name in exports:
        if name in implemented or name not in decls:
            continue
        newer = [f"{name}_v{v}" for v in range(9, 1, -1) if f"{name}_v{v}" in exported]
        targets = [n for n in newer if n in implemented]
        for target in targets:
            binding = legacy_binding(decls[name], decls[target])
            if binding is not None:
                legacy.append(binding)
                break
        else:
            if targets and any("CUdeviceptr_v1" in p.type for p in decls[name].params):
                reasons[name] = (f"legacy 32-bit device address (CUdeviceptr_v1): the addresses of a "
                                 f"64-bit process do not fit; {targets[0]} is implemented")
            elif targets:
                reasons[name] = (f"legacy binding whose parameters differ from {targets[0]}'s "
                                 f"(which is implemented) beyond integer widths")
    return legacy, reasons


WIDE = {"ULONG", "ULONGLONG"}


def legacy_binding(old: Decl, new: Decl) -> Legacy | None:
    if len(old.params) != len(new.params) or any("CUdeviceptr_v1" in p.type for p in old.params):
        return None
    narrowed = []
    for a, b in zip(old.params, new.params):
        if a.type == b.type:
            continue
        if scalar(a.ctype) == "UINT" and scalar(b.ctype) in WIDE:
            continue  # an input widens losslessly
        if (scalar(a.ctype) == "POINTER" and scalar(b.ctype) == "POINTER"
                and scalar(a.ctype.get_pointee()) == "UINT" and scalar(b.ctype.get_pointee()) in WIDE
                and not a.ctype.get_pointee().is_const_qualified()):
            narrowed.append(a.name)
            continue
        return None
    return Legacy(old, new, narrowed)


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


def address(a) -> str:
    """A device_ptr parameter as the uint64_t the wire carries."""
    n = a.p.name
    return f"static_cast<uint64_t>({n})" if a.p.type == "CUdeviceptr" else f"reinterpret_cast<uint64_t>({n})"


def emit_forwarded(m: DriverModel) -> str:
    out = [banner(), "// Client stubs of the forwarded driver calls: check and resolve handles,",
           "// encode, send to the chosen server, decode the outputs.", includes(), "",
           "#include <algorithm>", "#include <cstring>", "",
           '#include "client/core/api_guard.hpp"', '#include "client/core/call.hpp"',
           '#include "client/core/context_constants.hpp"', '#include "client/core/function_attribute_cache.hpp"',
           '#include "client/core/memory_map.hpp"',
           '#include "client/cuda/driver_errors.hpp"', '#include "client/cuda/module_handles.hpp"',
           '#include "client/cuda/primary_context.hpp"', '#include "client/cuda/vmm_handles.hpp"',
           '#include "protocol/generated/ops_generated.hpp"',
           "", "using namespace rgpu::client;", ""]
    for f in m.forwards:
        pre = ["KeepLastError keep;"]
        for a in f.args:
            n = a.p.name
            if a.kind in ("out", "in", "out_string", "in_string", "inout", "out_bytes", "in_bytes",
                          "buffer_size") and not a.optional:
                pre.append(f"if (!{n}) return CUDA_ERROR_INVALID_VALUE;")
            elif a.kind == "in_array":
                pre.append(f"int64_t {n}_count = std::max<int64_t>(static_cast<int64_t>({a.len_param}) - "
                           f"{a.less}, 0);")
                pre.append(f"if ({n}_count > {a.max} || (!{n} && {n}_count)) return CUDA_ERROR_INVALID_VALUE;")
        for a in f.args:
            if a.kind in ("out_buffer", "in_buffer"):
                pre.append(f"if ({a.p.name} && *{a.len_param} > {a.max}) "
                           f"return rgpu::client::driver_refused(\"{f.name}\", \"a value larger than {a.max} bytes\");")
        pre.append("if (CUresult e = driver_ready()) return e;")
        for a in f.args:
            n = a.p.name
            if a.kind == "device_ptr":
                # The address names its device: the allocation holding it.
                pre.append(f"auto {n}_range = MemoryMap::get().find_device({address(a)});")
                pre.append(f"if (!{n}_range) return CUDA_ERROR_INVALID_VALUE;")
            elif a.kind in ("vmm_handle", "multicast"):
                pre.append(f"int {n}_device;")
                pre.append(f"uint64_t {n}_remote_handle;")
                pre.append(f"if (!vmm_handle_remote({n}, {str(a.kind == 'multicast').lower()}, &{n}_device, "
                           f"&{n}_remote_handle)) return CUDA_ERROR_INVALID_VALUE;")
            if a.kind in ("function", "module"):
                pre.append(f"auto* {n}_object = DriverHandles::get().find({n});")
                pre.append(f"if (!{n}_object) return CUDA_ERROR_INVALID_HANDLE;")
            elif a.kind == "context":
                pre.append(f"int {n}_device = context_or_current_device({n});")
                pre.append(f"if ({n}_device < 0) return CUDA_ERROR_INVALID_CONTEXT;")
        body = [f"Call call(rgpu::proto::kOp_{f.name});"]
        r = f.routing
        device_of = {"device": "{n}", "function": "{n}_object->module->device",
                     "module": "{n}_object->device", "context": "{n}_device",
                     "device_ptr": "{n}_range->device", "vmm_handle": "{n}_device", "multicast": "{n}_device"}
        if r is None:
            body.append("if (cudaError_t e = call.to_current_device()) return e;")
        elif r.kind in device_of:
            body.append(f"int32_t {r.p.name}_remote;")
            body.append(f"if (cudaError_t e = call.to_device({device_of[r.kind].format(n=r.p.name)}, "
                        f"&{r.p.name}_remote)) return e;")
        else:
            handle = "cudaStream_t" if r.kind == "stream" else "cudaEvent_t"
            body.append(f"uint64_t {r.p.name}_remote;")
            body.append(f"if (cudaError_t e = call.to_{r.kind}(reinterpret_cast<{handle}>({r.p.name}), "
                        f"&{r.p.name}_remote)) return e;")
        for a in f.args:
            if a.kind == "context" and a is not r:
                # CUDA_ERROR_INVALID_CONTEXT: the handle is of another device.
                body.append(f"if ({a.p.name}_device != call.device_index()) "
                            f"return cudaErrorDeviceUninitialized;")
            elif a.kind in ("device_ptr", "vmm_handle", "multicast") and a is not r:
                device = device_of[a.kind].format(n=a.p.name)
                body.append(f"if (!same_server({device}, call.device_index())) return cudaErrorInvalidValue;")
        if f.quiet:
            body.append("call.quiet();")
        puts = []
        for a in f.args:
            n = a.p.name
            if a.kind == "value":
                puts.append(f".put({n})")
            elif a.kind in ("device", "stream", "event"):
                puts.append(f".put({n}_remote)")
            elif a.kind == "function":
                puts.append(f".put<uint64_t>({n}_object->kernel.function)")
            elif a.kind == "module":
                puts.append(f".put<uint64_t>({n}_object->remote)")
            elif a.kind == "in_string":
                puts.append(f".put_string({n})")
            elif a.kind in ("in", "inout"):
                puts.append(f".put(*{n})")
            elif a.kind == "device_ptr":
                puts.append(f".put<uint64_t>({address(a)})")
            elif a.kind in ("vmm_handle", "multicast"):
                puts.append(f".put<uint64_t>({n}_remote_handle)")
            elif a.kind == "in_array":
                # Whether the array was given: a driver may refuse a null one even of no elements
                # (cuTensorMapEncodeTiled's globalStrides at rank 1).
                puts.append(f".put<uint8_t>({n} != nullptr)"
                            f".put_bytes({n}, static_cast<size_t>({n}_count) * sizeof({a.pointee}))")
            elif a.kind == "in_bytes":
                puts.append(f".put_bytes({n}, {a.size})")
            elif a.kind in ("out_buffer", "in_buffer"):
                puts.append(f".put<uint64_t>(*{a.len_param}).put<uint8_t>({n} != nullptr)")
                if a.kind == "in_buffer":
                    puts.append(f".put_bytes({n}, {n} ? *{a.len_param} : 0)")
        if puts:
            body.append("call.args()" + "".join(puts) + ";")
        outs = [a for a in f.args if a.kind in ("out", "out_string", "inout", "out_bytes", "out_buffer", "in_buffer")]
        if not outs:
            body += run_returning(f)
        else:
            decode = ["if (cudaError_t e = call.run()) return e;"]
            for a in outs:
                n = a.p.name
                if a.kind == "out" and a.optional:
                    decode.append(f"auto {n}_value = call.reply().get<{a.pointee}>();")
                    decode.append(f"if ({n}) *{n} = {n}_value;")
                elif a.kind in ("out", "inout"):
                    decode.append(f"*{n} = call.reply().get<{a.pointee}>();")
                elif a.kind == "out_bytes":
                    decode.append(f"auto {n}_bytes = call.reply().get_bytes();")
                    decode.append(f"std::memcpy({n}, {n}_bytes.data(), std::min<size_t>({n}_bytes.size(), {a.size}));")
                elif a.kind in ("out_buffer", "in_buffer"):
                    lp = a.len_param
                    decode.append(f"auto {lp}_reply = static_cast<size_t>(call.reply().get<uint64_t>());")
                    if a.kind == "out_buffer":
                        decode.append(f"auto {n}_bytes = call.reply().get_bytes();")
                        decode.append(f"if ({n}) std::memcpy({n}, {n}_bytes.data(), "
                                    f"std::min<size_t>({n}_bytes.size(), *{lp}));")
                    decode.append(f"*{lp} = {lp}_reply;")
                else:
                    decode.append(f"auto {n}_bytes = call.reply().get_bytes();")
                    decode.append(f"std::memcpy({n}, {n}_bytes.data(), std::min<size_t>({n}_bytes.size(), "
                                f"static_cast<size_t>({a.len_param})));")
            decode.append("return cudaSuccess;")
            body += keeping_answer(f, decode)
        out.append(f'extern "C" CUresult CUDAAPI {f.name}({params_decl(f.decl)}) {{')
        out += [f"  {l}" for l in pre]
        out.append("  return to_cu(api([&]() -> cudaError_t {")
        out += [f"    {l}" for l in body]
        out += ["  }));", "}", ""]
    return "\n".join(out)


def emit_legacy(m: DriverModel) -> str:
    out = [banner(), "// Legacy exports over their newer versions. 32-bit outputs get the newer",
           "// function's value when it fits, else CUDA_ERROR_NOT_SUPPORTED (logged once).",
           includes(), "", '#include "client/cuda/driver_errors.hpp"', ""]
    for l in m.legacy:
        d = l.decl
        out.append(f'extern "C" CUresult CUDAAPI {d.name}({params_decl(d) or "void"}) {{')
        args = []
        for a, b in zip(d.params, l.target.params):
            if a.name in l.narrowed:
                wide = b.ctype.get_pointee().spelling
                out.append(f"  {wide} {a.name}_wide = 0;")
                args.append(f"{a.name} ? &{a.name}_wide : nullptr")
            else:
                args.append(a.name)
        if not l.narrowed:
            out += [f"  return {l.target.name}({', '.join(args)});", "}", ""]
            continue
        out.append(f"  if (CUresult e = {l.target.name}({', '.join(args)})) return e;")
        pointee = {a.name: a.ctype.get_pointee().spelling for a in d.params}
        fits = " || ".join(f"({n} && static_cast<{pointee[n]}>({n}_wide) != {n}_wide)" for n in l.narrowed)
        out.append(f'  if ({fits}) return rgpu::client::legacy_value_too_wide("{d.name}");')
        for n in l.narrowed:
            out.append(f"  if ({n}) *{n} = static_cast<{pointee[n]}>({n}_wide);")
        out += ["  return CUDA_SUCCESS;", "}", ""]
    return "\n".join(out)


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
    "Legacy exports (no version suffix, or an older one) run their newest implemented version "
    "when the parameters agree; where they take 32-bit sizes, a value that does not fit returns "
    "CUDA_ERROR_NOT_SUPPORTED.",
    "Contexts are emulated: every context of a device is its primary context, and the current "
    "context is the runtime's current device (so cuCtxGetCurrent is never NULL once CUDA is "
    "initialised). cuCtxCreate retains the primary context and pushes it, cuCtxDestroy releases "
    "it; a release frees nothing (memory goes with cuMemFree, cuDevicePrimaryCtxReset or the end "
    "of the session). cuDevicePrimaryCtxSetFlags records the flags without applying them. "
    "cuCtxCreate_v4 with CUctxCreateParams returns CUDA_ERROR_NOT_SUPPORTED.",
    "cuModuleUnload and cuLibraryUnload forget the handles; the server frees the module when the "
    "session ends. JIT options are accepted and ignored (the server's driver compiles PTX).",
    "cuGetProcAddress returns the binding cuda.h of this toolkit gives each name, whatever "
    "cudaVersion asks for.",
    "cuMemsetD16/D32 whose value's bytes differ copy a host pattern (same result, more traffic).",
    "cuPointerGetAttribute answers context, memory type, device and host pointer, device ordinal "
    "and range; page-locked host memory's device pointer is its mapped address, else its host "
    "address (a launch handed it promotes it; registered memory has none); other attributes "
    "return CUDA_ERROR_NOT_SUPPORTED.",
    "CUDA arrays (cuArray*, CU_MEMORYTYPE_ARRAY copies) are not supported.",
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
    "CUDA arrays take single-plane formats only (1, 2 or 4 channels of 8/16/32-bit integers, half "
    "or float); sparse and deferred-mapping arrays return CUDA_ERROR_NOT_SUPPORTED, so the plane, "
    "sparse-property and memory-requirement queries answer CUDA_ERROR_INVALID_VALUE as CUDA does "
    "for such arrays. Mipmapped-array levels count for copies and textures but are not freed on "
    "their own.",
    "Texture and surface references are forwarded to the server's driver (deprecated: nvcc has "
    "emitted none since CUDA 12, so cuModuleGetTexRef/SurfRef find none in current modules).",
    "cuPointerGetAttribute answers context, memory type, device and host pointer, device ordinal, "
    "range and whether memory is managed; page-locked host memory's device pointer is its mapped "
    "address, else its host address (a launch handed it promotes it; registered memory has none); "
    "other attributes return CUDA_ERROR_NOT_SUPPORTED.",
    "cuPointerGetAttributes answers each attribute as cuPointerGetAttribute does; a pointer CUDA "
    "never saw, or an attribute the pointer has no value for, gets the NULL value; an attribute "
    "cuPointerGetAttribute cannot answer fails the call with CUDA_ERROR_NOT_SUPPORTED. "
    "cuPointerSetAttribute (SYNC_MEMOPS) acts on the server's memory.",
    "Tensor maps are encoded by the server's driver for memory of the session on that server; the "
    "descriptor holds that server's device address, so a kernel of the same server must use it.",
    "Coredump settings (cuCoredump*) are the server's driver's: a dump is written on the GPU's "
    "host by the worker process serving the application (a CU_COREDUMP_FILE path names a file "
    "there), and values larger than 64 KiB return CUDA_ERROR_INVALID_VALUE.",
    "cuMemBatchDecompressAsync waits for the server's answer, so that the index of a failing "
    "operation reaches the application; its sources, destinations and size words must be device "
    "memory of the stream's device. Batch memory-operation graph nodes take the operations "
    "cuStreamBatchMemOp takes, on the graph's device.",
    "Peers: GPUs of one server are peers as its driver says; GPUs of different servers never are, "
    "and cuMemcpyPeer between them goes through client memory (after the stream's earlier work).",
    "Mapped host memory (CU_MEMHOSTALLOC_DEVICEMAP, cuMemHostGetDevicePointer) and managed memory "
    "(cuMemAllocManaged) need every server on the application's host (the shm transport): the "
    "memory is shared memory the GPU maps in place (managed memory at the same address on host "
    "and device, coherent at all times; nothing migrates, advice and prefetches are recorded). "
    "Elsewhere they return CUDA_ERROR_NOT_SUPPORTED. cuMemHostRegister with DEVICEMAP is not "
    "supported.",
    "Virtual memory management: reservations live on the current device's server and map "
    "allocations of that server's GPUs; only read-write ranges take part in copies; "
    "cuMemAddressReserve ignores the address hint. Multicast objects join GPUs of one server (its "
    "driver answers CUDA_ERROR_NOT_SUPPORTED where no NVLink switch joins them); they bind allocations "
    "and addresses of that server only, and cuMemGetAllocationPropertiesFromHandle refuses them.",
    "Shareable handles (cuMemExportToShareableHandle, cuMemPoolExportToShareableHandle) and "
    "cuMemGetHandleForAddressRange: a POSIX file descriptor (or dma-buf descriptor) is the "
    "application's own, passed from and to the server's driver beside the call, so it needs the shm "
    "transport (elsewhere CUDA_ERROR_NOT_SUPPORTED); fabric handles and pool pointer export data "
    "travel as bytes on any transport. An imported allocation or pool lives on the current device's "
    "server; the host-test backend has neither fabric handles nor dma-buf (CUDA_ERROR_NOT_SUPPORTED).",
    "IPC handles name memory and events of one server: opening one on another server's GPU, or a "
    "forged one, returns CUDA_ERROR_INVALID_HANDLE.",
    "Graphs live on one device (its primary context: a node's CUcontext is not looked at); copy "
    "nodes, and copies queued during a capture, cannot involve host memory (CU_MEMORYTYPE_HOST), "
    "nor can a captured cuMemsetD16/D32 whose value's bytes differ (it is a copy of the pattern "
    "from the host); kernel nodes take kernelParams, not `extra`.",
]


def emit_coverage(m: DriverModel) -> str:
    status = {n: ("implemented", "hand-written (src/client/cuda)") for n in m.manual}
    for f in m.forwards:
        status[f.name] = ("forwarded", "generated stub and handler")
    for l in m.legacy:
        status[l.decl.name] = ("implemented", f"legacy binding of {l.target.name}"
                               + (" (32-bit outputs checked)" if l.narrowed else ""))
    for d, base in m.per_thread:
        status[d.name] = ("implemented", f"per-thread default stream variant of {base}")
    exported = set(m.exports)
    for d in m.unsupported:
        newer = [f"{d.name}_v{v}" for v in range(2, 10) if f"{d.name}_v{v}" in exported]
        why = m.reasons.get(d.name) or (f"legacy binding, superseded by {newer[-1]}" if newer
                                        else "not implemented yet")
        status[d.name] = ("unsupported", "graphics interop: out of scope" if is_graphics_interop(d)
                          else f"{why}: returns CUDA_ERROR_NOT_SUPPORTED, logs its name once")
    interop = {d.name for d in m.unsupported if is_graphics_interop(d)}
    counted = [n for n in m.exports if n not in interop]
    done = [n for n in counted if status[n][0] != "unsupported"]
    lines = ["", "# CUDA driver coverage", "",
             f"{len(done)} of {len(counted)} non-graphics functions exported by libcuda.so.1 are implemented "
             f"({100 * len(done) / len(counted):.1f} %); {len(interop)} graphics-interop functions "
             f"(cuGraphics*) are out of scope.", "",
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
            OUT["map"]: emit_map(m), OUT["forwarded"]: emit_forwarded(m), OUT["legacy"]: emit_legacy(m)}
