#include "output_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "blr/core/error.hpp"

namespace blr::cli {
namespace {

// The process id a lock file records ("" when it holds none yet).
std::string recorded_pid(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return {};
  std::string text(buffer, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.find_first_not_of("0123456789") == std::string::npos ? text : std::string();
}

}  // namespace

void lock_output_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  check(!ec, "Cannot create the output directory '{}': {}.", dir, ec.message());
  const std::string lock = (std::filesystem::path(dir) / ".blr.lock").string();
  // Held (never closed) until the process ends; not passed on to programs blr starts.
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    check(error != ELOOP,
          "The lock file '{}' of the output directory is a symbolic link; blr refuses to write "
          "through links.",
          lock);
    throw Error(fmt::format("Cannot open the lock file '{}' of the output directory ({}).", lock,
                            std::strerror(error)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = recorded_pid(fd);
    ::close(fd);
    check(error != EWOULDBLOCK,
          "The output directory '{}' is in use by another blr run{}; wait for it to end or choose "
          "another --out.",
          dir, pid.empty() ? std::string() : fmt::format(" (process {})", pid));
    throw Error(fmt::format("Cannot lock the output directory '{}' ({}).", dir,
                            std::strerror(error)));
  }
  const std::string mine = fmt::format("{}\n", static_cast<long>(::getpid()));
  // Only for the sentence of a run refused later: a failure to record it is not fatal.
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd, mine.data(), mine.size(), 0);
  }
}

}  // namespace blr::cli
