#include "client/cudart/made_pools.hpp"

#include <map>
#include <mutex>

namespace rgpu::client::made_pools {
namespace {

struct Book {
  std::mutex mutex;
  std::map<cudaMemPool_t, cudaMemPoolProps> props;
};

Book& book() {
  static auto* b = new Book;
  return *b;
}

}  // namespace

void remember(cudaMemPool_t pool, const cudaMemPoolProps& props) {
  std::lock_guard lock(book().mutex);
  book().props[pool] = props;
}

void forget(cudaMemPool_t pool) {
  std::lock_guard lock(book().mutex);
  book().props.erase(pool);
}

std::optional<cudaMemPoolProps> props(cudaMemPool_t pool) {
  std::lock_guard lock(book().mutex);
  auto it = book().props.find(pool);
  if (it == book().props.end()) return std::nullopt;
  return it->second;
}

}  // namespace rgpu::client::made_pools
