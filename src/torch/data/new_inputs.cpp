#include "blr/torch/data/new_inputs.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/data/csv_data.hpp"
#include "blr/torch/data/prepare.hpp"
#include "blr/torch/data/tensor_file.hpp"

namespace blr::torch {
namespace {

// The CSV table's features, encoded with the training table's levels and standardised with its
// statistics.
at::Tensor csv_inputs(const std::string& path, const TrainConfig& c, const Dataset& training) {
  CsvData csv = read_csv_data({c.data, c.test_data, c.label, c.task, c.categorical, c.missing},
                              path);
  auto x = csv.inputs.clone();
  const auto& s = training.statistics;
  if (s.contains("feature_mean")) {
    const auto mean = s.at("feature_mean").get<std::vector<double>>();
    const auto sd = s.at("feature_std").get<std::vector<double>>();
    check(mean.size() == csv.numeric_columns.size() && sd.size() == mean.size(),
          "The run's standardisation has {} columns but the table '{}' {} numeric features.",
          mean.size(), c.data, csv.numeric_columns.size());
    for (size_t k = 0; k < mean.size(); ++k) {
      x.select(1, csv.numeric_columns[k]).sub_(mean[k]).div_(sd[k]);
    }
  }
  return x.to(at::kFloat).contiguous();
}

}  // namespace

at::Tensor read_new_inputs(const std::string& path, const TrainConfig& config,
                           const Dataset& training) {
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  at::Tensor x;
  if (csv) {
    check(data_format(config.data) == DataFormat::kCsv,
          "The data file '{}' is a CSV table, but the run was trained on '{}'; give its inputs as "
          "a torch.save file with key x.",
          path, config.data);
    x = csv_inputs(path, config, training);
  } else {
    x = read_tensor_file_inputs({path, ""});
    const auto& s = training.statistics;
    if (s.contains("pixel_mean")) {  // raw pixels 0–255, integer or float
      x = ((x.to(at::kDouble) / 255.0 - s.at("pixel_mean").get<double>()) /
           s.at("pixel_std").get<double>())
              .to(at::kFloat);
    }
  }
  check_all_finite(x, fmt::format("inputs of '{}'", path));
  const auto& t = training.train.x;
  // A Fashion-MNIST run takes flat (N, 784) or image-shaped inputs alike.
  if (training.statistics.contains("pixel_mean") && x.dim() >= 1 && x.size(0) > 0 &&
      x.numel() == x.size(0) * t[0].numel()) {
    auto shape = t.sizes().vec();
    shape[0] = x.size(0);
    x = x.reshape(shape);
  }
  const bool same_kind = at::isFloatingType(x.scalar_type()) == at::isFloatingType(t.scalar_type());
  check(x.sizes().slice(1) == t.sizes().slice(1) && same_kind,
        "The data file '{}' has examples of shape [{}] ({}), but the model was trained on [{}] "
        "({}).",
        path, fmt::join(x.sizes().slice(1), ", "), std::string(c10::toString(x.scalar_type())),
        fmt::join(t.sizes().slice(1), ", "), std::string(c10::toString(t.scalar_type())));
  return x.to(t.scalar_type()).contiguous();
}

}  // namespace blr::torch
