// A check of a pickle stream before LibTorch's Unpickler reads it (used for every pickle of the
// archives blr reads: torch.save tensor files, TorchScript model files and checkpoints, through
// archive_check.hpp).
//
// LibTorch 1.13's Unpickler trusts the stream: REDUCE on a stack of one item swaps with the slot
// before the stack, a mark above the stack makes TUPLE copy from beyond it, an odd DICT reads one
// item past the end, a BINUNICODE or LONG_BINPUT reserves whatever size its argument states
// (found by fuzz/harness/tensor_file.cpp: heap corruption, aborts in ~IValue, 2 GB strings). It
// also sizes a storage by the element count its persistent id states, whatever its record holds,
// and rebuilds a tensor from the offset, sizes and strides the stream states without checking
// them against the storage (over-reads found by the same harness).
//
// The check walks the opcodes LibTorch reads (protocol 2) with their stack effects, keeping the
// strings, integers, globals and tuples it sees (through the memo too), and refuses, in one
// clause, any stream that would underflow the stack or a mark, leave a mark unclosed, read an
// argument past the end, or name a memo slot that does not exist; any storage (persistent id
// ('storage', torch.<Type>Storage, key, location, n)) whose n elements do not fit the record that
// holds it; and any tensor (torch._utils._rebuild_tensor_v2(storage, offset, sizes, strides, ...))
// that reaches beyond its storage: offset + Σ (size_i − 1)·stride_i < n, with offset, sizes and
// strides ≥ 0. Quantized and sparse tensors are refused (blr reads dense tensors only). It reads
// nothing else, so what it accepts, LibTorch unpickles as before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace blr::torch {

/// The size in bytes of the record that holds the storage `key` (nullopt: no such record).
using StorageRecordSize = std::function<std::optional<uint64_t>(const std::string& key)>;

/// An empty string when the stream is well formed; else a clause naming the problem and where
/// ("opcode 0x52 at byte 5 needs 2 items on the stack above its mark and has 1"). Without
/// `record_size`, storages are checked against their stated size only, not against records.
std::string pickle_problem(const char* data, size_t size,
                           const StorageRecordSize& record_size = {});

}  // namespace blr::torch
