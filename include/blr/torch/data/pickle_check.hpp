// A check of a pickle stream before LibTorch's Unpickler reads it (used by the tensor-file reader).
//
// LibTorch 1.13's Unpickler trusts the stream: REDUCE on a stack of one item swaps with the slot
// before the stack, a mark above the stack makes TUPLE copy from beyond it, an odd DICT reads one
// item past the end, a BINUNICODE or LONG_BINPUT reserves whatever size its argument states
// (found by fuzz/harness/tensor_file.cpp: heap corruption, aborts in ~IValue, 2 GB strings). The
// check walks the opcodes LibTorch reads (protocol 2) with their stack effects and refuses, in
// one clause, any stream that would underflow the stack or a mark, leave a mark unclosed, read an
// argument past the end, or name a memo slot that does not exist. It reads nothing else, so what
// it accepts, LibTorch unpickles as before.
#pragma once

#include <cstddef>
#include <string>

namespace blr::torch {

/// An empty string when the stream is well formed; else a clause naming the problem and where
/// ("opcode 0x52 at byte 5 needs 2 items on the stack above its mark and has 1").
std::string pickle_problem(const char* data, size_t size);

}  // namespace blr::torch
