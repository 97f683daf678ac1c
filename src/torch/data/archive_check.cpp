// The archive check (archive_check.hpp): the zip central directory (APPNOTE 6.3, sections 4.3.7,
// 4.3.12, 4.3.14–16 and 4.5.3 for zip64) read within bounds, then the pickle check of every
// pickle LibTorch reads.
#include "blr/torch/data/archive_check.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "blr/torch/data/pickle_check.hpp"

namespace blr::torch {
namespace {

struct ZipRecord {
  uint64_t offset = 0;      ///< of its data in the archive
  uint64_t size = 0;        ///< what LibTorch's reader returns (and allocates)
  uint64_t compressed = 0;  ///< its bytes in the archive
  bool deflated = false;
};

// LibTorch deflates only the TorchScript source (code/*.py and its *.debug_pkl): text, so a
// fixed total bounds what its reader allocates for compressed records, whatever they claim.
constexpr uint64_t kMaxInflatedBytes = uint64_t{256} << 20;

// Little-endian reads at `at`; the caller has checked that the bytes exist.
uint64_t little_endian(const std::string& bytes, uint64_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    v |= uint64_t{static_cast<unsigned char>(bytes[at + static_cast<uint64_t>(i)])} << (8 * i);
  }
  return v;
}

bool fits_in(uint64_t at, uint64_t length, uint64_t size) {
  return at <= size && length <= size - at;
}

constexpr uint32_t k32 = 0xffffffff;

// A record's name as LibTorch's zip reader (miniz) compares it: ASCII letters in either case are
// equal, so "archive/DATA.pkl" is read as data.pkl (fuzz/corpus/tensor_file/case-data-pkl).
std::string lowercase(std::string name) {
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return name;
}

// The records of the central directory by lowercased name, and the lowercased name of its first
// entry; a clause naming the problem otherwise.
std::string read_directory(const std::string& bytes, std::map<std::string, ZipRecord>& records,
                           std::string& first) {
  const uint64_t size = bytes.size();
  // End of central directory: 22 bytes and a comment of at most 65535, at the end.
  std::optional<uint64_t> end;
  for (uint64_t back = 22; back <= std::min<uint64_t>(size, 22 + 0xffff) && !end; ++back) {
    if (little_endian(bytes, size - back, 4) == 0x06054b50) end = size - back;
  }
  if (!end) return "it is not a zip archive (no end of central directory)";
  uint64_t count = little_endian(bytes, *end + 10, 2);
  uint64_t directory_size = little_endian(bytes, *end + 12, 4);
  uint64_t directory = little_endian(bytes, *end + 16, 4);
  // As miniz decides: a zip64 locator 20 bytes before (looked for when 76 bytes precede), pointing
  // at a zip64 end of central directory, makes its values the ones read, whatever the others say.
  bool zip64 = false;
  if (*end >= 76 && little_endian(bytes, *end - 20, 4) == 0x07064b50) {
    const uint64_t end64 = little_endian(bytes, *end - 20 + 8, 8);
    if (!fits_in(end64, 56, size)) {
      return "its zip64 end of central directory lies outside the archive";
    }
    if (little_endian(bytes, end64, 4) == 0x06064b50) {
      zip64 = true;
      count = little_endian(bytes, end64 + 32, 8);
      directory_size = little_endian(bytes, end64 + 40, 8);
      directory = little_endian(bytes, end64 + 48, 8);
    }
  }
  if (!zip64 && (count == 0xffff || directory_size == k32 || directory == k32)) {
    return "it marks a zip64 end of central directory that it does not have";
  }
  if (!fits_in(directory, directory_size, size) || count > directory_size / 46) {
    return fmt::format(
        "its central directory ({} records, {} bytes at {}) does not fit in its {} "
        "bytes",
        count, directory_size, directory, size);
  }
  uint64_t at = directory;
  uint64_t inflated = 0;
  const uint64_t directory_end = directory + directory_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (!fits_in(at, 46, directory_end) || little_endian(bytes, at, 4) != 0x02014b50) {
      return fmt::format("its central directory entry {} is malformed", i);
    }
    const uint64_t method = little_endian(bytes, at + 10, 2);
    uint64_t compressed = little_endian(bytes, at + 20, 4);
    uint64_t stored = little_endian(bytes, at + 24, 4);
    const uint64_t name_length = little_endian(bytes, at + 28, 2);
    const uint64_t extra_length = little_endian(bytes, at + 30, 2);
    const uint64_t comment_length = little_endian(bytes, at + 32, 2);
    uint64_t local = little_endian(bytes, at + 42, 4);
    if (!fits_in(at + 46, name_length + extra_length + comment_length, directory_end)) {
      return fmt::format("its central directory entry {} runs past the directory", i);
    }
    const std::string name = bytes.substr(at + 46, name_length);
    // Zip64 sizes and offset, in this order, for the fields that hold 0xffffffff.
    for (uint64_t x = at + 46 + name_length; x + 4 <= at + 46 + name_length + extra_length;) {
      const uint64_t id = little_endian(bytes, x, 2);
      const uint64_t length = little_endian(bytes, x + 2, 2);
      if (!fits_in(x + 4, length, at + 46 + name_length + extra_length)) break;
      if (id == 0x0001) {
        uint64_t field = x + 4;
        for (uint64_t* value : {&stored, &compressed, &local}) {
          if (*value != k32) continue;
          if (field + 8 > x + 4 + length) {
            return fmt::format("its record '{}' has a short zip64 field", name);
          }
          *value = little_endian(bytes, field, 8);
          field += 8;
        }
      }
      x += 4 + length;
    }
    if (method != 0 && method != 8) {
      return fmt::format("its record '{}' is compressed with method {}, which LibTorch does not "
                         "read",
                         name, method);
    }
    if (method == 0 && compressed != stored) {
      return fmt::format("its stored record '{}' states {} bytes and {} compressed", name, stored,
                         compressed);
    }
    if (method == 8) {
      inflated += stored;
      if (inflated > kMaxInflatedBytes) {
        return fmt::format("its compressed records inflate to more than {} MiB (at '{}')",
                           kMaxInflatedBytes >> 20, name);
      }
    }
    if (!fits_in(local, 30, size) || little_endian(bytes, local, 4) != 0x04034b50) {
      return fmt::format("its record '{}' has no local header inside the archive", name);
    }
    const uint64_t data =
        local + 30 + little_endian(bytes, local + 26, 2) + little_endian(bytes, local + 28, 2);
    if (!fits_in(data, compressed, size)) {
      return fmt::format("its record '{}' ({} bytes) runs past the end of the archive", name,
                         compressed);
    }
    if (i == 0) first = lowercase(name);
    if (!records.emplace(lowercase(name), ZipRecord{data, stored, compressed, method == 8})
             .second) {
      return fmt::format("it holds the record '{}' twice (LibTorch's zip reader ignores case)",
                         name);
    }
    at += 46 + name_length + extra_length + comment_length;
  }
  return "";
}

// The bytes of a record as LibTorch's reader returns them: a copy of a stored one, an inflated
// copy (raw deflate, zlib) of a compressed one; nullopt when it does not inflate to its size.
std::optional<std::string> record_bytes(const std::string& bytes, const ZipRecord& record) {
  if (!record.deflated) return bytes.substr(record.offset, record.size);
  std::string out(record.size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return std::nullopt;
  uint64_t in_done = 0;
  uint64_t out_done = 0;
  int status = Z_OK;
  while (status == Z_OK) {  // in chunks: zlib counts in 32-bit lengths
    const auto in_chunk =
        static_cast<uInt>(std::min<uint64_t>(record.compressed - in_done, uint64_t{1} << 30));
    const auto out_chunk =
        static_cast<uInt>(std::min<uint64_t>(record.size - out_done, uint64_t{1} << 30));
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + record.offset + in_done));
    z.avail_in = in_chunk;
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_done);
    z.avail_out = out_chunk;
    status = inflate(&z, Z_NO_FLUSH);
    in_done += in_chunk - z.avail_in;
    out_done += out_chunk - z.avail_out;
    if (status == Z_OK && z.avail_in == in_chunk && z.avail_out == out_chunk) break;  // no progress
  }
  inflateEnd(&z);
  if (status != Z_STREAM_END || out_done != record.size) return std::nullopt;
  return out;
}

bool is_debug_pickle(const std::string& key) {
  const std::string suffix = ".debug_pkl";
  return key.size() >= suffix.size() &&
         key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string archive_problem(const std::string& bytes) {
  std::map<std::string, ZipRecord> records;
  std::string first;
  const std::string directory = read_directory(bytes, records, first);
  if (!directory.empty()) return directory;
  if (records.empty()) return "it is an empty zip archive";
  // LibTorch names records relative to the folder of the central directory's first entry.
  const std::string folder = first.substr(0, first.find('/') + 1);
  for (const auto& [name, record] : records) {
    if (name.compare(0, folder.size(), folder) != 0) continue;
    const std::string key = name.substr(folder.size());
    // The folder of the storages this pickle names; the source maps name none.
    const std::string storages = key == "data.pkl"        ? "data/"
                                 : key == "constants.pkl" ? "constants/"
                                                          : "";
    if (storages.empty() && !is_debug_pickle(key)) continue;
    const StorageRecordSize record_size =
        [&](const std::string& storage) -> std::optional<uint64_t> {
      if (storages.empty()) return std::nullopt;
      const auto it = records.find(lowercase(folder + storages + storage));
      if (it == records.end()) return std::nullopt;
      return it->second.size;
    };
    const auto pickle = record_bytes(bytes, record);
    if (!pickle) {
      return fmt::format("its record '{}' does not inflate to the {} bytes it states", key,
                         record.size);
    }
    const std::string problem = pickle_problem(pickle->data(), pickle->size(), record_size);
    if (!problem.empty()) return fmt::format("its record '{}' is malformed: {}", key, problem);
  }
  return "";
}

}  // namespace blr::torch
