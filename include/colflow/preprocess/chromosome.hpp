/// @file chromosome.hpp
/// Chromosome codes as PLINK 2 writes them. Part of libcolflow_preprocess (colflow::preprocess).
///
/// Every importer passes its chromosome codes through normalize_chromosome (the converter does
/// it for every source), so that a store made from a .bed, a VCF or a BGEN file names
/// chromosomes alike, and its outputs and --extract lists line up with PLINK 2's. The function
/// is the library's (colflow/store/chromosome.hpp), which also reads the codes of stores.
#pragma once

#include "colflow/store/chromosome.hpp"

namespace colflow::preprocess {

using colflow::normalize_chromosome;

}  // namespace colflow::preprocess
