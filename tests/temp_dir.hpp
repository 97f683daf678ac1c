// A fresh directory for one test's files, under the system's temporary directory, removed with
// everything in it when the object goes. Its name holds the process id and a per-process counter,
// so tests running in parallel (ctest -j) or one after another never share one.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace blr::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "blr-test")
      : path(std::filesystem::temp_directory_path() /
             (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(next_id()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The path of a file `name` in the directory (nothing is created).
  std::string file(const std::string& name) const { return (path / name).string(); }
  /// Writes `bytes` to the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return file(name);
  }
  std::string str() const { return path.string(); }

  const std::filesystem::path path;

 private:
  static int next_id() {
    static std::atomic<int> counter{0};
    return counter++;
  }
};

}  // namespace blr::testing
