// BGEN input (colflow/preprocess/bgen_source.hpp): the variant blocks checked and indexed once,
// then each variant's description and bytes read when asked for. The header and the samples
// are read in bgen_header.cpp, the probabilities decoded in bgen_probabilities.cpp.
#include "colflow/preprocess/bgen_source.hpp"

#include <algorithm>
#include <cstring>

#include "bgen_reader.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"

namespace colflow::preprocess {

using detail::bgen::bad;
using detail::bgen::bad_variant;
using detail::bgen::bgen_fetched;
using detail::bgen::header_block;
using detail::bgen::load_le16;
using detail::bgen::load_le32;
using detail::bgen::max_block_bytes;
using detail::bgen::min_block_bytes;
using detail::bgen::read_header_block;
using detail::bgen::read_sample_ids;
using detail::bgen::refuse_duplicate_ids;
using detail::bgen::samples_of_ids;
using detail::bgen::str;

namespace detail::bgen {

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  throw input_error(file, what);
}

std::string str(std::uint64_t v) { return std::to_string(v); }

[[noreturn]] void bad_variant(const std::filesystem::path& file, std::uint64_t j,
                              const std::string& id, std::uint64_t at, const std::string& what) {
  bad(file, "variant " + str(j) + (id == "." ? std::string() : " (" + id + ")") + " at byte " +
                str(at) + ": " + what);
}

}  // namespace detail::bgen

namespace {

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

}  // namespace

// The open file and each variant's offset, set by the constructor and then only read (fetch
// and column read the file with pread, decode_dosages does not touch it).
struct bgen_source::state {
  file_descriptor fd;
  std::uint64_t file_size = 0;
  // block_starts[j]: where variant j's block starts; block_starts[M]: where the last one ends.
  std::vector<std::uint64_t> block_starts;
};

namespace {

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

}  // namespace colflow::preprocess
