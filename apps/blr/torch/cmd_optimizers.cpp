// `blr optimizers`: every registered optimizer and its options, from the option tables, and the
// recipes (train/recipe.hpp) — as a
// table on stdout, as Markdown (the reference section of docs/torch.md is this output, checked by
// tests/cli/optimizer_docs.sh so that it cannot drift), or as JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "../json_output.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/recipe.hpp"

namespace {

using blr::DefaultFrom;
using blr::OptionInfo;
using blr::OptionType;

// The flag of an option on train/compare; a posterior fitted after training (laplace) is set up
// by its own command instead.
std::string flag_of(const blr::torch::OptimizerEntry& entry, std::string key) {
  if (!entry.trains) return fmt::format("(blr {})", entry.name);
  std::replace(key.begin(), key.end(), '_', '-');
  return fmt::format("--{}-{}", entry.name, key);
}

std::string default_of(const OptionInfo& o) {
  switch (o.default_from) {
    case DefaultFrom::kTrainingSetSize: return "training-set size";
    case DefaultFrom::kRunSeed: return "run seed";
    case DefaultFrom::kBatchSize: return "run batch size";
    case DefaultFrom::kInitialiser: break;
  }
  return OptionInfo::format(o.default_value);
}

std::string allowed_of(const OptionInfo& o) {
  switch (o.type) {
    case OptionType::kSwitch: return "true, false";
    case OptionType::kChoice: return fmt::format("{}", fmt::join(o.choices, ", "));
    default: return o.range.describe();
  }
}

// A recipe's option values as "key value, ..." in table order.
std::string recipe_values(const blr::OptionValues& values) {
  std::string out;
  for (const auto& [key, value] : values) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", key, OptionInfo::format(value));
  }
  return out;
}

std::string recipe_schedule(const blr::torch::Recipe& r) {
  std::string out = r.schedule;
  if (r.schedule == "warmup-cosine") {
    out += fmt::format(", warm-up {:g} % of the epochs", 100.0 * r.warmup_share);
  }
  if (r.grad_clip > 0) out += fmt::format(", gradient norm clipped at {:g}", r.grad_clip);
  return out;
}

std::string recipes_markdown() {
  std::string out =
      "## Recipes\n\n"
      "`--recipe NAME` on train, compare, continual, ensemble and launch (and "
      "`blr.recipe(NAME, ...)` in Python) sets the options below; flags given override them, and `ess` stays the "
      "training-set size unless a recipe names it.\n\n";
  for (const auto& r : blr::torch::recipes()) {
    out += fmt::format("### recipe `{}`\n\n{}. Schedule: {} ({}).\n\n", r.name, r.summary,
                       recipe_schedule(r), r.schedule_source);
    out += "| optimizer | options | source |\n|---|---|---|\n";
    for (const auto& o : r.optimizers) {
      out += fmt::format("| `{}` | {} | {} |\n", o.optimizer, recipe_values(o.options), o.source);
    }
    out += fmt::format("\n{}\n\n", r.notes);
  }
  return out;
}

nlohmann::json recipes_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : blr::torch::recipes()) {
    nlohmann::json optimizers = nlohmann::json::array();
    for (const auto& o : r.optimizers) {
      optimizers.push_back({{"optimizer", o.optimizer},
                            {"options", blr::options_to_json(o.options)},
                            {"source", o.source}});
    }
    out.push_back({{"name", r.name},
                   {"summary", r.summary},
                   {"schedule", r.schedule},
                   {"warmup_share", r.warmup_share},
                   {"grad_clip", r.grad_clip},
                   {"schedule_source", r.schedule_source},
                   {"optimizers", optimizers},
                   {"notes", r.notes}});
  }
  return out;
}

// What an entry's optimizer offers the posterior tools (capabilities.hpp), as the registry
// records it.
std::vector<std::string> capabilities_of(const blr::torch::OptimizerEntry& e) {
  std::vector<std::string> out;
  if (e.gaussian_posterior) out.emplace_back("Gaussian posterior");
  if (e.diagonal_gaussian_posterior) out.emplace_back("mean-field state and prior");
  if (e.data_parallel_statistics) out.emplace_back("data-parallel statistics");
  return out;
}

std::string kind_line(const blr::torch::OptimizerEntry& e) {
  const auto capabilities = capabilities_of(e);
  return fmt::format("Kind: {}. Capabilities: {}.", blr::torch::kind_name(e.kind),
                     capabilities.empty() ? std::string("none")
                                          : fmt::format("{}", fmt::join(capabilities, ", ")));
}

std::string markdown() {
  std::string out;
  for (const auto& e : blr::torch::optimizers()) {
    out += fmt::format("### `{}`\n\n{}. {}\n\n", e.name, e.summary, kind_line(e));
    out += "| option | CLI flag | type | default | allowed | scope | meaning |\n";
    out += "|---|---|---|---|---|---|---|\n";
    for (const auto& o : e.options->options()) {
      out += fmt::format("| `{}` | `{}` | {} | {} | {} | {} | {} |\n", o.key, flag_of(e, o.key),
                         blr::type_name(o.type), default_of(o), allowed_of(o),
                         o.scope == blr::OptionScope::kGroup ? "group" : "optimizer", o.help);
    }
    out += "\n";
  }
  return out;
}

nlohmann::json to_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : blr::torch::optimizers()) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : e.options->options()) {
      options.push_back({{"key", o.key},
                         {"flag", flag_of(e, o.key)},
                         {"type", blr::type_name(o.type)},
                         {"default", default_of(o)},
                         {"allowed", allowed_of(o)},
                         {"scope", o.scope == blr::OptionScope::kGroup ? "group" : "optimizer"},
                         {"help", o.help}});
    }
    out.push_back({{"name", e.name},
                   {"summary", e.summary},
                   {"kind", std::string(blr::torch::kind_name(e.kind))},
                   {"capabilities", capabilities_of(e)},
                   {"variational", e.variational},
                   {"trains", e.trains},
                   {"options", options}});
  }
  return out;
}

int run(bool as_markdown, const std::string& json_path) {
  if (as_markdown) {
    fmt::print("{}", markdown());
    fmt::print("{}", recipes_markdown());
  } else {
    for (const auto& e : blr::torch::optimizers()) {
      fmt::print("{} — {}\n  {}\n", e.name, e.summary, kind_line(e));
      for (const auto& o : e.options->options()) {
        fmt::print("  {:<28} {:<8} default {:<18} {}\n", flag_of(e, o.key),
                   blr::type_name(o.type), default_of(o), o.help);
      }
      fmt::print("\n");
    }
    fmt::print("Recipes (--recipe NAME; flags given override them):\n");
    for (const auto& r : blr::torch::recipes()) {
      fmt::print("{} — {}; {}\n", r.name, r.summary, recipe_schedule(r));
      for (const auto& o : r.optimizers) {
        fmt::print("  {:<10} {}\n", o.optimizer, recipe_values(o.options));
      }
    }
  }
  if (!json_path.empty()) {
    const nlohmann::json doc = {{"optimizers", to_json()}, {"recipes", recipes_json()}};
    blr::cli::write_json_text(json_path, doc.dump(2));
  }
  return 0;
}

void setup_optimizers(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("optimizers", blr::cli::torch_command("optimizers").summary);
  auto markdown_flag = std::make_shared<bool>(false);
  auto json = std::make_shared<std::string>();
  cmd->add_flag("--markdown", *markdown_flag, "Print the reference as Markdown (docs/torch.md).");
  cmd->add_option("--json", *json, "Also write the reference as JSON to this file ('-' = stdout).");
  cmd->callback([markdown_flag, json, &exit_code] { exit_code = run(*markdown_flag, *json); });
}

BLR_REGISTER_COMMAND("optimizers", blr::cli::torch_command("optimizers").order, setup_optimizers);

}  // namespace
