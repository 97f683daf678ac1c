#include "blr/torch/nn/classifier.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "blr/core/error.hpp"
#include "blr/torch/nn/lenet.hpp"
#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/optim/per_example.hpp"

namespace blr::torch {

void Classifier::set_record(bool on) {
  record_ = on;
  records_.clear();
}

void Classifier::begin_forward() {
  records_.clear();
}

::torch::Tensor Classifier::linear(::torch::nn::Linear& layer, const ::torch::Tensor& input) {
  auto output = layer->forward(input);
  if (record_ && output.requires_grad()) {
    output.retain_grad();
    records_.push_back({false, layer.get(), input.detach(), output});
  }
  return output;
}

::torch::Tensor Classifier::conv2d(::torch::nn::Conv2d& layer, const ::torch::Tensor& input,
                                   std::array<int64_t, 2> padding) {
  auto output = layer->forward(input);
  if (record_ && output.requires_grad()) {
    output.retain_grad();
    records_.push_back({true, layer.get(), input.detach(), output, padding});
  }
  return output;
}

std::vector<::torch::Tensor> Classifier::squared_gradients() const {
  check(record_ && !records_.empty(),
        "squared_gradients() needs a forward() in record mode followed by backward().");
  std::map<const void*, ::torch::Tensor> by_parameter;
  for (const auto& r : records_) {
    const auto grad_output = r.output.grad();
    check(grad_output.defined(),
          "squared_gradients(): a recorded layer has no output gradient; call backward() on the "
          "mean minibatch loss first.");
    SquaredGradients sq;
    ::torch::Tensor weight, bias;
    if (r.is_conv) {
      auto* conv = dynamic_cast<::torch::nn::Conv2dImpl*>(r.layer);
      const auto& o = conv->options;
      check(o.groups() == 1, "squared_gradients(): grouped Conv2d layers are not supported.");
      sq = conv2d_squared_gradients(r.input, grad_output,
                                    {(*o.kernel_size())[0], (*o.kernel_size())[1]},
                                    {(*o.stride())[0], (*o.stride())[1]}, r.padding,
                                    {(*o.dilation())[0], (*o.dilation())[1]}, o.bias());
      weight = conv->weight;
      bias = conv->bias;
    } else {
      auto* lin = dynamic_cast<::torch::nn::LinearImpl*>(r.layer);
      sq = linear_squared_gradients(r.input, grad_output, lin->options.bias());
      weight = lin->weight;
      bias = lin->bias;
    }
    check(by_parameter.count(weight.unsafeGetTensorImpl()) == 0,
          "squared_gradients(): a layer was applied twice in one forward pass.");
    by_parameter[weight.unsafeGetTensorImpl()] = sq.weight;
    if (bias.defined()) by_parameter[bias.unsafeGetTensorImpl()] = sq.bias;
  }
  std::vector<::torch::Tensor> out;
  for (const auto& p : parameters()) {
    auto it = by_parameter.find(p.unsafeGetTensorImpl());
    check(it != by_parameter.end(),
          "squared_gradients(): a parameter was not used by the recorded forward pass.");
    out.push_back(it->second);
  }
  return out;
}

void ModelSpec::validate() const {
  check(kind == "mlp" || kind == "lenet",
        fmt::format("Unknown model '{}'; choose mlp or lenet.", kind));
  for (auto w : hidden) {
    check(w >= 1 && w <= 1'000'000,
          fmt::format("Hidden widths must lie in [1, 1000000]; got {}.", w));
  }
  check(input_channels >= 1, "A model needs at least one input channel.");
  check(classes >= 2, "A classifier needs at least two classes.");
  if (kind == "lenet") {
    check(image_size >= 12,
          fmt::format("LeNet-5 needs images of at least 12×12 pixels; got {}.", image_size));
  }
}

std::shared_ptr<Classifier> make_classifier(const ModelSpec& spec) {
  spec.validate();
  if (spec.kind == "lenet") {
    return std::make_shared<LeNet5>(spec.input_channels, spec.image_size, spec.classes);
  }
  return std::make_shared<Mlp>(spec.input_channels * spec.image_size * spec.image_size, spec.hidden,
                               spec.classes);
}

std::vector<int64_t> parse_widths(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    check(used == item.size() && !item.empty() && value >= 1 && value <= 1'000'000,
          fmt::format("Hidden widths must be a comma-separated list of positive integers such as "
                      "500,300; got '{}'.",
                      text));
    out.push_back(value);
  }
  check(!text.empty() && text.back() != ',',
        fmt::format("Hidden widths must not end with a comma; got '{}'.", text));
  return out;
}

}  // namespace blr::torch
