// Recipes: the published settings of a kind of task, as data.
//
// A recipe sets, for a kind of task (small-image classification, ResNets, language-model
// pretraining, fine-tuning, tabular models), every option of each optimizer it covers — by the
// keys of that optimizer's option table (optim/registry.hpp) — and the run's learning-rate
// schedule, warm-up and gradient clipping. Every entry names its source: the configuration files
// of the IVON, VOGN, bSAM and BayesBiNN papers' public experiment repositories, or, where blr
// departs from them, the measurement that made it (docs/results.md).
//
// How a run uses one (`--recipe NAME` on train, compare, continual and launch; `blr.recipe` in
// Python): the recipe's options of the run's optimizer come first and the options the user gives
// override them key by key; the schedule, warm-up and clipping apply unless given as flags. The
// training-set size stays the default of `ess` (a recipe never fixes N), so one recipe serves any
// data set of its kind. The warm-up is a share of the run's epochs, so it scales with the budget.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// One optimizer's settings in a recipe.
struct RecipeOptimizer {
  std::string optimizer;  ///< a registered optimizer's name ("ivon")
  OptionValues options;   ///< keys of its option table
  std::string source;     ///< where these values come from (repository and file, or paper)
};

struct Recipe {
  std::string name;     ///< "image-small"
  std::string summary;  ///< one line: the kind of task
  std::string schedule = "cosine";  ///< constant | cosine | warmup-cosine
  double warmup_share = 0.0;        ///< warm-up as a share of the run's epochs (warmup-cosine)
  double grad_clip = 0.0;           ///< global gradient-norm clip (0 = off)
  std::string schedule_source;      ///< where the schedule, warm-up and clipping come from
  std::vector<RecipeOptimizer> optimizers;
  /// What a user should know that the options do not say (batch sizes and epochs of the source,
  /// differences from it).
  std::string notes;

  /// The settings of `optimizer`, or nullptr when the recipe does not cover it.
  const RecipeOptimizer* find(std::string_view optimizer) const;
};

/// Every recipe, in display order.
const std::vector<Recipe>& recipes();
/// The names of the recipes.
std::vector<std::string> recipe_names();
/// The recipe named `name`; an unknown name is a sentence error listing the names (with a "did you
/// mean" suggestion).
const Recipe& find_recipe(std::string_view name);

/// The recipe a run uses when none is named: "lm-pretrain" for the language model (--model gpt),
/// none ("") otherwise.
std::string default_recipe(const TrainConfig& config);

/// The options a run of `optimizer` uses under `recipe`: the recipe's, then `given` key by key
/// (given values win). An optimizer the recipe does not cover gets `given` unchanged.
OptionValues recipe_options(const Recipe& recipe, std::string_view optimizer,
                            const OptionValues& given);

/// Which of the run's settings the user set explicitly (they are kept).
struct ExplicitSettings {
  bool schedule = false, warmup = false, grad_clip = false;
};

/// Applies `recipe` to `config` (its optimizer's options under the given ones, and the schedule,
/// warm-up and clipping unless explicit) and records its name.
void apply_recipe(const Recipe& recipe, TrainConfig& config, const ExplicitSettings& explicit_);

}  // namespace blr::torch
