#include "blr/torch/data/tensor_file.hpp"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "blr/core/error.hpp"
#include "blr/torch/data/archive_check.hpp"
#include "blr/torch/data/prepare.hpp"
#include "../trial_in_child.hpp"

namespace blr::torch {
namespace {

const char* const kKeys[] = {"x", "y", "x_test", "y_test", "x_ood"};

std::string describe(const c10::IValue& v) {
  return v.isNone() ? "None" : v.tagKind();
}

// The file's bytes for LibTorch's zip reader, read within bounds: LibTorch's MemoryReadAdapter
// copies whatever range it is asked for, and a crafted central directory asks beyond the end
// (a SEGV the libFuzzer harness found, fuzz/corpus/tensor_file/segv-zip-directory-beyond-end).
class BoundedBytes final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BoundedBytes(const std::string& bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t position, void* buffer, size_t length, const char* = "") const override {
    // The zip reader may ask for 0 bytes into a null buffer, which memcpy must not be given
    // (fuzz/corpus/tensor_file/ubsan-zip-reads-zero-bytes-into-null).
    if (position >= bytes_.size() || length == 0) return 0;
    const size_t n = std::min<uint64_t>(length, bytes_.size() - position);
    std::memcpy(buffer, bytes_.data() + position, n);
    return n;
  }

 private:
  const std::string& bytes_;
};

// What torch::jit::pickle_load does (the zip's data.pkl unpickled, each storage read from its
// record data/<key>), over a bounded view of the bytes and after the archive check
// (archive_check.hpp): every storage fits its record and every tensor its storage (over-reads the
// libFuzzer harness found: fuzz/corpus/tensor_file/overflow-*, segv-*).
c10::IValue unpickle(const std::string& bytes) {
  const std::string problem = archive_problem(bytes);
  check(problem.empty(), "{}", problem);
  caffe2::serialize::PyTorchStreamReader archive(std::make_unique<BoundedBytes>(bytes));
  // Not a structured binding: the lambda below captures the size, which C++17 (the libFuzzer
  // build) does not allow for one.
  at::DataPtr pickle;
  size_t pickle_size = 0;
  std::tie(pickle, pickle_size) = archive.getRecord("data.pkl");
  const char* const pickle_bytes = static_cast<const char*>(pickle.get());
  size_t position = 0;
  auto read = [&](char* buffer, size_t length) -> size_t {
    const size_t n = std::min(length, pickle_size - position);
    if (n > 0) std::memcpy(buffer, pickle_bytes + position, n);
    position += n;
    return n;
  };
  auto read_record = [&](const std::string& key) {
    return std::get<0>(archive.getRecord("data/" + key));
  };
  ::torch::jit::Unpickler unpickler(read, nullptr, nullptr, read_record, c10::nullopt);
  unpickler.set_version(archive.version());
  return unpickler.parse_ivalue();
}

// The refusal of bytes that do not unpickle, with the first line of the reason.
[[noreturn]] void not_a_tensor_file(const std::string& source, const std::string& why) {
  throw Error(fmt::format("The file '{}' is not a data set written by torch.save (a zip archive of "
                          "a pickled dict): {}",
                          source, why.substr(0, why.find('\n'))));
}

// The dict's tensors by key, checked for type and known keys.
std::map<std::string, at::Tensor> tensors_of(const c10::IValue& value, const std::string& source) {
  check(value.isGenericDict(),
        "The tensor file '{}' holds a {}, not a dict with keys x, y (and optionally x_test, "
        "y_test, x_ood).",
        source, describe(value));
  std::map<std::string, at::Tensor> out;
  for (const auto& entry : value.toGenericDict()) {
    check(entry.key().isString(), "The tensor file '{}' has a dict key that is not a string ({}).",
          source, describe(entry.key()));
    const std::string key = entry.key().toStringRef();
    check(std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys),
          "The tensor file '{}' has a key '{}' that blr does not read; the keys are x, y, x_test, "
          "y_test and x_ood.",
          source, key);
    check(entry.value().isTensor(), "The tensor file '{}': key '{}' holds a {}, not a tensor.",
          source, key, describe(entry.value()));
    out[key] = entry.value().toTensor();
  }
  for (const char* key : {"x", "y"}) {
    check(out.count(key) > 0, "The tensor file '{}' has no key '{}'.", source, key);
  }
  check(out.count("x_test") == out.count("y_test"),
        "The tensor file '{}' has {} but not {}; give both or neither.", source,
        out.count("x_test") ? "x_test" : "y_test", out.count("x_test") ? "y_test" : "x_test");
  return out;
}

at::Tensor inputs(const at::Tensor& x, const std::string& source, const std::string& key) {
  check(x.dim() >= 1, "The tensor file '{}': '{}' is a scalar; it needs one row per example.",
        source, key);
  if (at::isFloatingType(x.scalar_type())) {
    check_all_finite(x, fmt::format("tensor file '{}', key '{}'", source, key));
    const auto f = x.to(at::kFloat).contiguous();
    check_all_finite(f, fmt::format("tensor file '{}', key '{}', as float32,", source, key));
    return f;
  }
  check(at::isIntegralType(x.scalar_type(), /*includeBool=*/false),
        "The tensor file '{}': '{}' has dtype {}; inputs must be floating point or integer.",
        source, key, std::string(c10::toString(x.scalar_type())));
  return x.to(at::kLong).contiguous();
}

}  // namespace

Dataset parse_tensor_file(const std::string& bytes, const std::string& source,
                          const std::string& task_text) {
  c10::IValue value;
  try {
    value = unpickle(bytes);
  } catch (const std::exception& e) {
    not_a_tensor_file(source, e.what());
  }
  auto t = tensors_of(value, source);
  Dataset d;
  d.name = source;
  const bool has_test = t.count("x_test") > 0;
  d.train = {inputs(t.at("x"), source, "x"), t.at("y")};
  if (has_test) d.test = {inputs(t.at("x_test"), source, "x_test"), t.at("y_test")};
  for (const auto& [split, key] : {std::pair{&d.train, "x"}, std::pair{&d.test, "x_test"}}) {
    if (!split->x.defined()) continue;
    const char* label_key = key == std::string("x") ? "y" : "y_test";
    check(split->y.dim() >= 1,
          "The tensor file '{}': '{}' is a scalar; it needs one label per example, shape (N,).",
          source, label_key);
    check(split->x.size(0) == split->y.size(0),
          "The tensor file '{}': '{}' has {} examples but '{}' has {}.", source, key,
          split->x.size(0), key == std::string("x") ? "y" : "y_test",
          split->y.dim() >= 1 ? split->y.size(0) : 0);
  }
  check(d.train.size() > 0, "The tensor file '{}' has no training examples.", source);
  check(!has_test || d.test.size() > 0, "The tensor file '{}' has no test examples (x_test).",
        source);
  check(!has_test || d.test.x.sizes().slice(1) == d.train.x.sizes().slice(1),
        "The tensor file '{}': x has examples of shape [{}] but x_test [{}].", source,
        fmt::join(d.train.x.sizes().slice(1), ", "), fmt::join(d.test.x.sizes().slice(1), ", "));
  const bool floating = at::isFloatingType(d.train.y.scalar_type());
  d.task = task_text.empty() ? (floating ? Task::kRegression : Task::kClassification)
                             : parse_task(task_text);
  prepare_targets(d, fmt::format("tensor file '{}'", source));
  if (t.count("x_ood") > 0) {
    // The OOD inputs have no labels: y is zeros of the targets' shape and dtype, never read.
    const auto x_ood = inputs(t.at("x_ood"), source, "x_ood");
    check(x_ood.size(0) > 0, "The tensor file '{}' has no OOD examples (x_ood is empty).", source);
    check(x_ood.sizes().slice(1) == d.train.x.sizes().slice(1) &&
              x_ood.scalar_type() == d.train.x.scalar_type(),
          "The tensor file '{}': x has examples of shape [{}] ({}) but x_ood [{}] ({}).", source,
          fmt::join(d.train.x.sizes().slice(1), ", "),
          std::string(c10::toString(d.train.x.scalar_type())), fmt::join(x_ood.sizes().slice(1), ", "),
          std::string(c10::toString(x_ood.scalar_type())));
    std::vector<int64_t> shape = {x_ood.size(0)};
    for (const int64_t s : d.train.y.sizes().slice(1)) shape.push_back(s);
    d.test_shifted = {x_ood, at::zeros(shape, d.train.y.options())};
    d.ood_shift = "x_ood";
  }
  d.statistics["file"] = source;
  return d;
}

namespace {

// The file's bytes, read within the size limit and unpickled once in a capped child first.
std::string read_checked_bytes(const TensorFileOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto size = fs::file_size(options.path, ec);
  check(!ec, "Cannot read the tensor file '{}': {}.", options.path, ec.message());
  check(size <= options.max_bytes,
        "The tensor file '{}' is {} bytes, more than the limit of {} bytes for tensor files.",
        options.path, size, options.max_bytes);
  std::ifstream in(options.path, std::ios::binary);
  check(in.good(), "Cannot open the tensor file '{}'.", options.path);
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  check(in.gcount() == static_cast<std::streamsize>(size), "Cannot read the tensor file '{}'.",
        options.path);
  // LibTorch's unpickler crashed or grew memory without bound on crafted files
  // (fuzz/corpus/tensor_file/abort-*, oom-*). The archive check now refuses those; the bytes are
  // still read first in a capped child (../trial_in_child.hpp), for whatever it does not foresee,
  // and read here only if they unpickled there.
  const uint64_t extra = 4 * static_cast<uint64_t>(bytes.size()) + (1ull << 30);
  const auto trial = detail::trial_in_child(
      [&] { (void)unpickle(bytes); }, extra,
      std::chrono::seconds(60 + static_cast<long>(bytes.size() / 10'000'000)));
  check(trial.kind != detail::TrialOutcome::kCrashed,
        "The file '{}' is not a data set written by torch.save: LibTorch crashed (signal {}) "
        "while reading it.",
        options.path, trial.signal);
  check(trial.kind != detail::TrialOutcome::kOutOfMemory,
        "The file '{}' is not a data set written by torch.save: reading its {} bytes needs more "
        "than {} GiB of memory.",
        options.path, bytes.size(), extra >> 30);
  if (trial.kind == detail::TrialOutcome::kRefused) not_a_tensor_file(options.path, trial.message);
  return bytes;
}

}  // namespace

Dataset read_tensor_file(const TensorFileOptions& options) {
  return parse_tensor_file(read_checked_bytes(options), options.path, options.task);
}

at::Tensor read_tensor_file_inputs(const TensorFileOptions& options) {
  // Python pickles a dict of one key with SETITEM (opcode 's', 0x73), which LibTorch 1.13's
  // unpickler does not know: say what to do instead of naming the opcode.
  const auto single_key = [&options](const std::string& why) {
    if (why.find("Unknown opcode for unpickling at 0x73") == std::string::npos) return;
    throw Error(fmt::format(
        "The tensor file '{}' holds a dict with a single key, which LibTorch cannot read; save "
        "the inputs with a second key, e.g. torch.save({{\"x\": x, \"y\": y}}, ...).",
        options.path));
  };
  std::string bytes;
  try {
    bytes = read_checked_bytes(options);
  } catch (const Error& e) {
    single_key(e.what());
    throw;
  }
  c10::IValue value;
  try {
    value = unpickle(bytes);
  } catch (const std::exception& e) {
    single_key(e.what());
    not_a_tensor_file(options.path, e.what());
  }
  check(value.isGenericDict(), "The tensor file '{}' holds a {}, not a dict with the key x.",
        options.path, describe(value));
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString() || entry.key().toStringRef() != "x") continue;
    check(entry.value().isTensor(), "The tensor file '{}': key 'x' holds a {}, not a tensor.",
          options.path, describe(entry.value()));
    const auto x = inputs(entry.value().toTensor(), options.path, "x");
    check(x.size(0) > 0, "The tensor file '{}' has no examples (x is empty).", options.path);
    return x;
  }
  throw Error(fmt::format("The tensor file '{}' has no key 'x' (the inputs to predict on).",
                          options.path));
}

}  // namespace blr::torch
