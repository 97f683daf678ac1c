// All candidate families in one include: the exponential families of family.hpp (Gaussian with
// fixed, diagonal or full precision; Bernoulli on {−1,+1}; categorical; beta; gamma; Dirichlet),
// the Gaussian mixture of §3.2 and the spike-and-slab of §4.3.
#pragma once

#include "blr/family/bernoulli.hpp"
#include "blr/family/beta.hpp"
#include "blr/family/categorical.hpp"
#include "blr/family/dirichlet.hpp"
#include "blr/family/family.hpp"
#include "blr/family/gamma.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/family/mixture.hpp"
#include "blr/family/spike_and_slab.hpp"

namespace blr {
static_assert(ExponentialFamily<GaussianFixed>);
static_assert(ExponentialFamily<GaussianDiag>);
static_assert(ExponentialFamily<GaussianFull>);
static_assert(ExponentialFamily<Bernoulli>);
static_assert(ExponentialFamily<Categorical>);
static_assert(ExponentialFamily<Beta>);
static_assert(ExponentialFamily<Gamma>);
static_assert(ExponentialFamily<Dirichlet>);
}  // namespace blr
