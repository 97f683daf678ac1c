#include "blr/torch/checkpoint/checkpoint.hpp"

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/serialize/output-archive.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>

#include "blr/core/error.hpp"
#include "blr/io/output_file.hpp"
#include "blr/torch/data/archive_check.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "../trial_in_child.hpp"

namespace blr::torch {
namespace {

constexpr std::array<char, 8> kMagic = {'B', 'L', 'R', 'C', 'K', 'P', 'T', '\n'};
constexpr size_t kHeaderSize = 8 + 4 + 8 + 4;

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

uint32_t crc32_of(const std::string& data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  size_t done = 0;
  while (done < data.size()) {
    const auto chunk = static_cast<uInt>(std::min<size_t>(data.size() - done, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + done), chunk);
    done += chunk;
  }
  return static_cast<uint32_t>(crc);
}

// Decodes the payload as load_checkpoint() and restore() will: the archive, its metadata and the
// model and optimizer sub-archives.
void decode_payload(const std::string& payload, c10::optional<at::Device> device) {
  ::torch::serialize::InputArchive archive;
  archive.load_from(payload.data(), payload.size(), device);
  c10::IValue meta;
  archive.read("meta", meta);
  const auto parsed = nlohmann::json::parse(meta.toStringRef());
  (void)parsed;
  ::torch::serialize::InputArchive part;
  archive.read("model", part);
  archive.read("optimizer", part);
  at::Tensor script;
  archive.try_read("model_script", script, /*is_buffer=*/true);
}

// The payload is decoded first in a child process (../trial_in_child.hpp) whose memory is capped
// at what this process uses plus 4 × the payload + 1 GiB; this process decodes it only if the
// child decoded it (a refusal there is reported with the child's message).
void trial_decode(const std::string& payload, const std::string& path) {
  const auto outcome = detail::trial_in_child(
      [&payload] { decode_payload(payload, at::kCPU); },
      4 * static_cast<uint64_t>(payload.size()) + (1ull << 30),
      std::chrono::seconds(60 + static_cast<long>(payload.size() / 10'000'000)));
  if (outcome.kind == detail::TrialOutcome::kCrashed) {
    throw Error(fmt::format(
        "The checkpoint '{}' is corrupt: LibTorch crashed (signal {}) while decoding it, although "
        "its checksum matches; it was not written by blr, or was altered on purpose.",
        path, outcome.signal));
  }
  if (outcome.kind == detail::TrialOutcome::kOutOfMemory) {
    throw Error(fmt::format(
        "The checkpoint '{}' is corrupt: decoding its {}-byte payload needs more than {} GiB of "
        "memory.",
        path, payload.size(), (4 * payload.size() + (1ull << 30)) >> 30));
  }
  if (outcome.kind == detail::TrialOutcome::kRefused) {
    throw Error(outcome.sentence ? outcome.message
                                 : fmt::format("The checkpoint '{}' cannot be decoded: {}", path,
                                               short_libtorch_message(outcome.message)));
  }
}

at::Generator cpu_generator() {
  return at::globalContext().defaultGenerator(at::kCPU);
}

at::Device device_of(const std::vector<at::Tensor>& parameters) {
  for (const auto& p : parameters) return p.device();
  return at::kCPU;
}

// The embedded TorchScript archive as a uint8 tensor (a zip record of its own in the payload).
at::Tensor bytes_tensor(const std::string& bytes) {
  auto t = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

}  // namespace

namespace detail {

void write_checkpoint(const std::string& path, const nlohmann::json& meta,
                      const std::function<void(::torch::serialize::OutputArchive&)>& save_model,
                      const std::string* script, const ::torch::optim::Optimizer& optimizer) {
  namespace fs = std::filesystem;
  ::torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(meta.dump()));
  ::torch::serialize::OutputArchive model_archive;
  save_model(model_archive);
  archive.write("model", model_archive);
  if (script != nullptr) archive.write("model_script", bytes_tensor(*script), /*is_buffer=*/true);
  ::torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  {
    auto gen = cpu_generator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive.write("rng/torch_cpu", gen.get_state(), /*is_buffer=*/true);
  }
  std::ostringstream payload_stream;
  archive.save_to(payload_stream);
  const std::string payload = payload_stream.str();

  std::string header(kMagic.begin(), kMagic.end());
  put_le(header, script != nullptr ? kCheckpointVersion : 1, 4);
  put_le(header, payload.size(), 8);
  put_le(header, crc32_of(payload), 4);

  const fs::path target(path);
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::exists(directory)) fs::create_directories(directory);
  remove_stale_temporaries(directory.string());
  // Written to `<path>.tmp.<pid>` (created exclusively, never through a link) and renamed into
  // place: a failure leaves the previous checkpoints as they were (blr/io/output_file.hpp).
  blr::io::OutputFile file(path, "the checkpoint");
  file.write(header);
  file.write(payload);
  file.commit();
}

}  // namespace detail

void save_checkpoint(const std::string& path, const nlohmann::json& meta,
                     const ::torch::nn::Module& model, const ::torch::optim::Optimizer& optimizer) {
  detail::write_checkpoint(
      path, meta, [&model](::torch::serialize::OutputArchive& a) { model.save(a); }, nullptr,
      optimizer);
}


int remove_stale_temporaries(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto mark = name.rfind(".tmp.");
    if (mark == std::string::npos || mark + 5 >= name.size()) continue;
    const std::string digits = name.substr(mark + 5);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid()) continue;
    const bool alive = ::kill(pid, 0) == 0 || errno == EPERM;
    std::error_code remove_error;
    if (!alive && fs::remove(it->path(), remove_error)) ++removed;
  }
  return removed;
}

Checkpoint newest_valid_checkpoint(const std::string& directory,
                                   std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::error_code ec;
  check(fs::is_directory(directory, ec),
        fmt::format("'{}' is not a directory of checkpoints.", directory));
  std::vector<fs::path> files;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".ckpt" && it->is_regular_file()) files.push_back(it->path());
  }
  check(!ec, fmt::format("Cannot list the directory '{}': {}.", directory, ec.message()));
  std::sort(files.begin(), files.end());
  // Only the best so far stays in memory.
  std::optional<Checkpoint> best;
  int64_t best_epoch = -1;
  fs::file_time_type best_written{};
  for (const auto& file : files) {
    try {
      Checkpoint c = load_checkpoint(file.string());
      const int64_t epoch = c.meta.is_object() && c.meta.contains("epoch") &&
                                    c.meta["epoch"].is_number_integer()
                                ? c.meta["epoch"].get<int64_t>()
                                : -1;
      const auto written = fs::last_write_time(file, ec);
      if (!best || epoch > best_epoch || (epoch == best_epoch && written > best_written)) {
        best = std::move(c);
        best_epoch = epoch;
        best_written = written;
      }
    } catch (const std::exception& e) {  // blr::Error, or metadata of the wrong shape
      if (skipped != nullptr) skipped->push_back(e.what());
    }
  }
  check(best.has_value(),
        fmt::format("The directory '{}' holds no valid checkpoint ({} file{} tried).", directory,
                    files.size(), files.size() == 1 ? "" : "s"));
  return *best;
}

Checkpoint load_checkpoint(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto file_size = fs::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) {
    throw Error(fmt::format("Cannot open the checkpoint '{}': no such readable file.", path));
  }
  std::string header(kHeaderSize, '\0');
  in.read(header.data(), static_cast<std::streamsize>(kHeaderSize));
  if (file_size < kHeaderSize || !in) {
    throw Error(fmt::format("The checkpoint '{}' is truncated: it is only {} bytes long.", path,
                            file_size));
  }
  if (std::memcmp(header.data(), kMagic.data(), kMagic.size()) != 0) {
    throw Error(fmt::format("The file '{}' is not a blr checkpoint (wrong magic bytes).", path));
  }
  const auto version = get_le(header.data() + 8, 4);
  if (version < 1 || version > kCheckpointVersion) {
    throw Error(fmt::format(
        "The checkpoint '{}' has format version {}; this blr reads versions 1 to {}.", path,
        version, kCheckpointVersion));
  }
  const auto length = get_le(header.data() + 12, 8);
  const auto crc = static_cast<uint32_t>(get_le(header.data() + 20, 4));
  // The header is checked against the file's real size before anything is allocated for it.
  const uint64_t available = file_size - kHeaderSize;
  if (length > available) {
    throw Error(fmt::format(
        "The checkpoint '{}' is truncated: its header announces {} payload bytes but only {} are "
        "present.",
        path, length, available));
  }
  if (length < available) {
    throw Error(
        fmt::format("The checkpoint '{}' is corrupt: {} unexpected bytes follow the payload.", path,
                    available - length));
  }
  auto payload = std::make_shared<std::string>(static_cast<size_t>(length), '\0');
  in.read(payload->data(), static_cast<std::streamsize>(length));
  if (static_cast<uint64_t>(in.gcount()) != length) {
    throw Error(fmt::format("The checkpoint '{}' could not be read completely.", path));
  }
  if (crc32_of(*payload) != crc) {
    throw Error(
        fmt::format("The checkpoint '{}' is corrupt: its CRC-32 checksum does not match.", path));
  }
  // LibTorch trusts the archive's zip directory and pickles (data/archive_check.hpp).
  const std::string problem = archive_problem(*payload);
  if (!problem.empty()) {
    throw Error(fmt::format(
        "The checkpoint '{}' is corrupt: {}, although its checksum matches; it was not written by "
        "blr, or was altered on purpose.",
        path, problem));
  }
  trial_decode(*payload, path);
  Checkpoint out;
  out.path = path;
  out.payload_ = payload;
  try {
    ::torch::serialize::InputArchive archive;
    archive.load_from(payload->data(), payload->size());
    c10::IValue meta;
    archive.read("meta", meta);
    out.meta = nlohmann::json::parse(meta.toStringRef());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("The checkpoint '{}' cannot be decoded: {}", path,
                            short_libtorch_message(e)));
  }
  return out;
}

void Checkpoint::restore(const std::vector<at::Tensor>& parameters,
                         const std::function<void(::torch::serialize::InputArchive&)>& load_model,
                         ::torch::optim::Optimizer& optimizer) const {
  check(payload_ != nullptr, "Checkpoint::restore() needs a checkpoint read by load_checkpoint().");
  try {
    ::torch::serialize::InputArchive archive;
    archive.load_from(payload_->data(), payload_->size(), device_of(parameters));
    ::torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    load_model(model_archive);
    ::torch::serialize::InputArchive optimizer_archive;
    archive.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    at::Tensor state;
    archive.read("rng/torch_cpu", state, /*is_buffer=*/true);
    auto gen = cpu_generator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state.to(at::kCPU));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(
        fmt::format("The checkpoint '{}' does not fit the model and optimizer it describes: {}",
                    path, short_libtorch_message(e)));
  }
}

void Checkpoint::restore(::torch::nn::Module& model, ::torch::optim::Optimizer& optimizer) const {
  restore(model.parameters(), [&model](::torch::serialize::InputArchive& a) { model.load(a); },
          optimizer);
}

std::shared_ptr<const std::string> Checkpoint::model_archive() const {
  check(payload_ != nullptr,
        "Checkpoint::model_archive() needs a checkpoint read by load_checkpoint().");
  at::Tensor bytes;
  try {
    ::torch::serialize::InputArchive archive;
    archive.load_from(payload_->data(), payload_->size());
    if (!archive.try_read("model_script", bytes, /*is_buffer=*/true)) return nullptr;
  } catch (const std::exception& e) {
    throw Error(fmt::format("The checkpoint '{}' holds an unreadable TorchScript model: {}", path,
                            short_libtorch_message(e)));
  }
  // The record lies inside the verified payload; its length is checked before it is copied.
  const uint64_t length = static_cast<uint64_t>(bytes.numel());
  check(bytes.scalar_type() == at::kByte && bytes.dim() == 1 && bytes.is_contiguous() &&
            length <= payload_->size() && length <= kMaxModelFileBytes,
        fmt::format("The checkpoint '{}' is corrupt: its embedded TorchScript model is not a byte "
                    "string of at most {} bytes.",
                    path, std::min<uint64_t>(payload_->size(), kMaxModelFileBytes)));
  return std::make_shared<const std::string>(static_cast<const char*>(bytes.data_ptr()),
                                             static_cast<size_t>(length));
}

}  // namespace blr::torch
