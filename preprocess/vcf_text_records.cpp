// VCF text records for vcf_source: reading lines, the counting pass over them, and the fixed
// fields handed to htslib. The sample columns of a line are parsed in vcf_text_samples.cpp.
#include <htslib/bgzf.h>
#include <htslib/kseq.h>  // KS_SEP_LINE

#include <charconv>
#include <climits>
#include <cstring>

#include "vcf_reader.hpp"

namespace colflow::preprocess::detail {
namespace {

// The number of tabs in s, eight bytes at a time (std::count widens every byte to a 64-bit
// counter): the counting pass runs over the whole file.
std::size_t count_tabs(std::string_view s) {
  constexpr std::uint64_t ones = 0x0101010101010101, high = 0x8080808080808080,
                          low7 = 0x7f7f7f7f7f7f7f7f, tabs = ones * '\t', pairs = 0x00ff00ff00ff00ff;
  const char* p = s.data();
  std::size_t left = s.size(), count = 0;
  while (left >= 8) {
    // Up to 255 words into byte counters, then their sum.
    std::uint64_t counters = 0;
    for (int k = 0; k < 255 && left >= 8; ++k, p += 8, left -= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      const std::uint64_t x = w ^ tabs;                     // tabs are zero bytes
      const std::uint64_t other = ((x & low7) + low7) | x;  // high bit set for other bytes
      counters += (~other & high) >> 7;
    }
    const std::uint64_t sums = (counters & pairs) + ((counters >> 8) & pairs);
    count += static_cast<std::size_t>((sums * 0x0001000100010001) >> 48);
  }
  for (; left > 0; --left) count += *p++ == '\t';
  return count;
}

bool has_key(std::string_view format, std::string_view key) {
  for (std::string_view k : split(format, ':'))
    if (k == key) return true;
  return false;
}

// The first nine tab-separated fields of a line into f (fewer when it has fewer); returns the
// number of fields of the whole line, the others only counted.
std::size_t first_fields(std::string_view text, std::array<std::string_view, 9>& f) {
  std::size_t fields = 0, start = 0;
  while (fields < f.size()) {
    const std::size_t tab = text.find('\t', start);
    f[fields++] = text.substr(start, tab == std::string_view::npos ? tab : tab - start);
    if (tab == std::string_view::npos) {
      start = text.size() + 1;
      break;
    }
    start = tab + 1;
  }
  if (start <= text.size()) fields += 1 + count_tabs(text.substr(start));
  return fields;
}

}  // namespace

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// For compressed input with memchr rather than htslib 1.16's bgzf_getline, which compares byte
// by byte: the counting pass and the streaming pass each read every byte of the file through
// here. Unlike it, a decompression error within a line is an error rather than a shorter line.
int read_line(htsFile* f, kstring_t* s) {
  const htsCompression c = hts_get_format(f)->compression;
  if (c != gzip && c != bgzf) return hts_getline(f, KS_SEP_LINE, s);
  BGZF* z = f->fp.bgzf;
  s->l = 0;
  int state = 0;
  while (state == 0) {
    if (z->block_offset >= z->block_length) {
      if (bgzf_read_block(z) != 0) {
        state = -2;
        break;
      }
      if (z->block_length == 0) {
        state = -1;
        break;
      }
    }
    const char* buf = static_cast<const char*>(z->uncompressed_block) + z->block_offset;
    const auto avail = static_cast<std::size_t>(z->block_length - z->block_offset);
    const auto* newline = static_cast<const char*>(std::memchr(buf, '\n', avail));
    const std::size_t take = newline != nullptr ? static_cast<std::size_t>(newline - buf) : avail;
    if (newline != nullptr) state = 1;
    if (kputsn(buf, take, s) < 0) {
      state = -3;
      break;
    }
    z->block_offset += static_cast<int>(take) + (newline != nullptr ? 1 : 0);
    if (z->block_offset >= z->block_length) z->block_offset = z->block_length = 0;
  }
  ++f->lineno;
  if (state < -1 || (s->l == 0 && state < 0)) return state;
  if (s->l > 0 && s->s[s->l - 1] == '\r') --s->l;
  s->s[s->l] = '\0';
  return static_cast<int>(std::min<std::size_t>(s->l, INT_MAX));
}

// ---- The counting pass: the first nine fields of each line and its number of tabs, no
// genotypes parsed.

record_count count_text_records(htsFile* file, const vcf_options& options, int samples) {
  const std::filesystem::path& path = options.path;
  const dosage_field field = options.dosage;
  const std::uint64_t expected_fields = 9 + static_cast<std::uint64_t>(samples);
  record_count count{options};
  line_buffer line;
  int ret;
  while ((ret = read_line(file, &line.s)) >= 0) {
    ++count.records;
    const std::string_view text = line.view();
    const auto line_no = [&] { return "line " + std::to_string(file->lineno); };
    if (text.empty())
      bad(path, line_no() + ": empty line (a record has 8 or more tab-separated fields)");
    std::array<std::string_view, 9> f;
    const std::size_t fields = first_fields(text, f);
    const auto where = [&] {
      return line_no() + " (record " + std::to_string(count.records) + ", " + std::string(f[0]) +
             ":" + std::string(f[1]) + " " + std::string(f[2]) + ")";
    };
    if (fields < 8)
      bad(path, where() + ": " + std::to_string(fields) +
                    " tab-separated fields, a record has at least 8 (CHROM POS ID REF ALT QUAL "
                    "FILTER INFO)");
    if (fields != expected_fields)
      bad(path, where() + ": " + std::to_string(fields < 9 ? 0 : fields - 9) +
                    " sample columns, the header names " + std::to_string(samples) + " samples");
    std::int64_t pos = 0;
    const auto [end, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), pos);
    if (ec != std::errc() || end != f[1].data() + f[1].size())
      bad(path, where() + ": POS '" + std::string(f[1]) + "' is not an integer");
    const std::uint64_t alts =
        f[4] == "." ? 0 : 1 + static_cast<std::uint64_t>(std::count(f[4].begin(), f[4].end(), ','));
    count.add(where, alts, has_key(f[8], "GT"),
              field != dosage_field::none && has_key(f[8], field_name(field)), f[4]);
  }
  if (ret < -1)
    bad(path, "after line " + std::to_string(file->lineno) +
                  ": htslib cannot read on (the file is corrupt or truncated)");
  return count;
}

// ---- The streaming pass: the fixed fields of a line, through htslib.

int record_stream::parse_site() {
  const std::string_view text = line.view();
  std::size_t info_end = std::string_view::npos, format_end = std::string_view::npos;
  for (std::size_t tabs = 0, at = 0; tabs < 9; ++tabs, ++at) {
    at = text.find('\t', at);
    if (at == std::string_view::npos) break;
    (tabs == 7 ? info_end : format_end) = at;
  }
  if (info_end == std::string_view::npos || format_end == std::string_view::npos ||
      format_end < info_end)
    fail("line " + std::to_string(line_number) + " (record " + std::to_string(record_index) +
         "): no sample columns, the first reading found some (did the file change?)");
  samples_at = format_end + 1;
  // htslib would end the line at a NUL byte, as the decoder refuses one in the samples.
  if (text.substr(0, format_end).find('\0') != std::string_view::npos)
    fail("line " + std::to_string(line_number) + " (record " + std::to_string(record_index) +
         "): htslib cannot parse it (an invalid character): a NUL byte in CHROM..FORMAT");
  const std::string_view format = text.substr(info_end + 1, format_end - info_end - 1);
  layout.reset();
  for (const auto& l : layouts)
    if (l->format == format) layout = l;
  ks_clear(&site.s);
  if (layout) {
    kputsn(text.data(), info_end, &site.s);
  } else {
    kputsn(text.data(), format_end, &site.s);
    for (int i = 0; i < samples; ++i) kputsn("\t.", 2, &site.s);
  }
  if (vcf_parse(&site.s, header.get(), record.get()) < 0) return -2;
  if (!layout && !(record->errcode & fatal_record_errors)) {
    layout = make_layout(format);
    if (layouts.size() == 16) layouts.erase(layouts.begin());
    layouts.push_back(layout);
  }
  return 0;
}

std::shared_ptr<const format_layout> record_stream::make_layout(std::string_view format) const {
  auto l = std::make_shared<format_layout>();
  l->format = std::string(format);
  const char* value_key =
      options->dosage == dosage_field::none ? nullptr : field_name(options->dosage);
  for (std::string_view key : split(format, ':')) {
    const std::string k(key);
    const int id = bcf_hdr_id2int(header.get(), BCF_DT_ID, k.c_str());
    const int type = id >= 0 && bcf_hdr_idinfo_exists(header.get(), BCF_HL_FMT, id)
                         ? bcf_hdr_id2type(header.get(), BCF_HL_FMT, id)
                         : BCF_HT_STR;
    const int index = static_cast<int>(l->keys.size());
    format_layout::syntax_t s = format_layout::syntax_t::text;
    if (type == BCF_HT_INT)
      s = format_layout::syntax_t::integer;
    else if (type == BCF_HT_REAL)
      s = format_layout::syntax_t::real;
    else if (k == "GT")
      s = format_layout::syntax_t::genotype;
    if (s == format_layout::syntax_t::genotype && l->gt < 0) l->gt = index;
    if (value_key != nullptr && k == value_key && l->value < 0) l->value = index;
    l->keys.push_back(k);
    l->syntax.push_back(s);
  }
  return l;
}

}  // namespace colflow::preprocess::detail
