// GivenOptions: a run's options by key, each taken by the tables the run applies. A KeySelection
// narrows what one apply takes (only some keys, or all but some); a key no apply took is refused
// in one sentence, never ignored: glm's CVI takes CVI's keys but `family` (the request spells
// it), gpc's hyperparameter search L-BFGS's but `max_iterations`.
#include <gtest/gtest.h>

#include "blr/core/option_table.hpp"
#include "blr/inference/lbfgs.hpp"
#include "error_message.hpp"

namespace blr {
namespace {

using inference::LbfgsOptions;

GivenOptions given_memory_and_iterations() {
  return GivenOptions({{"memory", OptionValue(std::int64_t{4})},
                       {"max_iterations", OptionValue(std::int64_t{7})}});
}

TEST(KeySelection, AllOnlyAndAllBut) {
  EXPECT_TRUE(KeySelection{}.takes("memory"));
  EXPECT_TRUE(KeySelection::only_these({"memory"}).takes("memory"));
  EXPECT_FALSE(KeySelection::only_these({"memory"}).takes("max_iterations"));
  EXPECT_FALSE(KeySelection::all_but({"memory"}).takes("memory"));
  EXPECT_TRUE(KeySelection::all_but({"memory"}).takes("max_iterations"));
}

TEST(GivenOptions, AnApplyTakesEveryKeyItsTableHasByDefault) {
  const GivenOptions given = given_memory_and_iterations();
  LbfgsOptions o;
  given.apply(LbfgsOptions::table(), o);
  EXPECT_EQ(o.memory, 4);
  EXPECT_EQ(o.max_iterations, 7);
  EXPECT_NO_THROW(given.require_taken("the test", {}));
}

TEST(GivenOptions, AKeyLeftOutByTheSelectionIsNotSetAndIsRefused) {
  for (const KeySelection& keys :
       {KeySelection::all_but({"max_iterations"}), KeySelection::only_these({"memory"})}) {
    const GivenOptions given = given_memory_and_iterations();
    LbfgsOptions o;
    given.apply(LbfgsOptions::table(), o, keys);
    EXPECT_EQ(o.memory, 4);
    EXPECT_EQ(o.max_iterations, LbfgsOptions{}.max_iterations);
    testing::expect_error(
        [&] {
          given.require_taken("gpc's search", [](const std::string&) { return "gpr"; });
        },
        {"Option 'max_iterations' does not apply to gpc's search; it is an option of gpr."});
  }
}

}  // namespace
}  // namespace blr
