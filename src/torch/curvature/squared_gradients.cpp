// Per-example squared gradients read from the autograd graph (see squared_gradients.hpp).
#include "blr/torch/curvature/squared_gradients.hpp"

#include <ATen/ATen.h>
#include <c10/util/accumulate.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/generated/Functions.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "blr/core/error.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/curvature/per_example.hpp"
#include "parameter_uses.hpp"

namespace blr::torch {

void SquaredGradientOptions::validate() const {
  check(chunk_bytes >= 1,
        "Option 'chunk_bytes' of the per-example squared gradients must be at least 1; got {}.",
        chunk_bytes);
}

namespace {

using detail::BroadcastUse;
using detail::Capture;
using detail::ConvBiasUse;
using detail::ConvWeightUse;
using detail::EmbeddingUse;
using detail::LayerNormWeightUse;
using detail::LinearWeightUse;
using detail::ParameterUse;
namespace generated = ::torch::autograd::generated;
using ::torch::autograd::Node;

/// An autograd node's integer attribute: int64_t in LibTorch 1.13, c10::SymInt in 2.x.
int64_t as_int64(int64_t value) { return value; }
template <class S>
  requires requires(const S& s) { s.expect_int(); }
int64_t as_int64(const S& value) {
  return value.expect_int();
}
template <class I>
std::vector<int64_t> as_int64(const std::vector<I>& values) {
  std::vector<int64_t> out;
  for (const auto& v : values) out.push_back(as_int64(v));
  return out;
}

/// The rank of a squeeze's input: `self_sizes` in LibTorch 1.13, `self_sym_sizes` in 2.x.
template <class SqueezeNode>
int64_t squeezed_input_rank(const SqueezeNode* s) {
  if constexpr (requires { s->self_sym_sizes; }) {
    return static_cast<int64_t>(s->self_sym_sizes.size());
  } else {
    return static_cast<int64_t>(s->self_sizes.size());
  }
}

template <class T>
const T* as(const Node* node) {
  return dynamic_cast<const T*>(node);
}

/// "AddmmBackward0" for generated nodes, the last component of the C++ name for others.
std::string short_name(const Node* node) {
  std::string name = node->name();
  const auto colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

std::vector<int64_t> to_ints(const std::vector<c10::SymInt>& sizes) {
  std::vector<int64_t> out;
  out.reserve(sizes.size());
  for (const auto& s : sizes) out.push_back(s.expect_int());
  return out;
}

// ---- the graph ------------------------------------------------------------------------------

/// A node that uses the output of another one, through its next edge number `edge`.
struct Consumer {
  Node* node;
  size_t edge;
};

/// Every node reachable from the loss, and for each node the nodes that consume its output.
struct Graph {
  std::vector<std::shared_ptr<Node>> nodes;
  std::unordered_map<const Node*, std::vector<Consumer>> consumers;
};

Graph read_graph(const std::shared_ptr<Node>& root) {
  Graph graph;
  std::unordered_set<const Node*> seen{root.get()};
  graph.nodes.push_back(root);
  std::vector<Node*> stack{root.get()};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    const auto& edges = node->next_edges();
    for (size_t k = 0; k < edges.size(); ++k) {
      const auto& next = edges[k].function;
      if (!next) continue;
      graph.consumers[next.get()].push_back({node, k});
      if (seen.insert(next.get()).second) {
        graph.nodes.push_back(next);
        stack.push_back(next.get());
      }
    }
  }
  return graph;
}

// ---- batch layout ---------------------------------------------------------------------------

int64_t wrap_dim(int64_t dim, size_t rank) {
  return dim < 0 ? dim + static_cast<int64_t>(rank) : dim;
}

/// The input sizes of a reshaping node (view, _unsafe_view, reshape alias), else empty.
std::vector<int64_t> reshaped_from(const Node* node) {
  if (const auto* v = as<generated::ViewBackward0>(node)) return to_ints(v->self_sym_sizes);
  if (const auto* v = as<generated::UnsafeViewBackward0>(node)) return to_ints(v->self_sym_sizes);
  if (const auto* v = as<generated::ReshapeAliasBackward0>(node)) return to_ints(v->self_sym_sizes);
  return {};
}

/// Whether a node only rearranges its input (no arithmetic): the nodes walked through when
/// looking for a moved batch dimension.
bool rearranges(const Node* node) {
  return !reshaped_from(node).empty() || as<generated::TBackward0>(node) ||
         as<generated::TransposeBackward0>(node) || as<generated::PermuteBackward0>(node) ||
         as<generated::CloneBackward0>(node) || as<generated::ExpandBackward0>(node) ||
         as<generated::UnsqueezeBackward0>(node) || as<generated::SqueezeBackward0>(node) ||
         as<generated::SqueezeBackward1>(node);
}

/// Whether a transposing node moves the leading dimension of its output's source; `rank` is the
/// rank of the node's output (negative: unknown, then a negative dimension may name 0).
bool moves_leading_dimension(const Node* node, int64_t rank) {
  const auto is_leading = [rank](int64_t dim) {
    return dim == 0 || (dim < 0 && (rank < 0 || dim + rank == 0));
  };
  if (as<generated::TBackward0>(node)) return rank != 1;
  if (const auto* t = as<generated::TransposeBackward0>(node)) {
    return is_leading(t->dim0) != is_leading(t->dim1);
  }
  if (const auto* p = as<generated::PermuteBackward0>(node)) {
    return !p->dims.empty() && wrap_dim(p->dims[0], p->dims.size()) != 0;
  }
  return false;
}

/// The rank of a rearranging node's input, given the rank of its output.
int64_t source_rank(const Node* node, int64_t rank) {
  if (const auto sizes = reshaped_from(node); !sizes.empty()) {
    return static_cast<int64_t>(sizes.size());
  }
  if (const auto* e = as<generated::ExpandBackward0>(node)) {
    return static_cast<int64_t>(e->self_sym_sizes.size());
  }
  if (const auto* s = as<generated::SqueezeBackward0>(node)) return squeezed_input_rank(s);
  if (const auto* s = as<generated::SqueezeBackward1>(node)) return squeezed_input_rank(s);
  if (as<generated::UnsqueezeBackward0>(node)) return rank < 0 ? rank : rank - 1;
  return rank;
}

/// The first transposition moving the batch dimension among the rearranging nodes that produced
/// a layer's input of rank `rank` (walking back from its grad_fn), or nullptr.
const Node* batch_mover(const Node* start, int64_t rank) {
  const Node* node = start;
  for (int step = 0; node != nullptr && step < 64 && rearranges(node); ++step) {
    if (moves_leading_dimension(node, rank)) return node;
    rank = source_rank(node, rank);
    node = node->next_edges().empty() ? nullptr : node->next_edge(0).function.get();
  }
  return nullptr;
}

// ---- capturing output gradients ------------------------------------------------------------

class CaptureGradOutput final : public ::torch::autograd::FunctionPreHook {
 public:
  explicit CaptureGradOutput(std::shared_ptr<Capture> capture) : capture_(std::move(capture)) {}
  ::torch::autograd::variable_list operator()(
      const ::torch::autograd::variable_list& grads) override {
    if (!grads.empty()) capture_->grad = grads[0];
    return grads;
  }

 private:
  std::shared_ptr<Capture> capture_;
};

/// Installs one pre-hook per capture; removes them again on destruction.
class InstalledHooks {
 public:
  explicit InstalledHooks(const std::vector<std::shared_ptr<Capture>>& captures) {
    for (const auto& c : captures) {
      auto hook = std::make_unique<CaptureGradOutput>(c);
      installed_.push_back({c->node.get(), hook.get()});
      c->node->add_pre_hook(std::move(hook));
    }
  }
  ~InstalledHooks() {
    for (const auto& [node, hook] : installed_) {
      auto& hooks = node->pre_hooks();
      hooks.erase(std::remove_if(hooks.begin(), hooks.end(),
                                 [hook = hook](const auto& h) { return h.get() == hook; }),
                  hooks.end());
    }
  }
  InstalledHooks(const InstalledHooks&) = delete;
  InstalledHooks& operator=(const InstalledHooks&) = delete;

 private:
  std::vector<std::pair<Node*, const ::torch::autograd::FunctionPreHook*>> installed_;
};

// ---- recognising the operations ------------------------------------------------------------

/// Where a parameter's gradient comes from: a node and its edge. Between them may sit a 2-d
/// transpose (`transposed`: Linear's weight in mm/addmm/bmm) and, for bmm, the broadcast of the
/// matrix over a batch (`broadcast`: an expand and a reshape, as matmul does for inputs of rank
/// ≥ 3).
struct Found {
  Node* node;
  size_t edge;
  bool transposed;
  bool broadcast;
};

bool transposes_matrix(const Node* node) {
  if (as<generated::TBackward0>(node)) return true;
  if (const auto* t = as<generated::TransposeBackward0>(node)) {
    return wrap_dim(t->dim0, 2) + wrap_dim(t->dim1, 2) == 1;
  }
  if (const auto* p = as<generated::PermuteBackward0>(node)) {
    return p->dims.size() == 2 && wrap_dim(p->dims[0], 2) == 1;
  }
  return false;
}

class UseBuilder {
 public:
  UseBuilder(const Graph& graph, int64_t examples) : graph_(graph), examples_(examples) {}

  /// The uses of `param` in the graph (none when the loss does not depend on it).
  std::vector<std::unique_ptr<ParameterUse>> uses(const std::string& name,
                                                  const ::at::Tensor& param) {
    std::vector<std::unique_ptr<ParameterUse>> out;
    if (!param.requires_grad()) return out;
    const auto accumulator = ::torch::autograd::impl::try_get_grad_accumulator(param);
    if (!accumulator) return out;
    std::vector<Found> found;
    follow(accumulator.get(), param.dim(), {}, found);
    for (const auto& f : found) out.push_back(use(name, param, f));
    return out;
  }

  std::vector<std::shared_ptr<Capture>> captures() const {
    std::vector<std::shared_ptr<Capture>> out;
    for (const auto& [node, capture] : captures_) out.push_back(capture);
    return out;
  }

 private:
  /// How far along a matrix parameter's way into a matrix product `follow` is.
  struct Path {
    bool transposed = false;  // a 2-d transpose passed
    bool broadcast = false;   // an expand over leading batch dimensions passed
    bool reshaped = false;    // after the expand, the reshape to N×rows×columns passed
  };

  /// The consumers of `node`'s output, seen through the rearrangements a matrix parameter goes
  /// through on its way into a matrix product: a transpose, then (matmul with an input of rank
  /// ≥ 3) an expand and a reshape.
  void follow(const Node* node, int64_t rank, Path path, std::vector<Found>& found) const {
    const auto it = graph_.consumers.find(node);
    if (it == graph_.consumers.end()) return;
    for (const auto& c : it->second) {
      const Node* n = c.node;
      Path next = path;
      const auto* expand = as<generated::ExpandBackward0>(n);
      if (rank == 2 && !path.transposed && !path.broadcast && transposes_matrix(n)) {
        next.transposed = true;
      } else if (rank == 2 && !path.broadcast && expand && expand->self_sym_sizes.size() == 2) {
        next.broadcast = true;
      } else if (path.broadcast && !path.reshaped && !reshaped_from(n).empty()) {
        next.reshaped = true;
      } else {
        found.push_back({c.node, c.edge, path.transposed, path.broadcast});
        continue;
      }
      follow(n, rank, next, found);
    }
  }

  std::unique_ptr<ParameterUse> use(const std::string& name, const ::at::Tensor& param,
                                    const Found& f) {
    const Node* n = f.node;
    const std::string op = short_name(n);
    const auto refuse = [&](std::string_view why) -> std::unique_ptr<ParameterUse> {
      throw Error(fmt::format("Per-example squared gradients: parameter '{}' is used by {}{}", name,
                              op, why));
    };
    if (op.find("DifferentiableGraph") != std::string::npos) {
      return refuse(
          ", a TorchScript differentiable graph that hides the layers; run the module's forward "
          "passes under blr::torch::UnoptimizedScriptExecution from its first call on.");
    }
    const std::string_view unsupported =
        ", which has no exact per-example gradient formula (supported: Linear, Conv1d/Conv2d, "
        "Embedding, LayerNorm, and a parameter added, subtracted or multiplied with "
        "broadcasting).";
    if (f.broadcast
            ? !as<generated::BmmBackward0>(n)
            : f.transposed && !as<generated::AddmmBackward0>(n) && !as<generated::MmBackward0>(n)) {
      return refuse(unsupported);
    }
    if (const auto* a = as<generated::AddmmBackward0>(n)) {
      const auto input = a->mat1_.unpack();
      const int64_t rows = to_ints(a->mat1_sym_sizes).at(0);
      if (f.edge == 0) {
        return std::make_unique<BroadcastUse>(name, op, capture(f.node), param.sizes().vec(),
                                              a->beta.toDouble(), examples_,
                                              rows_per_example(name, op, input, rows));
      }
      if (f.edge == 2) {
        return std::make_unique<LinearWeightUse>(name, op, capture(f.node), input,
                                                 a->alpha.toDouble(), f.transposed, examples_,
                                                 rows_per_example(name, op, input, rows));
      }
      return refuse(" as the left factor of a matrix product, which is not a Linear layer.");
    }
    if (const auto* m = as<generated::MmBackward0>(n)) {
      if (f.edge != 1) {
        return refuse(" as the left factor of a matrix product, which is not a Linear layer.");
      }
      const auto input = m->self_.unpack();
      return std::make_unique<LinearWeightUse>(name, op, capture(f.node), input, 1.0, f.transposed,
                                               examples_,
                                               rows_per_example(name, op, input, input.size(0)));
    }
    if (const auto* b = as<generated::BmmBackward0>(n)) {
      if (!f.broadcast || f.edge != 1) {
        return refuse(" as a batch of matrices, which is not a Linear layer.");
      }
      const auto input = b->self_.unpack();  // N×T×in: the layer input, batch dims folded into N
      return std::make_unique<LinearWeightUse>(
          name, op, capture(f.node), input.reshape({-1, input.size(-1)}), 1.0, f.transposed,
          examples_, rows_per_example(name, op, input, input.size(0) * input.size(1)));
    }
    if (const auto* c = as<generated::ConvolutionBackward0>(n)) {
      if (c->transposed) return refuse(", a transposed convolution, which is not supported.");
      if (f.edge == 2) return std::make_unique<ConvBiasUse>(name, op, capture(f.node), examples_);
      if (f.edge != 1) return refuse(" as the input of a convolution.");
      const auto input = c->input_.unpack();
      if (input.dim() != 3 && input.dim() != 4) {
        return refuse(fmt::format(" on a {}-d input; only Conv1d and Conv2d are supported.",
                                  input.dim() - 2));
      }
      check_batch_first(name, op, input);
      return std::make_unique<ConvWeightUse>(
          name, op, capture(f.node), input, param.sizes().vec(),
          ConvGeometry{as_int64(c->stride), as_int64(c->padding), as_int64(c->dilation),
                       as_int64(c->groups)});
    }
    if (const auto* e = as<generated::EmbeddingBackward0>(n)) {
      if (e->scale_grad_by_freq) {
        return refuse(" with scale_grad_by_freq, which couples the examples of a batch.");
      }
      const auto indices = e->indices_.unpack();
      if (indices.dim() < 1 || indices.size(0) != examples_) {
        return refuse(
            fmt::format(" with indices of shape {}, whose leading dimension is not "
                        "the {} examples.",
                        indices.sizes(), examples_));
      }
      return std::make_unique<EmbeddingUse>(name, op, capture(f.node), indices, param.size(0),
                                            as_int64(e->padding_idx));
    }
    if (const auto* l = as<generated::NativeLayerNormBackward0>(n)) {
      const auto shared = f.node->shared_from_this();
      const auto input = l->input_.unpack();
      check_batch_first(name, op, input);
      if (f.edge == 2) {
        return std::make_unique<BroadcastUse>(name, op, capture(f.node), param.sizes().vec(), 1.0,
                                              examples_, 0);
      }
      if (f.edge != 1) return refuse(" as the input of a layer normalisation.");
      return std::make_unique<LayerNormWeightUse>(
          name, op, capture(f.node), input, l->result1_.unpack(shared), l->result2_.unpack(shared),
          to_ints(l->normalized_shape));
    }
    if (const auto* a = as<generated::AddBackward0>(n)) {
      return std::make_unique<BroadcastUse>(name, op, capture(f.node), param.sizes().vec(),
                                            f.edge == 1 ? a->alpha.toDouble() : 1.0, examples_, 0);
    }
    if (const auto* d = as<generated::SubBackward0>(n)) {
      return std::make_unique<BroadcastUse>(name, op, capture(f.node), param.sizes().vec(),
                                            f.edge == 1 ? -d->alpha.toDouble() : 1.0, examples_, 0);
    }
    if (const auto* m = as<generated::MulBackward0>(n)) {
      // The other factor: for the parameter as `other` (edge 1) it is `self`, and vice versa.
      const auto factor = f.edge == 1 ? m->self_.unpack() : m->other_.unpack();
      return std::make_unique<BroadcastUse>(name, op, capture(f.node), param.sizes().vec(), 1.0,
                                            examples_, 0, factor);
    }
    return refuse(unsupported);
  }

  /// The shared capture of a node's output gradient.
  std::shared_ptr<Capture> capture(Node* node) {
    auto& c = captures_[node];
    if (!c) c = std::make_shared<Capture>(Capture{node->shared_from_this(), {}});
    return c;
  }

  /// A layer input whose leading dimension must be the batch.
  void check_batch_first(const std::string& name, const std::string& op,
                         const ::at::Tensor& input) const {
    check(input.dim() >= 1 && input.size(0) == examples_,
          "Per-example squared gradients: parameter '{}' is used by {} on an input of shape {}, "
          "whose leading dimension is not the {} examples (the engine needs batch-first layers).",
          name, op, input.sizes(), examples_);
    check_not_moved(name, op, input);
  }

  /// A layer input must not come from a transpose that moved its batch dimension.
  void check_not_moved(const std::string& name, const std::string& op,
                       const ::at::Tensor& input) const {
    if (!input.defined() || !input.grad_fn()) return;
    const Node* mover = batch_mover(input.grad_fn().get(), input.dim());
    check(mover == nullptr,
          "Per-example squared gradients: parameter '{}' is used by {} on an input whose batch "
          "dimension a {} moved (the engine needs batch-first layers).",
          name, op, mover ? short_name(mover) : std::string());
  }

  /// Rows of a matrix-product input per example: 1 when there are M rows, k when the input is an
  /// (M·k)×in flattening of an M×...×in tensor (shown by its grad_fn or its view base).
  int64_t rows_per_example(const std::string& name, const std::string& op,
                           const ::at::Tensor& input, int64_t rows) const {
    check_not_moved(name, op, input);
    if (rows == examples_) return 1;
    std::vector<int64_t> source;
    if (input.defined() && input.grad_fn()) source = reshaped_from(input.grad_fn().get());
    if (source.empty() && input.defined() && input.is_view()) {
      const auto base = input._base();
      if (base.numel() == input.numel()) source = base.sizes().vec();
    }
    const bool grouped = rows % examples_ == 0 && source.size() >= 3 && source[0] == examples_ &&
                         ::c10::multiply_integers(source.begin(), source.end() - 1) == rows;
    check(grouped,
          "Per-example squared gradients: parameter '{}' is used by {} on {} rows that are not "
          "visibly the flattening of a batch-first M×...×features input with M = {} examples.",
          name, op, rows, examples_);
    return rows / examples_;
  }

  const Graph& graph_;
  int64_t examples_;
  std::unordered_map<const Node*, std::shared_ptr<Capture>> captures_;
};

/// Refuses graphs where examples influence each other's loss (batch statistics), naming the batch
/// norm's own parameters (its module path) when it has any.
void refuse_batch_coupling(const Graph& graph, const NamedParameters& parameters) {
  for (const auto& node : graph.nodes) {
    const auto* bn = as<generated::NativeBatchNormBackward0>(node.get());
    const bool coupled = (bn != nullptr && bn->training) ||
                         as<generated::CudnnBatchNormBackward0>(node.get()) ||
                         as<generated::MiopenBatchNormBackward0>(node.get());
    if (!coupled) continue;
    std::vector<std::string> names;
    for (const auto& edge : node->next_edges()) {
      for (const auto& [name, param] : parameters) {
        const auto accumulator = ::torch::autograd::impl::try_get_grad_accumulator(param);
        if (accumulator && edge.function.get() == accumulator.get()) names.push_back("'" + name + "'");
      }
    }
    throw Error(fmt::format(
        "Per-example squared gradients: the loss goes through {}{} in training mode, whose batch "
        "statistics couple the examples, so per-example gradients do not exist (evaluate the "
        "batch norm with running statistics or remove it).",
        short_name(node.get()),
        names.empty() ? std::string()
                      : fmt::format(" (the batch norm of {})", fmt::join(names, " and "))));
  }
}

/// D = M Σ_i (Σ_uses G̃_i)² for one parameter, in chunks of examples.
::at::Tensor squared_gradient(const std::vector<std::unique_ptr<ParameterUse>>& uses,
                              const ::at::Tensor& param, int64_t examples, int64_t chunk_bytes) {
  std::vector<const ParameterUse*> active;
  for (const auto& u : uses) {
    if (u->received()) active.push_back(u.get());
  }
  const double m = static_cast<double>(examples);
  if (active.empty()) return ::at::zeros_like(param, ::at::MemoryFormat::Contiguous);
  if (active.size() == 1) {
    auto s = active[0]->squared_sum();
    if (s.defined()) return s.mul_(m).reshape(param.sizes());
  }
  int64_t elements = 0;
  for (const auto* u : active) elements += u->elements_per_example();
  const int64_t bytes = std::max<int64_t>(1, elements) * param.element_size();
  const int64_t chunk = std::clamp<int64_t>(chunk_bytes / bytes, 1, examples);
  auto sum = ::at::zeros(param.sizes(), param.options());
  for (int64_t begin = 0; begin < examples; begin += chunk) {
    const int64_t end = std::min(examples, begin + chunk);
    auto g = active[0]->per_example(begin, end);
    for (size_t k = 1; k < active.size(); ++k) g = g + active[k]->per_example(begin, end);
    sum.add_(g.square().sum(0));
  }
  return sum.mul_(m);
}

/// r_i += Σ_j w_j (Σ_uses G̃_ij)² for one parameter, in chunks of examples.
/// With a basis: r_i += Σ w ⊙ (U_outᵀ G̃_i U_in)², G̃_i viewed out×in (weighted_squared_gradient_norms).
void add_weighted_norms(const std::vector<std::unique_ptr<ParameterUse>>& uses,
                        const ::at::Tensor& weights, int64_t examples, int64_t chunk_bytes,
                        ::at::Tensor& out, const GradientBasis& basis) {
  std::vector<const ParameterUse*> active;
  for (const auto& u : uses) {
    if (u->received()) active.push_back(u.get());
  }
  if (active.empty()) return;
  if (active.size() == 1) {
    const auto r = active[0]->weighted_norms(weights, basis.defined() ? &basis : nullptr);
    if (r.defined()) {
      out.add_(r.to(out.scalar_type()));
      return;
    }
  }
  int64_t elements = 0;
  for (const auto* u : active) elements += u->elements_per_example();
  const int64_t bytes = std::max<int64_t>(1, elements) * weights.element_size();
  const int64_t chunk = std::clamp<int64_t>(chunk_bytes / bytes, 1, examples);
  for (int64_t begin = 0; begin < examples; begin += chunk) {
    const int64_t end = std::min(examples, begin + chunk);
    auto g = active[0]->per_example(begin, end);
    for (size_t k = 1; k < active.size(); ++k) g = g + active[k]->per_example(begin, end);
    if (basis.defined()) {
      g = basis.output.t().matmul(g.reshape({end - begin, basis.output.size(0), -1}))
              .matmul(basis.input)
              .reshape(g.sizes());
    }
    out.narrow(0, begin, end - begin)
        .add_((g.square() * weights).reshape({end - begin, -1}).sum(1).to(out.scalar_type()));
  }
}

}  // namespace

::at::Tensor weighted_squared_gradient_norms(const ::at::Tensor& total,
                                             const NamedParameters& parameters,
                                             const std::vector<::at::Tensor>& weights,
                                             int64_t examples, bool retain_graph,
                                             const SquaredGradientOptions& options,
                                             const std::vector<GradientBasis>& bases) {
  options.validate();
  check(bases.empty() || bases.size() == parameters.size(),
        "Per-example gradient norms need no bases or one per parameter; got {} for {}.",
        bases.size(), parameters.size());
  check(examples >= 1, "Per-example gradient norms need at least one example; got {}.", examples);
  check(weights.size() == parameters.size(),
        "Per-example gradient norms need one weight tensor per parameter; got {} for {}.",
        weights.size(), parameters.size());
  check(total.defined() && total.numel() == 1,
        "Per-example gradient norms need the sum of the examples' terms as a one-element tensor.");
  check(total.grad_fn() != nullptr,
        "Per-example gradient norms: the sum has no autograd graph (it does not depend on a "
        "parameter that requires gradients, or it was computed under NoGradGuard).");
  for (size_t k = 0; k < parameters.size(); ++k) {
    check(weights[k].sizes() == parameters[k].second.sizes(),
          "Per-example gradient norms: the weights of parameter '{}' have shape {} where the "
          "parameter has {}.",
          parameters[k].first, weights[k].sizes(), parameters[k].second.sizes());
  }
  const Graph graph = read_graph(total.grad_fn());
  refuse_batch_coupling(graph, parameters);
  UseBuilder builder(graph, examples);
  std::vector<std::vector<std::unique_ptr<ParameterUse>>> uses;
  uses.reserve(parameters.size());
  // The gradients asked of autograd::grad (which leaves p.grad alone; its result is not needed,
  // the hooks see what they need). A parameter whose every use has a formula from the output
  // gradient alone (Linear weights) is left out when others remain, so that its own gradient,
  // as costly as the formula, is not computed: its node still runs for its input or its bias.
  // If a node was skipped after all (a bias-free first layer), the pass is repeated with all.
  std::vector<::at::Tensor> reached, wanted;
  std::vector<size_t> skipped;
  for (size_t k = 0; k < parameters.size(); ++k) {
    const auto& [name, param] = parameters[k];
    uses.push_back(builder.uses(name, param));
    if (!param.requires_grad()) continue;
    reached.push_back(param);
    const bool formula =
        !uses.back().empty() && std::all_of(uses.back().begin(), uses.back().end(),
                                            [](const auto& u) { return u->has_weighted_norms_formula(); });
    if (formula) {
      skipped.push_back(k);
    } else {
      wanted.push_back(param);
    }
  }
  if (wanted.empty()) {
    wanted = reached;
    skipped.clear();
  }
  {
    const InstalledHooks hooks(builder.captures());
    (void)::torch::autograd::grad({total}, wanted, {}, retain_graph || !skipped.empty(), false,
                                  true);
    const bool missed = std::any_of(skipped.begin(), skipped.end(), [&](size_t k) {
      return std::any_of(uses[k].begin(), uses[k].end(),
                         [](const auto& u) { return !u->received(); });
    });
    if (missed) {
      for (const auto& c : builder.captures()) c->grad = ::at::Tensor();
      (void)::torch::autograd::grad({total}, reached, {}, retain_graph, false, true);
    }
  }
  ::at::NoGradGuard no_grad;
  for (const auto& parameter_uses : uses) {
    for (const auto& u : parameter_uses) {
      if (u->received()) u->after_backward();
    }
  }
  auto out = ::at::zeros({examples}, total.options().dtype(::at::kDouble));
  for (size_t k = 0; k < parameters.size(); ++k) {
    const auto w = weights[k].to(parameters[k].second.options());
    GradientBasis basis;
    if (!bases.empty() && bases[k].defined()) {
      const auto& p = parameters[k].second;
      check(p.dim() >= 2 && bases[k].output.sizes() == ::at::IntArrayRef({p.size(0), p.size(0)}) &&
                bases[k].input.sizes() ==
                    ::at::IntArrayRef({p.numel() / p.size(0), p.numel() / p.size(0)}),
            "Per-example gradient norms: the basis of parameter '{}' does not fit its shape {}.",
            parameters[k].first, p.sizes());
      basis = {bases[k].output.to(p.options()), bases[k].input.to(p.options())};
    }
    add_weighted_norms(uses[k], w, examples, options.chunk_bytes, out, basis);
  }
  return out;
}

namespace {

using Uses = std::vector<std::vector<std::unique_ptr<ParameterUse>>>;

/// Finds every parameter's uses, runs mean_loss.backward() with their output gradients captured,
/// and returns the uses (parameter order), checked after backward.
Uses backward_collecting_uses(const ::at::Tensor& mean_loss, const NamedParameters& parameters,
                              int64_t examples) {
  check(examples >= 1, "Per-example squared gradients need at least one example; got {}.",
        examples);
  check(mean_loss.defined() && mean_loss.numel() == 1,
        "Per-example squared gradients need the mean minibatch loss as a one-element tensor.");
  check(mean_loss.grad_fn() != nullptr,
        "Per-example squared gradients: the loss has no autograd graph (it does not depend on a "
        "parameter that requires gradients, or it was computed under NoGradGuard).");
  const Graph graph = read_graph(mean_loss.grad_fn());
  refuse_batch_coupling(graph, parameters);
  UseBuilder builder(graph, examples);
  Uses uses;
  uses.reserve(parameters.size());
  for (const auto& [name, param] : parameters) uses.push_back(builder.uses(name, param));
  {
    const InstalledHooks hooks(builder.captures());
    mean_loss.backward();
  }
  ::at::NoGradGuard no_grad;
  for (const auto& parameter_uses : uses) {
    for (const auto& u : parameter_uses) {
      if (u->received()) u->after_backward();
    }
  }
  return uses;
}

}  // namespace

std::vector<::at::Tensor> backward_with_squared_gradients(const ::at::Tensor& mean_loss,
                                                          const NamedParameters& parameters,
                                                          int64_t examples,
                                                          const SquaredGradientOptions& options) {
  options.validate();
  const Uses uses = backward_collecting_uses(mean_loss, parameters, examples);
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> out;
  out.reserve(parameters.size());
  for (size_t k = 0; k < parameters.size(); ++k) {
    out.push_back(squared_gradient(uses[k], parameters[k].second, examples, options.chunk_bytes));
  }
  return out;
}

std::vector<ParameterCurvature> backward_with_kronecker_factors(
    const ::at::Tensor& mean_loss, const NamedParameters& parameters, int64_t examples,
    const SquaredGradientOptions& options) {
  options.validate();
  const Uses uses = backward_collecting_uses(mean_loss, parameters, examples);
  ::at::NoGradGuard no_grad;
  std::vector<ParameterCurvature> out(parameters.size());
  for (size_t k = 0; k < parameters.size(); ++k) {
    // Factors for a weight with exactly one use that reached the loss; the diagonal otherwise.
    if (uses[k].size() == 1 && uses[k][0]->received()) {
      out[k].factors = uses[k][0]->kronecker_factors();
    }
    if (!out[k].kronecker()) {
      out[k].diagonal =
          squared_gradient(uses[k], parameters[k].second, examples, options.chunk_bytes);
    }
  }
  return out;
}

}  // namespace blr::torch
