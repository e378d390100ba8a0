// Async notifications: callbacks registered with the runtime and the driver
// run in this process for each over-budget notification the device raises
// (the test server's backend has a 64 MiB budget:
// RGPU_HOST_TEST_MEMORY_BUDGET in server_fixture.sh), with their own user
// data and handle; they may not register or unregister; unregistering stops
// delivery; bad handles are refused.
#include <atomic>
#include <chrono>
#include <thread>

#include "driver_check.h"

namespace {

constexpr size_t kMiB = 1 << 20;
constexpr size_t kBudget = 64 * kMiB;

struct Seen {
  std::atomic<int> count{0};
  std::atomic<unsigned long long> over{0};
  std::atomic<int> type{0};
  std::atomic<void*> handle{nullptr};
  std::atomic<int> nested{-1};  // what registering from inside the callback returned
};

void on_notification(cudaAsyncNotificationInfo_t* info, void* user, cudaAsyncCallbackHandle_t handle) {
  auto* seen = static_cast<Seen*>(user);
  seen->type = info->type;
  seen->over = info->info.overBudget.bytesOverBudget;
  seen->handle = handle;
  cudaAsyncCallbackHandle_t nested;
  seen->nested = cudaDeviceRegisterAsyncNotification(0, on_notification, user, &nested);
  ++seen->count;
}

void on_driver_notification(CUasyncNotificationInfo* info, void* user, CUasyncCallbackHandle) {
  auto* seen = static_cast<Seen*>(user);
  seen->over = info->info.overBudget.bytesOverBudget;
  ++seen->count;
}

// Notifications arrive on their own: waits until `seen` has `n`.
bool wait_for(const Seen& seen, int n) {
  for (int i = 0; i < 500 && seen.count < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return seen.count == n;
}

}  // namespace

int main() {
  Seen first, second, driver;
  cudaAsyncCallbackHandle_t h1 = nullptr, h2 = nullptr;
  OK(cudaDeviceRegisterAsyncNotification(0, on_notification, &first, &h1));
  CHECK(h1 != nullptr);

  // Within the budget: nothing.
  void *a, *b, *c, *d;
  OK(cudaMalloc(&a, 16 * kMiB));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(first.count == 0);

  // Beyond it: the callback runs here, with the driver's information.
  OK(cudaMalloc(&b, 80 * kMiB));
  CHECK(wait_for(first, 1));
  CHECK(first.type == cudaAsyncNotificationTypeOverBudget);
  CHECK(first.over == 96 * kMiB - kBudget);
  CHECK(first.handle == h1);
  CHECK(first.nested == cudaErrorNotPermitted);

  // Two callbacks, each with its own data; the driver's too.
  OK(cudaDeviceRegisterAsyncNotification(0, on_notification, &second, &h2));
  CHECK(h2 != nullptr && h2 != h1);
  CU_OK(cuInit(0));
  CUasyncCallbackHandle hd = nullptr;
  CU_OK(cuDeviceRegisterAsyncNotification(0, on_driver_notification, &driver, &hd));
  OK(cudaMalloc(&c, kMiB));
  CHECK(wait_for(first, 2));
  CHECK(wait_for(second, 1));
  CHECK(wait_for(driver, 1));
  CHECK(second.handle == h2 && second.over == 97 * kMiB - kBudget);
  CHECK(driver.over == 97 * kMiB - kBudget);

  // Unregistered callbacks hear nothing more.
  OK(cudaDeviceUnregisterAsyncNotification(0, h1));
  CU_OK(cuDeviceUnregisterAsyncNotification(0, hd));
  OK(cudaMalloc(&d, kMiB));
  CHECK(wait_for(second, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(first.count == 2);
  CHECK(driver.count == 1);

  // Bad input.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceUnregisterAsyncNotification(0, h1));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceUnregisterAsyncNotification(1, h2));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceUnregisterAsyncNotification(0, nullptr));
  cudaAsyncCallbackHandle_t h3;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceRegisterAsyncNotification(0, nullptr, nullptr, &h3));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceRegisterAsyncNotification(0, on_notification, nullptr, nullptr));
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaDeviceRegisterAsyncNotification(99, on_notification, nullptr, &h3));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceUnregisterAsyncNotification(0, hd));

  OK(cudaDeviceUnregisterAsyncNotification(0, h2));
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaFree(c));
  OK(cudaFree(d));
  return finish();
}
