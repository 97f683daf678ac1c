// Classification and calibration metrics for Python (blr/torch/metrics.hpp): the same code the
// CLI reports with, on log-probabilities and labels given as tensors.
#include <torch/csrc/utils/pybind.h>

#include "bindings.hpp"
#include "blr/torch/metrics.hpp"

namespace blr::python {

void bind_metrics(py::module_& m) {
  m.def(
      "classification_metrics",
      [](const ::at::Tensor& log_probs, const ::at::Tensor& labels, int ece_bins) {
        const auto r = ::blr::torch::classification_metrics(log_probs, labels, ece_bins);
        py::dict d;
        d["count"] = r.count;
        d["accuracy"] = r.accuracy;
        d["nll"] = r.nll;
        d["ece"] = r.ece;
        d["ece20"] = r.ece20;
        d["ece_bins"] = r.ece_bins;
        d["brier"] = r.brier;
        d["entropy"] = r.entropy;
        return d;
      },
      py::arg("log_probs"), py::arg("labels"), py::arg("ece_bins") = 15,
      "Accuracy, NLL, ECE (ece_bins and 20 bins), Brier score and mean predictive entropy of "
      "log-probabilities (N x C) against labels (N).");
  m.def(
      "reliability_bins",
      [](const ::at::Tensor& log_probs, const ::at::Tensor& labels, int bins) {
        py::list out;
        for (const auto& b : ::blr::torch::reliability_bins(log_probs, labels, bins)) {
          py::dict d;
          d["lower"] = b.lower;
          d["upper"] = b.upper;
          d["count"] = b.count;
          d["confidence"] = b.confidence;
          d["accuracy"] = b.accuracy;
          out.append(d);
        }
        return out;
      },
      py::arg("log_probs"), py::arg("labels"), py::arg("bins") = 15,
      "The bins of the reliability diagram (same binning as the ECE).");
  m.def("entropy_auroc", &::blr::torch::entropy_auroc, py::arg("log_probs_in"),
        py::arg("log_probs_out"),
        "AUROC of the predictive entropy for telling a shifted set (out) from the test set (in).");
}

}  // namespace blr::python
