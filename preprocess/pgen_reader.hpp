// What the files of pgen_source share: the header and its record index, the decoding of one
// record, the .pvar and .psam readers. Private to preprocess/ (no public header includes it);
// the public interface is colflow/preprocess/pgen_source.hpp. The format is PLINK 2's PGEN
// specification (plink-ng's pgen_spec); the facts used are restated where they are used.
//
//   pgen_header.cpp   the header: storage mode, counts, the record types and byte ranges
//   pgen_records.cpp  one record's main track (every compression) and dosage track decoded
//   pgen_pvar.cpp     the .pvar (or .pvar.zst, or a headerless .bim-like file) read as lines
//   pgen_psam.cpp     the .psam (or a .fam) read into samples
//   pgen_source.cpp   the column_source that ties them together
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/io/file_io.hpp"
#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess::detail::pgen {

// ---- The header and the record index (pgen_header.cpp) ------------------------------------

// The storage modes read: 0x01 is a PLINK 1 variant-major .bed body (PLINK 1's 2-bit codes),
// 0x02 fixed-width records of type 0, 0x10 variable-width records with a type each.
inline constexpr std::uint8_t mode_bed = 0x01, mode_fixed = 0x02, mode_variable = 0x10;

// Variants are grouped in blocks of 2^16 in mode 0x10 (pgen_spec, "Variant block offsets").
inline constexpr std::uint64_t block_variants = std::uint64_t{1} << 16;

// Bits of a record type (pgen_spec, "Variant records"): bits 0-2 the main track's compression,
// bit 3 a multiallelic hard-call track, bit 4 hard-call phase, bits 5-6 how dosages are stored,
// bit 7 explicit dosage phase.
inline constexpr std::uint8_t type_main_mask = 0x07, type_multiallelic = 0x08, type_phase = 0x10,
                              type_dosage_mask = 0x60, type_dosage_phase = 0x80;
// The dosage-track kind of a record holding every sample's dosage (65535 for a missing one).
inline constexpr std::uint8_t type_dosage_all = 0x40;

// The header as read and checked, and every record's type and byte range.
struct pgen_index {
  std::uint8_t mode = 0;
  std::uint64_t variants = 0, samples = 0;
  // Record j is bytes [starts[j], starts[j + 1]) of the file, of type types[j] (0 in the
  // fixed-width modes).
  std::vector<std::uint64_t> starts;
  std::vector<std::uint8_t> types;
};

// Reads and checks the header of `file` (`size` bytes, open as fd). `samples` is the .psam's
// count: mode 0x01 stores none, the other modes must agree with it; `variants` is the count of
// `pvar`, which mode 0x01 takes and the other modes' must equal (checked before anything is
// allocated by the header's count, so that a corrupt count costs no memory). Every record must lie
// inside the file and have a type this reader decodes (main track 0-4, 6, 7; no multiallelic
// track: colflow refuses multiallelic variants as plink2 --make-bed does).
pgen_index read_pgen_index(const std::filesystem::path& file, const file_descriptor& fd,
                           std::uint64_t size, std::uint64_t samples, std::uint64_t variants,
                           const std::filesystem::path& pvar);

// ---- One record decoded (pgen_records.cpp) ------------------------------------------------

// A record's bytes and where it sits, for messages.
struct record_view {
  std::span<const std::uint8_t> bytes;
  std::uint8_t type = 0;
  std::uint64_t index = 0;  // the variant's number, from 0
};

// The 2-bit genotype categories of the main track of a record of mode 0x02/0x10 (0 hom-REF,
// 1 het, 2 hom-ALT, 3 missing; sample i in bits 2 (i mod 4) of byte i / 4, padding zero) into
// `categories` (ceil(N / 4) bytes). An LD-compressed record (main type 2 or 3) is decoded
// against `reference`, the categories of the most recent record that is not. Returns how
// many bytes of the record the main track took. Throws bad_input naming `file` and the
// variant for a record that does not hold what its type says.
std::size_t decode_main_track(const std::filesystem::path& file, const record_view& record,
                              std::uint64_t samples, std::span<const std::uint8_t> reference,
                              std::span<std::uint8_t> categories);

// PLINK 1 codes (the store's genotype codes, A1 = ALT counted) of categories, in place.
void categories_to_bed_codes(std::span<std::uint8_t> codes, std::uint64_t samples);

// The inverse: categories of PLINK 1 codes (A1 = ALT), in place, padding bits zeroed; what
// colflow export --pfile writes (preprocess/exporter.cpp).
void bed_codes_to_categories(std::span<std::uint8_t> codes, std::uint64_t samples);

// The ALT dosages of a record whose main track (`categories`, ending at byte `main_end`) is
// decoded: the hard calls as 0, 1, 2 allele copies (missing for a missing call), replaced by
// the record's dosage track where it has one, in 1/16384 units. Skips the phase track.
void decode_dosages(const std::filesystem::path& file, const record_view& record,
                    std::uint64_t samples, std::size_t main_end,
                    std::span<const std::uint8_t> categories, std::span<std::uint16_t> dosages);

// ---- The .pvar (pgen_pvar.cpp) ------------------------------------------------------------

// A .pvar (or .pvar.zst, decompressed as it is read) read one variant at a time: the header
// lines skipped, the #CHROM line's columns found (or the .bim-like order of a headerless file).
class pvar_reader {
 public:
  explicit pvar_reader(const std::filesystem::path& file);
  ~pvar_reader();
  pvar_reader(const pvar_reader&) = delete;
  pvar_reader& operator=(const pvar_reader&) = delete;
  // The next variant as the store records it (A1 = ALT, A2 = REF, cM "0" when absent), or
  // false at the end. Throws bad_input naming the file and line for a malformed line or a
  // multiallelic variant.
  bool next(column_info& out);
  // The number of the line last read, from 1.
  std::uint64_t line() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// The number of variants of a .pvar, every line checked (as pvar_reader::next).
std::uint64_t count_pvar(const std::filesystem::path& file);

// ---- The .psam (pgen_psam.cpp) ------------------------------------------------------------

// The samples of a .psam (or a .fam): FID ("0" without a FID column), IID, PAT, MAT ("0"
// without them), SEX as "1", "2" or "0", the first phenotype column ("-9" without one). Throws
// bad_input naming the file and line for a malformed file or a sample ID that appears twice.
std::vector<sample_info> read_psam(const std::filesystem::path& file);

}  // namespace colflow::preprocess::detail::pgen
