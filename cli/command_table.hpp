// The table of the colflow program's commands: the one place a command is named. main() walks
// it to register and dispatch every subcommand.
#pragma once

#include <CLI/CLI.hpp>
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

}  // namespace colflow::cli
