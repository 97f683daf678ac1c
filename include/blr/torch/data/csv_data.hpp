// A data set from CSV tables (blr's reader and design encoder, blr/io/csv.hpp and design.hpp):
// one row per example, a header naming the columns, the response in column `label` (default:
// the last column), every other column a feature.
//
//   features   numeric columns as numbers, standardised with the training rows' mean and
//              population sd (data/prepare.hpp, step 4); the columns named in `categorical`
//              one-hot coded (treatment coding, the first level in sorted order the reference;
//              a level unseen in training is an error naming it) and left 0/1.
//   response   classification: the distinct labels in sorted order (numeric when all are
//              numbers) are the classes 0..C−1 (at most kMaxCsvClasses); regression: numbers,
//              standardised as every regression target.
//   missing    an empty or NA cell is an error naming its line and column ("error"), or the rows
//              holding one are left out ("drop").
// Without a test table, the test split is held out by data/prepare.hpp's fixed rule. The reader
// refuses files above io::kMaxCsvBytes (4 GiB) before reading them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/data/dataset.hpp"

namespace blr::torch {

inline constexpr std::size_t kMaxCsvClasses = 10000;

struct CsvDataOptions {
  std::string path;
  std::string test_path;  ///< "" = none
  std::string label;      ///< "" = the last column
  std::string task;       ///< "classification" or "regression" (required)
  std::vector<std::string> categorical;
  std::string missing = "error";  ///< error | drop
};

struct CsvData {
  Dataset data;                            ///< features not standardised yet
  std::vector<int64_t> numeric_columns;    ///< columns of x to standardise
  std::vector<std::string> numeric_names;  ///< their names
  ::at::Tensor inputs;                     ///< the encoded `inputs_path` table (not standardised)
};

/// Reads and encodes the table(s); `finish_dataset` standardises. A non-empty `inputs_path` is a
/// table of new inputs (blr predict): its feature columns, encoded as the training table's (the
/// label column may be absent; a missing cell is an error), go to CsvData::inputs.
CsvData read_csv_data(const CsvDataOptions& options, const std::string& inputs_path = "");

}  // namespace blr::torch
