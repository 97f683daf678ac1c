// The parts of the Python extension `blr._blr`, one function per area, each in its own file;
// module.cpp calls them. Values cross as Python objects: tensors without copies (LibTorch's own
// caster), NumPy arrays as Eigen matrices (copied), options as bool/int/float/str.
#pragma once

#include <pybind11/pybind11.h>

#include "blr/core/option_table.hpp"

namespace blr::python {

namespace py = pybind11;

void bind_optimizers(py::module_& m);
void bind_metrics(py::module_& m);
void bind_table1(py::module_& m);
void bind_inference(py::module_& m);
void bind_data(py::module_& m);
void bind_laplace(py::module_& m);
void bind_posterior_tools(py::module_& m);

/// A Python bool, int, float or str as an option value; anything else is a blr::Error naming
/// the key.
OptionValue to_option_value(const std::string& key, const py::handle& value);
/// The value as the Python object of its type.
py::object to_python(const OptionValue& value);
/// A dict of keyword options as option values (keys in the dict's order).
OptionValues to_option_values(const py::dict& options);

}  // namespace blr::python
