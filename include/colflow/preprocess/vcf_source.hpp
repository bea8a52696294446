/// @file vcf_source.hpp
/// VCF and BCF input (plain .vcf, bgzipped .vcf.gz, .bcf), read with htslib, as a column_source
/// of genotypes (the GT field) or of dosages (the DS or GP field). Part of libcolflow_preprocess
/// (colflow::preprocess); htslib stays private to it.
///
/// The values are the ones PLINK 2 (2.00a3.5, `plink2 --vcf`) imports from the same file:
///
/// - Alleles: the counted allele A1 is the ALT allele, A2 the REF allele, as `plink2 --vcf ...
///   --make-bed` writes them to its .bim. A record whose ALT is "." (monomorphic) is one column
///   with A1 ".", as in PLINK 2's .bim, and every call is then two copies of REF.
/// - GT: 0/0 -> two copies of A2 (code 0b11), 0/1 and 1/0 -> heterozygous (0b10), 1/1 -> two
///   copies of A1 (0b00), ./. -> missing (0b01); phased calls (|) alike. A haploid call counts
///   as homozygous: "0" -> 0b11, "1" -> 0b00, "." -> missing. A half-call ("./1", "0/.") follows
///   vcf_options::half, PLINK 2's --vcf-half-call.
/// - DS (vcf_options::dosage_field::ds): the ALT dosage. For a haploid GT it is doubled (the DS
///   of a haploid call is on the 0..1 scale, PLINK 2 counts haploid calls twice). A sample whose
///   DS is missing (".", or absent from the sample's field or from the record's FORMAT) gets the
///   dosage of its GT call, 0, 1 or 2, or missing when it has no usable GT either: PLINK 2's
///   own `--export vcf vcf-dosage=DS` leaves DS out for hard calls.
/// - GP (vcf_options::dosage_field::gp): the probabilities P0, P1, P2 of 0, 1, 2 ALT copies
///   (two values P0, P1 for a haploid GT; values past those are ignored), each within 0..1;
///   the dosage is (P1 + 2·P2) / (P0 + P1 + P2), haploid 2·P1 / (P0 + P1): probabilities that
///   do not sum to 1 are normalised. All zero -> missing (without falling back to GT); a
///   missing GP ("." or absent) falls back to GT as for DS.
/// - Fixed point: a dosage x becomes floor(16384·x + 1/2) (halves round up), PLINK 2's rounding.
///   From VCF text, DS and GP are parsed from the line as doubles, as PLINK 2 parses them (htslib
///   would keep 32-bit floats, which can move a value written with 4 or more decimals
///   across a rounding boundary). From BCF, the stored floats are used as they are, as
///   `plink2 --bcf` does: a value near a boundary may thus differ by 1/16384 between a VCF and
///   the BCF made from it, in PLINK 2 and here alike.
/// - Samples: IID = the name in the header, FID = "0", father, mother and sex "0", phenotype
///   "-9" (PLINK 2's .fam without --double-id or --id-delim). Sex is not read from the file.
///
/// Multi-allelic records are refused unless vcf_options::split_multiallelic is set: then a
/// record with k ALT alleles becomes k columns, in ALT order, equal to the records
/// `bcftools norm -m-` writes: in the column of ALT allele a, GT allele a counts as ALT and
/// every other ALT allele as REF; DS (Number=A) gives the a-th value; GP (Number=G) gives the
/// probabilities of the genotypes REF/REF, REF/a and a/a (haploid: REF and a).
///
/// The file is read twice. The constructor reads the header and then every record once,
/// cheaply (a BCF record's fixed fields; a VCF line's first nine fields and its number of
/// tabs), so that columns() is known and structural errors are reported before the first
/// column is read: the number of sample columns, multi-allelic records, a missing GT field (or
/// a record with neither the dosage field nor GT). The columns are then streamed from a second
/// pass; memory does not grow with the number of records.
///
/// Reading in two steps (column_source.hpp): fetch(j) reads column j's record in file order
/// (VCF text: a copy of the line, whose fixed fields CHROM..INFO htslib parses; BCF: the record,
/// a copy of its GT and dosage arrays as stored), and decode_genotypes/decode_dosages turn it
/// into the column on any thread, so that the converter parses the sample columns of several
/// records at once; the converter bounds the records in flight. The columns of a split record
/// share one fetched record. The sample columns of VCF text are parsed by colflow, not by
/// htslib's vcf_parse (which may change the shared header, and parses every FORMAT field into
/// BCF arrays), to htslib's rules: the values, and the lines refused, are those of vcf_parse,
/// field by field (GT, and the syntax of every Integer and Float field; a FORMAT column is
/// checked once by htslib itself), except for a NUL byte in a line, which vcf_parse takes for a
/// column separator and which is refused here. The BCF arrays are read as bcf_get_genotypes and
/// bcf_get_format_float read them. Where htslib 1.16 ends the process (a FORMAT with GT whose
/// samples all lack it; a BCF field stored as an unexpected type), the record reads as missing
/// calls, or is refused.
///
/// htslib prints its own diagnostics to stderr; the library never prints, so htslib's log
/// level is set to HTS_LOG_OFF while a vcf_source function runs, and restored afterwards
/// (the level is process-wide).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// What to open and how to read it.
struct vcf_options {
  /// The .vcf, .vcf.gz (bgzip or gzip) or .bcf file; htslib detects the format from the content.
  std::filesystem::path path;
  /// Where dosages come from: `none` reads GT as genotype codes (kind() == genotype); `ds` and
  /// `gp` read the FORMAT field DS or GP as dosages (kind() == dosage), as
  /// `plink2 --vcf FILE dosage=DS` / `dosage=GP` do.
  enum class dosage_field { none, ds, gp } dosage = dosage_field::none;
  /// Read a record with several ALT alleles as one column per ALT allele, as
  /// `bcftools norm -m-` splits it. Without it, such a record is an error.
  bool split_multiallelic = false;
  /// A GT half-call, one allele known and the other missing ("./1", "0|."), as PLINK 2's
  /// --vcf-half-call: `error` (PLINK 2's default) refuses it; `missing` makes the call missing;
  /// `haploid` reads the known allele as a haploid call (homozygous); `reference` reads the
  /// missing allele as REF ("./1" -> heterozygous, "./0" -> two copies of REF).
  enum class half_call { error, missing, haploid, reference } half = half_call::error;
  /// htslib threads for decompressing bgzip and BCF input; 0 decompresses in the calling thread.
  unsigned threads = 0;
};

/// A VCF or BCF file read as a genotype or dosage column_source: column j is the j-th record
/// (or, with split_multiallelic, the j-th ALT allele of the records in file order).
///
/// Columns: column(j) is {CHROM as written, ID as written ("." stays "."), "0", POS, ALT (the
/// ALT allele of the column when split), REF}.
///
/// Errors (colflow::error), from the constructor: errc::not_found for a missing file,
/// errc::io_error when it cannot be opened, errc::bad_input with a message naming the file
/// (and, for a record, its line for VCF text, its record number, CHROM:POS and ID) for: a file
/// that is neither VCF nor BCF (htslib's detection, e.g. text without a ##fileformat=VCF line),
/// a bgzip file without its end-of-file marker (truncated), a header htslib cannot parse
/// (with the reason where it can be found: a missing #CHROM line, a duplicate sample name), no
/// samples or no records, a dosage field the header does not declare, a line with fewer than
/// 8 fields or another number of sample columns than the header names, an empty line, a POS
/// that is not an integer, a record with several ALT alleles (unless split_multiallelic), a
/// record without GT in FORMAT (genotypes) or without both the dosage field and GT (dosages),
/// a read or decompression error. From column() and the reads, errc::bad_input naming the file,
/// record and sample for what only parsing the genotypes reveals: a record htslib cannot parse,
/// and, in a GT that is read (always for genotypes; for dosages where DS or GP is missing), an
/// allele index past the record's alleles, a ploidy above 2 or a half-call (with
/// half_call::error); a DS that is not a number, below 0 or above 2 (after doubling a haploid
/// one); a GP value outside 0..1 or missing among present ones, fewer GP values than the ploidy
/// needs; also a file that changed since the constructor read it. A line whose sample columns
/// htslib's parser would refuse (an unreadable GT, a character where a field should end, more
/// fields in a sample than FORMAT has keys) is named as "line L (record R): htslib cannot parse
/// it (why): sample I 'NAME': ..." with the field at fault. Errors that only decoding finds are
/// thrown by the read or the decode of the column. errc::invalid_argument for a bad column or
/// buffer or a column asked for before the current record.
///
/// Thread safety: none, one thread at a time (the converter's contract, column_source.hpp),
/// except for decode_genotypes and decode_dosages, which may run on any number of threads at
/// once, concurrently with the other calls. Columns must be asked for in increasing order
/// (column(), then the read or fetch of the same column, as the converter does): the file is
/// streamed. A column may be read again while it is in the current record; skipping forward is
/// allowed.
class vcf_source final : public column_source {
 public:
  /// Opens the file, reads its header and counts and checks its records (see above).
  explicit vcf_source(const vcf_options& options);
  ~vcf_source() override;
  vcf_source(const vcf_source&) = delete;
  vcf_source& operator=(const vcf_source&) = delete;

  /// value_type::genotype without a dosage field, value_type::dosage with DS or GP.
  value_type kind() const override;
  std::uint64_t rows() const override { return samples_.size(); }
  std::uint64_t columns() const override { return columns_; }
  std::vector<sample_info> samples() const override { return samples_; }
  /// Column j's description (see the class comment). In order: see the class comment.
  column_info column(std::uint64_t j) const override;
  /// "VCF PATH" or "BCF PATH", plus ", dosages from DS" / ", dosages from GP" and
  /// ", multi-allelic records split" where they apply.
  std::string description() const override;
  /// Column j's 2-bit codes from GT; `codes` holds at least genotype_column_bytes(rows())
  /// bytes, padding bits are zeroed. Genotype sources only.
  void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) override;
  /// Column j's ALT dosages from DS or GP (GT where they are missing); `dosages` holds rows()
  /// values. Dosage sources only.
  void read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) override;
  /// Column j's record, undecoded (never null); in order like the reads. read_genotypes and
  /// read_dosages are fetch and decode.
  std::unique_ptr<fetched> fetch(std::uint64_t j) override;
  /// What fetch returned, as read_genotypes writes it. Thread-safe.
  void decode_genotypes(const fetched& raw, std::span<std::uint8_t> codes) const override;
  /// What fetch returned, as read_dosages writes it. Thread-safe.
  void decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const override;

  /// Number of records (data lines) in the file; columns() when no record was split.
  std::uint64_t records() const noexcept { return records_; }
  /// True for BCF input, false for VCF text (plain or compressed).
  bool is_bcf() const noexcept { return is_bcf_; }

 private:
  struct state;           // the streaming second pass
  struct format_layout;   // a FORMAT column as decoding reads it
  struct fetched_record;  // one record as fetch hands it to decoding
  struct fetched_column;  // what fetch returns: a record and an ALT allele
  class decoder;          // the decoding of one column
  static const fetched_column& column_of(const fetched& raw);

  // Read-only after the constructor: decoding reads them on several threads.
  vcf_options options_;
  std::vector<sample_info> samples_;
  std::uint64_t columns_ = 0, records_ = 0;
  bool is_bcf_ = false;
  std::unique_ptr<state> state_;
};

}  // namespace colflow::preprocess
