// TEST BACKEND part: GPU coredump settings, kept as cuda.h documents
// cuCoredump{Get,Set}Attribute{,Global}: booleans, an integer of generation
// flags, and file/pipe paths of up to 1023 characters, globally and per
// context (a context's own value wins over the global one). No dump is ever
// written here.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/wire_enum.hpp"

namespace rgpu::server {

// A setting as the number the client sent; get and set refuse unknown ones.
using CoredumpSetting = proto::EnumNumber<CUcoredumpSettings>;

class HostCoredump {
 public:
  // device < 0: the global settings. Each returns a CUresult value.
  int32_t get(int device, CoredumpSetting attrib, void* value, size_t* size);
  int32_t set(int device, CoredumpSetting attrib, const void* value, size_t* size);

 private:
  using Settings = std::map<CoredumpSetting, std::vector<uint8_t>>;
  std::vector<uint8_t> current(int device, CoredumpSetting attrib) const;

  mutable std::mutex mutex_;
  Settings global_;
  std::map<int, Settings> contexts_;
};

}  // namespace rgpu::server
