// A user's own model from a file: a TorchScript archive written in Python with
//
//   torch.jit.script(model).save("model.pt")
//
// whose forward takes one input batch and returns logits (classification: the labels' shape
// followed by the number of classes) or the targets (regression; train/likelihood.hpp). This is
// what `blr train|compare|continual --model-file PATH` trains.
//
// The archive's bytes are read once (read_model_file) and kept by the Model
// (Model::script_archive), so a checkpoint embeds them (checkpoint.hpp) and `blr eval` or
// `--resume` rebuild the model without the original file. Files are bounded by kMaxModelFileBytes
// (1 GiB), checked against the file's size before anything is read. Everything LibTorch's loader
// throws (c10::Error, with its C++ backtrace) becomes one blr::Error sentence naming the file: not
// a TorchScript archive (random bytes, a zip without TorchScript's records, a torch.save file), no
// forward method, a forward that does not take exactly one input, no parameters.
//
// The model's forward always runs under UnoptimizedScriptExecution (nn/script_module.hpp), so that
// VOGN/OGN/kfac read their per-example statistics off its autograd graph from the first call on.
// Every call of it, not only the first, is checked: a forward that throws (at any step), returns
// integer outputs, or returns outputs without an autograd graph to its parameters while gradients
// are recorded is one sentence naming the file; a failure after blr converted the parameters'
// precision (a float64 model trained in float32) names that conversion, and a failed allocation
// names its size.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

namespace at {
class Tensor;
}  // namespace at
namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace blr::torch {

class Model;  // nn/model.hpp (kept out: checkpoint.cpp reads the limit and is compiled as C++17 too)

/// The largest model file (and archive embedded in a checkpoint) blr reads: 1 GiB.
inline constexpr uint64_t kMaxModelFileBytes = uint64_t{1} << 30;

/// How to write a model file, the end of every refusal of one.
inline constexpr const char* kHowToWriteScriptModel =
    "write it with torch.jit.script(model).save(path)";

/// The bytes of the model file `path`; a blr::Error when it cannot be read, is empty or is larger
/// than kMaxModelFileBytes.
std::shared_ptr<const std::string> read_model_file(const std::string& path);

/// Loads the TorchScript module in `archive` (bytes of torch.jit.save); `origin` names them in
/// messages (the file's path). A blr::Error sentence for anything that is not a module with a
/// one-input forward and at least one parameter.
Model load_script_model(std::shared_ptr<const std::string> archive, const std::string& origin);

/// The module itself, as load_script_model reads it before wrapping it in a Model: the size
/// limit, the archive check (data/archive_check.hpp), a trial load in a capped child process (a
/// crash or memory exhaustion there is a refusal), then LibTorch's loader, a forward taking one
/// input and at least one parameter. C++17, without nn/model.hpp (the libFuzzer harness calls it).
::torch::jit::Module load_script_module(const std::string& archive, const std::string& origin);

/// "torchscript model.pt (12,345 parameters)": a --model-file model in results and checkpoints.
std::string describe_script_model(const Model& model);

/// The model's outputs for `x`, in evaluation mode without gradients (no random numbers drawn,
/// nothing learned): the check that a model fits the data before training starts. A forward that
/// throws becomes one blr::Error sentence naming `name` ("The model in 'model.pt'"), the input's
/// shape and LibTorch's reason.
at::Tensor probe_model_output(const Model& model, const at::Tensor& x, const std::string& name);

/// The sentence for a forward of the model `name` ("The model in 'model.pt'") that threw `e` on
/// the input batch `x`: the input's shape and type, LibTorch's reason (a failed allocation as its
/// size), the hint for integer or one-number inputs, and `note` (e.g. a precision conversion).
std::string forward_failure(const std::string& name, const at::Tensor& x, const std::exception& e,
                            const std::string& note = "");

/// LibTorch's message of `e` reduced to one line without backtrace or TorchScript traceback
/// (the last "...Error: ..." line of the interpreter's report, else the first line), at most 300
/// characters, without a final period.
std::string short_libtorch_message(const std::exception& e);

/// The same for a message already taken from its exception (what a trial child reports).
std::string short_libtorch_message(const std::string& text);

}  // namespace blr::torch
