// The conversions between numpy and the library's types that the analyses' bindings share:
// selections from the indices Python resolved, and results as numpy arrays they own.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"

namespace colflow::python {

phenotype_table make_table(table_array values, const std::vector<std::string>& names,
                           std::size_t n) {
  if (values.shape(0) != n || values.shape(1) != names.size())
    throw nb::value_error("a table of values must have one row per store sample");
  phenotype_table t;
  t.names = names;
  t.values = Eigen::Map<const Eigen::MatrixXd>(values.data(), static_cast<Eigen::Index>(n),
                                               static_cast<Eigen::Index>(names.size()));
  t.file_samples = t.matched_samples = n;
  return t;
}

selection make_selection(const store& s, std::span<const std::int64_t> rows,
                         std::span<const std::int64_t> cols) {
  selection sel;
  sel.row_kept.assign(s.num_rows(), 0);
  for (std::int64_t i : rows) sel.row_kept[static_cast<std::size_t>(i)] = 1;
  for (std::size_t i = 0; i < sel.row_kept.size(); ++i)
    if (sel.row_kept[i]) sel.rows.push_back(i);
  std::vector<std::uint8_t> col_kept(s.num_columns(), 0);
  for (std::int64_t j : cols) col_kept[static_cast<std::size_t>(j)] = 1;
  for (std::size_t j = 0; j < col_kept.size(); ++j)
    if (col_kept[j]) sel.columns.push_back(j);
  if (sel.rows.empty()) throw nb::value_error("no sample selected");
  if (sel.columns.empty()) throw nb::value_error("no column selected");
  return sel;
}

nb::object to_numpy(const Eigen::MatrixXd& m) {
  auto* owned = new Eigen::MatrixXd(m);
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Eigen::MatrixXd*>(p); });
  const std::size_t shape[2] = {static_cast<std::size_t>(owned->rows()),
                                static_cast<std::size_t>(owned->cols())};
  const std::int64_t strides[2] = {1, static_cast<std::int64_t>(owned->rows())};
  return nb::cast(
      nb::ndarray<nb::numpy, double, nb::ndim<2>>(owned->data(), 2, shape, owner, strides));
}

std::vector<sample_sex> sexes_with(const store& s,
                                   const std::optional<std::vector<std::string>>& codes) {
  std::vector<sample_sex> sexes = sexes_of(s.samples());
  if (!codes) return sexes;
  if (codes->size() != sexes.size()) throw nb::value_error("one sex per store sample");
  for (std::size_t i = 0; i < sexes.size(); ++i) {
    const std::string& code = (*codes)[i];
    if (code.empty()) continue;
    const std::optional<sample_sex> sex = sex_of_code(code);
    if (!sex)
      throw nb::value_error(("sample " + s.samples()[i].iid + ": '" + code +
                             "' is not a sex code (1/M male, 2/F female, 0/NA unknown)")
                                .c_str());
    sexes[i] = *sex;
  }
  return sexes;
}

}  // namespace colflow::python
