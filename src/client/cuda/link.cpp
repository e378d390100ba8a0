// JIT links (cuLinkCreate ... cuLinkComplete): the inputs are gathered here
// (files read on the client, where the application named them) and linked
// in one call by the current device's server, whose driver returns the
// image; it stays valid until cuLinkDestroy. Link options only tune or
// report on the linker, which runs on the server: they are accepted and
// ignored, and no log is written.
#include "client/cuda/cuda_api.hpp"

#include <sys/uio.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/cuda/driver_errors.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

struct LinkInput {
  CUjitInputType type;
  std::string name;
  std::vector<uint8_t> data;
};

struct Link {
  std::vector<LinkInput> inputs;
  std::vector<uint8_t> image;  // what cuLinkComplete returned
};

std::mutex g_mutex;
// Never destroyed, as every table an exit handler may reach.
auto& g_links = *new std::unordered_map<Link*, std::unique_ptr<Link>>;

// The live link a handle names, or null. Like the driver, one link is not
// meant for use by several threads at once.
Link* find(CUlinkState state) {
  std::lock_guard lock(g_mutex);
  auto it = g_links.find(reinterpret_cast<Link*>(state));
  return it == g_links.end() ? nullptr : it->second.get();
}

CUresult check_options(unsigned numOptions, CUjit_option* options, void** optionValues) {
  return numOptions && (!options || !optionValues) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult add(CUlinkState state, CUjitInputType type, std::vector<uint8_t> data, const char* name) {
  if (CUresult e = driver_ready()) return e;
  Link* link = find(state);
  if (!link) return CUDA_ERROR_INVALID_HANDLE;
  if (type < 0 || type >= CU_JIT_NUM_INPUT_TYPES || data.empty()) return CUDA_ERROR_INVALID_VALUE;
  link->inputs.push_back({type, name ? name : "", std::move(data)});
  return CUDA_SUCCESS;
}

cudaError_t complete(Link& link) {
  Call call(proto::kOpLink);
  if (cudaError_t e = call.to_current_device()) return e;
  call.args().put<uint32_t>(static_cast<uint32_t>(link.inputs.size()));
  std::vector<iovec> payload;
  for (const LinkInput& in : link.inputs) {
    call.args().put<int32_t>(in.type).put_string(in.name).put<uint64_t>(in.data.size());
    payload.push_back({const_cast<uint8_t*>(in.data.data()), in.data.size()});
  }
  if (cudaError_t e = call.run(payload)) return e;
  auto bytes = call.reply().get_bytes();
  link.image.assign(bytes.begin(), bytes.end());
  return cudaSuccess;
}

}  // namespace

extern "C" CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                            CUlinkState* stateOut) {
  if (!stateOut) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_options(numOptions, options, optionValues)) return e;
  if (CUresult e = driver_ready()) return e;
  auto link = std::make_unique<Link>();
  std::lock_guard lock(g_mutex);
  *stateOut = reinterpret_cast<CUlinkState>(link.get());
  g_links.emplace(link.get(), std::move(link));
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size,
                                             const char* name, unsigned int numOptions, CUjit_option* options,
                                             void** optionValues) {
  if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_options(numOptions, options, optionValues)) return e;
  const auto* bytes = static_cast<const uint8_t*>(data);
  return add(state, type, std::vector<uint8_t>(bytes, bytes + size), name);
}

extern "C" CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path,
                                             unsigned int numOptions, CUjit_option* options, void** optionValues) {
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_options(numOptions, options, optionValues)) return e;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // PTX files carry no terminator of their own.
  if (type == CU_JIT_INPUT_PTX) data.push_back(0);
  return add(state, type, std::move(data), path);
}

extern "C" CUresult CUDAAPI cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  KeepLastError keep;
  if (!cubinOut || !sizeOut) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  Link* link = find(state);
  if (!link) return CUDA_ERROR_INVALID_HANDLE;
  if (link->inputs.empty()) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = to_cu(api([&] { return complete(*link); }))) return e;
  *cubinOut = link->image.data();
  *sizeOut = link->image.size();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuLinkDestroy(CUlinkState state) {
  std::lock_guard lock(g_mutex);
  return g_links.erase(reinterpret_cast<Link*>(state)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
