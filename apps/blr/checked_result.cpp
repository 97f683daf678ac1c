#include "checked_result.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "blr/core/error.hpp"
#include "result_document.hpp"

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

// `result` holds the small entries: "features" and the per-coefficient arrays beside it.
[[noreturn]] void throw_not_finite(const nlohmann::json& result, const std::string& path,
                                   double value, const std::string& what) {
  std::string coefficient;
  // "mean[3]" beside "features": name the coefficient.
  const auto bracket = path.find('[');
  if (bracket != std::string::npos && path.find('.') == std::string::npos &&
      result.is_object() && result.contains("features") && result["features"].is_array()) {
    const std::size_t index = std::strtoul(path.c_str() + bracket + 1, nullptr, 10);
    const auto& features = result["features"];
    const auto key = path.substr(0, bracket);  // an array with one entry per coefficient?
    if (result.contains(key) && result[key].is_array() && result[key].size() == features.size() &&
        index < features.size() && features[index].is_string()) {
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

}  // namespace

void require_finite(const nlohmann::json& result, const std::string& what) {
  if (const auto hit = first_non_finite(result))
    throw_not_finite(result, hit->first, hit->second, what);
}

void require_finite(const ResultDocument& result, const std::string& what) {
  if (const auto hit = result.first_non_finite())
    throw_not_finite(result.fields, hit->first, hit->second, what);
}

}  // namespace blr::cli
