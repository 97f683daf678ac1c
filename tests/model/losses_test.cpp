// Every loss: gradients and Hessians against central finite differences, the identities between
// its capabilities, minibatches (eq. 34), options and bad input.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cstdio>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "blr/family/special.hpp"
#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/model/linear_regression.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/model/loss.hpp"
#include "blr/model/mlp.hpp"
#include "blr/model/quadratic.hpp"
#include "blr/model/softmax_regression.hpp"
#include "blr/model/test_functions.hpp"
#include "model/loss_checks.hpp"

namespace blr {
namespace {

using testing::expect_consistent;
using testing::expect_gradient_matches;
using testing::expect_hessian_matches;
using testing::relative_gap;

// ---- what each loss models ---------------------------------------------------------------------

static_assert(QuadraticLoss<Quadratic> && QuadraticLoss<DiagonalQuadratic> &&
              QuadraticLoss<LinearRegression>);
static_assert(!QuadraticLoss<LogisticRegression> && !QuadraticLoss<Himmelblau>);
static_assert(HasHessian<LogisticRegression> && HasDiagonalHessian<LogisticRegression> &&
              HasHessianVectorProduct<LogisticRegression> &&
              HasPerExampleGradients<LogisticRegression> && DataLoss<LogisticRegression>);
static_assert(HasPerExampleGradients<LinearRegression> && DataLoss<LinearRegression>);
static_assert(HasPerExampleGradients<SoftmaxRegression> && DataLoss<SoftmaxRegression>);
static_assert(HasHessian<Mlp> && HasHessianVectorProduct<Mlp> && HasPerExampleGradients<Mlp> &&
              DataLoss<Mlp>);
static_assert(HasHessian<Rosenbrock> && HasHessian<Himmelblau> && HasHessian<Branin> &&
              HasHessian<SixHumpCamel>);
static_assert(!DataLoss<Himmelblau> && !HasPerExampleGradients<Himmelblau> &&
              !HasPerExampleGradients<Quadratic>);

// ---- data ---------------------------------------------------------------------------------------

Matrix random_matrix(Rng& rng, Index r, Index c) {
  Matrix m(r, c);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  return m;
}

struct Data {
  Matrix x;
  Vector y_real, y_binary, y_class;
};

Data make_data(std::uint64_t seed, Index n, Index d, Index classes = 3) {
  Rng rng(seed);
  Data data;
  data.x = random_matrix(rng, n, d);
  const Vector w = rng.normal_vector(d);
  data.y_real = data.x * w + 0.3 * rng.normal_vector(n);
  data.y_binary.resize(n);
  data.y_class.resize(n);
  for (Index i = 0; i < n; ++i) {
    data.y_binary[i] = rng.uniform() < sigmoid(data.x.row(i).dot(w)) ? 1.0 : 0.0;
    data.y_class[i] = static_cast<double>(rng.below(static_cast<std::uint64_t>(classes)));
  }
  return data;
}

template <class L>
void check_all_derivatives(const L& f, const Vector& theta, Rng& rng, const std::string& what) {
  expect_gradient_matches(f, theta, what);
  expect_hessian_matches(f, theta, what);
  expect_consistent(f, theta, rng.normal_vector(theta.size()), what);
}

// ---- derivatives against finite differences ---------------------------------------------------

TEST(Losses, QuadraticDerivatives) {
  Rng rng(1);
  const Matrix b = random_matrix(rng, 4, 4);
  const Matrix a = b + b.transpose();  // symmetric, indefinite
  const Quadratic f(a, rng.normal_vector(4), 1.5);
  const Vector theta = rng.normal_vector(4);
  check_all_derivatives(f, theta, rng, "Quadratic");
  EXPECT_NEAR(f.value(f.center()), 1.5, 1e-15);
  const DiagonalQuadratic g(Vector{{1.0, 2.0, -0.5}}, Vector{{0.1, 0.2, 0.3}}, -1.0);
  check_all_derivatives(g, rng.normal_vector(3), rng, "DiagonalQuadratic");
}

TEST(Losses, LinearRegressionDerivatives) {
  const Data data = make_data(2, 30, 4);
  Rng rng(3);
  const LinearRegression f(data.x, data.y_real, {.noise_precision = 2.5, .prior_precision = 0.7});
  check_all_derivatives(f, rng.normal_vector(4), rng, "LinearRegression");
  check_all_derivatives(f.with_rows({3, 7, 7, 20}), rng.normal_vector(4), rng,
                        "LinearRegression minibatch");
}

TEST(Losses, LogisticRegressionDerivatives) {
  const Data data = make_data(4, 40, 5);
  Rng rng(5);
  const LogisticRegression f(data.x, data.y_binary, {.prior_precision = 0.3});
  check_all_derivatives(f, rng.normal_vector(5), rng, "LogisticRegression");
  check_all_derivatives(f.with_rows({0, 5, 9}), rng.normal_vector(5), rng,
                        "LogisticRegression minibatch");
}

TEST(Losses, SoftmaxRegressionDerivatives) {
  const Data data = make_data(6, 25, 3, 4);
  Rng rng(7);
  const SoftmaxRegression f(data.x, data.y_class, 4, {.prior_precision = 0.2});
  EXPECT_EQ(f.dimension(), 12);
  check_all_derivatives(f, rng.normal_vector(12), rng, "SoftmaxRegression");
}

TEST(Losses, MlpRegressionOneHiddenLayerDerivatives) {
  const Data data = make_data(8, 20, 3);
  Rng rng(9);
  const Mlp f(data.x, data.y_real,
              {.hidden = {5},
               .output = MlpOutput::regression,
               .noise_precision = 3.0,
               .prior_precision = 0.1});
  EXPECT_EQ(f.dimension(), 3 * 5 + 5 + 5 + 1);
  check_all_derivatives(f, f.initial_parameters(rng), rng, "Mlp regression");
}

TEST(Losses, MlpBinaryTwoHiddenLayersDerivatives) {
  const Data data = make_data(10, 20, 3);
  Rng rng(11);
  const Mlp f(data.x, data.y_binary, {.hidden = {4, 3}, .output = MlpOutput::binary});
  EXPECT_EQ(f.dimension(), (3 * 4 + 4) + (4 * 3 + 3) + (3 + 1));
  Vector theta = f.initial_parameters(rng);
  theta += 0.3 * rng.normal_vector(theta.size());  // non-zero biases too
  check_all_derivatives(f, theta, rng, "Mlp binary");
  check_all_derivatives(f.with_rows({1, 2, 3, 19}), theta, rng, "Mlp binary minibatch");
}

TEST(Losses, TestFunctionDerivatives) {
  Rng rng(12);
  for (int trial = 0; trial < 3; ++trial) {
    check_all_derivatives(Rosenbrock(4), rng.normal_vector(4), rng, "Rosenbrock");
    check_all_derivatives(Rosenbrock(2, 0.5, 10.0), rng.normal_vector(2), rng, "Rosenbrock(a,b)");
    check_all_derivatives(Himmelblau(), 3.0 * rng.normal_vector(2), rng, "Himmelblau");
    check_all_derivatives(Branin(), 4.0 * rng.normal_vector(2), rng, "Branin");
    check_all_derivatives(SixHumpCamel(), rng.normal_vector(2), rng, "SixHumpCamel");
  }
}

// ---- closed forms -----------------------------------------------------------------------------

TEST(Losses, SoftmaxLayoutIsClassMajor) {
  const Data data = make_data(13, 10, 3, 3);
  Rng rng(14);
  const SoftmaxRegression f(data.x, data.y_class, 3);
  const Vector theta = rng.normal_vector(9);
  const Matrix p = f.predict_probability(theta, data.x);
  // θ[k·D + j] is the weight of feature j for class k: ∂ℓ̄/∂θ[k·D+j] = Σ_i (p_ik − [y_i = k]) x_ij.
  const Vector g = f.gradient(theta);
  for (Index k = 0; k < 3; ++k) {
    for (Index j = 0; j < 3; ++j) {
      double expected = 0.0;
      for (Index i = 0; i < 10; ++i)
        expected +=
            (p(i, k) - (data.y_class[i] == static_cast<double>(k) ? 1.0 : 0.0)) * data.x(i, j);
      EXPECT_NEAR(g[k * 3 + j], expected, 1e-12);
    }
  }
  // The logit of class k is x·w_k with w_k = θ[kD .. kD+D).
  const Vector x0 = data.x.row(0).transpose();
  const double z0 = x0.dot(theta.segment(0, 3)), z2 = x0.dot(theta.segment(6, 3));
  EXPECT_NEAR(std::log(p(0, 2) / p(0, 0)), z2 - z0, 1e-12);
}

TEST(Losses, LogisticRegressionIsStableForLargeLogits) {
  const Matrix x{{1.0}, {-1.0}, {1.0}};
  const Vector y{{1.0, 1.0, 0.0}};
  const LogisticRegression f(x, y);
  const Vector big{{800.0}};  // z = ±800: exp(800) overflows a naive formula
  const double v = f.value(big);
  EXPECT_TRUE(std::isfinite(v));
  // log(1+e^800) − 800 ≈ 0, log(1+e^−800) + 800 ≈ 800, log(1+e^800) ≈ 800.
  EXPECT_NEAR(v, 1600.0, 1e-9);
  EXPECT_TRUE(f.gradient(big).allFinite());
  EXPECT_TRUE(f.hessian(big).allFinite());
  // Moderate logits: the stable form equals the textbook one.
  const Vector small{{0.7}};
  const double naive = std::log1p(std::exp(0.7)) - 0.7 + std::log1p(std::exp(-0.7)) + 0.7 +
                       std::log1p(std::exp(0.7));
  EXPECT_NEAR(f.value(small), naive, 1e-14);
}

TEST(Losses, LinearRegressionMatchesBayesianLinearRegressionOracle) {
  // peers.md 4(a) A1: φ(x) = (1, x), α = 1 (prior precision), β = 4 (noise precision).
  Matrix phi(5, 2);
  phi << 1, 0, 1, 1, 1, 2, 1, 3, 1, 4;
  const Vector y{{1.0, 2.9, 5.2, 6.8, 9.1}};
  const LinearRegression f(phi, y, {.noise_precision = 4.0, .prior_precision = 1.0});
  const Matrix expected_a{{21.0, 40.0}, {40.0, 121.0}};
  EXPECT_LE(relative_gap(f.hessian(Vector::Zero(2)), expected_a), 1e-15);
  // The minimiser of ℓ̄ is the posterior mean m_N.
  const Vector m = f.hessian(Vector::Zero(2)).llt().solve(-f.gradient(Vector::Zero(2)));
  EXPECT_NEAR(m[0], 0.9394261424, 1e-9);
  EXPECT_NEAR(m[1], 2.0068012752, 1e-9);
}

// Pima.tr with the preprocessing of peers.md 4(e) E1.
LogisticRegression pima_loss() {
  const std::string path = std::string(BLR_DATA_DIR) + "/pima_train.csv";
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) throw Error("cannot open " + path);
  char line[512];
  std::vector<std::vector<double>> rows;
  std::vector<double> labels;
  bool header = true;
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (header) {
      header = false;
      continue;
    }
    std::vector<double> row(7);
    char label[16] = {0};
    const int got = std::sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,\"%15[^\"]\"", &row[0], &row[1],
                                &row[2], &row[3], &row[4], &row[5], &row[6], label);
    if (got != 8) continue;
    rows.push_back(row);
    labels.push_back(std::string(label) == "Yes" ? 1.0 : 0.0);
  }
  std::fclose(file);
  const Index n = static_cast<Index>(rows.size());
  Matrix raw(n, 7);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < 7; ++j) raw(i, j) = rows[i][j];
  const Eigen::RowVectorXd mean = raw.colwise().mean();
  const Eigen::RowVectorXd sd =
      ((raw.rowwise() - mean).array().square().colwise().mean()).sqrt().matrix();  // ddof 0
  Matrix x(n, 8);
  x.col(0).setOnes();
  x.rightCols(7) = ((raw.rowwise() - mean).array().rowwise() / sd.array()).matrix();
  return LogisticRegression(x, Eigen::Map<Vector>(labels.data(), n), {.prior_precision = 1.0});
}

TEST(Losses, LogisticRegressionReproducesPimaNewtonIterates) {
  const LogisticRegression f = pima_loss();
  ASSERT_EQ(f.num_examples(), 200);
  Vector w = Vector::Zero(8);
  w -= f.hessian(w).llt().solve(f.gradient(w));
  const Vector iter1{{-0.62745098, 0.23845848, 0.67347591, -0.01356340, -0.00077491, 0.26634843,
                      0.34150279, 0.30781497}};
  EXPECT_LE((w - iter1).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_NEAR(-f.value(w), -93.864475, 1e-6);
  w -= f.hessian(w).llt().solve(f.gradient(w));
  EXPECT_NEAR(-f.value(w), -90.668479, 1e-6);
  w -= f.hessian(w).llt().solve(f.gradient(w));
  EXPECT_NEAR(-f.value(w), -90.537151, 1e-6);
  for (int it = 0; it < 10; ++it) w -= f.hessian(w).llt().solve(f.gradient(w));
  EXPECT_LE(f.gradient(w).norm(), 1e-10);
  // peers.md quotes the MAP from sklearn (L-BFGS, tol 1e-4) and its objective -90.5371 after three
  // Newton steps; the exact stationary point lies within 2e-5 of that MAP (objective -90.5368).
  const Vector map{
      {-0.904812, 0.331955, 0.961811, -0.037474, 0.002190, 0.468523, 0.524896, 0.432448}};
  EXPECT_LE((w - map).cwiseAbs().maxCoeff(), 2e-5);
  EXPECT_NEAR(-f.value(w), -90.5368, 1e-4);
}

// ---- test functions: minima and curvature (peers.md 4(g)) -------------------------------------

/// Newton's method from `start`: the stationary point next to it.
template <class F>
Vector newton(const F& f, Vector x) {
  for (int it = 0; it < 50; ++it) x -= f.hessian(x).ldlt().solve(f.gradient(x));
  return x;
}

Vector sorted_eigenvalues(const Matrix& h) {
  Eigen::SelfAdjointEigenSolver<Matrix> eig(h);
  return eig.eigenvalues();
}

TEST(TestFunctions, HimmelblauMinimaAndHessianEigenvalues) {
  const Himmelblau f;
  struct Mode {
    Vector at;
    double low, high;
  };
  const std::vector<Mode> modes = {
      {Vector{{3.0, 2.0}}, 25.715729, 82.284271},
      {Vector{{-2.805118086953, 3.131312518251}}, 64.840373, 80.550072},
      {Vector{{-3.779310253378, -3.283185991286}}, 70.714355, 133.785615},
      {Vector{{3.584428340330, -1.848126526964}}, 28.690677, 105.418908},
  };
  for (const Mode& mode : modes) {
    const Vector x = newton(f, mode.at);
    EXPECT_LE((x - mode.at).cwiseAbs().maxCoeff(), 1e-11);
    EXPECT_LE(f.value(x), 1e-20);
    const Vector eig = sorted_eigenvalues(f.hessian(x));
    EXPECT_NEAR(eig[0], mode.low, 5e-7);
    EXPECT_NEAR(eig[1], mode.high, 5e-7);
  }
  const Vector top = newton(f, Vector{{-0.27, -0.92}});
  EXPECT_NEAR(top[0], -0.270844590667, 1e-11);
  EXPECT_NEAR(top[1], -0.923038556480, 1e-11);
  EXPECT_NEAR(f.value(top), 181.6165215226, 1e-9);
  EXPECT_LT(sorted_eigenvalues(f.hessian(top))[1], 0.0);  // a maximum
}

TEST(TestFunctions, HimmelblauSmoothedObjectiveClosedForm) {
  EXPECT_NEAR(Himmelblau::expected_value(Vector{{3.0, 2.0}}, 0.1), 5.46, 1e-12);
  // The closed-form gradient and Hessian are the derivatives of the closed-form value in m.
  struct Smoothed {
    double v;
    Index dimension() const { return 2; }
    double value(const Vector& m) const { return Himmelblau::expected_value(m, v); }
    Vector gradient(const Vector& m) const { return Himmelblau::expected_gradient(m, v); }
    Matrix hessian(const Vector& m) const { return Himmelblau::expected_hessian(m, v); }
  };
  Rng rng(15);
  for (int trial = 0; trial < 3; ++trial) {
    const Smoothed s{0.05 + rng.uniform()};
    const Vector m = 2.0 * rng.normal_vector(2);
    expect_gradient_matches(s, m, "smoothed Himmelblau");
    expect_hessian_matches(s, m, "smoothed Himmelblau");
  }
  // With v = 0 it is Himmelblau itself.
  const Vector m{{1.3, -0.4}};
  EXPECT_NEAR(Himmelblau::expected_value(m, 0.0), Himmelblau().value(m), 1e-12);
}

TEST(TestFunctions, BraninMinima) {
  const Branin f;
  const double pi = std::numbers::pi;
  const std::vector<Vector> minima = {Vector{{-pi, 12.275}}, Vector{{pi, 2.275}},
                                      Vector{{3.0 * pi, 2.475}}};
  for (const Vector& at : minima) {
    EXPECT_NEAR(f.value(at), 0.397887357729, 1e-12);
    EXPECT_LE(f.gradient(at).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_GT(sorted_eigenvalues(f.hessian(at))[0], 0.0);
    EXPECT_LE((newton(f, at) - at).cwiseAbs().maxCoeff(), 1e-12);
  }
  EXPECT_NEAR(minima[2][0], 9.42478, 1e-5);
}

TEST(TestFunctions, SixHumpCamelMinima) {
  const SixHumpCamel f;
  for (double sign : {1.0, -1.0}) {
    const Vector given = sign * Vector{{0.0898420, -0.7126564}};
    const Vector x = newton(f, given);
    EXPECT_LE((x - given).cwiseAbs().maxCoeff(), 1e-7);
    EXPECT_NEAR(f.value(x), -1.0316284535, 1e-10);
    EXPECT_GT(sorted_eigenvalues(f.hessian(x))[0], 0.0);
  }
}

TEST(TestFunctions, RosenbrockMinimum) {
  const Rosenbrock f(5);
  const Vector ones = Vector::Ones(5);
  EXPECT_EQ(f.value(ones), 0.0);
  EXPECT_EQ(f.gradient(ones).cwiseAbs().maxCoeff(), 0.0);
  const Matrix h2 = Rosenbrock(2).hessian(Vector::Ones(2));
  EXPECT_LE(relative_gap(h2, Matrix{{802.0, -400.0}, {-400.0, 200.0}}), 1e-15);
  const Rosenbrock g(2, 2.0, 50.0);  // minimum at (a, a²)
  EXPECT_EQ(g.value(Vector{{2.0, 4.0}}), 0.0);
  EXPECT_EQ(g.gradient(Vector{{2.0, 4.0}}).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_THROW(Rosenbrock(1), Error);
}

// ---- minibatches (eq. 34)
// -------------------------------------------------------------------------

/// The average of the minibatch losses over an equal-size partition of the rows is the full loss.
template <class L>
void expect_partition_unbiased(const L& full, const Vector& theta, Index batch) {
  const Index n = full.num_examples();
  ASSERT_EQ(n % batch, 0);
  std::vector<Index> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(99);
  std::shuffle(perm.begin(), perm.end(), rng.engine());
  double value = 0.0;
  Vector grad = Vector::Zero(theta.size());
  Matrix hess = Matrix::Zero(theta.size(), theta.size());
  const Index parts = n / batch;
  for (Index p = 0; p < parts; ++p) {
    const std::vector<Index> rows(perm.begin() + p * batch, perm.begin() + (p + 1) * batch);
    const L mini = full.with_rows(rows);
    EXPECT_DOUBLE_EQ(mini.example_scale(), static_cast<double>(n) / static_cast<double>(batch));
    EXPECT_EQ(mini.num_examples(), n);
    EXPECT_EQ(&mini.data().full(), &full.data().full());  // shared, not copied
    value += mini.value(theta) / static_cast<double>(parts);
    grad += mini.gradient(theta) / static_cast<double>(parts);
    hess += mini.hessian(theta) / static_cast<double>(parts);
  }
  EXPECT_NEAR(value, full.value(theta), 1e-12 * std::max(1.0, std::abs(value)));
  EXPECT_LE(relative_gap(grad, full.gradient(theta)), 1e-12);
  EXPECT_LE(relative_gap(hess, full.hessian(theta)), 1e-12);
}

TEST(Minibatch, AverageOverPartitionEqualsFullLoss) {
  const Data data = make_data(16, 24, 3);
  Rng rng(17);
  const Vector theta = rng.normal_vector(3);
  expect_partition_unbiased(
      LinearRegression(data.x, data.y_real, {.noise_precision = 2.0, .prior_precision = 0.5}),
      theta, 6);
  expect_partition_unbiased(LogisticRegression(data.x, data.y_binary, {.prior_precision = 0.5}),
                            theta, 4);
  expect_partition_unbiased(SoftmaxRegression(data.x, data.y_class, 3, {.prior_precision = 0.5}),
                            rng.normal_vector(9), 8);
  const Mlp mlp(data.x, data.y_real, {.hidden = {3}, .prior_precision = 0.5});
  expect_partition_unbiased(mlp, mlp.initial_parameters(rng), 12);
}

TEST(Minibatch, RowsReferToTheFullDataAndAreChecked) {
  const Data data = make_data(18, 10, 2);
  const LogisticRegression f(data.x, data.y_binary);
  const LogisticRegression a = f.with_rows({1, 2, 3, 4, 5});
  const LogisticRegression b = a.with_rows({7});  // row 7 of the full data set
  EXPECT_DOUBLE_EQ(b.example_scale(), 10.0);
  EXPECT_EQ(b.data().inputs().row(0), data.x.row(7));
  EXPECT_EQ(a.per_example_gradients(Vector::Ones(2)).rows(), 5);
  EXPECT_THROW(f.with_rows({}), Error);
  EXPECT_THROW(f.with_rows({10}), Error);
  EXPECT_THROW(f.with_rows({-1}), Error);
  try {
    f.with_rows({3, 12});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 12 is out of range"), std::string::npos) << e.what();
  }
}

// ---- options and bad input -----------------------------------------------------------------

TEST(Losses, RejectBadInputWithSentences) {
  const Data data = make_data(19, 6, 2);
  auto message = [](auto&& make) {
    try {
      make();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] {
              LinearRegression(data.x, data.y_real, {.noise_precision = 0.0});
            }).find("noise_precision"),
            std::string::npos);
  EXPECT_NE(message([&] {
              LogisticRegression(data.x, data.y_binary, {.prior_precision = -1});
            }).find("prior_precision"),
            std::string::npos);
  EXPECT_NE(message([&] { LogisticRegression(data.x, data.y_real); }).find("not 0 or 1"),
            std::string::npos);
  EXPECT_NE(message([&] {
              SoftmaxRegression(data.x, Vector{{0, 1, 2, 0, 1, 2}}, 2);
            }).find("class index"),
            std::string::npos);
  EXPECT_NE(message([&] {
              Mlp(data.x, data.y_real, {.hidden = {2, 2, 2}});
            }).find("hidden"),
            std::string::npos);
  EXPECT_NE(message([&] { Mlp(data.x, data.y_real, {.hidden = {0}}); }).find("hidden"),
            std::string::npos);
  EXPECT_NE(message([&] { LinearRegression(data.x, Vector::Zero(5)); }).find("5 targets"),
            std::string::npos);
  Matrix bad = data.x;
  bad(0, 0) = std::nan("");
  EXPECT_NE(message([&] { LinearRegression(bad, data.y_real); }).find("NaN"), std::string::npos);
  EXPECT_NE(message([&] {
              Quadratic(Matrix{{1.0, 2.0}, {0.0, 1.0}}, Vector::Zero(2));
            }).find("symmetric"),
            std::string::npos);
  const LinearRegression f(data.x, data.y_real);
  EXPECT_NE(message([&] { f.value(Vector::Zero(3)); }).find("θ has length 3"), std::string::npos);
  EXPECT_THROW(Himmelblau().value(Vector::Zero(3)), Error);
}

}  // namespace
}  // namespace blr
