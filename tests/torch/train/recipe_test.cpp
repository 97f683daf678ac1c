// Recipes (train/recipe.hpp): every entry is valid for its optimizer's option table, sets every
// option the run does not supply, cites a source; given options override a recipe key by key;
// the schedule, warm-up and clipping apply unless explicit. Also the trainer's gradient clipping
// (--grad-clip) against its definition, and the posterior diagnostics of a run.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/optim/mean_field.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/posterior/diagnostics.hpp"
#include "blr/torch/train/recipe.hpp"
#include "blr/torch/train/trainer.hpp"
#include "synthetic_data.hpp"

namespace blr::torch {
namespace {

bool registered(const std::string& name) {
  const auto names = optimizer_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(Recipes, EveryEntryIsValidCompleteAndCited) {
  std::set<std::string> names;
  for (const auto& r : recipes()) {
    EXPECT_TRUE(names.insert(r.name).second) << "recipe " << r.name << " appears twice";
    EXPECT_FALSE(r.summary.empty()) << r.name;
    EXPECT_FALSE(r.schedule_source.empty()) << r.name << ": the schedule has no source";
    TrainConfig c;
    c.schedule = r.schedule;
    c.epochs = 40;
    c.warmup_epochs = r.schedule == "warmup-cosine" ? r.warmup_share * 40 : 0.0;
    c.grad_clip = r.grad_clip;
    EXPECT_NO_THROW(c.validate()) << r.name << ": its schedule, warm-up or clip is invalid";
    EXPECT_TRUE(r.warmup_share >= 0 && r.warmup_share < 1) << r.name;
    ASSERT_FALSE(r.optimizers.empty()) << r.name;
    for (const auto& o : r.optimizers) {
      if (!registered(o.optimizer)) continue;  // an optimizer of a layer not built
      EXPECT_FALSE(o.source.empty()) << r.name << "/" << o.optimizer << " cites no source";
      EXPECT_NO_THROW(check_options(o.optimizer, o.options)) << r.name << "/" << o.optimizer;
      // Every option is set, except those whose value comes from the run (ess: the
      // training-set size; the noise seed: the run's --seed; a batch size: the run's).
      const auto& table = *find_optimizer(o.optimizer).options;
      for (const auto& info : table.options()) {
        if (info.default_from != DefaultFrom::kInitialiser) continue;
        const bool set = std::any_of(o.options.begin(), o.options.end(),
                                     [&info](const auto& kv) { return kv.first == info.key; });
        EXPECT_TRUE(set) << "recipe " << r.name << " leaves " << o.optimizer << "'s option '"
                         << info.key << "' at its default";
      }
    }
  }
  for (const std::string expected : {"image-small", "image-resnet", "lm-pretrain", "finetune",
                                     "tabular"}) {
    EXPECT_TRUE(names.count(expected)) << "no recipe " << expected;
  }
}

TEST(Recipes, TheirKeysAreTheTablesOnes) {
  // A recipe key the table does not know would be refused by check_options above; here the
  // recipe for IVON's language-model entry is the IVON paper's GPT-2 configuration.
  const Recipe& lm = find_recipe("lm-pretrain");
  const auto* ivon = lm.find("ivon");
  ASSERT_NE(ivon, nullptr);
  const auto value = [&](const std::string& key) {
    for (const auto& [k, v] : ivon->options) {
      if (k == key) return std::get<double>(v);
    }
    return std::nan("");
  };
  EXPECT_EQ(value("hess_init"), 1e-3);
  EXPECT_EQ(value("clip_radius"), 1e-3);
  EXPECT_EQ(value("ess"), 1e10);
  EXPECT_EQ(value("weight_decay"), 1e-6);
  EXPECT_EQ(lm.schedule, "warmup-cosine");
  EXPECT_EQ(lm.grad_clip, 1.0);
}

TEST(Recipes, GivenOptionsOverrideKeyByKey) {
  const Recipe& r = find_recipe("image-resnet");
  const OptionValues given = {{"lr", 0.05}, {"mc_samples", int64_t{2}}};
  const auto out = recipe_options(r, "ivon", given);
  std::map<std::string, OptionValue> by_key;
  for (const auto& [k, v] : out) {
    EXPECT_TRUE(by_key.emplace(k, v).second) << "key " << k << " appears twice";
  }
  EXPECT_EQ(std::get<double>(by_key.at("lr")), 0.05);
  EXPECT_EQ(std::get<int64_t>(by_key.at("mc_samples")), 2);
  EXPECT_EQ(std::get<double>(by_key.at("hess_init")), 0.5);  // the recipe's
  EXPECT_EQ(std::get<double>(by_key.at("weight_decay")), 2e-4);
  // An optimizer the recipe does not cover keeps what was given.
  EXPECT_EQ(recipe_options(r, "ste", given), given);
}

TEST(Recipes, ScheduleWarmupAndClipApplyUnlessExplicit) {
  const Recipe& lm = find_recipe("lm-pretrain");
  TrainConfig c;
  c.optimizer = "adamw";
  c.epochs = 50;
  c.optimizer_options = {{"lr", 3e-4}};
  apply_recipe(lm, c, {});
  EXPECT_EQ(c.schedule, "warmup-cosine");
  EXPECT_DOUBLE_EQ(c.warmup_epochs, 1.0);  // 2 % of 50 epochs
  EXPECT_EQ(c.grad_clip, 1.0);
  EXPECT_EQ(c.recipe, "lm-pretrain");
  EXPECT_NO_THROW(c.validate());
  bool lr_given = false;
  for (const auto& [k, v] : c.optimizer_options) {
    if (k == "lr") lr_given = std::get<double>(v) == 3e-4;
  }
  EXPECT_TRUE(lr_given);

  TrainConfig d;
  d.optimizer = "adamw";
  d.schedule = "constant";
  d.grad_clip = 5.0;
  apply_recipe(lm, d, {.schedule = true, .warmup = false, .grad_clip = true});
  EXPECT_EQ(d.schedule, "constant");
  EXPECT_EQ(d.warmup_epochs, 0.0);  // a warm-up only goes with warmup-cosine
  EXPECT_EQ(d.grad_clip, 5.0);
  EXPECT_NO_THROW(d.validate());
}

TEST(Recipes, TheLanguageModelHasADefaultRecipe) {
  TrainConfig c;
  c.model.kind = "gpt";
  EXPECT_EQ(default_recipe(c), "lm-pretrain");
  c.model.kind = "mlp";
  EXPECT_EQ(default_recipe(c), "");
  c.model.kind = "gpt";
  c.model_file = "model.pt";  // a user's module: no default
  EXPECT_EQ(default_recipe(c), "");
}

TEST(Recipes, AnUnknownNameIsOneSentenceWithASuggestion) {
  try {
    find_recipe("image-smal");
    FAIL() << "an unknown recipe was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Unknown recipe 'image-smal' (did you mean 'image-small'?)"),
              std::string::npos)
        << what;
  }
}

// ---- gradient clipping -------------------------------------------------------------------

TrainConfig sgd_config(double clip) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {8}};
  c.optimizer = "sgd";
  c.optimizer_options = {{"lr", 0.5}, {"momentum", 0.0}, {"weight_decay", 0.0}};
  c.epochs = 1;
  c.batch_size = 60;
  c.seed = 5;
  c.grad_clip = clip;
  return c;
}

// With plain SGD (no momentum, no decay) one step is θ₁ = θ₀ − α·g·min(1, c/(‖g‖ + 1e-6)): the
// clipped run's step is the unclipped run's scaled by that factor, which the test recomputes from
// the unclipped run's gradient norm.
TEST(GradientClip, OneSgdStepIsTheGradientScaledToTheClip) {
  at::set_num_threads(1);
  const auto data = testing::synthetic_data(60, 30);  // one step per epoch
  Trainer plain(sgd_config(0.0), data);
  std::vector<at::Tensor> before;
  for (const auto& p : plain.model().parameters()) before.push_back(p.detach().clone());
  plain.train();
  std::vector<at::Tensor> step;
  double norm2 = 0.0;
  {
    const auto params = plain.model().parameters();
    for (size_t k = 0; k < params.size(); ++k) {
      step.push_back((before[k] - params[k].detach()).to(at::kDouble));
      norm2 += step.back().pow(2).sum().item<double>();
    }
  }
  const double gradient_norm = std::sqrt(norm2) / 0.5;
  ASSERT_GT(gradient_norm, 0.0);
  const double clip = 0.25 * gradient_norm;  // a clip that bites
  Trainer clipped(sgd_config(clip), data);
  clipped.train();
  const double scale = clip / (gradient_norm + 1e-6);
  const auto params = clipped.model().parameters();
  double worst = 0.0, size = 0.0;
  for (size_t k = 0; k < params.size(); ++k) {
    const auto clipped_step = (before[k] - params[k].detach()).to(at::kDouble);
    worst = std::max(worst, (clipped_step - scale * step[k]).abs().max().item<double>());
    size = std::max(size, step[k].abs().max().item<double>());
  }
  // float32 parameters: each step is known to about 2⁻²⁴ of |θ| ≤ 10, so 1e-5 absolute.
  EXPECT_LE(worst, 1e-5) << "the clipped step is not the step scaled by " << scale;
  EXPECT_GT(size * (1 - scale), 1e-3) << "the clip did not change the step";
  EXPECT_DOUBLE_EQ(clipped.result().history.back().clipped_share, 1.0);
  // A clip above the norm changes nothing, bit for bit.
  Trainer loose(sgd_config(10.0 * gradient_norm), data);
  loose.train();
  const auto lp = loose.model().parameters(), pp = plain.model().parameters();
  for (size_t k = 0; k < lp.size(); ++k) EXPECT_TRUE(lp[k].equal(pp[k]));
  EXPECT_DOUBLE_EQ(loose.result().history.back().clipped_share, 0.0);
}

TEST(GradientClip, ANegativeOrNonFiniteClipIsRefused) {
  for (const double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    TrainConfig c = sgd_config(bad);
    try {
      c.validate();
      FAIL() << "grad_clip " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Option 'grad-clip' must be a finite number ≥ 0"),
                std::string::npos)
          << e.what();
    }
  }
}

// ---- posterior diagnostics -----------------------------------------------------------------

TrainConfig ivon_config(double beta2) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {8}};
  c.optimizer = "ivon";
  c.optimizer_options = {{"lr", 0.1}, {"hess_init", 0.5}, {"beta2", beta2}, {"clip_radius", 1e-3}};
  c.epochs = 4;
  c.batch_size = 30;
  c.seed = 2;
  return c;
}

// h moves towards its estimates by at most 1 − β₂ᵗ: with β₂ = 0.99999 and 16 steps every h is
// within 0.016 % of h₀ (the warning's case); with β₂ = 0.5 it has left h₀ almost everywhere.
TEST(PosteriorDiagnostics, TheShareAtTheInitialCurvatureAndTheWarning) {
  at::set_num_threads(1);
  const auto data = testing::synthetic_data(120, 30);
  Trainer stuck(ivon_config(0.99999), data);
  stuck.train();
  const auto& history = stuck.result().history;
  ASSERT_EQ(history.size(), 4u);
  ASSERT_TRUE(history.back().posterior.has_value());
  const auto& d = *history.back().posterior;
  EXPECT_EQ(d.steps, 16);
  EXPECT_EQ(d.initial_curvature, 0.5);
  EXPECT_EQ(d.share_at_initial, 1.0);
  EXPECT_EQ(d.share_decaying, 1.0);  // h₀β₂¹⁶ is within 0.02 % of h₀
  EXPECT_EQ(d.curvature_quantiles.size(), diagnostic_levels().size());
  EXPECT_TRUE(std::is_sorted(d.curvature_quantiles.begin(), d.curvature_quantiles.end()));
  EXPECT_TRUE(std::is_sorted(d.sigma_quantiles.begin(), d.sigma_quantiles.end()));
  // σ = 1/√(ess·(h + δ)) per coordinate, from the optimizer's own precision.
  auto& mf = dynamic_cast<MeanFieldOptimizer&>(stuck.optimizer());
  const auto precision = mf.posterior_precision();
  double sigma_max = 0.0;
  for (const auto& p : precision) sigma_max = std::max(sigma_max, p.rsqrt().max().item<double>());
  EXPECT_NEAR(d.sigma_quantiles.back(), sigma_max, 1e-6 * sigma_max);
  // The clip radius 1e-3 with lr 0.1 and h ≈ 0.5: preconditioned steps of the size of the
  // gradient, far above 1e-3, are clipped nearly everywhere.
  ASSERT_TRUE(std::isfinite(d.share_clipped));
  EXPECT_GT(d.share_clipped, 0.5);
  // The warning comes once, at the first epoch that completes a quarter of the run.
  EXPECT_NE(history[0].warning.find("the posterior has not moved from its initial value"),
            std::string::npos)
      << history[0].warning;
  EXPECT_NE(history[0].warning.find("--ivon-beta2"), std::string::npos) << history[0].warning;
  for (size_t e = 1; e < history.size(); ++e) EXPECT_TRUE(history[e].warning.empty());

  Trainer moving(ivon_config(0.5), data);
  moving.train();
  const auto& m = *moving.result().history.back().posterior;
  EXPECT_LT(m.share_at_initial, 0.1);
  EXPECT_LT(m.share_decaying, 0.1);  // h₀·0.5¹⁶ ≈ 8e-6: the estimates set h
  for (const auto& r : moving.result().history) EXPECT_TRUE(r.warning.empty()) << r.warning;
  // The JSON round trip keeps them.
  const auto back = epoch_from_json(epoch_to_json(moving.result().history.back()));
  ASSERT_TRUE(back.posterior.has_value());
  EXPECT_EQ(back.posterior->curvature_quantiles, m.curvature_quantiles);
  EXPECT_EQ(back.posterior->share_at_initial, m.share_at_initial);
}

TEST(PosteriorDiagnostics, PointEstimatesHaveNone) {
  TrainConfig c = sgd_config(0.0);
  const auto data = testing::synthetic_data(60, 30);
  Trainer t(c, data);
  t.train();
  EXPECT_FALSE(t.result().history.back().posterior.has_value());
}

}  // namespace
}  // namespace blr::torch
