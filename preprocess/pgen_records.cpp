// One .pgen record decoded (preprocess/pgen_reader.hpp): the main track's 2-bit genotype
// categories under each compression of pgen_spec, and the dosage track. Every read is checked
// against the record's length, so that no record, however malformed, is read past its end.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "colflow/codec/dosage_codec.hpp"
#include "pgen_reader.hpp"

namespace colflow::preprocess::detail::pgen {
namespace {

// The 1-bit arrays are read as little-endian words (pgen_spec's bit order: sample i in bit
// i mod 8 of byte i / 8).
static_assert(std::endian::native == std::endian::little);

// Reads a record forward; a read past its end is a bad_input naming the file and variant.
class record_reader {
 public:
  record_reader(const std::filesystem::path& file, const record_view& r, std::size_t pos = 0)
      : file_(file), r_(r), pos_(pos) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw input_error(file_, "variant " + std::to_string(r_.index) + ": record of type " +
                                 std::to_string(r_.type) + " (" + std::to_string(r_.bytes.size()) +
                                 " bytes): " + what);
  }

  std::size_t position() const noexcept { return pos_; }

  const std::uint8_t* take(std::uint64_t n, const char* what) {
    if (pos_ > r_.bytes.size() || r_.bytes.size() - pos_ < n)
      fail(std::string("it ends inside its ") + what);
    const std::uint8_t* p = r_.bytes.data() + pos_;
    pos_ += static_cast<std::size_t>(n);
    return p;
  }

  std::uint8_t byte(const char* what) { return *take(1, what); }

  // A base-128 varint of at most 32 bits.
  std::uint32_t varint(const char* what) {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
      const std::uint8_t b = byte(what);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        if (v > 0xffffffffu) break;
        return static_cast<std::uint32_t>(v);
      }
    }
    fail(std::string("a varint in its ") + what + " exceeds 32 bits");
  }

 private:
  const std::filesystem::path& file_;
  const record_view& r_;
  std::size_t pos_;
};

std::uint64_t load_le(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned b = 0; b < bytes; ++b) v |= static_cast<std::uint64_t>(p[b]) << (8 * b);
  return v;
}

// A difflist (pgen_spec, "Difflists"): L; the first sample ID of each group of 64; G - 1
// group sizes (not needed reading forward); with categories, L 2-bit values; then the
// increments within each group as varints. Calls visit(id, category) for each entry, IDs
// increasing and below `samples` (category 0 without categories), as they are read: a
// malformed list throws after visiting its entries before the fault.
template <class Visit>
void read_difflist(record_reader& r, std::uint64_t samples, bool with_categories, Visit&& visit) {
  const std::uint32_t count = r.varint("difference list length");
  if (count == 0) return;
  if (count > samples)
    r.fail("its difference list of " + std::to_string(count) + " entries exceeds the " +
           std::to_string(samples) + " samples");
  const std::uint64_t groups = (count + 63) / 64;
  const unsigned id_bytes = samples <= (1u << 8)    ? 1
                            : samples <= (1u << 16) ? 2
                            : samples <= (1u << 24) ? 3
                                                    : 4;
  const std::uint8_t* firsts = r.take(groups * id_bytes, "difference list");
  r.take(groups - 1, "difference list");
  const std::uint8_t* packed =
      with_categories ? r.take((count + 3) / 4, "difference list") : nullptr;
  std::uint64_t id = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    if (k % 64 == 0) {
      const std::uint64_t first = load_le(firsts + (k / 64) * id_bytes, id_bytes);
      if (k > 0 && first <= id) r.fail("its difference list's sample IDs are not increasing");
      id = first;
    } else {
      const std::uint32_t step = r.varint("difference list");
      if (step == 0) r.fail("its difference list's sample IDs are not increasing");
      id += step;
    }
    if (id >= samples)
      r.fail("its difference list names sample " + std::to_string(id) + " of " +
             std::to_string(samples));
    visit(
        static_cast<std::uint32_t>(id),
        packed ? static_cast<std::uint8_t>((packed[k / 4] >> (2 * (k % 4))) & 3) : std::uint8_t{0});
  }
}

void set_category(std::span<std::uint8_t> cats, std::uint32_t i, std::uint8_t c) {
  std::uint8_t& b = cats[i / 4];
  const unsigned shift = 2 * (i % 4);
  b = static_cast<std::uint8_t>((b & ~(3u << shift)) | (static_cast<unsigned>(c) << shift));
}

// Zeroes the bits past the last sample of a 2-bit array.
void clear_padding(std::span<std::uint8_t> cats, std::uint64_t samples) {
  if (samples % 4) cats[samples / 4] &= static_cast<std::uint8_t>((1u << (2 * (samples % 4))) - 1);
}

// Each bit of the low 32 of `bits` moved to the low bit of a 2-bit lane (bit i to bit 2i).
std::uint64_t spread_bits(std::uint64_t bits) {
  bits = (bits | bits << 16) & 0x0000ffff0000ffffu;
  bits = (bits | bits << 8) & 0x00ff00ff00ff00ffu;
  bits = (bits | bits << 4) & 0x0f0f0f0f0f0f0f0fu;
  bits = (bits | bits << 2) & 0x3333333333333333u;
  return (bits | bits << 1) & 0x5555555555555555u;
}

// The 1-bit representation: a byte naming the two common categories, one bit per sample
// (set: the higher one), then the others as a difference list.
void expand_one_bit(record_reader& r, std::uint64_t samples, std::span<std::uint8_t> cats) {
  const std::uint8_t pair = r.byte("1-bit header");
  if (pair != 1 && pair != 2 && pair != 3 && pair != 5 && pair != 6 && pair != 9)
    r.fail("its 1-bit representation names categories " + std::to_string(pair) +
           " (1, 2, 3, 5, 6 or 9)");
  const std::uint64_t low = pair >> 2, step = pair & 3;  // high = low + step <= 3
  const std::uint8_t* bits = r.take((samples + 7) / 8, "1-bit array");
  // 32 samples at a time: each lane is low + bit * step, which never carries into the next.
  const std::uint64_t lows = low * 0x5555555555555555u;
  std::size_t b = 0;
  for (; b + 8 <= cats.size(); b += 8) {
    std::uint32_t word;
    std::memcpy(&word, bits + b / 2, 4);
    const std::uint64_t out = lows + spread_bits(word) * step;
    std::memcpy(cats.data() + b, &out, 8);
  }
  for (; b < cats.size(); ++b) {
    const std::uint64_t nibble = (bits[b / 2] >> (4 * (b % 2))) & 15;
    cats[b] = static_cast<std::uint8_t>(lows + spread_bits(nibble) * step);
  }
}

// Categories 0 and 2 swapped: the bit above each category whose low bit is clear flipped.
void invert(std::span<std::uint8_t> cats) {
  for (std::uint8_t& b : cats) b = static_cast<std::uint8_t>(b ^ ((~b & 0x55) << 1));
}

}  // namespace

std::size_t decode_main_track(const std::filesystem::path& file, const record_view& record,
                              std::uint64_t samples, std::span<const std::uint8_t> reference,
                              std::span<std::uint8_t> cats) {
  record_reader r(file, record);
  const std::uint64_t bytes = (samples + 3) / 4;
  const unsigned main = record.type & type_main_mask;
  switch (main) {
    case 0:
      std::memcpy(cats.data(), r.take(bytes, "genotype array"), bytes);
      clear_padding(cats, samples);
      return r.position();
    case 1:
      expand_one_bit(r, samples, cats);
      break;
    case 2:
    case 3:
      if (reference.size() != bytes) r.fail("it is LD-compressed without an earlier record");
      std::memcpy(cats.data(), reference.data(), bytes);
      break;
    case 4:
    case 6:
    case 7:
      std::memset(cats.data(), main == 4 ? 0x00 : main == 6 ? 0xaa : 0xff, bytes);
      break;
    default:
      r.fail("main-track type 5 is reserved");
  }
  // Entries patch the categories as they are read; a malformed list throws, and the caller
  // keeps no part of a column that failed.
  read_difflist(r, samples, true,
                [&](std::uint32_t id, std::uint8_t category) { set_category(cats, id, category); });
  // Inverted LD compression: the difference list patches the reference, and the result is
  // inverted. (pgen_spec words it as a patch of the inverted reference; plink2 2.00a3.5's files,
  // uk10k's variant rs9662595 among them, decode as plink2 exports them only this way.)
  if (main == 3) invert(cats);
  clear_padding(cats, samples);
  return r.position();
}

void categories_to_bed_codes(std::span<std::uint8_t> codes, std::uint64_t samples) {
  // Category (hom-REF 0, het 1, hom-ALT 2, missing 3) to PLINK 1 code with A1 = ALT (hom-A1
  // 0, missing 1, het 2, hom-A2 3): high bit = not(high), low bit = not(high xor low).
  for (std::uint8_t& b : codes) {
    const unsigned hi = (b >> 1) & 0x55u, lo = b & 0x55u;
    b = static_cast<std::uint8_t>(((~hi & 0x55u) << 1) | (~(hi ^ lo) & 0x55u));
  }
  clear_padding(codes, samples);
}

void bed_codes_to_categories(std::span<std::uint8_t> codes, std::uint64_t samples) {
  // PLINK 1 code (hom-A1 0, missing 1, het 2, hom-A2 3) to category with ALT = A1 (hom-REF 0,
  // het 1, hom-ALT 2, missing 3): high bit = not(high), low bit = high xor low.
  for (std::uint8_t& b : codes) {
    const unsigned hi = (b >> 1) & 0x55u, lo = b & 0x55u;
    b = static_cast<std::uint8_t>(((~hi & 0x55u) << 1) | (hi ^ lo));
  }
  clear_padding(codes, samples);
}

namespace {

// The four dosages of a byte of categories (0, 1 or 2 copies of ALT, or missing).
struct category_byte_dosages {
  std::array<std::array<std::uint16_t, 4>, 256> four{};
  constexpr category_byte_dosages() noexcept {
    constexpr std::array<std::uint16_t, 4> of_category = {0, dosage_one, dosage_max,
                                                          dosage_missing};
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned k = 0; k < 4; ++k) four[b][k] = of_category[(b >> (2 * k)) & 3];
  }
};
constexpr category_byte_dosages category_dosages{};

// The hard calls as dosages.
void hard_call_dosages(std::span<const std::uint8_t> cats, std::uint64_t samples,
                       std::span<std::uint16_t> dosages) {
  const std::uint64_t whole = samples / 4;
  for (std::uint64_t b = 0; b < whole; ++b)
    std::memcpy(dosages.data() + 4 * b, category_dosages.four[cats[b]].data(), 8);
  for (std::uint64_t i = 4 * whole; i < samples; ++i)
    dosages[i] = category_dosages.four[cats[i / 4]][i % 4];
}

// The number of heterozygous calls (category 1) among the samples.
std::uint64_t count_hets(std::span<const std::uint8_t> cats, std::uint64_t samples) {
  std::uint64_t hets = 0, b = 0;
  for (; b + 8 <= samples / 4; b += 8) {
    std::uint64_t w;
    std::memcpy(&w, cats.data() + b, 8);
    hets += static_cast<std::uint64_t>(std::popcount(w & ~(w >> 1) & 0x5555555555555555u));
  }
  for (std::uint64_t i = 4 * b; i < samples; ++i) hets += ((cats[i / 4] >> (2 * (i % 4))) & 3) == 1;
  return hets;
}

// The number of set bits among the first `count` bits of `bits`.
std::uint64_t count_bits(const std::uint8_t* bits, std::uint64_t count) {
  std::uint64_t n = 0, b = 0;
  for (; 8 * (b + 8) <= count; b += 8) {
    std::uint64_t w;
    std::memcpy(&w, bits + b, 8);
    n += static_cast<std::uint64_t>(std::popcount(w));
  }
  for (std::uint64_t i = 8 * b; i < count; ++i) n += (bits[i / 8] >> (i % 8)) & 1;
  return n;
}

}  // namespace

void decode_dosages(const std::filesystem::path& file, const record_view& record,
                    std::uint64_t samples, std::size_t main_end, std::span<const std::uint8_t> cats,
                    std::span<std::uint16_t> dosages) {
  hard_call_dosages(cats, samples, dosages);
  const unsigned kind = record.type & type_dosage_mask;
  if (kind == 0) return;
  record_reader r(file, record, main_end);
  if (record.type & type_phase) {
    // Hard-call phase (pgen_spec, "Phased heterozygous hard-calls"): a first bit, then with it
    // set one bit per heterozygous call and, from the next byte, one per phased call; with it
    // clear, one bit per heterozygous call after it.
    const std::uint64_t hets = count_hets(cats, samples);
    const std::uint8_t* head = r.take(1, "phase track");
    const std::uint64_t first_bytes = (1 + hets + 7) / 8;
    r.take(first_bytes - 1, "phase track");
    if (*head & 1) {  // head starts the phasepresent bits
      std::uint64_t phased = 0;
      for (std::uint64_t k = 1; k <= hets; ++k) phased += (head[k / 8] >> (k % 8)) & 1;
      r.take((phased + 7) / 8, "phase track");
    }
  }
  // Values are checked after they are written, all at once (a branch per value would cost more
  // than the copy); the first one out of range is then found for the message.
  std::uint16_t largest = 0;
  auto check = [&](const std::uint8_t* v, std::uint64_t count, bool missing_allowed) {
    if (largest <= dosage_max) return;
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t d = load_le(v + 2 * k, 2);
      if (d > dosage_max && !(missing_allowed && d == 0xffff))
        r.fail("a dosage of " + std::to_string(d) + " exceeds 32768 (two copies)");
    }
  };
  if (kind == type_dosage_all) {  // every sample, 65535 for missing
    const std::uint8_t* v = r.take(2 * samples, "dosage track");
    for (std::uint64_t i = 0; i < samples; ++i) {
      const auto d = static_cast<std::uint16_t>(load_le(v + 2 * i, 2));
      dosages[i] = d == 0xffff ? dosage_missing : d;
      largest = std::max(largest, d == 0xffff ? std::uint16_t{0} : d);
    }
    check(v, samples, true);
    return;
  }
  if (kind == 0x20) {  // a difference list of the samples with a dosage
    thread_local std::vector<std::uint32_t> ids;
    ids.clear();
    read_difflist(r, samples, false, [&](std::uint32_t id, std::uint8_t) { ids.push_back(id); });
    const std::uint8_t* v = r.take(2 * ids.size(), "dosage track");
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const auto d = static_cast<std::uint16_t>(load_le(v + 2 * k, 2));
      dosages[ids[k]] = d;
      largest = std::max(largest, d);
    }
    check(v, ids.size(), false);
    return;
  }
  // 0x60: one bit per sample, then the dosages of the samples whose bit is set, visited a word
  // of bits at a time.
  const std::uint8_t* bits = r.take((samples + 7) / 8, "dosage bit array");
  const std::uint64_t present = count_bits(bits, samples);
  const std::uint8_t* v = r.take(2 * present, "dosage track");
  std::uint64_t k = 0;
  for (std::uint64_t first = 0; first < samples; first += 64) {
    std::uint64_t w = 0;
    std::memcpy(&w, bits + first / 8, std::min<std::uint64_t>(8, (samples - first + 7) / 8));
    if (samples - first < 64) w &= (std::uint64_t{1} << (samples - first)) - 1;
    for (; w != 0; w &= w - 1) {
      const auto d = static_cast<std::uint16_t>(load_le(v + 2 * k++, 2));
      dosages[first + static_cast<std::uint64_t>(std::countr_zero(w))] = d;
      largest = std::max(largest, d);
    }
  }
  check(v, present, false);
}

}  // namespace colflow::preprocess::detail::pgen
