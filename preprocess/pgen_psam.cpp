// The .psam of a .pgen (preprocess/pgen_reader.hpp): '#' header lines, the last naming the
// columns (#FID or #IID first; SID, PAT, MAT, SEX; any other a phenotype), or none for a
// .fam-like file (pgen_spec, "PSAM Format Specification").
#include <fstream>
#include <unordered_map>

#include "colflow/error.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "pgen_reader.hpp"

namespace colflow::preprocess::detail::pgen {
namespace {

constexpr std::size_t absent = static_cast<std::size_t>(-1);

struct psam_columns {
  std::size_t fid = absent, iid = absent, sid = absent, pat = absent, mat = absent, sex = absent,
              pheno = absent;
  std::size_t count = 0;
};

// 1/M/m male, 2/F/f female, anything else unknown (pgen_spec), as a .fam writes them.
std::string sex_code(const std::string& s) {
  if (s == "1" || s == "M" || s == "m") return "1";
  if (s == "2" || s == "F" || s == "f") return "2";
  return "0";
}

// A missing phenotype as PLINK 1 writes it.
std::string phenotype(const std::string& s) {
  if (s == "NA" || s == "na" || s == "nan" || s == "NaN" || s == "NONE") return "-9";
  return s;
}

psam_columns name_columns(const std::filesystem::path& file, std::uint64_t line_no,
                          const std::string& line) {
  std::vector<std::string> names = split_whitespace(line);
  names.front().erase(0, 1);  // the '#'
  psam_columns c;
  c.count = names.size();
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& n = names[k];
    std::size_t* slot = n == "FID"   ? &c.fid
                        : n == "IID" ? &c.iid
                        : n == "SID" ? &c.sid
                        : n == "PAT" ? &c.pat
                        : n == "MAT" ? &c.mat
                        : n == "SEX" ? &c.sex
                                     : nullptr;
    if (!slot) {
      if (c.pheno == absent) c.pheno = k;
      continue;
    }
    if (*slot != absent)
      throw input_error(file,
                        "line " + std::to_string(line_no) + ": column " + n + " appears twice");
    *slot = k;
  }
  if (c.iid == absent || (c.fid != absent && (c.fid != 0 || c.iid != 1)) ||
      (c.fid == absent && c.iid != 0))
    throw input_error(
        file, "line " + std::to_string(line_no) + ": the header must start with #FID IID or #IID");
  if ((c.pat == absent) != (c.mat == absent))
    throw input_error(file, "line " + std::to_string(line_no) +
                                ": PAT and MAT must both be present or both absent");
  return c;
}

// The .fam order of a file without a header line: FID IID PAT MAT SEX [PHENO1].
psam_columns fam_columns(std::size_t fields) {
  psam_columns c{0, 1, absent, 2, 3, 4, fields >= 6 ? std::size_t{5} : absent, 0};
  c.count = fields >= 6 ? 6 : 5;
  return c;
}

}  // namespace

std::vector<sample_info> read_psam(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    throw error(errc::not_found, "missing .psam file " + file.string());
  std::ifstream in(file);
  if (!in) throw error(errc::io_error, "cannot open " + file.string());
  std::vector<sample_info> samples;
  std::unordered_map<std::string, std::uint64_t> seen;  // "FID IID" -> line
  psam_columns c;
  bool named = false, body = false;
  std::string line;
  std::uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line[0] == '#' && !body) {
      if (line.rfind("#FID", 0) == 0 || line.rfind("#IID", 0) == 0) {
        c = name_columns(file, line_no, line);
        named = true;
      }
      continue;
    }
    const std::vector<std::string> f = split_whitespace(line);
    if (!named && !body) {
      if (f.size() < 5)
        throw input_error(file, "line " + std::to_string(line_no) +
                                    ": expected a #FID or #IID header line, or 5 or 6 fields "
                                    "(FID IID PAT MAT SEX [PHENOTYPE]), found " +
                                    std::to_string(f.size()));
      c = fam_columns(f.size());
    }
    body = true;
    if (f.size() < c.count)
      throw input_error(file, "line " + std::to_string(line_no) + ": expected " +
                                  std::to_string(c.count) + " fields, found " +
                                  std::to_string(f.size()));
    auto field = [&](std::size_t k, const char* otherwise) {
      return k == absent ? std::string(otherwise) : f[k];
    };
    sample_info s{field(c.fid, "0"), field(c.iid, "0"),           field(c.pat, "0"),
                  field(c.mat, "0"), sex_code(field(c.sex, "0")), phenotype(field(c.pheno, "-9"))};
    const std::string key = s.fid + '\t' + s.iid;
    const auto [it, fresh] = seen.emplace(key, line_no);
    if (!fresh)
      throw input_error(file, "line " + std::to_string(line_no) + ": sample " + s.fid + " " +
                                  s.iid + " appears twice (first on line " +
                                  std::to_string(it->second) +
                                  "); a store names each sample by FID and IID once");
    samples.push_back(std::move(s));
  }
  if (samples.empty()) throw input_error(file, "no samples (the file is empty)");
  return samples;
}

}  // namespace colflow::preprocess::detail::pgen
