// Fuzz harness: the saved JSON state of the rule (include/blr/rule/state_io.hpp).
//
// The first byte chooses the family (gaussian_fixed, gaussian_diag, gaussian_full); the rest is
// the JSON text given to load_state. Properties checked for an accepted state: the step is not
// negative, every number is finite, the sizes agree (precision and gradient average with the
// mean, the previous q with the current one), and save_state → load_state gives the state back
// bit for bit.
#include <cstdint>
#include <string>

#include "blr/rule/state_io.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace blr;
using blr::fuzz::accepted;
using blr::fuzz::require;

template <class Q>
Vector precision_values(const Q& q) {
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    return q.precision.lower().reshaped();
  } else {
    return q.precision;
  }
}

template <class Q>
void check_q(const Q& q, const char* which) {
  const std::string w = which;
  require(q.mean.allFinite(), w + ": an accepted mean is not finite");
  const Vector p = precision_values(q);
  require(p.allFinite(), w + ": an accepted precision is not finite");
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    require(q.precision.dimension() == q.mean.size(), w + ": precision and mean sizes differ");
  } else {
    require(p.size() == q.mean.size(), w + ": precision and mean sizes differ");
  }
}

template <class Q>
bool same(const Q& a, const Q& b) {
  return a.mean.size() == b.mean.size() && (a.mean.array() == b.mean.array()).all() &&
         precision_values(a).size() == precision_values(b).size() &&
         (precision_values(a).array() == precision_values(b).array()).all();
}

template <class Q>
void run(const std::string& text) {
  RuleState<Q> s;
  if (!accepted([&] { s = load_state<Q>(text); })) return;
  require(s.step >= 0, "an accepted state has a negative step");
  check_q(s.q, "q");
  require(s.gradient_average.allFinite(), "an accepted gradient average is not finite");
  require(s.gradient_average.size() == 0 || s.gradient_average.size() == s.q.mean.size(),
          "the gradient average and the mean differ in size");
  if (s.has_previous) {
    check_q(s.previous, "previous");
    require(s.previous.mean.size() == s.q.mean.size(), "previous and current q differ in size");
  }
  RuleState<Q> r;
  require(accepted([&] { r = load_state<Q>(save_state(s)); }),
          "a saved state cannot be loaded again");
  require(r.step == s.step && r.has_previous == s.has_previous && same(r.q, s.q) &&
              (!s.has_previous || same(r.previous, s.previous)) &&
              r.gradient_average.size() == s.gradient_average.size() &&
              (r.gradient_average.array() == s.gradient_average.array()).all(),
          "save_state/load_state does not give the state back bit for bit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      run<GaussianFixed>(text);
      break;
    case 1:
      run<GaussianDiag>(text);
      break;
    default:
      run<GaussianFull>(text);
      break;
  }
  return 0;
}
