#include "json_output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

#include "blr/core/error.hpp"
#include "blr/io/output_file.hpp"

namespace blr::cli {
namespace {

int json_fd = STDOUT_FILENO;  // where "-" writes: fd 1, or its copy once reserved

}  // namespace

void reserve_stdout_for_json() {
  if (json_fd != STDOUT_FILENO) return;
  std::cout.flush();
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  check(saved >= 0, "Cannot duplicate stdout for --json -.");
  check(::dup2(STDERR_FILENO, STDOUT_FILENO) >= 0, "Cannot redirect stdout to stderr for --json -.");
  json_fd = saved;
}

void write_json_text(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    const std::string line = text + '\n';
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(json_fd, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      check(n > 0, "Writing the JSON document to stdout failed.");
      done += static_cast<size_t>(n);
    }
    return;
  }
  // Whole or not at all, never through a link; the directory must exist (a typo in it is not
  // silently created).
  blr::io::write_output_file(path, text + '\n', "the JSON file");
}

}  // namespace blr::cli
