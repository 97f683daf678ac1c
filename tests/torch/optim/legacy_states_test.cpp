// Every optimizer's state now starts with the versioned header (state_archive.hpp: format
// version, name, step, groups and their parameter counts), STE's and MC dropout's included
// (issue 32, item 1). States those two saved before it (kept in legacy_states/, written by
// blr.STE and blr.MCDropout on 2026-11-29 before the change) still load, every tensor as it was
// saved; a state saved now carries version 1, loads back bitwise, and one for other parameters is
// refused in one sentence before any tensor is read.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/serialize/archive.h>

#include <filesystem>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/optim/mc_dropout.hpp"
#include "blr/torch/optim/ste.hpp"
#include "option_helpers.hpp"

namespace blr::torch {
namespace legacy_states_test {

namespace fs = std::filesystem;

std::string legacy(const std::string& name) {
  return (fs::path(__FILE__).parent_path() / "legacy_states" / name).string();
}

/// The tensor stored under `key` in the archive file `path`.
at::Tensor stored(const std::string& path, const std::string& key) {
  ::torch::serialize::InputArchive in;
  in.load_from(path);
  at::Tensor t;
  in.read(key, t);
  return t;
}

int64_t format_version(::torch::serialize::OutputArchive& out) {
  std::string bytes;
  out.save_to([&](const void* data, size_t n) {
    bytes.append(static_cast<const char*>(data), n);
    return n;
  });
  ::torch::serialize::InputArchive in;
  in.load_from(bytes.data(), bytes.size());
  c10::IValue v;
  return in.try_read("blr/format_version", v) ? v.toInt() : -1;
}

/// The parameters the legacy states were saved for: a 3×4 weight and a bias of 3 (float32).
std::vector<at::Tensor> parameters() {
  return {at::zeros({3, 4}).requires_grad_(), at::zeros({3}).requires_grad_()};
}

/// Loads the legacy file `file` into `loaded`, checks that the state `read(loaded)` reads is the
/// archive's tensors under group0/param<i>/<key>, then saves it as version 1, loads that back
/// bitwise, and has a state for other parameters refused in one sentence naming the counts.
template <class Optimizer, class Read>
void loads_legacy_and_round_trips(Optimizer& loaded, const typename Optimizer::Options& options,
                                  const std::string& file, const std::string& key, Read read) {
  ::torch::serialize::InputArchive legacy_in;
  legacy_in.load_from(legacy(file));
  loaded.load(legacy_in);
  const std::vector<at::Tensor> state = read(loaded);
  for (size_t i = 0; i < state.size(); ++i) {
    EXPECT_TRUE(
        state[i].equal(stored(legacy(file), "group0/param" + std::to_string(i) + "/" + key)))
        << file << " " << i;
  }
  ::torch::serialize::OutputArchive out;
  loaded.save(out);
  EXPECT_EQ(format_version(out), 1) << file;
  const std::string path = (fs::temp_directory_path() / ("blr_legacy_" + file)).string();
  out.save_to(path);
  Optimizer again(parameters(), options);
  ::torch::serialize::InputArchive in;
  in.load_from(path);
  again.load(in);
  EXPECT_EQ(again.step_count(), loaded.step_count()) << file;
  const auto reloaded = read(again);
  for (size_t i = 0; i < state.size(); ++i) EXPECT_TRUE(reloaded[i].equal(state[i])) << file << i;
  // A state for other parameters: one sentence naming the counts, before any tensor is read.
  Optimizer other({at::zeros({3, 4}).requires_grad_()}, options);
  ::torch::serialize::InputArchive in2;
  in2.load_from(path);
  try {
    other.load(in2);
    ADD_FAILURE() << file << ": a state of two parameters loaded into one";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("2 parameters in group 0"), std::string::npos) << m;
  }
  fs::remove(path);
}

TEST(LegacyStates, AnUnversionedSteStateLoadsAndSavesVersioned) {
  const auto options = make_options<SteOptions>({{"lr", 0.01}});
  Ste ste(parameters(), options);
  loads_legacy_and_round_trips(ste, options, "ste_unversioned.pt", "latent",
                               [](const Ste& o) { return o.latent(); });
  EXPECT_EQ(ste.step_count(), 0);  // unversioned states kept no step counter
}

TEST(LegacyStates, AnUnversionedMcDropoutStateLoadsAndSavesVersioned) {
  const auto options = make_options<McDropoutOptions>({{"lr", 0.01}, {"seed", int64_t{3}}});
  McDropout dropout(parameters(), options);
  loads_legacy_and_round_trips(dropout, options, "mc_dropout_unversioned.pt", "mean",
                               [](const McDropout& o) { return o.slab_mean(); });
  EXPECT_EQ(dropout.step_count(), 2);  // the two steps blr.MCDropout took
}

}  // namespace legacy_states_test
}  // namespace blr::torch
