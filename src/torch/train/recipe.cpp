// The recipe table (train/recipe.hpp). Sources are cited per entry: "ivx:" is the IVON paper's
// experiment repository (team-approx-bayes/ivon-experiments), "ivon:" the ivon package
// (team-approx-bayes/ivon), "mpe:" memory-perturbation, "dwb:" dl-with-bayes (VOGN), "bsam:"
// bayesian-sam, "bbn:" BayesBiNN, "vadam:" the Vadam code, as in the research notes
// (algorithms.md §1.5, §3.4, §4, §5, §8.2).
#include "blr/torch/train/recipe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"

namespace blr::torch {
namespace {

using V = OptionValue;

// Every option of IVON (ess stays the training-set size unless given in `extra`).
OptionValues ivon(double lr, double hess_init, double beta2, double weight_decay,
                  double clip_radius, int64_t mc_samples, bool rescale_lr = true,
                  OptionValues extra = {}) {
  OptionValues o = {{"lr", V(lr)},
                    {"hess_init", V(hess_init)},
                    {"beta1", V(0.9)},
                    {"beta2", V(beta2)},
                    {"weight_decay", V(weight_decay)},
                    {"clip_radius", V(clip_radius)},
                    {"mc_samples", V(mc_samples)},
                    {"debias", V(true)},
                    {"rescale_lr", V(rescale_lr)},
                    {"hess_approx", V(std::string("price"))}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

// Every option of AdamW (LibTorch's, with Adam's ε).
OptionValues adamw(double lr, double beta2, double weight_decay) {
  return {{"lr", V(lr)}, {"beta1", V(0.9)}, {"beta2", V(beta2)}, {"eps", V(1e-8)},
          {"weight_decay", V(weight_decay)}};
}

// Every option of SGD with heavy-ball momentum.
OptionValues sgd(double lr, double weight_decay) {
  return {{"lr", V(lr)}, {"momentum", V(0.9)}, {"weight_decay", V(weight_decay)},
          {"nesterov", V(false)}};
}

constexpr double kNoClip = std::numeric_limits<double>::infinity();

std::vector<Recipe> make_recipes() {
  std::vector<Recipe> out;

  out.push_back(Recipe{
      "image-small",
      "image classification with small networks (MLP, LeNet-5) on MNIST/Fashion-MNIST-sized data",
      "cosine", 0.0, 0.0,
      "cosine to 0 over the run, no warm-up, no clipping [mpe:README.md, FMNIST LeNet-5]",
      {{"ivon",
        ivon(0.5, 0.2, 0.9999, 1e-4, kNoClip, 1),
        "a cosine to 0 and δ 1e-4 as [ivon:README.md]'s quick-start and [mpe:README.md] (FMNIST "
        "LeNet-5: lr 0.1, h₀ 0.1, bs 256, 100 epochs); lr 0.5, h₀ 0.2 and β₂ 0.9999 chosen on a "
        "validation split for runs of about 10 epochs (scripts/recipe_sweep.sh, docs/results.md); "
        "β₂ 0.9999 is the maintainers' advice when h stays at h₀ (ivon#1): with 0.99999, h can "
        "move at most 1 − β₂ᵗ ≈ 4.6 % from h₀ in 4 690 steps"},
       {"adamw",
        adamw(1e-3, 0.999, 1e-4),
        "Adam's published defaults (Kingma & Ba 2015) with δ 1e-4; the best of lr 3e-4, 1e-3 and "
        "3e-3 on the same validation split (scripts/recipe_sweep.sh)"},
       {"sgd",
        sgd(0.05, 5e-4),
        "the setting of blr's first Fashion-MNIST experiment (docs/results.md; heavy-ball SGD; "
        "[ivx:image_classification/train_sgd.sh] uses lr 0.1, momentum 0.9 for ResNets)"},
       {"vogn",
        {{"lr", V(0.01)}, {"beta1", V(0.9)}, {"curvature_rate", V(0.001)}, {"hess_init", V(8e-3)},
         {"prior_precision", V(1.0)}, {"damping", V(0.0)}, {"mc_samples", V(int64_t{10})}},
        "[dwb:classification/configs/cifar10/lenet_vogn.json]: lr 0.01, grad_ema_decay 0.1, "
        "ema_decay 0.001, init_precision 8e-3, prior_variance 1, damping 0, 10 training samples"},
       {"bayesbinn",
        {{"lr", V(1e-4)}, {"beta1", V(0.0)}, {"temperature", V(1e-10)},
         {"mc_samples", V(int64_t{1})}, {"prior_natural", V(0.0)}, {"init_natural", V(10.0)},
         {"init_std", V(0.0)}},
        "[bbn:main_mnist.py defaults, shipped logs]: MNIST binary MLP, lr 1e-4 cosine, β 0, "
        "τ 1e-10, one training sample, λ initialised at ±10 with a uniform prior (bs 100, 500 "
        "epochs in the source)"}},
      "The sources train 100–500 epochs; the settings were chosen at 10 epochs and blr's demo "
      "trains 15. A validation split (--validation 0.1) is how to check a change."});

  out.push_back(Recipe{
      "image-resnet",
      "image classification with ResNets (ResNet-20 and up) on CIFAR-sized data",
      "warmup-cosine", 5.0 / 200.0, 0.0,
      "5 of 200 epochs of linear warm-up from lr/5, then cosine to 0 "
      "[ivx:image_classification/train.py, train_ivon.sh]",
      {{"ivon",
        ivon(1.0, 0.5, 0.9999, 2e-4, kNoClip, 1),
        "[ivx:image_classification/train_ivon.sh]: ess N, h₀ 0.5, β₁ 0.9, δ 2e-4, one training "
        "sample (lr 0.2, β₂ 0.99999, bs 50, 200 epochs there); lr 1.0 and β₂ 0.9999 chosen on the "
        "validation split of ResNet-20 on Fashion-MNIST at batch 128 and 5 epochs (2 110 steps) "
        "from lr 0.5 at β₂ 0.99999 and 0.9999, and lr 1 and 2 at 0.9999 (docs/results.md): the source's lr 0.2 "
        "underfits a short run, since at h ≈ h₀ IVON steps α·ḡ where heavy-ball SGD (lr 0.1, "
        "momentum 0.9) steps 1.0·g, and β₂ 0.99999 keeps h at h₀ for 99.9 % of the weights"},
       {"adamw",
        adamw(8e-3, 0.999, 2e-4),
        "[ivx:image_classification/train_adamw.sh]: δ 2e-4 (lr 2e-3, bs 50, 200 epochs there); "
        "lr 8e-3 chosen on the validation split of ResNet-20 on Fashion-MNIST at batch 128 and 5 "
        "epochs from 1e-3, 2e-3, 4e-3, 8e-3 and 1.6e-2 (docs/results.md), the same search IVON's "
        "lr got"},
       {"sgd",
        sgd(0.1, 2e-4),
        "[ivx:image_classification/train_sgd.sh]: lr 0.1, momentum 0.9, δ 2e-4"},
       {"bsam",
        {{"lr", V(0.5)}, {"beta1", V(0.9)}, {"beta2", V(0.999)}, {"rho", V(0.01)},
         {"prior_precision", V(40.0)}, {"damping", V(0.1)}, {"hess_init", V(1.0)}},
        "[bsam:README.md] ResNet-18 CIFAR-10: α 0.5, ρ 0.01, prior precision 40, β₂ 0.999, "
        "damping 0.1, s₀ 1 (the source's ess is N × a data-augmentation factor of 4; blr has no "
        "augmentation, so ess stays N)"},
       {"vogn",
        {{"lr", V(1e-4)}, {"beta1", V(0.9)}, {"curvature_rate", V(0.001)},
         {"prior_precision", V(50.0)}, {"damping", V(1e-3)}, {"mc_samples", V(int64_t{5})},
         {"hess_init", V(0.01)}},
        "[dwb:distributed/.../resnet18_vogn_bs256_8gpu.json]: lr 1e-4, momentum 0.9, 5 samples, "
        "prior variance 0.02, damping 1e-3; s₀ 0.01 is blr's default (not in the source); VOGN "
        "needs batch-norm-free ResNets in blr"}},
      "The sources use batch 50 (ivon-experiments) or 200 (bSAM) and 180–200 epochs with data "
      "augmentation."});

  out.push_back(Recipe{
      "lm-pretrain",
      "language-model pretraining (the GPT of --model gpt, nanoGPT-style models)",
      "warmup-cosine", 0.02, 1.0,
      "2 000 of 100 000 iterations of linear warm-up (2 %), cosine to 0, gradient norm clipped "
      "at 1.0 [ivx:gpt2/train_ivon.py, gpt2/config/train_gpt2_small_ivon.py]",
      {{"ivon",
        ivon(1000.0, 1e-3, 0.99999, 1e-6, 1e-3, 1, true, {{"ess", V(1e10)}}),
        "[ivx:gpt2/train_ivon.py]: ess 1e10, h₀ 1e-3, β₂ 0.99999, δ 1e-6, clip radius 1e-3; the "
        "learning rate sets an Adam-like step α·(h₀ + δ)·ξ: GPT-2 small's lr 300 is a step of "
        "3e-4, and lr 1000 the 1e-3 that small character-level models take (nanoGPT's "
        "shakespeare_char: Adam lr 1e-3); blr's measurement: docs/results.md"},
       {"adamw",
        adamw(1e-3, 0.95, 0.1),
        "[ivx:gpt2/train.py] (nanoGPT): β₂ 0.95, δ 0.1; lr 1e-3 as nanoGPT's shakespeare_char "
        "(GPT-2 small: 6e-4)"}},
      "The source trains GPT-2 on 50 B tokens of OpenWebText with bf16 autocast and applies δ "
      "only to matrices; blr applies it to every parameter."});

  out.push_back(Recipe{
      "finetune",
      "fine-tuning a trained model on new data (--init CHECKPOINT)",
      "cosine", 0.0, 0.0,
      "a decaying learning rate (the source decays linearly; blr's nearest is the cosine) "
      "[IVON-LoRA, mattyred/ivon-lora: finetune.py]",
      {{"ivon",
        ivon(0.03, 1e-3, 0.99999, 0.0, 1e-3, 1, false),
        "IVON-LoRA (mattyred/ivon-lora: ivon.sh): lr 0.03 without rescaling, h₀ 1e-3, β₂ "
        "0.99999, δ 0, clip radius 1e-3 (a step of at most 3e-5); its ess (1e6–1e8) is left to "
        "the training-set size"},
       {"adamw",
        adamw(5e-5, 0.999, 0.0),
        "the same source's AdamW baseline: lr 5e-5"}},
      "The source fine-tunes Llama-2-7B adapters (batch 4, 10 000 steps); for a small network "
      "fine-tuned for a few epochs, a larger lr may be needed (check on a validation split)."});

  out.push_back(Recipe{
      "tabular",
      "tabular data and GLM-sized models (10²–10⁴ rows, small MLPs, regression or classification)",
      "constant", 0.0, 0.0,
      "a constant learning rate (lr_final = lr), no warm-up [ivx:bdl_competition/run_uci.sh]",
      {{"ivon",
        ivon(0.02, 0.5, 0.999, 5e-3, kNoClip, 5),
        "[ivx:bdl_competition/run_uci.sh]: lr 0.02, h₀ 0.5, β₁ 0.9, β₂ 0.999, δ 5e-3, 5 "
        "training samples, bs 8, 60 epochs (its ess 6 000 is its data's size; here the "
        "training-set size)"},
       {"vadam",
        {{"lr", V(0.01)}, {"beta1", V(0.9)}, {"beta2", V(0.99)}, {"prec_init", V(10.0)},
         {"prior_precision", V(1.0)}, {"mc_samples", V(int64_t{5})}},
        "[vadam:pytorch/uci_code/run_experiments.py]: lr 0.01, betas (0.9, 0.99), prec_init 10, "
        "5 training samples on the larger sets; the source tunes the prior precision per data "
        "set (Bayesian optimisation): 1 here is Vadam's default, to be tuned on a validation "
        "split"},
       {"adamw",
        adamw(1e-3, 0.999, 5e-3),
        "Adam's published defaults (Kingma & Ba 2015) with the IVON entry's δ"}},
      "The sources use small batches (8 and 32) and 40–60 epochs."});
  return out;
}

}  // namespace

const RecipeOptimizer* Recipe::find(std::string_view optimizer) const {
  for (const auto& o : optimizers) {
    if (o.optimizer == optimizer) return &o;
  }
  return nullptr;
}

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> table = make_recipes();
  return table;
}

std::vector<std::string> recipe_names() {
  std::vector<std::string> names;
  for (const auto& r : recipes()) names.push_back(r.name);
  return names;
}

const Recipe& find_recipe(std::string_view name) {
  for (const auto& r : recipes()) {
    if (r.name == name) return r;
  }
  const auto names = recipe_names();
  const std::string suggestion = closest_match(name, names);
  throw Error(fmt::format("Unknown recipe '{}'{}; the recipes are {} (or none).", name,
                          suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion),
                          fmt::join(names, ", ")));
}

std::string default_recipe(const TrainConfig& config) {
  return config.model_file.empty() && config.model.kind == "gpt" ? "lm-pretrain" : "";
}

OptionValues recipe_options(const Recipe& recipe, std::string_view optimizer,
                            const OptionValues& given) {
  const RecipeOptimizer* entry = recipe.find(optimizer);
  if (entry == nullptr) return given;
  OptionValues out;
  for (const auto& [key, value] : entry->options) {
    const bool overridden = std::any_of(given.begin(), given.end(),
                                        [&key](const auto& g) { return g.first == key; });
    if (!overridden) out.emplace_back(key, value);
  }
  out.insert(out.end(), given.begin(), given.end());
  return out;
}

void apply_recipe(const Recipe& recipe, TrainConfig& config, const ExplicitSettings& explicit_) {
  config.optimizer_options = recipe_options(recipe, config.optimizer, config.optimizer_options);
  if (!explicit_.schedule) config.schedule = recipe.schedule;
  if (!explicit_.warmup) {
    config.warmup_epochs = config.schedule == "warmup-cosine"
                               ? recipe.warmup_share * static_cast<double>(config.epochs)
                               : 0.0;
  }
  if (!explicit_.grad_clip) config.grad_clip = recipe.grad_clip;
  config.recipe = recipe.name;
}

}  // namespace blr::torch
