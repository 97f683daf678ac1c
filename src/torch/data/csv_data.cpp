#include "blr/torch/data/csv_data.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "blr/core/error.hpp"
#include "blr/io/csv.hpp"
#include "blr/io/design.hpp"
#include "blr/torch/data/prepare.hpp"

namespace blr::torch {
namespace {

at::Tensor to_tensor(const Matrix& m) {
  auto out = at::empty({static_cast<int64_t>(m.rows()), static_cast<int64_t>(m.cols())},
                       at::kDouble);
  auto a = out.accessor<double, 2>();
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) a[i][j] = m(i, j);
  return out;  // double until standardised (data/prepare.hpp)
}

}  // namespace

CsvData read_csv_data(const CsvDataOptions& o, const std::string& inputs_path) {
  check(o.missing == "error" || o.missing == "drop",
        "Option 'missing' must be error or drop; got '{}'.", o.missing);
  check(o.task == "classification" || o.task == "regression",
        "A CSV data set needs --task classification or --task regression; got '{}'.", o.task);
  auto raw = io::CsvTable::read(o.path);
  check(!raw.columns().empty(), "The CSV file '{}' has no columns.", o.path);
  const std::string label = o.label.empty() ? raw.columns().back() : o.label;
  raw.column_index(label);
  const auto features = raw.columns_except({label});
  check(!features.empty(), "The CSV file '{}' has no feature columns besides the label '{}'.",
        o.path, label);
  for (const auto& c : o.categorical) {
    check(c != label, "Column '{}' is the label; --categorical names feature columns.", c);
    raw.column_index(c);
  }
  std::vector<std::string> used = features;
  used.push_back(label);
  const auto train = io::apply_missing_policy(std::move(raw), used, o.missing);
  check(train.rows() >= 2, "The CSV file '{}' has {} data rows; blr needs at least two.", o.path,
        train.rows());
  std::optional<io::CsvTable> test;
  if (!o.test_path.empty())
    test = io::apply_missing_policy(io::CsvTable::read(o.test_path), used, o.missing);

  auto [encoder, x_train] = io::DesignEncoder::fit_transform(
      train, {features, o.categorical, /*standardize=*/false, /*intercept=*/false});
  CsvData out;
  Dataset& d = out.data;
  d.name = o.path;
  d.task = parse_task(o.task);
  d.train.x = to_tensor(x_train);
  if (test) d.test.x = to_tensor(encoder.transform(*test));
  if (!inputs_path.empty()) {
    out.inputs = to_tensor(encoder.transform(
        io::apply_missing_policy(io::CsvTable::read(inputs_path), features, "error")));
  }
  const auto& names = encoder.names();
  for (size_t j = 0; j < names.size(); ++j) {
    if (std::find(o.categorical.begin(), o.categorical.end(), names[j]) == o.categorical.end() &&
        std::find(features.begin(), features.end(), names[j]) != features.end()) {
      out.numeric_columns.push_back(static_cast<int64_t>(j));
      out.numeric_names.push_back(names[j]);
    }
  }
  d.statistics["features"] = names;
  d.statistics["label"] = label;
  if (d.task == Task::kClassification) {
    const auto distinct = train.distinct(label, kMaxCsvClasses);
    check(distinct.size() <= kMaxCsvClasses,
          "Column '{}' of '{}' has more than {} distinct values; a regression response needs "
          "--task regression.",
          label, o.path, kMaxCsvClasses);
    check(distinct.size() >= 2, "Column '{}' of '{}' holds a single class; classification needs two.",
          label, o.path);
    // The design encoder orders levels (numerically when all are numbers): those are the classes.
    const auto coding = io::DesignEncoder::fit(train, {{label}, {label}, false, false});
    const auto& classes = coding.levels(label);
    const auto labels = [&](const io::CsvTable& t) {
      const auto v = t.class_labels(label, classes);
      return at::tensor(std::vector<int64_t>(v.begin(), v.end()), at::kLong);
    };
    d.train.y = labels(train);
    if (test) d.test.y = labels(*test);
    d.outputs = static_cast<int64_t>(classes.size());
    d.statistics["classes"] = classes;
  } else {
    const auto column = [&](const io::CsvTable& t) {
      const Vector v = t.numeric_column(label);
      return at::tensor(std::vector<double>(v.data(), v.data() + v.size()), at::kDouble);
    };
    d.train.y = column(train);
    if (test) d.test.y = column(*test);
    d.outputs = 1;
  }
  return out;
}

}  // namespace blr::torch
