// Phenotype and covariate files, PLINK style, read and matched to a store's samples.
#include "colflow/analysis/phenotype.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <boost/math/special_functions/erf.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "analysis/inputs/sample_lines_internal.hpp"
#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {

namespace {

bool is_missing(std::string_view v) {
  return v == "NA" || v == "na" || v == "nan" || v == "NaN" || v == "-9" || v == "-9.0" || v == ".";
}

// A plain decimal ("-12.345678": a sign, digits and at most one point, at most 15 digits)
// read with Clinger's fast path: the digits make an integer below 2^53 and the divisor is a
// power of ten below 10^23, both exact doubles, so one division rounds correctly, to the double
// std::from_chars gives. Phenotype files are mostly such fields, and this takes a fraction of
// from_chars' time; false (x untouched) for anything else.
bool read_plain_decimal(std::string_view v, double& x) {
  static constexpr double powers_of_ten[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                             1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  std::size_t i = 0;
  const bool negative = v[0] == '-';
  if (negative || v[0] == '+') ++i;
  std::uint64_t digits = 0;
  std::size_t count = 0, after_point = 0;
  bool point = false;
  for (; i < v.size(); ++i) {
    const char c = v[i];
    if (c >= '0' && c <= '9') {
      digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
      ++count;
      after_point += point;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      return false;
    }
  }
  if (count == 0 || count > 15) return false;
  const double magnitude = static_cast<double>(digits) / powers_of_ten[after_point];
  x = negative ? -magnitude : magnitude;
  return true;
}

// The value of a field (NaN for a missing one); false when it is not a finite number.
bool read_value(std::string_view v, double& x) {
  if (is_missing(v)) {
    x = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (read_plain_decimal(v, x)) return true;
  const char* end = v.data() + v.size();
  const auto [ptr, ec] = std::from_chars(v.data() + (v.front() == '+' ? 1 : 0), end, x);
  return ec == std::errc{} && ptr == end && std::isfinite(x);
}

// The value of a field, or throws naming the place.
double parse_value(std::string_view v, const std::filesystem::path& file, std::size_t line,
                   const std::string& name) {
  double x = 0;
  if (!read_value(v, x))
    throw error(errc::bad_input, detail::where(file, line) + "'" + std::string(v) + "' in column " +
                                     name + " is not a number");
  return x;
}

// Columns of PLINK 2's sample files that describe the sample rather than measure it: a .psam
// (or a phenotype file written like one) may carry them between the IDs and the values.
bool is_sample_field(std::string_view name) {
  return name == "SID" || name == "PAT" || name == "MAT" || name == "SEX";
}

// How the lines of a file name their sample (docs/ANALYSES.md, "Phenotype and covariate files").
struct id_layout {
  bool has_fid = true;          // FID and IID, else IID alone
  std::size_t first_value = 2;  // fields before it are IDs or sample fields
};

// One phenotype or covariate file being read: its layout from the first line, the columns
// asked for, then the data lines into a table by store sample.
class phenotype_reader {
 public:
  phenotype_reader(const std::filesystem::path& file, const std::vector<sample_info>& samples,
                   std::span<const std::string> names, const std::string& default_name)
      : file_(file), samples_(samples), names_(names), default_name_(default_name) {}
  phenotype_reader(const phenotype_reader&) = delete;
  phenotype_reader& operator=(const phenotype_reader&) = delete;

  // Reads the file once; the reader holds references to the arguments, so it lives only for
  // the call that made it.
  phenotype_table read() && {
    const detail::mapped_table_text mapped(file_);
    try {
      const std::vector<detail::text_record> records = detail::split_records(mapped.text());
      if (records.empty()) throw error(errc::bad_input, file_.string() + ": the file is empty");
      std::vector<std::string_view> f;
      detail::split_fields(records[0].text, f);
      const std::size_t first = read_layout(records[0].line, f) ? 1 : 0;
      ids_.emplace(samples_, file_, layout_.has_fid);
      read_lines(records, first);
      mapped.check_intact();
      t_.file = file_;
      return std::move(t_);
    } catch (const error&) {
      mapped.check_intact();  // a shrunk file's zeros are not the line an error would name
      throw;
    }
  }

 private:
  // The first line: a header (#FID IID ..., FID IID ..., #IID ..., IID ...), or the first
  // sample of a file without one (FID IID values, or a .fam's six fields). True for a header.
  bool read_layout(std::size_t line, std::span<const std::string_view> f) {
    const bool fid_header = f[0] == "#FID" || f[0] == "FID";
    const bool iid_header = f[0] == "#IID" || f[0] == "IID";
    if (fid_header || iid_header) {
      layout_.has_fid = fid_header;
      if (fid_header && (f.size() < 2 || f[1] != "IID"))
        throw error(errc::bad_input,
                    detail::where(file_, line) + "a header starting with FID must name IID second");
      std::size_t c = fid_header ? 2 : 1;
      while (c < f.size() && is_sample_field(f[c])) ++c;
      layout_.first_value = c;
      for (; c < f.size(); ++c) {
        // Two columns of one name would write one table over the other, or be chosen between
        // silently by --pheno-name/--covar-name (plink2 refuses such a header too).
        if (std::find(file_names_.begin(), file_names_.end(), f[c]) != file_names_.end())
          throw error(errc::bad_input, detail::where(file_, line) + "the header names column '" +
                                           std::string(f[c]) + "' twice");
        file_names_.emplace_back(f[c]);
      }
      if (file_names_.empty())
        throw error(errc::bad_input,
                    detail::where(file_, line) + "the header names no value column");
      choose_columns(f.size());
      return true;
    }
    // A .fam: FID IID father mother sex phenotype, the phenotype named as PLINK 2 names it.
    if (file_.extension() == ".fam") {
      if (f.size() != 6)
        throw error(errc::bad_input, detail::where(file_, line) +
                                         "a .fam line has 6 fields, found " +
                                         std::to_string(f.size()));
      layout_.first_value = 5;
      file_names_.push_back("PHENO1");
      choose_columns(6);
      return false;
    }
    if (f.size() < 3)
      throw error(errc::bad_input, detail::where(file_, line) +
                                       "expected FID, IID and at least one value, found " +
                                       std::to_string(f.size()) + " field(s)");
    for (std::size_t c = 2; c < f.size(); ++c)
      file_names_.push_back(default_name_ + std::to_string(c - 1));
    choose_columns(f.size());
    return false;
  }

  // The output columns: every value column of the file, or those `names_` asks for.
  void choose_columns(std::size_t fields) {
    if (names_.empty()) {
      t_.names = file_names_;
      for (std::size_t c = 0; c < file_names_.size(); ++c) take_.push_back(layout_.first_value + c);
    } else {
      for (const std::string& n : names_) {
        std::size_t c = 0;
        while (c < file_names_.size() && file_names_[c] != n) ++c;
        if (c == file_names_.size()) {
          std::string have;
          for (const auto& f : file_names_) have += (have.empty() ? "" : ", ") + f;
          throw error(errc::invalid_argument,
                      file_.string() + ": no column named '" + n + "' (it has " + have + ")");
        }
        t_.names.push_back(n);
        take_.push_back(layout_.first_value + c);
      }
    }
    fields_expected_ = fields;
    t_.values.setConstant(static_cast<Eigen::Index>(samples_.size()),
                          static_cast<Eigen::Index>(take_.size()),
                          std::numeric_limits<double>::quiet_NaN());
  }

  // Splitting the lines, reading their values and looking their samples up is most of the
  // work and grows with the lines and columns: it runs across threads. The lines are then
  // taken in file order (a sample listed twice is named at its second line), and a line that
  // did not read cleanly goes through data_line, which throws the message the first problem
  // deserves, whatever thread met it.
  void read_lines(const std::vector<detail::text_record>& records, std::size_t first) {
    const std::size_t lines = records.size() - first, nc = take_.size();
    std::vector<double> values(lines * nc);
    std::vector<std::array<std::string_view, 2>> id(lines);
    std::vector<std::size_t> found(lines);
    std::vector<std::uint8_t> clean(lines, 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, lines, 2048),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        std::vector<std::string_view> fields;
                        for (std::size_t k = r.begin(); k != r.end(); ++k) {
                          detail::split_fields(records[first + k].text, fields);
                          if (fields.size() != fields_expected_) continue;
                          id[k] = {fields[0], fields.size() > 1 ? fields[1] : std::string_view{}};
                          found[k] = ids_->find(fields, k);  // in store order, line k is row k
                          bool ok = true;
                          for (std::size_t c = 0; c < nc; ++c)
                            ok &= read_value(fields[take_[c]], values[k * nc + c]);
                          clean[k] = ok;
                        }
                      });
    std::vector<std::string_view> f;
    for (std::size_t k = 0; k < lines; ++k) {
      const std::size_t line = records[first + k].line;
      if (!clean[k]) {
        detail::split_fields(records[first + k].text, f);
        data_line(line, f);
        continue;
      }
      ++t_.file_samples;
      const std::size_t row = ids_->take(found[k], id[k], line);
      if (row == detail::sample_lines::absent) continue;
      for (std::size_t c = 0; c < nc; ++c)
        t_.values(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(c)) =
            values[k * nc + c];
      ++t_.matched_samples;
    }
  }

  // The checks and messages of one data line, in file order.
  void data_line(std::size_t line, std::span<const std::string_view> f) {
    if (f.size() != fields_expected_)
      throw error(errc::bad_input, detail::where(file_, line) + "expected " +
                                       std::to_string(fields_expected_) + " fields, found " +
                                       std::to_string(f.size()));
    ++t_.file_samples;
    const std::size_t row = ids_->row_of(f, line);
    // Values are checked even for samples the store does not have: a typo is a typo.
    for (std::size_t c = 0; c < take_.size(); ++c) {
      const double v = parse_value(f[take_[c]], file_, line, t_.names[c]);
      if (row != detail::sample_lines::absent)
        t_.values(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(c)) = v;
    }
    if (row != detail::sample_lines::absent) ++t_.matched_samples;
  }

  const std::filesystem::path& file_;
  const std::vector<sample_info>& samples_;
  std::span<const std::string> names_;
  const std::string& default_name_;
  std::optional<detail::sample_lines> ids_;  // once the first line tells how lines name samples
  std::vector<std::string> file_names_;
  std::vector<std::size_t> take_;  // file field of each output column
  std::size_t fields_expected_ = 0;
  id_layout layout_;
  phenotype_table t_;
};

}  // namespace

phenotype_table read_phenotypes(const std::filesystem::path& file,
                                const std::vector<sample_info>& samples,
                                std::span<const std::string> names,
                                const std::string& default_name) {
  return phenotype_reader(file, samples, names, default_name).read();
}

namespace {

// The rows of column c that rows_used keeps and that have a value; the others made missing.
std::vector<Eigen::Index> valued_rows(phenotype_table& t, Eigen::Index c,
                                      std::span<const std::uint8_t> rows_used) {
  if (rows_used.size() != static_cast<std::size_t>(t.values.rows()))
    throw error(errc::invalid_argument, "phenotype transform: one flag per row is needed");
  std::vector<Eigen::Index> rows;
  for (Eigen::Index i = 0; i < t.values.rows(); ++i) {
    if (!rows_used[static_cast<std::size_t>(i)])
      t.values(i, c) = std::numeric_limits<double>::quiet_NaN();
    else if (!std::isnan(t.values(i, c)))
      rows.push_back(i);
  }
  return rows;
}

}  // namespace

void quantile_normalize(phenotype_table& t, std::span<const std::uint8_t> rows_used) {
  for (Eigen::Index c = 0; c < t.values.cols(); ++c) {
    std::vector<Eigen::Index> rows = valued_rows(t, c, rows_used);
    std::stable_sort(rows.begin(), rows.end(), [&](Eigen::Index a, Eigen::Index b) {
      return t.values(a, c) < t.values(b, c);
    });
    const auto n = static_cast<double>(rows.size());
    for (std::size_t first = 0; first < rows.size();) {
      std::size_t last = first;  // the run of values tied with the first
      while (last + 1 < rows.size() && t.values(rows[last + 1], c) == t.values(rows[first], c))
        ++last;
      // 1-based average rank of the run, then Φ⁻¹(p) = −√2 erfc⁻¹(2p).
      const double rank = 0.5 * static_cast<double>(first + last) + 1.0;
      const double z = -std::sqrt(2.0) * boost::math::erfc_inv(2.0 * (rank - 0.5) / n);
      for (std::size_t k = first; k <= last; ++k) t.values(rows[k], c) = z;
      first = last + 1;
    }
  }
}

void variance_standardize(phenotype_table& t, std::span<const std::uint8_t> rows_used) {
  for (Eigen::Index c = 0; c < t.values.cols(); ++c) {
    const std::vector<Eigen::Index> rows = valued_rows(t, c, rows_used);
    double sum = 0;
    for (Eigen::Index i : rows) sum += t.values(i, c);
    const double n = static_cast<double>(rows.size()), mean = sum / n;
    double squares = 0;
    for (Eigen::Index i : rows) squares += (t.values(i, c) - mean) * (t.values(i, c) - mean);
    const double sd = std::sqrt(squares / (n - 1.0));
    if (rows.size() < 2 || !(sd > 0))
      throw error(errc::invalid_argument,
                  "--covar-variance-standardize: " + t.names[static_cast<std::size_t>(c)] +
                      " is constant among the samples used");
    for (Eigen::Index i : rows) t.values(i, c) = (t.values(i, c) - mean) / sd;
  }
}

}  // namespace colflow
