#include "result_document.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/detail/conversions/to_chars.hpp>

#include "blr/core/error.hpp"

namespace blr::cli {

ResultDocument::ResultDocument(nlohmann::json f) : fields(std::move(f)) {
  check(fields.is_object(), "A result document's fields must be a JSON object.");
}

void ResultDocument::check_new_key(const std::string& key) const {
  bool taken = fields.contains(key);
  for (const auto& [k, a] : arrays_) taken = taken || k == key;
  check(!taken, fmt::format("The result already has an entry '{}'.", key));
}

void ResultDocument::add_vector(const std::string& key, Vector values) {
  check_new_key(key);
  arrays_.push_back({key, Array{Matrix(std::move(values)), false}});
}

void ResultDocument::add_rows(const std::string& key, Matrix values) {
  check_new_key(key);
  arrays_.push_back({key, Array{std::move(values), true}});
}

namespace {

// One top-level entry in the document's key order: a field or one of the arrays.
struct Entry {
  const std::string* key;
  const nlohmann::json* field;  // null for an array
  std::size_t array = 0;        // else the index of the array
};

// nlohmann's object is a std::map<std::string, ...>: its keys come out sorted by std::string's <.
template <class Arrays>
std::vector<Entry> entries(const nlohmann::json& fields, const Arrays& arrays) {
  std::vector<Entry> out;
  for (const auto& [key, value] : fields.get_ref<const nlohmann::json::object_t&>())
    out.push_back({&key, &value});
  for (std::size_t i = 0; i < arrays.size(); ++i) out.push_back({&arrays[i].first, nullptr, i});
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return *a.key < *b.key; });
  return out;
}

// A double exactly as nlohmann's serializer writes it: its own Grisu2 formatter (the library's
// function, not a copy), null when not finite.
void append_number(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  std::array<char, 64> buffer{};
  const char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), x);
  out.append(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
}

// `count` numbers `at(i)` as a pretty-printed array whose closing bracket is indented by `indent`.
template <class At>
void append_array(std::string& out, Index count, int indent, const At& at) {
  if (count == 0) {
    out += "[]";
    return;
  }
  std::string inner(static_cast<std::size_t>(indent + 3), ' ');  // a newline, then the indent
  inner[0] = '\n';
  out += '[';
  for (Index i = 0; i < count; ++i) {
    out += inner;
    at(i);
    if (i + 1 < count) out += ',';
  }
  out += '\n';
  out.append(static_cast<std::size_t>(indent), ' ');
  out += ']';
}

}  // namespace

std::string ResultDocument::dump() const {
  const auto all = entries(fields, arrays_);
  if (all.empty()) return "{}";
  std::size_t numbers = 0;
  for (const auto& [key, a] : arrays_) numbers += static_cast<std::size_t>(a.values.size());
  std::string out;
  out.reserve(numbers * 32 + 4096);
  out += '{';
  for (std::size_t e = 0; e < all.size(); ++e) {
    out += "\n  ";
    out += nlohmann::json(*all[e].key).dump();  // the key, escaped as dump() escapes it
    out += ": ";
    if (all[e].field != nullptr) {
      // A nested value's own dump(2), shifted right by the top level's two spaces.
      const std::string text = all[e].field->dump(2);
      for (char c : text) {
        out += c;
        if (c == '\n') out += "  ";
      }
    } else {
      const Array& a = arrays_[all[e].array].second;
      const Matrix& m = a.values;
      if (!a.rows) {
        append_array(out, m.rows(), 2, [&](Index i) { append_number(out, m(i, 0)); });
      } else {
        append_array(out, m.rows(), 2, [&](Index i) {
          append_array(out, m.cols(), 4, [&](Index k) { append_number(out, m(i, k)); });
        });
      }
    }
    if (e + 1 < all.size()) out += ',';
  }
  out += "\n}";
  return out;
}

nlohmann::json ResultDocument::merged() const {
  nlohmann::json j = fields;
  for (const auto& [key, a] : arrays_) {
    nlohmann::json array = nlohmann::json::array();
    for (Index i = 0; i < a.values.rows(); ++i) {
      if (!a.rows) {
        array.push_back(a.values(i, 0));
        continue;
      }
      nlohmann::json row = nlohmann::json::array();
      for (Index k = 0; k < a.values.cols(); ++k) row.push_back(a.values(i, k));
      array.push_back(std::move(row));
    }
    j[key] = std::move(array);
  }
  return j;
}

std::optional<std::pair<std::string, double>> first_non_finite(const nlohmann::json& node) {
  // The path is built on the way back from a hit only: a result of 10^7 numbers is scanned
  // without formatting 10^7 paths.
  if (node.is_number_float()) {
    const double v = node.get<double>();
    if (!std::isfinite(v)) return std::make_pair(std::string(), v);
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (auto hit = first_non_finite(node[i]))
        return std::make_pair(fmt::format("[{}]{}", i, hit->first), hit->second);
    }
  } else if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (auto hit = first_non_finite(value)) {
        const std::string& rest = hit->first;
        return std::make_pair(rest.empty() || rest[0] == '[' ? key + rest : key + "." + rest,
                              hit->second);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, double>> ResultDocument::first_non_finite() const {
  for (const auto& e : entries(fields, arrays_)) {
    if (e.field != nullptr) {
      if (auto hit = cli::first_non_finite(*e.field)) {
        const std::string& rest = hit->first;
        return std::make_pair(rest.empty() || rest[0] == '[' ? *e.key + rest
                                                              : *e.key + "." + rest,
                              hit->second);
      }
      continue;
    }
    const Array& a = arrays_[e.array].second;
    for (Index i = 0; i < a.values.rows(); ++i) {
      for (Index k = 0; k < a.values.cols(); ++k) {
        const double v = a.values(i, k);
        if (std::isfinite(v)) continue;
        return std::make_pair(a.rows ? fmt::format("{}[{}][{}]", *e.key, i, k)
                                     : fmt::format("{}[{}]", *e.key, i),
                              v);
      }
    }
  }
  return std::nullopt;
}

}  // namespace blr::cli
