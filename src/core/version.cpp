// Library version string.
#include "blr/core/version.hpp"

namespace blr {
const char* version() { return "0.1.0"; }
}  // namespace blr
