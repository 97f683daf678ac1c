// Option values between Python and the option tables (bindings.hpp).
#include <fmt/format.h>

#include <limits>

#include "bindings.hpp"
#include "blr/core/error.hpp"

namespace blr::python {

OptionValue to_option_value(const std::string& key, const py::handle& value) {
  // bool before int: Python's True is also an int.
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<int64_t>();
    } catch (const py::cast_error&) {  // beyond int64 (seed=2**64)
      throw Error(fmt::format("Option '{}' takes an integer from {} to {}; got {}.", key,
                              std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(),
                              py::str(value).cast<std::string>()));
    }
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  // NumPy scalars and 0-d tensors: whatever converts to a float.
  if (py::hasattr(value, "__float__") && !py::hasattr(value, "__len__")) {
    return py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
  }
  throw Error(fmt::format("Option '{}' must be a bool, an int, a float or a str; got a {}.", key,
                          py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>()));
}

py::object to_python(const OptionValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

OptionValues to_option_values(const py::dict& options) {
  OptionValues values;
  for (const auto& [key, value] : options) {
    const std::string k = key.cast<std::string>();
    values.emplace_back(k, to_option_value(k, value));
  }
  return values;
}

}  // namespace blr::python
