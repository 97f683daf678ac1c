#include "blr/model/logistic_regression.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/model/regularizer.hpp"

namespace blr {

void LogisticRegressionOptions::validate() const {
  check_nonnegative("prior_precision", prior_precision);
}

LogisticRegression::LogisticRegression(Matrix inputs, Vector targets, Options options)
    : data_(std::move(inputs), std::move(targets), "LogisticRegression"), options_(options) {
  options_.validate();
  const Vector& y = data_.targets();
  for (Index i = 0; i < y.size(); ++i) {
    check(y[i] == 0.0 || y[i] == 1.0,
          fmt::format("LogisticRegression: label {} of row {} is not 0 or 1.", y[i], i));
  }
}

void LogisticRegression::check_theta(const Vector& theta) const {
  check(theta.size() == dimension(),
        fmt::format("LogisticRegression: θ has length {} but the model has {} parameters.",
                    theta.size(), dimension()));
}

double LogisticRegression::value(const Vector& theta) const {
  check_theta(theta);
  const Vector z = data_.inputs() * theta;
  const Vector& y = data_.targets();
  double sum = 0.0;
  for (Index i = 0; i < z.size(); ++i) sum += log1p_exp(z[i]) - y[i] * z[i];
  return data_.scale() * sum + Ridge{options_.prior_precision}.value(theta);
}

Vector LogisticRegression::gradient(const Vector& theta) const {
  Vector g;
  value_and_gradient(theta, g);
  return g;
}

double LogisticRegression::value_and_gradient(const Vector& theta, Vector& gradient) const {
  check_theta(theta);
  const Vector z = data_.inputs() * theta;
  const Vector& y = data_.targets();
  Vector r(z.size());
  double sum = 0.0;
  for (Index i = 0; i < z.size(); ++i) {
    sum += log1p_exp(z[i]) - y[i] * z[i];
    r[i] = sigmoid(z[i]) - y[i];
  }
  gradient = data_.scale() * (data_.inputs().transpose() * r);
  gradient += options_.prior_precision * theta;
  return data_.scale() * sum + Ridge{options_.prior_precision}.value(theta);
}

namespace {
Vector curvature_weights(const Vector& z) {
  Vector w(z.size());
  for (Index i = 0; i < z.size(); ++i) {
    const double p = sigmoid(z[i]);
    w[i] = p * (1.0 - p);
  }
  return w;
}
}  // namespace

Matrix LogisticRegression::hessian(const Vector& theta) const {
  check_theta(theta);
  const Matrix& x = data_.inputs();
  const Vector w = curvature_weights(x * theta);
  Matrix h = data_.scale() * (x.transpose() * (x.array().colwise() * w.array()).matrix());
  h.diagonal().array() += options_.prior_precision;
  return 0.5 * (h + h.transpose());
}

Vector LogisticRegression::hessian_diagonal(const Vector& theta) const {
  check_theta(theta);
  const Matrix& x = data_.inputs();
  const Vector w = curvature_weights(x * theta);
  Vector h = data_.scale() * (x.array().square().matrix().transpose() * w);
  h.array() += options_.prior_precision;
  return h;
}

Vector LogisticRegression::hessian_vector_product(const Vector& theta, const Vector& v) const {
  check_theta(theta);
  check_theta(v);
  const Matrix& x = data_.inputs();
  const Vector w = curvature_weights(x * theta);
  Vector out = data_.scale() * (x.transpose() * (w.cwiseProduct(x * v)));
  out += options_.prior_precision * v;
  return out;
}

Matrix LogisticRegression::per_example_gradients(const Vector& theta) const {
  check_theta(theta);
  const Vector z = data_.inputs() * theta;
  Vector r(z.size());
  for (Index i = 0; i < z.size(); ++i) r[i] = sigmoid(z[i]) - data_.targets()[i];
  return data_.inputs().array().colwise() * r.array();
}

Vector LogisticRegression::regularizer_gradient(const Vector& theta) const {
  return options_.prior_precision * theta;
}

Vector LogisticRegression::regularizer_hessian_diagonal(const Vector& theta) const {
  return Vector::Constant(theta.size(), options_.prior_precision);
}

LogisticRegression LogisticRegression::with_rows(const std::vector<Index>& rows) const {
  return LogisticRegression(data_.restricted(rows, "LogisticRegression"), options_);
}

Vector LogisticRegression::predict_probability(const Vector& theta, const Matrix& inputs) const {
  check_theta(theta);
  check(inputs.cols() == dimension(),
        fmt::format("LogisticRegression: the inputs have {} columns but the model has {} features.",
                    inputs.cols(), dimension()));
  Vector z = inputs * theta;
  for (Index i = 0; i < z.size(); ++i) z[i] = sigmoid(z[i]);
  return z;
}

}  // namespace blr
