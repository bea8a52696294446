// Choosing samples and columns at run time: --keep, --remove, --extract and --exclude.
#include "colflow/analysis/selection.hpp"

#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "analysis/inputs/sample_index_internal.hpp"
#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {
namespace {

// Marks (in `hit`) the rows that the sample list `file` names; returns IDs not found. A line
// of one field is an IID and keeps every store sample with it, whatever its family.
std::size_t mark_samples(const store& s, const std::filesystem::path& file,
                         std::vector<std::uint8_t>& hit) {
  const auto& samples = s.samples();
  std::optional<detail::sample_index> by_fid_iid, by_iid;  // made when a line needs one
  std::size_t not_found = 0;
  detail::for_each_record(file, [&](std::size_t, std::span<const std::string_view> f) {
    if (f[0].front() == '#') return;
    if (f.size() == 1) {
      if (!by_iid) by_iid.emplace(samples, detail::sample_index::key::iid);
      std::size_t row = by_iid->find({}, f[0]);
      if (row == detail::sample_index::absent) ++not_found;
      for (; row != detail::sample_index::absent; row = by_iid->next(row)) hit[row] = 1;
      return;
    }
    if (!by_fid_iid) by_fid_iid.emplace(samples, detail::sample_index::key::fid_iid);
    const std::size_t row = by_fid_iid->find(f[0], f[1]);
    if (row == detail::sample_index::absent) {
      ++not_found;
    } else {
      hit[row] = 1;
    }
  });
  return not_found;
}

std::size_t mark_columns(const store& s, const std::filesystem::path& file,
                         std::vector<std::uint8_t>& hit) {
  std::unordered_set<std::string> ids;
  detail::for_each_record(file, [&](std::size_t, std::span<const std::string_view> f) {
    if (f[0].front() != '#') ids.emplace(f[0]);
  });
  const auto& columns = s.columns();
  std::size_t found = 0;
  for (std::size_t j = 0; j < columns.size(); ++j)
    if (ids.count(columns[j].id) != 0) {
      hit[j] = 1;
      ++found;
    }
  // Duplicate IDs in the store may match one listed ID more than once.
  return ids.size() > found ? ids.size() - found : 0;
}

}  // namespace

selection selection::all(const store& s) {
  selection sel;
  sel.row_kept.assign(s.num_rows(), 1);
  sel.rows.resize(s.num_rows());
  std::iota(sel.rows.begin(), sel.rows.end(), std::size_t{0});
  sel.columns.resize(s.num_columns());
  std::iota(sel.columns.begin(), sel.columns.end(), std::size_t{0});
  return sel;
}

selection select(const store& s, const selection_files& files) {
  selection sel;
  const std::size_t n = s.num_rows(), m = s.num_columns();
  sel.row_kept.assign(n, 1);
  std::vector<std::uint8_t> hit;
  if (!files.keep.empty()) {
    hit.assign(n, 0);
    sel.ids_not_found += mark_samples(s, files.keep, hit);
    sel.row_kept = hit;
  }
  if (!files.remove.empty()) {
    hit.assign(n, 0);
    sel.ids_not_found += mark_samples(s, files.remove, hit);
    for (std::size_t i = 0; i < n; ++i)
      if (hit[i]) sel.row_kept[i] = 0;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (sel.row_kept[i]) sel.rows.push_back(i);

  std::vector<std::uint8_t> col_kept(m, 1);
  if (!files.extract.empty()) {
    hit.assign(m, 0);
    sel.ids_not_found += mark_columns(s, files.extract, hit);
    col_kept = hit;
  }
  if (!files.exclude.empty()) {
    hit.assign(m, 0);
    sel.ids_not_found += mark_columns(s, files.exclude, hit);
    for (std::size_t j = 0; j < m; ++j)
      if (hit[j]) col_kept[j] = 0;
  }
  for (std::size_t j = 0; j < m; ++j)
    if (col_kept[j]) sel.columns.push_back(j);

  if (sel.rows.empty())
    throw error(errc::invalid_argument,
                s.path().string() + ": no sample is left after --keep/--remove");
  if (sel.columns.empty())
    throw error(errc::invalid_argument,
                s.path().string() + ": no column is left after --extract/--exclude");
  return sel;
}

}  // namespace colflow
