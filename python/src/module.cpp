// blr._blr: the compiled half of the Python package (python/blr/ is the other). Every
// blr::Error becomes blr.Error, a ValueError subclass carrying the same sentence, so no C++
// exception reaches the interpreter as a crash.
#include <torch/csrc/utils/pybind.h>

#include "bindings.hpp"
#include "blr/core/error.hpp"

PYBIND11_MODULE(_blr, m) {
  namespace py = pybind11;
  m.doc() = "blr: the Bayesian learning rule (compiled part; import the package `blr`).";
  static py::exception<blr::Error> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const blr::Error& e) {
      error(e.what());
    }
  });
  blr::python::bind_optimizers(m);
  blr::python::bind_metrics(m);
  blr::python::bind_table1(m);
  blr::python::bind_inference(m);
  blr::python::bind_data(m);
}
