#include "blr/model/mlp.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/model/regularizer.hpp"

namespace blr {

namespace {
using ConstMap = Eigen::Map<const Matrix>;
using MutableMap = Eigen::Map<Matrix>;
}  // namespace

/// Activations of one forward pass over a set of inputs (examples as rows).
struct Mlp::Forward {
  const Matrix* x = nullptr;
  std::vector<Matrix> a;  ///< a[l] = tanh output of hidden layer l (l = 1..L−1); a[0] unused
  Vector f;               ///< network outputs
  const Matrix& input(std::size_t l) const { return l == 0 ? *x : a[l]; }
};

void MlpOptions::validate() const {
  check(hidden.size() == 1 || hidden.size() == 2,
        fmt::format("Option 'hidden' must list one or two layer widths; got {}.", hidden.size()));
  for (Index w : hidden)
    check(w >= 1, fmt::format("Option 'hidden' must hold positive widths; got {}.", w));
  check_positive("noise_precision", noise_precision);
  check_nonnegative("prior_precision", prior_precision);
}

Mlp::Mlp(Matrix inputs, Vector targets, Options options)
    : data_(std::move(inputs), std::move(targets), "Mlp"), options_(std::move(options)) {
  options_.validate();
  if (options_.output == MlpOutput::binary) {
    const Vector& y = data_.targets();
    for (Index i = 0; i < y.size(); ++i)
      check(y[i] == 0.0 || y[i] == 1.0,
            fmt::format("Mlp: label {} of row {} is not 0 or 1 (binary output).", y[i], i));
  }
  std::vector<Index> widths;
  widths.push_back(data_.num_features());
  for (Index w : options_.hidden) widths.push_back(w);
  widths.push_back(1);
  Index offset = 0;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    Layer layer;
    layer.inputs = widths[l];
    layer.outputs = widths[l + 1];
    layer.weight_offset = offset;
    offset += layer.inputs * layer.outputs;
    layer.bias_offset = offset;
    offset += layer.outputs;
    layers_.push_back(layer);
  }
  dimension_ = offset;
}

void Mlp::check_theta(const Vector& theta) const {
  check(theta.size() == dimension_,
        fmt::format("Mlp: θ has length {} but the network has {} parameters.", theta.size(),
                    dimension_));
}

Mlp::Forward Mlp::forward(const Vector& theta, const Matrix& inputs) const {
  Forward fw;
  fw.x = &inputs;
  const std::size_t count = layers_.size();
  fw.a.resize(count);
  for (std::size_t l = 0; l < count; ++l) {
    const Layer& layer = layers_[l];
    const ConstMap w(theta.data() + layer.weight_offset, layer.outputs, layer.inputs);
    Matrix z = fw.input(l) * w.transpose();
    z.rowwise() += theta.segment(layer.bias_offset, layer.outputs).transpose();
    if (l + 1 < count) {
      fw.a[l + 1] = z.array().tanh().matrix();
    } else {
      fw.f = z.col(0);
    }
  }
  return fw;
}

double Mlp::output_loss(const Vector& f, const Vector& y, Vector* first, Vector* second) const {
  double sum = 0.0;
  if (first != nullptr) first->resize(f.size());
  if (second != nullptr) second->resize(f.size());
  const double beta = options_.noise_precision;
  for (Index i = 0; i < f.size(); ++i) {
    if (options_.output == MlpOutput::regression) {
      const double r = f[i] - y[i];
      sum += 0.5 * beta * r * r;
      if (first != nullptr) (*first)[i] = beta * r;
      if (second != nullptr) (*second)[i] = beta;
    } else {
      sum += log1p_exp(f[i]) - y[i] * f[i];
      const double p = sigmoid(f[i]);
      if (first != nullptr) (*first)[i] = p - y[i];
      if (second != nullptr) (*second)[i] = p * (1.0 - p);
    }
  }
  return sum;
}

std::vector<Matrix> Mlp::backward(const Vector& theta, const Forward& fw,
                                  const Vector& g_out) const {
  const std::size_t count = layers_.size();
  std::vector<Matrix> deltas(count);
  deltas[count - 1] = g_out;
  for (std::size_t l = count - 1; l > 0; --l) {
    const Layer& layer = layers_[l];
    const ConstMap w(theta.data() + layer.weight_offset, layer.outputs, layer.inputs);
    deltas[l - 1] = ((deltas[l] * w).array() * (1.0 - fw.a[l].array().square())).matrix();
  }
  return deltas;
}

double Mlp::value(const Vector& theta) const {
  check_theta(theta);
  const Forward fw = forward(theta, data_.inputs());
  return data_.scale() * output_loss(fw.f, data_.targets(), nullptr, nullptr) +
         Ridge{options_.prior_precision}.value(theta);
}

Vector Mlp::gradient(const Vector& theta) const {
  Vector g;
  value_and_gradient(theta, g);
  return g;
}

double Mlp::value_and_gradient(const Vector& theta, Vector& gradient) const {
  check_theta(theta);
  const Forward fw = forward(theta, data_.inputs());
  Vector g_out;
  const double sum = output_loss(fw.f, data_.targets(), &g_out, nullptr);
  const std::vector<Matrix> deltas = backward(theta, fw, g_out);
  gradient = options_.prior_precision * theta;
  const double scale = data_.scale();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    MutableMap(gradient.data() + layer.weight_offset, layer.outputs, layer.inputs) +=
        scale * (deltas[l].transpose() * fw.input(l));
    gradient.segment(layer.bias_offset, layer.outputs) +=
        scale * deltas[l].colwise().sum().transpose();
  }
  return scale * sum + Ridge{options_.prior_precision}.value(theta);
}

Vector Mlp::hvp(const Vector& theta, const Forward& fw, const std::vector<Matrix>& deltas,
                const Vector& d2, const Vector& v) const {
  const std::size_t count = layers_.size();
  // R-forward: RA[l] = R{a_l} (M×n_l), Rf = R{f}.
  std::vector<Matrix> ra(count);
  Vector rf;
  for (std::size_t l = 0; l < count; ++l) {
    const Layer& layer = layers_[l];
    const ConstMap w(theta.data() + layer.weight_offset, layer.outputs, layer.inputs);
    const ConstMap vw(v.data() + layer.weight_offset, layer.outputs, layer.inputs);
    Matrix rz = fw.input(l) * vw.transpose();
    if (l > 0) rz += ra[l] * w.transpose();
    rz.rowwise() += v.segment(layer.bias_offset, layer.outputs).transpose();
    if (l + 1 < count) {
      ra[l + 1] = (rz.array() * (1.0 - fw.a[l + 1].array().square())).matrix();
    } else {
      rf = rz.col(0);
    }
  }
  // R-backward: RG[l] = R{G_l}, then R{∂ℓ/∂W_l} = RG_lᵀa_{l−1} + G_lᵀR{a_{l−1}}.
  Vector out = options_.prior_precision * v;
  const double scale = data_.scale();
  Matrix rg = d2.cwiseProduct(rf);
  for (std::size_t l = count; l-- > 0;) {
    const Layer& layer = layers_[l];
    MutableMap rw(out.data() + layer.weight_offset, layer.outputs, layer.inputs);
    rw += scale * (rg.transpose() * fw.input(l));
    if (l > 0) rw += scale * (deltas[l].transpose() * ra[l]);
    out.segment(layer.bias_offset, layer.outputs) += scale * rg.colwise().sum().transpose();
    if (l > 0) {
      const ConstMap w(theta.data() + layer.weight_offset, layer.outputs, layer.inputs);
      const ConstMap vw(v.data() + layer.weight_offset, layer.outputs, layer.inputs);
      const Matrix d = deltas[l] * w;             // ∂ℓ/∂a_l
      const Matrix rd = deltas[l] * vw + rg * w;  // R{∂ℓ/∂a_l}
      const auto a = fw.a[l].array();
      rg = (rd.array() * (1.0 - a.square()) - 2.0 * a * ra[l].array() * d.array()).matrix();
    }
  }
  return out;
}

Vector Mlp::hessian_vector_product(const Vector& theta, const Vector& v) const {
  check_theta(theta);
  check_theta(v);
  const Forward fw = forward(theta, data_.inputs());
  Vector g_out, d2;
  output_loss(fw.f, data_.targets(), &g_out, &d2);
  const std::vector<Matrix> deltas = backward(theta, fw, g_out);
  return hvp(theta, fw, deltas, d2, v);
}

Matrix Mlp::hessian(const Vector& theta) const {
  check_theta(theta);
  const Forward fw = forward(theta, data_.inputs());
  Vector g_out, d2;
  output_loss(fw.f, data_.targets(), &g_out, &d2);
  const std::vector<Matrix> deltas = backward(theta, fw, g_out);
  Matrix h(dimension_, dimension_);
  Vector e = Vector::Zero(dimension_);
  for (Index j = 0; j < dimension_; ++j) {
    e[j] = 1.0;
    h.col(j) = hvp(theta, fw, deltas, d2, e);
    e[j] = 0.0;
  }
  return 0.5 * (h + h.transpose());
}

Vector Mlp::hessian_diagonal(const Vector& theta) const {
  return hessian(theta).diagonal();
}

Matrix Mlp::per_example_gradients(const Vector& theta) const {
  check_theta(theta);
  const Forward fw = forward(theta, data_.inputs());
  Vector g_out;
  output_loss(fw.f, data_.targets(), &g_out, nullptr);
  const std::vector<Matrix> deltas = backward(theta, fw, g_out);
  Matrix out(data_.batch_size(), dimension_);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const Matrix& a = fw.input(l);
    for (Index c = 0; c < layer.inputs; ++c) {
      out.middleCols(layer.weight_offset + c * layer.outputs, layer.outputs) =
          deltas[l].array().colwise() * a.col(c).array();
    }
    out.middleCols(layer.bias_offset, layer.outputs) = deltas[l];
  }
  return out;
}

Vector Mlp::regularizer_gradient(const Vector& theta) const {
  return options_.prior_precision * theta;
}

Vector Mlp::regularizer_hessian_diagonal(const Vector& theta) const {
  return Vector::Constant(theta.size(), options_.prior_precision);
}

Mlp Mlp::with_rows(const std::vector<Index>& rows) const {
  return Mlp(data_.restricted(rows, "Mlp"), options_, layers_, dimension_);
}

Vector Mlp::predict(const Vector& theta, const Matrix& inputs) const {
  check_theta(theta);
  check(inputs.cols() == data_.num_features(),
        fmt::format("Mlp: the inputs have {} columns but the network has {} inputs.", inputs.cols(),
                    data_.num_features()));
  return forward(theta, inputs).f;
}

Vector Mlp::initial_parameters(Rng& rng) const {
  Vector theta = Vector::Zero(dimension_);
  for (const Layer& layer : layers_) {
    const double sd = 1.0 / std::sqrt(static_cast<double>(layer.inputs));
    for (Index k = 0; k < layer.inputs * layer.outputs; ++k)
      theta[layer.weight_offset + k] = sd * rng.normal();
  }
  return theta;
}

}  // namespace blr
