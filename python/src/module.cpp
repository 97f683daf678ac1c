// blr._blr: the compiled half of the Python package (python/blr/ is the other). Every exception
// of this module's functions reaches Python as one sentence, as the CLI's error boundary
// (apps/blr/error_boundary.hpp) words it: a blr::Error becomes blr.Error, a ValueError subclass
// carrying the same sentence; LibTorch's c10::Error and a library's std::runtime_error become
// blr.Error with their first line ("LibTorch refused the operation: ..."), never a multi-line
// report; a std::logic_error (out_of_range, ...) is a bug in blr and becomes a RuntimeError saying
// so. std::bad_alloc stays pybind11's MemoryError. The translator is local to this module, so
// torch's own bindings keep their exceptions.
#include <torch/csrc/utils/pybind.h>

#include <fmt/format.h>

#include <string>

#include "bindings.hpp"
#include "blr/core/error.hpp"

namespace {

/// The first line of `text`, at most 400 characters, ending in a full stop (as the CLI prints).
std::string first_sentence(std::string text) {
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) {
    text.pop_back();
  }
  constexpr std::size_t kLongest = 400;
  if (text.size() > kLongest) text = text.substr(0, kLongest) + " ...";
  if (text.empty()) return "(no message).";
  if (text.back() != '.' && text.back() != '?' && text.back() != '!') text += '.';
  return text;
}

}  // namespace

PYBIND11_MODULE(_blr, m) {
  namespace py = pybind11;
  m.doc() = "blr: the Bayesian learning rule (compiled part; import the package `blr`).";
  static py::exception<blr::Error> error(m, "Error", PyExc_ValueError);
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const blr::Error& e) {
      error(e.what());
    } catch (const c10::Error& e) {
      error(first_sentence(fmt::format("LibTorch refused the operation: {}", e.msg())).c_str());
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (stop_iteration, cast_error, ...) keep their Python types
    } catch (const std::runtime_error& e) {
      error(first_sentence(fmt::format("A library blr uses refused the operation: {}", e.what()))
                .c_str());
    } catch (const std::logic_error& e) {
      PyErr_SetString(PyExc_RuntimeError,
                      first_sentence(fmt::format("Internal error (a bug in blr; please report "
                                                 "it): {}",
                                                 e.what()))
                          .c_str());
    }
  });
  blr::python::bind_optimizers(m);
  blr::python::bind_metrics(m);
  blr::python::bind_table1(m);
  blr::python::bind_inference(m);
  blr::python::bind_data(m);
  blr::python::bind_laplace(m);
  blr::python::bind_posterior_tools(m);
}
