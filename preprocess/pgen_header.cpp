// The header of a .pgen (preprocess/pgen_reader.hpp): the storage mode, the counts and, for the
// variable-width mode, the blocks of record types and lengths turned into byte ranges. Every
// size read from the file is compared with what is left of it before it is used.
#include <algorithm>
#include <cstdio>

#include "pgen_reader.hpp"

namespace colflow::preprocess::detail::pgen {
namespace {

std::string str(std::uint64_t v) { return std::to_string(v); }

std::string hex_byte(unsigned b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b & 0xffu);
  return buf;
}

std::uint64_t load_le(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned b = 0; b < bytes; ++b) v |= static_cast<std::uint64_t>(p[b]) << (8 * b);
  return v;
}

std::vector<std::uint8_t> read_at(const file_descriptor& fd, std::uint64_t offset,
                                  std::uint64_t count) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(count));
  fd.pread_exact(std::as_writable_bytes(std::span(out)), offset);
  return out;
}

// The fixed-width modes: a .bed body after 3 bytes (0x01), or records of type 0 after the
// 12-byte header and an optional provisional-REF bitarray (0x02).
void index_fixed(const std::filesystem::path& file, std::uint64_t size, std::uint64_t header,
                 pgen_index& x) {
  const std::uint64_t record = (x.samples + 3) / 4;
  if (size < header || (size - header) / record < x.variants ||
      size - header != x.variants * record)
    throw input_error(file, "expected " + str(header) + " + " + str(x.variants) + " x " +
                                str(record) + " bytes for " + str(x.variants) + " variants of " +
                                str(x.samples) + " samples, found " + str(size) + " bytes");
  x.starts.resize(x.variants + 1);
  for (std::uint64_t j = 0; j <= x.variants; ++j) x.starts[j] = header + j * record;
  x.types.assign(x.variants, 0);
}

// What a record type may be: main-track compression 5 is reserved, a multiallelic track is
// refused, and an LD-compressed record needs an earlier record of its block to refer to.
void check_type(const std::filesystem::path& file, std::uint64_t j, std::uint8_t type) {
  const unsigned main = type & type_main_mask;
  if (main == 5)
    throw input_error(file, "variant " + str(j) + ": record type " + hex_byte(type) +
                                " is out of range (main-track type 5 is reserved)");
  if (type & type_multiallelic)
    throw input_error(file, "variant " + str(j) +
                                ": multiallelic hard calls; colflow refuses multiallelic "
                                "variants as plink2 --make-bed does (plink2 --max-alleles 2)");
  if ((main == 2 || main == 3) && j % block_variants == 0)
    throw input_error(file, "variant " + str(j) + ": record type " + hex_byte(type) +
                                " is LD-compressed but starts a block of 65536 variants");
}

// The variable-width mode: block offsets, then per block the record types, lengths, allele
// counts and provisional-REF flags.
void index_variable(const std::filesystem::path& file, const file_descriptor& fd,
                    std::uint64_t size, std::uint8_t format, pgen_index& x) {
  const unsigned code = format & 0x0f;
  if (code > 7)
    throw input_error(file, "header format byte " + hex_byte(format) +
                                ": record type/length code " + str(code) + " is not read");
  const unsigned type_bits = code < 4 ? 4 : 8, length_bytes = (code & 3) + 1;
  const unsigned allele_bytes = (format >> 4) & 3, provisional = format >> 6;
  const std::uint64_t blocks = (x.variants + block_variants - 1) / block_variants;
  if (size < 12 || (size - 12) / 8 < blocks)
    throw input_error(file, "the file (" + str(size) + " bytes) ends inside the offsets of its " +
                                str(blocks) + " variant blocks");
  const std::vector<std::uint8_t> offsets = read_at(fd, 12, blocks * 8);
  std::uint64_t pos = 12 + blocks * 8;
  x.starts.resize(x.variants + 1);
  x.types.resize(x.variants);
  std::uint64_t previous_end = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t first = b * block_variants;
    const std::uint64_t k = std::min(block_variants, x.variants - first);
    const std::uint64_t type_size = type_bits == 4 ? (k + 1) / 2 : k;
    const std::uint64_t block_size =
        type_size + k * length_bytes + k * allele_bytes + (provisional == 3 ? (k + 7) / 8 : 0);
    if (pos > size || size - pos < block_size)
      throw input_error(file, "the file (" + str(size) +
                                  " bytes) ends inside the header of "
                                  "variant block " +
                                  str(b) + " (variants from " + str(first) + ")");
    const std::vector<std::uint8_t> h = read_at(fd, pos, block_size);
    pos += block_size;
    std::uint64_t at = load_le(offsets.data() + 8 * b, 8);
    if (at < previous_end || at > size)
      throw input_error(file, "variant block " + str(b) + " starts at byte " + str(at) +
                                  ", outside the file (" + str(size) +
                                  " bytes) or before the end of the previous block");
    for (std::uint64_t i = 0; i < k; ++i) {
      const std::uint64_t j = first + i;
      const std::uint8_t type =
          type_bits == 4 ? static_cast<std::uint8_t>((h[i / 2] >> (4 * (i % 2))) & 15) : h[i];
      check_type(file, j, type);
      if (allele_bytes) {
        const std::uint64_t alleles =
            load_le(h.data() + type_size + k * length_bytes + i * allele_bytes, allele_bytes);
        if (alleles > 2)
          throw input_error(file, "variant " + str(j) + " has " + str(alleles) +
                                      " alleles; colflow refuses multiallelic variants as "
                                      "plink2 --make-bed does (plink2 --max-alleles 2)");
      }
      const std::uint64_t length = load_le(h.data() + type_size + i * length_bytes, length_bytes);
      if (length > size - at)
        throw input_error(file, "variant " + str(j) + ": its record of " + str(length) +
                                    " bytes at byte " + str(at) +
                                    " runs past the end of the "
                                    "file (" +
                                    str(size) + " bytes)");
      x.types[j] = type;
      x.starts[j] = at;
      at += length;
    }
    previous_end = at;
    x.starts[first + k] = at;
  }
  if (blocks > 0 && load_le(offsets.data(), 8) < pos)
    throw input_error(file, "variant block 0 starts at byte " + str(load_le(offsets.data(), 8)) +
                                ", inside the header, which ends at byte " + str(pos));
}

}  // namespace

pgen_index read_pgen_index(const std::filesystem::path& file, const file_descriptor& fd,
                           std::uint64_t size, std::uint64_t samples, std::uint64_t variants,
                           const std::filesystem::path& pvar) {
  if (size < 3)
    throw input_error(file, "file is " + str(size) + " bytes, too short for a .pgen header");
  const std::vector<std::uint8_t> magic = read_at(fd, 0, 3);
  if (magic[0] != 0x6c || magic[1] != 0x1b)
    throw input_error(file, "not a PLINK 2 .pgen file: starts with " + hex_byte(magic[0]) + " " +
                                hex_byte(magic[1]) + ", expected 0x6c 0x1b");
  pgen_index x;
  x.mode = magic[2];
  x.samples = samples;
  if (x.mode == mode_bed) {
    x.variants = variants;
    index_fixed(file, size, 3, x);
    return x;
  }
  if (x.mode != mode_fixed && x.mode != mode_variable)
    throw input_error(file, "storage mode " + hex_byte(x.mode) +
                                " is not read (colflow reads 0x01, 0x02 and 0x10)");
  if (size < 12)
    throw input_error(file, "file is " + str(size) + " bytes, too short for a .pgen header");
  const std::vector<std::uint8_t> h = read_at(fd, 3, 9);
  x.variants = load_le(h.data(), 4);
  const std::uint64_t stored_samples = load_le(h.data() + 4, 4);
  if (x.variants == 0) throw input_error(file, "no variants (the header says 0)");
  if (x.variants != variants)
    throw input_error(pvar, "lists " + str(variants) + " variants, but " +
                                file.filename().string() + " holds " + str(x.variants));
  if (stored_samples != samples)
    throw input_error(
        file, "holds " + str(stored_samples) + " samples, but the .psam has " + str(samples));
  const std::uint8_t format = h[8];
  if (x.mode == mode_fixed) {
    const std::uint64_t flags = (format >> 6) == 3 ? (x.variants + 7) / 8 : 0;
    index_fixed(file, size, 12 + flags, x);
  } else {
    index_variable(file, fd, size, format, x);
  }
  return x;
}

}  // namespace colflow::preprocess::detail::pgen
