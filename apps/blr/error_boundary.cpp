#include "error_boundary.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <ios>
#include <new>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <system_error>

#include "blr/core/error.hpp"

#ifdef BLR_HAVE_TORCH
#include <c10/util/Exception.h>
#endif

namespace blr::cli {
namespace {

// The first line of `text`, trimmed, with a full stop at the end: one sentence.
std::string one_sentence(std::string text) {
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) {
    text.pop_back();
  }
  constexpr std::size_t kLongest = 400;
  if (text.size() > kLongest) text = text.substr(0, kLongest) + " …";
  if (text.empty()) return "(no message).";
  const char last = text.back();
  if (last != '.' && last != '?' && last != '!') text += '.';
  return text;
}

}  // namespace

Failure describe_failure(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {one_sentence(e.what()), kExitError};
  } catch (const std::bad_alloc&) {
    return {"The machine ran out of memory; use a smaller model, batch or data set.", kExitError};
  } catch (const std::filesystem::filesystem_error& e) {
    std::string paths = e.path1().empty() ? "" : fmt::format(" on '{}'", e.path1().string());
    if (!e.path2().empty()) paths += fmt::format(" and '{}'", e.path2().string());
    return {one_sentence(fmt::format("A file operation failed{}: {}", paths, e.code().message())),
            kExitError};
  } catch (const std::ios_base::failure& e) {
    return {one_sentence(fmt::format("Reading or writing a file failed ({})", e.what())),
            kExitError};
  } catch (const nlohmann::json::exception& e) {
    return {one_sentence(fmt::format("A JSON document is malformed or incomplete: {}", e.what())),
            kExitError};
  } catch (const std::system_error& e) {
    return {one_sentence(fmt::format("A system call failed: {}", e.code().message())),
            kExitError};
#ifdef BLR_HAVE_TORCH
  } catch (const c10::Error& e) {
    return {one_sentence(fmt::format("LibTorch refused the operation: {}", e.msg())), kExitError};
#endif
  } catch (const std::runtime_error& e) {
    // blr throws blr::Error; a plain runtime_error comes from a library (LibTorch reports a
    // learning rate beyond float's range this way: "value cannot be converted to type float
    // without overflow"). logic_error (out_of_range, invalid_argument, ...) stays a bug.
    return {one_sentence(fmt::format("A library blr uses refused the operation: {}", e.what())),
            kExitError};
  } catch (const std::exception& e) {
    return {one_sentence(fmt::format("Internal error (a bug in blr; please report it): {}",
                                     e.what())),
            kExitBug};
  } catch (...) {
    return {"Internal error (a bug in blr; please report it): an unknown exception.", kExitBug};
  }
}

void reserve_standard_descriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free descriptor is fd itself: the lower ones are open or were opened just now.
    const int opened = ::open("/dev/null", fd == STDERR_FILENO ? O_WRONLY : O_RDONLY);
    if (opened >= 0 && opened != fd) ::close(opened);
  }
}

std::string close_standard_output() {
  int error = 0;
  errno = 0;
  std::cout.flush();
  if (!std::cout.good()) error = errno != 0 ? errno : -1;
  errno = 0;
  if (std::fflush(stdout) != 0 && error <= 0) error = errno != 0 ? errno : -1;
  if (std::ferror(stdout) && error == 0) error = -1;
  if (error < 0) {
    // The stream failed at an earlier flush and errno has moved on since: ask the descriptor
    // (a write of no bytes still meets EBADF, and /dev/full's ENOSPC).
    errno = 0;
    if (::write(STDOUT_FILENO, "", 0) < 0 && errno != 0) error = errno;
  }
  errno = 0;
  if (std::fclose(stdout) != 0 && error <= 0) error = errno != 0 ? errno : -1;
  if (error == 0) return {};
  if (error < 0) return "Cannot write to standard output.";
  return fmt::format("Cannot write to standard output: {}.", std::strerror(error));
}

}  // namespace blr::cli
