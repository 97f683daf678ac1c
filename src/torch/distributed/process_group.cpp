// Rendezvous and bucketed all-reduce on c10d's Gloo process group (process_group.hpp).
//
// c10d's Gloo header includes Gloo's own headers, which Debian's libtorch-dev ships and PyTorch's
// wheels do not. Built against a LibTorch without them (the GPU check builds against a wheel),
// the rest of blr works and a process group of more than one rank is refused in one sentence.
#include "blr/torch/distributed/process_group.hpp"

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if __has_include(<gloo/algorithm.h>)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#define BLR_HAS_GLOO 1
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define BLR_HAS_GLOO 0
#endif

#include <c10/util/Logging.h>
#include <dlfcn.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <type_traits>

#include "blr/core/error.hpp"

namespace blr::torch::distributed {

namespace {

using Clock = std::chrono::steady_clock;

/// c10's log level: a gflags flag (global namespace) in Debian's LibTorch, c10's own elsewhere.
auto& c10_log_level() {
  using namespace c10;  // NOLINT: finds c10::FLAGS_caffe2_log_level where gflags is not used
  return FLAGS_caffe2_log_level;
}

/// While alive, LibTorch logs nothing below FATAL: TCPStore writes each failed bind as a warning
/// (glog's "W… socket.cpp:426]" lines, with "Logging before InitGoogleLogging()", in Debian's
/// LibTorch; c10's own "[W socket.cpp…]" in PyTorch's wheels) before blr's sentence says the
/// same once. glog's level is found at run time (dlsym), as LibTorch links glog only in some
/// builds; c10's level exists in all.
class QuietLibTorchLog {
 public:
  QuietLibTorchLog()
      : glog_(static_cast<int32_t*>(dlsym(RTLD_DEFAULT, "_ZN3fLI17FLAGS_minloglevelE"))),
        c10_level_(c10_log_level()) {
    constexpr int kFatal = 3;
    c10_log_level() = kFatal;
    if (glog_ != nullptr) {
      glog_level_ = *glog_;
      *glog_ = kFatal;
    }
  }
  ~QuietLibTorchLog() {
    c10_log_level() = static_cast<std::remove_reference_t<decltype(c10_log_level())>>(c10_level_);
    if (glog_ != nullptr) *glog_ = glog_level_;
  }
  QuietLibTorchLog(const QuietLibTorchLog&) = delete;
  QuietLibTorchLog& operator=(const QuietLibTorchLog&) = delete;

 private:
  int32_t* glog_;
  int32_t glog_level_ = 0;
  int64_t c10_level_;
};

/// The integer value of environment variable `name`, or nullopt when unset; an Error when it is
/// not an integer in [lo, hi].
std::optional<long> integer_variable(const char* name, long lo, long hi) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  check(*text != '\0' && *end == '\0' && errno == 0 && value >= lo && value <= hi,
        fmt::format("The environment variable {} must be an integer in [{}, {}]; it is '{}'.",
                    name, lo, hi, text));
  return value;
}

/// The first line of an exception message (c10::Error appends a C++ backtrace).
std::string first_line(const char* what) {
  std::string s(what);
  const auto eol = s.find('\n');
  return eol == std::string::npos ? s : s.substr(0, eol);
}

bool is_loopback(const std::string& address) {
  return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

}  // namespace

std::optional<Environment> environment_from_variables() {
  const auto rank = integer_variable("RANK", 0, 65535);
  const auto world = integer_variable("WORLD_SIZE", 1, 65536);
  if (!rank && !world) return std::nullopt;
  check(rank && world, fmt::format("The environment sets {} but not {}; a data-parallel run needs "
                                   "both (as torchrun and blr launch set them).",
                                   rank ? "RANK" : "WORLD_SIZE", rank ? "WORLD_SIZE" : "RANK"));
  check(*rank < *world, fmt::format("The environment variable RANK is {}, but WORLD_SIZE is {}; "
                                    "ranks run from 0 to WORLD_SIZE - 1.",
                                    *rank, *world));
  Environment env;
  env.rank = static_cast<int>(*rank);
  env.world_size = static_cast<int>(*world);
  env.local_rank = static_cast<int>(integer_variable("LOCAL_RANK", 0, 65535).value_or(*rank));
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr) {
    check(*addr != '\0', "The environment variable MASTER_ADDR is empty; set it to rank 0's "
                         "address (127.0.0.1 for one machine).");
    env.master_addr = addr;
  }
  if (const char* file = std::getenv("BLR_RENDEZVOUS_FILE"); file != nullptr) {
    check(*file != '\0', "The environment variable BLR_RENDEZVOUS_FILE is empty; blr launch sets "
                          "it to the rendezvous file of its ranks.");
    env.store_file = file;
    return env;
  }
  if (const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE"); agent != nullptr) {
    env.agent_store = std::string(agent) == "True";
    env.restart_count =
        static_cast<int>(integer_variable("TORCHELASTIC_RESTART_COUNT", 0, 1 << 30).value_or(0));
  }
  const auto port = integer_variable("MASTER_PORT", 1, 65535);
  check(port.has_value() || env.world_size == 1,
        "The environment sets RANK and WORLD_SIZE but not MASTER_PORT, the port of rank 0's "
        "rendezvous store.");
  if (port) env.master_port = static_cast<int>(*port);
  return env;
}

bool distributed_available() {
  return BLR_HAS_GLOO != 0;
}

#if BLR_HAS_GLOO
using GlooGroup = c10d::ProcessGroupGloo;
#else
using GlooGroup = c10d::ProcessGroup;  // never constructed: make_gloo refuses
#endif

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<GlooGroup> group;
};

namespace {

c10::intrusive_ptr<GlooGroup> make_gloo(c10::intrusive_ptr<c10d::Store> store, int rank,
                                        int world, std::chrono::milliseconds timeout,
                                        const std::string& host) {
#if !BLR_HAS_GLOO
  (void)store, (void)rank, (void)world, (void)timeout, (void)host;
  throw Error(
      "This blr was built against a LibTorch without Gloo's headers (PyTorch's wheels ship none), "
      "so it cannot run more than one rank; build it against Debian's libtorch-dev for "
      "distributed training.");
#else
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else if (is_loopback(host)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  options->threads = 2;
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("blr", std::move(store));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, world, options);
#endif
}

}  // namespace

ProcessGroup::ProcessGroup(const Environment& env, std::chrono::milliseconds timeout,
                           int64_t bucket_bytes)
    : impl_(std::make_unique<Impl>()),
      rank_(env.rank),
      world_size_(env.world_size),
      timeout_(timeout),
      bucket_bytes_(bucket_bytes) {
  check(bucket_bytes > 0, "The all-reduce bucket size must be positive.");
  try {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(env.master_port);
    o.isServer = env.rank == 0 && !env.agent_store;
    o.numWorkers = static_cast<std::size_t>(env.world_size);
    o.waitWorkers = true;
    o.timeout = timeout;
    const QuietLibTorchLog quiet;  // the failure is blr's sentence below, once
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
    if (env.agent_store) {
      impl_->store = c10::make_intrusive<c10d::PrefixStore>(
          fmt::format("/worker/attempt_{}", env.restart_count), impl_->store);
    }
    impl_->group = make_gloo(impl_->store, rank_, world_size_, timeout, env.master_addr);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format(
        "Rank {} of {} could not meet the others at {}:{} within {} s (is every rank started, "
        "and the port free?): {}",
        rank_, world_size_, env.master_addr, env.master_port, timeout.count() / 1000.0,
        first_line(e.what())));
  }
}

ProcessGroup::ProcessGroup(const std::string& store_path, int rank, int world_size,
                           std::chrono::milliseconds timeout, int64_t bucket_bytes)
    : impl_(std::make_unique<Impl>()),
      rank_(rank),
      world_size_(world_size),
      timeout_(timeout),
      bucket_bytes_(bucket_bytes) {
  check(bucket_bytes > 0, "The all-reduce bucket size must be positive.");
  try {
    impl_->store = c10::make_intrusive<c10d::FileStore>(store_path, world_size);
    impl_->store->setTimeout(timeout);
    impl_->group = make_gloo(impl_->store, rank, world_size, timeout, "127.0.0.1");
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("Rank {} of {} could not meet the others through '{}' within {} s: {}",
                            rank, world_size, store_path, timeout.count() / 1000.0,
                            first_line(e.what())));
  }
}

ProcessGroup::~ProcessGroup() {
  if (impl_ && !impl_->group) {
    // A failed collective: the group was abandoned in fail(); so is the store (its server thread
    // may serve a peer that is gone).
    (void)impl_->store.release();
  }
}

void ProcessGroup::fail(const std::string& operation, const std::exception& e) {
  // Abandon the group: destroying it would join threads that may still wait on the lost peer.
  (void)impl_->group.release();
  throw Error(fmt::format(
      "Rank {} of {}: the {} failed: another rank died or did not answer within {} s "
      "(--dist-timeout): {}",
      rank_, world_size_, operation, timeout_.count() / 1000.0, first_line(e.what())));
}

void ProcessGroup::sum(const std::vector<::at::Tensor>& tensors, double weight) {
  check(impl_->group, fmt::format("Rank {}: the process group failed earlier.", rank_));
  const auto t0 = Clock::now();
  ::at::NoGradGuard no_grad;
  // Buckets: consecutive tensors of one dtype and device, at most bucket_bytes_ each.
  struct Bucket {
    std::vector<size_t> members;
    int64_t bytes = 0;
  };
  std::vector<Bucket> buckets;
  std::map<std::pair<int, std::string>, size_t> open;  // (dtype, device) → its open bucket
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    check(t.defined(), fmt::format("Rank {}: tensor {} of an all-reduce is undefined.", rank_, i));
    const int64_t bytes = t.numel() * static_cast<int64_t>(t.element_size());
    const auto key = std::make_pair(static_cast<int>(t.scalar_type()), t.device().str());
    auto it = open.find(key);
    if (it == open.end() || buckets[it->second].bytes + bytes > bucket_bytes_) {
      buckets.emplace_back();
      it = open.insert_or_assign(key, buckets.size() - 1).first;
    }
    buckets[it->second].members.push_back(i);
    buckets[it->second].bytes += bytes;
  }
  std::vector<::at::Tensor> flats(buckets.size());
  int64_t bytes = 0;
  std::vector<c10::intrusive_ptr<c10d::Work>> works(buckets.size());
  try {
    for (size_t b = 0; b < buckets.size(); ++b) {
      std::vector<::at::Tensor> parts;
      for (const size_t i : buckets[b].members) parts.push_back(tensors[i].reshape({-1}));
      flats[b] = parts.size() == 1 ? parts[0].clone() : ::at::cat(parts);
      if (weight != 1.0) flats[b].mul_(weight);
      std::vector<::at::Tensor> one{flats[b]};
      c10d::AllreduceOptions options;
      options.reduceOp = c10d::ReduceOp::SUM;
      works[b] = impl_->group->allreduce(one, options);
      bytes += buckets[b].bytes;
    }
    for (auto& w : works) w->wait(timeout_);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail("all-reduce", e);
  }
  for (size_t b = 0; b < buckets.size(); ++b) {
    int64_t offset = 0;
    for (const size_t i : buckets[b].members) {
      const auto& t = tensors[i];
      const int64_t n = t.numel();
      t.copy_(flats[b].narrow(0, offset, n).view(t.sizes()));
      offset += n;
    }
  }
  if (counting_) {
    stats_.calls += 1;
    stats_.buckets += static_cast<int64_t>(buckets.size());
    stats_.bytes += bytes;
    stats_.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }
}

void ProcessGroup::sum_uncounted(const std::vector<::at::Tensor>& tensors, double weight) {
  counting_ = false;
  try {
    sum(tensors, weight);
  } catch (...) {
    counting_ = true;
    throw;
  }
  counting_ = true;
}

void ProcessGroup::agree(const std::string& topic,
                         const std::vector<std::pair<std::string, std::string>>& values) {
  check(impl_->store, fmt::format("Rank {}: the process group failed earlier.", rank_));
  // One line per value; the store holds bytes, and names and values hold no line breaks.
  auto encode = [](const std::vector<std::pair<std::string, std::string>>& pairs) {
    std::string text;
    for (const auto& [name, value] : pairs) text += name + '=' + value + '\n';
    return std::vector<uint8_t>(text.begin(), text.end());
  };
  const std::string key = fmt::format("blr/agree/{}", topic);
  std::vector<uint8_t> reference;
  try {
    if (rank_ == 0) impl_->store->set(key, encode(values));
    reference = impl_->store->get(key);  // waits for rank 0, at most the store's timeout
  } catch (const std::exception& e) {
    throw Error(fmt::format("Rank {} of {} could not compare its configuration with rank 0's "
                            "within {} s: {}",
                            rank_, world_size_, timeout_.count() / 1000.0, first_line(e.what())));
  }
  auto verdict_key = [&](int rank) { return fmt::format("{}/verdict/{}", key, rank); };
  auto as_text = [](const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); };
  try {
    if (rank_ == 0) {
      // Rank 0 waits for every rank's verdict, so that it stops with the same sentence.
      for (int r = 1; r < world_size_; ++r) {
        const std::string verdict = as_text(impl_->store->get(verdict_key(r)));
        check(verdict == "ok", verdict);
      }
      return;
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("Rank 0 of {} did not hear from every rank within {} s whether their "
                            "configurations match: {}",
                            world_size_, timeout_.count() / 1000.0, first_line(e.what())));
  }
  std::map<std::string, std::string> theirs;
  const std::string text = as_text(reference);
  for (size_t start = 0, eol; (eol = text.find('\n', start)) != std::string::npos; start = eol + 1) {
    const std::string line = text.substr(start, eol - start);
    const auto eq = line.find('=');
    theirs[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  std::string verdict = "ok";
  for (const auto& [name, value] : values) {
    const auto it = theirs.find(name);
    const std::string other = it == theirs.end() ? "(not set)" : it->second;
    if (other != value) {
      verdict = fmt::format(
          "Rank {} of {} was started with {} = {}, but rank 0 with {} = {}; every rank of a "
          "data-parallel run must be started with the same configuration.",
          rank_, world_size_, name, value, name, other);
      break;
    }
  }
  try {
    const std::string& v = verdict;
    impl_->store->set(verdict_key(rank_), std::vector<uint8_t>(v.begin(), v.end()));
  } catch (const std::exception&) {
    // Rank 0 is gone; this rank's own sentence (or the next collective) says what happened.
  }
  check(verdict == "ok", verdict);
}

void ProcessGroup::barrier() {
  check(impl_->group, fmt::format("Rank {}: the process group failed earlier.", rank_));
  try {
    c10d::BarrierOptions options;
    options.timeout = timeout_;
    impl_->group->barrier(options)->wait(timeout_);
  } catch (const std::exception& e) {
    fail("barrier", e);
  }
}

std::shared_ptr<ProcessGroup> process_group_from_environment(double timeout_seconds) {
  check(timeout_seconds > 0 && std::isfinite(timeout_seconds) && timeout_seconds <= 86400,
        fmt::format("Option '--dist-timeout' must be a number of seconds in (0, 86400]; got {}.",
                    timeout_seconds));
  const auto env = environment_from_variables();
  if (!env || env->world_size == 1) return nullptr;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000.0));
  if (!env->store_file.empty()) {
    return std::make_shared<ProcessGroup>(env->store_file, env->rank, env->world_size, timeout);
  }
  return std::make_shared<ProcessGroup>(*env, timeout);
}

}  // namespace blr::torch::distributed
