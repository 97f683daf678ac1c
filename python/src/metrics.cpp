// Classification and calibration metrics for Python (blr/torch/metrics/metrics.hpp): the same code the
// CLI reports with, on log-probabilities and labels given as tensors.
#include <torch/csrc/utils/pybind.h>

#include "bindings.hpp"
#include "blr/torch/predictive/ensemble.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/metrics/temperature_scaling.hpp"

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
        d["adaptive_ece"] = r.adaptive_ece;
        d["classwise_ece"] = r.classwise_ece;
        d["aurc"] = r.aurc;
        return d;
      },
      py::arg("log_probs"), py::arg("labels"), py::arg("ece_bins") = 15,
      "Accuracy, NLL, ECE (ece_bins and 20 bins), Brier score, mean predictive entropy, adaptive "
      "and classwise ECE (ece_bins bins) and AURC of log-probabilities (N x C) against labels (N).");
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
  m.def(
      "fit_temperature",
      [](const ::at::Tensor& log_probs, const ::at::Tensor& labels) {
        const auto fit = ::blr::torch::fit_temperature(log_probs, labels);
        py::dict d;
        d["temperature"] = fit.temperature;
        d["nll_before"] = fit.nll_before;
        d["nll_after"] = fit.nll_after;
        d["at_bound"] = fit.at_bound;
        return d;
      },
      py::arg("log_probs"), py::arg("labels"),
      "Temperature scaling: the T minimising the NLL of softmax(log_probs / T) (validation data).");
  m.def("scale_temperature", &::blr::torch::scale_temperature, py::arg("log_probs"),
        py::arg("temperature"), "log softmax(log_probs / T), double, CPU.");
  m.def("ensemble_log_probs", &::blr::torch::ensemble_log_probs, py::arg("members"),
        "A deep ensemble's log-probabilities: log of the members' averaged probabilities.");
  m.def(
      "entropy_ood_metrics",
      [](const ::at::Tensor& log_probs_in, const ::at::Tensor& log_probs_out) {
        const auto r = ::blr::torch::entropy_ood_metrics(log_probs_in, log_probs_out);
        py::dict d;
        d["auroc"] = r.auroc;
        d["aupr"] = r.aupr;
        d["fpr95"] = r.fpr95;
        return d;
      },
      py::arg("log_probs_in"), py::arg("log_probs_out"),
      "OOD detection by predictive entropy, test set (in) vs OOD set (out): AUROC, AUPR (OOD "
      "positive) and FPR95.");
  m.def("entropy_auroc", &::blr::torch::entropy_auroc, py::arg("log_probs_in"),
        py::arg("log_probs_out"),
        "AUROC of the predictive entropy for telling a shifted set (out) from the test set (in).");
}

}  // namespace blr::python
