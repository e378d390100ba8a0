// cuGetExportTable: NVIDIA's private tables by their UUID. A UUID rgpu does
// not know is logged by value, so that a new runtime's needs are seen.
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "client/core/front_end_bridge.hpp"
#include "client/cuda/export_tables/export_tables.hpp"
#include "client/cuda/export_tables/uuid_text.hpp"
#include "common/log.hpp"

namespace rgpu::client {

namespace {

struct KnownTable {
  ExportTableId id;
  const char* name;
  unsigned char uuid[16];
  const void* (*table)();
};

constexpr KnownTable kTables[] = {
    {ExportTableId::cudart_interface, "cudart interface",
     {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     cudart_interface_table},
    {ExportTableId::tools_tls, "tools TLS",
     {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     tools_tls_table},
    {ExportTableId::runtime_callback_hooks, "tools runtime callback hooks",
     {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     runtime_callback_hooks_table},
    {ExportTableId::context_local_storage, "context-local storage",
     {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     context_local_storage_table},
    {ExportTableId::ctx_create_bypass, "context-create bypass",
     {0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86},
     ctx_create_bypass_table},
    {ExportTableId::heap_access, "heap access",
     {0x19, 0x5b, 0xcb, 0xf4, 0xd6, 0x7d, 0x02, 0x4a, 0xac, 0xc5, 0x1d, 0x29, 0xce, 0xa6, 0x31, 0xae},
     heap_access_table},
    {ExportTableId::device_extended_rt, "extended device runtime",
     {0xb1, 0x05, 0x41, 0xe1, 0xf7, 0xc7, 0xc7, 0x4a, 0x9f, 0x64, 0xf2, 0x23, 0xbe, 0x99, 0xf1, 0xe2},
     device_extended_rt_table},
    {ExportTableId::integrity_check, "integrity check",
     {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     integrity_check_table},
    {ExportTableId::context_checks, "context checks",
     {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     context_checks_table},
    {ExportTableId::runtime_startup, "runtime start-up",
     {0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9},
     runtime_startup_table},
    {ExportTableId::compiler_support, "compiler support",
     {0x69, 0xa2, 0x8e, 0x9f, 0x24, 0x49, 0x8b, 0x47, 0xb0, 0x30, 0xc5, 0xda, 0x33, 0x0e, 0xa4, 0xe9},
     compiler_support_table},
    {ExportTableId::tools_context, "tools context",
     {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     tools_context_table},
    {ExportTableId::tools_module, "tools module",
     {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e},
     tools_module_table},
    {ExportTableId::library_support, "library support",
     {0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca},
     library_support_table},
    {ExportTableId::front_end_bridge, "rgpu front-end bridge", {}, front_end_bridge_table},
};


}  // namespace

const char* export_table_name(ExportTableId id) {
  for (const KnownTable& t : kTables)
    if (t.id == id) return t.name;
  return "?";
}

CUresult unsupported_slot(ExportTableId table, int slot) {
  // Never destroyed: NVIDIA's runtime may call in from its exit handlers.
  static auto* mutex = new std::mutex;
  static auto* logged = new std::set<std::pair<ExportTableId, int>>;
  std::lock_guard lock(*mutex);
  if (logged->emplace(table, slot).second)
    RGPU_LOG(error, "NVIDIA's private driver table '%s': slot %d is not supported by rgpu",
             export_table_name(table), slot);
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // namespace rgpu::client

using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid* id) {
  if (!table || !id) return CUDA_ERROR_INVALID_VALUE;
  const auto& bytes = reinterpret_cast<const unsigned char(&)[16]>(id->bytes);
  for (const KnownTable& t : kTables)
    if (std::memcmp(t.id == ExportTableId::front_end_bridge ? kFrontEndBridgeUuid : t.uuid, bytes, sizeof t.uuid) == 0) {
      *table = t.table();
      return CUDA_SUCCESS;
    }
  RGPU_LOG(error, "cuGetExportTable: unknown private driver table {%s}", uuid_text(bytes).c_str());
  *table = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}
