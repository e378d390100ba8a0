// The context-local storage table: NVIDIA's runtime keeps its state for a
// context (its modules, streams, per-context settings) in values it stores
// with the driver under (context, key), with a destructor the driver calls
// when the context goes away. rgpu keeps them per context handle and runs
// the destructors when a primary context is reset (cudaDeviceReset from that
// runtime), so that the runtime starts that context afresh.
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {

namespace {

using Destructor = void(CUDAAPI*)(CUcontext, void* key, void* value);

struct Stored {
  void* value;
  Destructor destructor;
};

// Never destroyed: a static NVIDIA runtime removes its values from its own
// exit handlers, which may run after this library's destructors.
struct Storage {
  std::mutex mutex;
  std::map<std::pair<CUcontext, void*>, Stored> values;
};
Storage& storage() {
  static Storage* s = new Storage;
  return *s;
}

// The context named, NULL naming the calling thread's current one.
CUresult resolve(CUcontext* ctx) {
  if (*ctx) return CUDA_SUCCESS;
  if (CUresult e = cuCtxGetCurrent(ctx)) return e;
  return *ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI put(CUcontext ctx, void* key, void* value, Destructor destructor) {
  if (CUresult e = resolve(&ctx)) return e;
  Storage& s = storage();
  std::lock_guard lock(s.mutex);
  s.values[{ctx, key}] = {value, destructor};
  return CUDA_SUCCESS;
}

CUresult CUDAAPI remove(CUcontext ctx, void* key) {
  if (CUresult e = resolve(&ctx)) return e;
  Storage& s = storage();
  std::lock_guard lock(s.mutex);
  s.values.erase({ctx, key});
  return CUDA_SUCCESS;
}

// CUDA_ERROR_INVALID_HANDLE for a key never stored: the runtime takes that
// as "no state yet" and makes it.
CUresult CUDAAPI get(void** value, CUcontext ctx, void* key) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = resolve(&ctx)) return e;
  Storage& s = storage();
  std::lock_guard lock(s.mutex);
  auto it = s.values.find({ctx, key});
  if (it == s.values.end()) return CUDA_ERROR_INVALID_HANDLE;
  *value = it->second.value;
  return CUDA_SUCCESS;
}

}  // namespace

void release_context_storage(CUcontext ctx) {
  std::vector<std::pair<void*, Stored>> released;
  {
    Storage& s = storage();
    std::lock_guard lock(s.mutex);
    for (auto it = s.values.lower_bound({ctx, nullptr}); it != s.values.end() && it->first.first == ctx;) {
      released.emplace_back(it->first.second, it->second);
      it = s.values.erase(it);
    }
  }
  for (auto& [key, stored] : released)
    if (stored.destructor) stored.destructor(ctx, key, stored.value);
}

// Not sized: the runtime knows its three slots.
const void* context_local_storage_table() {
  static const ExportTable<ExportTableId::context_local_storage, 4> table(
      false, {{0, slot_fn(put)}, {1, slot_fn(remove)}, {2, slot_fn(get)}});
  return table.data();
}

}  // namespace rgpu::client
