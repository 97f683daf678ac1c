// The pickle check (include/blr/torch/data/pickle_check.hpp): every pickle LibTorch writes passes
// it; each malformed stream is refused with the clause that names it, before LibTorch's
// Unpickler could corrupt its stack or reserve what a length states.
#include "blr/torch/data/pickle_check.hpp"

#include <ATen/ATen.h>
#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <string>
#include <tuple>
#include <vector>

namespace blr::torch {
namespace {

std::string problem_of(const std::string& stream) {
  return pickle_problem(stream.data(), stream.size());
}

// The data.pkl record of what torch::jit::pickle_save writes (the torch.save format).
std::string saved_pickle(const c10::IValue& value) {
  const std::vector<char> zip = ::torch::jit::pickle_save(value);
  caffe2::serialize::PyTorchStreamReader reader(
      std::make_unique<caffe2::serialize::MemoryReadAdapter>(zip.data(), zip.size()));
  at::DataPtr data;
  size_t size = 0;
  std::tie(data, size) = reader.getRecord("data.pkl");
  return std::string(static_cast<const char*>(data.get()), size);
}

TEST(PickleCheck, PassesWhatLibTorchWrites) {
  c10::Dict<std::string, at::Tensor> tensors;
  tensors.insert("x", at::randn({4, 3}));
  tensors.insert("y", at::arange(4, at::kLong));
  tensors.insert("x_test", at::randn({2, 3}).to(at::kDouble));
  EXPECT_EQ(problem_of(saved_pickle(c10::IValue(tensors))), "");
  c10::impl::GenericList list(c10::AnyType::get());
  list.push_back(c10::IValue(int64_t{5}));
  list.push_back(c10::IValue(int64_t{1} << 40));  // LONG1
  list.push_back(c10::IValue(-70000));            // BININT
  list.push_back(c10::IValue(2.5));
  list.push_back(c10::IValue(true));
  list.push_back(c10::IValue());
  list.push_back(c10::IValue(std::string(300, 'a')));
  list.push_back(c10::ivalue::Tuple::create({c10::IValue(1), c10::IValue(2), c10::IValue(3),
                                             c10::IValue(4)}));
  const std::vector<char> raw = ::torch::jit::pickle(c10::IValue(list));  // no zip
  EXPECT_EQ(problem_of(std::string(raw.begin(), raw.end())), "");
  list.push_back(c10::IValue(at::ones({2})));
  EXPECT_EQ(problem_of(saved_pickle(c10::IValue(list))), "");
}

TEST(PickleCheck, RefusesMalformedStreams) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string("N."), "does not start with PROTO 2"},
      {std::string("\x80\x03N.", 4), "does not start with PROTO 2"},
      {std::string("\x80\x02N", 3), "ends before its STOP opcode"},
      {std::string("\x80\x02}q\x00R.", 7),
       "opcode 0x52 at byte 5 needs 2 items on the stack above its mark and has 1"},
      {std::string("\x80\x02NN(R.", 7), "opcode 0x52 at byte 5 needs 2 items"},
      {std::string("\x80\x02X\xff\xff\xff\x7f", 7), "states 2147483647 bytes where 0 remain"},
      {std::string("\x80\x02Nr\xff\xff\xff\x00.", 9), "writes memo slot 16777215 of 0"},
      {std::string("\x80\x02Nq\x15.", 6), "writes memo slot 21 of 0"},
      {std::string("\x80\x02h\x00.", 5), "reads memo slot 0 of 0"},
      {std::string("\x80\x02q\x00.", 5), "memoises an empty stack"},
      {std::string("\x80\x02(NNNd.", 8), "has a key without its value"},
      {std::string("\x80\x02}(NNNu.", 9), "has a key without its value"},
      {std::string("\x80\x02Nt.", 5), "closes a mark that was never set"},
      {std::string("\x80\x02N(.", 5), "leaves 1 mark(s) open"},
      {std::string("\x80\x02NN.", 5), "leaves 2 items on the stack, not 1"},
      {std::string("\x80\x02(e.", 5), "has no list or dict below its mark to add to"},
      {std::string("\x80\x02" "cabc", 6), "has a name without its newline"},
      {std::string("\x80\x02\x8a\x04\x00\x00\x00\x00.", 9), "has a length other than 8"},
      {std::string("\x80\x02N0.", 5), "opcode 0x30 at byte 3 is not one that LibTorch reads"},
  };
  for (const auto& [stream, expected] : cases) {
    const std::string problem = problem_of(stream);
    EXPECT_NE(problem.find(expected), std::string::npos)
        << "expected '" << expected << "', got '" << problem << "'";
  }
}

}  // namespace
}  // namespace blr::torch
