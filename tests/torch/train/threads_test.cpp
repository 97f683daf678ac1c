// set_thread_count reaches both pools: LibTorch's intra-op threads and OpenBLAS's (Debian's
// LibTorch links OpenBLAS, whose own pool LibTorch's count does not size).
#include "blr/torch/train/threads.hpp"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "blr/core/error.hpp"

namespace blr::torch {
namespace {

TEST(Threads, OneCountForLibTorchAndOpenBlas) {
  if (blas_thread_count() == 0) GTEST_SKIP() << "this process's BLAS is not OpenBLAS";
  const int torch_before = ::at::get_num_threads();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const int n : {1, cores}) {
    set_thread_count(n);
    EXPECT_EQ(::at::get_num_threads(), n);
    EXPECT_EQ(blas_thread_count(), n);
  }
  EXPECT_THROW(set_thread_count(0), Error);
  set_thread_count(torch_before);
}

}  // namespace
}  // namespace blr::torch
