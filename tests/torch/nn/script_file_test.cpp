// A user's TorchScript model (nn/script_file.hpp) in the trainer and in checkpoints: the archive is
// embedded (format 2; built-in models keep format 1), a checkpoint rebuilds the model without the
// file with bitwise parameters and identical logits, and resuming from it is bitwise the
// uninterrupted run; the output shape is checked before training; bad archives and failing
// forwards are one-sentence errors. The modules are written in TorchScript from C++
// (torch::jit::Module::define), so this test needs no Python; tests/cli/torch_model_file.sh covers
// modules scripted in Python.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "blr/core/error.hpp"
#include "blr/torch/checkpoint/checkpoint.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/train/trainer.hpp"
#include "error_message.hpp"
#include "temp_dir.hpp"
#include "torch/synthetic_data.hpp"

namespace blr::torch {
namespace {
namespace fs = std::filesystem;
using testing::synthetic_data;

using blr::testing::TempDir;

// A two-layer MLP on 8×8 images with `outputs` logits, as torch.jit.save writes it.
std::shared_ptr<const std::string> mlp_archive(int64_t outputs, int64_t inputs = 64) {
  ::torch::manual_seed(5);
  ::torch::jit::Module m("__torch__.TinyMlp");
  const auto parameter = [&m](const char* name, at::Tensor value) {
    m.register_parameter(name, value.set_requires_grad(true), /*is_buffer=*/false);
  };
  parameter("w1", at::randn({16, inputs}) * 0.2);
  parameter("b1", at::zeros({16}));
  parameter("w2", at::randn({outputs, 16}) * 0.2);
  parameter("b2", at::zeros({outputs}));
  m.define(R"(
def forward(self, x):
    h = torch.relu(torch.addmm(self.b1, x.flatten(1), self.w1.t()))
    return torch.addmm(self.b2, h, self.w2.t())
)");
  std::ostringstream out;
  m.save(out);
  return std::make_shared<const std::string>(out.str());
}

TrainConfig script_config(std::shared_ptr<const std::string> archive) {
  TrainConfig c;
  c.model_file = "tiny.pt";  // never on disk: the trainer takes the archive's bytes
  c.model_archive = std::move(archive);
  c.optimizer = "ivon";
  c.optimizer_options = {{"lr", 0.1}, {"hess_init", 0.5}};
  c.epochs = 4;
  c.batch_size = 32;
  c.seed = 7;
  c.test_samples = 4;
  return c;
}

using blr::testing::error_of;

uint32_t file_version(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[12] = {};
  in.read(header, sizeof header);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(header[8 + i])} << (8 * i);
  return v;
}

TEST(ScriptFile, CheckpointEmbedsTheModuleAndResumesBitwise) {
  at::set_num_threads(1);
  const auto data = synthetic_data(96, 30);
  const auto archive = mlp_archive(10);
  TempDir dir("blr-script-file");
  Trainer full(script_config(archive), data);
  EXPECT_NE(full.result().model_description.find("torchscript tiny.pt (1210 parameters)"),
            std::string::npos)
      << full.result().model_description;
  full.train();
  {
    Trainer first(script_config(archive), data);
    TrainHooks hooks;
    hooks.stop_after_epoch = 2;
    first.train(hooks);
    first.save(dir.file("mid.ckpt"));
  }
  EXPECT_EQ(file_version(dir.file("mid.ckpt")), 2u);
  ::torch::manual_seed(999);
  const auto checkpoint = load_checkpoint(dir.file("mid.ckpt"));
  const auto embedded = checkpoint.model_archive();
  ASSERT_NE(embedded, nullptr);
  EXPECT_EQ(*embedded, *archive);
  Trainer resumed(script_config(embedded), data);
  resumed.restore(checkpoint);
  resumed.train();
  const auto a = full.model().parameters();
  const auto b = resumed.model().parameters();
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "parameter " << i;

  // The final checkpoint alone rebuilds the trained model: bitwise parameters, identical logits.
  full.save(dir.file("final.ckpt"));
  const auto final_checkpoint = load_checkpoint(dir.file("final.ckpt"));
  Trainer loaded(script_config(final_checkpoint.model_archive()), data);
  loaded.restore(final_checkpoint);
  const auto c = loaded.model().parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], c[i])) << "parameter " << i;
  ::torch::NoGradGuard no_grad;
  EXPECT_TRUE(at::equal(full.model().forward(data->test.x), loaded.model().forward(data->test.x)));
  ::torch::manual_seed(4242);
  const auto e1 = full.evaluate(2);
  ::torch::manual_seed(4242);
  const auto e2 = loaded.evaluate(2);
  EXPECT_EQ(e1.mean.nll, e2.mean.nll);
  EXPECT_EQ(e1.predictive.nll, e2.predictive.nll);
}

TEST(ScriptFile, BuiltInModelsKeepFormatOne) {
  const auto data = synthetic_data(32, 8);
  TrainConfig c;
  c.model.kind = "mlp";
  c.model.hidden = {4};
  c.optimizer = "adamw";
  c.epochs = 1;
  Trainer t(c, data);
  TempDir dir("blr-script-file");
  t.save(dir.file("builtin.ckpt"));
  EXPECT_EQ(file_version(dir.file("builtin.ckpt")), 1u);
  const auto checkpoint = load_checkpoint(dir.file("builtin.ckpt"));
  EXPECT_EQ(checkpoint.model_archive(), nullptr);
}

TEST(ScriptFile, OutputShapeIsCheckedBeforeTraining) {
  const auto data = synthetic_data(32, 8);
  const auto message = error_of([&] { Trainer t(script_config(mlp_archive(7)), data); });
  EXPECT_NE(message.find("The model in 'tiny.pt' returns shape [2, 7] for inputs [2, 1, 8, 8]; "
                         "expected [2, 10]"),
            std::string::npos)
      << message;
  // Regression: the targets' shape (N) or (N, 1).
  auto regression = std::make_shared<Dataset>(*data);
  regression->task = Task::kRegression;
  regression->outputs = 1;
  regression->train.y = at::randn({32});
  regression->test.y = at::randn({8});
  regression->test_shifted = {};
  EXPECT_EQ(error_of([&] { Trainer t(script_config(mlp_archive(1)), regression); }),
            blr::testing::kNoError);
  const auto wrong = error_of([&] { Trainer t(script_config(mlp_archive(3)), regression); });
  EXPECT_NE(wrong.find("returns shape [2, 3] for inputs [2, 1, 8, 8]; expected [2]"),
            std::string::npos)
      << wrong;
}

TEST(ScriptFile, FailingForwardIsOneSentenceNamingTheFile) {
  const auto data = synthetic_data(32, 8);
  const auto message =
      error_of([&] { Trainer t(script_config(mlp_archive(10, /*inputs=*/100)), data); });
  EXPECT_NE(message.find("The model in 'tiny.pt' fails on an input batch of shape [2, 1, 8, 8]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("cannot be multiplied"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(ScriptFile, ArchivesThatAreNotModulesAreRefused) {
  const auto load = [](const std::string& bytes) {
    return error_of([&] { load_script_model(std::make_shared<const std::string>(bytes), "m.pt"); });
  };
  EXPECT_NE(load("random bytes, not a zip").find("not a TorchScript archive (not a zip file)"),
            std::string::npos);
  EXPECT_NE(load("").find("is empty"), std::string::npos);
  {  // a zip without TorchScript's records
    std::ostringstream out;
    caffe2::serialize::PyTorchStreamWriter writer([&out](const void* p, size_t n) {
      out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
      return n;
    });
    writer.writeRecord("hello.txt", "hi", 2);
    writer.writeEndOfFile();
    EXPECT_NE(load(out.str()).find("without TorchScript's records"), std::string::npos);
  }
  {  // what torch.save writes: a pickled tensor
    const auto bytes = ::torch::jit::pickle_save(c10::IValue(at::zeros({3})));
    const auto message = load(std::string(bytes.begin(), bytes.end()));
    EXPECT_NE(message.find("written by torch.save"), std::string::npos) << message;
  }
  {  // a module without forward
    ::torch::jit::Module m("__torch__.NoForward");
    m.register_parameter("w", at::ones({2}), false);
    m.define("def predict(self, x):\n    return x * self.w\n");
    std::ostringstream out;
    m.save(out);
    EXPECT_NE(load(out.str()).find("has no forward method"), std::string::npos);
  }
  {  // truncated archive: LibTorch's reader refuses it, reduced to one sentence
    const auto bytes = mlp_archive(10);
    const auto message = load(bytes->substr(0, bytes->size() / 2));
    EXPECT_NE(message.find("The model file 'm.pt' is not"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  TempDir dir("blr-script-file");
  EXPECT_NE(error_of([&] { read_model_file(dir.file("absent.pt")); }).find("Cannot open"),
            std::string::npos);
  {
    std::ofstream(dir.file("huge.pt")).close();
    fs::resize_file(dir.file("huge.pt"), kMaxModelFileBytes + 1);  // sparse
    EXPECT_NE(error_of([&] { read_model_file(dir.file("huge.pt")); }).find("more than the"),
              std::string::npos);
  }
}

TEST(ScriptFile, BuiltInOnlyOptimizersAreRefused) {
  for (const char* name : {"mc-dropout", "bayesbinn", "ste"}) {
    TrainConfig c = script_config(mlp_archive(10));
    c.optimizer = name;
    c.optimizer_options = {};
    EXPECT_NE(error_of([&] { c.validate(); }).find("needs one of blr's own models"),
              std::string::npos)
        << name;
  }
}

}  // namespace
}  // namespace blr::torch
