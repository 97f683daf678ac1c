// `blr multimodal`: the mixture-of-Gaussians BLR (§3.2) on a multimodal test function.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "blr/algorithms/multimodal.hpp"
#include "blr/model/test_functions.hpp"
#include "command.hpp"
#include "json_output.hpp"

namespace {

struct MultimodalArgs {
  std::string function = "himmelblau";
  blr::MultimodalOptions options;
  double rate = 0.05;
  int samples = 10;
  std::uint64_t seed = 0;
  std::string json;
};

template <class F>
int run_on(const F& f, const MultimodalArgs& args) {
  blr::MultimodalOptions options = args.options;
  options.rule.rate = blr::Schedule::constant(args.rate);
  options.rule.samples = args.samples;
  blr::Rng rng(args.seed);
  const blr::MixtureState state = blr::find_minima(f, rng, options);
  fmt::print("Mixture BLR on {} ({} components, T = {}, {} steps)\n", args.function,
             options.components, options.temperature, options.steps);
  fmt::print("{:>4} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "k", "mean[0]", "mean[1]", "sd[0]",
             "sd[1]", "f(mean)");
  nlohmann::json out = nlohmann::json::array();
  for (blr::Index k = 0; k < state.q.size(); ++k) {
    const auto& c = state.q.component(k);
    const blr::Vector sd = c.variance().cwiseSqrt();
    const double value = f.value(c.mean);
    fmt::print("{:>4} {:>12.6f} {:>12.6f} {:>12.4g} {:>12.4g} {:>12.3e}\n", k, c.mean[0],
               c.mean.size() > 1 ? c.mean[1] : 0.0, sd[0], sd.size() > 1 ? sd[1] : 0.0, value);
    out.push_back({{"mean", std::vector<double>(c.mean.data(), c.mean.data() + c.mean.size())},
                   {"sd", std::vector<double>(sd.data(), sd.data() + sd.size())},
                   {"value", value}});
  }
  if (!args.json.empty()) {
    blr::cli::write_json_text(
        args.json, nlohmann::json{{"function", args.function}, {"components", out}}.dump(2));
  }
  return 0;
}

void setup_multimodal(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MultimodalArgs>();
  args->options.temperature = 0.05;
  auto* cmd = app.add_subcommand(
      "multimodal", "Find several minima in one run with the mixture-of-Gaussians BLR (§3.2).");
  cmd->add_option("--function", args->function, "himmelblau | branin | six-hump-camel")
      ->check(CLI::IsMember({"himmelblau", "branin", "six-hump-camel"}));
  cmd->add_option("--components", args->options.components, "Number of mixture components (a square for the grid start).")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", args->options.temperature, "T: the loss is divided by T.")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steps", args->options.steps, "Number of BLR steps.")->check(CLI::PositiveNumber);
  cmd->add_option("--rate", args->rate, "Step size ρ in (0, 1].")->check(CLI::Range(1e-12, 1.0));
  cmd->add_option("--samples", args->samples, "Monte Carlo draws per component and step.")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "Random seed.");
  cmd->add_flag("!--random-start", args->options.grid, "Draw the starting means uniformly instead of on a grid.");
  cmd->add_option("--json", args->json, "Write the components to this JSON file ('-' = stdout).");
  cmd->callback([args, &exit_code] {
    if (args->function == "himmelblau") {
      exit_code = run_on(blr::Himmelblau{}, *args);
    } else if (args->function == "branin") {
      args->options.box_low = -5.0;
      args->options.box_high = 15.0;
      exit_code = run_on(blr::Branin{}, *args);
    } else {
      args->options.box_low = -2.0;
      args->options.box_high = 2.0;
      exit_code = run_on(blr::SixHumpCamel{}, *args);
    }
  });
}

BLR_REGISTER_COMMAND("multimodal", 15, setup_multimodal);

}  // namespace
