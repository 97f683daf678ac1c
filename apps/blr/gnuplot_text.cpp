#include "gnuplot_text.hpp"

namespace blr::cli {
namespace {

constexpr size_t kMaxStem = 64;

bool is_control(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b < 0x20 || b == 0x7f;
}

bool is_file_name_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '+' || c == '_';
}

}  // namespace

std::string without_control_bytes(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (is_control(c)) c = '?';
  }
  return out;
}

std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (is_control(c)) {
      out += '?';
    } else {
      out += c;
      if (c == '\'') out += '\'';
    }
  }
  return out + "'";
}

std::string plot_file_stem(std::string_view name) {
  if (name.empty()) return "_";
  std::string out(name.substr(0, kMaxStem));
  for (char& c : out) {
    if (!is_file_name_safe(c)) c = '_';
  }
  return out;
}

}  // namespace blr::cli
