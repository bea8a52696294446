/// @file chromosome.hpp
/// Chromosome codes as PLINK 2 writes them. Part of libcolflow_preprocess (colflow::preprocess).
///
/// Every importer passes its chromosome codes through normalize_chromosome (the converter does
/// it for every source), so that a store made from a .bed, a VCF or a BGEN file names
/// chromosomes alike, and its outputs and --extract lists line up with PLINK 2's.
#pragma once

#include <string>
#include <string_view>

namespace colflow::preprocess {

/// The code PLINK 2 (human chromosome set, --allow-extra-chr) writes for `code`:
/// - a "chr" prefix (any case) is dropped when what follows is a code below;
/// - one- or two-digit numbers 0-22 lose their leading zero ("01" -> "1"); 23 -> "X",
///   24 -> "Y", 25 -> "XY", 26 -> "MT", 27 -> "PAR1", 28 -> "PAR2";
/// - X, Y, XY, M and MT in any case -> "X", "Y", "XY", "MT", "MT";
/// - anything else is kept as written: other species' codes ("Chr01K"), contigs
///   ("chrUn_gl000220"), numbers of three or more digits. Unlike PLINK 2, which refuses the
///   two-digit numbers 29-99 without --chr-set, they are kept too.
std::string normalize_chromosome(std::string_view code);

}  // namespace colflow::preprocess
