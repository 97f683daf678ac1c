// Pictures of the network sensitivities (blr/torch/posterior/sensitivity.hpp), drawn with gnuplot (Debian
// gnuplot-nox) like the training plots (plots.hpp); data and scripts go to DIR/plot-data/:
//   DIR/influence.png   the most and the least influential training images (score s_i), each with
//                       its index, label and score
//   DIR/validation.png  predicted against true change of the prediction when an example (and,
//                       with leave-one-class-out, a class) is removed and the model retrained
//                       (sensitivity_validation.hpp), log-log, with Pearson's r
//   DIR/loo.png         the leave-one-out NLL estimate over the epochs of a run against the test
//                       NLL and the training NLL (blr train --sensitivity-every)
// Without gnuplot a picture is skipped with a note on `log` (its data are still written).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "blr/torch/posterior/sensitivity_validation.hpp"

namespace blr::torch {

/// The names of a data set's classes: Fashion-MNIST's ten for the built-in set, none (numbers)
/// for a user's data, whose labels are numbers.
std::vector<std::string> class_names_of(const std::string& data);

/// The label's name from `names`, or "class N" when it has none.
std::string class_name(int64_t label, const std::vector<std::string>& names);

/// DIR/influence.png from images N×1×H×W (or N×H×W), labels, scores and the ranked indices;
/// each image titled with its label's name from `class_names` (class_name).
bool write_influence_grid(const std::string& dir, const ::at::Tensor& images,
                          const ::at::Tensor& labels, const ::at::Tensor& score,
                          const std::vector<int64_t>& most, const std::vector<int64_t>& least,
                          const std::string& title, std::ostream& log,
                          const std::vector<std::string>& class_names = {});

/// DIR/validation.png; `classes` may be null (no leave-one-class-out).
bool write_validation_scatter(const std::string& dir, const RetrainValidation& examples,
                              const RetrainValidation* classes, const std::string& title,
                              std::ostream& log);

/// One point of the LOO curve.
struct LooPoint {
  int64_t epoch = 0;
  double loo_nll = 0.0, train_nll = 0.0, test_nll = 0.0;
};

/// DIR/loo.png.
bool write_loo_curve(const std::string& dir, const std::vector<LooPoint>& points,
                     const std::string& title, std::ostream& log);

}  // namespace blr::torch
