// Fuzz harness: the quoting of every string blr writes into a gnuplot script
// (apps/blr/torch/gnuplot_text.hpp; the audit's D1: a line break in a name ended the command, and a
// next line `!cmd` ran in a shell). Every plotting command passes names, titles and paths through
// these three functions, and tests/plots/gnuplot_script_test.cpp runs the whole scripts through
// gnuplot with hostile names; this harness checks the functions themselves on arbitrary bytes.
//
// Properties, for any input text t:
//   gnuplot_string(t)       one single-quoted gnuplot literal with no control byte (so no line
//                           break) anywhere, whose only quotes inside are doubled, and which gnuplot
//                           reads back as without_control_bytes(t): `set title <literal>` is one
//                           command whatever t holds;
//   without_control_bytes   t with each byte 0x00–0x1f and 0x7f replaced by '?', all else kept;
//   plot_file_stem(t)       1–64 bytes of [A-Za-z0-9.+_-] (no '/', quote or control byte), and t
//                           itself when t is already such a name.
#include <cstdint>
#include <string>
#include <string_view>

#include "../../apps/blr/gnuplot_text.hpp"  // an app file: the fuzz builds add no apps/ path
#include "fuzz_check.hpp"

namespace {

using blr::fuzz::require;

bool is_control(unsigned char b) { return b < 0x20 || b == 0x7f; }

bool is_stem_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '+' || c == '_';
}

// The text gnuplot reads from a single-quoted literal (a doubled quote is one quote); `ok` false
// when the literal is not one: unquoted ends, or a lone quote inside that would end it early.
std::string read_literal(std::string_view literal, bool& ok) {
  ok = literal.size() >= 2 && literal.front() == '\'' && literal.back() == '\'';
  std::string text;
  for (size_t i = 1; ok && i + 1 < literal.size(); ++i) {
    if (literal[i] == '\'') {
      ok = i + 2 < literal.size() && literal[i + 1] == '\'';
      ++i;
    }
    text += literal[i];
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  const std::string clean = blr::cli::without_control_bytes(text);
  require(clean.size() == text.size(), "without_control_bytes changed the length");
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    require(clean[i] == (is_control(b) ? '?' : text[i]),
            "without_control_bytes changed a byte other than a control byte, or missed one");
  }

  const std::string literal = blr::cli::gnuplot_string(text);
  for (const char c : literal) {
    require(!is_control(static_cast<unsigned char>(c)), "a gnuplot literal holds a control byte");
  }
  bool ok = false;
  const std::string read = read_literal(literal, ok);
  require(ok, "gnuplot_string is not one single-quoted literal (an unquoted end or a lone quote)");
  require(read == clean, "gnuplot reads the literal back as other text than the name");

  const std::string stem = blr::cli::plot_file_stem(text);
  require(!stem.empty() && stem.size() <= 64, "a file stem is empty or longer than 64 bytes");
  for (const char c : stem) require(is_stem_byte(c), "a file stem holds a byte outside [A-Za-z0-9.+_-]");
  bool already_a_stem = !text.empty() && text.size() <= 64;
  for (const char c : text) already_a_stem = already_a_stem && is_stem_byte(c);
  require(!already_a_stem || stem == text, "plot_file_stem changed a name that was already a stem");
  return 0;
}
