#include "blr/io/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "blr/core/error.hpp"

namespace blr::io {
namespace {

// "the JSON file" → "The JSON file", to open a sentence.
std::string sentence_start(std::string what) {
  if (!what.empty()) what[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(what[0])));
  return what;
}

std::string directory_of(const std::string& path) {
  const std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// fsync of a directory, so that a rename into it survives a power cut; a refusal is not fatal
// (some file systems do not sync directories).
void sync_output_directory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Creates `temporary` exclusively, never through a link. A file or link already there bears this
// process's id, so no live process is writing it: it is a dead process's leftover or was planted,
// and it is removed (unlink takes a link itself, not what it points to) before one more try.
int create_temporary(const std::string& temporary) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(temporary.c_str(), kFlags, 0666);
  if (fd < 0 && errno == EEXIST && ::unlink(temporary.c_str()) == 0) {
    fd = ::open(temporary.c_str(), kFlags, 0666);
  }
  return fd;
}

}  // namespace

void refuse_symbolic_link(const std::string& path, const std::string& what) {
  struct stat st {};
  check(::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode),
        "{} '{}' is a symbolic link; blr refuses to write through links.", sentence_start(what),
        path);
}

void make_output_directory(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    check(!S_ISLNK(st.st_mode), "{} '{}' is a symbolic link; blr refuses to write through links.",
          sentence_start(what), path);
    check(S_ISDIR(st.st_mode), "{} '{}' exists and is not a directory.", sentence_start(what),
          path);
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  check(!ec, "Cannot create {} '{}': {}.", what, path, ec.message());
}

OutputFile::OutputFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)) {
  struct stat st {};
  const bool exists = ::lstat(path_.c_str(), &st) == 0;
  if (exists) {
    check(!S_ISLNK(st.st_mode), "{} '{}' is a symbolic link; blr refuses to write through links.",
          sentence_start(what_), path_);
    check(!S_ISDIR(st.st_mode), "{} '{}' is a directory, not a file.", sentence_start(what_),
          path_);
    if (!S_ISREG(st.st_mode)) {  // a device or FIFO: written in place
      fd_ = ::open(path_.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
      check(fd_ >= 0, "Cannot write {} '{}' ({}).", what_, path_, std::strerror(errno));
      return;
    }
  }
  temporary_ = fmt::format("{}.tmp.{}", path_, static_cast<long>(::getpid()));
  fd_ = create_temporary(temporary_);
  if (fd_ < 0) {
    const int error = errno;
    check(error != ENOENT, "Cannot write {} '{}': the directory '{}' does not exist.", what_,
          path_, directory_of(path_));
    throw Error(fmt::format("Cannot write {} '{}': its temporary '{}' cannot be created ({}).",
                            what_, path_, temporary_, std::strerror(error)));
  }
  // The replacement keeps the permissions of the file it replaces (a private file stays private).
  if (exists && ::fchmod(fd_, st.st_mode & 07777) != 0) fail(errno);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

void OutputFile::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (temporary_.empty()) {
    throw Error(fmt::format("Writing {} '{}' failed ({}).", what_, path_, std::strerror(error)));
  }
  ::unlink(temporary_.c_str());
  committed_ = true;  // nothing left to remove
  throw Error(fmt::format(
      "Writing {} '{}' failed ({}); the disk may be full or a file-size limit reached, and any "
      "previous file of that name is untouched.",
      what_, path_, std::strerror(error)));
}

void OutputFile::write(std::string_view bytes) {
  check(fd_ >= 0 && !committed_, "{} '{}' is no longer open for writing.", sentence_start(what_),
        path_);
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : ENOSPC);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void OutputFile::commit() {
  check(fd_ >= 0 && !committed_, "{} '{}' is no longer open for writing.", sentence_start(what_),
        path_);
  if (temporary_.empty()) {  // a device or FIFO
    const int closed = ::close(fd_);
    fd_ = -1;
    committed_ = true;
    if (closed != 0) fail(errno);
    return;
  }
  if (::fsync(fd_) != 0 && errno != EINVAL) fail(errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail(errno);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary_.c_str());
    committed_ = true;
    throw Error(fmt::format("Cannot move {} into place at '{}' ({}).", what_, path_,
                            std::strerror(error)));
  }
  committed_ = true;
  sync_output_directory(directory_of(path_));
}

void write_output_file(const std::string& path, std::string_view bytes, const std::string& what) {
  OutputFile file(path, what);
  file.write(bytes);
  file.commit();
}

}  // namespace blr::io
