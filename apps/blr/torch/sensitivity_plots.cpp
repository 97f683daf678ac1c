#include "sensitivity_plots.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "blr/core/error.hpp"
#include "blr/torch/train/config.hpp"
#include "plots.hpp"

namespace blr::torch {
namespace fs = std::filesystem;

std::vector<std::string> class_names_of(const std::string& data) {
  if (data != kFashionMnist) return {};
  return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
}

std::string class_name(int64_t label, const std::vector<std::string>& names) {
  if (label >= 0 && label < static_cast<int64_t>(names.size())) {
    return names[static_cast<size_t>(label)];
  }
  return fmt::format("class {}", label);
}

bool write_influence_grid(const std::string& dir, const ::at::Tensor& images,
                          const ::at::Tensor& labels, const ::at::Tensor& score,
                          const std::vector<int64_t>& most, const std::vector<int64_t>& least,
                          const std::string& title, std::ostream& log,
                          const std::vector<std::string>& class_names) {
  const auto x = images.detach().to(::at::kDouble).cpu();
  if (!(x.dim() == 4 && x.size(1) == 1) && x.dim() != 3) {
    log << "blr: note: the inputs are not grey-scale images, so no image grid was drawn.\n";
    return false;
  }
  const auto flat = x.reshape({x.size(0), x.size(-2), x.size(-1)});
  const fs::path data = plot_data_dir(dir);
  const int64_t columns = static_cast<int64_t>(std::max(most.size(), least.size()));
  if (columns == 0) return false;
  const double lo = flat.min().item<double>(), hi = flat.max().item<double>();
  std::ostringstream gp;
  gp << fmt::format("set terminal pngcairo size {},460 font ',9'\n", 130 * columns + 40);
  gp << "set output " << gnuplot_string("../influence.png") << "\n";
  gp << fmt::format("set multiplot layout 2,{} title {} noenhanced\n", columns,
                    gnuplot_string(title));
  gp << fmt::format(
      "unset key\nunset colorbox\nunset tics\nunset border\nset size ratio -1\n"
      "set palette gray\nset cbrange [{}:{}]\nset yrange [] reverse\n"
      "set lmargin 0.5\nset rmargin 0.5\nset tmargin 3\nset bmargin 0.5\n",
      lo, hi);
  const auto panel = [&](const std::vector<int64_t>& rows, const std::string& which) {
    for (int64_t c = 0; c < columns; ++c) {
      if (c >= static_cast<int64_t>(rows.size())) {
        gp << "set multiplot next\n";
        continue;
      }
      const int64_t i = rows[static_cast<size_t>(c)];
      const auto img = flat[i];
      std::ostringstream m;
      for (int64_t r = 0; r < img.size(0); ++r) {
        for (int64_t q = 0; q < img.size(1); ++q) {
          m << fmt::format("{:.5g}", img[r][q].item<double>()) << (q + 1 < img.size(1) ? " " : "\n");
        }
      }
      const std::string file = fmt::format("influence-{}-{}.dat", which, c + 1);
      write_text_file(data / file, m.str());
      // Two lines: "\n" is a line break only in double quotes, so it joins two quoted lines.
      gp << "set title "
         << gnuplot_string(fmt::format("#{} {}", i, class_name(labels[i].item<int64_t>(), class_names)))
         << ".\"\\n\"." << gnuplot_string(fmt::format("score {:.3g}", score[i].item<double>()))
         << " noenhanced\n";
      gp << "plot " << gnuplot_string(file) << " matrix with image\n";
    }
  };
  panel(most, "most");
  panel(least, "least");
  gp << "unset multiplot\n";
  return run_gnuplot(data / "influence.gp", gp.str(), "the image grid", log);
}

bool write_validation_scatter(const std::string& dir, const RetrainValidation& examples,
                              const RetrainValidation* classes, const std::string& title,
                              std::ostream& log) {
  const fs::path data = plot_data_dir(dir);
  const auto table = [&](const RetrainValidation& v, const std::string& name) {
    std::ostringstream t;
    t << "# removed predicted true\n";
    for (size_t r = 0; r < v.removed.size(); ++r) {
      t << fmt::format("{} {:.10g} {:.10g}\n", v.removed[r], v.predicted[r], v.truth[r]);
    }
    write_text_file(data / name, t.str());
    return name;
  };
  const int panels = classes != nullptr ? 2 : 1;
  std::ostringstream gp;
  gp << fmt::format("set terminal pngcairo size {},500 font ',10'\n", 520 * panels);
  gp << "set output " << gnuplot_string("../validation.png") << "\n";
  gp << fmt::format("set multiplot layout 1,{} title {} noenhanced\n", panels, gnuplot_string(title));
  gp << "set grid\nset logscale xy\nset key top left\nset size ratio 1\n"
        "set format x '%.0e'\nset format y '%.0e'\n";
  const auto panel = [&](const RetrainValidation& v, const std::string& file,
                         const std::string& what) {
    gp << "set title "
       << gnuplot_string(fmt::format("{} ({}), Pearson r = {:.3f}", what, v.removed.size(),
                                v.score_correlation))
       << " noenhanced\n";
    gp << "set xlabel 'predicted (MPE score)'\nset ylabel 'true (retrained)'\n";
    gp << "plot " << gnuplot_string(table(v, file))
       << " using 2:3 with points pt 7 ps 0.8 lc rgb '#4477aa' title 'removed', x with lines dt 2 "
          "lc rgb 'gray' title 'y = x'\n";
  };
  panel(examples, "validation-examples.dat", "one example removed");
  if (classes != nullptr) panel(*classes, "validation-classes.dat", "one class removed");
  gp << "unset multiplot\n";
  return run_gnuplot(data / "validation.gp", gp.str(), "the validation scatter", log);
}

bool write_loo_curve(const std::string& dir, const std::vector<LooPoint>& points,
                     const std::string& title, std::ostream& log) {
  if (points.empty()) return false;
  const fs::path data = plot_data_dir(dir);
  std::ostringstream t;
  t << "# epoch loo_nll_estimate train_nll test_nll\n";
  for (const auto& p : points) {
    t << fmt::format("{} {:.10g} {:.10g} {:.10g}\n", p.epoch, p.loo_nll, p.train_nll, p.test_nll);
  }
  write_text_file(data / "loo.dat", t.str());
  std::ostringstream gp;
  gp << "set terminal pngcairo size 700,480 font ',10'\n";
  gp << "set output " << gnuplot_string("../loo.png") << "\n";
  gp << "set title " << gnuplot_string(title) << " noenhanced\nset grid\nset key top right\n"
     << "set xlabel 'epoch'\nset ylabel 'NLL (nats)'\n";
  if (points.size() <= 20) gp << "set xtics 1\n";
  const auto f = gnuplot_string("loo.dat");
  gp << "plot " << f << " using 1:2 with linespoints pt 7 lw 2 lc rgb '#cc3311' title "
     << "'LOO estimate (training set, MPE)', " << f
     << " using 1:4 with linespoints pt 5 lw 2 lc rgb '#4477aa' title 'test NLL', " << f
     << " using 1:3 with linespoints pt 9 lw 1 dt 2 lc rgb 'gray40' title 'training NLL'\n";
  return run_gnuplot(data / "loo.gp", gp.str(), "the LOO curve", log);
}

}  // namespace blr::torch
