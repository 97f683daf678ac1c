#include "blr/model/linear_regression.hpp"

#include <fmt/format.h>

#include "blr/core/error.hpp"
#include "blr/model/regularizer.hpp"

namespace blr {

void LinearRegressionOptions::validate() const {
  check_positive("noise_precision", noise_precision);
  check_nonnegative("prior_precision", prior_precision);
}

LinearRegression::LinearRegression(Matrix inputs, Vector targets, Options options)
    : data_(std::move(inputs), std::move(targets), "LinearRegression"), options_(options) {
  options_.validate();
}

void LinearRegression::check_theta(const Vector& theta) const {
  check(theta.size() == dimension(),
        fmt::format("LinearRegression: θ has length {} but the model has {} parameters.",
                    theta.size(), dimension()));
}

double LinearRegression::value(const Vector& theta) const {
  check_theta(theta);
  const Vector r = data_.targets() - data_.inputs() * theta;
  return 0.5 * options_.noise_precision * data_.scale() * r.squaredNorm() +
         Ridge{options_.prior_precision}.value(theta);
}

Vector LinearRegression::gradient(const Vector& theta) const {
  Vector g;
  value_and_gradient(theta, g);
  return g;
}

double LinearRegression::value_and_gradient(const Vector& theta, Vector& gradient) const {
  check_theta(theta);
  const Vector r = data_.targets() - data_.inputs() * theta;
  const double c = options_.noise_precision * data_.scale();
  gradient = -c * (data_.inputs().transpose() * r);
  gradient += options_.prior_precision * theta;
  return 0.5 * c * r.squaredNorm() + Ridge{options_.prior_precision}.value(theta);
}

Matrix LinearRegression::hessian(const Vector& theta) const {
  check_theta(theta);
  Matrix h =
      options_.noise_precision * data_.scale() * (data_.inputs().transpose() * data_.inputs());
  h.diagonal().array() += options_.prior_precision;
  return h;
}

Vector LinearRegression::hessian_diagonal(const Vector& theta) const {
  check_theta(theta);
  Vector h = options_.noise_precision * data_.scale() *
             data_.inputs().array().square().colwise().sum().transpose();
  h.array() += options_.prior_precision;
  return h;
}

Vector LinearRegression::hessian_vector_product(const Vector& theta, const Vector& v) const {
  check_theta(theta);
  check_theta(v);
  Vector out = options_.noise_precision * data_.scale() *
               (data_.inputs().transpose() * (data_.inputs() * v));
  out += options_.prior_precision * v;
  return out;
}

Matrix LinearRegression::per_example_gradients(const Vector& theta) const {
  check_theta(theta);
  const Vector r = data_.targets() - data_.inputs() * theta;
  return data_.inputs().array().colwise() * (-options_.noise_precision * r).array();
}

Vector LinearRegression::regularizer_gradient(const Vector& theta) const {
  return options_.prior_precision * theta;
}

Vector LinearRegression::regularizer_hessian_diagonal(const Vector& theta) const {
  return Vector::Constant(theta.size(), options_.prior_precision);
}

LinearRegression LinearRegression::with_rows(const std::vector<Index>& rows) const {
  return LinearRegression(data_.restricted(rows, "LinearRegression"), options_);
}

}  // namespace blr
