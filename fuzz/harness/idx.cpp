// Fuzz harness: the gzip/IDX reader (include/blr/torch/data/idx.hpp; zlib only).
//
// The reader takes a path, so each input is written to a temporary file of this process. The
// first byte chooses how: even, the rest is written as it is (zlib reads a file without a gzip
// header as plain bytes; a mutated gzip stream exercises the inflater); odd, the rest is gzip-
// compressed first, so that mutations reach the IDX header and sizes behind a valid stream. The
// file is read as labels (rank 1) and as images (rank 3). Properties checked: an accepted array
// has positive sizes whose product is the number of values, and it survives a write/read round
// trip unchanged.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "blr/torch/data/idx.hpp"
#include "fuzz_check.hpp"

namespace {

using blr::fuzz::accepted;
using blr::fuzz::bug;
using blr::fuzz::require;

std::string scratch(const char* what) {
  const std::filesystem::path dir =
      std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
  return (dir / ("blr_fuzz_idx_" + std::to_string(::getpid()) + what)).string();
}

void write_file(const std::string& path, const uint8_t* data, size_t size, bool compress) {
  if (compress) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (f == nullptr) bug("cannot write the scratch file " + path);
    const int wrote = size == 0 ? 0 : gzwrite(f, data, static_cast<unsigned>(size));
    if (gzclose(f) != Z_OK || wrote != static_cast<int>(size)) bug("gzwrite failed");
  } else {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) bug("cannot write the scratch file " + path);
    const size_t wrote = size == 0 ? 0 : std::fwrite(data, 1, size, f);
    if (std::fclose(f) != 0 || wrote != size) bug("fwrite failed");
  }
}

/// The scratch files of this process; removed after every input (libFuzzer may end the process
/// without running destructors).
struct Scratch {
  std::string in = scratch(".in"), out = scratch(".out.gz");
  void remove() const {
    std::error_code ec;
    std::filesystem::remove(in, ec);
    std::filesystem::remove(out, ec);
  }
};

void check(const std::string& path, const std::string& again) {
  for (const int rank : {1, 3}) {
    blr::torch::IdxArray a;
    if (!accepted([&] { a = blr::torch::read_idx_gz(path, rank); })) continue;
    require(static_cast<int>(a.dims.size()) == rank, "the rank differs from the one asked for");
    int64_t count = 1;
    for (const int64_t d : a.dims) {
      require(d > 0, "a dimension is not positive");
      count *= d;
    }
    require(count == static_cast<int64_t>(a.data.size()),
            "the number of values differs from the product of the sizes");
    blr::torch::IdxArray b;
    require(accepted([&] {
              blr::torch::write_idx_gz(again, a);
              b = blr::torch::read_idx_gz(again, rank);
            }),
            "an accepted array does not survive a write/read round trip");
    require(a.dims == b.dims && a.data == b.data, "the round trip changed the array");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Scratch files;
  if (size == 0) return 0;
  write_file(files.in, data + 1, size - 1, (data[0] & 1) != 0);
  check(files.in, files.out);
  files.remove();
  return 0;
}
