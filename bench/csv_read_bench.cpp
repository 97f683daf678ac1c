// Reading issue 14's logistic benchmark file alone: 10⁵ rows × 51 columns (50 features as "%.17g",
// a 0/1 label; the shape `bench/inference_vs_python.py` writes, about 100 MB). Issue 14's goal is
// ≤ 0.3 s for the read. Five measurements in one run:
//   BM_CsvFileBytes    the file into one string (the I/O floor)
//   BM_CsvTable        blr::io::CsvTable::read (records split, cells kept as offsets)
//   BM_CsvNumbers      CsvTable::read + numeric_columns of all 51 columns (what `blr infer` did
//                      until stop 43)
//   BM_CsvStream       the streaming read that keeps the 50 features as numbers and the label as
//                      text, + numeric_columns of the 50 (what `blr infer` does since stop 43)
//   BM_CsvColumns      numeric_columns alone, on a table read once before the timing
// The file is generated once per process (fixed seed) in the temporary directory and removed at
// exit. Run: build/csv_read_bench (or --benchmark_repetitions=3 on a shared machine).
#include <benchmark/benchmark.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "blr/core/rng.hpp"
#include "blr/io/csv.hpp"

namespace {

constexpr int kRows = 100000, kFeatures = 50;

struct BenchFile {
  std::string path;
  std::vector<std::string> columns;
  BenchFile() {
    path = (std::filesystem::temp_directory_path() /
            fmt::format("blr-csv-read-bench-{}.csv", static_cast<long>(::getpid())))
               .string();
    for (int j = 1; j <= kFeatures; ++j) columns.push_back(fmt::format("x{}", j));
    columns.push_back("y");
    std::string text = fmt::format("{}\n", fmt::join(columns, ","));
    blr::Rng rng(1);
    for (int i = 0; i < kRows; ++i) {
      for (int j = 0; j < kFeatures; ++j) text += fmt::format("{:.17g},", rng.normal());
      text += rng.uniform() < 0.5 ? "1\n" : "0\n";
    }
    std::ofstream(path, std::ios::binary) << text;
  }
  ~BenchFile() { std::filesystem::remove(path); }
};

const BenchFile& bench_file() {
  static const BenchFile file;
  return file;
}

void BM_CsvFileBytes(benchmark::State& state) {
  const auto& f = bench_file();
  for (auto _ : state) {
    std::ifstream in(f.path, std::ios::binary);
    std::string text(std::filesystem::file_size(f.path), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    benchmark::DoNotOptimize(text.data());
  }
}

void BM_CsvTable(benchmark::State& state) {
  const auto& f = bench_file();
  for (auto _ : state) {
    const auto t = blr::io::CsvTable::read(f.path);
    benchmark::DoNotOptimize(t.rows());
  }
}

void BM_CsvNumbers(benchmark::State& state) {
  const auto& f = bench_file();
  for (auto _ : state) {
    const auto t = blr::io::CsvTable::read(f.path);
    const blr::Matrix x = t.numeric_columns(f.columns);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["rows"] = kRows;
  state.counters["columns"] = kFeatures + 1;
}

void BM_CsvStream(benchmark::State& state) {
  const auto& f = bench_file();
  const std::vector<std::string> features(f.columns.begin(), f.columns.end() - 1);
  for (auto _ : state) {
    const auto t = blr::io::CsvTable::read(f.path, [&](const std::vector<std::string>&) {
      return blr::io::CsvColumns{features, {f.columns.back()}};
    });
    const blr::Matrix x = t.numeric_columns(features);
    benchmark::DoNotOptimize(x.data());
  }
}

void BM_CsvColumns(benchmark::State& state) {
  const auto& f = bench_file();
  const auto t = blr::io::CsvTable::read(f.path);
  for (auto _ : state) {
    const blr::Matrix x = t.numeric_columns(f.columns);
    benchmark::DoNotOptimize(x.data());
  }
}

}  // namespace

BENCHMARK(BM_CsvFileBytes)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_CsvTable)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_CsvNumbers)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_CsvStream)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_CsvColumns)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_MAIN();
