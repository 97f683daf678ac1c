#include "blr/inference/kernels.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "blr/core/error.hpp"

namespace blr::inference {
namespace {

constexpr KernelKind kKinds[] = {KernelKind::rbf,    KernelKind::matern32, KernelKind::matern52,
                                 KernelKind::linear, KernelKind::white,    KernelKind::constant};

/// |a_i − b_j|² for all row pairs, clamped at 0 against rounding.
Matrix squared_distances(const Matrix& a, const Matrix& b) {
  const Vector na = a.rowwise().squaredNorm(), nb = b.rowwise().squaredNorm();
  Matrix d2 = (-2.0 * a * b.transpose()).colwise() + na;
  d2.rowwise() += nb.transpose();
  return d2.cwiseMax(0.0);
}

/// The inputs divided by the length-scales (one for all columns, or one per column).
Matrix scaled(const Matrix& x, const Vector& lengthscales) {
  if (lengthscales.size() == 1) return x / lengthscales[0];
  check(lengthscales.size() == x.cols(),
        fmt::format("The kernel has {} length-scales (ARD) but the inputs have {} columns.",
                    lengthscales.size(), x.cols()));
  return x * lengthscales.cwiseInverse().asDiagonal();
}

/// Stationary k / σ² as a function of the scaled squared distance r².
Matrix stationary_shape(KernelKind kind, const Matrix& r2) {
  switch (kind) {
    case KernelKind::rbf:
      return (-0.5 * r2.array()).exp().matrix();
    case KernelKind::matern32: {
      const auto s = (3.0 * r2.array()).sqrt();
      return ((1.0 + s) * (-s).exp()).matrix();
    }
    case KernelKind::matern52: {
      const auto s = (5.0 * r2.array()).sqrt();
      return ((1.0 + s + s.square() / 3.0) * (-s).exp()).matrix();
    }
    default:
      throw Error("Internal: a kernel without length-scales has no stationary shape.");
  }
}

/// The factor g with ∂k/∂log ℓ_d = σ² (Δ_d²/ℓ_d²) g(r²) (the header's gradients).
Matrix lengthscale_factor(KernelKind kind, const Matrix& r2) {
  switch (kind) {
    case KernelKind::rbf:
      return (-0.5 * r2.array()).exp().matrix();
    case KernelKind::matern32:
      return (3.0 * (-(3.0 * r2.array()).sqrt()).exp()).matrix();
    case KernelKind::matern52: {
      const auto s = (5.0 * r2.array()).sqrt();
      return (5.0 * (1.0 + s) * (-s).exp() / 3.0).matrix();
    }
    default:
      throw Error("Internal: a kernel without length-scales has no length-scale gradient.");
  }
}

Matrix base_matrix(const BaseKernel& k, const Matrix& a, const Matrix& b, bool same) {
  switch (k.kind) {
    case KernelKind::linear:
      return k.variance * a * b.transpose();
    case KernelKind::white:
      return same ? Matrix(k.variance * Matrix::Identity(a.rows(), b.rows()))
                  : Matrix(Matrix::Zero(a.rows(), b.rows()));
    case KernelKind::constant:
      return Matrix::Constant(a.rows(), b.rows(), k.variance);
    default:
      return k.variance *
             stationary_shape(k.kind, squared_distances(scaled(a, k.lengthscales),
                                                        scaled(b, k.lengthscales)));
  }
}

/// ∂K/∂θ of one factor over one set of inputs, in its parameters' order (ℓ…, σ²).
std::vector<Matrix> base_gradients(const BaseKernel& k, const Matrix& x) {
  std::vector<Matrix> out;
  if (is_stationary(k.kind)) {
    const Matrix xs = scaled(x, k.lengthscales);
    const Matrix r2 = squared_distances(xs, xs);
    const Matrix g = k.variance * lengthscale_factor(k.kind, r2);
    if (k.lengthscales.size() == 1) {
      out.push_back(r2.cwiseProduct(g));
    } else {
      for (Index d = 0; d < k.lengthscales.size(); ++d) {
        const Matrix column = xs.col(d);
        out.push_back(squared_distances(column, column).cwiseProduct(g));
      }
    }
  }
  out.push_back(base_matrix(k, x, x, true));
  return out;
}

Index parameter_count(const BaseKernel& k) {
  return (is_stationary(k.kind) ? k.lengthscales.size() : 0) + 1;
}

/// "rbf(ℓ=1.3, σ²=2)" or with ARD "rbf(ℓ=[1, 2], σ²=2)".
std::string describe_base(const BaseKernel& k) {
  if (!is_stationary(k.kind)) return fmt::format("{}(σ²={:.6g})", to_string(k.kind), k.variance);
  const std::string l =
      k.lengthscales.size() == 1
          ? fmt::format("{:.6g}", k.lengthscales[0])
          : fmt::format("[{:.6g}]", fmt::join(k.lengthscales.data(),
                                               k.lengthscales.data() + k.lengthscales.size(), ", "));
  return fmt::format("{}(ℓ={}, σ²={:.6g})", to_string(k.kind), l, k.variance);
}

// ---- the expression parser ----------------------------------------------------------------------

class Parser {
 public:
  Parser(std::string text, double lengthscale, double variance)
      : text_(std::move(text)), lengthscale_(lengthscale), variance_(variance) {}

  std::vector<std::vector<BaseKernel>> parse() {
    std::vector<std::vector<BaseKernel>> terms;
    do {
      std::vector<BaseKernel> factors;
      do {
        factors.push_back(base());
      } while (take('*'));
      terms.push_back(std::move(factors));
    } while (take('+'));
    skip_space();
    if (pos_ < text_.size()) fail(fmt::format("'{}' is not '+' or '*'", text_.substr(pos_, 1)));
    return terms;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format(
        "The kernel '{}' does not parse at character {}: {}; write terms of base kernels ({}) "
        "joined by '+' and '*', each with optional values, e.g. 'rbf(l=1.5,v=2)*linear+white'.",
        text_, pos_ + 1, what, "rbf, matern32, matern52, linear, white, constant"));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string word() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  double number() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::string_view("0123456789.eE+-").find(text_[pos_]) !=
                                      std::string_view::npos)
      ++pos_;
    double value = 0;
    const auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (ec != std::errc() || end != text_.data() + pos_ || start == pos_) {
      pos_ = start;
      fail("a value must be a decimal number");
    }
    return value;
  }
  BaseKernel base() {
    const std::string name = word();
    if (name.empty()) fail("a base kernel's name is missing");
    BaseKernel k;
    bool known = false;
    for (KernelKind kind : kKinds) known = known || to_string(kind) == name;
    if (!known) {
      pos_ -= name.size();
      fail(fmt::format("'{}' is not a base kernel", name));
    }
    k.kind = parse_kernel(name);
    k.lengthscales = is_stationary(k.kind) ? Vector::Constant(1, lengthscale_) : Vector();
    k.variance = variance_;
    if (!take('(')) return k;
    do {
      const std::string key = word();
      if (!take('=')) fail(fmt::format("'{}' needs '=' and a value", key));
      const double value = number();
      if (key == "variance" || key == "v") {
        k.variance = value;
      } else if ((key == "lengthscale" || key == "l") && is_stationary(k.kind)) {
        k.lengthscales = Vector::Constant(1, value);
      } else {
        fail(fmt::format("'{}' is not a value of {} ({})", key, name,
                         is_stationary(k.kind) ? "lengthscale or l, variance or v"
                                               : "variance or v"));
      }
    } while (take(','));
    if (!take(')')) fail("')' is missing");
    return k;
  }

  std::string text_;
  double lengthscale_, variance_;
  size_t pos_ = 0;
};

}  // namespace

std::string to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::rbf:
      return "rbf";
    case KernelKind::matern32:
      return "matern32";
    case KernelKind::matern52:
      return "matern52";
    case KernelKind::linear:
      return "linear";
    case KernelKind::white:
      return "white";
    case KernelKind::constant:
      return "constant";
  }
  return "?";
}

KernelKind parse_kernel(const std::string& name) {
  for (KernelKind k : kKinds)
    if (to_string(k) == name) return k;
  throw Error(fmt::format(
      "'{}' is not a base kernel; the kernels are rbf, matern32, matern52, linear, white and "
      "constant.",
      name));
}

bool is_stationary(KernelKind kind) {
  return kind == KernelKind::rbf || kind == KernelKind::matern32 || kind == KernelKind::matern52;
}

Kernel::Kernel(KernelKind kind, double lengthscale, double variance) {
  terms_ = {{BaseKernel{kind, is_stationary(kind) ? Vector::Constant(1, lengthscale) : Vector(),
                        variance}}};
}

Kernel Kernel::parse(const std::string& expression, double lengthscale, double variance) {
  Kernel k;
  k.terms_ = Parser(expression, lengthscale, variance).parse();
  return k;
}

Kernel Kernel::operator+(const Kernel& other) const {
  Kernel out = *this;
  out.terms_.insert(out.terms_.end(), other.terms_.begin(), other.terms_.end());
  return out;
}

Kernel Kernel::operator*(const Kernel& other) const {
  check(terms_.size() == 1 && other.terms_.size() == 1,
        "A product of kernels takes products, not sums: (a + b)·c has no expression here; write "
        "a·c + b·c.");
  Kernel out = *this;
  out.terms_[0].insert(out.terms_[0].end(), other.terms_[0].begin(), other.terms_[0].end());
  return out;
}

Kernel Kernel::with_ard(Index columns) const {
  check(columns >= 1, "ARD needs at least one input column.");
  Kernel out = *this;
  for (auto& term : out.terms_)
    for (auto& f : term)
      if (is_stationary(f.kind)) f.lengthscales = Vector::Constant(columns, f.lengthscales[0]);
  return out;
}

std::string Kernel::expression() const {
  std::vector<std::string> terms;
  for (const auto& term : terms_) {
    std::vector<std::string> factors;
    for (const auto& f : term) factors.push_back(to_string(f.kind));
    terms.push_back(fmt::format("{}", fmt::join(factors, "*")));
  }
  return fmt::format("{}", fmt::join(terms, "+"));
}

std::string Kernel::describe() const {
  std::vector<std::string> terms;
  for (const auto& term : terms_) {
    std::vector<std::string> factors;
    for (const auto& f : term) factors.push_back(describe_base(f));
    terms.push_back(fmt::format("{}", fmt::join(factors, " * ")));
  }
  return fmt::format("{}", fmt::join(terms, " + "));
}

void Kernel::validate() const {
  check(!terms_.empty(), "A kernel needs at least one base kernel.");
  for (const auto& term : terms_) {
    check(!term.empty(), "A kernel's product needs at least one factor.");
    for (const auto& f : term) {
      if (is_stationary(f.kind)) {
        check(f.lengthscales.size() >= 1, "A stationary kernel needs a length-scale.");
        for (Index d = 0; d < f.lengthscales.size(); ++d)
          check_positive("lengthscale", f.lengthscales[d]);
      }
      check_positive("variance", f.variance);
    }
  }
}

Matrix Kernel::matrix(const Matrix& a, const Matrix& b) const {
  validate();
  check(a.cols() == b.cols(), "Kernel inputs must have the same number of columns.");
  const bool same = &a == &b;
  Matrix sum = Matrix::Zero(a.rows(), b.rows());
  for (const auto& term : terms_) {
    Matrix product = base_matrix(term[0], a, b, same);
    for (size_t i = 1; i < term.size(); ++i)
      product.array() *= base_matrix(term[i], a, b, same).array();
    sum += product;
  }
  return sum;
}

Vector Kernel::diagonal(const Matrix& x) const {
  validate();
  Vector sum = Vector::Zero(x.rows());
  for (const auto& term : terms_) {
    Vector product = Vector::Ones(x.rows());
    for (const auto& f : term) {
      if (f.kind == KernelKind::linear) {
        product.array() *= f.variance * x.rowwise().squaredNorm().array();
      } else {
        product *= f.variance;  // stationary shapes, white and constant are σ² at r = 0
      }
    }
    sum += product;
  }
  return sum;
}

std::vector<Matrix> Kernel::gradients(const Matrix& x) const {
  validate();
  std::vector<Matrix> out;
  for (const auto& term : terms_) {
    std::vector<Matrix> values;
    for (const auto& f : term) values.push_back(base_matrix(f, x, x, true));
    for (size_t i = 0; i < term.size(); ++i) {
      Matrix others = Matrix::Ones(x.rows(), x.rows());
      for (size_t j = 0; j < term.size(); ++j)
        if (j != i) others.array() *= values[j].array();
      for (Matrix& g : base_gradients(term[i], x)) out.push_back(g.cwiseProduct(others));
    }
  }
  return out;
}

Vector Kernel::log_parameters() const {
  std::vector<double> theta;
  for (const auto& term : terms_)
    for (const auto& f : term) {
      if (is_stationary(f.kind))
        for (Index d = 0; d < f.lengthscales.size(); ++d) theta.push_back(std::log(f.lengthscales[d]));
      theta.push_back(std::log(f.variance));
    }
  return Eigen::Map<const Vector>(theta.data(), static_cast<Index>(theta.size()));
}

Kernel Kernel::with_log_parameters(const Vector& theta) const {
  Index count = 0;
  for (const auto& term : terms_)
    for (const auto& f : term) count += parameter_count(f);
  check(theta.size() == count,
        fmt::format("The kernel {} has {} log-parameters; got {}.", expression(), count,
                    theta.size()));
  Kernel out = *this;
  Index i = 0;
  for (auto& term : out.terms_)
    for (auto& f : term) {
      if (is_stationary(f.kind))
        for (Index d = 0; d < f.lengthscales.size(); ++d) f.lengthscales[d] = std::exp(theta[i++]);
      f.variance = std::exp(theta[i++]);
    }
  return out;
}

std::vector<std::string> Kernel::parameter_names() const {
  std::map<KernelKind, int> total, seen;
  for (const auto& term : terms_)
    for (const auto& f : term) ++total[f.kind];
  std::vector<std::string> names;
  for (const auto& term : terms_)
    for (const auto& f : term) {
      const int n = ++seen[f.kind];
      const std::string base =
          total[f.kind] > 1 ? fmt::format("{}#{}", to_string(f.kind), n) : to_string(f.kind);
      if (is_stationary(f.kind)) {
        if (f.lengthscales.size() == 1) {
          names.push_back(base + ".lengthscale");
        } else {
          for (Index d = 0; d < f.lengthscales.size(); ++d)
            names.push_back(fmt::format("{}.lengthscale[{}]", base, d));
        }
      }
      names.push_back(base + ".variance");
    }
  return names;
}

bool Kernel::is_single() const {
  return terms_.size() == 1 && terms_[0].size() == 1 &&
         (!is_stationary(terms_[0][0].kind) || terms_[0][0].lengthscales.size() == 1);
}

double Kernel::lengthscale() const {
  const BaseKernel& k = single();
  check(is_stationary(k.kind), fmt::format("A {} kernel has no length-scale.", to_string(k.kind)));
  return k.lengthscales[0];
}

const BaseKernel& Kernel::single() const {
  check(is_single(),
        fmt::format("The kernel {} is not one base kernel with one length-scale.", expression()));
  return terms_[0][0];
}

Kernel Kernel::from_log_parameters(KernelKind kind, const Vector& theta) {
  const Index expected = is_stationary(kind) ? 2 : 1;
  check(theta.size() == expected,
        fmt::format("A {} kernel has {} log-parameter(s); got {}.", to_string(kind), expected,
                    theta.size()));
  return is_stationary(kind) ? Kernel(kind, std::exp(theta[0]), std::exp(theta[1]))
                             : Kernel(kind, 1.0, std::exp(theta[0]));
}

}  // namespace blr::inference
