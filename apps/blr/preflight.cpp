#include "preflight.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "blr/core/error.hpp"
#include "output_lock.hpp"

namespace blr::cli {
namespace fs = std::filesystem;
namespace {

// A whole token as an integer ≥ minimum; the message names what was wrong.
std::string integer_at_least(const std::string& text, long long minimum) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is out of range", text);
  if (ec != std::errc() || ptr != end) return fmt::format("'{}' is not an integer", text);
  if (value < minimum) return fmt::format("it must be at least {}; got {}", minimum, text);
  return {};
}

std::string positive_finite(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return fmt::format("'{}' is not a number", text);
  if (!(std::isfinite(value) && value > 0)) {
    return fmt::format("it must be a positive finite number; got {}", text);
  }
  return {};
}

CLI::Validator make_validator(std::string (*rule)(const std::string&), const std::string& name) {
  return CLI::Validator([rule](std::string& value) { return rule(value); }, name);
}

void add_checks(CLI::App& app) {
  const auto seed = make_validator([](const std::string& s) { return integer_at_least(s, 0); },
                                   "NONNEGATIVE");
  const auto threads = seed;
  const auto iterations = make_validator(
      [](const std::string& s) { return integer_at_least(s, 1); }, "POSITIVE");
  const auto tolerance = make_validator(positive_finite, "POSITIVE");
  for (CLI::Option* option : app.get_options()) {
    const std::string& name = option->get_name(false, true);
    if (name == "--seed") option->check(seed);
    if (name == "--threads") option->check(threads);
    if (name == "--max-iterations") option->check(iterations);
    if (name == "--tolerance") option->check(tolerance);
  }
  for (CLI::App* sub : app.get_subcommands({})) add_checks(*sub);
}

bool writable_directory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

// `path` is `directory` or lies below it (lexically, after making both absolute).
bool inside(const fs::path& path, const fs::path& directory) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec).lexically_normal();
  const fs::path d = fs::absolute(directory, ec).lexically_normal();
  const auto rel = p.lexically_relative(d);
  return !rel.empty() && *rel.begin() != "..";
}

// The options that name files blr reads, and those that name files it writes ("-": stdout).
const char* const kInputOptions[] = {"--train", "--test",  "--predict", "--data",
                                     "--test-data", "--checkpoint", "--base", "--models",
                                     "--init",  "--resume", "--model-file"};
const char* const kFileOutputOptions[] = {"--json", "--predict-out", "--save"};

bool is_one_of(const std::string& name, const char* const* begin, const char* const* end) {
  for (auto it = begin; it != end; ++it) {
    if (name == *it) return true;
  }
  return false;
}

// `a` and `b` are one file: the same device and inode when both exist, the same normalised
// absolute path (symbolic links of existing directories resolved) otherwise.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0, b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && pa.lexically_normal() == pb.lexically_normal();
}

// Options whose empty value has a meaning of its own (an MLP with no hidden layer: a linear model).
bool empty_value_means_something(const std::string& name) { return name == "--hidden"; }

// Refuses an output file that is a link or that names one of the command's input files.
void check_output_file(const CLI::App& cmd, const std::string& option, const std::string& path) {
  struct stat st {};
  check(::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode),
        "Option '{}' names a symbolic link ('{}'); blr refuses to write through links.", option,
        path);
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // a device: no data lost
  for (const CLI::Option* input : cmd.get_options()) {
    const std::string& name = input->get_name(false, true);
    if (input->count() == 0 || !is_one_of(name, std::begin(kInputOptions), std::end(kInputOptions))) {
      continue;
    }
    for (const std::string& value : input->results()) {
      check(value.empty() || !same_file(path, value),
            "Option '{}' names the same file as option '{}' ('{}'); blr refuses to overwrite an "
            "input.",
            option, name, value);
    }
  }
}

// True unless this process is a data-parallel rank other than 0 (those write no output).
bool writes_outputs() {
  const char* rank = std::getenv("RANK");
  return rank == nullptr || std::strcmp(rank, "0") == 0;
}

}  // namespace

void add_common_option_checks(CLI::App& app) { add_checks(app); }

void check_writable_file(const std::string& path, const std::string& option) {
  const fs::path p(path);
  std::error_code ec;
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (fs::exists(p, ec)) {
    check(!fs::is_directory(p, ec),
          fmt::format("Option '{}' names '{}', which is a directory, not a file.", option, path));
    check(::access(p.c_str(), W_OK) == 0,
          fmt::format("Option '{}': the file '{}' exists and is not writable.", option, path));
    // A file is replaced by renaming a new one over it (blr/io/output_file.hpp): its directory
    // must take the new file. A device (/dev/null) is written in place.
    check(!fs::is_regular_file(p, ec) || writable_directory(parent),
          fmt::format("Option '{}': the directory '{}' is not writable, so '{}' cannot be "
                      "replaced.",
                      option, parent.string(), path));
    return;
  }
  check(fs::is_directory(parent, ec),
        fmt::format("Option '{}': the directory '{}' of '{}' does not exist.", option,
                    parent.string(), path));
  check(writable_directory(parent),
        fmt::format("Option '{}': the directory '{}' is not writable, so '{}' cannot be created.",
                    option, parent.string(), path));
}

void check_writable_directory(const std::string& path, const std::string& option) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path), ec);
  if (ec) p = fs::path(path);
  if (fs::exists(p, ec)) {
    check(fs::is_directory(p, ec),
          fmt::format("Option '{}' names '{}', which is a file, not a directory.", option, path));
    check(writable_directory(p),
          fmt::format("Option '{}': the directory '{}' is not writable.", option, path));
    return;
  }
  fs::path ancestor = p.parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec) && ancestor != ancestor.root_path()) {
    ancestor = ancestor.parent_path();
  }
  check(fs::is_directory(ancestor, ec),
        fmt::format("Option '{}': '{}' cannot be created because '{}' is not a directory.", option,
                    path, ancestor.string()));
  check(writable_directory(ancestor),
        fmt::format("Option '{}': '{}' cannot be created because '{}' is not writable.", option,
                    path, ancestor.string()));
}

void check_no_control_characters(const CLI::App& app) {
  for (const CLI::App* cmd = &app;;) {
    for (const CLI::Option* option : cmd->get_options()) {
      for (const std::string& value : option->results()) {
        for (const char c : value) {
          const auto byte = static_cast<unsigned char>(c);
          check(byte >= 0x20 && byte != 0x7f,
                fmt::format("Option '{}' holds the control character 0x{:02x}; blr refuses control "
                            "characters in option values.",
                            option->get_name(false, true), byte));
        }
      }
    }
    const auto subs = cmd->get_subcommands();
    if (subs.empty()) break;
    cmd = subs.front();
  }
}

void check_no_empty_values(const CLI::App& app) {
  for (const CLI::App* cmd = &app;;) {
    for (const CLI::Option* option : cmd->get_options()) {
      const std::string& name = option->get_name(false, true);
      if (option->get_expected_min() == 0 || empty_value_means_something(name)) continue;
      for (const std::string& value : option->results()) {
        check(!value.empty(),
              "Option '{}' is empty; give it a value, or leave it out for its default.", name);
      }
    }
    const auto subs = cmd->get_subcommands();
    if (subs.empty()) break;
    cmd = subs.front();
  }
}

void check_output_paths(const CLI::App& app) {
  for (const CLI::App* cmd = &app;;) {
    // --out first: a --json file inside the --out directory is created along with it.
    std::string out;
    for (const CLI::Option* option : cmd->get_options()) {
      if (option->count() > 0 && !option->results().empty() &&
          option->get_name(false, true) == "--out" && !option->results().back().empty()) {
        if (option->get_type_name() == "FILE") {  // a command whose --out is one file (merge)
          check_writable_file(option->results().back(), "--out");
          check_output_file(*cmd, "--out", option->results().back());
        } else {
          out = option->results().back();
          check_writable_directory(out, "--out");
        }
      }
    }
    for (const CLI::Option* option : cmd->get_options()) {
      if (option->count() == 0 || option->results().empty()) continue;
      const std::string& name = option->get_name(false, true);
      const std::string& value = option->results().back();
      if (!is_one_of(name, std::begin(kFileOutputOptions), std::end(kFileOutputOptions)) ||
          value == "-" || value.empty()) {
        continue;
      }
      if (!out.empty() && inside(fs::path(value).parent_path(), fs::path(out))) {
        check_writable_directory(fs::path(value).parent_path().string(), name);
      } else {
        check_writable_file(value, name);
      }
      check_output_file(*cmd, name, value);
    }
    // One run at a time writes a directory (output_lock.hpp).
    if (!out.empty() && writes_outputs()) lock_output_directory(out);
    const auto subs = cmd->get_subcommands();
    if (subs.empty()) break;
    cmd = subs.front();
  }
}

}  // namespace blr::cli
