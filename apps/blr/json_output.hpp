// `--json FILE` of every command, with "-" meaning stdout.
//
// When a command's --json is "-", stdout carries the JSON document and nothing else: main() calls
// reserve_stdout_for_json() once parsing is done, which points file descriptor 1 at stderr (so
// tables, notes and anything else written to stdout land on stderr) and keeps the original stdout
// for write_json_text("-", ...). `blr compare ... --json - | python3 -m json.tool` then parses.
#pragma once

#include <string>

namespace blr::cli {

/// Sends everything later written to stdout to stderr, keeping the original stdout for the JSON
/// document. Idempotent.
void reserve_stdout_for_json();

/// Writes `text` (and a newline) to the file `path`, or to the original stdout when `path` is
/// "-"; throws blr::Error naming the file when it cannot be written (no directory is created).
void write_json_text(const std::string& path, const std::string& text);

}  // namespace blr::cli
