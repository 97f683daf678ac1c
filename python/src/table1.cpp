// blr.table1(): every Table-1 row of Khan & Rue (2023) checked, core and LibTorch layers, as
// `blr table1` prints them.
#include <torch/csrc/utils/pybind.h>

#include "bindings.hpp"
#include "blr/algorithms/table1.hpp"
#include "blr/torch/checks/table1_rows.hpp"

namespace blr::python {

namespace {

py::dict run_row(const Table1Row& row, const std::string& layer) {
  py::dict d;
  d["row"] = row.row;
  d["layer"] = layer;
  d["family"] = row.family;
  d["approximation"] = row.approximation;
  d["reduces_to"] = row.reduces_to;
  d["problem"] = row.problem;
  ReductionResult result;
  {
    py::gil_scoped_release release;
    result = row.check();
  }
  d["max_deviation"] = result.max_deviation;
  d["tolerance"] = result.tolerance;
  d["note"] = result.note;
  d["passed"] = result.pass();
  return d;
}

}  // namespace

void bind_table1(py::module_& m) {
  m.def(
      "table1",
      [](const std::string& layer) {
        check(layer == "all" || layer == "core" || layer == "torch",
              "Option 'layer' must be one of all, core, torch; got '" + layer + "'.");
        py::list out;
        if (layer != "torch") {
          for (const auto& row : table1_rows()) out.append(run_row(row, "core"));
        }
        if (layer != "core") {
          for (const auto& row : ::blr::torch::torch_table1_rows()) out.append(run_row(row, "torch"));
        }
        return out;
      },
      py::arg("layer") = "all",
      "Runs every Table-1 reduction check; one dict per row with the deviation, its tolerance "
      "and whether it passed.");
}

}  // namespace blr::python
