// What the result writers of the analyses share: the check of the digits option, header
// lines, and file names made from an output prefix the way the command always made them.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string_view>

#include "io/tsv_writer_internal.hpp"

namespace colflow::detail {

// Throws colflow::error invalid_argument unless 1 <= digits <= 17: the precisions the
// writer's shortest-%g formatting of a double can honour.
void check_digits(int digits);

// Writes one header line of `names`.
void write_header(tsv_writer& out, std::initializer_list<std::string_view> names);

// PREFIX followed by `suffix` as plain text ("out" + ".coef.tsv"), not a path operation: a
// prefix "dir/" gives "dir/.coef.tsv", the names the command has always written.
std::filesystem::path prefixed(const std::filesystem::path& prefix, std::string_view suffix);

}  // namespace colflow::detail
