#include "checked_result.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "blr/core/error.hpp"

namespace blr::cli {

// glibc's stdout is an assignable variable; fmt::print and printf read it at each call.
HeldStdout::HeldStdout() {
  std::fflush(stdout);
  memory_ = ::open_memstream(&buffer_, &size_);
  if (memory_ == nullptr) return;  // no memory stream: print as usual
  saved_ = stdout;
  stdout = memory_;
}

HeldStdout::~HeldStdout() {
  restore();
  std::free(buffer_);
}

void HeldStdout::restore() {
  if (memory_ == nullptr) return;
  stdout = saved_;
  std::fclose(memory_);  // sets buffer_ and size_
  memory_ = nullptr;
}

void HeldStdout::release() {
  const bool held = memory_ != nullptr;
  restore();
  if (held && size_ > 0) {
    std::fwrite(buffer_, 1, size_, stdout);
    std::fflush(stdout);
  }
  std::free(buffer_);
  buffer_ = nullptr;
  size_ = 0;
}

namespace {

std::string describe(double v) {
  return std::isnan(v) ? "NaN" : (v > 0 ? "+infinity" : "-infinity");
}

// The first non-finite number under `node`, as a path such as "filtered_mean[37]".
std::optional<std::pair<std::string, double>> first_non_finite(const nlohmann::json& node) {
  // The path is built on the way back from a hit only: a result of 10^7 numbers is scanned
  // without formatting 10^7 paths.
  if (node.is_number_float()) {
    const double v = node.get<double>();
    if (!std::isfinite(v)) return std::make_pair(std::string(), v);
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (auto hit = first_non_finite(node[i]))
        return std::make_pair(fmt::format("[{}]{}", i, hit->first), hit->second);
    }
  } else if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (auto hit = first_non_finite(value)) {
        const std::string& rest = hit->first;
        return std::make_pair(rest.empty() || rest[0] == '[' ? key + rest : key + "." + rest,
                              hit->second);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

void require_finite(const nlohmann::json& result, const std::string& what) {
  const auto hit = first_non_finite(result);
  if (!hit) return;
  const auto& [path, value] = *hit;
  std::string coefficient;
  // "mean[3]" beside "features": name the coefficient.
  const auto bracket = path.find('[');
  if (bracket != std::string::npos && path.find('.') == std::string::npos &&
      result.is_object() && result.contains("features") && result["features"].is_array()) {
    const std::size_t index = std::strtoul(path.c_str() + bracket + 1, nullptr, 10);
    const auto& features = result["features"];
    const auto& array = result[path.substr(0, bracket)];  // one entry per coefficient?
    if (array.is_array() && array.size() == features.size() && index < features.size() &&
        features[index].is_string()) {
      coefficient = fmt::format(" (coefficient '{}')", features[index].get<std::string>());
    }
  } else if (bracket != std::string::npos &&
             (path.rfind("filtered_", 0) == 0 || path.rfind("smoothed_", 0) == 0)) {
    coefficient =
        fmt::format(" (time step {})", std::strtoul(path.c_str() + bracket + 1, nullptr, 10) + 1);
  }
  throw Error(fmt::format(
      "{} produced a result that is not finite: '{}'{} is {}; the data or the options are beyond "
      "what double precision can represent (rescale the data, e.g. --standardize, or use smaller "
      "values).",
      what, path, coefficient, describe(value)));
}

}  // namespace blr::cli
