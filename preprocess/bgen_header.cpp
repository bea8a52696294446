// BGEN input's header and samples, for bgen_source: the header block and the sample identifier
// block of the .bgen checked, the Oxford .sample file read, the samples' IDs checked.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <numeric>

#include "bgen_reader.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/bgen_source.hpp"

namespace colflow::preprocess {

using detail::bgen::bad;
using detail::bgen::str;

namespace {

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

namespace detail::bgen {

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

}  // namespace detail::bgen

}  // namespace colflow::preprocess
