// Output files, written whole or not at all: the one way blr writes a file.
//
// Every output of blr (`--json`, `--predict-out`, `results.json`, plot data and scripts,
// checkpoints, `laplace --save`) goes through `OutputFile`. It
//   - refuses a target that is a symbolic link (lstat), so that a link planted in a shared output
//     directory is never written through;
//   - writes a temporary `<target>.tmp.<pid>` in the target's directory, created with
//     O_CREAT | O_EXCL | O_NOFOLLOW (a planted file or link of that name is removed, never
//     followed; the removal takes the link, not what it points to);
//   - checks every write, fsyncs and closes the temporary (checking both), gives it the mode of
//     the file it replaces, and renames it over the target, then fsyncs the directory.
// A failure at any point removes the temporary and leaves the previous file as it was; the error
// is one sentence with the system's reason ("No space left on device", "File too large").
// A target that exists and is neither a regular file nor a link (a character device such as
// /dev/null, a FIFO) cannot be replaced: it is opened and written in place, every write checked.
#pragma once

#include <string>
#include <string_view>

namespace blr::io {

/// Throws blr::Error when `path` is a symbolic link; `what` names the file in the sentence
/// ("the JSON file").
void refuse_symbolic_link(const std::string& path, const std::string& what);

/// Creates the directory `path` (and its parents) unless it exists; throws blr::Error when it
/// cannot, or when `path` is a symbolic link (blr creates its output directories, so a link there
/// was planted).
void make_output_directory(const std::string& path, const std::string& what);

/// A file being written: the target is replaced by `commit()`, or left as it was.
class OutputFile {
 public:
  /// Opens the temporary of `path`; `what` names the file in messages ("the checkpoint").
  OutputFile(std::string path, std::string what);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// Removes the temporary unless committed.
  ~OutputFile();

  /// Appends `bytes`; throws blr::Error (and removes the temporary) when a write fails.
  void write(std::string_view bytes);
  /// fsync, close and rename into place; throws blr::Error when any of them fails.
  void commit();

  /// The temporary's name (empty for a device or FIFO written in place).
  const std::string& temporary() const { return temporary_; }

 private:
  [[noreturn]] void fail(int error);

  std::string path_, what_, temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `bytes` to `path` through an OutputFile.
void write_output_file(const std::string& path, std::string_view bytes, const std::string& what);

}  // namespace blr::io
