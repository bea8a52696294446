// Several inputs of the same samples as one column_source (colflow/preprocess/
// concatenated_source.hpp).
#include "colflow/preprocess/concatenated_source.hpp"

#include <algorithm>

#include "colflow/error.hpp"

namespace colflow::preprocess {

concatenated_source::concatenated_source(std::vector<std::unique_ptr<column_source>> parts)
    : parts_(std::move(parts)) {
  if (parts_.empty()) throw error(errc::invalid_argument, "no input to concatenate");
  const column_source& first = *parts_.front();
  const std::vector<sample_info> samples = first.samples();
  for (const auto& part : parts_) {
    if (part->kind() != first.kind())
      throw error(errc::invalid_argument, part->description() + " holds " +
                                              std::string(value_type_name(part->kind())) +
                                              " columns where " + first.description() + " holds " +
                                              std::string(value_type_name(first.kind())) +
                                              " columns; inputs of one store must be of one kind");
    if (part.get() != &first) {
      const std::vector<sample_info> other = part->samples();
      const std::size_t n = std::min(samples.size(), other.size());
      for (std::size_t i = 0; i < n; ++i)
        if (other[i].fid != samples[i].fid || other[i].iid != samples[i].iid)
          throw error(errc::bad_input,
                      part->description() + ": sample " + std::to_string(i + 1) + " is '" +
                          other[i].fid + " " + other[i].iid + "' where " + first.description() +
                          " has '" + samples[i].fid + " " + samples[i].iid +
                          "'; the inputs of one store must list the same samples in the same "
                          "order");
      if (other.size() != samples.size())
        throw error(errc::bad_input, part->description() + " has " + std::to_string(other.size()) +
                                         " samples where " + first.description() + " has " +
                                         std::to_string(samples.size()) +
                                         "; the inputs of one store must list the same samples");
    }
    first_column_.push_back(columns_);
    columns_ += part->columns();
  }
  first_column_.push_back(columns_);
}

std::pair<column_source*, std::uint64_t> concatenated_source::locate(std::uint64_t j) const {
  if (j >= columns_)
    throw error(errc::invalid_argument, "column " + std::to_string(j) + " is out of range (" +
                                            std::to_string(columns_) + " columns)");
  // The last part whose first column is at most j.
  const auto it = std::upper_bound(first_column_.begin(), first_column_.end() - 1, j) - 1;
  const auto p = static_cast<std::size_t>(it - first_column_.begin());
  return {parts_[p].get(), j - *it};
}

column_info concatenated_source::column(std::uint64_t j) const {
  const auto [part, k] = locate(j);
  return part->column(k);
}

std::string concatenated_source::description() const {
  std::string d;
  for (const auto& part : parts_) d += (d.empty() ? "" : "; ") + part->description();
  return d;
}

std::vector<std::string> concatenated_source::notes() const {
  std::vector<std::string> all;
  for (const auto& part : parts_)
    for (std::string& note : part->notes()) all.push_back(std::move(note));
  return all;
}

void concatenated_source::read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) {
  const auto [part, k] = locate(j);
  part->read_genotypes(k, codes);
}

bool concatenated_source::has_hard_calls() const {
  for (const auto& part : parts_)
    if (!part->has_hard_calls()) return false;
  return true;
}

void concatenated_source::read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) {
  const auto [part, k] = locate(j);
  part->read_dosages(k, dosages);
}

void concatenated_source::read_values(std::uint64_t j, std::span<double> values) {
  const auto [part, k] = locate(j);
  part->read_values(k, values);
}

}  // namespace colflow::preprocess
