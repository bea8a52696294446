// What every column_source shares: input errors, the default reads that refuse, read checks.
#include "colflow/preprocess/column_source.hpp"

#include "colflow/error.hpp"

namespace colflow::preprocess {

error input_error(const std::filesystem::path& file, const std::string& what) {
  const std::string name = file.filename().string();
  return error(errc::bad_input,
               name + ": " + what + (file.string() == name ? "" : " (" + file.string() + ")"));
}

void column_source::read_genotypes(std::uint64_t, std::span<std::uint8_t>) {
  throw error(errc::invalid_argument, description() + " holds no genotypes");
}

void column_source::read_dosages(std::uint64_t, std::span<std::uint16_t>) {
  throw error(errc::invalid_argument, description() + " holds no dosages");
}

std::unique_ptr<column_source::fetched> column_source::fetch(std::uint64_t) { return nullptr; }

void column_source::decode_genotypes(const fetched&, std::span<std::uint8_t>) const {
  throw error(errc::invalid_argument, description() + " does not decode fetched genotypes");
}

void column_source::decode_dosages(const fetched&, std::span<std::uint16_t>) const {
  throw error(errc::invalid_argument, description() + " does not decode fetched dosages");
}

void column_source::read_values(std::uint64_t, std::span<double>) {
  throw error(errc::invalid_argument, description() + " holds genotypes, not dense values");
}

void column_source::check_read(std::uint64_t j, std::size_t size) const {
  if (j >= columns())
    throw error(errc::invalid_argument, description() + ": column " + std::to_string(j) +
                                            " is out of range (" + std::to_string(columns()) +
                                            " columns)");
  if (size != rows())
    throw error(errc::invalid_argument, description() + ": a column read needs a buffer of " +
                                            std::to_string(rows()) + " values, got " +
                                            std::to_string(size));
}

}  // namespace colflow::preprocess
