// The VCF or BCF file and its header, as vcf_source opens them: the format htslib sees, the
// samples, the dosage field, and why htslib refused a header or a record.
#include <htslib/bgzf.h>
#include <htslib/kseq.h>  // KS_SEP_LINE
#include <htslib/tbx.h>   // hts_get_bgzfp

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "vcf_reader.hpp"

namespace colflow::preprocess::detail {
namespace {

// Why htslib refused the header, where it can be told from the header text: the reason as
// ": ...", or an empty string.
std::string header_problem(const std::filesystem::path& path) {
  file_ptr f(hts_open(path.c_str(), "r"));
  if (!f) return "";
  std::vector<std::string> lines;
  if (hts_get_format(f.get())->format == bcf) {
    // BCF: "BCF\2\2", the text length (uint32 little-endian), the text.
    BGZF* z = hts_get_bgzfp(f.get());
    std::array<unsigned char, 9> head{};
    if (z == nullptr || bgzf_read(z, head.data(), head.size()) != 9) return "";
    const std::uint32_t length =
        head[5] | (head[6] << 8) | (head[7] << 16) | (static_cast<std::uint32_t>(head[8]) << 24);
    if (length > (1u << 30)) return "";
    std::string text(length, '\0');
    if (bgzf_read(z, text.data(), length) != static_cast<ssize_t>(length))
      return ": the BCF header is truncated";
    text.resize(std::strlen(text.c_str()));
    for (std::string_view l : split(text, '\n')) lines.emplace_back(l);
  } else {
    line_buffer line;
    while (hts_getline(f.get(), KS_SEP_LINE, &line.s) >= 0 && line.s.l > 0 && line.s.s[0] == '#')
      lines.emplace_back(line.view());
  }
  const auto chrom = std::find_if(lines.begin(), lines.end(),
                                  [](const std::string& l) { return l.starts_with("#CHROM"); });
  if (chrom == lines.end()) return ": no #CHROM line ends the header";
  const auto names = split(*chrom, '\t');
  static constexpr std::array<std::string_view, 8> fixed{"#CHROM", "POS",  "ID",     "REF",
                                                         "ALT",    "QUAL", "FILTER", "INFO"};
  if (names.size() < fixed.size() || !std::equal(fixed.begin(), fixed.end(), names.begin()))
    return ": the #CHROM line does not name the columns CHROM POS ID REF ALT QUAL FILTER INFO, "
           "separated by tabs";
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t i = 9; i < names.size(); ++i) {
    const auto [it, added] = seen.emplace(names[i], i - 8);
    if (!added)
      return ": sample name '" + std::string(names[i]) + "' appears twice (samples " +
             std::to_string(it->second) + " and " + std::to_string(i - 8) +
             "); sample names must be unique, as PLINK 2 requires";
  }
  return ": htslib cannot parse it (check the ## meta-information lines)";
}

}  // namespace

file_ptr open_input(const vcf_options& o) {
  std::error_code ec;
  if (!std::filesystem::exists(o.path, ec))
    throw error(errc::not_found, "missing VCF/BCF file " + o.path.string());
  errno = 0;
  file_ptr f(hts_open(o.path.c_str(), "r"));
  // htslib fails with ENOEXEC on content whose format it cannot open (a damaged BCF, binary
  // data): a bad file rather than a failed system call.
  if (!f && errno == ENOEXEC)
    bad(o.path, "not a VCF or BCF file: htslib does not recognise its format");
  if (!f) throw_system_error(errno != 0 ? errno : EIO, "cannot open", o.path.string());
  const htsFormat* format = hts_get_format(f.get());
  if (format->format != vcf && format->format != bcf) {
    char* d = hts_format_description(format);
    const std::string found = d ? d : "an unknown format";
    std::free(d);
    bad(o.path, "not a VCF or BCF file: htslib reads it as " + found +
                    " (a VCF starts with a ##fileformat=VCF line)");
  }
  // A bgzip file truncated at a block boundary reads as a shorter valid file: only the missing
  // end-of-file block tells. Checked before threads are attached (it seeks).
  if (format->compression == bgzf) {
    BGZF* z = hts_get_bgzfp(f.get());
    if (z != nullptr && bgzf_check_EOF(z) == 0)
      bad(o.path,
          "no BGZF end-of-file marker: the file is truncated (bgzip ends every file with one)");
  }
  if (o.threads > 0 && hts_set_threads(f.get(), static_cast<int>(std::min(o.threads, 1024u))) != 0)
    throw error(errc::io_error, "cannot start " + std::to_string(o.threads) +
                                    " htslib threads to read " + o.path.string());
  return f;
}

header_ptr read_header(htsFile* file, const std::filesystem::path& path) {
  header_ptr header(bcf_hdr_read(file));
  if (!header) bad(path, "cannot read the VCF header" + header_problem(path));
  return header;
}

std::vector<sample_info> header_samples(const bcf_hdr_t* header,
                                        const std::filesystem::path& path) {
  const int n = bcf_hdr_nsamples(header);
  if (n <= 0) bad(path, "no samples: the #CHROM line names no sample column after FORMAT");
  std::vector<sample_info> samples;
  samples.reserve(static_cast<std::size_t>(n));
  std::unordered_map<std::string_view, int> seen;
  for (int i = 0; i < n; ++i) {
    const char* name = header->samples[i];
    if (!seen.emplace(name, i).second)
      bad(path,
          "sample name '" + std::string(name) + "' appears twice; sample names must be unique");
    samples.push_back({"0", name, "0", "0", "0", "-9"});
  }
  return samples;
}

void check_dosage_field(const bcf_hdr_t* header, const vcf_options& o) {
  if (o.dosage == dosage_field::none) return;
  const char* key = field_name(o.dosage);
  const int id = bcf_hdr_id2int(header, BCF_DT_ID, key);
  if (!bcf_hdr_idinfo_exists(header, BCF_HL_FMT, id))
    bad(o.path, std::string("the header declares no FORMAT field ") + key +
                    " (##FORMAT=<ID=" + key + ",...>): the file has no " + key +
                    " dosages (read its GT calls without a dosage field)");
  if (bcf_hdr_id2type(header, BCF_HL_FMT, id) != BCF_HT_REAL)
    bad(o.path, std::string("FORMAT field ") + key + " is not declared Type=Float");
}

// An undefined contig or tag is not a fatal error: htslib defines it as it goes, as bcftools
// does.
std::string record_error_text(int errcode) {
  std::string what;
  const auto add = [&](int bit, const char* text) {
    if (errcode & bit) what += std::string(what.empty() ? "" : ", ") + text;
  };
  add(BCF_ERR_NCOLS, "wrong number of columns");
  add(BCF_ERR_LIMITS, "a value beyond htslib's limits");
  add(BCF_ERR_CHAR, "an invalid character");
  add(BCF_ERR_CTG_INVALID, "an invalid contig name");
  add(BCF_ERR_TAG_INVALID, "an invalid tag");
  return what;
}

}  // namespace colflow::preprocess::detail
