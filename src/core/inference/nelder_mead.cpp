// The option table of the Nelder–Mead minimiser (nelder_mead.hpp): `blr infer kalman --fit`'s
// flags, blr.infer.structural's keywords and the registry's documentation come from it.
#include "blr/inference/nelder_mead.hpp"

namespace blr::inference {

const OptionTable<NelderMeadOptions>& NelderMeadOptions::table() {
  using O = NelderMeadOptions;
  static const OptionTable<O> t =
      OptionTable<O>("Nelder–Mead")
          .number("initial_step", &O::initial_step, Range::positive(),
                  "the first simplex's edge along each axis")
          .integer("max_evaluations", &O::max_evaluations, Range::between(1, 1e9),
                   "evaluations of the objective at most; a fit that stops there unconverged is "
                   "refused")
          .number("f_tolerance", &O::f_tolerance, Range::positive(),
                  "stop when the simplex's values span less than this")
          .number("x_tolerance", &O::x_tolerance, Range::positive(),
                  "and its vertices lie this close together");
  return t;
}

void NelderMeadOptions::validate() const {
  table().validate(*this);
}

}  // namespace blr::inference
