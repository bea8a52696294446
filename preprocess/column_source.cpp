#include "column_source.hpp"

#include "colflow/error.hpp"

namespace colflow::preprocess {

void column_source::read_genotypes(std::uint64_t, std::span<std::uint8_t>) {
  throw error(errc::invalid_argument, description() + " holds no genotypes");
}

void column_source::read_values(std::uint64_t, std::span<double>) {
  throw error(errc::invalid_argument, description() + " holds genotypes, not dense values");
}

}  // namespace colflow::preprocess
