#include "problems.hpp"

#include <cstdlib>
#include <filesystem>

#include "blr/core/error.hpp"

namespace blr::detail {

std::string data_file(const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> directories;
  if (const char* env = std::getenv("BLR_DATA_DIR"); env != nullptr && *env != '\0') directories.emplace_back(env);
  directories.emplace_back(BLR_SOURCE_DATA_DIR);
  directories.emplace_back(BLR_INSTALLED_DATA_DIR);
  for (const auto& directory : directories) {
    if (fs::is_regular_file(directory / name)) return (directory / name).string();
  }
  throw Error("Cannot find blr's data file '" + name + "' in BLR_DATA_DIR, " + BLR_SOURCE_DATA_DIR +
              " or " + BLR_INSTALLED_DATA_DIR + "; set BLR_DATA_DIR to the directory holding it.");
}

LogisticRegression synthetic_logistic(Index n, Index d, double prior_precision, std::uint64_t seed) {
  Rng rng(seed);
  Matrix x(n, d);
  Vector w(d);
  for (Index j = 0; j < d; ++j) w[j] = 1.5 * rng.normal();
  Vector y(n);
  for (Index i = 0; i < n; ++i) {
    x(i, 0) = 1.0;
    for (Index j = 1; j < d; ++j) x(i, j) = rng.normal();
    const double p = 1.0 / (1.0 + std::exp(-x.row(i).dot(w)));
    y[i] = rng.uniform() < p ? 1.0 : 0.0;
  }
  LogisticRegressionOptions options;
  options.prior_precision = prior_precision;
  return LogisticRegression(std::move(x), std::move(y), options);
}

LinearRegression synthetic_binary_regression(Index n, Index d, std::uint64_t seed, Vector* truth) {
  Rng rng(seed);
  Vector w(d);
  for (Index j = 0; j < d; ++j) w[j] = rng.uniform() < 0.5 ? -1.0 : 1.0;
  Matrix x(n, d);
  for (Index i = 0; i < n * d; ++i) x.data()[i] = rng.normal();
  Vector y = x * w;
  for (Index i = 0; i < n; ++i) y[i] += 0.5 * rng.normal();
  if (truth != nullptr) *truth = w;
  return LinearRegression(std::move(x), std::move(y));
}

}  // namespace blr::detail
