// `blr launch --nproc N -- <blr command and flags>`: runs N copies of a blr command on this
// machine as the ranks of one data-parallel run, as torchrun does: each child gets RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and BLR_RENDEZVOUS_FILE, a file in a private directory
// (mode 0700, removed at the end) through which the ranks meet as a c10d FileStore: no port is
// opened for the rendezvous, and Gloo's pairs bind 127.0.0.1
// (blr/torch/distributed/process_group.hpp reads them). Each line a child writes comes out on the
// same stream prefixed with "[rank r] ". When a child exits non-zero or is killed, the others get
// SIGTERM, then SIGKILL after a grace period, and launch exits non-zero with one sentence naming
// the rank and its status. Children die with launch (PR_SET_PDEATHSIG), so none outlives it.
//
// Elastic restarts (--max-restarts N, as torchrun's elastic agent): after a failure every rank is
// stopped, then all are started again, at most N times, with a fresh rendezvous directory and
// `--auto-resume` appended to the train command, so that each continues the newest valid
// checkpoint in OUT/checkpoints (blr train's rule, commands.hpp: newest_checkpoint_if_any) or,
// when there is none yet, starts again. Only `train` with --out and --checkpoint-every is
// restarted: anything else would redo all its work.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "commands.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct LaunchFlags {
  int nproc = 2;
  double grace = 5.0;
  int max_restarts = 0;
  std::vector<std::string> command;
};

constexpr int kMaxRestartsLimit = 100;

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

/// One child: its process id, its two output pipes and what is left of an unfinished line.
struct Child {
  pid_t pid = -1;
  int fd[2] = {-1, -1};  // stdout, stderr
  std::string pending[2];
  bool running = true;
  int status = 0;
};

/// A private directory (mode 0700) for the ranks' rendezvous file, removed with everything in it
/// when launch ends.
class RendezvousDirectory {
 public:
  RendezvousDirectory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/blr-launch-XXXXXX";
    blr::check(::mkdtemp(pattern.data()) != nullptr,
               fmt::format("Cannot create the ranks' rendezvous directory '{}': {}.", pattern,
                           std::strerror(errno)));
    dir_ = pattern;
  }
  ~RendezvousDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RendezvousDirectory(const RendezvousDirectory&) = delete;
  RendezvousDirectory& operator=(const RendezvousDirectory&) = delete;
  std::string file() const { return dir_ + "/store"; }

 private:
  std::string dir_;
};

void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

/// Forwards the complete lines of `text` with the rank's prefix (and the rest at `flush`).
void forward(Child& c, int which, int rank, const char* data, size_t size, bool flush) {
  std::string& buf = c.pending[which];
  buf.append(data, size);
  const int out = which == 0 ? STDOUT_FILENO : STDERR_FILENO;
  size_t start = 0;
  for (size_t eol; (eol = buf.find('\n', start)) != std::string::npos; start = eol + 1) {
    write_all(out, fmt::format("[rank {}] {}\n", rank, buf.substr(start, eol - start)));
  }
  buf.erase(0, start);
  if (flush && !buf.empty()) {
    write_all(out, fmt::format("[rank {}] {}\n", rank, buf));
    buf.clear();
  }
}

std::string describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("was killed by signal {} ({})", sig, ::strsignal(sig));
  }
  return fmt::format("stopped with wait status {}", status);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

pid_t spawn(const LaunchFlags& f, const std::vector<std::string>& command, int restart, int rank,
            const std::string& store_file, Child& c) {
  int out[2], err[2];
  blr::check(::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0,
             fmt::format("Cannot create the pipes of rank {}: {}.", rank, std::strerror(errno)));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  blr::check(pid >= 0, fmt::format("Cannot start rank {}: {}.", rank, std::strerror(errno)));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
    if (::getppid() != parent) ::_exit(127);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(f.nproc).c_str(), 1);
    ::setenv("LOCAL_WORLD_SIZE", std::to_string(f.nproc).c_str(), 1);
    ::setenv("BLR_RENDEZVOUS_FILE", store_file.c_str(), 1);
    // As torchrun's elastic agent: how many times the ranks were restarted, and the limit.
    ::setenv("TORCHELASTIC_RESTART_COUNT", std::to_string(restart).c_str(), 1);
    ::setenv("TORCHELASTIC_MAX_RESTARTS", std::to_string(f.max_restarts).c_str(), 1);
    ::unsetenv("MASTER_ADDR");
    ::unsetenv("MASTER_PORT");
    std::vector<std::string> args = {"blr"};
    args.insert(args.end(), command.begin(), command.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    const std::string why = fmt::format("blr launch: cannot run rank {}: {}\n", rank,
                                        std::strerror(errno));
    write_all(STDERR_FILENO, why);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  c.fd[0] = out[0];
  c.fd[1] = err[0];
  c.pid = pid;
  return pid;
}

/// How one start of the ranks ended: `failed_rank` -1 when every rank exited 0, -2 when launch was
/// interrupted, else the rank that names the failure and its wait status.
struct Attempt {
  int failed_rank = -1;
  int failed_status = 0;
};

/// Starts the ranks with `command` (restart: how many starts came before), forwards their output
/// and waits until every one has exited; when one fails, the others get SIGTERM, then SIGKILL after
/// --grace seconds. Each start meets in its own rendezvous directory, removed on return.
Attempt run_ranks(const LaunchFlags& f, const std::vector<std::string>& command, int restart) {
  const RendezvousDirectory rendezvous;
  std::vector<Child> children(static_cast<size_t>(f.nproc));
  for (int r = 0; r < f.nproc; ++r) {
    try {
      spawn(f, command, restart, r, rendezvous.file(), children[static_cast<size_t>(r)]);
    } catch (...) {
      for (auto& c : children) {
        if (c.pid > 0) {
          ::kill(c.pid, SIGKILL);
          ::waitpid(c.pid, nullptr, 0);
        }
      }
      throw;
    }
    std::cerr << fmt::format("blr launch: rank {} is process {}\n", r,
                             children[static_cast<size_t>(r)].pid);
  }
  std::cerr.flush();

  int failed_rank = -1;
  int failed_status = 0;
  bool interrupted = false;
  Clock::time_point kill_at{};
  bool stopping = false;
  char buf[65536];
  for (;;) {
    // Output first: forward what is there, at most 100 ms of waiting.
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, int>> who;
    for (size_t r = 0; r < children.size(); ++r) {
      for (int w = 0; w < 2; ++w) {
        if (children[r].fd[w] >= 0) {
          fds.push_back({children[r].fd[w], POLLIN, 0});
          who.emplace_back(r, w);
        }
      }
    }
    if (!fds.empty()) {
      ::poll(fds.data(), fds.size(), 100);
    } else {
      ::usleep(50000);  // every pipe closed: only the exits are left to wait for
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto& c = children[who[k].first];
      const int w = who[k].second;
      const ssize_t n = ::read(c.fd[w], buf, sizeof buf);
      if (n > 0) {
        forward(c, w, static_cast<int>(who[k].first), buf, static_cast<size_t>(n), false);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        forward(c, w, static_cast<int>(who[k].first), buf, 0, true);
        ::close(c.fd[w]);
        c.fd[w] = -1;
      }
    }
    // Then the children's state.
    bool any_running = false;
    for (size_t r = 0; r < children.size(); ++r) {
      auto& c = children[r];
      if (!c.running) continue;
      int status = 0;
      const pid_t got = ::waitpid(c.pid, &status, WNOHANG);
      if (got == c.pid) {
        c.running = false;
        c.status = status;
        const bool bad = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        // The first failure names the run's cause; a rank killed by a signal is preferred over
        // the ranks that then failed because their peer was gone.
        if (bad && !stopping && (failed_rank < 0 || (WIFSIGNALED(status) &&
                                                     !WIFSIGNALED(failed_status)))) {
          failed_rank = static_cast<int>(r);
          failed_status = status;
        }
      } else {
        any_running = true;
      }
    }
    if (g_interrupted && !interrupted) {
      interrupted = true;
      if (failed_rank < 0) failed_rank = -2;
    }
    if ((failed_rank != -1) && !stopping) {
      stopping = true;
      for (auto& c : children) {
        if (c.running) ::kill(c.pid, SIGTERM);
      }
      kill_at = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(f.grace * 1000));
    }
    if (stopping && Clock::now() >= kill_at) {
      for (auto& c : children) {
        if (c.running) ::kill(c.pid, SIGKILL);
      }
      kill_at = Clock::now() + std::chrono::hours(1);
    }
    const bool any_open = std::any_of(children.begin(), children.end(),
                                      [](const Child& c) { return c.fd[0] >= 0 || c.fd[1] >= 0; });
    if (!any_running && !any_open) break;
    if (!any_running && fds.empty()) break;
  }
  for (auto& c : children) {
    for (int w = 0; w < 2; ++w) {
      if (c.fd[w] >= 0) ::close(c.fd[w]);
    }
  }
  return {failed_rank, failed_status};
}

/// The value of `name` in a command's flags ("--name V" or "--name=V"; the last one given), or
/// nothing when the command does not give it.
std::optional<std::string> flag_value(const std::vector<std::string>& command,
                                      const std::string& name) {
  std::optional<std::string> value;
  for (size_t i = 1; i < command.size(); ++i) {
    if (command[i] == name && i + 1 < command.size()) {
      value = command[i + 1];
    } else if (command[i].rfind(name + "=", 0) == 0) {
      value = command[i].substr(name.size() + 1);
    }
  }
  return value;
}

/// Where the ranks of a restartable command write their checkpoints, OUT/checkpoints; refuses
/// (one sentence) a command that a restart could not resume.
std::string restartable_checkpoints(const std::vector<std::string>& command) {
  blr::check(command[0] == "train",
             fmt::format("Option '--max-restarts' restarts `train` only, which resumes from its "
                         "checkpoints; '{}' would start over from nothing, so run it without "
                         "--max-restarts.",
                         command[0]));
  const auto out = flag_value(command, "--out");
  const auto every = flag_value(command, "--checkpoint-every");
  int64_t epochs = 0;
  if (every) {
    try {
      size_t used = 0;
      epochs = std::stoll(*every, &used);
      if (used != every->size()) epochs = 0;
    } catch (const std::exception&) {
      epochs = 0;
    }
  }
  blr::check(out.has_value() && !out->empty() && epochs > 0,
             fmt::format("Option '--max-restarts' needs a train command that writes checkpoints "
                         "(--out DIR and --checkpoint-every K > 0), so that a restart resumes the "
                         "run instead of redoing it; this one has {}.",
                         !out || out->empty() ? "no --out"
                         : !every             ? "no --checkpoint-every"
                                              : "--checkpoint-every " + *every));
  return (std::filesystem::path(*out) / "checkpoints").string();
}

/// "from 'FILE' (epoch E)" or "from scratch (...)": where the restarted ranks will continue, by the
/// rule `blr train --auto-resume` applies to the same directory (every file it will skip is named
/// first).
std::string restart_point(const std::string& checkpoints, bool command_resumes) {
  std::vector<std::string> skipped;
  const auto newest = blr::torch::newest_checkpoint_if_any(checkpoints, &skipped);
  for (const auto& why : skipped) std::cerr << "blr launch: skipped: " << why << '\n';
  if (newest) {
    return fmt::format("from '{}' (epoch {})", newest->path,
                       newest->meta.value("epoch", int64_t{0}));
  }
  return fmt::format("{} (no valid checkpoint in '{}' yet)",
                     command_resumes ? "from the checkpoint its --resume names" : "from scratch",
                     checkpoints);
}

int run_launch(LaunchFlags& f) {
  blr::check(f.nproc >= 1 && f.nproc <= 64,
             fmt::format("Option '--nproc' must be between 1 and 64; got {}.", f.nproc));
  blr::check(f.grace > 0 && f.grace <= 600,
             fmt::format("Option '--grace' must be in (0, 600] seconds; got {}.", f.grace));
  blr::check(f.max_restarts >= 0 && f.max_restarts <= kMaxRestartsLimit,
             fmt::format("Option '--max-restarts' must be between 0 and {}; got {}.",
                         kMaxRestartsLimit, f.max_restarts));
  if (!f.command.empty() && (f.command[0] == "blr" || f.command[0] == "blr-torch")) {
    f.command.erase(f.command.begin());
  }
  blr::check(!f.command.empty() && f.command[0] != "launch",
             "blr launch needs the blr command to run after '--', e.g. "
             "blr launch --nproc 2 -- train --model lenet.");
  // The ranks run this executable, the LibTorch part: a command of the front (infer, table1, …)
  // would be unknown to them.
  std::string torch_commands;
  bool known = false;
  for (const auto& c : blr::cli::kTorchCommands) {
    if (std::string_view(c.name) == "launch") continue;
    known = known || f.command[0] == c.name;
    torch_commands += (torch_commands.empty() ? "" : ", ") + std::string(c.name);
  }
  blr::check(known, fmt::format("blr launch runs the LibTorch commands ({}); '{}' is not one of "
                                "them, so run `blr {}` directly (only train is data-parallel).",
                                torch_commands, f.command[0], f.command[0]));
  const std::string checkpoints =
      f.max_restarts > 0 ? restartable_checkpoints(f.command) : std::string();
  struct sigaction sa{};
  sa.sa_handler = on_interrupt;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::vector<std::string> command = f.command;
  // At most max_restarts + 1 starts; each ends when its ranks have exited.
  for (int restart = 0; restart <= f.max_restarts; ++restart) {
    const Attempt attempt = run_ranks(f, command, restart);
    if (attempt.failed_rank == -1) return 0;
    if (attempt.failed_rank == -2) {
      std::cerr << "blr launch: interrupted; stopped all ranks.\n";
      return 130;
    }
    const std::string failure =
        fmt::format("rank {} {}", attempt.failed_rank, describe(attempt.failed_status));
    const int code = exit_code_of(attempt.failed_status);
    if (restart == f.max_restarts || g_interrupted) {  // an interrupted launch restarts nothing
      if (f.max_restarts == 0 || g_interrupted) {
        std::cerr << fmt::format("blr launch: {}; stopped the other ranks.\n", failure);
      } else {
        std::cerr << fmt::format(
            "blr launch: {} after {} restart{}, the limit set by --max-restarts; stopped all "
            "ranks.\n",
            failure, f.max_restarts, f.max_restarts == 1 ? "" : "s");
      }
      return code == 0 ? 1 : code;
    }
    std::string from;
    try {
      from = restart_point(checkpoints, flag_value(f.command, "--resume").has_value());
    } catch (const std::exception& e) {
      std::cerr << fmt::format("blr launch: {}; cannot restart: {}\n", failure, e.what());
      return code == 0 ? 1 : code;
    }
    std::cerr << fmt::format("blr launch: {}; restart {} of {}, all ranks {}.\n", failure,
                             restart + 1, f.max_restarts, from);
    std::cerr.flush();
    if (std::find(command.begin(), command.end(), "--auto-resume") == command.end()) {
      command.emplace_back("--auto-resume");
    }
  }
  return 1;  // not reached: the last start returns above
}

void setup_launch(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("launch", blr::cli::torch_command("launch").summary);
  auto f = std::make_shared<LaunchFlags>();
  cmd->add_option("--nproc", f->nproc, "Number of processes (ranks) to start on this machine.")
      ->capture_default_str();
  cmd->add_option("--grace", f->grace,
                  "Seconds the other ranks get to stop (SIGTERM) after one failed, before "
                  "SIGKILL.")
      ->capture_default_str();
  cmd->add_option("--max-restarts", f->max_restarts,
                  "After a rank fails, stop all ranks and start them again, at most this many "
                  "times (as torchrun's elastic agent), each time from the newest valid "
                  "checkpoint in OUT/checkpoints (train with --out and --checkpoint-every only; "
                  "the restarts run with --auto-resume); 0: a failure ends the run.")
      ->capture_default_str();
  cmd->add_option("command", f->command,
                  "The blr command and its flags, after '--' (e.g. -- train --model lenet).");
  cmd->callback([f, &exit_code] { exit_code = run_launch(*f); });
}

BLR_REGISTER_COMMAND("launch", blr::cli::torch_command("launch").order, setup_launch);

}  // namespace
