// The driver API's CUresult handling: runtime errors of shared paths become
// their driver twins, and the generated name table follows cuda.h.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "client/cuda/driver_error_names.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/proc_names.hpp"

using namespace rgpu::client;

TEST(DriverErrors, RuntimeErrorsBecomeTheirDriverTwins) {
  const std::pair<cudaError_t, CUresult> twins[] = {
      {cudaSuccess, CUDA_SUCCESS},
      {cudaErrorInvalidValue, CUDA_ERROR_INVALID_VALUE},
      {cudaErrorInvalidDevicePointer, CUDA_ERROR_INVALID_VALUE},
      {cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY},
      {cudaErrorInitializationError, CUDA_ERROR_NOT_INITIALIZED},
      {cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE},
      {cudaErrorInvalidDevice, CUDA_ERROR_INVALID_DEVICE},
      {cudaErrorInvalidKernelImage, CUDA_ERROR_INVALID_IMAGE},
      {cudaErrorInvalidPtx, CUDA_ERROR_INVALID_PTX},
      {cudaErrorInvalidResourceHandle, CUDA_ERROR_INVALID_HANDLE},
      {cudaErrorSymbolNotFound, CUDA_ERROR_NOT_FOUND},
      {cudaErrorInvalidSymbol, CUDA_ERROR_NOT_FOUND},
      {cudaErrorNotReady, CUDA_ERROR_NOT_READY},
      {cudaErrorIllegalAddress, CUDA_ERROR_ILLEGAL_ADDRESS},
      {cudaErrorLaunchFailure, CUDA_ERROR_LAUNCH_FAILED},
      {cudaErrorNotSupported, CUDA_ERROR_NOT_SUPPORTED},
      {cudaErrorUnknown, CUDA_ERROR_UNKNOWN},
  };
  for (auto [rt, cu] : twins) EXPECT_EQ(to_cu(rt), cu) << "cudaError_t " << rt;
}

TEST(DriverErrors, NameTableFollowsCudaH) {
  ASSERT_NE(driver_error_name(CUDA_ERROR_INVALID_IMAGE), nullptr);
  EXPECT_STREQ(driver_error_name(CUDA_ERROR_INVALID_IMAGE)->name, "CUDA_ERROR_INVALID_IMAGE");
  EXPECT_STREQ(driver_error_name(CUDA_SUCCESS)->name, "CUDA_SUCCESS");
  EXPECT_GT(std::strlen(driver_error_name(CUDA_ERROR_OUT_OF_MEMORY)->description), 0u);
  EXPECT_EQ(driver_error_name(static_cast<CUresult>(12345)), nullptr);
}

TEST(DriverProcNames, FollowTheHeadersBindings) {
  auto find = [](const char* api) -> const ProcName* {
    for (size_t i = 0; i < kProcNameCount; ++i)
      if (std::strcmp(kProcNames[i].api, api) == 0) return &kProcNames[i];
    return nullptr;
  };
  ASSERT_NE(find("cuMemAlloc"), nullptr);
  EXPECT_STREQ(find("cuMemAlloc")->symbol, "cuMemAlloc_v2");
  EXPECT_STREQ(find("cuMemAlloc")->per_thread, "");
  ASSERT_NE(find("cuLaunchKernel"), nullptr);
  EXPECT_STREQ(find("cuLaunchKernel")->per_thread, "ptsz");
  ASSERT_NE(find("cuMemcpy2D"), nullptr);
  EXPECT_STREQ(find("cuMemcpy2D")->symbol, "cuMemcpy2D_v2");
  EXPECT_STREQ(find("cuMemcpy2D")->per_thread, "ptds");
  EXPECT_EQ(find("cuInit"), nullptr);  // bound to itself
}
