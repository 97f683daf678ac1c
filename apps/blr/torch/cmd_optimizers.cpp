// `blr optimizers`: every registered optimizer and its options, from the option tables — as a
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

std::string markdown() {
  std::string out;
  for (const auto& e : blr::torch::optimizers()) {
    out += fmt::format("### `{}`\n\n{}.\n\n", e.name, e.summary);
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
                   {"variational", e.variational},
                   {"trains", e.trains},
                   {"options", options}});
  }
  return out;
}

int run(bool as_markdown, const std::string& json_path) {
  if (as_markdown) {
    fmt::print("{}", markdown());
  } else {
    for (const auto& e : blr::torch::optimizers()) {
      fmt::print("{} — {}\n", e.name, e.summary);
      for (const auto& o : e.options->options()) {
        fmt::print("  {:<28} {:<8} default {:<18} {}\n", flag_of(e, o.key),
                   blr::type_name(o.type), default_of(o), o.help);
      }
      fmt::print("\n");
    }
  }
  if (!json_path.empty()) blr::cli::write_json_text(json_path, to_json().dump(2));
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
