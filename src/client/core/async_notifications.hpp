// Async notifications (cudaDeviceRegisterAsyncNotification and the
// driver's), shared by both APIs: the device's worker registers with its
// driver and forwards each notification; the application's callback runs
// in this process on the session's callback thread (host_callback_runner).
#pragma once
#include <cuda_runtime_api.h>

namespace rgpu::client {

cudaError_t register_async_notification(int device, cudaAsyncCallback fn, void* user_data,
                                        cudaAsyncCallbackHandle_t* handle);
// Stops delivery: a notification already on its way is not delivered.
cudaError_t unregister_async_notification(int device, cudaAsyncCallbackHandle_t handle);

}  // namespace rgpu::client
