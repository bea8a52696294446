/// @file chromosome.hpp
/// Chromosome codes: the one place that names them. Stores made by `colflow preprocess` hold the
/// codes PLINK 2 writes (normalize_chromosome), and a store reads its codes through
/// normalize_chromosome too (store::columns()), so a store written before the codes were
/// normalised (PLINK 1's numeric 23 for X, say) gives the same results and tables as a new one.
#pragma once

#include <string>
#include <string_view>

namespace colflow {

/// The code PLINK 2 (human chromosome set, --allow-extra-chr) writes for `code`:
/// - a "chr" prefix (any case) is dropped when what follows is a code below;
/// - one- or two-digit numbers 0-22 lose their leading zero ("01" -> "1"); 23 -> "X",
///   24 -> "Y", 25 -> "XY", 26 -> "MT", 27 -> "PAR1", 28 -> "PAR2";
/// - X, Y, XY, M and MT in any case -> "X", "Y", "XY", "MT", "MT";
/// - anything else is kept as written: other species' codes ("Chr01K"), contigs
///   ("chrUn_gl000220"), numbers of three or more digits. Unlike PLINK 2, which refuses the
///   two-digit numbers 29-99 without --chr-set, they are kept too.
std::string normalize_chromosome(std::string_view code);

/// The number of a human autosome or X as whole-genome regression counts chromosomes: 1-22,
/// and 23 for X, from any code normalize_chromosome reads as one of them; 0 for every other
/// code (Y, XY, MT, PAR1/2, other species, contigs).
int autosome_or_x_number(std::string_view code);

}  // namespace colflow
