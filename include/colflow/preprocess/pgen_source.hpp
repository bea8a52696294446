/// @file pgen_source.hpp
/// PLINK 2 input (.pgen with its .pvar or .pvar.zst and .psam) as a column_source of hard calls
/// or of dosages. Part of libcolflow_preprocess (colflow::preprocess).
///
/// Read from the format's specification (plink-ng's pgen_spec): storage modes 0x01 (a PLINK 1
/// variant-major .bed body), 0x02 (fixed-width records of type 0) and 0x10 (variable-width
/// records, what plink2 --make-pgen writes); every compression of a record's main track (plain
/// 2-bit, 1-bit with a difference list, LD-compressed against the previous record that is not,
/// plain or inverted, and the difference lists from all hom-REF, all hom-ALT, all missing); the
/// hard-call phase track (skipped: phase is dropped) and the dosage track (a difference list, a
/// bit array or every sample), whose phased part is dropped too.
///
/// Which allele is counted: A1 = ALT, A2 = REF, as plink2 --make-bed writes them, so that a
/// store made from a .pgen equals one made from the .bed plink2 writes of it. A file whose
/// records hold no dosage is a genotype source (PLINK 1 codes); a file where any record holds
/// one is a dosage source (ALT dosages in 1/16384, codec/dosage_codec.hpp), hard calls being
/// 0, 1 or 2 copies where a sample has no dosage, as plink2 reads them.
///
/// Multiallelic variants are refused, as plink2 --make-bed refuses them ("cannot contain
/// multiallelic variants"): a .pvar ALT with a comma, an allele count above 2 in the header, a
/// record with a multiallelic track. Split them first (plink2 --max-alleles 2 drops them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// The three files of a PLINK 2 fileset.
struct pgen_paths {
  std::filesystem::path pgen, pvar, psam;
  /// PREFIX.pgen, PREFIX.pvar (PREFIX.pvar.zst when there is no PREFIX.pvar), PREFIX.psam; a
  /// trailing ".pgen" on the prefix is tolerated.
  static pgen_paths from_prefix(const std::string& prefix);
};

/// A .pgen fileset read as a column_source: column j is variant j (numbered from 0 in error
/// messages). Columns: {CHROM, ID ("." without one), CM ("0" without one), POS, ALT, REF}.
/// Samples from the .psam: FID ("0" without a FID column, as plink2 --make-bed writes), IID,
/// PAT, MAT, SEX (1/M/m "1", 2/F/f "2", else "0"), the first phenotype ("-9" without one or for
/// NA); SID and further phenotypes are not kept. A .psam without a header line is read as a .fam.
///
/// Errors (colflow::error), from the constructor: errc::not_found for a missing file,
/// errc::io_error when one cannot be read, errc::bad_input naming the file (and the variant,
/// line or byte) for: a bad magic number or an unknown storage mode, a header that does not
/// fit the file, a sample count other than the .psam's, a variant count other than the .pvar's,
/// a record type out of range (main-track type 5) or LD-compressed at the start of a block, a
/// record running past the end of the file, a multiallelic variant, a .pvar or .psam line that
/// is malformed, a .psam sample ID (FID, IID) that appears twice. From read_genotypes and
/// read_dosages (decode_* in a two-step read): errc::bad_input naming the file and variant for
/// a record that does not hold what its type says (it ends early, a difference list names a
/// sample past the last, a dosage exceeds 2). No input makes the source read out of bounds.
///
/// Thread safety: one thread at a time, except decode_genotypes and decode_dosages, which are
/// const and may run concurrently with each other and with fetch. column() must be called in
/// order (the .pvar is streamed); records may be fetched in any order.
class pgen_source final : public column_source {
 public:
  explicit pgen_source(const pgen_paths& paths);
  ~pgen_source() override;
  pgen_source(const pgen_source&) = delete;
  pgen_source& operator=(const pgen_source&) = delete;

  value_type kind() const override { return kind_; }
  std::uint64_t rows() const override { return samples_.size(); }
  std::uint64_t columns() const override { return variants_; }
  std::vector<sample_info> samples() const override { return samples_; }
  column_info column(std::uint64_t j) const override;
  /// "PLINK 2 .pgen PATH".
  std::string description() const override;
  /// The number of variants whose phase (hard-call or dosage) was dropped, when any.
  std::vector<std::string> notes() const override;
  void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) override;
  void read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) override;
  /// True: every record holds hard calls (beside its dosages, when it has some).
  bool has_hard_calls() const override { return true; }
  /// Record j's bytes, and those of the record an LD-compressed one refers to (never null).
  std::unique_ptr<fetched> fetch(std::uint64_t j) override;
  void decode_genotypes(const fetched& raw, std::span<std::uint8_t> codes) const override;
  void decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const override;

  /// The storage mode byte: 0x01, 0x02 or 0x10.
  std::uint8_t storage_mode() const noexcept;
  /// How many records have each record type 0..255 (in modes 0x01 and 0x02 all are type 0).
  std::vector<std::uint64_t> record_types() const;
  /// How many variants carry hard-call or dosage phase, which the source drops.
  std::uint64_t phased_variants() const noexcept { return phased_variants_; }

 private:
  // Throws errc::io_error if the .pgen shrank under its mapping (what was decoded read zeros).
  void check_intact() const;
  // Lets the mapping's pages far before `position` (in bytes) out of the resident set.
  void drop_behind(std::uint64_t position);
  struct state;
  pgen_paths paths_;
  std::vector<sample_info> samples_;
  std::uint64_t variants_ = 0, phased_variants_ = 0;
  value_type kind_ = value_type::genotype;
  std::unique_ptr<state> state_;
};

}  // namespace colflow::preprocess
