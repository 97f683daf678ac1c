// The CLI boundary (apps/blr/error_boundary.hpp): each kind of exception gets one sentence and the
// exit status the reliability promise names (2: input/environment, 3: a bug).
#include "error_boundary.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <ios>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "blr/core/error.hpp"

#ifdef BLR_HAVE_TORCH
#include <c10/util/Exception.h>
#endif

namespace blr::cli {
namespace {

template <class Throw>
Failure failure_of(Throw&& throw_it) {
  try {
    throw_it();
  } catch (...) {
    return describe_failure(std::current_exception());
  }
  ADD_FAILURE() << "nothing was thrown";
  return {};
}

void expect_one_sentence(const std::string& message) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  ASSERT_FALSE(message.empty());
  EXPECT_TRUE(message.back() == '.' || message.back() == '?' || message.back() == '!') << message;
}

TEST(ErrorBoundary, BlrErrorsAreUserErrorsWithTheirSentence) {
  const auto f = failure_of([] { throw Error("Option 'x' must be positive; got -1."); });
  EXPECT_EQ(f.exit_code, kExitError);
  EXPECT_EQ(f.message, "Option 'x' must be positive; got -1.");
}

TEST(ErrorBoundary, ForeignExceptionsAreUserErrorsInOneSentence) {
  const auto memory = failure_of([] { throw std::bad_alloc(); });
  EXPECT_EQ(memory.exit_code, kExitError);
  EXPECT_NE(memory.message.find("out of memory"), std::string::npos);

  const auto files = failure_of([] {
    throw std::filesystem::filesystem_error(
        "cannot create directories", std::filesystem::path("/ro/out"),
        std::make_error_code(std::errc::read_only_file_system));
  });
  EXPECT_EQ(files.exit_code, kExitError);
  EXPECT_NE(files.message.find("'/ro/out'"), std::string::npos) << files.message;
  EXPECT_NE(files.message.find("Read-only file system"), std::string::npos) << files.message;

  const auto stream = failure_of([] { throw std::ios_base::failure("basic_filebuf::underflow"); });
  EXPECT_EQ(stream.exit_code, kExitError);

  const auto json = failure_of([] {
    const auto document = nlohmann::json::parse("{");
    (void)document;
  });
  EXPECT_EQ(json.exit_code, kExitError);

  const auto library = failure_of(
      [] { throw std::runtime_error("value cannot be converted to type float without overflow"); });
  EXPECT_EQ(library.exit_code, kExitError);
  EXPECT_NE(library.message.find("without overflow."), std::string::npos);

  for (const auto& f : {memory, files, stream, json, library}) expect_one_sentence(f.message);
}

#ifdef BLR_HAVE_TORCH
TEST(ErrorBoundary, LibTorchErrorsLoseTheirBacktrace) {
  const auto f = failure_of([] { TORCH_CHECK(false, "Expected a 2-D tensor"); });
  EXPECT_EQ(f.exit_code, kExitError);
  EXPECT_NE(f.message.find("Expected a 2-D tensor"), std::string::npos) << f.message;
  expect_one_sentence(f.message);
}
#endif

TEST(ErrorBoundary, LogicErrorsAndUnknownExceptionsAreBugs) {
  const auto range = failure_of([] { throw std::out_of_range("vector::_M_range_check"); });
  EXPECT_EQ(range.exit_code, kExitBug);
  EXPECT_NE(range.message.find("a bug in blr"), std::string::npos);
  const auto unknown = failure_of([] { throw 42; });
  EXPECT_EQ(unknown.exit_code, kExitBug);
  expect_one_sentence(range.message);
  expect_one_sentence(unknown.message);
}

TEST(ErrorBoundary, LongAndMultiLineMessagesBecomeOneBoundedSentence) {
  const auto f = failure_of([] { throw Error("first line\nException raised from f at x.cpp:1"); });
  EXPECT_EQ(f.message, "first line.");
  const auto g = failure_of([] { throw Error(std::string(5000, 'a')); });
  EXPECT_LT(g.message.size(), 450u);
  expect_one_sentence(g.message);
}

}  // namespace
}  // namespace blr::cli
