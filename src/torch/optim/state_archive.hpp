// Internal: the parts every blr optimizer's saved state shares — per-parameter keys, shapes in
// messages, and the versioned header (format version, optimizer name, step counter, groups with
// their learning rates and parameter counts) with its checks on load, so that each optimizer
// writes only its own tensors.
#pragma once

#include <fmt/format.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <string>
#include <vector>

#include "blr/core/error.hpp"

namespace blr::torch::detail {

/// "group0/param3/average".
inline std::string param_key(size_t group, size_t index, const char* what) {
  return fmt::format("group{}/param{}/{}", group, index, what);
}

/// "[2, 3]" for a shape.
inline std::string shape_string(::at::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

using ParamGroups = std::vector<::torch::optim::OptimizerParamGroup>;

/// Writes the header: format version, name, step counter t, and per group its learning rate and
/// number of parameters.
inline void write_state_header(::torch::serialize::OutputArchive& archive, const std::string& name,
                               int64_t version, int64_t step, const ParamGroups& groups) {
  archive.write("blr/format_version", c10::IValue(version));
  archive.write("blr/optimizer", c10::IValue(name));
  archive.write("blr/step", c10::IValue(step));
  archive.write("blr/groups", c10::IValue(static_cast<int64_t>(groups.size())));
  for (size_t g = 0; g < groups.size(); ++g) {
    archive.write(fmt::format("group{}/lr", g), c10::IValue(groups[g].options().get_lr()));
    archive.write(fmt::format("group{}/params", g),
                  c10::IValue(static_cast<int64_t>(groups[g].params().size())));
  }
}

/// Checks the header against this optimizer (exactly `version`, its name, its groups and their
/// parameter counts) before any tensor is read; one sentence per mismatch.
inline void check_state_header(::torch::serialize::InputArchive& archive, const std::string& name,
                               int64_t version, const ParamGroups& groups) {
  c10::IValue value;
  check(archive.try_read("blr/format_version", value),
        fmt::format("The archive holds no blr optimizer state (no format version); {} cannot "
                    "load it.",
                    name));
  check(value.isInt() && value.toInt() == version,
        fmt::format("The {} state has an unknown format version; this build reads version {}.",
                    name, version));
  archive.read("blr/optimizer", value);
  check(value.isString() && value.toStringRef() == name,
        fmt::format("The archive holds the state of another optimizer, not of {}.", name));
  archive.read("blr/groups", value);
  check(value.toInt() == static_cast<int64_t>(groups.size()),
        fmt::format("The saved {} state has {} param groups; this optimizer has {}.", name,
                    value.toInt(), groups.size()));
  for (size_t g = 0; g < groups.size(); ++g) {
    archive.read(fmt::format("group{}/params", g), value);
    check(value.toInt() == static_cast<int64_t>(groups[g].params().size()),
          fmt::format("The saved {} state has {} parameters in group {}; this optimizer has {}.",
                      name, value.toInt(), g, groups[g].params().size()));
  }
}

/// Puts the saved learning rates back into the groups and returns the saved step counter.
inline int64_t read_state_step(::torch::serialize::InputArchive& archive, ParamGroups& groups) {
  c10::IValue value;
  for (size_t g = 0; g < groups.size(); ++g) {
    archive.read(fmt::format("group{}/lr", g), value);
    groups[g].options().set_lr(value.toDouble());
  }
  archive.read("blr/step", value);
  return value.toInt();
}

}  // namespace blr::torch::detail
