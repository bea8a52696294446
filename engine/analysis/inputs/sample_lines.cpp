// Matching the lines of a PLINK-style table to a store's samples, by FID and IID or IID alone.
#include "analysis/inputs/sample_lines_internal.hpp"
#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow::detail {

sample_lines::sample_lines(const std::vector<sample_info>& samples, std::filesystem::path file,
                           bool has_fid)
    : samples_(samples),
      file_(std::move(file)),
      has_fid_(has_fid),
      index_(samples, has_fid ? sample_index::key::fid_iid : sample_index::key::iid),
      first_line_(samples.size(), 0) {}

std::size_t sample_lines::find(std::span<const std::string_view> f,
                               std::size_t expected) const noexcept {
  if (has_fid_) return index_.find(f[0], f[1], expected);
  const std::size_t row = index_.find({}, f[0], expected);
  return row != absent && index_.next(row) != absent ? ambiguous : row;
}

std::size_t sample_lines::take(std::size_t found, std::span<const std::string_view> f,
                               std::size_t line) {
  const std::string_view iid = has_fid_ ? f[1] : f[0];
  const auto listed_again = [&](std::size_t first) {
    const std::string who =
        has_fid_ ? std::string(f[0]) + " " + std::string(iid) : std::string(iid);
    return error(errc::bad_input, where(file_, line) + "sample " + who +
                                      " is listed again (first on line " + std::to_string(first) +
                                      ")");
  };
  if (found == ambiguous) {
    std::string families;
    for (std::size_t r = index_.find({}, iid); r != absent; r = index_.next(r))
      families += (families.empty() ? "" : ", ") + samples_[r].fid;
    throw error(errc::bad_input, where(file_, line) + "IID " + std::string(iid) +
                                     " is ambiguous: the store has it in families " + families +
                                     "; give FID and IID (a header starting with #FID IID)");
  }
  if (found == absent) {
    // Samples the store lacks are few (a phenotype file of a larger cohort): a map will do.
    std::string key(f[0]);
    if (has_fid_) (key += '\t') += iid;
    if (const auto [it, fresh] = others_.emplace(std::move(key), line); !fresh)
      throw listed_again(it->second);
    return absent;
  }
  if (first_line_[found] != 0) throw listed_again(first_line_[found]);
  first_line_[found] = line;
  return found;
}

}  // namespace colflow::detail
