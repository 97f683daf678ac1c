// The blr version.
#pragma once

namespace blr {
/// Semantic version of the library, e.g. "0.1.0".
const char* version();
}  // namespace blr
