#include "blr/inference/merge.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"

namespace blr::inference {

Vector merge_natural(const Vector& prior, const std::vector<Vector>& posteriors, double scale) {
  check(!posteriors.empty(), "Merging needs at least one posterior.");
  check(scale > 0 && std::isfinite(scale),
        fmt::format("The merge scale must be a positive finite number; got {}.", scale));
  Vector sum = Vector::Zero(prior.size());
  for (size_t t = 0; t < posteriors.size(); ++t) {
    check(posteriors[t].size() == prior.size(),
          fmt::format("Posterior {} has {} natural parameters but the prior has {}.", t + 1,
                      posteriors[t].size(), prior.size()));
    sum += posteriors[t];
  }
  const double tasks = static_cast<double>(posteriors.size());
  return scale * sum + (1.0 - scale * tasks) * prior;
}

}  // namespace blr::inference
