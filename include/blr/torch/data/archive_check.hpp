// A check of a LibTorch zip archive before LibTorch reads it: torch.save tensor files
// (data/tensor_file.hpp), TorchScript model files (nn/script_file.hpp) and the payload of
// checkpoints (checkpoint.hpp).
//
// LibTorch's zip reader allocates each record at the size the central directory claims before
// inflating it, and its unpickler sizes storages and places tensors wherever the pickle says
// (pickle_check.hpp). So before LibTorch sees the bytes, the central directory is read here:
// every record must be stored uncompressed (as LibTorch and torch.save write them), lie inside
// the archive and be named once, which bounds every allocation of LibTorch's zip reader by the
// archive's size. Then every pickle LibTorch reads — data.pkl (storages in data/), constants.pkl
// (storages in constants/) and the *.debug_pkl source maps (no storages) — must pass the pickle
// check, each storage fitting its record and each tensor its storage. Zip64 archives (more than
// 4 GiB) are read too.
#pragma once

#include <string>

namespace blr::torch {

/// An empty string when LibTorch may read the archive in `bytes`; else a clause naming the
/// problem ("its record 'data.pkl' is malformed: opcode 0x71 at byte 3 writes memo slot 21 of 0").
std::string archive_problem(const std::string& bytes);

}  // namespace blr::torch
