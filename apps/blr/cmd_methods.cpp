// `blr methods`: the registry of inference methods (inference/methods.hpp) — each model and
// method with what it computes, its equations, its doors and its option table — as a table on
// stdout, as Markdown (the generated reference of docs/inference.md, checked by
// tests/cli/inference_methods_docs.sh so that it cannot drift) or as JSON; the tables several
// methods share (the predictive, the sensitivities, the hyperparameters' search) as JSON too,
// what blr.infer.shared_options() returns.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "blr/inference/methods.hpp"
#include "command.hpp"
#include "json_output.hpp"

namespace {

int run_methods(bool markdown, const std::string& json_path, const std::string& shared_path) {
  if (!json_path.empty() || !shared_path.empty()) {
    if (!json_path.empty())
      blr::cli::write_json_text(json_path, blr::inference::inference_methods_json().dump(2));
    if (!shared_path.empty())
      blr::cli::write_json_text(shared_path,
                                blr::inference::inference_shared_options_json().dump(2));
    return 0;
  }
  if (markdown) {
    fmt::print("{}", blr::inference::inference_methods_markdown());
    return 0;
  }
  fmt::print("{:<10} {:<11} {}\n", "model", "method", "what it computes [options]");
  for (const auto& m : blr::inference::inference_methods()) {
    std::string keys;
    if (m.options)
      for (const auto& o : m.options->options()) keys += (keys.empty() ? "" : ", ") + o.key;
    fmt::print("{:<10} {:<11} {}{}\n", m.model, m.method, m.summary,
               keys.empty() ? std::string() : " [" + keys + "]");
  }
  return 0;
}

void setup_methods(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "methods",
      "List the inference methods of `blr infer` and blr.infer: model, method, what it "
      "computes, its equations and its options.");
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<std::string>();
  auto shared = std::make_shared<std::string>();
  cmd->add_flag("--markdown", *markdown, "Print the reference as Markdown (docs/inference.md).");
  cmd->add_option("--json", *json, "Write the registry as JSON to this file ('-' = stdout).");
  cmd->add_option("--shared-json", *shared,
                  "Write the option tables several methods share (predictive, sensitivity, "
                  "hyperparameters) as JSON to this file ('-' = stdout), as "
                  "blr.infer.shared_options() returns them.");
  cmd->callback([markdown, json, shared, &exit_code] {
    exit_code = run_methods(*markdown, *json, *shared);
  });
}

BLR_REGISTER_COMMAND("methods", 21, setup_methods);

}  // namespace
