// Chromosome codes as PLINK 2 writes them, and their numbers (colflow/store/chromosome.hpp).
#include "colflow/store/chromosome.hpp"

#include <cctype>
#include <optional>

namespace colflow {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

// The canonical name of a code PLINK 2 knows, or nothing.
std::optional<std::string> known_code(std::string_view c) {
  if (c.size() == 1 || c.size() == 2) {
    if (std::isdigit(static_cast<unsigned char>(c[0])) &&
        (c.size() == 1 || std::isdigit(static_cast<unsigned char>(c[1])))) {
      const int n = c.size() == 1 ? c[0] - '0' : 10 * (c[0] - '0') + (c[1] - '0');
      if (n <= 22) return std::to_string(n);
      static const char* const beyond[] = {"X", "Y", "XY", "MT", "PAR1", "PAR2"};
      if (n <= 28) return beyond[n - 23];
      return std::nullopt;
    }
  }
  for (const char* name : {"X", "Y", "XY", "MT", "PAR1", "PAR2"})
    if (equals_ignoring_case(c, name)) return std::string(name);
  if (equals_ignoring_case(c, "M")) return std::string("MT");
  return std::nullopt;
}

}  // namespace

std::string normalize_chromosome(std::string_view code) {
  if (auto k = known_code(code)) return *k;
  if (code.size() > 3 && equals_ignoring_case(code.substr(0, 3), "CHR"))
    if (auto k = known_code(code.substr(3))) return *k;
  return std::string(code);
}

int autosome_or_x_number(std::string_view code) {
  const std::string name = normalize_chromosome(code);
  if (name == "X") return 23;
  if (name.empty() || name.size() > 2) return 0;
  int number = 0;
  for (const char c : name) {
    if (c < '0' || c > '9') return 0;
    number = number * 10 + (c - '0');
  }
  return number >= 1 && number <= 22 ? number : 0;
}

}  // namespace colflow
