#include "plots.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>
#include <sstream>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/io/output_file.hpp"

namespace blr::torch {
namespace fs = std::filesystem;

bool write_plots(const std::string& dir, const std::vector<RunResult>& runs, std::ostream& log) {
  if (runs.empty()) return false;
  const fs::path data = plot_data_dir(dir);
  // The data files' names: the optimizer's name as a file-name stem (gnuplot_text.hpp).
  const auto file_of = [](const RunResult& run, const std::string& what) {
    return plot_file_stem(run.config.optimizer) + "-" + what + ".dat";
  };

  // Data files: one per optimizer.
  for (const auto& run : runs) {
    std::ostringstream curves;
    curves << "# epoch train_loss test_accuracy test_nll learning_rate seconds\n";
    for (const auto& r : run.history) {
      curves << fmt::format("{} {:.8g} {:.8g} {:.8g} {:.8g} {:.6g}\n", r.epoch, r.train_loss,
                            r.test_accuracy, r.test_nll, r.learning_rate, r.seconds);
    }
    write_text_file(data / file_of(run, "curves"), curves.str());
    std::ostringstream rel;
    rel << "# bin_center lower upper count_mean confidence_mean accuracy_mean count_predictive "
           "confidence_predictive accuracy_predictive\n";
    const auto& m = run.test.reliability_mean;
    const auto& p = run.test.reliability_predictive;
    for (size_t b = 0; b < m.size(); ++b) {
      rel << fmt::format("{:.6g} {:.6g} {:.6g} {} {:.8g} {:.8g} {} {:.8g} {:.8g}\n",
                         0.5 * (m[b].lower + m[b].upper), m[b].lower, m[b].upper, m[b].count,
                         m[b].confidence, m[b].accuracy, p[b].count, p[b].confidence,
                         p[b].accuracy);
    }
    write_text_file(data / file_of(run, "reliability"), rel.str());
  }

  // Script: run in DIR/plot-data, so the images are ../NAME.png.
  const size_t n = runs.size();
  std::ostringstream gp;
  gp << "# gnuplot script of blr; run it in this directory: gnuplot plots.gp\n";
  gp << "set terminal pngcairo size 1500,450 font ',10'\n";
  gp << "set output " << gnuplot_string("../curves.png") << "\n";
  gp << "set multiplot layout 1,3 title "
     << gnuplot_string(fmt::format("{} on {}", runs.front().model_description, runs.front().config.data))
     << " noenhanced\nset grid\nset key top right\nset xlabel 'epoch'\n";
  if (runs.front().history.size() <= 20) gp << "set xtics 1\n";
  const auto curve_panel = [&](const std::string& title, int column) {
    gp << "set title " << gnuplot_string(title) << "\nplot ";
    for (size_t i = 0; i < n; ++i) {
      gp << gnuplot_string(file_of(runs[i], "curves")) << " using 1:" << column
         << " with linespoints lw 2 title " << gnuplot_string(runs[i].config.optimizer)
         << " noenhanced" << (i + 1 < n ? ", " : "\n");
    }
  };
  curve_panel("training loss", 2);
  gp << "set key bottom right\n";
  curve_panel("test accuracy (at the mean)", 3);
  gp << "set key top right\n";
  curve_panel("test NLL (at the mean)", 4);
  gp << "unset multiplot\n";

  gp << fmt::format("set terminal pngcairo size {},450 font ',10'\n", 450 * n + 50);
  gp << "set output " << gnuplot_string("../reliability.png") << "\n";
  gp << fmt::format("set multiplot layout 1,{} title 'reliability diagrams (test set)'\n", n);
  gp << "set xrange [0:1]\nset yrange [0:1]\nset size ratio 1\nset grid\n"
        "set xlabel 'confidence'\nset ylabel 'accuracy'\nset key top left\n"
        "set style fill solid 0.5 border -1\nset boxwidth 0.9 relative\n";
  for (const auto& run : runs) {
    const auto file = gnuplot_string(file_of(run, "reliability"));
    gp << "set title "
       << gnuplot_string(fmt::format(
              "{}: ECE {:.4f} (mean){}", run.config.optimizer, run.test.mean.ece,
              run.test.has_predictive
                  ? fmt::format(", {:.4f} (K={})", run.test.predictive.ece, run.test.samples)
                  : std::string()))
       << " noenhanced\n";
    gp << "plot x with lines lc rgb 'gray' dt 2 title 'perfect', " << file
       << " using 1:($4 > 0 ? $6 : NaN):($3-$2) with boxes lc rgb '#4477aa' title 'at the mean'";
    if (run.test.has_predictive) {
      gp << ", " << file
         << " using 1:($7 > 0 ? $9 : NaN) with linespoints pt 7 lw 2 lc rgb '#cc3311' "
            "title 'predictive'";
    }
    gp << "\n";
  }
  gp << "unset multiplot\n";
  return run_gnuplot(data / "plots.gp", gp.str(), "curves.png and reliability.png",
                     log);
}

}  // namespace blr::torch
