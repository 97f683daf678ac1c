// Synthetic 3-class data of 8×8 images for the torch tests: class k has a bright row 2k, so a tiny
// MLP learns it in a few epochs. Seeded (LibTorch's generator, 123).
#pragma once

#include <torch/torch.h>

#include <memory>

#include "blr/torch/data/dataset.hpp"

namespace blr::torch::testing {

inline std::shared_ptr<Dataset> synthetic_data(int64_t n_train, int64_t n_test) {
  ::torch::manual_seed(123);
  auto make = [](int64_t n) {
    auto y = ::at::arange(n, ::at::kLong).remainder(3);
    auto x = ::at::randn({n, 1, 8, 8}) * 0.5;
    for (int64_t i = 0; i < n; ++i) x[i][0][y[i].item<int64_t>() * 2] += 2.0;
    return Split{x, y};
  };
  auto d = std::make_shared<Dataset>();
  d->name = "synthetic";
  d->outputs = 10;  // the Fashion-MNIST classifiers' 10 outputs; the labels use 3 of them
  d->train = make(n_train);
  d->test = make(n_test);
  d->test_shifted = {-d->test.x, d->test.y};
  return d;
}

}  // namespace blr::torch::testing
