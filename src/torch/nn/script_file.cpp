// A user's TorchScript model from a file (script_file.hpp).
#include "blr/torch/nn/script_file.hpp"

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/script.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/nn/model.hpp"
#include "../trial_in_child.hpp"

namespace blr::torch {
namespace {

constexpr const char* kHowToWrite = "write it with torch.jit.script(model).save(path)";

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
                                       origin, problem, kHowToWrite));
    std::istringstream stream(archive);
    return ::torch::jit::load(stream);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("The model file '{}' is not a readable TorchScript archive ({}); {}.",
                            origin, short_libtorch_message(e), kHowToWrite));
  }
}

}  // namespace

std::string short_libtorch_message(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
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
        (it->substr(0, colon).ends_with("Error") || it->substr(0, colon).ends_with("Exception"))) {
      chosen = it->substr(colon + 2);
      break;
    }
  }
  std::string out(chosen.substr(0, 300));
  while (!out.empty() && (out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string describe_script_model(const Model& model) {
  int64_t count = 0;
  for (const auto& p : model.parameters()) count += p.numel();
  return fmt::format("torchscript {} ({} parameters)", model.origin(), count);
}

at::Tensor probe_model_output(const Model& model, const at::Tensor& x, const std::string& name) {
  try {
    ::torch::NoGradGuard no_grad;
    EvalMode eval(model);
    return model.forward(x);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // LibTorch's message with its backtrace: one sentence
    throw Error(fmt::format("{} fails on an input batch of shape [{}] ({}): {}.", name,
                            fmt::join(x.sizes(), ", "), c10::toString(x.scalar_type()),
                            short_libtorch_message(e)));
  }
}

std::shared_ptr<const std::string> read_model_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool regular = fs::is_regular_file(path, ec);
  const auto size = regular ? fs::file_size(path, ec) : 0;
  std::ifstream in(path, std::ios::binary);
  check(regular && !ec && in.good(),
        fmt::format("Cannot open the model file '{}': no such readable file.", path));
  check(size <= kMaxModelFileBytes,
        fmt::format("The model file '{}' has {} bytes, more than the {} bytes (1 GiB) blr reads.",
                    path, size, kMaxModelFileBytes));
  check(size > 0, fmt::format("The model file '{}' is empty; {}.", path, kHowToWrite));
  auto bytes = std::make_shared<std::string>(static_cast<size_t>(size), '\0');
  in.read(bytes->data(), static_cast<std::streamsize>(size));
  check(static_cast<uint64_t>(in.gcount()) == size,
        fmt::format("The model file '{}' could not be read completely.", path));
  return bytes;
}

Model load_script_model(std::shared_ptr<const std::string> archive, const std::string& origin) {
  check(archive != nullptr && !archive->empty(),
        fmt::format("The model file '{}' is empty; {}.", origin, kHowToWrite));
  check(archive->size() <= kMaxModelFileBytes,
        fmt::format("The model archive '{}' has {} bytes, more than the {} bytes (1 GiB) blr reads.",
                    origin, archive->size(), kMaxModelFileBytes));
  check(archive->size() >= 4 && std::memcmp(archive->data(), "PK\x03\x04", 4) == 0,
        fmt::format("The model file '{}' is not a TorchScript archive (not a zip file); {}.",
                    origin, kHowToWrite));
  // LibTorch's loader can crash on a crafted archive (fuzz/corpus/torchscript_model/crash-*): it
  // reads it first in a capped child process (../trial_in_child.hpp).
  const auto outcome = detail::trial_in_child(
      [&] { (void)read_module(*archive, origin); },
      4 * static_cast<uint64_t>(archive->size()) + (uint64_t{1} << 30),
      std::chrono::seconds(60 + static_cast<long>(archive->size() / 10'000'000)));
  check(outcome.kind != detail::TrialOutcome::kCrashed,
        fmt::format("The model file '{}' is not a valid TorchScript archive: LibTorch crashed "
                    "(signal {}) while reading it; {}.",
                    origin, outcome.signal, kHowToWrite));
  check(outcome.kind != detail::TrialOutcome::kOutOfMemory,
        fmt::format("The model file '{}' is not a valid TorchScript archive: reading its {} bytes "
                    "needs more than {} GiB of memory.",
                    origin, archive->size(), (4 * archive->size() + (uint64_t{1} << 30)) >> 30));
  const ::torch::jit::Module module = read_module(*archive, origin);
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
  return Model::script(module, std::move(archive), origin);
}

}  // namespace blr::torch
