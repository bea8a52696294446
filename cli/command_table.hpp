// The table of the colflow program's commands: the one place a command is named. main() walks
// it to register and dispatch every subcommand; `colflow --list-commands` prints it for the test
// that every command has help, an example in docs/USAGE.md and its promised Python counterpart
// (tests/commands/).
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <span>
#include <string_view>

#include "commands.hpp"

namespace colflow::cli {

// One command of the program.
struct command_entry {
  // The subcommand's name: `colflow NAME`.
  std::string_view name;
  // One line, shown by `colflow --help` and first in `colflow NAME --help`.
  std::string_view description;
  // Registers the command's options and help on its subcommand; returns what runs it.
  command (*add_options)(CLI::App& subcommand);
  // The Python package's counterpart: a function of `colflow` (`"assoc"`) or a method of one of
  // its classes (`"Store.info"`); empty when the command has none.
  std::string_view python_counterpart;
};

// Every command, in the order `colflow --help` lists them; names are unique.
std::span<const command_entry> command_table();

// Prints the table for tests: one line per command, in table order, `NAME<TAB>PYTHON`, with `-`
// for a command without a Python counterpart.
void list_commands(std::ostream& out);

}  // namespace colflow::cli
