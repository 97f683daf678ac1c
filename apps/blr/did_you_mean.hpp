// "Did you mean" for a misspelled subcommand or flag: after CLI11 refuses the command line, the
// arguments it could not place are compared with the names the command knows (blr::closest_match,
// the edit-distance rule of the option tables), e.g. `blr trian` → train, `--epoch` → --epochs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace blr::cli {

/// One sentence for the first argument `app` could not place that is close to a known flag of the
/// command it was given to, e.g. "unknown option '--epoch' for blr train; did you mean
/// '--epochs'?", or that is not one of its subcommands ("unknown command 'trian'; did you mean
/// 'train'?", else the list of commands); empty when there is none (CLI11's message stands).
std::string did_you_mean(const CLI::App& app);

}  // namespace blr::cli
