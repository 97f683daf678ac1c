// Reading gzip-compressed IDX files (the MNIST / Fashion-MNIST container format).
//
// An IDX file is a big-endian header — two zero bytes, a type byte (0x08 = unsigned byte) and the
// number of dimensions d — followed by d big-endian 32-bit sizes and the data in row-major order
// (LeCun et al., "The MNIST database", http://yann.lecun.com/exdb/mnist/). Every field is checked:
// a wrong magic, an unexpected rank, a size that disagrees with the file, or a truncated or
// corrupt gzip stream is reported as a blr::Error naming the file. The header may declare up to
// 2^34 values; the data is read in chunks (64 KiB doubling up to `kIdxChunkBytes`), so the memory
// taken is bounded by the data actually present (plus one chunk), never by what the header claims. This file needs
// zlib only, not LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace blr::torch {

/// The IDX data is read (and memory grown) at most this many bytes at a time.
inline constexpr size_t kIdxChunkBytes = size_t{16} << 20;

/// The contents of an IDX file of unsigned bytes.
struct IdxArray {
  std::vector<int64_t> dims;  ///< sizes, outermost first
  std::vector<uint8_t> data;  ///< row-major values, product(dims) bytes
};

/// Reads an unsigned-byte IDX file compressed with gzip (an uncompressed file is read as is).
/// `expected_rank` (1 for labels, 3 for images) is checked against the header.
IdxArray read_idx_gz(const std::string& path, int expected_rank);

/// Writes an unsigned-byte IDX file compressed with gzip (for tests and small subsets).
void write_idx_gz(const std::string& path, const IdxArray& array);

}  // namespace blr::torch
