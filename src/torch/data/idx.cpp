#include "blr/torch/data/idx.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <memory>

#include "blr/core/error.hpp"

namespace blr::torch {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const {
    if (f != nullptr) gzclose(f);
  }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads exactly `n` bytes; returns the number read (< n at the end of the stream). Throws on a
// gzip error (corrupt stream).
size_t read_exact(gzFile file, uint8_t* out, size_t n, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
    const int got = gzread(file, out + done, chunk);
    if (got < 0) {
      int errnum = 0;
      const char* message = gzerror(file, &errnum);
      throw Error(fmt::format(
          "The IDX file '{}' is truncated or corrupt: the gzip stream cannot be read ({}).", path,
          message != nullptr ? message : "unknown zlib error"));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

uint32_t big_endian(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

}  // namespace

IdxArray read_idx_gz(const std::string& path, int expected_rank) {
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw Error(fmt::format("Cannot open the IDX file '{}'.", path));
  std::array<uint8_t, 4> magic{};
  if (read_exact(file.get(), magic.data(), 4, path) != 4) {
    throw Error(fmt::format("The IDX file '{}' is truncated: it ends inside the header.", path));
  }
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08) {
    throw Error(
        fmt::format("The file '{}' is not an unsigned-byte IDX file: its magic number is "
                    "0x{:02x}{:02x}{:02x}{:02x} "
                    "(expected 0x000008{:02x}).",
                    path, magic[0], magic[1], magic[2], magic[3], expected_rank));
  }
  const int rank = magic[3];
  if (rank != expected_rank) {
    throw Error(fmt::format("The IDX file '{}' has {} dimensions; expected {}.", path, rank,
                            expected_rank));
  }
  IdxArray out;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    std::array<uint8_t, 4> size{};
    if (read_exact(file.get(), size.data(), 4, path) != 4) {
      throw Error(fmt::format("The IDX file '{}' is truncated: it ends inside the header.", path));
    }
    const int64_t n = big_endian(size.data());
    if (n <= 0 || n > (int64_t{1} << 31)) {
      throw Error(fmt::format("The IDX file '{}' declares an invalid size {} for dimension {}.",
                              path, n, d));
    }
    out.dims.push_back(n);
    // Checked before multiplying: three sizes of up to 2^31 would overflow int64.
    if (n > (int64_t{1} << 34) / count) {
      throw Error(fmt::format("The IDX file '{}' declares an implausibly large array.", path));
    }
    count *= n;
  }
  // The data is read in chunks, the vector growing as bytes arrive: a header that claims more
  // than the file holds costs at most what was read plus one chunk, not the size it claims.
  // Chunks start at 64 KiB and double up to kIdxChunkBytes, so a small file stays cheap.
  const auto total = static_cast<size_t>(count);
  size_t got = 0;
  while (got < total) {
    const size_t chunk = std::clamp<size_t>(got, size_t{1} << 16, kIdxChunkBytes);
    const size_t want = std::min(chunk, total - got);
    out.data.resize(got + want);
    const size_t n = read_exact(file.get(), out.data.data() + got, want, path);
    got += n;
    if (n < want) break;
  }
  out.data.resize(got);
  if (got != total) {
    throw Error(fmt::format(
        "The IDX file '{}' is truncated: its header declares {} values but it holds only {}.", path,
        count, got));
  }
  uint8_t extra = 0;
  if (read_exact(file.get(), &extra, 1, path) != 0) {
    throw Error(fmt::format(
        "The IDX file '{}' is corrupt: it holds more data than its header declares.", path));
  }
  return out;
}

void write_idx_gz(const std::string& path, const IdxArray& array) {
  int64_t count = 1;
  for (auto d : array.dims) count *= d;
  check(count == static_cast<int64_t>(array.data.size()),
        "write_idx_gz: the data size does not match the dimensions.");
  GzFile file(gzopen(path.c_str(), "wb"));
  if (!file) throw Error(fmt::format("Cannot write the IDX file '{}'.", path));
  std::vector<uint8_t> header = {0, 0, 0x08, static_cast<uint8_t>(array.dims.size())};
  for (auto d : array.dims) {
    const auto v = static_cast<uint32_t>(d);
    header.insert(header.end(), {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                                 static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)});
  }
  bool ok = gzwrite(file.get(), header.data(), static_cast<unsigned>(header.size())) ==
            static_cast<int>(header.size());
  if (!array.data.empty()) {
    ok = ok && gzwrite(file.get(), array.data.data(), static_cast<unsigned>(array.data.size())) ==
                   static_cast<int>(array.data.size());
  }
  if (!ok) throw Error(fmt::format("Writing the IDX file '{}' failed.", path));
}

}  // namespace blr::torch
