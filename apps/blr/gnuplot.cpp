// Running gnuplot for the plots blr draws (gnuplot.hpp).
#include "gnuplot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "blr/io/output_file.hpp"

namespace blr::cli {
namespace fs = std::filesystem;

bool gnuplot_available() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream in(path);
  std::string dir;
  while (std::getline(in, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "gnuplot";
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

namespace {

// Runs `gnuplot SCRIPT` in `dir`, its output and errors to the file `output` there, without a
// shell (no name is ever read as a command); gnuplot's exit status, or -1 when it could not be
// started or did not exit.
int spawn_gnuplot(const fs::path& dir, const std::string& script, const std::string& output) {
  posix_spawn_file_actions_t actions;
  if (::posix_spawn_file_actions_init(&actions) != 0) return -1;
  ::posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  ::posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string program = "gnuplot", file = script;
  std::vector<char*> argv{program.data(), file.data(), nullptr};
  pid_t pid = 0;
  const int started = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Refuses a symbolic link at every file gnuplot will write: its log, and each image a
// `set output '...'` line of the script names (relative to the script's directory). gnuplot opens
// them itself, so a link planted there would be written through.
void refuse_links_gnuplot_writes(const fs::path& dir, const std::string& script,
                                 const fs::path& log) {
  blr::io::refuse_symbolic_link(log.string(), "the gnuplot log");
  std::istringstream lines(script);
  const std::string prefix = "set output '";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const auto end = line.find('\'', prefix.size());
    if (end == std::string::npos) continue;
    const fs::path image = dir / line.substr(prefix.size(), end - prefix.size());
    blr::io::refuse_symbolic_link(image.lexically_normal().string(), "the image");
  }
}

}  // namespace

void write_text_file(const fs::path& path, const std::string& text) {
  blr::io::write_output_file(path.string(), text, "the plot file");
}

fs::path plot_data_dir(const std::string& dir) {
  const fs::path data = fs::path(dir) / "plot-data";
  blr::io::make_output_directory(data.string(), "the plot directory");
  return data;
}

bool run_gnuplot(const fs::path& script, const std::string& text, const std::string& what,
                 std::ostream& log) {
  write_text_file(script, text);
  if (!gnuplot_available()) {
    log << "blr: note: gnuplot is not installed; not drawn: " << what << " (the data and the "
        << "script are in " << script.parent_path().string()
        << "; install gnuplot-nox to get the PNG images).\n";
    return false;
  }
  const fs::path errors = fs::path(script).replace_extension(".log");
  refuse_links_gnuplot_writes(script.parent_path(), text, errors);
  if (spawn_gnuplot(script.parent_path(), script.filename().string(),
                    errors.filename().string()) != 0) {
    log << "blr: note: gnuplot failed (see " << errors.string() << "); not drawn: " << what
        << ".\n";
    return false;
  }
  return true;
}

}  // namespace blr::cli
