// The pickle check (include/blr/torch/data/pickle_check.hpp): every pickle LibTorch writes passes
// it; each malformed stream is refused with the clause that names it, before LibTorch's
// Unpickler could corrupt its stack or reserve what a length states.
#include "blr/torch/data/pickle_check.hpp"

#include "blr/torch/data/archive_check.hpp"

#include <ATen/ATen.h>
#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>

#include <zlib.h>

#include <optional>
#include <sstream>
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
  list.push_back(
      c10::ivalue::Tuple::create({c10::IValue(1), c10::IValue(2), c10::IValue(3), c10::IValue(4)}));
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
      {std::string("\x80\x02"
                   "cabc",
                   6),
       "has a name without its newline"},
      {std::string("\x80\x02\x8a\x04\x00\x00\x00\x00.", 9), "has a length other than 8"},
      {std::string("\x80\x02N0.", 5), "opcode 0x30 at byte 3 is not one that LibTorch reads"},
  };
  for (const auto& [stream, expected] : cases) {
    const std::string problem = problem_of(stream);
    EXPECT_NE(problem.find(expected), std::string::npos)
        << "expected '" << expected << "', got '" << problem << "'";
  }
}

// x = randn(10) pickled: its storage's element count is the first "K\x0at" (BININT1 10, TUPLE) of
// the stream, the persistent id ('storage', torch.FloatStorage, '0', 'cpu', 10).
std::string pickle_of_ten_floats() {
  return saved_pickle(c10::IValue(at::randn({10})));
}

TEST(PickleCheck, StoragesMustFitTheirRecordsAndTensorsTheirStorages) {
  const std::string stream = pickle_of_ten_floats();
  const auto records = [](uint64_t bytes) {
    return [bytes](const std::string& key) -> std::optional<uint64_t> {
      if (key == "0") return bytes;
      return std::nullopt;
    };
  };
  EXPECT_EQ(pickle_problem(stream.data(), stream.size(), records(40)), "");
  EXPECT_NE(pickle_problem(stream.data(), stream.size(), records(39))
                .find("gives storage '0' 40 bytes, but its record holds 39"),
            std::string::npos);
  const auto none = [](const std::string&) -> std::optional<uint64_t> { return std::nullopt; };
  EXPECT_NE(pickle_problem(stream.data(), stream.size(), none)
                .find("names storage '0', which has no record"),
            std::string::npos);
  // The storage shrunk to 5 elements under a tensor of 10.
  std::string shrunk = stream;
  const auto count = shrunk.find(std::string("K\x0at", 3));
  ASSERT_NE(count, std::string::npos);
  shrunk[count + 1] = 5;
  EXPECT_NE(pickle_problem(shrunk.data(), shrunk.size(), records(40))
                .find("rebuilds a tensor of 1 dimensions at offset 0 that reaches beyond its "
                      "storage of 5 elements"),
            std::string::npos)
      << pickle_problem(shrunk.data(), shrunk.size(), records(40));
  // A view reaching exactly the last element passes; one element further does not.
  const auto base = at::arange(12, at::kFloat);
  const std::string view = saved_pickle(c10::IValue(base.as_strided({3, 2}, {4, 1}, 2)));
  EXPECT_EQ(pickle_problem(view.data(), view.size(), records(48)), "");  // 2 + 2·4 + 1 = 11
  std::string beyond = view;  // strides (4, 1) become (4, 2): 2 + 2·4 + 2 = 12
  const auto strides = beyond.find(std::string("(K\x04K\x01t", 6));
  ASSERT_NE(strides, std::string::npos);
  beyond[strides + 4] = 2;
  EXPECT_NE(pickle_problem(beyond.data(), beyond.size(), records(48)).find("reaches beyond"),
            std::string::npos);
}

// A stored zip written here, with every size and offset in zip64 extra fields and a zip64 end of
// central directory (APPNOTE 4.3.14–16, 4.5.3), as an archive over 4 GiB has them.
std::string zip64_archive(const std::vector<std::pair<std::string, std::string>>& files) {
  const auto put = [](std::string& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  std::string zip;
  std::string directory;
  for (const auto& [name, data] : files) {
    const uint64_t local = zip.size();
    const uint32_t crc = static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                                     reinterpret_cast<const Bytef*>(data.data()),
                                                     static_cast<uInt>(data.size())));
    put(zip, 0x04034b50, 4);
    put(zip, 45, 2);
    put(zip, 0, 2);
    put(zip, 0, 2);  // stored
    put(zip, 0, 4);
    put(zip, crc, 4);
    put(zip, 0xffffffff, 4);
    put(zip, 0xffffffff, 4);
    put(zip, name.size(), 2);
    put(zip, 20, 2);
    zip += name;
    put(zip, 1, 2);
    put(zip, 16, 2);
    put(zip, data.size(), 8);
    put(zip, data.size(), 8);
    zip += data;
    put(directory, 0x02014b50, 4);
    put(directory, 45, 2);
    put(directory, 45, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, crc, 4);
    put(directory, 0xffffffff, 4);
    put(directory, 0xffffffff, 4);
    put(directory, name.size(), 2);
    put(directory, 28, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, 0xffffffff, 4);
    directory += name;
    put(directory, 1, 2);
    put(directory, 24, 2);
    put(directory, data.size(), 8);
    put(directory, data.size(), 8);
    put(directory, local, 8);
  }
  const uint64_t directory_at = zip.size();
  zip += directory;
  const uint64_t end64 = zip.size();
  put(zip, 0x06064b50, 4);
  put(zip, 44, 8);
  put(zip, 45, 2);
  put(zip, 45, 2);
  put(zip, 0, 4);
  put(zip, 0, 4);
  put(zip, files.size(), 8);
  put(zip, files.size(), 8);
  put(zip, directory.size(), 8);
  put(zip, directory_at, 8);
  put(zip, 0x07064b50, 4);
  put(zip, 0, 4);
  put(zip, end64, 8);
  put(zip, 1, 4);
  put(zip, 0x06054b50, 4);
  put(zip, 0, 4);
  put(zip, 0xffff, 2);
  put(zip, 0xffff, 2);
  put(zip, 0xffffffff, 4);
  put(zip, 0xffffffff, 4);
  put(zip, 0, 2);
  return zip;
}

TEST(ArchiveCheck, ReadsZip64DirectoriesAsLibTorchDoes) {
  const std::string pickle = pickle_of_ten_floats();
  const std::string floats(40, '\0');
  const auto zip = zip64_archive(
      {{"archive/data.pkl", pickle}, {"archive/data/0", floats}, {"archive/version", "3\n"}});
  EXPECT_EQ(archive_problem(zip), "");
  // LibTorch's own zip reader finds the same records at the same sizes.
  caffe2::serialize::PyTorchStreamReader reader(
      std::make_unique<caffe2::serialize::MemoryReadAdapter>(zip.data(), zip.size()));
  EXPECT_EQ(std::get<1>(reader.getRecord("data.pkl")), pickle.size());
  EXPECT_EQ(std::get<1>(reader.getRecord("data/0")), 40u);
  // The same check through the zip64 sizes: a record too short for its storage.
  const auto short_zip = zip64_archive({{"archive/data.pkl", pickle},
                                        {"archive/data/0", floats.substr(0, 36)},
                                        {"archive/version", "3\n"}});
  EXPECT_NE(archive_problem(short_zip).find("gives storage '0' 40 bytes, but its record holds 36"),
            std::string::npos)
      << archive_problem(short_zip);
  // The 32-bit end of central directory claiming no records: LibTorch (miniz) reads the zip64 one
  // all the same, and so does the check.
  std::string claims_none = short_zip;
  const auto end = claims_none.rfind("PK\x05\x06");
  for (size_t i = 8; i < 20; ++i) claims_none[end + i] = '\0';
  caffe2::serialize::PyTorchStreamReader libtorch_view(
      std::make_unique<caffe2::serialize::MemoryReadAdapter>(claims_none.data(),
                                                             claims_none.size()));
  EXPECT_TRUE(libtorch_view.hasRecord("data.pkl"));
  EXPECT_NE(archive_problem(claims_none).find("gives storage '0' 40 bytes"), std::string::npos)
      << archive_problem(claims_none);
}

// LibTorch's zip reader (miniz) finds records ignoring case: a pickle stored as "dAta.pkl" is read
// as data.pkl, so it is checked as data.pkl (the libFuzzer harness read an unchecked pickle so,
// fuzz/corpus/tensor_file/case-data-pkl), and two names equal but for case are refused.
TEST(ArchiveCheck, RecordNamesAreComparedIgnoringCaseAsLibTorchDoes) {
  const auto zip = [](const std::vector<std::pair<std::string, std::string>>& records) {
    std::ostringstream out;
    caffe2::serialize::PyTorchStreamWriter writer([&out](const void* p, size_t n) {
      out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
      return n;
    });
    for (const auto& [name, data] : records) writer.writeRecord(name, data.data(), data.size());
    writer.writeEndOfFile();
    return out.str();
  };
  const std::string pickle = pickle_of_ten_floats();  // storage '0': 40 bytes
  EXPECT_EQ(archive_problem(zip({{"data.pkl", pickle}, {"data/0", std::string(40, '\0')}})), "");
  const std::string short_record = std::string(8, '\0');
  const auto mixed = zip({{"dAta.pkl", pickle}, {"DATA/0", short_record}});
  EXPECT_NE(archive_problem(mixed).find(
                "its record 'data.pkl' is malformed: opcode 0x51 at byte"),
            std::string::npos)
      << archive_problem(mixed);
  EXPECT_NE(archive_problem(mixed).find("gives storage '0' 40 bytes, but its record holds 8"),
            std::string::npos);
  const auto twice = zip({{"data.pkl", pickle}, {"DATA.PKL", pickle}});
  EXPECT_NE(archive_problem(twice).find("it holds the record 'archive/DATA.PKL' twice"),
            std::string::npos)
      << archive_problem(twice);
}

TEST(ArchiveCheck, PassesTorchScriptArchivesWithDeflatedSource) {
  ::torch::jit::Module m("__torch__.Affine");
  m.register_parameter("w", at::ones({3, 2}), false);
  m.register_buffer("b", at::zeros({3}));
  m.define("def forward(self, x):\n    return x.mm(self.w.t()) + self.b\n");
  std::ostringstream out;
  m.save(out);
  const std::string zip = out.str();
  ASSERT_NE(zip.find("code/__torch__.py"), std::string::npos);
  EXPECT_EQ(archive_problem(zip), "");
}

TEST(ArchiveCheck, RefusesDirectoriesLibTorchWouldTrust) {
  const auto saved = ::torch::jit::pickle_save(c10::IValue(at::randn({4})));
  const std::string good(saved.begin(), saved.end());
  EXPECT_EQ(archive_problem(good), "");
  EXPECT_NE(archive_problem("PK\x03\x04 no directory").find("not a zip archive"),
            std::string::npos);
  // The central directory entry of data.pkl (stored) given another method.
  size_t entry = 0;
  for (entry = good.find("PK\x01\x02"); entry != std::string::npos;
       entry = good.find("PK\x01\x02", entry + 1)) {
    if (good.compare(entry + 46, 16, "archive/data.pkl") == 0) break;
  }
  ASSERT_NE(entry, std::string::npos);
  const auto with_method = [&](int method) {
    std::string zip = good;
    zip[entry + 10] = static_cast<char>(method);
    return zip;
  };
  EXPECT_NE(archive_problem(with_method(12)).find("compressed with method 12, which LibTorch"),
            std::string::npos);
  // Deflate: its bytes are no deflate stream of the stated size.
  EXPECT_NE(archive_problem(with_method(8)).find("its record 'data.pkl' does not inflate"),
            std::string::npos)
      << archive_problem(with_method(8));
  // Deflate claiming 300 MiB: LibTorch's reader would allocate it before inflating.
  std::string bomb = with_method(8);
  bomb[entry + 24] = 0;
  bomb[entry + 25] = 0;
  bomb[entry + 26] = static_cast<char>(0xc0);  // 0x12c00000 bytes = 300 MiB
  bomb[entry + 27] = static_cast<char>(0x12);
  EXPECT_NE(archive_problem(bomb).find("inflate to more than 256 MiB (at 'archive/data.pkl')"),
            std::string::npos)
      << archive_problem(bomb);
  // A record whose size runs past the end of the archive.
  std::string long_record = good;  // stored: 0xffff bytes, both sizes
  long_record[entry + 24] = '\xff';
  long_record[entry + 25] = '\xff';
  long_record[entry + 20] = '\xff';
  long_record[entry + 21] = '\xff';
  EXPECT_NE(archive_problem(long_record).find("runs past the end of the archive"),
            std::string::npos)
      << archive_problem(long_record);
  // The directory claims more entries than it has room for (in the end of central directory and
  // in the zip64 one, which LibTorch's writer adds and its reader then prefers).
  std::string many = good;
  const auto end = many.rfind("PK\x05\x06");
  many[end + 10] = '\xfe';
  many[end + 11] = '\x7f';
  const auto end64 = many.rfind("PK\x06\x06");
  if (end64 != std::string::npos) {
    many[end64 + 32] = '\xfe';
    many[end64 + 33] = '\x7f';
  }
  EXPECT_NE(archive_problem(many).find("does not fit"), std::string::npos) << archive_problem(many);
}

}  // namespace
}  // namespace blr::torch
