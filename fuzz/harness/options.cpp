// Fuzz harness: option tables (include/blr/core/option_table.hpp) with the presets' tables
// (IVON, Vadam, VOGN in src/core/presets/), as the CLI flags and the JSON of runs and
// checkpoints reach them.
//
// The first byte chooses the table (byte % 3) and the path (byte / 3 % 2): JSON — the rest is a
// JSON object read with options_from_json and applied — or flags — the rest is lines
// "key=value", each parsed as the CLI parses --<optimizer>-<key> and set. Then the options are
// validated. Properties checked for accepted options: every number and integer lies in its
// declared range (finite unless the range allows +inf), every choice is one of its names, and
// options_to_json → options_from_json → apply gives the same values back.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "blr/algorithms/ivon.hpp"
#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/algorithms/vadam.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace blr;
using blr::fuzz::accepted;
using blr::fuzz::require;

template <class O>
void run(bool json, const std::string& text) {
  const auto& table = O::table();
  O o{};
  const bool given = accepted([&] {
    if (json) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("not JSON: ") + e.what());
      }
      table.apply(o, options_from_json(j));
    } else {
      std::size_t start = 0;
      while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        const std::size_t eq = line.find('=');
        if (eq != std::string::npos) {
          const std::string key = line.substr(0, eq);
          table.set(o, key, table.at(key, "fuzz").parse(line.substr(eq + 1)));
        }
        start = end + 1;
      }
    }
  });
  if (!given || !accepted([&] { validate_options(o); })) return;
  for (const auto& info : table.options()) {
    const OptionValue v = table.get(o, info.key);
    if (const auto* d = std::get_if<double>(&v)) {
      require(info.range.contains(*d), "accepted option '" + info.key + "' is outside its range");
      require(std::isfinite(*d) || (info.range.infinite_ok && *d > 0),
              "accepted option '" + info.key + "' is not finite");
    } else if (const auto* i = std::get_if<int64_t>(&v)) {
      require(info.range.contains(static_cast<double>(*i)),
              "accepted option '" + info.key + "' is outside its range");
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      require(std::find(info.choices.begin(), info.choices.end(), *s) != info.choices.end(),
              "accepted option '" + info.key + "' is not one of its choices");
    }
  }
  O back{};
  require(accepted([&] {
            table.apply(back, options_from_json(
                                  nlohmann::json::parse(options_to_json(table.values(o)).dump())));
          }),
          "options written to JSON cannot be read back");
  require(table.values(back) == table.values(o), "the JSON round trip changed an option");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool json = (data[0] / 3) % 2 == 0;
  switch (data[0] % 3) {
    case 0:
      run<IvonOptions>(json, text);
      break;
    case 1:
      run<VadamOptions>(json, text);
      break;
    default:
      run<VognOptions>(json, text);
      break;
  }
  return 0;
}
