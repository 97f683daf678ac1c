// A state-space model from JSON: the matrices arrive as written, and faults are sentences naming
// the file and the key.
#include "blr/io/state_space.hpp"

#include <gtest/gtest.h>

#include <string>

#include "blr/core/error.hpp"

namespace blr::io {
namespace {

TEST(StateSpaceFile, ReadsTheMatrices) {
  const auto f = parse_state_space(
      R"({"A": [[1, 1], [0, 1]], "C": [[1, 0]], "Q": [[2, 0], [0, 0]], "R": [[3]],
          "init_mean": [5, 0], "init_cov": [[7, 0], [0, 7]], "states": ["level", "slope"]})",
      "m.json");
  EXPECT_EQ(f.model.transition, (Matrix(2, 2) << 1, 1, 0, 1).finished());
  EXPECT_EQ(f.model.observation, (Matrix(1, 2) << 1, 0).finished());
  EXPECT_EQ(f.model.state_noise(0, 0), 2.0);
  EXPECT_EQ(f.model.obs_noise(0, 0), 3.0);
  EXPECT_EQ(f.model.init_mean, (Vector(2) << 5, 0).finished());
  EXPECT_EQ(f.model.init_cov(1, 1), 7.0);
  EXPECT_EQ(f.states, (std::vector<std::string>{"level", "slope"}));
  // A singular Q is allowed (semi-definite); default state names.
  const auto g = parse_state_space(
      R"({"A": [[1]], "C": [[1]], "Q": [[0]], "R": [[1]], "init_mean": [0], "init_cov": [[1]]})",
      "g.json");
  EXPECT_EQ(g.states, (std::vector<std::string>{"x1"}));
}

TEST(StateSpaceFile, FaultsNameTheFileAndKey) {
  auto message = [](const std::string& text) {
    try {
      parse_state_space(text, "m.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(R"({"A": [[1]], "C": [[1]], "Q": [[1]], "R": [[-1]], "init_mean": [0],
                        "init_cov": [[1]]})")
                .find("Model file 'm.json': The observation noise R must be symmetric positive "
                      "definite."),
            std::string::npos);
  EXPECT_NE(message(R"({"A": [[1]], "C": [[1]], "Q": [[1]], "R": [[1]], "init_mean": [0, 1],
                        "init_cov": [[1]]})")
                .find("The initial mean must have 1 entries"),
            std::string::npos);
  EXPECT_NE(message(R"({"A": [[1]]})").find("lacks the key 'C'"), std::string::npos);
  EXPECT_NE(message("{").find("cannot be read as JSON"), std::string::npos);
  EXPECT_NE(message(R"({"A": [[1]], "C": [[1]], "Q": [[1e999]], "R": [[1]], "init_mean": [0],
                        "init_cov": [[1]]})")
                .find("cannot be read as JSON"),
            std::string::npos);
}

}  // namespace
}  // namespace blr::io
