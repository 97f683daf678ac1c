// The Pima set-up of research/peers.md §4(e): training-set standardisation (ddof 0), an intercept
// column, type = Yes as the positive class.
#pragma once

#include <string>

#include "blr/io/csv.hpp"

namespace blr::inference::testing {

struct PimaData {
  Matrix x_train, x_test;
  Vector y_train, y_test;
  Vector npreg_train, npreg_test;
};

inline PimaData load_pima() {
  const auto train = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/pima_train.csv");
  const auto test = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/pima_test.csv");
  const auto names = train.columns_except({"type"});
  const auto s = io::Standardizer::fit(train.numeric_columns(names), names);
  PimaData p;
  p.x_train = io::with_intercept(s.transform(train.numeric_columns(names)));
  p.x_test = io::with_intercept(s.transform(test.numeric_columns(names)));
  p.y_train = train.binary_labels("type", "Yes", {"Yes", "No"});
  p.y_test = test.binary_labels("type", "Yes", {"Yes", "No"});
  p.npreg_train = train.count_column("npreg");
  p.npreg_test = test.count_column("npreg");
  return p;
}

}  // namespace blr::inference::testing
