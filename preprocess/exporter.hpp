// Writing a store back out: PLINK 1 binary files or a .npy matrix. Files are written under
// temporary names and renamed when complete, so an interrupted export leaves no partial file.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow::preprocess {

// PREFIX.bed/.bim/.fam. A genotype store's .bed holds its codes as they are (padding bits
// zero), so it is byte-identical to a .bed it was made from. A float store must hold dosages
// (0, 1, 2, NaN: made with --no-standardize); standardised values cannot be turned back into
// calls exactly and are refused (errc::invalid_argument).
using export_progress = std::function<void(const pass_progress&)>;

void export_bed(const store& s, const std::string& prefix, bool overwrite,
                const export_progress& progress = {});

// A .npy v1.0 file of float64 (or float32), shape (rows, columns), Fortran order, written
// column by column: standardised values for a genotype store, the stored values otherwise.
void export_npy(const store& s, const std::filesystem::path& file, bool float32, bool overwrite,
                const export_progress& progress = {});

}  // namespace colflow::preprocess
