#include "blr/model/dataset.hpp"

#include <fmt/format.h>

#include "blr/core/error.hpp"

namespace blr {

DataTerm::DataTerm(Matrix inputs, Vector targets, const std::string& owner) {
  check(inputs.rows() > 0, fmt::format("{}: the data set is empty.", owner));
  check(inputs.rows() == targets.size(),
        fmt::format("{}: the inputs have {} rows but there are {} targets.", owner, inputs.rows(),
                    targets.size()));
  check(inputs.allFinite(), fmt::format("{}: the inputs hold a NaN or an infinity.", owner));
  check(targets.allFinite(), fmt::format("{}: the targets hold a NaN or an infinity.", owner));
  auto data = std::make_shared<Dataset>();
  data->inputs = std::move(inputs);
  data->targets = std::move(targets);
  full_ = data;
  batch_ = full_;
  scale_ = 1.0;
}

DataTerm DataTerm::restricted(const std::vector<Index>& rows, const std::string& owner) const {
  check(full_ != nullptr, fmt::format("{}: the loss holds no data.", owner));
  check(!rows.empty(), fmt::format("{}: a minibatch needs at least one row.", owner));
  const Index n = full_->size();
  auto batch = std::make_shared<Dataset>();
  batch->inputs.resize(static_cast<Index>(rows.size()), full_->inputs.cols());
  batch->targets.resize(static_cast<Index>(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Index r = rows[k];
    check(r >= 0 && r < n, fmt::format("{}: minibatch row {} is out of range for a data set of {} "
                                       "examples (valid rows are 0 to {}).",
                                       owner, r, n, n - 1));
    batch->inputs.row(static_cast<Index>(k)) = full_->inputs.row(r);
    batch->targets[static_cast<Index>(k)] = full_->targets[r];
  }
  DataTerm out;
  out.full_ = full_;
  out.batch_ = std::move(batch);
  out.scale_ = static_cast<double>(n) / static_cast<double>(rows.size());
  return out;
}

}  // namespace blr
