// The command line's parse errors in colflow's words. CLI11 reports a wrong count of values as
// "At least 2 required but received 1", a value it cannot convert as "Could not convert", and
// option conflicts as "--a excludes --b"; the messages here name the option, what it takes and
// what was given, as the range checks of validators.hpp do.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace colflow::cli {

// The message of a parse error of `app` (or of its chosen command), without CLI11's "Run with
// --help" line: CLI11's own text where it already says what is wrong.
std::string option_error_message(const CLI::App& app, const CLI::Error& e);

// Installs option_error_message as the failure message of `app` (App::exit prints it), as one
// line: "colflow: error: MESSAGE (colflow COMMAND --help lists the options)".
void use_option_error_messages(CLI::App& app);

}  // namespace colflow::cli
