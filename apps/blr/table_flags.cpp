// Flags generated from option tables (table_flags.hpp).
#include "table_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>

#include "blr/core/error.hpp"
#include "blr/inference/methods.hpp"

namespace blr::cli {
namespace {

std::string flag_of(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

}  // namespace

std::vector<FlagSource> inference_flag_sources(
    const std::function<bool(const inference::InferenceMethod&)>& keep,
    const std::vector<std::string>& shared) {
  std::vector<FlagSource> out;
  for (const auto& m : inference::inference_methods())
    if (m.options != nullptr && keep(m))
      out.push_back({m.model + " " + m.method, m.options, m.preset});
  for (const auto& name : shared) {
    const auto& tables = inference::inference_shared_options();
    const auto it = std::find_if(tables.begin(), tables.end(),
                                 [&](const inference::SharedOptions& t) { return t.name == name; });
    check(it != tables.end(), fmt::format("No shared option table is named '{}'.", name));
    out.push_back({it->name, it->options, {},
                   [&table = *it](const OptionInfo& o) { return table.default_text(o); }});
  }
  return out;
}

void TableFlags::add_to(CLI::App* cmd, const std::vector<FlagSource>& sources,
                        const std::vector<std::string>& skip, const std::string& group) {
  // Per key, in the order first seen: its first description and, per (help, default), the
  // sources where they hold.
  struct Variant {
    std::string help, default_text;
    std::vector<std::string> labels;
  };
  struct Entry {
    OptionInfo info;
    std::vector<Variant> variants;
  };
  std::vector<Entry> entries;
  for (const auto& source : sources) {
    for (const auto& o : source.schema->options()) {
      if (std::find(skip.begin(), skip.end(), o.key) != skip.end()) continue;
      auto e = std::find_if(entries.begin(), entries.end(),
                            [&](const Entry& x) { return x.info.key == o.key; });
      if (e == entries.end()) {
        entries.push_back({o, {}});
        e = entries.end() - 1;
      }
      check(e->info.type == o.type,
            fmt::format("Internal: option '{}' has two types among the tables.", o.key));
      const std::string d = source.default_text ? source.default_text(o)
                                                : o.default_text(preset_value(source.preset, o));
      auto v = std::find_if(e->variants.begin(), e->variants.end(), [&](const Variant& x) {
        return x.help == o.help && x.default_text == d;
      });
      if (v == e->variants.end()) {
        e->variants.push_back({o.help, d, {}});
        v = e->variants.end() - 1;
      }
      v->labels.push_back(source.label);
      where_[o.key].push_back(source.label);
    }
  }
  for (const auto& e : entries) {
    // "help (default d: labels)", one per meaning and default.
    std::vector<std::string> parts;
    for (const auto& v : e.variants)
      parts.push_back(
          fmt::format("{} (default {}: {})", v.help, v.default_text, fmt::join(v.labels, ", ")));
    const OptionInfo info = e.info;
    auto* option = cmd->add_option_function<std::string>(
        flag_of(info.key),
        [this, info](const std::string& text) { given_.give(info.key, info.parse(text)); },
        fmt::format("{}.", fmt::join(parts, "; ")));
    // The type (and a choice's names) at once; the range is the running method's (apply).
    option->check(
        [info](const std::string& text) {
          const OptionSpellingScope flags(OptionSpelling::kFlag);
          try {
            info.parse(text);
          } catch (const Error& e) {
            return std::string(e.what());
          }
          return std::string();
        },
        "");
    switch (info.type) {
      case OptionType::kNumber:
        option->type_name("FLOAT");
        break;
      case OptionType::kInteger:
        option->type_name("INT");
        break;
      case OptionType::kSwitch:
        option->type_name("BOOL");
        break;
      case OptionType::kChoice:
        option->type_name(fmt::format("{{{}}}", fmt::join(info.choices, ",")));
        break;
    }
    option->group(group);
  }
}

void TableFlags::require_taken(const std::string& run) const {
  given_.require_taken(run, [this](const std::string& key) {
    const auto w = where_.find(key);
    return w == where_.end() ? std::string()
                             : fmt::format("{} (blr methods lists each method's options)",
                                           fmt::join(w->second, ", "));
  });
}

}  // namespace blr::cli
