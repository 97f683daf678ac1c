// require_converged: a converged fit passes; one that stopped at its cap, or before it, is one
// sentence naming the fit, the cap and the remedy (issue 34: unconverged fits are refused).
#include "blr/core/convergence.hpp"

#include <gtest/gtest.h>

#include "error_message.hpp"

namespace blr {
namespace {

TEST(RequireConverged, PassesAConvergedFit) {
  EXPECT_NO_THROW(require_converged(true, "EM", 1000, 1000, "iterations", "raise --max-iterations"));
}

TEST(RequireConverged, NamesTheCapAndTheRemedy) {
  EXPECT_EQ(testing::error_of([] {
              require_converged(false, "EM", 1000, 1000, "iterations", "raise --max-iterations");
            }),
            "EM stopped at its cap of 1000 iterations without converging; raise --max-iterations.");
  EXPECT_EQ(testing::error_of([] {
              require_converged(false, "Newton's method", 7, 100, "iterations",
                                "loosen --tolerance");
            }),
            "Newton's method stopped after 7 of at most 100 iterations without converging; loosen "
            "--tolerance.");
}

}  // namespace
}  // namespace blr
