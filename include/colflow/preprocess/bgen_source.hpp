/// @file bgen_source.hpp
/// BGEN input (.bgen, versions 1.1, 1.2 and 1.3, with its Oxford .sample file) as a
/// column_source of dosages. Part of libcolflow_preprocess (colflow::preprocess).
///
/// BGEN stores, for each variant and sample, genotype probabilities: three 16-bit values per
/// sample in layout 1 (v1.1), B-bit values packed bit by bit in layout 2 (v1.2 with zlib or no
/// compression, v1.3 with zstd). The source turns them into the dosage of one allele, the
/// counted allele A1, in the 16-bit fixed point of codec/dosage_codec.hpp, with the values
/// PLINK 2 (2.00a3.5, `plink2 --bgen`) gives them, exactly:
///
/// - layout 2, with max = 2^B − 1 and num the expected count of the file's first allele in
///   units of 1/max (2·P(AA) + P(AB) unphased diploid; the sum of the two haplotypes'
///   probabilities of the first allele, phased; 2·P(A), haploid, so that a haploid dosage
///   counts two copies as PLINK 2 does): the first allele's dosage is 16384·num / max rounded
///   to the nearest integer, a remainder of (max − 1) / 2 (just under one half) rounding up;
///   the second allele's is 32768 minus that;
/// - layout 1, with the three values p_AA, p_AB, p_BB of sum s > 0: the second allele's
///   dosage is 16384·(p_AB + 2·p_BB) / s rounded to nearest, ties to even (the sum need not be
///   32768: the probabilities are normalised); the first allele's is 32768 minus that.
///
/// A missing genotype (the missing bit of a layout-2 sample, a ploidy of 0, three zero values
/// in layout 1) is dosage_missing.
///
/// Everything outside the compressed genotype blocks is validated when the source is opened,
/// before the first column is read: the header, the sample identifier block, the .sample file,
/// and every variant's header and block lengths, each checked against the file size. What is
/// inside a block (its decompressed size, ploidies, bit depth, probabilities) is checked when
/// the column is read. The source keeps one 64-bit offset per variant; column descriptions are
/// read again from the file when asked for.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/codec/codec.hpp"
#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// What to open and which allele to count.
struct bgen_options {
  /// The .bgen file.
  std::filesystem::path bgen;
  /// Its Oxford .sample file, or empty to use the identifiers stored in the .bgen.
  std::filesystem::path sample;
  /// Count the second allele of each variant instead of the first. The default counts the
  /// first allele, which PLINK 2 calls `ref-last` (and `ref-unknown`): files written by
  /// `plink2 --export bgen-1.x` store A1 (ALT) first. Set it for files that store the reference
  /// allele first, such as the UK Biobank's (`ref-first`).
  bool ref_first = false;
};

/// Parses an Oxford .sample file: a header line whose first three names are `ID_1 ID_2
/// missing`, a line of types whose first three are `0 0 0` (then one of 0, D, C, P or B per
/// further column), then one line per sample with as many fields as the header; or the QCTOOL v2
/// variant (`plink2 --export bgen-1.x sample-v2`), whose lines start with one column `ID` of
/// type 0. Returns FID = ID_1 (or "0" for the v2 variant), IID = ID_2 (or ID), father and
/// mother "0", phenotype "-9", and sex from a column named `sex` of type D: "1" or "2", or "0"
/// for its unknown values 0 and NA. Blank lines are skipped.
///
/// Errors (colflow::error): errc::not_found for a missing file, errc::io_error when it cannot
/// be opened, errc::bad_input naming the file and line for a malformed header or type line, a
/// line of another field count, a sex code other than 0, 1, 2 or NA, or a file without samples.
std::vector<sample_info> read_oxford_sample(const std::filesystem::path& sample);

/// A BGEN file read as a dosage column_source: column j is variant j of the file (variants
/// are numbered from 0, like columns, in error messages too).
///
/// Columns: column(j) is {chromosome as written in the file, ID, "0", position, A1, A2}, where
/// A1 is the counted allele (the first allele, or the second with bgen_options::ref_first) and
/// A2 the other; the ID is the variant's rsid as written ("." included, as PLINK 2 takes it),
/// or its other identifier when the rsid is empty, or "." when both are.
///
/// Samples: from the .sample file when one is given (read_oxford_sample; its count must equal
/// the .bgen's), otherwise from the identifiers stored in the .bgen (IID = the identifier,
/// FID = "0", sex "0"). A file without stored identifiers needs a .sample file. Two samples
/// with the same FID and IID are refused.
///
/// Errors (colflow::error): from the constructor, errc::not_found when a file is missing,
/// errc::io_error when one cannot be opened or read, errc::bad_input with a message naming the
/// file (and the variant, with its ID, where there is one) for: a header block shorter than
/// 20 bytes or not ending before the first variant, a magic number other than "bgen" or four
/// zero bytes, an unknown layout or compression or a pair that does not exist (zstd with
/// layout 1), no variants or no samples, a sample identifier block that does not fit or
/// disagrees with the header, a variant whose fields or genotype block run past the end of the
/// file, a layout-1 variant whose sample count differs from the header's, a variant with other
/// than two alleles (colflow reads biallelic variants: split the others first, e.g. with
/// `bcftools norm -m-`), a layout-2 block whose sizes cannot hold the samples, a .sample error
/// (read_oxford_sample) or count mismatch, a missing sample source, duplicate sample IDs. From
/// read_dosages (from decode_dosages, in a two-step read), errc::bad_input naming the file and
/// variant for a block that does not decompress to its declared size, a decompressed block whose
/// sample count, allele count, ploidy range, phasing flag or bit depth (1 to 32) is invalid, a
/// ploidy above 2 (colflow reads haploid and diploid genotypes), a block whose length is not the
/// one its ploidies and bit depth imply, or an unphased diploid sample whose probabilities sum to
/// more than one; errc::invalid_argument for a bad column or buffer; errc::io_error if the file
/// cannot be read (it shrank). No input, however malformed, makes the source read or write out of
/// bounds.
///
/// Reading in two steps (column_source.hpp): fetch(j) reads variant j's bytes, its header and its
/// stored genotype block, in one read; decode_dosages decompresses the block and turns its
/// probabilities into dosages, read_dosages being the two in a row. A variant's header is parsed
/// (and refused) by fetch, what is inside its genotype block by decode_dosages, with the messages
/// read_dosages gives.
///
/// Thread safety: one thread at a time (the converter's contract, column_source.hpp), except
/// decode_dosages, which is const and may run on any number of threads at once, concurrently
/// with fetch, column and each other (it reads no file and changes no state). Unlike bed_source,
/// columns may be read or fetched in any order, each any number of times.
class bgen_source final : public column_source {
 public:
  /// Opens and validates the files (see above).
  explicit bgen_source(const bgen_options& options);
  ~bgen_source() override;
  bgen_source(const bgen_source&) = delete;
  bgen_source& operator=(const bgen_source&) = delete;

  value_type kind() const override { return value_type::dosage; }
  std::uint64_t rows() const override { return samples_.size(); }
  std::uint64_t columns() const override { return variants_; }
  std::vector<sample_info> samples() const override { return samples_; }
  /// Variant j's description (see the class comment), read from the file. Any order.
  column_info column(std::uint64_t j) const override;
  /// "BGEN v1.1 PATH", "BGEN v1.2 PATH" or "BGEN v1.3 PATH".
  std::string description() const override;
  /// Column j's dosages of the counted allele; `dosages` holds rows() values. Any order.
  void read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) override;
  /// Variant j's bytes, for decode_dosages (never null); one read of the file. Any order.
  /// Throws errc::invalid_argument for a bad column, errc::io_error if the file cannot be read.
  std::unique_ptr<fetched> fetch(std::uint64_t j) override;
  /// The dosages of a column this source fetched, as read_dosages gives them; `dosages` holds
  /// rows() values. Thread-safe (see the class comment). Throws errc::invalid_argument for a
  /// column another source fetched or a bad buffer, what read_dosages throws otherwise.
  void decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const override;

  /// The layout of the genotype blocks: 1 (v1.1) or 2 (v1.2, v1.3).
  int layout() const noexcept { return layout_; }
  /// How the genotype blocks are compressed: codec_id::none, zlib or zstd.
  codec_id compression() const noexcept { return compression_; }
  /// "v1.1", "v1.2" or "v1.3".
  std::string_view version() const noexcept;
  /// True when the .bgen stores sample identifiers.
  bool has_sample_identifiers() const noexcept { return has_sample_ids_; }
  /// True when the counted allele A1 is the second allele (bgen_options::ref_first).
  bool counts_second_allele() const noexcept { return ref_first_; }

 private:
  struct state;
  bgen_options options_;
  std::vector<sample_info> samples_;
  std::uint64_t variants_ = 0;
  int layout_ = 0;
  codec_id compression_ = codec_id::none;
  bool has_sample_ids_ = false;
  bool ref_first_ = false;
  std::unique_ptr<state> state_;
};

}  // namespace colflow::preprocess
