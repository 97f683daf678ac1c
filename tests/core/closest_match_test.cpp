// closest_match: the "did you mean" of option keys, CLI flags and commands — nearest candidate by
// optimal-string-alignment distance (a swap of neighbouring letters is one edit), offered only
// when within a third of the word's length.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blr/core/option_table.hpp"

namespace blr {
namespace {

const std::vector<std::string> kCommands = {"table1", "multimodal", "infer", "train", "eval",
                                            "compare", "bench", "optimizers"};

TEST(ClosestMatch, SwappedNeighboursCountAsOneEdit) {
  EXPECT_EQ(closest_match("trian", kCommands), "train");  // plain Levenshtein: 2 edits, refused
  EXPECT_EQ(closest_match("tabel1", kCommands), "table1");
  EXPECT_EQ(closest_match("hess_inti", {"hess_init", "hess_approx"}), "hess_init");
}

TEST(ClosestMatch, InsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(closest_match("--epoch", {"--epochs", "--seed", "--eval"}), "--epochs");
  EXPECT_EQ(closest_match("compere", kCommands), "compare");
  EXPECT_EQ(closest_match("optimizerss", kCommands), "optimizers");
}

TEST(ClosestMatch, NothingCloseGivesNoSuggestion) {
  EXPECT_EQ(closest_match("xyzzy", kCommands), "");
  EXPECT_EQ(closest_match("tr", kCommands), "");  // two edits from "train" are most of the word
  EXPECT_EQ(closest_match("train", {}), "");
}

}  // namespace
}  // namespace blr
