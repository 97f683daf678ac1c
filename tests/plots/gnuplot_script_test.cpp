// Property test of every gnuplot script blr writes (apps/blr/torch/plots.cpp,
// sensitivity_plots.cpp, continual_plot.cpp): names holding every control byte 0x01–0x1f and 0x7f,
// quotes, `!`, backticks, `$(...)`, `@` and backslashes — as the output directory, the data name,
// the model description, the optimizer name and the titles, all of which a checkpoint can carry —
// must not run anything when gnuplot runs the script, and must not break a line inside a string
// (a line break inside a gnuplot string ends the command, and a next line `!cmd` runs in a shell:
// the audit's D1). Each injection is a `touch PWNED_…` in gnuplot's working directory, which lies
// inside the test's directory; a positive control shows that the detector sees such a command run.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "continual_plot.hpp"
#include "infer_plots.hpp"
#include "plots.hpp"
#include "sensitivity_plots.hpp"
#include "temp_dir.hpp"

namespace {
namespace fs = std::filesystem;
namespace bt = blr::torch;

// `touch` commands behind every byte 0x01–0x1f and 0x7f, and behind every quoting trick, in
// pieces (a directory name is made of them, each component at most 200 bytes).
std::vector<std::string> hostile_pieces() {
  std::vector<std::string> pieces{"name"};
  for (int b = 1; b <= 0x20; ++b) {
    const char c = static_cast<char>(b == 0x20 ? 0x7f : b);
    pieces.push_back(fmt::format("{}!touch PWNED_{:02x}{}", c, static_cast<unsigned char>(c), c));
  }
  pieces.push_back("'\n!touch PWNED_after_quote\n' \"\n!touch PWNED_after_dquote\n\" ");
  pieces.push_back("`touch PWNED_backtick` $(touch PWNED_subshell) \\ \\'\\\" @name ");
  pieces.push_back("!touch PWNED_bang");
  return pieces;
}

std::string hostile_name() {
  std::string s;
  for (const auto& piece : hostile_pieces()) s += piece;
  return s;
}

// The hostile name as a directory below `base`: its pieces, joined into components of at most
// 200 bytes (a file name has at most 255).
fs::path hostile_directory(const fs::path& base) {
  fs::path dir = base;
  std::string component;
  for (const auto& piece : hostile_pieces()) {
    if (component.size() + piece.size() > 200) {
      dir /= component;
      component.clear();
    }
    component += piece;
  }
  return dir / component;
}

// One control byte `c`, with a command behind it, and the quote characters.
std::string name_with(char c) {
  return fmt::format("a{}!touch PWNED{}' \" \\ ` $(touch PWNED) b", c, c);
}

// Files named PWNED* anywhere below `dir`.
std::vector<std::string> pwned_files(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("PWNED", 0) == 0) found.push_back(it->path().string());
  }
  return found;
}

// The first line of `script` that holds a control byte other than its line end, or that ends
// inside a single- or double-quoted string; empty when there is none.
std::string broken_line(const std::string& script) {
  std::istringstream in(script);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c < 0x20 || c == 0x7f) return fmt::format("line {} holds byte 0x{:02x}: {}", number, c, line);
      if (quote == 0) {
        if (c == '#') break;  // a comment
        if (c == '\'' || c == '"') quote = static_cast<char>(c);
      } else if (quote == '\'') {
        if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
          ++i;  // '' is a quote inside
        } else if (c == '\'') {
          quote = 0;
        }
      } else if (c == '\\') {
        ++i;  // in double quotes a backslash escapes the next byte
      } else if (c == '"') {
        quote = 0;
      }
    }
    if (quote != 0) return fmt::format("line {} ends inside a string: {}", number, line);
  }
  return {};
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The strings a plot may carry; each test case makes some of them hostile.
struct Names {
  std::string dir = "out";
  std::string model = "mlp 784-32-10";
  std::string data = "fashion-mnist";
  std::string optimizer = "ivon";
  std::string title = "a title";
};

bt::RunResult run_result(const Names& n) {
  bt::RunResult r;
  r.config.optimizer = n.optimizer;
  r.config.data = n.data;
  r.model_description = n.model;
  for (int e = 1; e <= 2; ++e) {
    bt::EpochRecord rec;
    rec.epoch = e;
    rec.train_loss = 1.0 / e;
    rec.test_accuracy = 0.5 + 0.1 * e;
    rec.test_nll = 0.9 / e;
    rec.learning_rate = 0.1;
    r.history.push_back(rec);
  }
  for (int b = 0; b < 3; ++b) {
    blr::torch::ReliabilityBin bin{b / 3.0, (b + 1) / 3.0, 10, (b + 0.5) / 3.0, (b + 0.4) / 3.0};
    r.test.reliability_mean.push_back(bin);
    r.test.reliability_predictive.push_back(bin);
  }
  r.test.has_predictive = true;
  r.test.samples = 4;
  return r;
}

// One plot writer: draws into `dir` with the names, and says which script it wrote.
struct Writer {
  std::string name;
  std::string script;  // under DIR/plot-data
  std::function<bool(const fs::path& dir, const Names&, std::ostream&)> draw;
};

std::vector<Writer> writers() {
  std::vector<Writer> w;
  w.push_back({"write_plots", "plots.gp", [](const fs::path& dir, const Names& n, std::ostream& log) {
                 return bt::write_plots(dir.string(), {run_result(n)}, log);
               }});
  w.push_back({"write_influence_grid", "influence.gp",
               [](const fs::path& dir, const Names& n, std::ostream& log) {
                 const auto images = at::arange(36, at::kDouble).reshape({4, 1, 3, 3});
                 const auto labels = at::arange(4, at::kLong);
                 const auto score = at::arange(1, 5, at::kDouble);
                 return bt::write_influence_grid(dir.string(), images, labels, score, {3, 2},
                                                 {0, 1}, n.title, log);
               }});
  w.push_back({"write_validation_scatter", "validation.gp",
               [](const fs::path& dir, const Names& n, std::ostream& log) {
                 bt::RetrainValidation v;
                 v.removed = {0, 1, 2};
                 v.predicted = {0.1, 0.2, 0.3};
                 v.truth = {0.12, 0.19, 0.33};
                 v.score_correlation = 0.9;
                 return bt::write_validation_scatter(dir.string(), v, &v, n.title, log);
               }});
  w.push_back({"write_loo_curve", "loo.gp", [](const fs::path& dir, const Names& n, std::ostream& log) {
                 return bt::write_loo_curve(dir.string(), {{1, 0.5, 0.4, 0.6}, {2, 0.4, 0.3, 0.5}},
                                            n.title, log);
               }});
  w.push_back({"write_continual_heatmap", "continual.gp",
               [](const fs::path& dir, const Names& n, std::ostream& log) {
                 bt::ContinualResult r;
                 r.config.optimizer = n.optimizer;
                 r.config.retrain = true;  // method() then names the optimizer
                 r.config.task_count = 2;
                 r.accuracy = {{0.9}, {0.8, 0.85}};
                 return bt::write_continual_heatmap(dir.string(), r, log);
               }});
  // blr infer --out (infer_plots.hpp): every picture, with the names a CSV header or a file
  // name can set (features, columns, the response, the data file in the title).
  const auto infer = [](std::string name, std::string script,
                        std::function<void(blr::cli::InferPlots&, const Names&)> fill) {
    return Writer{std::move(name), std::move(script),
                  [fill](const fs::path& dir, const Names& n, std::ostream& log) {
                    blr::cli::InferPlots plots;
                    fill(plots, n);
                    return blr::cli::write_infer_plots(dir.string(), plots, log).size() == 1;
                  }};
  };
  w.push_back(infer("infer forest", "coefficients.gp", [](blr::cli::InferPlots& p, const Names& n) {
    p.forest = blr::cli::ForestPlot{{"(intercept)", n.data, n.model},
                                    blr::Vector::LinSpaced(3, -1, 1),
                                    blr::Vector::LinSpaced(3, -2, 0),
                                    blr::Vector::LinSpaced(3, 0, 2), 0.9, n.title, n.optimizer};
  }));
  w.push_back(infer("infer series", "series.gp", [](blr::cli::InferPlots& p, const Names& n) {
    const blr::Vector y = blr::Vector::LinSpaced(6, 0, 5);
    p.series = blr::cli::SeriesPlot{y, y, y, y.array() - 1, y.array() + 1, 0.95, n.title};
  }));
  const auto gp = [](bool two, bool classification) {
    return [two, classification](blr::cli::InferPlots& p, const Names& n) {
      blr::cli::GpPlot g;
      g.classification = classification;
      g.inputs = two ? std::vector<std::string>{n.data, n.model} : std::vector<std::string>{n.data};
      g.response = n.optimizer;
      g.title = n.title;
      g.x = blr::Matrix::Random(8, two ? 2 : 1);
      g.y = (blr::Vector(8) << 0, 1, 0, 1, 1, 0, 0, 1).finished();
      if (two) {
        g.grid_x = blr::cli::plot_grid(g.x.col(0), 5);
        g.grid_y = blr::cli::plot_grid(g.x.col(1), 4);
        g.surface = blr::Matrix::Constant(4, 5, 0.25);
        g.surface.col(4).setConstant(0.75);
      } else {
        g.grid = blr::cli::plot_grid(g.x.col(0), 6);
        g.mean = blr::Vector::Constant(6, 0.5);
        g.lower = blr::Vector::Constant(6, 0.25);
        g.upper = blr::Vector::Constant(6, 0.75);
        if (!classification) {
          g.predictive_lower = blr::Vector::Constant(6, 0.1);
          g.predictive_upper = blr::Vector::Constant(6, 0.9);
        }
      }
      p.gp = g;
    };
  };
  w.push_back(infer("infer gp curve", "gp.gp", gp(false, false)));
  w.push_back(infer("infer gp surface", "gp.gp", gp(true, true)));
  const auto mixture = [](bool two) {
    return [two](blr::cli::InferPlots& p, const Names& n) {
      blr::cli::MixturePlot m;
      m.columns = two ? std::vector<std::string>{n.data, n.model} : std::vector<std::string>{n.data};
      m.x = blr::Matrix::Random(30, two ? 2 : 1);
      m.weights = (blr::Vector(2) << 0.4, 0.6).finished();
      m.means = blr::Matrix::Zero(2, two ? 2 : 1);
      m.means(1, 0) = 0.5;
      m.covariances = {blr::Matrix::Identity(two ? 2 : 1, two ? 2 : 1) * 0.1,
                       blr::Matrix::Identity(two ? 2 : 1, two ? 2 : 1) * 0.2};
      m.title = n.title;
      p.mixture = m;
    };
  };
  w.push_back(infer("infer mixture 2-D", "mixture.gp", mixture(true)));
  w.push_back(infer("infer mixture 1-D", "mixture.gp", mixture(false)));
  return w;
}

// The cases: one hostile string at a time (the first broken line stops gnuplot, so each needs
// its own run).
std::vector<std::pair<std::string, Names>> hostile_cases(const std::string& bad) {
  std::vector<std::pair<std::string, Names>> cases;
  Names n;
  n.dir = bad;
  cases.emplace_back("dir", n);
  n = Names();
  n.model = bad;
  cases.emplace_back("model", n);
  n = Names();
  n.data = bad;
  cases.emplace_back("data", n);
  n = Names();
  n.optimizer = bad;
  cases.emplace_back("optimizer", n);
  n = Names();
  n.title = bad;
  cases.emplace_back("title", n);
  return cases;
}

bool have_gnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

// Runs the test body with the working directory set to `dir` (gnuplot inherits it).
class InDirectory {
 public:
  explicit InDirectory(const fs::path& dir) : previous_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~InDirectory() { fs::current_path(previous_); }

 private:
  fs::path previous_;
};

TEST(GnuplotScripts, DetectorSeesAShellEscapeRun) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  blr::testing::TempDir tmp("blr-gnuplot-control");
  InDirectory here(tmp.path);
  std::ofstream(tmp.path / "control.gp") << "print 'x\n!touch PWNED_control\n'\n";
  (void)std::system("gnuplot control.gp > /dev/null 2>&1");
  EXPECT_EQ(pwned_files(tmp.path).size(), 1u) << "a shell escape in a raw script is not detected";
  EXPECT_FALSE(broken_line("print 'x\n!touch PWNED_control\n'\n").empty());
  EXPECT_TRUE(broken_line("set title 'it''s \"fine\"' # 'comment\nplot \"a\\\"b\"\n").empty());
}

TEST(GnuplotScripts, HostileNamesRunNothingAndDraw) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string bad = hostile_name();
  for (const auto& writer : writers()) {
    for (const auto& [which, names] : hostile_cases(bad)) {
      SCOPED_TRACE(writer.name + ", hostile " + which);
      blr::testing::TempDir tmp("blr-gnuplot");
      InDirectory here(tmp.path);
      const fs::path dir =
          which == "dir" ? hostile_directory(tmp.path) : tmp.path / names.dir;
      std::ostringstream log;
      const bool drawn = writer.draw(dir, names, log);
      EXPECT_EQ(pwned_files(tmp.path), std::vector<std::string>{});
      EXPECT_EQ(broken_line(read_file(dir / "plot-data" / writer.script)), "");
      EXPECT_TRUE(drawn) << log.str();
    }
  }
}

// Every control byte on its own, in every string at once: the scripts' lines stay whole (checked
// without running gnuplot, which is taken off PATH).
TEST(GnuplotScripts, EveryControlByteKeepsLinesWhole) {
  blr::testing::TempDir tmp("blr-gnuplot-bytes");
  InDirectory here(tmp.path);
  const char* path = std::getenv("PATH");
  const std::string saved = path != nullptr ? path : "";
  ::setenv("PATH", "", 1);
  for (int b = 1; b <= 0x20; ++b) {
    const char c = static_cast<char>(b == 0x20 ? 0x7f : b);
    const std::string bad = name_with(c);
    Names names{bad, bad, bad, bad, bad};
    for (const auto& writer : writers()) {
      SCOPED_TRACE(fmt::format("{}, byte 0x{:02x}", writer.name, static_cast<unsigned char>(c)));
      const fs::path dir = tmp.path / fmt::format("{:02x}", b) / names.dir;
      std::ostringstream log;
      writer.draw(dir, names, log);
      EXPECT_EQ(broken_line(read_file(dir / "plot-data" / writer.script)), "");
    }
  }
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(pwned_files(tmp.path), std::vector<std::string>{});
}

// The forest plot's data are the coefficients without the intercept, in order from the top; the
// Kalman series has one row per step with NaN where y is missing; the image is a PNG.
TEST(InferPlots, DataFilesHoldWhatIsDrawn) {
  blr::testing::TempDir tmp("blr-infer-plots");
  blr::cli::InferPlots plots;
  plots.forest = blr::cli::ForestPlot{{"(intercept)", "age", "bmi"},
                                      (blr::Vector(3) << 5, 0.5, -0.25).finished(),
                                      (blr::Vector(3) << 4, 0.25, -0.5).finished(),
                                      (blr::Vector(3) << 6, 0.75, 0).finished(), 0.95, "t", ""};
  blr::Vector y(4);
  y << 1, std::nan(""), 3, 4;
  plots.series = blr::cli::SeriesPlot{y, y, y, y, y, 0.95, "s"};
  std::ostringstream log;
  const auto drawn = blr::cli::write_infer_plots((tmp.path / "out").string(), plots, log);
  const fs::path data = tmp.path / "out" / "plot-data";
  EXPECT_EQ(read_file(data / "coefficients.dat"),
            "# index name mean lower upper\n2 \"age\" 0.5 0.25 0.75\n1 \"bmi\" -0.25 -0.5 0\n");
  const std::string series = read_file(data / "series.dat");
  EXPECT_NE(series.find("\n2 NaN "), std::string::npos) << series;
  EXPECT_EQ(std::count(series.begin(), series.end(), '\n'), 5);
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  EXPECT_EQ(drawn, (std::vector<std::string>{"coefficients.png", "series.png"})) << log.str();
  for (const auto& image : drawn) {
    const std::string png = read_file(tmp.path / "out" / image);
    ASSERT_GT(png.size(), 1000u) << image;
    EXPECT_EQ(png.substr(1, 3), "PNG") << image;
  }
}

}  // namespace
