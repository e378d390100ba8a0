#include "client/core/runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "client/core/host_memory_model.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {
thread_local int t_current_device = -1;  // -1: this thread has chosen none
// The session slot of the green context current to this thread, on its
// current device; 0: the device's primary context.
thread_local uint16_t t_green_slot = 0;
// The device of threads that chose none: the first of cudaSetValidDevices'
// list (every device works once connected), else 0.
std::atomic<int> g_implicit_device{0};
}

Runtime& Runtime::get() {
  // Never destroyed: application atexit handlers (fat binary unregistration)
  // may still call in after static destructors would have run.
  static Runtime* r = new Runtime;
  return *r;
}

int Runtime::current_device() { return t_current_device >= 0 ? t_current_device : g_implicit_device.load(); }
void Runtime::set_implicit_device(int index) { g_implicit_device.store(index); }
void Runtime::set_current_device(int index) {
  t_current_device = index;
  t_green_slot = 0;
}
void Runtime::set_current_context(int index, uint16_t green_slot) {
  t_current_device = index;
  t_green_slot = green_slot;
}
uint16_t Runtime::current_green_slot() { return t_green_slot; }

cudaError_t Runtime::ensure_init() {
  std::call_once(init_once_, [this] {
    init();
    ready_.store(init_status_ == cudaSuccess);
  });
  return init_status_;
}

void Runtime::init() {
  if (const char* lvl = std::getenv("RGPU_LOG_LEVEL")) log::set_level(lvl);
  log::set_prefix("rgpu-client");
  std::vector<DeviceSpec> specs;
  try {
    specs = device_list_from_environment();
  } catch (const std::exception& e) {
    RGPU_LOG(error, "bad device list: %s", e.what());
    init_status_ = cudaErrorNoDevice;
    return;
  }
  // One session per server, asking for all of that server's GPUs at once.
  std::map<std::string, std::vector<int>> gpus_by_server;
  std::map<std::string, DeviceSpec> servers;
  for (const auto& s : specs) {
    auto key = s.server_key();
    auto& gpus = gpus_by_server[key];
    if (std::find(gpus.begin(), gpus.end(), s.gpu) == gpus.end()) gpus.push_back(s.gpu);
    servers[key] = s;
  }
  std::map<std::string, Session*> by_server;
  for (auto& [key, gpus] : gpus_by_server) {
    std::string why;
    auto session = Session::open(servers[key].server, servers[key].transport, gpus, &why);
    if (!session) {
      RGPU_LOG(error, "%s", why.c_str());
      init_status_ = cudaErrorNoDevice;
      return;
    }
    by_server[key] = session.get();
    sessions_.push_back(std::move(session));
  }
  for (const auto& s : specs) {
    auto d = std::make_unique<VirtualDevice>();
    d->session = by_server[s.server_key()];
    d->remote = s.gpu;
    devices_.push_back(std::move(d));
  }
}

void Runtime::replace_session(Session* from, std::unique_ptr<Session> to, int gpu) {
  for (auto& d : devices_)
    if (d->session == from) {
      d->session = to.get();
      d->remote = gpu;
    }
  for (auto& s : sessions_)
    if (s.get() == from) {
      s->retire();
      retired_.push_back(std::move(s));
      s = std::move(to);
      return;
    }
}

std::vector<std::pair<Session*, int>> Runtime::sharing_sessions() const {
  std::vector<std::pair<Session*, int>> out;
  for (const auto& s : sessions_) {
    if (!s->shares_memory()) continue;
    for (const auto& d : devices_)
      if (d->session == s.get()) {
        out.emplace_back(s.get(), d->remote);
        break;
      }
  }
  return out;
}

void Runtime::finish_background_copies() {
  for (const auto& s : sessions_) s->finish_background_copies();
}

VirtualDevice* Runtime::device(int index) {
  if (index < 0 || index >= device_count()) return nullptr;
  return devices_[index].get();
}

cudaError_t Runtime::properties(int index, const cudaDeviceProp** out) {
  VirtualDevice* d = device(index);
  if (!d) return cudaErrorInvalidDevice;
  std::call_once(d->props_once, [d] {
    d->props_status = server_device_properties(*d->session, d->remote, &d->props);
    if (d->props_status == cudaSuccess) adjust_host_memory_facts(d->props, d->session->shares_memory());
  });
  *out = &d->props;
  return d->props_status;
}

cudaError_t server_device_properties(Session& session, int gpu, cudaDeviceProp* out) {
  proto::Writer w;
  w.put<int32_t>(gpu);
  std::vector<uint8_t> reply;
  if (cudaError_t e = session.call(proto::kOpGetDeviceProperties, static_cast<uint16_t>(gpu), w.bytes(), {}, reply, false))
    return e;
  if (reply.size() != sizeof(cudaDeviceProp)) return cudaErrorUnknown;
  std::memcpy(out, reply.data(), sizeof *out);
  return cudaSuccess;
}

bool same_server(int a, int b) { return Runtime::get().device(a)->session == Runtime::get().device(b)->session; }

}  // namespace rgpu::client
