#include "blr/model/softmax_regression.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/model/regularizer.hpp"

namespace blr {

namespace {
/// Row-wise softmax of Z in place; returns log Σ_k exp(z_ik) per row.
Vector softmax_rows(Matrix& z) {
  Vector lse(z.rows());
  for (Index i = 0; i < z.rows(); ++i) {
    const double top = z.row(i).maxCoeff();
    z.row(i).array() = (z.row(i).array() - top).exp();
    const double sum = z.row(i).sum();
    z.row(i) /= sum;
    lse[i] = top + std::log(sum);
  }
  return lse;
}
}  // namespace

void SoftmaxRegressionOptions::validate() const {
  check_nonnegative("prior_precision", prior_precision);
}

SoftmaxRegression::SoftmaxRegression(Matrix inputs, Vector labels, Index num_classes,
                                     Options options)
    : data_(std::move(inputs), std::move(labels), "SoftmaxRegression"),
      num_classes_(num_classes),
      options_(options) {
  options_.validate();
  check(num_classes_ >= 2,
        fmt::format("SoftmaxRegression: the number of classes must be at least 2; got {}.",
                    num_classes_));
  const Vector& y = data_.targets();
  for (Index i = 0; i < y.size(); ++i) {
    check(y[i] >= 0 && y[i] < static_cast<double>(num_classes_) && y[i] == std::floor(y[i]),
          fmt::format("SoftmaxRegression: label {} of row {} is not a class index in 0..{}.", y[i],
                      i, num_classes_ - 1));
  }
}

void SoftmaxRegression::check_theta(const Vector& theta) const {
  check(theta.size() == dimension(),
        fmt::format("SoftmaxRegression: θ has length {} but the model has {} parameters "
                    "({} classes × {} features).",
                    theta.size(), dimension(), num_classes_, num_features()));
}

Matrix SoftmaxRegression::probabilities(const Vector& theta, double* loss_sum) const {
  check_theta(theta);
  const Eigen::Map<const Matrix> w(theta.data(), num_features(), num_classes_);
  Matrix p = data_.inputs() * w;
  if (loss_sum != nullptr) {
    const Vector& y = data_.targets();
    double sum = 0.0;
    for (Index i = 0; i < p.rows(); ++i) sum -= p(i, static_cast<Index>(y[i]));
    sum += softmax_rows(p).sum();
    *loss_sum = sum;
  } else {
    softmax_rows(p);
  }
  return p;
}

double SoftmaxRegression::value(const Vector& theta) const {
  double sum = 0.0;
  probabilities(theta, &sum);
  return data_.scale() * sum + Ridge{options_.prior_precision}.value(theta);
}

Vector SoftmaxRegression::gradient(const Vector& theta) const {
  Vector g;
  value_and_gradient(theta, g);
  return g;
}

double SoftmaxRegression::value_and_gradient(const Vector& theta, Vector& gradient) const {
  double sum = 0.0;
  Matrix r = probabilities(theta, &sum);
  const Vector& y = data_.targets();
  for (Index i = 0; i < r.rows(); ++i) r(i, static_cast<Index>(y[i])) -= 1.0;
  const Matrix g = data_.scale() * (data_.inputs().transpose() * r);  // D×K
  gradient = g.reshaped();
  gradient += options_.prior_precision * theta;
  return data_.scale() * sum + Ridge{options_.prior_precision}.value(theta);
}

Matrix SoftmaxRegression::hessian(const Vector& theta) const {
  const Matrix p = probabilities(theta, nullptr);
  const Matrix& x = data_.inputs();
  const Index d = num_features();
  const Index k_count = num_classes_;
  Matrix h = Matrix::Zero(dimension(), dimension());
  for (Index k = 0; k < k_count; ++k) {
    for (Index l = k; l < k_count; ++l) {
      Vector w = -p.col(k).cwiseProduct(p.col(l));
      if (k == l) w += p.col(k);
      const Matrix block =
          data_.scale() * (x.transpose() * (x.array().colwise() * w.array()).matrix());
      h.block(k * d, l * d, d, d) = block;
      if (l != k) h.block(l * d, k * d, d, d) = block.transpose();
    }
  }
  h.diagonal().array() += options_.prior_precision;
  return h;
}

Vector SoftmaxRegression::hessian_diagonal(const Vector& theta) const {
  const Matrix p = probabilities(theta, nullptr);
  const Matrix w = (p.array() * (1.0 - p.array())).matrix();  // M×K
  const Matrix diag = data_.scale() * (data_.inputs().array().square().matrix().transpose() * w);
  Vector out = diag.reshaped();
  out.array() += options_.prior_precision;
  return out;
}

Vector SoftmaxRegression::hessian_vector_product(const Vector& theta, const Vector& v) const {
  check_theta(v);
  const Matrix p = probabilities(theta, nullptr);
  const Eigen::Map<const Matrix> vm(v.data(), num_features(), num_classes_);
  const Matrix u = data_.inputs() * vm;                // M×K
  const Matrix pu = (p.array() * u.array()).matrix();  // p ⊙ u
  const Vector pu_sum = pu.rowwise().sum();            // pᵀu per row
  const Matrix t = pu - (p.array().colwise() * pu_sum.array()).matrix();
  const Matrix out = data_.scale() * (data_.inputs().transpose() * t);
  Vector result = out.reshaped();
  result += options_.prior_precision * v;
  return result;
}

Matrix SoftmaxRegression::per_example_gradients(const Vector& theta) const {
  Matrix r = probabilities(theta, nullptr);
  const Vector& y = data_.targets();
  for (Index i = 0; i < r.rows(); ++i) r(i, static_cast<Index>(y[i])) -= 1.0;
  const Matrix& x = data_.inputs();
  const Index d = num_features();
  Matrix out(x.rows(), dimension());
  for (Index k = 0; k < num_classes_; ++k)
    out.middleCols(k * d, d) = x.array().colwise() * r.col(k).array();
  return out;
}

Vector SoftmaxRegression::regularizer_gradient(const Vector& theta) const {
  return options_.prior_precision * theta;
}

Vector SoftmaxRegression::regularizer_hessian_diagonal(const Vector& theta) const {
  return Vector::Constant(theta.size(), options_.prior_precision);
}

SoftmaxRegression SoftmaxRegression::with_rows(const std::vector<Index>& rows) const {
  return SoftmaxRegression(data_.restricted(rows, "SoftmaxRegression"), num_classes_, options_);
}

Matrix SoftmaxRegression::predict_probability(const Vector& theta, const Matrix& inputs) const {
  check_theta(theta);
  check(inputs.cols() == num_features(),
        fmt::format("SoftmaxRegression: the inputs have {} columns but the model has {} features.",
                    inputs.cols(), num_features()));
  const Eigen::Map<const Matrix> w(theta.data(), num_features(), num_classes_);
  Matrix p = inputs * w;
  softmax_rows(p);
  return p;
}

}  // namespace blr
