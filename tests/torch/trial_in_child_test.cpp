// The trial decode in a capped child process (src/torch/trial_in_child.hpp), behind the
// checkpoint, model-file and tensor-file readers: each way a child can end is told apart, and a
// refusal comes back with its message, so that the caller never decodes in-process what failed
// in the child.
#include "../../src/torch/trial_in_child.hpp"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>
#include <vector>

namespace blr::torch::detail {
namespace {

constexpr std::chrono::seconds kTrialTimeout{30};

TEST(TrialInChild, TellsEachEndingApart) {
  const uint64_t extra = uint64_t{256} << 20;
  EXPECT_EQ(trial_in_child([] {}, extra, kTrialTimeout).kind, TrialOutcome::kFine);

  const auto refused =
      trial_in_child([] { throw std::runtime_error("bad archive"); }, extra, kTrialTimeout);
  EXPECT_EQ(refused.kind, TrialOutcome::kRefused);
  EXPECT_EQ(refused.message, "bad archive");
  EXPECT_FALSE(refused.sentence);

  const auto sentence =
      trial_in_child([] { throw Error("The file 'a.pt' is corrupt."); }, extra, kTrialTimeout);
  EXPECT_EQ(sentence.kind, TrialOutcome::kRefused);
  EXPECT_EQ(sentence.message, "The file 'a.pt' is corrupt.");
  EXPECT_TRUE(sentence.sentence);

  // LibTorch's errors come back without their C++ backtrace.
  const auto libtorch = trial_in_child([] { TORCH_CHECK(false, "unknown type name 'Foo'"); },
                                       extra, kTrialTimeout);
  EXPECT_EQ(libtorch.kind, TrialOutcome::kRefused);
  EXPECT_EQ(libtorch.message.find("unknown type name 'Foo'"), 0u) << libtorch.message;
  EXPECT_EQ(libtorch.message.find("frame #"), std::string::npos) << libtorch.message;

  const auto crashed = trial_in_child([] { std::raise(SIGSEGV); }, extra, kTrialTimeout);
  EXPECT_EQ(crashed.kind, TrialOutcome::kCrashed);
  EXPECT_EQ(crashed.signal, SIGSEGV);

  // More than the cap (this process's memory + extra): refused as out of memory.
  const auto hungry = trial_in_child(
      [] {
        std::vector<char> block(size_t{1} << 30);
        block[12345] = 1;
        if (block[12345] != 1) std::abort();
      },
      extra, kTrialTimeout);
  EXPECT_EQ(hungry.kind, TrialOutcome::kOutOfMemory);
}

TEST(TrialInChild, AChildThatHangsIsStoppedAndTheOutcomeUnknown) {
  const auto start = std::chrono::steady_clock::now();
  const auto hung = trial_in_child([] { ::sleep(60); }, uint64_t{1} << 28, std::chrono::seconds(1));
  EXPECT_EQ(hung.kind, TrialOutcome::kUnknown);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

}  // namespace
}  // namespace blr::torch::detail
