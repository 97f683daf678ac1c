// The pickle check (pickle_check.hpp): the protocol-2 opcodes LibTorch's Unpickler reads, each
// with the arguments it takes and its effect on the stack, the marks and the memo; the values
// that name storages and rebuild tensors are kept, so that both can be checked.
#include "blr/torch/data/pickle_check.hpp"

#include <c10/core/ScalarType.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace blr::torch {
namespace {

// What the walk knows of a stack item. Items are shared (the memo and tuples hold pointers), so
// a stream that copies a tuple many times costs no more than its length.
struct Value;
using ValuePtr = std::shared_ptr<const Value>;
struct Value {
  enum Kind { kOther, kString, kInt, kGlobal, kTuple, kStorage };
  Value(Kind of = kOther) : kind(of) {}  // NOLINT: implicit, as in make_value({Value::kTuple})
  Kind kind;
  std::string text;             ///< kString (at most kLongestText bytes), kGlobal "module.name"
  int64_t number = 0;           ///< kInt; kStorage: its elements
  std::vector<ValuePtr> items;  ///< kTuple
};

// Longer strings are kept as kOther: keys, locations and type names are short.
constexpr size_t kLongestText = 256;

const ValuePtr& opaque() {
  static const ValuePtr value = std::make_shared<const Value>();
  return value;
}

ValuePtr make_value(Value value) {
  return std::make_shared<const Value>(std::move(value));
}

// The bytes of one element of a storage type LibTorch knows ("FloatStorage": 4); 0 if unknown.
size_t element_bytes(const std::string& storage_type) {
#define BLR_STORAGE_TYPE(ctype, name) \
  if (storage_type == #name "Storage") return sizeof(ctype);
  AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(BLR_STORAGE_TYPE)
#undef BLR_STORAGE_TYPE
  return 0;
}

// One pass over the stream: `problem_` is set by the first violation and ends the walk.
class PickleWalk {
 public:
  PickleWalk(const char* data, size_t size, const StorageRecordSize& record_size)
      : data_(reinterpret_cast<const unsigned char*>(data)),
        size_(size),
        record_size_(record_size) {}

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
    // clang-format off
    switch (opcode) {
      case 0x2e:  // STOP
        if (!marks_.empty()) {
          fail(fmt::format("leaves {} mark(s) open", marks_.size()));
        } else if (stack_.size() != 1) {
          fail(fmt::format("leaves {} items on the stack, not 1", stack_.size()));
        }
        return true;
      case 0x28: marks_.push_back(stack_.size()); break;                  // MARK
      case 0x5d: case 0x7d: case 0x88: case 0x89: case 0x4e:              // empty list, dict;
        push(opaque());                                                   // True, False, None
        break;
      case 0x29: push(make_value({Value::kTuple})); break;                // EMPTY_TUPLE
      case 0x4b: argument(1) && push_int(static_cast<int64_t>(value(1))); break;  // BININT1
      case 0x4d: argument(2) && push_int(static_cast<int64_t>(value(2))); break;  // BININT2
      case 0x4a:                                                                  // BININT
        argument(4) && push_int(static_cast<int32_t>(static_cast<uint32_t>(value(4))));
        break;
      case 0x47: argument(8) && push(opaque()); break;                    // BINFLOAT
      case 0x8a:                                                          // LONG1 (8 bytes only)
        if (argument(1) && check(value(1) == 8, "has a length other than 8")) {
          argument(8) && push_int(static_cast<int64_t>(value(8)));
        }
        break;
      case 0x58:                                                          // BINUNICODE
        argument(4) && argument(value(4)) && push_text(Value::kString);
        break;
      case 0x63: global(); break;                                         // GLOBAL
      case 0x68: argument(1) && get(value(1)); break;                     // BINGET
      case 0x6a: argument(4) && get(value(4)); break;                     // LONG_BINGET
      case 0x71: argument(1) && put(value(1)); break;                     // BINPUT
      case 0x72: argument(4) && put(value(4)); break;                     // LONG_BINPUT
      case 0x74: close_mark() && push(tuple()); break;                    // TUPLE
      case 0x6c: close_mark() && push(opaque()); break;                   // LIST
      case 0x64: close_mark() && even() && push(opaque()); break;         // DICT
      case 0x65: close_mark() && container_below(); break;                // APPENDS
      case 0x75: close_mark() && even() && container_below(); break;      // SETITEMS
      case 0x73: pop(3) && push(opaque()); break;                         // SETITEM
      case 0x85: pop(1) && push(tuple()); break;                          // TUPLE1
      case 0x86: pop(2) && push(tuple()); break;                          // TUPLE2
      case 0x87: pop(3) && push(tuple()); break;                          // TUPLE3
      case 0x81: case 0x62: pop(2) && push(opaque()); break;              // NEWOBJ, BUILD
      case 0x52: pop(2) && reduce(); break;                               // REDUCE
      case 0x51: pop(1) && persistent_id(); break;                        // BINPERSID
      default:
        fail("is not one that LibTorch reads");
    }
    // clang-format on
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
    last_size_ = n;
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
        last_ = position_;
        last_size_ = i - position_;
        position_ = i + 1;
        return true;
      }
    }
    return fail("has a name without its newline");
  }
  // The last argument (or line) as the text of a new item.
  bool push_text(Value::Kind kind) {
    if (last_size_ > kLongestText) return push(opaque());
    Value v{kind};
    v.text.assign(reinterpret_cast<const char*>(data_ + last_), last_size_);
    return push(make_value(std::move(v)));
  }
  bool push_int(int64_t number) {
    Value v{Value::kInt};
    v.number = number;
    return push(make_value(std::move(v)));
  }
  bool global() {
    if (!line()) return false;
    const std::string module(reinterpret_cast<const char*>(data_ + last_), last_size_);
    if (!line()) return false;
    if (module.size() + last_size_ >= kLongestText) return push(opaque());
    Value v{Value::kGlobal};
    v.text = module + "." + std::string(reinterpret_cast<const char*>(data_ + last_), last_size_);
    return push(make_value(std::move(v)));
  }

  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  bool push(ValuePtr item) {
    stack_.push_back(std::move(item));
    return true;
  }
  // Pops n items above the mark into popped_.
  bool pop(size_t n) {
    if (stack_.size() - floor() < n) {
      return fail(fmt::format("needs {} items on the stack above its mark and has {}", n,
                              stack_.size() - floor()));
    }
    popped_.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return true;
  }
  bool close_mark() {
    if (marks_.empty()) return fail("closes a mark that was never set");
    const size_t mark = marks_.back();
    marks_.pop_back();
    return pop(stack_.size() - mark);
  }
  // A tuple of the items just popped.
  ValuePtr tuple() {
    Value v{Value::kTuple};
    v.items = popped_;
    return make_value(std::move(v));
  }
  bool even() { return check(popped_.size() % 2 == 0, "has a key without its value"); }
  bool container_below() {
    return check(stack_.size() > floor(), "has no list or dict below its mark to add to");
  }
  bool get(uint64_t slot) {
    if (!check(slot < memo_.size(), fmt::format("reads memo slot {} of {}", slot, memo_.size()))) {
      return false;
    }
    return push(memo_[slot]);
  }
  // LibTorch fills the memo up to the slot written: only the next slot, or one in use.
  bool put(uint64_t slot) {
    if (!check(!stack_.empty(), "memoises an empty stack") ||
        !check(slot <= memo_.size(),
               fmt::format("writes memo slot {} of {}", slot, memo_.size()))) {
      return false;
    }
    if (slot == memo_.size()) {
      memo_.push_back(stack_.back());
    } else {
      memo_[slot] = stack_.back();
    }
    return true;
  }

  static bool is(const ValuePtr& v, Value::Kind kind) { return v->kind == kind; }

  // ('storage', torch.<Type>Storage, key, location, elements): what LibTorch reads as a storage,
  // checked against the record that holds it.
  bool persistent_id() {
    const ValuePtr id = popped_[0];
    const auto& f = id->items;
    const bool shaped = is(id, Value::kTuple) && f.size() == 5 && is(f[0], Value::kString) &&
                        f[0]->text == "storage" && is(f[1], Value::kGlobal) &&
                        is(f[2], Value::kString) && is(f[3], Value::kString) &&
                        is(f[4], Value::kInt);
    if (!check(shaped,
               "has a persistent id that is not ('storage', type, key, location, elements)")) {
      return false;
    }
    const std::string& type = f[1]->text;
    const size_t element = type.rfind("torch.", 0) == 0 ? element_bytes(type.substr(6)) : 0;
    if (!check(element > 0,
               fmt::format("names the storage type '{}', which LibTorch does not read", type))) {
      return false;
    }
    const int64_t elements = f[4]->number;
    uint64_t bytes = 0;
    if (!check(elements >= 0 &&
                   !__builtin_mul_overflow(static_cast<uint64_t>(elements), element, &bytes),
               fmt::format("gives storage '{}' {} elements", f[2]->text, elements))) {
      return false;
    }
    if (elements > 0 && record_size_) {
      const auto have = record_size_(f[2]->text);
      if (!check(have.has_value(),
                 fmt::format("names storage '{}', which has no record", f[2]->text)) ||
          !check(*have >= bytes, fmt::format("gives storage '{}' {} bytes, but its record holds {}",
                                             f[2]->text, bytes, *have))) {
        return false;
      }
    }
    Value storage{Value::kStorage};
    storage.number = elements;
    return push(make_value(std::move(storage)));
  }

  // callable(*args): a dense tensor is checked against its storage; quantized and sparse
  // tensors are refused; anything else is an opaque result.
  bool reduce() {
    const ValuePtr callable = popped_[0];
    const ValuePtr args = popped_[1];
    if (!is(callable, Value::kGlobal)) return push(opaque());
    const std::string& name = callable->text;
    if (name == "torch._utils._rebuild_qtensor" || name == "torch._utils._rebuild_sparse_tensor") {
      return fail(fmt::format("rebuilds a tensor with {}; blr reads dense tensors only", name));
    }
    if (name == "torch._utils._rebuild_tensor_v2" && !tensor_fits(args)) return false;
    return push(opaque());
  }

  // _rebuild_tensor_v2(storage, offset, sizes, strides, requires_grad, ...): the last element
  // offset + Σ (size_i − 1)·stride_i lies inside the storage.
  bool tensor_fits(const ValuePtr& args) {
    const auto& a = args->items;
    const auto ints = [](const ValuePtr& t) {
      if (!is(t, Value::kTuple)) return false;
      for (const auto& i : t->items) {
        if (!is(i, Value::kInt) || i->number < 0) return false;
      }
      return true;
    };
    const bool shaped = is(args, Value::kTuple) && a.size() >= 5 && is(a[0], Value::kStorage) &&
                        is(a[1], Value::kInt) && a[1]->number >= 0 && ints(a[2]) && ints(a[3]) &&
                        a[2]->items.size() == a[3]->items.size();
    if (!check(shaped,
               "rebuilds a tensor from arguments other than (storage, offset, sizes, strides, "
               "requires_grad, ...) with as many sizes as strides, none negative")) {
      return false;
    }
    const int64_t elements = a[0]->number;
    const auto& sizes = a[2]->items;
    const auto& strides = a[3]->items;
    int64_t last = a[1]->number;
    bool empty = false;
    bool ok = true;
    for (size_t i = 0; i < sizes.size() && ok; ++i) {
      int64_t step = 0;
      empty = empty || sizes[i]->number == 0;
      ok = !__builtin_mul_overflow(std::max<int64_t>(sizes[i]->number - 1, 0), strides[i]->number,
                                   &step) &&
           !__builtin_add_overflow(last, step, &last);
    }
    return check(ok && (empty ? a[1]->number <= elements : last < elements),
                 fmt::format("rebuilds a tensor of {} dimensions at offset {} that reaches beyond "
                             "its storage of {} elements",
                             sizes.size(), a[1]->number, elements));
  }

  const unsigned char* data_;
  size_t size_;
  const StorageRecordSize& record_size_;
  size_t position_ = 0;
  size_t opcode_at_ = 0;
  size_t last_ = 0;
  uint64_t last_size_ = 0;
  std::vector<ValuePtr> stack_;
  std::vector<ValuePtr> popped_;
  std::vector<ValuePtr> memo_;
  std::vector<size_t> marks_;
  std::string problem_;
};

}  // namespace

std::string pickle_problem(const char* data, size_t size, const StorageRecordSize& record_size) {
  return PickleWalk(data, size, record_size).problem();
}

}  // namespace blr::torch
