// OutputFile (blr/io/output_file.hpp): a target is replaced whole or not at all, never through a
// symbolic link, and its temporary is never a planted file or link.
#include "blr/io/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "blr/core/error.hpp"
#include "error_message.hpp"
#include "temp_dir.hpp"

namespace blr::io {
namespace {

namespace fs = std::filesystem;

std::string contents_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string own_temporary(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

TEST(OutputFile, WritesAndReplacesAFileLeavingNoTemporary) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string target = dir.file("r.json");
  write_output_file(target, "first\n", "the JSON file");
  EXPECT_EQ(contents_of(target), "first\n");
  write_output_file(target, "second, longer\n", "the JSON file");
  EXPECT_EQ(contents_of(target), "second, longer\n");
  EXPECT_FALSE(fs::exists(own_temporary(target)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

TEST(OutputFile, RefusesASymbolicLinkAndLeavesItsTargetAlone) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string victim = dir.write("victim.txt", "precious\n");
  const std::string link = dir.file("results.json");
  fs::create_symlink(victim, link);
  const std::string message = blr::testing::error_of(
      [&] { write_output_file(link, "{}\n", "the JSON file"); });
  EXPECT_EQ(message, "The JSON file '" + link +
                         "' is a symbolic link; blr refuses to write through links.");
  EXPECT_EQ(contents_of(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(own_temporary(link)));
}

TEST(OutputFile, APlantedTemporaryIsRemovedNotFollowed) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string victim = dir.write("victim.txt", "precious\n");
  const std::string target = dir.file("model.ckpt");
  fs::create_symlink(victim, own_temporary(target));  // named with this process's id
  write_output_file(target, "checkpoint bytes", "the checkpoint");
  EXPECT_EQ(contents_of(victim), "precious\n");
  EXPECT_EQ(contents_of(target), "checkpoint bytes");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_FALSE(fs::exists(fs::symlink_status(own_temporary(target))));
}

TEST(OutputFile, KeepsThePermissionsOfTheFileItReplaces) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string target = dir.write("private.json", "old\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
  write_output_file(target, "new\n", "the JSON file");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(OutputFile, AFailedWriteKeepsThePreviousFileAndRemovesTheTemporary) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string target = dir.write("r.json", "the previous result\n");
  // A file-size limit below the new contents: the write fails with EFBIG, as on a full disk.
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string message = blr::testing::error_of(
      [&] { write_output_file(target, std::string(4096, 'x'), "the JSON file"); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_NE(message.find("Writing the JSON file '" + target + "' failed (File too large)"),
            std::string::npos)
      << message;
  EXPECT_EQ(contents_of(target), "the previous result\n");
  EXPECT_FALSE(fs::exists(own_temporary(target)));
}

TEST(OutputFile, AnUncommittedFileLeavesTheTargetAsItWas) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string target = dir.write("r.csv", "old\n");
  {
    OutputFile file(target, "the prediction file");
    file.write("half of a new fi");
    EXPECT_TRUE(fs::exists(file.temporary()));
  }  // an exception between write and commit ends here
  EXPECT_EQ(contents_of(target), "old\n");
  EXPECT_FALSE(fs::exists(own_temporary(target)));
}

TEST(OutputFile, ADeviceIsWrittenInPlace) {
  write_output_file("/dev/null", "discarded\n", "the JSON file");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputFile, AMissingDirectoryIsNamed) {
  blr::testing::TempDir dir("blr-output-file");
  const std::string target = dir.file("no/such/r.json");
  EXPECT_EQ(blr::testing::error_of([&] { write_output_file(target, "{}", "the JSON file"); }),
            "Cannot write the JSON file '" + target + "': the directory '" + dir.file("no/such") +
                "' does not exist.");
}

TEST(OutputFile, AnOutputDirectoryThatIsALinkIsRefused) {
  blr::testing::TempDir dir("blr-output-file");
  fs::create_directories(dir.path / "elsewhere");
  const std::string link = dir.file("plot-data");
  fs::create_directory_symlink(dir.path / "elsewhere", link);
  EXPECT_EQ(blr::testing::error_of(
                [&] { make_output_directory(link, "the plot directory"); }),
            "The plot directory '" + link +
                "' is a symbolic link; blr refuses to write through links.");
  make_output_directory(dir.file("made/here"), "the plot directory");
  EXPECT_TRUE(fs::is_directory(dir.path / "made/here"));
}

}  // namespace
}  // namespace blr::io
