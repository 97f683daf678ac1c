#include "blr/torch/data/load.hpp"

#include "blr/core/error.hpp"
#include "blr/torch/data/csv_data.hpp"
#include "blr/torch/data/fashion_mnist.hpp"
#include "blr/torch/data/prepare.hpp"
#include "blr/torch/data/tensor_file.hpp"

namespace blr::torch {

Dataset load_dataset(const TrainConfig& c) {
  if (c.data == kFashionMnist) {
    FashionMnistOptions options = c.data_options;
    options.seed = c.seed;
    return load_fashion_mnist(options);
  }
  PrepareOptions prepare;
  prepare.train_limit = c.data_options.train_limit;
  prepare.test_limit = c.data_options.test_limit;
  prepare.validation_fraction = c.data_options.validation_fraction;
  prepare.seed = c.seed;
  Dataset d;
  if (data_format(c.data) == DataFormat::kTensorFile) {
    d = read_tensor_file({c.data, c.task});
  } else {
    CsvData csv = read_csv_data({c.data, c.test_data, c.label, c.task, c.categorical, c.missing});
    d = std::move(csv.data);
    prepare.standardise_columns = std::move(csv.numeric_columns);
    prepare.column_names = std::move(csv.numeric_names);
  }
  finish_dataset(d, prepare);
  return d;
}

}  // namespace blr::torch
