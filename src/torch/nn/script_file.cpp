// A user's TorchScript model from a file (script_file.hpp); the archive itself is read by
// script_archive.cpp.
#include "blr/torch/nn/script_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/script.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>

#include "blr/core/error.hpp"
#include "blr/torch/nn/model.hpp"

namespace blr::torch {

std::string describe_script_model(const Model& model) {
  int64_t count = 0;
  for (const auto& p : model.parameters()) count += p.numel();
  return fmt::format("torchscript {} ({} parameters)", model.origin(), count);
}

namespace {

// "can't allocate memory: you tried to allocate N bytes" (LibTorch's CPU allocator): N, else 0.
uint64_t failed_allocation_bytes(const std::string& text) {
  static const std::string kMarker = "you tried to allocate ";
  const auto at = text.find(kMarker);
  if (at == std::string::npos) return 0;
  uint64_t bytes = 0;
  for (size_t i = at + kMarker.size(); i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (bytes > (UINT64_MAX - 9) / 10) return 0;
    bytes = bytes * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  return bytes;
}

}  // namespace

std::string forward_failure(const std::string& name, const at::Tensor& x, const std::exception& e,
                            const std::string& note) {
  const uint64_t bytes = failed_allocation_bytes(e.what());
  const std::string reason =
      bytes > 0 ? fmt::format("it ran out of memory (one allocation of {} bytes, {:.3g} GB)", bytes,
                              static_cast<double>(bytes) / 1e9)
                : short_libtorch_message(e);
  // Integer inputs are token ids (docs/data.md); images saved as uint8 are the usual slip.
  const bool integers = at::isIntegralType(x.scalar_type(), /*includeBool=*/true);
  return fmt::format("{} fails on an input batch of shape [{}] ({}): {}{}{}.", name,
                     fmt::join(x.sizes(), ", "), c10::toString(x.scalar_type()), reason,
                     integers ? " (the inputs are integers, which blr reads as token ids for a "
                                "language model; for images or features save x.float())"
                     : x.dim() == 1 ? " (the inputs have one number per example; a model of "
                                      "features needs shape (N, features): save x.unsqueeze(1))"
                                    : "",
                     note);
}

at::Tensor probe_model_output(const Model& model, const at::Tensor& x, const std::string& name) {
  try {
    ::torch::NoGradGuard no_grad;
    EvalMode eval(model);
    return model.forward(x);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // LibTorch's message with its backtrace: one sentence
    throw Error(forward_failure(name, x, e));
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
  check(size > 0, fmt::format("The model file '{}' is empty; {}.", path, kHowToWriteScriptModel));
  auto bytes = std::make_shared<std::string>(static_cast<size_t>(size), '\0');
  in.read(bytes->data(), static_cast<std::streamsize>(size));
  check(static_cast<uint64_t>(in.gcount()) == size,
        fmt::format("The model file '{}' could not be read completely.", path));
  return bytes;
}

Model load_script_model(std::shared_ptr<const std::string> archive, const std::string& origin) {
  check(archive != nullptr,
        fmt::format("The model file '{}' is empty; {}.", origin, kHowToWriteScriptModel));
  ::torch::jit::Module module = load_script_module(*archive, origin);
  return Model::script(module, std::move(archive), origin);
}

}  // namespace blr::torch
