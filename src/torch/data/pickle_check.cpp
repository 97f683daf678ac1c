// The pickle check (pickle_check.hpp): the protocol-2 opcodes LibTorch's Unpickler reads, each
// with the arguments it takes and its effect on the stack, the marks and the memo.
#include "blr/torch/data/pickle_check.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace blr::torch {
namespace {

// One pass over the stream: `problem_` is set by the first violation and ends the walk.
class PickleWalk {
 public:
  PickleWalk(const char* data, size_t size)
      : data_(reinterpret_cast<const unsigned char*>(data)), size_(size) {}

  std::string problem() {
    if (size_ < 2 || data_[0] != 0x80 || data_[1] != 2) {
      return "does not start with PROTO 2 (the protocol torch.save writes)";
    }
    position_ = 2;
    while (problem_.empty()) {
      if (position_ >= size_) return "ends before its STOP opcode";
      opcode_at_ = position_;
      if (step(data_[position_++])) break;  // STOP
    }
    return problem_;
  }

 private:
  // Returns true at STOP.
  bool step(unsigned char opcode) {
    switch (opcode) {
      case 0x2e:  // STOP
        if (!marks_.empty()) fail(fmt::format("leaves {} mark(s) open", marks_.size()));
        else if (depth_ != 1) fail(fmt::format("leaves {} items on the stack, not 1", depth_));
        return true;
      case 0x28: marks_.push_back(depth_); break;                          // MARK
      case 0x5d: case 0x29: case 0x7d: case 0x88: case 0x89: case 0x4e:   // empty list, tuple,
        push(1);                                                           // dict; True, False,
        break;                                                             // None
      case 0x4b: argument(1) && push(1); break;                           // BININT1
      case 0x4d: argument(2) && push(1); break;                           // BININT2
      case 0x4a: argument(4) && push(1); break;                           // BININT
      case 0x47: argument(8) && push(1); break;                           // BINFLOAT
      case 0x8a:                                                          // LONG1 (8 bytes only)
        if (argument(1) && check(value(1) == 8, "has a length other than 8")) {
          argument(8) && push(1);
        }
        break;
      case 0x58: argument(4) && argument(value(4)) && push(1); break;     // BINUNICODE
      case 0x63: line() && line() && push(1); break;                      // GLOBAL
      case 0x68: argument(1) && get(value(1)); break;                     // BINGET
      case 0x6a: argument(4) && get(value(4)); break;                     // LONG_BINGET
      case 0x71: argument(1) && put(value(1)); break;                     // BINPUT
      case 0x72: argument(4) && put(value(4)); break;                     // LONG_BINPUT
      case 0x74: case 0x6c: close_mark() && push(1); break;               // TUPLE, LIST
      case 0x64:                                                          // DICT
        close_mark() && even() && push(1);
        break;
      case 0x65: close_mark() && container_below(); break;                // APPENDS
      case 0x75: close_mark() && even() && container_below(); break;      // SETITEMS
      case 0x73: pop(3) && push(1); break;                                // SETITEM
      case 0x85: pop(1) && push(1); break;                                // TUPLE1
      case 0x86: pop(2) && push(1); break;                                // TUPLE2
      case 0x87: pop(3) && push(1); break;                                // TUPLE3
      case 0x81: case 0x62: case 0x52: pop(2) && push(1); break;          // NEWOBJ, BUILD, REDUCE
      case 0x51: pop(1) && push(1); break;                                // BINPERSID
      default:
        fail("is not one that LibTorch reads");
    }
    return false;
  }

  bool fail(const std::string& what) {
    if (problem_.empty()) {
      problem_ = fmt::format("opcode 0x{:02x} at byte {} {}", data_[opcode_at_], opcode_at_, what);
    }
    return false;
  }
  bool check(bool ok, const std::string& what) { return ok || fail(what); }

  // The next n bytes as this opcode's argument; `value` reads them back, little-endian.
  bool argument(uint64_t n) {
    if (n > size_ - position_) {
      return fail(fmt::format("states {} bytes where {} remain", n, size_ - position_));
    }
    last_ = position_;
    position_ += n;
    return true;
  }
  uint64_t value(int bytes) const {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{data_[last_ + i]} << (8 * i);
    return v;
  }
  bool line() {
    for (size_t i = position_; i < size_; ++i) {
      if (data_[i] == '\n') {
        position_ = i + 1;
        return true;
      }
    }
    return fail("has a name without its newline");
  }

  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  bool push(size_t n) {
    depth_ += n;
    return true;
  }
  bool pop(size_t n) {
    if (depth_ - floor() < n) {
      return fail(fmt::format("needs {} items on the stack above its mark and has {}", n,
                              depth_ - floor()));
    }
    depth_ -= n;
    return true;
  }
  bool close_mark() {
    if (marks_.empty()) return fail("closes a mark that was never set");
    closed_ = depth_ - marks_.back();
    depth_ = marks_.back();
    marks_.pop_back();
    return true;
  }
  bool even() { return check(closed_ % 2 == 0, "has a key without its value"); }
  bool container_below() {
    return check(depth_ > floor(), "has no list or dict below its mark to add to");
  }
  bool get(uint64_t slot) {
    return check(slot < memo_, fmt::format("reads memo slot {} of {}", slot, memo_)) && push(1);
  }
  // LibTorch fills the memo up to the slot written: only the next slot, or one in use.
  bool put(uint64_t slot) {
    if (!check(depth_ > 0, "memoises an empty stack") ||
        !check(slot <= memo_, fmt::format("writes memo slot {} of {}", slot, memo_))) {
      return false;
    }
    if (slot == memo_) ++memo_;
    return true;
  }

  const unsigned char* data_;
  size_t size_;
  size_t position_ = 0;
  size_t opcode_at_ = 0;
  size_t last_ = 0;
  size_t depth_ = 0;
  size_t closed_ = 0;
  uint64_t memo_ = 0;
  std::vector<size_t> marks_;
  std::string problem_;
};

}  // namespace

std::string pickle_problem(const char* data, size_t size) {
  return PickleWalk(data, size).problem();
}

}  // namespace blr::torch
