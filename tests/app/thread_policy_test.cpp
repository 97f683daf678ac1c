// The process settings blr chooses (apps/blr/thread_policy.hpp): a variable the user set is kept,
// an unset one is chosen; with freed memory kept, a block allocated, written and freed again and
// again faults its pages in once, where glibc's own rules fault them in at every allocation (a
// block above the largest mmap threshold glibc's adaptation reaches, 32 MiB, is always mapped
// and unmapped; in training the same happens to smaller blocks, 3 million faults in one LeNet-5
// epoch, by the adaptation's history across threads).
#include "thread_policy.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace blr::cli {
namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/// 40 MiB: 10 240 pages.
constexpr std::size_t kBytes = std::size_t{40} << 20;
constexpr long kPages = 10240;

/// Minor page faults of 10 rounds of allocating, writing and freeing kBytes.
long faults_of_reused_blocks() {
  const long before = minor_faults();
  for (int round = 0; round < 10; ++round) {
    auto* p = static_cast<volatile char*>(std::malloc(kBytes));
    for (std::size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
    std::free(const_cast<char*>(p));
  }
  return minor_faults() - before;
}

/// `faults_of_reused_blocks` in a child process (its malloc settings are its own), after `setup`.
template <class F>
long faults_in_child(F setup) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    setup();
    const long n = faults_of_reused_blocks();
    (void)!::write(fds[1], &n, sizeof n);
    ::_exit(0);
  }
  ::close(fds[1]);
  long n = -1;
  (void)!::read(fds[0], &n, sizeof n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return n;
}

TEST(ThreadPolicy, KeptFreedMemoryFaultsItsPagesInOnce) {
  // glibc's own rules map and unmap the block at every round (10 × kPages faults); kept, it is
  // faulted in at the first round only (kPages, with a margin for the rest of the process).
  const long kept = faults_in_child([] { keep_freed_memory(); });
  const long by_default = faults_in_child([] {});
  EXPECT_LT(kept, 2 * kPages) << "kept: " << kept;
  EXPECT_GT(by_default, 8 * kPages) << "glibc's rules: " << by_default;
}

TEST(ThreadPolicy, TheUsersMallocSettingsAreKept) {
  const long user = faults_in_child([] {
    ::setenv("MALLOC_MMAP_THRESHOLD_", "131072", 1);
    keep_freed_memory_unless_set();
  });
  EXPECT_GT(user, 8 * kPages) << "with the user's threshold set: " << user;
}

TEST(ThreadPolicy, AVariableTheUserSetIsKept) {
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "12", 1);
  EXPECT_FALSE(choose_openblas_thread_timeout());
  EXPECT_STREQ(std::getenv("OPENBLAS_THREAD_TIMEOUT"), "12");
  ::unsetenv("OPENBLAS_THREAD_TIMEOUT");
  EXPECT_TRUE(choose_openblas_thread_timeout());
  EXPECT_STREQ(std::getenv("OPENBLAS_THREAD_TIMEOUT"), "4");
  ::unsetenv("OMP_WAIT_POLICY");
  EXPECT_TRUE(choose_omp_wait_policy());
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "PASSIVE");
  EXPECT_FALSE(choose_omp_wait_policy());
}

}  // namespace
}  // namespace blr::cli
