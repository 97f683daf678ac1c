#include "blr/torch/data/dataset.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "blr/core/error.hpp"

namespace blr::torch {
namespace {

// The first index (in row-major order over the split's elements) whose value is not finite, or −1.
int64_t first_non_finite(const at::Tensor& t) {
  if (!at::isFloatingType(t.scalar_type())) return -1;
  const auto bad = at::logical_not(at::isfinite(t)).reshape(-1);
  if (!bad.any().item<bool>()) return -1;
  return bad.nonzero()[0][0].item<int64_t>();
}

void validate_split(const Dataset& d, const Split& s, const char* name, bool required) {
  if (!s.x.defined() && !s.y.defined()) {
    check(!required, "The data set '{}' has no {} split.", d.name, name);
    return;
  }
  check(s.x.defined() && s.y.defined(),
        "The {} split of '{}' has inputs but no targets, or targets but no inputs.", name, d.name);
  check(s.x.dim() >= 1 && s.y.dim() >= 1,
        "The {} split of '{}' needs inputs and targets with a first (example) dimension.", name,
        d.name);
  check(s.x.size(0) == s.y.size(0),
        "The {} split of '{}' has {} inputs but {} targets.", name, d.name, s.x.size(0),
        s.y.size(0));
  check(!required || s.x.size(0) > 0, "The {} split of '{}' is empty.", name, d.name);
  if (const auto i = first_non_finite(s.x); i >= 0) {
    throw Error(fmt::format("The {} inputs of '{}' hold a non-finite value at flat index {} "
                            "(example {}).",
                            name, d.name, i, i / std::max<int64_t>(1, s.x.numel() / s.x.size(0))));
  }
  if (d.task == Task::kClassification) {
    check(s.y.scalar_type() == at::kLong,
          "The {} targets of '{}' must be int64 class indices for classification; got {}.", name,
          d.name, std::string(c10::toString(s.y.scalar_type())));
    if (s.y.numel() > 0) {
      const auto out = at::logical_or(s.y.lt(0), s.y.ge(d.outputs)).reshape(-1);
      if (out.any().item<bool>()) {
        const auto i = out.nonzero()[0][0].item<int64_t>();
        throw Error(fmt::format("The {} targets of '{}' hold label {} at flat index {}; labels "
                                "must lie in [0, {}).",
                                name, d.name, s.y.reshape(-1)[i].item<int64_t>(), i, d.outputs));
      }
    }
  } else {
    check(at::isFloatingType(s.y.scalar_type()),
          "The {} targets of '{}' must be floating point for regression; got {}.", name, d.name,
          std::string(c10::toString(s.y.scalar_type())));
    const int64_t width = s.y.dim() == 1 ? 1 : s.y.size(1);
    check(s.y.dim() <= 2 && width == d.outputs,
          "The {} targets of '{}' have shape [{}]; regression needs (N) or (N, {}).", name, d.name,
          fmt::join(s.y.sizes(), ", "), d.outputs);
    if (const auto i = first_non_finite(s.y); i >= 0) {
      throw Error(fmt::format("The {} targets of '{}' hold a non-finite value at flat index {}.",
                              name, d.name, i));
    }
  }
}

}  // namespace

std::string task_name(Task task) {
  return task == Task::kClassification ? "classification" : "regression";
}

Task parse_task(const std::string& text) {
  if (text == "classification") return Task::kClassification;
  if (text == "regression") return Task::kRegression;
  throw Error(fmt::format("Unknown task '{}'; choose classification or regression.", text));
}

int64_t Split::size() const {
  return y.defined() && y.dim() >= 1 ? y.size(0) : 0;
}

void Dataset::validate() const {
  check(outputs >= 1, "The data set '{}' has {} outputs; it needs at least one.", name, outputs);
  check(task != Task::kClassification || outputs >= 2,
        "The classification data set '{}' has {} class; it needs at least two.", name, outputs);
  validate_split(*this, train, "training", true);
  validate_split(*this, validation, "validation", false);
  validate_split(*this, test, "test", true);
  validate_split(*this, test_shifted, "shifted test", false);
  // Every split's examples must have the training examples' shape and dtype.
  for (const auto* s : {&validation, &test, &test_shifted}) {
    if (!s->x.defined()) continue;
    check(s->x.sizes().slice(1) == train.x.sizes().slice(1) &&
              s->y.sizes().slice(1) == train.y.sizes().slice(1) &&
              s->x.scalar_type() == train.x.scalar_type() &&
              s->y.scalar_type() == train.y.scalar_type(),
          "The splits of '{}' disagree: training examples have input shape [{}] ({}), another "
          "split has [{}] ({}).",
          name, fmt::join(train.x.sizes().slice(1), ", "),
          std::string(c10::toString(train.x.scalar_type())), fmt::join(s->x.sizes().slice(1), ", "),
          std::string(c10::toString(s->x.scalar_type())));
  }
}

}  // namespace blr::torch
