// One run per output directory: an advisory lock on `--out DIR`.
//
// Two runs writing the same directory would replace each other's checkpoints, results and plots
// (the reliability audit's D8). The run that writes DIR holds flock(2) on DIR/.blr.lock, which
// records its process id, from the moment its options are parsed to its end; a second run with
// the same --out is refused at once in one sentence naming that process. The kernel drops the
// lock when the holder exits, however it exits (kill -9 included), so no stale lock is ever left;
// the file itself stays, empty of meaning until the next run locks it.
#pragma once

#include <string>

namespace blr::cli {

/// Creates `dir` (and its parents) when missing and locks DIR/.blr.lock for the rest of this
/// process; throws blr::Error naming the holder when another process holds it, or when the lock
/// file is a symbolic link or cannot be opened. Called once per process (preflight.hpp).
void lock_output_directory(const std::string& dir);

}  // namespace blr::cli
