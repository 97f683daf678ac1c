// LibTorch's and OpenBLAS's thread counts (threads.hpp). OpenBLAS is reached through dlsym, so
// that a process whose BLAS is another implementation (the reference BLAS, or a CUDA build's) runs
// unchanged.
#include "blr/torch/train/threads.hpp"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include "blr/core/error.hpp"

namespace blr::torch {

void set_thread_count(int threads) {
  check(threads >= 1, fmt::format("A thread count must be at least 1; got {}.", threads));
  ::at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (const auto openblas =
          reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    openblas(threads);
}

int blas_thread_count() {
  using GetThreads = int (*)();
  const auto openblas =
      reinterpret_cast<GetThreads>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return openblas ? openblas() : 0;
}

}  // namespace blr::torch
