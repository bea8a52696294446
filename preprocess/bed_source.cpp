// PLINK 1 input: the .fam and .bim parsed, the .bed's 2-bit codes read column by column.
#include "colflow/preprocess/bed_source.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"

namespace colflow::preprocess {
namespace {

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  throw input_error(file, what);
}

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

std::ifstream open_text(const std::filesystem::path& file, const char* what) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    throw error(errc::not_found, "missing " + std::string(what) + " file " + file.string());
  std::ifstream in(file);
  if (!in) throw error(errc::io_error, "cannot open " + file.string());
  return in;
}

template <typename T>
bool parse_number(const std::string& s, T& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

}  // namespace

std::vector<std::string> split_whitespace(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

plink_paths plink_paths::from_prefix(const std::string& prefix) {
  std::string p = prefix;
  if (p.size() > 4 && p.compare(p.size() - 4, 4, ".bed") == 0) p.resize(p.size() - 4);
  return {p + ".bed", p + ".bim", p + ".fam"};
}

std::vector<sample_info> read_fam(const std::filesystem::path& fam) {
  std::ifstream in = open_text(fam, ".fam");
  std::vector<sample_info> samples;
  std::string line;
  std::uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (is_blank(line)) continue;
    auto f = split_whitespace(line);
    if (f.size() != 6)
      bad(fam, "line " + std::to_string(line_no) +
                   ": expected 6 fields (FID IID father mother "
                   "sex phenotype), found " +
                   std::to_string(f.size()));
    samples.push_back({std::move(f[0]), std::move(f[1]), std::move(f[2]), std::move(f[3]),
                       std::move(f[4]), std::move(f[5])});
  }
  if (samples.empty()) bad(fam, "no samples (the file is empty)");
  return samples;
}

std::uint64_t count_bim(const std::filesystem::path& bim) {
  std::ifstream in = open_text(bim, ".bim");
  std::string line;
  std::uint64_t line_no = 0, variants = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (is_blank(line)) continue;
    const auto f = split_whitespace(line);
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (f.size() != 6)
      bad(bim, where + "expected 6 fields (chromosome ID cM position A1 A2), found " +
                   std::to_string(f.size()));
    double cm;
    std::int64_t pos;
    if (!parse_number(f[3], pos)) bad(bim, where + "position '" + f[3] + "' is not an integer");
    if (!parse_number(f[2], cm))
      bad(bim, where + "genetic distance '" + f[2] + "' is not a number");
    ++variants;
  }
  if (variants == 0) bad(bim, "no variants (the file is empty)");
  return variants;
}

column_info parse_bim_line(const std::string& line) {
  auto f = split_whitespace(line);
  f.resize(6);
  return {std::move(f[0]), std::move(f[1]), std::move(f[2]),
          std::move(f[3]), std::move(f[4]), std::move(f[5])};
}

// The streamed .bim and the open .bed, plus, in individual-major mode, a transposed block.
struct bed_source::state {
  std::ifstream bim;
  std::uint64_t next_bim = 0;
  file_descriptor bed;
  // Individual-major: variants [block_first, block_first + block_count) transposed.
  std::vector<std::uint8_t> block;
  std::uint64_t block_first = 0, block_count = 0;
};

bed_source::bed_source(const plink_paths& paths)
    : paths_(paths), state_(std::make_unique<state>()) {
  // The .bed's own header first: "not a .bed file" is the most useful message when it applies.
  std::error_code ec;
  if (!std::filesystem::exists(paths.bed, ec))
    throw error(errc::not_found, "missing .bed file " + paths.bed.string());
  state_->bed = open_read(paths.bed);
  bed_size_ = state_->bed.size();
  if (bed_size_ < 3)
    bad(paths.bed, "file is " + std::to_string(bed_size_) +
                       " bytes, too short for the 3-byte PLINK .bed header");
  unsigned char header[3];
  state_->bed.pread_exact(std::as_writable_bytes(std::span(header)), 0);
  if (header[0] != 0x6c || header[1] != 0x1b)
    bad(paths.bed, "not a PLINK .bed file: starts with " + hex_byte(header[0]) + " " +
                       hex_byte(header[1]) + ", expected 0x6c 0x1b");
  if (header[2] != 0x01 && header[2] != 0x00)
    bad(paths.bed,
        "unknown mode byte " + hex_byte(header[2]) + " (0x01 is SNP-major, 0x00 individual-major)");
  individual_major_ = header[2] == 0x00;

  samples_ = read_fam(paths.fam);
  variants_ = count_bim(paths.bim);
  const std::uint64_t n = samples_.size(), m = variants_;
  const std::uint64_t expected =
      3 + (individual_major_ ? n * genotype_column_bytes(m) : m * genotype_column_bytes(n));
  if (bed_size_ != expected)
    bad(paths.bed, "expected " + std::to_string(expected) + " bytes for " + std::to_string(n) +
                       " samples x " + std::to_string(m) + " variants, found " +
                       std::to_string(bed_size_));
  state_->bim.open(paths.bim);
}

bed_source::~bed_source() = default;

column_info bed_source::column(std::uint64_t j) const {
  if (j != state_->next_bim)
    throw error(errc::invalid_argument, "bed_source: columns must be read in order");
  std::string line;
  while (std::getline(state_->bim, line))
    if (!is_blank(line)) break;
  ++state_->next_bim;
  return parse_bim_line(line);
}

std::string bed_source::description() const {
  return "PLINK .bed " + paths_.bed.string() + (individual_major_ ? " (individual-major)" : "");
}

void bed_source::read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) {
  const std::uint64_t n = samples_.size(), bytes = genotype_column_bytes(n);
  if (j >= variants_ || codes.size() < bytes)
    throw error(errc::invalid_argument, "bed_source: bad column or buffer");
  if (!individual_major_) {
    state_->bed.pread_exact(std::as_writable_bytes(codes.first(bytes)), 3 + j * bytes);
    return;
  }
  // Individual-major: transpose a block of variants at a time (a multiple of 4, so each
  // sample's slice is whole bytes), bounded to about 64 MB whatever the file size.
  state& s = *state_;
  if (j < s.block_first || j >= s.block_first + s.block_count) {
    const std::uint64_t row_bytes = genotype_column_bytes(variants_);
    const std::uint64_t per_variant = std::max<std::uint64_t>(bytes, 1);
    std::uint64_t count = std::max<std::uint64_t>(4, ((64u << 20) / per_variant) / 4 * 4);
    s.block_first = j / 4 * 4;
    count = std::min(count, variants_ - s.block_first);
    s.block_count = count;
    s.block.assign(count * bytes, 0);
    std::vector<std::uint8_t> slice(genotype_column_bytes(count));
    for (std::uint64_t i = 0; i < n; ++i) {
      s.bed.pread_exact(std::as_writable_bytes(std::span(slice)),
                        3 + i * row_bytes + s.block_first / 4);
      for (std::uint64_t v = 0; v < count; ++v) {
        const unsigned code = (slice[v / 4] >> (2 * (v % 4))) & 3u;
        s.block[v * bytes + i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
      }
    }
  }
  std::memcpy(codes.data(), s.block.data() + (j - s.block_first) * bytes, bytes);
}

}  // namespace colflow::preprocess
