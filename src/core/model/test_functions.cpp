#include "blr/model/test_functions.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"

namespace blr {

namespace {
void check_size(const char* name, const Vector& theta, Index d) {
  check(theta.size() == d, fmt::format("{}: θ has length {} but the function takes {} variables.",
                                       name, theta.size(), d));
}
}  // namespace

// ---- Rosenbrock --------------------------------------------------------------------------------

Rosenbrock::Rosenbrock(Index d, double a, double b) : d_(d), a_(a), b_(b) {
  check(d >= 2, fmt::format("Rosenbrock: the dimension must be at least 2; got {}.", d));
  check(std::isfinite(a) && std::isfinite(b), "Rosenbrock: the parameters a and b must be finite.");
}

double Rosenbrock::value(const Vector& x) const {
  check_size("Rosenbrock", x, d_);
  double f = 0.0;
  for (Index i = 0; i + 1 < d_; ++i) {
    const double u = x[i + 1] - x[i] * x[i];
    const double w = a_ - x[i];
    f += b_ * u * u + w * w;
  }
  return f;
}

Vector Rosenbrock::gradient(const Vector& x) const {
  check_size("Rosenbrock", x, d_);
  Vector g = Vector::Zero(d_);
  for (Index i = 0; i + 1 < d_; ++i) {
    const double u = x[i + 1] - x[i] * x[i];
    g[i] += -4.0 * b_ * x[i] * u - 2.0 * (a_ - x[i]);
    g[i + 1] += 2.0 * b_ * u;
  }
  return g;
}

Matrix Rosenbrock::hessian(const Vector& x) const {
  check_size("Rosenbrock", x, d_);
  Matrix h = Matrix::Zero(d_, d_);
  for (Index i = 0; i + 1 < d_; ++i) {
    h(i, i) += 12.0 * b_ * x[i] * x[i] - 4.0 * b_ * x[i + 1] + 2.0;
    h(i, i + 1) += -4.0 * b_ * x[i];
    h(i + 1, i) += -4.0 * b_ * x[i];
    h(i + 1, i + 1) += 2.0 * b_;
  }
  return h;
}

Vector Rosenbrock::hessian_diagonal(const Vector& x) const {
  check_size("Rosenbrock", x, d_);
  Vector h = Vector::Zero(d_);
  for (Index i = 0; i + 1 < d_; ++i) {
    h[i] += 12.0 * b_ * x[i] * x[i] - 4.0 * b_ * x[i + 1] + 2.0;
    h[i + 1] += 2.0 * b_;
  }
  return h;
}

Vector Rosenbrock::hessian_vector_product(const Vector& x, const Vector& v) const {
  check_size("Rosenbrock", x, d_);
  check_size("Rosenbrock", v, d_);
  Vector out = Vector::Zero(d_);
  for (Index i = 0; i + 1 < d_; ++i) {
    const double hii = 12.0 * b_ * x[i] * x[i] - 4.0 * b_ * x[i + 1] + 2.0;
    const double hij = -4.0 * b_ * x[i];
    out[i] += hii * v[i] + hij * v[i + 1];
    out[i + 1] += hij * v[i] + 2.0 * b_ * v[i + 1];
  }
  return out;
}

// ---- Himmelblau --------------------------------------------------------------------------------

double Himmelblau::value(const Vector& t) const {
  check_size("Himmelblau", t, 2);
  const double a = t[0] * t[0] + t[1] - 11.0;
  const double b = t[0] + t[1] * t[1] - 7.0;
  return a * a + b * b;
}

Vector Himmelblau::gradient(const Vector& t) const {
  check_size("Himmelblau", t, 2);
  const double x = t[0], y = t[1];
  const double a = x * x + y - 11.0;
  const double b = x + y * y - 7.0;
  return Vector{{4.0 * x * a + 2.0 * b, 2.0 * a + 4.0 * y * b}};
}

Matrix Himmelblau::hessian(const Vector& t) const {
  check_size("Himmelblau", t, 2);
  const double x = t[0], y = t[1];
  const double hxy = 4.0 * (x + y);
  return Matrix{{12.0 * x * x + 4.0 * y - 42.0, hxy}, {hxy, 4.0 * x + 12.0 * y * y - 26.0}};
}

Vector Himmelblau::hessian_diagonal(const Vector& t) const {
  return hessian(t).diagonal();
}

Vector Himmelblau::hessian_vector_product(const Vector& t, const Vector& v) const {
  check_size("Himmelblau", v, 2);
  return hessian(t) * v;
}

double Himmelblau::expected_value(const Vector& m, double v) {
  check_size("Himmelblau", m, 2);
  const double a = m[0] * m[0] + v + m[1] - 11.0;
  const double b = m[1] * m[1] + v + m[0] - 7.0;
  return a * a + b * b + 4.0 * v * (m[0] * m[0] + m[1] * m[1]) + 4.0 * v * v + 2.0 * v;
}

Vector Himmelblau::expected_gradient(const Vector& m, double v) {
  check_size("Himmelblau", m, 2);
  const double a = m[0] * m[0] + v + m[1] - 11.0;
  const double b = m[1] * m[1] + v + m[0] - 7.0;
  return Vector{
      {4.0 * m[0] * a + 2.0 * b + 8.0 * v * m[0], 2.0 * a + 4.0 * m[1] * b + 8.0 * v * m[1]}};
}

Matrix Himmelblau::expected_hessian(const Vector& m, double v) {
  check_size("Himmelblau", m, 2);
  // E[x²] = m₁² + v; the Hessian entries are affine in x², y², x, y.
  const double hxy = 4.0 * (m[0] + m[1]);
  return Matrix{{12.0 * (m[0] * m[0] + v) + 4.0 * m[1] - 42.0, hxy},
                {hxy, 4.0 * m[0] + 12.0 * (m[1] * m[1] + v) - 26.0}};
}

// ---- Branin ------------------------------------------------------------------------------------

namespace {
struct BraninConstants {
  static constexpr double pi = std::numbers::pi;
  static constexpr double a = 1.0;
  static constexpr double b = 5.1 / (4.0 * pi * pi);
  static constexpr double c = 5.0 / pi;
  static constexpr double r = 6.0;
  static constexpr double s = 10.0;
  static constexpr double t = 1.0 / (8.0 * pi);
};
}  // namespace

double Branin::value(const Vector& th) const {
  check_size("Branin", th, 2);
  using K = BraninConstants;
  const double x = th[0], y = th[1];
  const double u = y - K::b * x * x + K::c * x - K::r;
  return K::a * u * u + K::s * (1.0 - K::t) * std::cos(x) + K::s;
}

Vector Branin::gradient(const Vector& th) const {
  check_size("Branin", th, 2);
  using K = BraninConstants;
  const double x = th[0], y = th[1];
  const double u = y - K::b * x * x + K::c * x - K::r;
  const double du = -2.0 * K::b * x + K::c;
  return Vector{{2.0 * K::a * u * du - K::s * (1.0 - K::t) * std::sin(x), 2.0 * K::a * u}};
}

Matrix Branin::hessian(const Vector& th) const {
  check_size("Branin", th, 2);
  using K = BraninConstants;
  const double x = th[0], y = th[1];
  const double u = y - K::b * x * x + K::c * x - K::r;
  const double du = -2.0 * K::b * x + K::c;
  const double hxx = 2.0 * K::a * (du * du - 2.0 * K::b * u) - K::s * (1.0 - K::t) * std::cos(x);
  const double hxy = 2.0 * K::a * du;
  return Matrix{{hxx, hxy}, {hxy, 2.0 * K::a}};
}

Vector Branin::hessian_diagonal(const Vector& th) const {
  return hessian(th).diagonal();
}

Vector Branin::hessian_vector_product(const Vector& th, const Vector& v) const {
  check_size("Branin", v, 2);
  return hessian(th) * v;
}

// ---- six-hump camel ----------------------------------------------------------------------------

double SixHumpCamel::value(const Vector& t) const {
  check_size("SixHumpCamel", t, 2);
  const double x = t[0], y = t[1];
  const double x2 = x * x, y2 = y * y;
  return (4.0 - 2.1 * x2 + x2 * x2 / 3.0) * x2 + x * y + (-4.0 + 4.0 * y2) * y2;
}

Vector SixHumpCamel::gradient(const Vector& t) const {
  check_size("SixHumpCamel", t, 2);
  const double x = t[0], y = t[1];
  const double x2 = x * x;
  return Vector{{8.0 * x - 8.4 * x2 * x + 2.0 * x2 * x2 * x + y, x - 8.0 * y + 16.0 * y * y * y}};
}

Matrix SixHumpCamel::hessian(const Vector& t) const {
  check_size("SixHumpCamel", t, 2);
  const double x = t[0], y = t[1];
  const double x2 = x * x;
  return Matrix{{8.0 - 25.2 * x2 + 10.0 * x2 * x2, 1.0}, {1.0, -8.0 + 48.0 * y * y}};
}

Vector SixHumpCamel::hessian_diagonal(const Vector& t) const {
  return hessian(t).diagonal();
}

Vector SixHumpCamel::hessian_vector_product(const Vector& t, const Vector& v) const {
  check_size("SixHumpCamel", v, 2);
  return hessian(t) * v;
}

}  // namespace blr
