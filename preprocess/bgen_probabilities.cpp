// BGEN input's genotype blocks (bgen_source::decode_dosages): a fetched block decompressed,
// checked, and its layout-1 or layout-2 probabilities turned into dosages as PLINK 2 does.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "bgen_reader.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/preprocess/bgen_source.hpp"

namespace colflow::preprocess {

using detail::bgen::bad_variant;
using detail::bgen::bgen_fetched;
using detail::bgen::load_le16;
using detail::bgen::load_le32;
using detail::bgen::load_le64;
using detail::bgen::min_block_bytes;
using detail::bgen::str;

namespace {

// PLINK 2's layout-2 rounding of 16384·num / max: it adds 2^(B−1) = (max + 1) / 2 before
// dividing, so a remainder of exactly (max − 1) / 2 rounds up as well (max is odd, so there are
// no true ties). Exact in 64 bits: num <= 2·(2^32 − 1).
std::uint16_t layout2_first_dosage(std::uint64_t num, std::uint64_t max) noexcept {
  const std::uint64_t scaled = std::uint64_t{dosage_one} * num;
  std::uint64_t q = scaled / max;
  const std::uint64_t r = scaled % max;
  if (r != 0 && 2 * r >= max - 1) ++q;
  return static_cast<std::uint16_t>(q);
}

// layout2_first_dosage(num, 2^bits - 1) for every num from 0 to 2·(2^bits - 1), for a bit depth
// of 1 to 16: a division per value is slower than the decompression. Each depth's table is
// computed once, on first use, and then only read, by any number of threads.
const std::uint16_t* layout2_table(unsigned bits) {
  static std::once_flag once[17];
  static std::vector<std::uint16_t> tables[17];
  std::call_once(once[bits], [bits] {
    const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
    std::vector<std::uint16_t>& table = tables[bits];
    table.resize(static_cast<std::size_t>(2 * max + 1));
    for (std::uint64_t num = 0; num <= 2 * max; ++num) table[num] = layout2_first_dosage(num, max);
  });
  return tables[bits].data();
}

// Layout 1: three 16-bit probabilities per sample (AA, AB, BB). PLINK 2 computes the second
// allele's dosage, 16384·(p_AB + 2·p_BB) / sum: ties go to even when the sum is 32768 and up
// otherwise (its tie correction only fires then).
void layout1_dosages(const std::uint8_t* p, bool first, std::span<std::uint16_t> dosages) {
  for (std::size_t i = 0; i < dosages.size(); ++i, p += 6) {
    const std::uint64_t aa = load_le16(p), ab = load_le16(p + 2), bb = load_le16(p + 4);
    const std::uint64_t sum = aa + ab + bb;
    if (sum == 0) {
      dosages[i] = dosage_missing;
      continue;
    }
    const std::uint64_t numer = std::uint64_t{dosage_one} * (ab + 2 * bb);
    std::uint64_t q = numer / sum;
    const std::uint64_t r2 = 2 * (numer % sum);
    if (r2 > sum || (r2 == sum && (sum != 32768 || (q & 1) != 0))) ++q;
    const auto second = static_cast<std::uint16_t>(q);
    dosages[i] = first ? static_cast<std::uint16_t>(dosage_max - second) : second;
  }
}

// A layout-2 genotype block whose header agrees with the file and whose size with its header:
// N, K, min and max ploidy, N ploidy bytes, phased, bits, then the packed probabilities.
struct layout2_block {
  std::uint64_t n = 0;
  const std::uint8_t* ploidy = nullptr;  // bit 7: missing; bits 0-5: the ploidy
  const std::uint8_t* probs = nullptr;   // followed by eight readable bytes
  unsigned bits = 0;
  bool phased = false;
};

template <class Fail>
layout2_block read_layout2_block(const std::uint8_t* p, std::uint64_t size, std::uint64_t n,
                                 const Fail& fail) {
  if (size < min_block_bytes(n))
    fail("decompressed genotype block of " + str(size) + " bytes cannot hold " + str(n) +
         " samples");
  if (load_le32(p) != n)
    fail("its genotype block holds " + str(load_le32(p)) + " samples, the header says " + str(n));
  if (load_le16(p + 4) != 2)
    fail("its genotype block holds " + str(load_le16(p + 4)) + " alleles, its header says 2");
  const unsigned min_ploidy = p[6], max_ploidy = p[7];
  if (min_ploidy > max_ploidy || max_ploidy > 63)
    fail("invalid ploidy range " + str(min_ploidy) + " to " + str(max_ploidy));
  if (max_ploidy > 2)
    fail("ploidy up to " + str(max_ploidy) + "; colflow reads haploid and diploid genotypes");
  const layout2_block b{n, p + 8, p + 10 + n, p[9 + n], p[8 + n] == 1};
  if (p[8 + n] > 1) fail("phased flag " + str(unsigned{p[8 + n]}) + " (0 or 1)");
  if (b.bits < 1 || b.bits > 32) fail("probabilities of " + str(b.bits) + " bits (1 to 32)");
  std::uint64_t values = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const unsigned z = b.ploidy[i] & 63u;
    if (z < min_ploidy || z > max_ploidy)
      fail("sample " + str(i) + " has ploidy " + str(z) + ", outside the block's range " +
           str(min_ploidy) + " to " + str(max_ploidy));
    values += z;  // biallelic: a ploidy of z takes z values, phased or not
  }
  const std::uint64_t expected = min_block_bytes(n) + (values * b.bits + 7) / 8;
  if (size != expected)
    fail("genotype block of " + str(size) + " bytes, but its ploidies and " + str(b.bits) +
         "-bit probabilities take " + str(expected));
  return b;
}

template <class Fail>
void layout2_dosages(const layout2_block& b, bool first, std::span<std::uint16_t> dosages,
                     const Fail& fail) {
  const std::uint64_t n = b.n, bits = b.bits;
  const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
  const std::uint16_t* table = bits <= 16 ? layout2_table(b.bits) : nullptr;
  auto value_at = [&](std::uint64_t bit) {
    return (load_le64(b.probs + bit / 8) >> (bit % 8)) & max;
  };
  std::uint64_t bit = 0, bad_sample = n;
  for (std::uint64_t i = 0; i < n; ++i) {
    const unsigned z = b.ploidy[i] & 63u;
    if ((b.ploidy[i] & 0x80u) != 0 || z == 0) {
      dosages[i] = dosage_missing;
      bit += z * bits;
      continue;
    }
    std::uint64_t num;  // expected count of the first allele, in units of 1 / max
    if (z == 2) {
      const std::uint64_t v0 = value_at(bit), v1 = value_at(bit + bits);
      bit += 2 * bits;
      if (b.phased) {
        num = v0 + v1;  // P(haplotype 1 is allele 1) + P(haplotype 2 is allele 1)
      } else {
        if (v0 + v1 > max && bad_sample == n) bad_sample = i;
        num = std::min(2 * v0 + v1, 2 * max);  // 2·P(AA) + P(AB)
      }
    } else {
      num = 2 * value_at(bit);  // haploid: two copies, as PLINK 2 counts them
      bit += bits;
    }
    const std::uint16_t d = table ? table[num] : layout2_first_dosage(num, max);
    dosages[i] = first ? d : static_cast<std::uint16_t>(dosage_max - d);
  }
  if (bad_sample != n)
    fail("sample " + str(bad_sample) +
         "'s probabilities of AA and AB sum to more than one (the implied P(BB) is negative)");
}

}  // namespace

void bgen_source::decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const {
  const auto* f = dynamic_cast<const bgen_fetched*>(&raw);
  if (f == nullptr || f->source != this)
    throw error(errc::invalid_argument,
                description() + ": decode_dosages was given a column another source fetched");
  check_read(f->j, dosages.size());
  const std::uint64_t n = samples_.size();
  auto fail = [&](const std::string& what) {
    bad_variant(options_.bgen, f->j, f->id, f->at, what);
  };

  // The probabilities, followed by eight zero bytes so that the bit reader can load 64-bit
  // windows without a bounds check: in place when stored uncompressed, else decompressed into
  // this thread's buffer.
  const std::uint64_t payload_size = f->payload_size, stored = f->block_size;
  const std::uint8_t* block = f->bytes.get() + f->block_offset;
  const std::uint8_t* p = block;
  if (compression_ == codec_id::none) {
    if (stored != payload_size)
      fail("genotype block of " + str(stored) + " bytes, expected " + str(payload_size));
  } else {
    thread_local std::vector<std::uint8_t> buffer;
    const auto size = static_cast<std::size_t>(payload_size);
    if (buffer.size() < size + 8) buffer.resize(size + 8);
    std::memset(buffer.data() + size, 0, 8);
    try {
      decompress_frame(compression_, std::as_bytes(std::span(block, f->block_size)),
                       std::as_writable_bytes(std::span(buffer.data(), size)));
    } catch (const error& e) {
      fail("its " + std::string(traits_of(compression_).name) + " genotype block of " +
           str(stored) + " bytes does not decompress to the " + str(payload_size) +
           " bytes it declares (" + e.message() + ")");
    }
    p = buffer.data();
  }
  const bool first = !ref_first_;
  if (layout_ == 1) {
    layout1_dosages(p, first, dosages);
    return;
  }
  layout2_dosages(read_layout2_block(p, payload_size, n, fail), first, dosages, fail);
}

}  // namespace colflow::preprocess
