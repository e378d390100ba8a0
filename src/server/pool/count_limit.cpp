#include "server/pool/count_limit.hpp"

#include "common/log.hpp"

namespace rgpu::server {

bool CountLimit::room_for_one_more(size_t held) {
  if (!limit_ || held < limit_) return true;
  if (!logged_.exchange(true))
    RGPU_LOG(warn, "the session holds %zu %s, its %s %llu: more are refused (logged once)", held, what_, setting_,
             static_cast<unsigned long long>(limit_));
  return false;
}

}  // namespace rgpu::server
