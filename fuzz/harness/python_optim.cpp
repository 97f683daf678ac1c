// Fuzz harness: the Python entry points of blr's optimizers (issue 34, item 3), through the C++
// functions their bindings call (python/src/optimizers.cpp): the registry's option check and
// factory (check_options, make_optimizer) with option values drawn from each option's type, then
// a sequence of the calls a Python training loop makes — sample_parameters(train),
// restore_parameters, discard_sample, a gradient (hostile values included), add_squared_gradients
// (also of the wrong shape or sign), step, add_param_group, posterior_variance, and a state that
// goes out as bytes, is mutated, and comes back through load_optimizer_state (the archive check
// and the trial decode of state_bytes.hpp). Parameter layouts are not changed behind the
// optimizer's back: the binding checks those before any call (python/tests, issue 34 D2).
//
// A blr::Error is an accepted refusal, and so is a c10::Error, which the extension turns into one
// blr.Error sentence (python/src/module.cpp); a crash, a sanitizer report or another exception
// is a bug. Built with the main compiler (LibTorch's headers need C++20 here, which clang 14 with
// libstdc++ 12 cannot compile), under AddressSanitizer and UndefinedBehaviorSanitizer with
// comparison tracing for libFuzzer's value profile (fuzz/python_optim/).
#include <c10/util/Exception.h>
#include <torch/torch.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "blr/torch/optim/mean_field.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/state_bytes.hpp"
#include "blr/torch/optim/variational.hpp"
#include "fuzz_check.hpp"

namespace {

using blr::fuzz::bug;

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  int pick(int n) { return u8() % n; }
  bool flag() { return (u8() & 1) != 0; }
  bool done() const { return at_ >= size_; }
  double number() {
    static const double kHostile[] = {0.0, -0.0, 1.0, -1.0,
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(),
                                      1e300, -1e300, 1e-300, 4.9e-324, 1e20, 0.5, 2.0, 1e-8, 1e6};
    const uint8_t tag = u8();
    if (tag < 40) return kHostile[tag % 16];
    return static_cast<int16_t>(u8() | (u8() << 8)) / 256.0;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

/// Runs `f`; blr::Error and c10::Error are refusals (false); anything else ends the run.
template <class F>
bool accepted(F&& f) {
  try {
    f();
    return true;
  } catch (const blr::Error&) {
    return false;
  } catch (const c10::Error&) {
    return false;
  } catch (const std::exception& e) {
    bug(std::string("an exception from outside blr and LibTorch escaped: ") + e.what());
  } catch (...) {
    bug("an exception of unknown type escaped");
  }
}

/// The entries Python can build (python/src/optimizers.cpp, python_entry).
const std::vector<const blr::torch::OptimizerEntry*>& python_entries() {
  static const auto entries = [] {
    std::vector<const blr::torch::OptimizerEntry*> out;
    for (const auto& e : blr::torch::optimizers())
      if (e.trains && static_cast<bool>(e.group_options)) out.push_back(&e);
    return out;
  }();
  return entries;
}

/// "0x" and at least 8 hexadecimal digits: a pointer printed into a message (TorchScript's
/// "compilation unit at: 0x6100..."), not an opcode or a byte value.
bool has_memory_address(const std::string& text) {
  for (size_t at = text.find("0x"); at != std::string::npos; at = text.find("0x", at + 2)) {
    size_t digits = 0;
    while (at + 2 + digits < text.size() && std::isxdigit(static_cast<unsigned char>(text[at + 2 + digits])))
      ++digits;
    if (digits >= 8) return true;
  }
  return false;
}

::at::Tensor tensor(Bytes& in, const std::vector<int64_t>& shape, ::at::ScalarType dtype) {
  auto t = ::torch::zeros(shape, ::torch::dtype(::at::kDouble));
  auto* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = in.number();
  return t.to(dtype);
}

std::vector<int64_t> shape(Bytes& in) {
  std::vector<int64_t> s(1 + in.pick(2));
  for (auto& d : s) d = 1 + in.pick(4);
  return s;
}

blr::OptionValues options(Bytes& in, const blr::torch::OptimizerEntry& entry) {
  blr::OptionValues out;
  for (const auto& o : entry.options->options()) {
    if (!in.flag()) continue;
    switch (o.type) {
      case blr::OptionType::kNumber: out.emplace_back(o.key, in.number()); break;
      case blr::OptionType::kInteger:
        out.emplace_back(o.key, static_cast<int64_t>(in.pick(12)) - 2);
        break;
      case blr::OptionType::kSwitch: out.emplace_back(o.key, in.flag()); break;
      case blr::OptionType::kChoice:
        out.emplace_back(o.key, o.choices.empty() || in.pick(8) == 0
                                    ? std::string("bogus")
                                    : o.choices[in.pick(static_cast<int>(o.choices.size()))]);
        break;
    }
  }
  return out;
}

}  // namespace

// GCC's -fsanitize-coverage=trace-cmp also traces floating-point comparisons, which libFuzzer's
// runtime does not take: they are ignored.
extern "C" void __sanitizer_cov_trace_cmpf(float, float) {}
extern "C" void __sanitizer_cov_trace_cmpd(double, double) {}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    ::torch::set_num_threads(1);
    return true;
  }();
  (void)quiet;
  Bytes in(data, size);
  const auto& entries = python_entries();
  const auto& entry = *entries[in.pick(static_cast<int>(entries.size()))];
  const auto dtype = in.flag() ? ::at::kDouble : ::at::kFloat;
  std::vector<::at::Tensor> params;
  for (int k = 0, n = 1 + in.pick(3); k < n; ++k)
    params.push_back(tensor(in, shape(in), dtype).set_requires_grad(true));
  const blr::OptionValues given = options(in, entry);
  std::unique_ptr<::torch::optim::Optimizer> optimizer;
  const blr::torch::OptimizerContext context{1 + in.pick(200), in.u8(), 0};
  if (!accepted([&] {
        blr::torch::check_options(entry.name, given);
        optimizer = blr::torch::make_optimizer(entry.name, params, given, context);
      }))
    return 0;
  auto* variational = dynamic_cast<blr::torch::VariationalOptimizer*>(optimizer.get());
  std::vector<::at::Tensor> all = params;
  for (int op = 0; op < 16 && !in.done(); ++op) {
    switch (in.pick(9)) {
      case 0:
        if (variational) accepted([&] { variational->sample_parameters(in.flag()); });
        break;
      case 1:
        if (variational) accepted([&] { variational->restore_parameters(); });
        break;
      case 2:
        if (variational) accepted([&] { variational->discard_sample(); });
        break;
      case 3:  // a backward pass: gradients, some hostile
        for (auto& p : all) p.mutable_grad() = tensor(in, p.sizes().vec(), p.scalar_type());
        break;
      case 4:
        if (variational) {
          std::vector<::at::Tensor> squared;
          const bool wrong = in.pick(6) == 0;
          for (auto& p : all)
            squared.push_back(wrong ? tensor(in, shape(in), p.scalar_type())
                                    : tensor(in, p.sizes().vec(), p.scalar_type()).abs());
          accepted([&] { variational->add_squared_gradients(squared); });
        }
        break;
      case 5:
        accepted([&] { optimizer->step(); });
        break;
      case 6: {  // the binding refuses this inside a sample (issue 34, D13)
        if (variational && variational->sampled()) break;
        auto extra = tensor(in, shape(in), dtype).set_requires_grad(true);
        if (accepted([&] {
              ::torch::optim::OptimizerParamGroup group({extra});
              group.set_options(optimizer->defaults().clone());
              if (auto* mean_field = dynamic_cast<blr::torch::MeanFieldOptimizer*>(optimizer.get()))
                mean_field->add_param_group(group);
              else
                optimizer->add_param_group(group);
            }))
          all.push_back(extra);
        break;
      }
      case 7:
        if (variational) accepted([&] { (void)variational->posterior_variance(); });
        break;
      default: {  // state out as bytes, mutated, back in
        std::string bytes;
        if (!accepted([&] { bytes = blr::torch::save_optimizer_state(*optimizer); })) break;
        for (int k = 0, n = in.pick(4); k < n && !bytes.empty(); ++k)
          bytes[in.u8() * 257 % bytes.size()] ^= static_cast<char>(in.u8());
        if (in.pick(5) == 0) bytes.resize(bytes.size() * in.u8() / 256);
        // state_bytes.hpp's contract: every refusal is one blr::Error (the bytes' checks begin
        // with their name, the optimizer's checks of the values name the parameter).
        try {
          blr::torch::load_optimizer_state(*optimizer, bytes, "The fuzzed state");
        } catch (const blr::Error& e) {
          const std::string message = e.what();
          blr::fuzz::require(!message.empty() && message.find('\n') == std::string::npos &&
                                 !has_memory_address(message),
                             "a refused state's message is not one plain sentence: " + message);
        } catch (const std::exception& e) {
          bug(std::string("load_optimizer_state let another exception escape: ") + e.what());
        }
        break;
      }
    }
  }
  return 0;
}
