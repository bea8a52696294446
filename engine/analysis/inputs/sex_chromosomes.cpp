// Chromosome kinds and sample sexes, for PLINK 2's ploidy rules on X, Y and MT.
#include "colflow/analysis/sex_chromosomes.hpp"

#include <cctype>
#include <optional>
#include <string>

#include "analysis/inputs/sample_lines_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/store/chromosome.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {
namespace {

// PLINK 2's codes of a .fam's whole field (an --update-sex file's: sex_of_code).
sample_sex sex_of_fam_field(std::string_view v) noexcept {
  if (v == "1" || v == "M" || v == "m") return sample_sex::male;
  if (v == "2" || v == "F" || v == "f") return sample_sex::female;
  return sample_sex::unknown;
}

bool is_sex_column(std::string_view name) {
  if (name.size() != 3) return false;
  for (std::size_t i = 0; i < 3; ++i)
    if (std::toupper(static_cast<unsigned char>(name[i])) != "SEX"[i]) return false;
  return true;
}

}  // namespace

std::optional<sample_sex> sex_of_code(std::string_view code) noexcept {
  if (code.empty()) return std::nullopt;
  switch (code.front()) {
    case '1':
    case 'M':
    case 'm':
      return sample_sex::male;
    case '2':
    case 'F':
    case 'f':
      return sample_sex::female;
    case '0':
    case 'N':
    case 'U':
    case 'u':
      return sample_sex::unknown;
    default:
      return std::nullopt;
  }
}

chromosome_kind kind_of_chromosome(std::string_view code) {
  const std::string name = normalize_chromosome(code);
  if (name == "X") return chromosome_kind::x;
  if (name == "Y") return chromosome_kind::y;
  if (name == "XY") return chromosome_kind::xy;
  if (name == "MT") return chromosome_kind::mt;
  return chromosome_kind::autosome;
}

std::vector<sample_sex> sexes_of(const std::vector<sample_info>& samples) {
  std::vector<sample_sex> sexes(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) sexes[i] = sex_of_fam_field(samples[i].sex);
  return sexes;
}

std::vector<sample_sex> read_sex_file(const std::filesystem::path& file,
                                      const std::vector<sample_info>& samples,
                                      std::vector<sample_sex> current) {
  if (current.size() != samples.size())
    throw error(errc::invalid_argument, "read_sex_file: " + std::to_string(current.size()) +
                                            " sexes for " + std::to_string(samples.size()) +
                                            " samples");
  std::optional<detail::sample_lines> ids;  // once the first line tells how lines name samples
  bool has_fid = true;
  std::size_t sex_field = 2, fields_expected = 0;  // 0: the first line is still to come
  detail::for_each_record(file, [&](std::size_t line, std::span<const std::string_view> f) {
    if (fields_expected == 0) {
      fields_expected = f.size();
      if (f[0].front() == '#') {  // the header: #FID IID ... or #IID ...
        has_fid = f[0] == "#FID";
        if (!has_fid && f[0] != "#IID")
          throw error(errc::bad_input, detail::where(file, line) +
                                           "a header line starts with #FID or #IID, found '" +
                                           std::string(f[0]) + "'");
        if (has_fid && (f.size() < 2 || f[1] != "IID"))
          throw error(errc::bad_input, detail::where(file, line) +
                                           "a header starting with #FID must name IID second");
        sex_field = has_fid ? 2 : 1;
        while (sex_field < f.size() && !is_sex_column(f[sex_field])) ++sex_field;
        if (sex_field == f.size())
          throw error(errc::bad_input,
                      detail::where(file, line) + "the header names no SEX column");
        return;
      }
      if (f.size() < 3)
        throw error(errc::bad_input, detail::where(file, line) +
                                         "expected FID, IID and SEX, found " +
                                         std::to_string(f.size()) + " field(s)");
    }
    if (f.size() != fields_expected)
      throw error(errc::bad_input, detail::where(file, line) + "expected " +
                                       std::to_string(fields_expected) + " fields, found " +
                                       std::to_string(f.size()));
    if (!ids) ids.emplace(samples, file, has_fid);
    const std::optional<sample_sex> sex = sex_of_code(f[sex_field]);
    if (!sex)
      throw error(errc::bad_input,
                  detail::where(file, line) + "'" + std::string(f[sex_field]) +
                      "' is not a sex code (its first character: 1/M/m male, 2/F/f female, "
                      "0/N/U/u unknown)");
    const std::size_t row = ids->row_of(f, line);
    if (row != detail::sample_lines::absent) current[row] = *sex;
  });
  if (fields_expected == 0) throw error(errc::bad_input, file.string() + ": the file is empty");
  return current;
}

}  // namespace colflow
