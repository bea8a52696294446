#include "colflow/analysis/phenotype.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {
namespace {

bool is_missing(std::string_view v) {
  return v == "NA" || v == "na" || v == "nan" || v == "NaN" || v == "-9" || v == "-9.0" || v == ".";
}

// The value of a field, or throws naming the place.
double parse_value(std::string_view v, const std::filesystem::path& file, std::size_t line,
                   const std::string& name) {
  if (is_missing(v)) return std::numeric_limits<double>::quiet_NaN();
  double x = 0;
  const char* end = v.data() + v.size();
  const auto [ptr, ec] = std::from_chars(v.data() + (v.front() == '+' ? 1 : 0), end, x);
  if (ec != std::errc{} || ptr != end || !std::isfinite(x))
    throw error(errc::bad_input, detail::where(file, line) + "'" + std::string(v) + "' in column " +
                                     name + " is not a number");
  return x;
}

std::string key(std::string_view fid, std::string_view iid) {
  std::string k(fid);
  k += '\t';
  k += iid;
  return k;
}

}  // namespace

phenotype_table read_phenotypes(const std::filesystem::path& file,
                                const std::vector<sample_info>& samples,
                                std::span<const std::string> names,
                                const std::string& default_name) {
  std::unordered_map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < samples.size(); ++i)
    row_of.emplace(key(samples[i].fid, samples[i].iid), i);

  std::vector<std::string> file_names;
  std::vector<std::size_t> take;  // file value column of each output column
  std::size_t fields_expected = 0;
  std::unordered_map<std::string, std::size_t> seen;  // sample -> first line
  phenotype_table t;

  const auto choose_columns = [&] {
    if (names.empty()) {
      t.names = file_names;
      for (std::size_t c = 0; c < file_names.size(); ++c) take.push_back(c);
    } else {
      for (const std::string& n : names) {
        std::size_t c = 0;
        while (c < file_names.size() && file_names[c] != n) ++c;
        if (c == file_names.size()) {
          std::string have;
          for (const auto& f : file_names) have += (have.empty() ? "" : ", ") + f;
          throw error(errc::invalid_argument,
                      file.string() + ": no column named '" + n + "' (it has " + have + ")");
        }
        t.names.push_back(n);
        take.push_back(c);
      }
    }
    t.values.setConstant(static_cast<Eigen::Index>(samples.size()),
                         static_cast<Eigen::Index>(take.size()),
                         std::numeric_limits<double>::quiet_NaN());
  };

  detail::for_each_record(file, [&](std::size_t line, std::span<const std::string_view> f) {
    if (fields_expected == 0) {
      if (f.size() < 3)
        throw error(errc::bad_input, detail::where(file, line) +
                                         "expected FID, IID and at least "
                                         "one value, found " +
                                         std::to_string(f.size()) + " field(s)");
      fields_expected = f.size();
      if (f[0] == "#FID" || f[0] == "FID") {
        for (std::size_t c = 2; c < f.size(); ++c) file_names.emplace_back(f[c]);
        choose_columns();
        return;
      }
      for (std::size_t c = 2; c < f.size(); ++c)
        file_names.push_back(default_name + std::to_string(c - 1));
      choose_columns();
    }
    if (f.size() != fields_expected)
      throw error(errc::bad_input, detail::where(file, line) + "expected " +
                                       std::to_string(fields_expected) + " fields, found " +
                                       std::to_string(f.size()));
    ++t.file_samples;
    std::string k = key(f[0], f[1]);
    if (const auto [it, fresh] = seen.emplace(k, line); !fresh)
      throw error(errc::bad_input, detail::where(file, line) + "sample " + std::string(f[0]) + " " +
                                       std::string(f[1]) + " is listed again (first on line " +
                                       std::to_string(it->second) + ")");
    const auto row = row_of.find(k);
    // Values are checked even for samples the store does not have: a typo is a typo.
    for (std::size_t c = 0; c < take.size(); ++c) {
      const double v = parse_value(f[2 + take[c]], file, line, t.names[c]);
      if (row != row_of.end())
        t.values(static_cast<Eigen::Index>(row->second), static_cast<Eigen::Index>(c)) = v;
    }
    if (row != row_of.end()) ++t.matched_samples;
  });
  if (fields_expected == 0) throw error(errc::bad_input, file.string() + ": the file is empty");
  return t;
}

}  // namespace colflow
