// Checks made before any work starts, so that a bad option or an unwritable output is refused in
// one sentence at once, not after an hour of training.
//
// 1. Options that recur across commands get their ranges here, once, by name:
//      --seed            a non-negative integer (CLI11 would wrap -1 to 2^64 − 1)
//      --threads         a non-negative integer (0 = all cores)
//      --tolerance       a positive finite number
//      --max-iterations  a positive integer
//    (Options of one command are checked where they are declared.)
// 2. Output paths: --json, --predict-out and --save FILE (not "-") must be creatable or
//    replaceable in an existing writable directory, must not be a symbolic link, and must not be
//    one of the command's input files (--train, --data, --checkpoint, ...: the same device and
//    inode, or the same normalised path); --out DIR must be a writable directory, or creatable
//    under its nearest existing ancestor, and is locked for the run (output_lock.hpp); an --out
//    declared with type name FILE (merge) is a file output like --json.
// 4. No option value is empty: an empty string never silently means "not given" (--resume ""
//    once started a fresh training); the one exception is --hidden "" (no hidden layer).
// 3. No option value of any command holds a control character (bytes 0x01–0x1f, 0x7f): no file
//    name, column or setting needs one, and a line break in a path that reaches a gnuplot
//    script once ran shell commands (the reliability audit's D1; the scripts now also keep every
//    string safe themselves, apps/blr/gnuplot_text.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace blr::cli {

/// Adds the range checks of (1) to every option of those names in `app` and its subcommands.
void add_common_option_checks(CLI::App& app);

/// Throws blr::Error when an output path of a selected (sub)command of `app` cannot be written,
/// is a symbolic link or names an input; then locks its --out directory.
void check_output_paths(const CLI::App& app);

/// Throws blr::Error naming the option when a value given to a selected (sub)command of `app` is
/// the empty string.
void check_no_empty_values(const CLI::App& app);

/// Throws blr::Error naming the option when a value given to a selected (sub)command of `app`
/// holds a control character.
void check_no_control_characters(const CLI::App& app);

/// Throws blr::Error naming `option` unless a file can be written at `path`.
void check_writable_file(const std::string& path, const std::string& option);
/// Throws blr::Error naming `option` unless `path` is, or can be made, a writable directory.
void check_writable_directory(const std::string& path, const std::string& option);

}  // namespace blr::cli
