// Fuzz harness: checkpoints (include/blr/torch/checkpoint.hpp, load_checkpoint(path)).
//
// The reader takes a path, so each input is written to a temporary file of this process. The
// first byte chooses how: even, the rest is the whole file (magic, version, length and CRC are
// mutated too, and are mostly refused by the header checks); odd, the rest is the payload and a
// valid header with its length and CRC-32 is put in front, so that mutations reach LibTorch's
// archive decoder. A blr::Error is an accepted rejection; a crash, a sanitizer report or another
// exception is a bug. Property checked for an accepted checkpoint: its "meta" is a JSON object.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "blr/torch/checkpoint/checkpoint.hpp"
#include "fuzz_check.hpp"

namespace {

using blr::fuzz::accepted;
using blr::fuzz::bug;
using blr::fuzz::require;

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// The scratch file of this process; removed after every input (libFuzzer may end the process
/// without running destructors, and a crash ends it at once).
struct Scratch {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("blr_fuzz_checkpoint_" + std::to_string(::getpid()) + ".ckpt"))
                         .string();
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Scratch scratch;
  if (size == 0) return 0;
  std::string file;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    file = "BLRCKPT\n";
    put_le(file, blr::torch::kCheckpointVersion, 4);
    put_le(file, rest.size(), 8);
    put_le(file, crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(rest.data()),
                       static_cast<uInt>(rest.size())),
           4);
  }
  file += rest;
  {
    FILE* f = std::fopen(scratch.path.c_str(), "wb");
    if (f == nullptr) bug("cannot write the scratch file " + scratch.path);
    const size_t wrote = file.empty() ? 0 : std::fwrite(file.data(), 1, file.size(), f);
    if (std::fclose(f) != 0 || wrote != file.size()) bug("fwrite failed");
  }
  blr::torch::Checkpoint c;
  const bool ok = accepted([&] { c = blr::torch::load_checkpoint(scratch.path); });
  std::error_code ec;
  std::filesystem::remove(scratch.path, ec);
  if (!ok) return 0;
  require(c.meta.is_object() || c.meta.is_array() || !c.meta.is_discarded(),
          "an accepted checkpoint has no readable meta block");
  return 0;
}
