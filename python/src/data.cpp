// blr.data: Fashion-MNIST as the C++ commands read it (blr/torch/data/fashion_mnist.hpp): the
// Debian package's files, standardised with the training pixels' mean and deviation, an optional
// seeded validation split and the intensity-inverted test set used for OOD detection.
#include <torch/csrc/utils/pybind.h>

#include "bindings.hpp"
#include "blr/torch/data/fashion_mnist.hpp"

namespace blr::python {

namespace {

py::object pair(const ::blr::torch::Split& d) {
  if (!d.x.defined()) return py::none();
  return py::make_tuple(d.x, d.y);
}

}  // namespace

void bind_data(py::module_& m) {
  py::module_ data = m.def_submodule("data", "Data sets as the blr commands read them.");
  data.def(
      "fashion_mnist",
      [](int64_t train_limit, int64_t test_limit, double validation_fraction, uint64_t seed,
         const std::string& directory) {
        ::blr::torch::FashionMnistOptions options;
        options.directory = directory;
        options.train_limit = train_limit;
        options.test_limit = test_limit;
        options.validation_fraction = validation_fraction;
        options.seed = seed;
        options.validate();
        ::blr::torch::Dataset f;
        {
          py::gil_scoped_release release;
          f = ::blr::torch::load_fashion_mnist(options);
        }
        py::dict out;
        out["train"] = pair(f.train);
        out["validation"] = pair(f.validation);
        out["test"] = pair(f.test);
        out["test_shifted"] = pair(f.test_shifted);
        out["pixel_mean"] = f.statistics.at("pixel_mean").get<double>();
        out["pixel_std"] = f.statistics.at("pixel_std").get<double>();
        return out;
      },
      py::arg("train_limit") = 0, py::arg("test_limit") = 0, py::arg("validation_fraction") = 0.0,
      py::arg("seed") = 0, py::arg("directory") = "",
      "Fashion-MNIST: a dict of (images N x 1 x 28 x 28 float32, labels int64) pairs for train, "
      "validation (None without a split), test and test_shifted (inverted intensities).");
}

}  // namespace blr::python
