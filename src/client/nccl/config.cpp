#include "client/nccl/config.hpp"

#include <cstddef>
#include <cstring>

namespace rgpu::nccl {
namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;  // NCCL_CONFIG_INITIALIZER's

// Whether the application's struct is large enough to have the field.
#define RGPU_CONFIG_HAS(c, field) ((c)->size >= offsetof(ncclConfig_t, field) + sizeof((c)->field))

void copy_name(const char* from, char (&to)[64]) {
  if (from) std::strncpy(to, from, sizeof to - 1);
}

}  // namespace

bool config_wire(const ncclConfig_t* c, proto::NcclConfigWire* w) {
  *w = {};
  w->blocking = w->cga_cluster_size = w->min_ctas = w->max_ctas = w->split_share = w->traffic_class =
      w->collnet_enable = w->cta_policy = w->nvls_ctas = NCCL_CONFIG_UNDEF_INT;
  if (!c) return true;
  if (c->magic != kConfigMagic) return false;
#define RGPU_CONFIG_TAKE(field, to) \
  if (RGPU_CONFIG_HAS(c, field)) w->to = c->field
  RGPU_CONFIG_TAKE(blocking, blocking);
  RGPU_CONFIG_TAKE(cgaClusterSize, cga_cluster_size);
  RGPU_CONFIG_TAKE(minCTAs, min_ctas);
  RGPU_CONFIG_TAKE(maxCTAs, max_ctas);
  RGPU_CONFIG_TAKE(splitShare, split_share);
  RGPU_CONFIG_TAKE(trafficClass, traffic_class);
  RGPU_CONFIG_TAKE(collnetEnable, collnet_enable);
  RGPU_CONFIG_TAKE(CTAPolicy, cta_policy);
  RGPU_CONFIG_TAKE(nvlsCTAs, nvls_ctas);
#undef RGPU_CONFIG_TAKE
  if (RGPU_CONFIG_HAS(c, netName)) copy_name(c->netName, w->net_name);
  if (RGPU_CONFIG_HAS(c, commName)) copy_name(c->commName, w->comm_name);
  return true;
}

}  // namespace rgpu::nccl
