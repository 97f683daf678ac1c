// A TorchScript module from the bytes of its archive (script_file.hpp, load_script_module): the
// archive check, a trial load in a capped child, LibTorch's loader, and the module's forward and
// parameters checked. Kept free of nn/model.hpp and of C++20, so that the libFuzzer build (clang,
// C++17 with LibTorch's headers) compiles it alone (fuzz/harness/torchscript_model.cpp).
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/script.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <sstream>
#include <string_view>
#include <vector>

#include "../trial_in_child.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/data/archive_check.hpp"
#include "blr/torch/nn/script_file.hpp"

namespace blr::torch {
namespace {

// What kind of zip `archive` is, from its records: a TorchScript archive has constants.pkl (and
// code/), a torch.save file only data.pkl. LibTorch's zip reader is asked inside the caller's try.
std::string zip_problem(const std::string& archive) {
  std::istringstream stream(archive);
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> opened;
  try {
    opened = std::make_unique<caffe2::serialize::PyTorchStreamReader>(&stream);
  } catch (const c10::Error& e) {  // the reader insists on a "version" record first
    if (std::string(e.what_without_backtrace()).find("\"version\"") == std::string::npos) throw;
    return "it is a zip file without TorchScript's records (version, data.pkl, constants.pkl)";
  }
  auto& reader = *opened;
  if (reader.hasRecord("constants.pkl") && reader.hasRecord("data.pkl")) return "";
  if (reader.hasRecord("data.pkl")) {
    return "it was written by torch.save (a pickled object), not by torch.jit.save";
  }
  return "it is a zip file without TorchScript's records (version, data.pkl, constants.pkl)";
}

// The module in `archive`, every refusal of LibTorch's loader one sentence naming `origin`.
::torch::jit::Module read_module(const std::string& archive, const std::string& origin) {
  try {
    const std::string problem = zip_problem(archive);
    check(problem.empty(), fmt::format("The model file '{}' is not a TorchScript archive: {}; {}.",
                                       origin, problem, kHowToWriteScriptModel));
    std::istringstream stream(archive);
    return ::torch::jit::load(stream);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("The model file '{}' is not a readable TorchScript archive ({}); {}.",
                            origin, short_libtorch_message(e), kHowToWriteScriptModel));
  }
}

bool ends_with_text(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

}  // namespace

std::string short_libtorch_message(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  return short_libtorch_message(c10_error != nullptr ? c10_error->what_without_backtrace()
                                                     : std::string(e.what()));
}

std::string short_libtorch_message(const std::string& text) {
  std::vector<std::string_view> lines;
  for (size_t begin = 0; begin <= text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    begin = end + 1;
  }
  std::string_view chosen = lines.empty() ? std::string_view("unknown error") : lines.front();
  // The TorchScript interpreter's report ends with "RuntimeError: <reason>" after its traceback.
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const auto colon = it->find(": ");
    if (colon != std::string_view::npos && colon > 0 && it->front() != ' ' &&
        it->substr(0, colon).find(' ') == std::string_view::npos &&
        (ends_with_text(it->substr(0, colon), "Error") ||
         ends_with_text(it->substr(0, colon), "Exception"))) {
      chosen = it->substr(colon + 2);
      break;
    }
  }
  std::string out(chosen.substr(0, 300));
  while (!out.empty() && (out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out;
}

::torch::jit::Module load_script_module(const std::string& archive, const std::string& origin) {
  check(!archive.empty(),
        fmt::format("The model file '{}' is empty; {}.", origin, kHowToWriteScriptModel));
  check(
      archive.size() <= kMaxModelFileBytes,
      fmt::format("The model archive '{}' has {} bytes, more than the {} bytes (1 GiB) blr reads.",
                  origin, archive.size(), kMaxModelFileBytes));
  check(archive.size() >= 4 && std::memcmp(archive.data(), "PK\x03\x04", 4) == 0,
        fmt::format("The model file '{}' is not a TorchScript archive (not a zip file); {}.",
                    origin, kHowToWriteScriptModel));
  // LibTorch trusts the archive's zip directory and pickles (data/archive_check.hpp), and its
  // loader can still crash on a crafted archive (fuzz/corpus/torchscript_model/crash-*, in its
  // TorchScript type parser): it reads it first in a capped child process (../trial_in_child.hpp).
  const std::string problem = archive_problem(archive);
  check(problem.empty(),
        fmt::format("The model file '{}' is not a valid TorchScript archive: {}; {}.", origin,
                    problem, kHowToWriteScriptModel));
  const uint64_t extra = 4 * static_cast<uint64_t>(archive.size()) + (uint64_t{1} << 30);
  const auto outcome = detail::trial_in_child(
      [&] { (void)read_module(archive, origin); }, extra,
      std::chrono::seconds(60 + static_cast<long>(archive.size() / 10'000'000)));
  check(outcome.kind != detail::TrialOutcome::kCrashed,
        fmt::format("The model file '{}' is not a valid TorchScript archive: LibTorch crashed "
                    "(signal {}) while reading it; {}.",
                    origin, outcome.signal, kHowToWriteScriptModel));
  check(outcome.kind != detail::TrialOutcome::kOutOfMemory,
        fmt::format("The model file '{}' is not a valid TorchScript archive: reading its {} bytes "
                    "needs more than {} GiB of memory.",
                    origin, archive.size(), extra >> 30));
  if (outcome.kind == detail::TrialOutcome::kRefused) {  // read_module's sentence, as a rule
    throw Error(outcome.sentence
                    ? outcome.message
                    : fmt::format(
                          "The model file '{}' is not a readable TorchScript archive ({}); {}.",
                          origin, short_libtorch_message(outcome.message), kHowToWriteScriptModel));
  }
  ::torch::jit::Module module = read_module(archive, origin);
  try {
    const auto forward = module.find_method("forward");
    check(forward.has_value(),
          fmt::format("The TorchScript module in '{}' has no forward method; blr calls forward "
                      "with one input batch.",
                      origin));
    const auto inputs = forward->function().getSchema().arguments().size() - 1;  // less self
    check(inputs == 1,
          fmt::format("The forward of the TorchScript module in '{}' takes {} inputs; blr calls it "
                      "with one input batch.",
                      origin, inputs));
    check(module.parameters(/*recurse=*/true).size() > 0,
          fmt::format("The TorchScript module in '{}' has no parameters to train.", origin));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("The TorchScript module in '{}' cannot be inspected ({}).", origin,
                            short_libtorch_message(e)));
  }
  return module;
}

}  // namespace blr::torch
