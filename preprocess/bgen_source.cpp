// BGEN input (colflow/preprocess/bgen_source.hpp): the header, sample and variant blocks
// checked and indexed once, then each variant's probabilities decoded into dosages.
#include "colflow/preprocess/bgen_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/preprocess/bed_source.hpp"

namespace colflow::preprocess {
namespace {

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  throw input_error(file, what);
}

std::string str(std::uint64_t v) { return std::to_string(v); }

std::uint32_t load_le16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
}

std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

std::uint64_t load_le64(const std::uint8_t* p) noexcept {
  return static_cast<std::uint64_t>(load_le32(p)) |
         (static_cast<std::uint64_t>(load_le32(p + 4)) << 32);
}

// The smallest and largest decompressed layout-2 block of a biallelic variant with n samples:
// the 10 + n bytes before the probabilities, plus at most 63 (the largest ploidy) 32-bit values
// per sample.
std::uint64_t min_block_bytes(std::uint64_t n) { return 10 + n; }
std::uint64_t max_block_bytes(std::uint64_t n) { return 10 + n + 252 * n; }

// Reads a file forward from a position through a buffer. Every read is compared with what is
// left of the file before anything is read, so that no length field, however large, makes it
// read past the end; a failed read returns false and leaves the position unchanged.
class cursor {
 public:
  cursor(const file_descriptor& fd, std::uint64_t file_size, std::uint64_t pos, std::size_t chunk)
      : fd_(fd), size_(file_size), pos_(pos), chunk_(chunk) {}

  std::uint64_t position() const noexcept { return pos_; }
  std::uint64_t remaining() const noexcept { return pos_ < size_ ? size_ - pos_ : 0; }

  bool skip(std::uint64_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

  bool read(std::uint8_t* out, std::size_t n) {
    if (n > remaining()) return false;
    if (n == 0) return true;
    if (n > chunk_) {  // long fields go straight to their destination
      fd_.pread_exact(std::as_writable_bytes(std::span(out, n)), pos_);
    } else {
      fill(n);
      std::memcpy(out, buffer_.data() + (pos_ - buffer_start_), n);
    }
    pos_ += n;
    return true;
  }

  bool u16(std::uint32_t& v) {
    std::uint8_t b[2];
    if (!read(b, 2)) return false;
    v = load_le16(b);
    return true;
  }

  bool u32(std::uint32_t& v) {
    std::uint8_t b[4];
    if (!read(b, 4)) return false;
    v = load_le32(b);
    return true;
  }

  bool text(std::size_t n, std::string& out) {
    if (n > remaining()) return false;
    out.resize(n);
    return read(reinterpret_cast<std::uint8_t*>(out.data()), n);
  }

 private:
  // Makes [pos_, pos_ + n) available in the buffer (n <= chunk_, n <= remaining()).
  void fill(std::size_t n) {
    if (pos_ >= buffer_start_ && pos_ + n <= buffer_start_ + buffer_.size()) return;
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, remaining()));
    buffer_.resize(len);
    fd_.pread_exact(std::as_writable_bytes(std::span(buffer_)), pos_);
    buffer_start_ = pos_;
  }

  const file_descriptor& fd_;
  std::uint64_t size_, pos_;
  std::size_t chunk_;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t buffer_start_ = 0;
};

// The same reads as cursor's over bytes already in memory: `data` holds the file's bytes from
// position `start` to `end`, and positions are the file's.
class memory_cursor {
 public:
  memory_cursor(const std::uint8_t* data, std::uint64_t start, std::uint64_t end)
      : data_(data), start_(start), end_(end), pos_(start) {}

  std::uint64_t position() const noexcept { return pos_; }
  std::uint64_t remaining() const noexcept { return end_ - pos_; }

  bool skip(std::uint64_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

  bool read(std::uint8_t* out, std::size_t n) {
    if (n > remaining()) return false;
    if (n != 0) std::memcpy(out, data_ + (pos_ - start_), n);
    pos_ += n;
    return true;
  }

  bool u16(std::uint32_t& v) {
    if (remaining() < 2) return false;
    v = load_le16(data_ + (pos_ - start_));
    pos_ += 2;
    return true;
  }

  bool u32(std::uint32_t& v) {
    if (remaining() < 4) return false;
    v = load_le32(data_ + (pos_ - start_));
    pos_ += 4;
    return true;
  }

  bool text(std::size_t n, std::string& out) {
    if (n > remaining()) return false;
    out.assign(reinterpret_cast<const char*>(data_ + (pos_ - start_)), n);
    pos_ += n;
    return true;
  }

 private:
  const std::uint8_t* data_;
  std::uint64_t start_, end_, pos_;
};

// A variant's header fields, as far as they have been read.
struct variant_header {
  std::string id, rsid, chrom;
  std::uint32_t pos = 0;
  std::uint32_t allele_count = 0;
  std::string first, second;  // the two alleles, when asked for
};

// The ID colflow gives a variant: its rsid as written, "." included, as PLINK 2 takes it (so
// that outputs and --extract lists line up); else (an empty rsid, which PLINK 2 refuses) its
// other identifier, else ".".
std::string display_id(const variant_header& h) {
  if (!h.rsid.empty()) return h.rsid;
  if (!h.id.empty()) return h.id;
  return ".";
}

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool has_whitespace(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  });
}

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

}  // namespace

std::vector<sample_info> read_oxford_sample(const std::filesystem::path& sample) {
  std::error_code ec;
  if (!std::filesystem::exists(sample, ec))
    throw error(errc::not_found, "missing .sample file " + sample.string());
  std::ifstream in(sample);
  if (!in) throw error(errc::io_error, "cannot open " + sample.string());

  std::string line;
  std::uint64_t line_no = 0;
  auto next_line = [&](std::vector<std::string>& fields) {
    while (std::getline(in, line)) {
      ++line_no;
      fields = split_whitespace(line);
      if (!fields.empty()) return true;
    }
    return false;
  };

  // The original format starts with the columns ID_1 ID_2 missing (types 0 0 0); QCTOOL v2's
  // (plink2 --export ... sample-v2) with one column ID (type 0).
  std::vector<std::string> header, types, f;
  if (!next_line(header))
    bad(sample, "empty file (expected the header line 'ID_1 ID_2 missing ...' or 'ID ...')");
  const bool v1 = header.size() >= 3 && iequals(header[0], "ID_1") && iequals(header[1], "ID_2") &&
                  iequals(header[2], "missing");
  const bool v2 = !v1 && iequals(header[0], "ID");
  if (!v1 && !v2)
    bad(sample, "line " + str(line_no) +
                    ": not an Oxford .sample header: expected 'ID_1 ID_2 missing ...' (or 'ID "
                    "...'), found '" +
                    line + "'");
  const std::size_t fixed = v1 ? 3 : 1;  // the columns of type 0 that start every line
  if (!next_line(types))
    bad(sample,
        std::string("no type line after the header (expected '") + (v1 ? "0 0 0" : "0") + " ...')");
  if (types.size() != header.size())
    bad(sample, "line " + str(line_no) + ": expected " + str(header.size()) +
                    " types (one per header column), found " + str(types.size()));
  for (std::size_t c = 0; c < fixed; ++c)
    if (types[c] != "0")
      bad(sample, "line " + str(line_no) + ": the type of " + header[c] + " must be 0, found '" +
                      types[c] + "'");
  std::size_t sex_column = 0;  // 0: none
  for (std::size_t c = fixed; c < types.size(); ++c) {
    const std::string t = upper(types[c]);
    if (t != "0" && t != "D" && t != "C" && t != "P" && t != "B")
      bad(sample, "line " + str(line_no) + ": unknown type '" + types[c] + "' for column '" +
                      header[c] + "' (expected 0, D, C, P or B)");
    if (sex_column == 0 && iequals(header[c], "sex") && t == "D") sex_column = c;
  }

  std::vector<sample_info> samples;
  while (next_line(f)) {
    if (f.size() != header.size())
      bad(sample, "line " + str(line_no) + ": expected " + str(header.size()) +
                      " fields (as in the header), found " + str(f.size()));
    // Sex as plink2 reads it: 1, 2, or 0 or NA for unknown.
    std::string sex = "0";
    if (sex_column != 0) {
      const std::string& x = f[sex_column];
      if (x == "1" || x == "2") {
        sex = x;
      } else if (x != "0" && x != "NA") {
        bad(sample, "line " + str(line_no) + ": invalid sex code '" + x +
                        "' (1, 2, or 0 or NA for unknown)");
      }
    }
    if (v1) {
      samples.push_back({std::move(f[0]), std::move(f[1]), "0", "0", std::move(sex), "-9"});
    } else {
      samples.push_back({"0", std::move(f[0]), "0", "0", std::move(sex), "-9"});
    }
  }
  if (samples.empty()) bad(sample, "no samples (only the two header lines)");
  return samples;
}

// The open file and each variant's offset, set by the constructor and then only read (fetch
// and column read the file with pread, decode_dosages does not touch it).
struct bgen_source::state {
  file_descriptor fd;
  std::uint64_t file_size = 0;
  // block_starts[j]: where variant j's block starts; block_starts[M]: where the last one ends.
  std::vector<std::uint64_t> block_starts;
};

namespace {

// A problem with variant j (ID `id`, as display_id gives it), which starts at byte `at`.
[[noreturn]] void bad_variant(const std::filesystem::path& file, std::uint64_t j,
                              const std::string& id, std::uint64_t at, const std::string& what) {
  bad(file, "variant " + str(j) + (id == "." ? std::string() : " (" + id + ")") + " at byte " +
                str(at) + ": " + what);
}

// Reading a variant's header, with what a message about it says.
struct header_reader {
  const std::filesystem::path& file;
  int layout;
  std::uint64_t samples;

  [[noreturn]] void fail(std::uint64_t j, const variant_header& h, std::uint64_t at,
                         const std::string& what) const {
    bad_variant(file, j, display_id(h), at, what);
  }

  // Reads the header of variant j at c's position (a cursor or a memory_cursor), up to the
  // genotype block; the alleles are kept only with `alleles`.
  template <typename Cursor>
  void read(Cursor& c, std::uint64_t j, bool alleles, variant_header& h) const {
    h.id.clear();
    h.rsid.clear();
    h.chrom.clear();
    h.first.clear();
    h.second.clear();
    h.pos = h.allele_count = 0;
    const std::uint64_t at = c.position();
    auto truncated = [&](const std::string& field) {
      fail(j, h, at,
           "the file (" + str(c.position() + c.remaining()) + " bytes) ends inside the " + field);
    };
    std::uint32_t len = 0;
    if (layout == 1) {
      std::uint32_t n = 0;
      if (!c.u32(n)) truncated("sample count");
      if (n != samples)
        fail(j, h, at, "its sample count " + str(n) + " differs from the header's " + str(samples));
    }
    if (!c.u16(len) || !c.text(len, h.id)) truncated("variant identifier");
    if (!c.u16(len) || !c.text(len, h.rsid)) truncated("rsid");
    if (!c.u16(len) || !c.text(len, h.chrom)) truncated("chromosome");
    if (!c.u32(h.pos)) truncated("position");
    if (layout == 1) {
      h.allele_count = 2;
    } else if (!c.u16(h.allele_count)) {
      truncated("allele count");
    }
    if (h.allele_count > 2)
      fail(j, h, at,
           "has " + str(h.allele_count) +
               " alleles; colflow reads biallelic variants (split them first, e.g. bcftools "
               "norm -m-)");
    if (h.allele_count < 2)
      fail(j, h, at,
           "has " + str(h.allele_count) + (h.allele_count == 1 ? " allele" : " alleles") +
               "; colflow reads biallelic variants");
    for (int a = 0; a < 2; ++a) {
      const std::string field = a == 0 ? "first allele" : "second allele";
      if (!c.u32(len)) truncated(field + "'s length");
      if (len > c.remaining())
        fail(j, h, at,
             "the " + field + "'s length " + str(len) + " runs past the end of the file (" +
                 str(c.position() + c.remaining()) + " bytes)");
      if (alleles) {
        c.text(len, a == 0 ? h.first : h.second);
      } else {
        c.skip(len);
      }
    }
  }
};

// What bgen_source::fetch reads for decode_dosages: variant j's bytes, from its header to the
// end of its genotype block, and where in them the block is.
struct bgen_fetched final : column_source::fetched {
  const bgen_source* source = nullptr;  // the source that fetched it
  std::uint64_t j = 0;
  std::uint64_t at = 0;  // where the variant starts in the file
  std::string id;        // display_id, for messages
  // The size of the probability data (decompressed, when compressed); the stored block: its
  // bytes' offset in `bytes` and count (to the end of the variant).
  std::uint64_t payload_size = 0;
  std::size_t block_offset = 0, block_size = 0;
  // The variant's bytes, then eight zero bytes: an uncompressed layout-2 block is read in place
  // by the bit reader, which loads 64-bit windows.
  std::unique_ptr<std::uint8_t[]> bytes;
};

// The header block as read and checked: the offset of the first variant, L_H, M, N, and what
// the flags say.
struct header_block {
  std::uint64_t offset = 0;      // the first variant starts at offset + 4
  std::uint64_t header_len = 0;  // L_H
  std::uint64_t variants = 0, samples = 0;
  int layout = 0;
  codec_id compression = codec_id::none;
  bool has_sample_ids = false;
};

header_block read_header_block(const std::filesystem::path& file, const file_descriptor& fd,
                               std::uint64_t size) {
  if (size < 24)
    bad(file, "file is " + str(size) + " bytes, too short for a BGEN header (at least 24)");
  std::uint8_t head[20];
  fd.pread_exact(std::as_writable_bytes(std::span(head)), 0);
  header_block h;
  h.offset = load_le32(head);
  h.header_len = load_le32(head + 4);
  h.variants = load_le32(head + 8);
  h.samples = load_le32(head + 12);
  const bool zero_magic = head[16] == 0 && head[17] == 0 && head[18] == 0 && head[19] == 0;
  if (std::memcmp(head + 16, "bgen", 4) != 0 && !zero_magic)
    bad(file, "not a BGEN file: bytes 16-19 are not the magic number 'bgen' (nor four zeros)");
  if (h.header_len < 20)
    bad(file, "header block length " + str(h.header_len) + " is less than the 20 bytes it holds");
  if (h.header_len > h.offset)
    bad(file, "header block length " + str(h.header_len) +
                  " runs past the first variant, which starts at byte " + str(h.offset + 4));
  if (h.offset + 4 > size)
    bad(file, "the first variant starts at byte " + str(h.offset + 4) +
                  ", past the end of the file (" + str(size) + " bytes)");
  std::uint8_t flag_bytes[4];
  fd.pread_exact(std::as_writable_bytes(std::span(flag_bytes)), h.header_len);
  const std::uint32_t flags = load_le32(flag_bytes);
  const unsigned compression = flags & 3u, layout = (flags >> 2) & 15u;
  h.has_sample_ids = (flags >> 31) != 0;
  if (layout != 1 && layout != 2)
    bad(file, "unknown layout " + str(layout) + " in the header flags (1 and 2 are defined)");
  if (compression == 3)
    bad(file, "unknown compression 3 in the header flags (0 none, 1 zlib, 2 zstd)");
  if (compression == 2 && layout == 1)
    bad(file, "zstd compression with layout 1 (BGEN v1.1 blocks are uncompressed or zlib)");
  h.layout = static_cast<int>(layout);
  h.compression = compression == 0   ? codec_id::none
                  : compression == 1 ? codec_id::zlib
                                     : codec_id::zstd;
  if (h.variants == 0) bad(file, "no variants (the header's variant count is 0)");
  if (h.samples == 0) bad(file, "no samples (the header's sample count is 0)");
  return h;
}

// The sample identifier block, between the header block and the first variant: the N
// identifiers, every length checked against the block.
std::vector<std::string> read_sample_ids(const std::filesystem::path& file,
                                         const file_descriptor& fd, const header_block& h) {
  const std::uint64_t n = h.samples;
  const std::uint64_t at = 4 + h.header_len, room = h.offset - h.header_len;
  if (room < 8)
    bad(file,
        "no room for the sample identifier block between the header block and the "
        "first variant (byte " +
            str(h.offset + 4) + ")");
  std::uint8_t b[8];
  fd.pread_exact(std::as_writable_bytes(std::span(b)), at);
  const std::uint64_t block_len = load_le32(b), count = load_le32(b + 4);
  if (block_len < 8 || block_len > room)
    bad(file, "sample identifier block of " + str(block_len) + " bytes at byte " + str(at) +
                  " does not fit between the header block and the first variant (" + str(room) +
                  " bytes)");
  if (count != n)
    bad(file,
        "the sample identifier block holds " + str(count) + " samples, the header says " + str(n));
  std::vector<std::uint8_t> block(block_len);
  fd.pread_exact(std::as_writable_bytes(std::span(block)), at);
  std::vector<std::string> ids;
  std::uint64_t p = 8;
  ids.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (block_len - p < 2)
      bad(file, "sample identifier block (" + str(block_len) + " bytes) ends before sample " +
                    str(i) + "'s identifier");
    const std::uint64_t len = load_le16(block.data() + p);
    p += 2;
    if (len > block_len - p)
      bad(file, "sample " + str(i) + "'s identifier of " + str(len) +
                    " bytes runs past the end of the sample identifier block (" + str(block_len) +
                    " bytes)");
    ids.emplace_back(reinterpret_cast<const char*>(block.data() + p), len);
    p += len;
  }
  if (p != block_len)
    bad(file, "sample identifier block is " + str(block_len) + " bytes, its " + str(n) +
                  " identifiers take " + str(p));
  return ids;
}

// The pass over the variant blocks that finds where each starts: each header is read, each
// genotype block skipped by its length, every length compared with what is left of the file.
class variant_index {
 public:
  variant_index(const std::filesystem::path& file, const header_block& h, std::uint64_t size)
      : file_(file), h_(h), size_(size), reader_{file, h.layout, h.samples} {}

  // Where each variant starts, then where the last one ends.
  std::vector<std::uint64_t> block_starts(const file_descriptor& fd) const {
    const std::uint64_t m = h_.variants;
    std::vector<std::uint64_t> starts;
    starts.reserve(
        static_cast<std::size_t>(std::min<std::uint64_t>(m, (size_ - h_.offset - 4) / 16 + 1)) + 1);
    // 16 kB reads: many small variants at a time, or one header of a large variant, whose
    // genotype block is skipped, at little cost.
    cursor c(fd, size_, h_.offset + 4, std::size_t{1} << 14);
    variant_header vh;
    for (std::uint64_t j = 0; j < m; ++j) {
      const std::uint64_t at = c.position();
      if (c.remaining() == 0)
        bad(file_, "the file (" + str(size_) + " bytes) ends after " + str(j) + " of the " +
                       str(m) + " variants of the header");
      starts.push_back(at);
      reader_.read(c, j, false, vh);
      skip_genotype_block(c, j, vh, at);
    }
    starts.push_back(c.position());
    return starts;
  }

 private:
  const std::filesystem::path& file_;
  const header_block& h_;
  std::uint64_t size_;
  header_reader reader_;

  // Moves c past the genotype block of variant j (header vh, starting at byte `at`), its
  // length checked against the layout, the compression and what is left of the file.
  void skip_genotype_block(cursor& c, std::uint64_t j, const variant_header& vh,
                           std::uint64_t at) const {
    const std::uint64_t n = h_.samples;
    const std::uint64_t data_at = c.position();
    auto truncated = [&](const std::string& what) { reader_.fail(j, vh, at, what); };
    std::uint32_t block_len = 0;
    if (h_.layout == 1) {
      if (h_.compression == codec_id::none) {
        if (6 * n > c.remaining())
          truncated("its genotype block of " + str(6 * n) + " bytes at byte " + str(data_at) +
                    " runs past the end of the file (" + str(size_) + " bytes)");
        c.skip(6 * n);
        return;
      }
      if (!c.u32(block_len))
        truncated("the file (" + str(size_) + " bytes) ends inside the genotype block length");
      if (block_len == 0) truncated("its compressed genotype block is empty");
    } else {
      if (!c.u32(block_len))
        truncated("the file (" + str(size_) + " bytes) ends inside the genotype block length");
      if (h_.compression == codec_id::none) {
        if (block_len < min_block_bytes(n) || block_len > max_block_bytes(n))
          truncated("its genotype block of " + str(block_len) + " bytes cannot hold " + str(n) +
                    " samples (" + str(min_block_bytes(n)) + " to " + str(max_block_bytes(n)) +
                    " bytes)");
      } else {
        block_len = compressed_block_payload(c, block_len, data_at, truncated);
      }
    }
    if (block_len > c.remaining())
      truncated("its genotype block of " + str(block_len) + " bytes at byte " + str(c.position()) +
                " runs past the end of the file (" + str(size_) + " bytes)");
    c.skip(block_len);
  }

  // A compressed layout-2 block of block_len bytes (at data_at, c just past its length): reads
  // and checks its decompressed size; returns the length of the compressed data that follows.
  template <typename Truncated>
  std::uint32_t compressed_block_payload(cursor& c, std::uint32_t block_len, std::uint64_t data_at,
                                         const Truncated& truncated) const {
    const std::uint64_t n = h_.samples;
    if (block_len <= 4)
      truncated("its compressed genotype block of " + str(block_len) +
                " bytes is too short to hold its decompressed size and data");
    if (block_len > c.remaining())
      truncated("its genotype block of " + str(block_len) + " bytes at byte " + str(data_at + 4) +
                " runs past the end of the file (" + str(size_) + " bytes)");
    std::uint32_t decompressed = 0;
    c.u32(decompressed);
    if (decompressed < min_block_bytes(n) || decompressed > max_block_bytes(n))
      truncated("its decompressed genotype block size " + str(decompressed) + " cannot hold " +
                str(n) + " samples (" + str(min_block_bytes(n)) + " to " + str(max_block_bytes(n)) +
                " bytes)");
    return block_len - 4;
  }
};

// The samples from the identifiers of the .bgen: each must be one word.
std::vector<sample_info> samples_of_ids(const std::filesystem::path& file,
                                        std::vector<std::string>& ids) {
  std::vector<sample_info> samples;
  samples.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].empty() || has_whitespace(ids[i]))
      bad(file, "sample " + str(i) + "'s identifier '" + ids[i] + "' is " +
                    (ids[i].empty() ? "empty" : "not one word") +
                    "; give a .sample file with usable IDs");
    samples.push_back({"0", std::move(ids[i]), "0", "0", "0", "-9"});
  }
  return samples;
}

// Refuses a (FID, IID) pair that appears twice, found by sorting indices; `id_source` is the
// file the IDs came from.
void refuse_duplicate_ids(const std::vector<sample_info>& samples,
                          const std::filesystem::path& id_source) {
  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto key_less = [&](std::size_t a, std::size_t b) {
    const sample_info &x = samples[a], &y = samples[b];
    return x.fid != y.fid ? x.fid < y.fid : x.iid < y.iid;
  };
  std::sort(order.begin(), order.end(), key_less);
  for (std::size_t k = 1; k < order.size(); ++k) {
    const sample_info &x = samples[order[k - 1]], &y = samples[order[k]];
    if (x.fid == y.fid && x.iid == y.iid) {
      const std::size_t a = std::min(order[k - 1], order[k]), b = std::max(order[k - 1], order[k]);
      bad(id_source, "duplicate sample ID '" + x.fid + " " + x.iid + "' (samples " + str(a) +
                         " and " + str(b) + ")");
    }
  }
}

}  // namespace

bgen_source::bgen_source(const bgen_options& options)
    : options_(options), ref_first_(options.ref_first), state_(std::make_unique<state>()) {
  const std::filesystem::path& file = options.bgen;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    throw error(errc::not_found, "missing .bgen file " + file.string());
  state& s = *state_;
  s.fd = open_read(file);
  s.file_size = s.fd.size();

  const header_block h = read_header_block(file, s.fd, s.file_size);
  has_sample_ids_ = h.has_sample_ids;
  layout_ = h.layout;
  compression_ = h.compression;
  std::vector<std::string> ids;
  if (has_sample_ids_) ids = read_sample_ids(file, s.fd, h);
  s.block_starts = variant_index(file, h, s.file_size).block_starts(s.fd);
  variants_ = h.variants;

  // Samples: the .sample file first (as PLINK 2 does), else the identifiers of the .bgen.
  if (!options.sample.empty()) {
    samples_ = read_oxford_sample(options.sample);
    if (samples_.size() != h.samples)
      bad(options.sample, "holds " + str(samples_.size()) + " samples, but " +
                              file.filename().string() + " has " + str(h.samples));
    refuse_duplicate_ids(samples_, options.sample);
  } else if (has_sample_ids_) {
    samples_ = samples_of_ids(file, ids);
    refuse_duplicate_ids(samples_, options.bgen);
  } else {
    bad(file, "holds no sample identifiers: give its .sample file");
  }
}

bgen_source::~bgen_source() = default;

std::string_view bgen_source::version() const noexcept {
  if (layout_ == 1) return "v1.1";
  return compression_ == codec_id::zstd ? "v1.3" : "v1.2";
}

std::string bgen_source::description() const {
  return "BGEN " + std::string(version()) + " " + options_.bgen.string();
}

column_info bgen_source::column(std::uint64_t j) const {
  if (j >= variants_)
    throw error(errc::invalid_argument, description() + ": column " + str(j) +
                                            " is out of range (" + str(variants_) + " columns)");
  const state& s = *state_;
  cursor c(s.fd, s.block_starts[j + 1], s.block_starts[j], 512);
  const header_reader reader{options_.bgen, layout_, samples_.size()};
  variant_header h;
  reader.read(c, j, true, h);
  if (ref_first_) std::swap(h.first, h.second);
  return {std::move(h.chrom), display_id(h),      "0",
          str(h.pos),         std::move(h.first), std::move(h.second)};
}

void bgen_source::read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) {
  check_read(j, dosages.size());
  decode_dosages(*fetch(j), dosages);
}

std::unique_ptr<column_source::fetched> bgen_source::fetch(std::uint64_t j) {
  check_read(j, samples_.size());
  const state& s = *state_;
  const std::uint64_t n = samples_.size();
  const std::uint64_t start = s.block_starts[j], end = s.block_starts[j + 1];
  // The variant's bytes, in one read: its lengths were checked against the file in the
  // constructor (block_starts[j + 1] is where its genotype block ends).
  const auto size = static_cast<std::size_t>(end - start);
  auto f = std::make_unique<bgen_fetched>();
  f->source = this;
  f->j = j;
  f->at = start;
  f->bytes = std::make_unique_for_overwrite<std::uint8_t[]>(size + 8);
  std::memset(f->bytes.get() + size, 0, 8);
  s.fd.pread_exact(std::as_writable_bytes(std::span(f->bytes.get(), size)), start);

  memory_cursor c(f->bytes.get(), start, end);
  const header_reader reader{options_.bgen, layout_, n};
  variant_header h;
  reader.read(c, j, false, h);
  f->id = display_id(h);
  std::uint32_t field = 0;
  if (layout_ == 1) {
    f->payload_size = 6 * n;
    if (compression_ != codec_id::none) c.u32(field);
  } else {
    c.u32(field);  // C: the size of the rest of the block
    f->payload_size = field;
    if (compression_ != codec_id::none) {
      c.u32(field);  // D: the decompressed size
      f->payload_size = field;
    }
  }
  f->block_offset = static_cast<std::size_t>(c.position() - start);
  f->block_size = static_cast<std::size_t>(end - c.position());
  return f;
}

namespace {

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
