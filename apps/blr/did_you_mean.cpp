#include "did_you_mean.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "blr/core/option_table.hpp"

namespace blr::cli {
namespace {

// The last subcommand named on the command line (the root when none was).
const CLI::App* innermost(const CLI::App& app) {
  const CLI::App* cmd = &app;
  while (!cmd->get_subcommands().empty()) cmd = cmd->get_subcommands().front();
  return cmd;
}

// "" for the root, " for blr train", " for blr bench step".
std::string for_command(const CLI::App* cmd) {
  std::string path;
  for (; cmd != nullptr && cmd->get_parent() != nullptr; cmd = cmd->get_parent()) {
    path = " " + cmd->get_name() + path;
  }
  return path.empty() ? path : " for blr" + path;
}

std::vector<std::string> flag_names(const CLI::App* cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd->get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App* cmd) {
  std::vector<std::string> names;
  // get_subcommands(filter) is not const in CLI11 2.1; it only reads.
  for (const CLI::App* s : const_cast<CLI::App*>(cmd)->get_subcommands(
           [](const CLI::App* a) { return !a->get_name().empty(); })) {
    names.push_back(s->get_name());
  }
  return names;
}

}  // namespace

std::string did_you_mean(const CLI::App& app) {
  const CLI::App* cmd = innermost(app);
  const std::vector<std::string> subcommands = subcommand_names(cmd);
  for (const auto& word : app.remaining(true)) {
    if (word.size() > 1 && word[0] == '-') {
      const std::string flag = word.substr(0, word.find('='));
      const std::string best = closest_match(flag, flag_names(cmd));
      if (!best.empty()) {
        return fmt::format("unknown option '{}'{}; did you mean '{}'?", flag, for_command(cmd),
                           best);
      }
    } else if (!subcommands.empty()) {
      const std::string best = closest_match(word, subcommands);
      return best.empty() ? fmt::format("unknown command '{}'{}; the commands are {}.", word,
                                        for_command(cmd), fmt::join(subcommands, ", "))
                          : fmt::format("unknown command '{}'{}; did you mean '{}'?", word,
                                        for_command(cmd), best);
    }
  }
  return {};
}

}  // namespace blr::cli
