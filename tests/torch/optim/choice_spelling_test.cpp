// One spelling per concept in every door (issue 31). Every choice of every option table that the
// CLI, Python and the JSON read (the optimizers' tables of `blr optimizers`; the inference
// methods' and their shared tables of `blr methods`) is lower case with hyphens: last-layer,
// monte-carlo, gaussian-full, at-mean. A concept that two doors share has one spelling: the
// Monte Carlo predictive is monte-carlo in `blr infer`, `blr laplace` and `blr predict`. An
// earlier spelling (last_layer, mc: laplace-torch's, and blr's before 2026-11-29) is read as the
// current one, so old checkpoints and scripts keep working, and it is never listed.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/inference/methods.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/predictive/new_data.hpp"

namespace blr::torch {
namespace {

struct Table {
  std::string label;
  const OptionSchema* schema;
};

std::vector<Table> every_table() {
  std::vector<Table> out;
  for (const auto& entry : optimizers())
    if (entry.options != nullptr) out.push_back({"optimizer " + entry.name, entry.options});
  for (const auto& m : inference::inference_methods())
    if (m.options != nullptr) out.push_back({m.model + " " + m.method, m.options});
  for (const auto& shared : inference::inference_shared_options())
    out.push_back({"shared " + shared.name, shared.options});
  return out;
}

TEST(ChoiceSpelling, EveryChoiceIsLowerCaseWithHyphens) {
  const std::regex house("[a-z0-9]+(-[a-z0-9]+)*");
  int choices = 0;
  for (const auto& table : every_table())
    for (const auto& o : table.schema->options())
      for (const auto& c : o.choices) {
        ++choices;
        EXPECT_TRUE(std::regex_match(c, house))
            << table.label << ", " << o.key << ": '" << c << "'";
      }
  EXPECT_GT(choices, 20);  // the listing reached the tables
}

TEST(ChoiceSpelling, AnEarlierSpellingIsReadAsTheCurrentOneAndNeverListed) {
  int former = 0;
  for (const auto& table : every_table())
    for (const auto& o : table.schema->options())
      for (const auto& [old, current] : o.former_choices) {
        ++former;
        EXPECT_EQ(std::find(o.choices.begin(), o.choices.end(), old), o.choices.end()) << old;
        EXPECT_EQ(o.coerce(OptionValue(old)), OptionValue(current)) << table.label << ", " << o.key;
        EXPECT_EQ(o.parse(old), OptionValue(current)) << table.label << ", " << o.key;
      }
  EXPECT_GE(former, 2);  // the laplace posterior's last_layer and mc
  // A Laplace posterior of a checkpoint written before the rename takes its options as written.
  LaplacePosteriorOptions o;
  LaplacePosteriorOptions::table().apply(o, {{"subset", std::string("last_layer")},
                                             {"predictive", std::string("mc")}});
  EXPECT_EQ(o.subset, LaplaceSubset::kLastLayer);
  EXPECT_EQ(o.predictive, LaplacePredictive::kMonteCarlo);
  // … and writes them in the current spelling (its checkpoint, the JSON).
  EXPECT_EQ(LaplacePosteriorOptions::table().value(o, "subset"),
            OptionValue(std::string("last-layer")));
  EXPECT_EQ(LaplacePosteriorOptions::table().value(o, "predictive"),
            OptionValue(std::string("monte-carlo")));
  EXPECT_THROW(LaplacePosteriorOptions::table().value(o, "subsets"), Error);
}

// blr laplace and blr.Laplace read their choices through read_laplace_choices: the options set,
// each given key written back in its current spelling in the order given, a bad choice refused.
TEST(ChoiceSpelling, TheLaplaceDoorsReadTheirChoicesInOneFunction) {
  const LaplaceChoices read = read_laplace_choices({{"subset", std::string("last_layer")},
                                                    {"structure", std::string("kron")},
                                                    {"predictive", std::string("mc")}});
  EXPECT_EQ(read.options.subset, LaplaceSubset::kLastLayer);
  EXPECT_EQ(read.options.structure, LaplaceStructure::kKronecker);
  EXPECT_EQ(read.options.predictive, LaplacePredictive::kMonteCarlo);
  EXPECT_EQ(read.options.curvature, LaplacePosteriorOptions().curvature);  // not given: default
  ASSERT_EQ(read.spelled.size(), 3u);
  EXPECT_EQ(read.spelled[0].first, "subset");
  EXPECT_EQ(read.spelling("subset"), "last-layer");
  EXPECT_EQ(read.spelling("structure"), "kron");
  EXPECT_EQ(read.spelling("predictive"), "monte-carlo");
  EXPECT_THROW(read.spelling("curvature"), std::logic_error);  // a key that was not read
  try {
    read_laplace_choices({{"predictive", std::string("exact")}});
    ADD_FAILURE() << "a bad choice was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one of monte-carlo, probit"), std::string::npos)
        << e.what();
  }
}

TEST(ChoiceSpelling, TheMonteCarloPredictiveIsOneWordInEveryDoor) {
  const auto has = [](const OptionSchema& schema, const std::string& key, const std::string& c) {
    const OptionInfo* info = schema.find(key);
    return info != nullptr &&
           std::find(info->choices.begin(), info->choices.end(), c) != info->choices.end();
  };
  bool infer = false;
  for (const auto& shared : inference::inference_shared_options())
    if (shared.name == "predictive") infer = has(*shared.options, "predictive", "monte-carlo");
  EXPECT_TRUE(infer) << "blr infer's predictive table lost monte-carlo";
  EXPECT_TRUE(has(LaplacePosteriorOptions::table(), "predictive", "monte-carlo"));
  EXPECT_EQ(parse_predictive_method("monte-carlo"), PredictiveMethod::kMonteCarlo);
  EXPECT_EQ(parse_predictive_method("mc"), PredictiveMethod::kMonteCarlo);  // the earlier one
  EXPECT_THROW(parse_predictive_method("montecarlo"), Error);
}

}  // namespace
}  // namespace blr::torch
