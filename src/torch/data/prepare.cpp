#include "blr/torch/data/prepare.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <tuple>

#include "blr/core/error.hpp"
#include "blr/torch/data/split.hpp"

namespace blr::torch {
namespace {

void prepare_split_targets(Split& s, Task task, const std::string& what, const char* key) {
  if (!s.y.defined()) return;
  const auto& y = s.y;
  check(y.dim() >= 1, "The {}: '{}' is a scalar; it needs one target per example.", what, key);
  if (task == Task::kClassification) {
    if (at::isFloatingType(y.scalar_type())) {
      // In float64, exactly: LibTorch 1.13 has no floor for float16 on the CPU (a file with half
      // labels let its error escape; libFuzzer, fuzz/corpus/tensor_file/half-labels).
      const auto wide = y.to(at::kDouble);
      check_all_finite(wide, fmt::format("{}, key '{}',", what, key));
      const auto fractional = wide.ne(wide.floor()).reshape(-1);
      if (fractional.any().item<bool>()) {
        const auto i = fractional.nonzero()[0][0].item<int64_t>();
        throw Error(fmt::format("The {}: '{}' holds {} at flat index {}; class labels must be "
                                "whole numbers.",
                                what, key, wide.reshape(-1)[i].item<double>(), i));
      }
    } else {
      check(at::isIntegralType(y.scalar_type(), /*includeBool=*/false),
            "The {}: '{}' has dtype {}; class labels must be integers.", what, key,
            std::string(c10::toString(y.scalar_type())));
    }
    s.y = y.to(at::kLong).contiguous();
    const auto negative = s.y.lt(0).reshape(-1);
    if (negative.any().item<bool>()) {
      const auto i = negative.nonzero()[0][0].item<int64_t>();
      throw Error(fmt::format("The {}: '{}' holds label {} at flat index {}; class labels must "
                              "be 0, 1, 2, ...",
                              what, key, s.y.reshape(-1)[i].item<int64_t>(), i));
    }
  } else {
    check(at::isFloatingType(y.scalar_type()),
          "The {}: '{}' has dtype {}; regression targets must be floating point.", what, key,
          std::string(c10::toString(y.scalar_type())));
    check(y.dim() <= 2, "The {}: '{}' has shape [{}]; regression targets must be (N) or (N, D).",
          what, key, fmt::join(y.sizes(), ", "));
    check_all_finite(y, fmt::format("{}, key '{}',", what, key));
    s.y = y.to(at::kDouble).contiguous();  // float32 after standardisation (finish_dataset)
  }
}

// Column-wise (x − mean)/sd over the columns `columns` of the 2-D x of every split, with the
// training split's mean and population sd (in double); returns (mean, sd) per column.
std::pair<std::vector<double>, std::vector<double>> standardise(
    Dataset& d, at::Tensor Split::*member, const std::vector<int64_t>& columns,
    const std::vector<std::string>& names, const char* role) {
  std::vector<double> means, sds;
  auto& train = d.train.*member;
  const auto train2 = train.dim() == 1 ? train.unsqueeze(1) : train;
  for (size_t k = 0; k < columns.size(); ++k) {
    const auto c = train2.select(1, columns[k]).to(at::kDouble);
    const double mean = c.mean().item<double>();
    const double sd = c.std(/*unbiased=*/false).item<double>();
    const std::string name =
        k < names.size() ? fmt::format("'{}'", names[k]) : fmt::format("{}", columns[k]);
    check(std::isfinite(mean) && std::isfinite(sd),
          "The training {} column {} of '{}' has a mean or standard deviation that is not finite "
          "(mean {}, sd {}).",
          role, name, d.name, mean, sd);
    check(sd > 0, "The training {} column {} of '{}' is constant ({}); it cannot be standardised.",
          role, name, d.name, mean);
    means.push_back(mean);
    sds.push_back(sd);
  }
  for (Split* s : {&d.train, &d.validation, &d.test, &d.test_shifted}) {
    auto& t = s->*member;
    if (!t.defined()) continue;
    auto t2 = (t.dim() == 1 ? t.unsqueeze(1) : t).to(at::kDouble).clone();
    for (size_t k = 0; k < columns.size(); ++k) {
      auto col = t2.select(1, columns[k]);
      col.sub_(means[k]).div_(sds[k]);
    }
    t = t2.reshape(t.sizes()).contiguous();  // float32 at the end of finish_dataset
  }
  return {means, sds};
}

}  // namespace

void check_all_finite(const at::Tensor& t, const std::string& what) {
  if (!t.defined() || !at::isFloatingType(t.scalar_type()) || t.numel() == 0) return;
  const auto bad = at::logical_not(at::isfinite(t)).reshape(-1);
  if (!bad.any().item<bool>()) return;
  const auto i = bad.nonzero()[0][0].item<int64_t>();
  const int64_t per_example = t.dim() >= 1 && t.size(0) > 0 ? t.numel() / t.size(0) : 1;
  throw Error(fmt::format("The {} holds a non-finite value ({}) at flat index {} (example {}).",
                          what, t.reshape(-1)[i].item<double>(), i, i / per_example));
}

void prepare_targets(Dataset& d, const std::string& what) {
  prepare_split_targets(d.train, d.task, what, "y");
  prepare_split_targets(d.test, d.task, what, "y_test");
  if (d.task == Task::kClassification) {
    int64_t top = d.train.y.numel() > 0 ? d.train.y.max().item<int64_t>() : 0;
    if (d.test.y.defined() && d.test.y.numel() > 0) {
      top = std::max(top, d.test.y.max().item<int64_t>());
    }
    check(top <= 1'000'000, "The {} has class label {}; blr takes at most 1000000 classes.", what,
          top);
    d.outputs = std::max<int64_t>(2, top + 1);
  } else {
    d.outputs = d.train.y.dim() == 2 ? d.train.y.size(1) : 1;
    check(!d.test.y.defined() || d.test.y.sizes().slice(1) == d.train.y.sizes().slice(1),
          "The {} has training targets of shape [{}] but test targets of shape [{}].", what,
          fmt::join(d.train.y.sizes(), ", "), fmt::join(d.test.y.sizes(), ", "));
  }
}

void finish_dataset(Dataset& d, const PrepareOptions& o) {
  check(o.train_limit >= 0, "Option 'train-limit' must be >= 0; got {}.", o.train_limit);
  check(o.test_limit >= 0, "Option 'test-limit' must be >= 0; got {}.", o.test_limit);
  check_range("validation", o.validation_fraction, 0.0, 1.0, false, true);
  if (d.test.size() == 0) {
    std::tie(d.train, d.test) = hold_out(d.train, kTestFraction, kTestSplitSeed, "test");
    d.statistics["test_split"] = fmt::format(
        "{} % of the file's examples held out (seeded permutation, seed {})",
        kTestFraction * 100, kTestSplitSeed);
  }
  d.train = first(d.train, o.train_limit);
  d.test = first(d.test, o.test_limit);
  if (o.validation_fraction > 0) {
    std::tie(d.train, d.validation) =
        hold_out(d.train, o.validation_fraction, o.seed, "validation");
  }
  if (!o.standardise_columns.empty()) {
    check(d.train.x.dim() == 2, "Only 2-D inputs have feature columns to standardise.");
    auto [mean, sd] = standardise(d, &Split::x, o.standardise_columns, o.column_names, "feature");
    d.statistics["feature_mean"] = mean;
    d.statistics["feature_std"] = sd;
    d.statistics["standardised_features"] = o.column_names;
  }
  if (d.task == Task::kRegression) {
    std::vector<int64_t> columns(static_cast<size_t>(d.outputs));
    for (int64_t k = 0; k < d.outputs; ++k) columns[static_cast<size_t>(k)] = k;
    auto [mean, sd] = standardise(d, &Split::y, columns, {}, "target");
    d.statistics["target_mean"] = mean;
    d.statistics["target_std"] = sd;
  }
  // The models compute in float32: inputs and regression targets end there, finite.
  for (Split* s : {&d.train, &d.validation, &d.test, &d.test_shifted}) {
    if (s->x.defined() && at::isFloatingType(s->x.scalar_type())) {
      s->x = s->x.to(at::kFloat).contiguous();
      check_all_finite(s->x, fmt::format("inputs of '{}' (standardised, as float32)", d.name));
    }
    if (s->y.defined() && d.task == Task::kRegression) s->y = s->y.to(at::kFloat).contiguous();
  }
  d.validate();
}

}  // namespace blr::torch
