// A linear-Gaussian state-space model (inference/kalman.hpp) read from JSON:
//
//     {"A": [[1, 1], [0, 1]],        transition (n×n), an array of rows
//      "C": [[1, 0]],                observation (p×n)
//      "Q": [[1500, 0], [0, 1]],     state noise (n×n), symmetric positive semi-definite
//      "R": [[15000]],               observation noise (p×p), symmetric positive definite
//      "init_mean": [1120, 0],       m₁ (n)
//      "init_cov": [[1e7, 0], [0, 1e7]],   P₁ (n×n), symmetric positive definite
//      "states": ["level", "slope"]} optional names of the n states
//
// for x_1 ~ N(m₁, P₁), x_t = A x_{t−1} + η_t (η ~ N(0, Q)), y_t = C x_t + ε_t (ε ~ N(0, R)).
// Numbers are JSON numbers (decimal; JSON has no hexadecimal, inf or nan). Every fault is one
// sentence naming the file and the key: not JSON, an unknown or missing key, a ragged or
// non-numeric matrix, shapes that do not fit together, a noise or initial covariance that is not
// symmetric positive (semi-)definite.
#pragma once

#include <string>
#include <vector>

#include "blr/inference/kalman.hpp"

namespace blr::io {

struct StateSpaceFile {
  inference::StateSpaceModel model;
  std::vector<std::string> states;  ///< names ("x1", "x2", ... unless the file names them)
};

/// Parses JSON text; `source` names it in messages.
StateSpaceFile parse_state_space(const std::string& text, const std::string& source);
/// Reads and parses a file.
StateSpaceFile read_state_space(const std::string& path);

}  // namespace blr::io
