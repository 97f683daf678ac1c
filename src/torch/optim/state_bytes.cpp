// An optimizer's state as archive bytes, read behind the checkpoint's defences (state_bytes.hpp).
#include "blr/torch/optim/state_bytes.hpp"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <chrono>
#include <sstream>

#include "../trial_in_child.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/data/archive_check.hpp"
#include "blr/torch/nn/script_file.hpp"

namespace blr::torch {

namespace {

/// Reads every value of `archive` and of its sub-archives, as an optimizer's load() may.
void read_every_value(::torch::serialize::InputArchive& archive) {
  for (const std::string& key : archive.keys()) {
    ::torch::serialize::InputArchive part;
    if (archive.try_read(key, part)) {
      read_every_value(part);
    } else {
      c10::IValue value;
      archive.try_read(key, value);
    }
  }
}

/// LibTorch's reason as a clause: one line (short_libtorch_message) without a final colon.
std::string libtorch_clause(const std::string& message) {
  std::string text = short_libtorch_message(message);
  while (!text.empty() && (text.back() == ':' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::string save_optimizer_state(const ::torch::optim::Optimizer& optimizer) {
  ::torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void load_optimizer_state(::torch::optim::Optimizer& optimizer, const std::string& bytes,
                          const std::string& what) {
  const std::string problem = archive_problem(bytes);
  check(problem.empty(),
        fmt::format("{} is not a LibTorch archive that blr wrote: {}.", what, problem));
  // Decoded on the CPU in the child (a forked child must not initialise CUDA).
  const uint64_t extra = 4 * static_cast<uint64_t>(bytes.size()) + (uint64_t{1} << 30);
  const auto outcome = detail::trial_in_child(
      [&bytes] {
        ::torch::serialize::InputArchive archive;
        archive.load_from(bytes.data(), bytes.size(), ::at::Device(::at::kCPU));
        read_every_value(archive);
      },
      extra, std::chrono::seconds(60 + static_cast<long>(bytes.size() / 10'000'000)));
  check(outcome.kind != detail::TrialOutcome::kCrashed,
        fmt::format("{} is corrupt: LibTorch crashed (signal {}) while decoding it; it was not "
                    "saved by blr, or was altered.",
                    what, outcome.signal));
  check(outcome.kind != detail::TrialOutcome::kOutOfMemory,
        fmt::format("{} is corrupt: decoding its {} bytes needs more than {} GiB of memory.", what,
                    bytes.size(), extra >> 30));
  if (outcome.kind == detail::TrialOutcome::kRefused) {
    throw Error(outcome.sentence ? outcome.message
                                 : fmt::format("{} cannot be decoded: {}.", what,
                                               libtorch_clause(outcome.message)));
  }
  ::torch::serialize::InputArchive archive;
  try {
    archive.load_from(bytes.data(), bytes.size());
  } catch (const c10::Error& e) {
    throw Error(fmt::format("{} cannot be decoded: {}.", what,
                            libtorch_clause(e.what_without_backtrace())));
  }
  try {
    optimizer.load(archive);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {  // a value of another type than the optimizer wrote
    throw Error(
        fmt::format("{} cannot be read: {}.", what, libtorch_clause(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    // TorchScript's reader throws std::runtime_error for a key the archive lacks ("... does not
    // have a field with name 'group1/param0/kind'"): a state of another optimizer layout, or
    // altered (found by fuzz/harness/python_optim.cpp).
    const std::string message = e.what();
    const std::string field = "field with name '";
    const auto at = message.find(field);
    const auto end = at == std::string::npos ? at : message.find('\'', at + field.size());
    throw Error(end != std::string::npos
                    ? fmt::format("{} does not fit this optimizer: it has no entry '{}' (a state "
                                  "saved for other parameters or param groups, or altered).",
                                  what, message.substr(at + field.size(),
                                                       end - at - field.size()))
                    : fmt::format("{} does not fit this optimizer (a state saved for other "
                                  "parameters or param groups, or altered): {}.",
                                  what, libtorch_clause(message)));
  }
}

}  // namespace blr::torch
