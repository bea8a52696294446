// What the analyses' result writers share: the digits check, header lines, file names.
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {

void check_digits(int digits) {
  if (digits < 1 || digits > 17)
    throw error(errc::invalid_argument,
                "digits must be between 1 and 17, got " + std::to_string(digits));
}

void write_header(tsv_writer& out, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) out.text(name);
  out.end_line();
}

std::filesystem::path prefixed(const std::filesystem::path& prefix, std::string_view suffix) {
  std::string name = prefix.string();
  name += suffix;
  return name;
}

}  // namespace colflow::detail
