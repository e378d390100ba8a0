#include "client/cuda/green_context_handles.hpp"

#include <mutex>
#include <new>
#include <unordered_set>

namespace rgpu::client {
namespace {

std::mutex g_mutex;
// Never destroyed, as every table an exit handler may reach.
auto& g_live = *new std::unordered_set<GreenContext*>;

GreenContext* live(CUgreenCtx g) {
  auto* o = reinterpret_cast<GreenContext*>(g);
  return g_live.count(o) ? o : nullptr;
}

}  // namespace

CUgreenCtx add_green_context(int device, uint16_t slot, uint64_t id) {
  auto* o = new (std::nothrow) GreenContext{device, slot, id, {}};
  if (!o) return nullptr;
  std::lock_guard lock(g_mutex);
  g_live.insert(o);
  return reinterpret_cast<CUgreenCtx>(o);
}

bool remove_green_context(CUgreenCtx g) {
  std::lock_guard lock(g_mutex);
  GreenContext* o = live(g);
  if (!o) return false;
  g_live.erase(o);
  delete o;
  return true;
}

bool find_green_context(CUgreenCtx g, GreenContext* out) {
  std::lock_guard lock(g_mutex);
  GreenContext* o = live(g);
  if (!o) return false;
  *out = *o;
  return true;
}

bool find_green_context(CUcontext ctx, GreenContext* out) {
  std::lock_guard lock(g_mutex);
  for (GreenContext* o : g_live) {
    if (reinterpret_cast<CUcontext>(o->as_context) == ctx) {
      *out = *o;
      return true;
    }
  }
  return false;
}

CUgreenCtx green_context_in_slot(int device, uint16_t slot) {
  if (slot == 0) return nullptr;
  std::lock_guard lock(g_mutex);
  for (GreenContext* o : g_live)
    if (o->device == device && o->slot == slot) return reinterpret_cast<CUgreenCtx>(o);
  return nullptr;
}

CUcontext context_of_green(CUgreenCtx g) {
  return reinterpret_cast<CUcontext>(reinterpret_cast<GreenContext*>(g)->as_context);
}

}  // namespace rgpu::client
