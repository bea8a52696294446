// The reports of `colflow clump`: PLINK 1.9's fixed-width .clumped, byte for byte, and
// plink2's tab-separated .clumps.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "colflow/analysis/clump.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
#include "io/plink_number_internal.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

// `s` right-aligned in `width` (never cut).
std::string right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// PLINK 1.9's chromosome code in its reports: 1-22 as numbers (a "chr" prefix and leading
// zeros dropped), X 23, Y 24, XY 25, MT 26, other names as they are.
std::string plink1_chromosome(std::string c) {
  if (c.size() > 3 && (c.compare(0, 3, "chr") == 0 || c.compare(0, 3, "CHR") == 0)) c = c.substr(3);
  if (!c.empty() && std::all_of(c.begin(), c.end(), [](char d) { return d >= '0' && d <= '9'; })) {
    const std::size_t nz = c.find_first_not_of('0');
    return nz == std::string::npos ? "0" : c.substr(nz);
  }
  if (c == "X" || c == "x") return "23";
  if (c == "Y" || c == "y") return "24";
  if (c == "XY" || c == "xy") return "25";
  if (c == "MT" || c == "mt" || c == "M" || c == "m") return "26";
  return c;
}

std::string members_text(const store& s, const selection& sel, const clump_group& c,
                         bool always_file, const char* none) {
  if (c.members.empty()) return none;
  std::string out;
  for (const clump_member& m : c.members) {
    if (!out.empty()) out += ',';
    out += s.columns()[sel.columns[m.column]].id;
    if (always_file) {
      out += '(';
      out += std::to_string(m.file);
      out += ')';
    }
  }
  return out;
}

std::uint64_t total(const clump_group& c) {
  return c.counts[0] + c.counts[1] + c.counts[2] + c.counts[3] + c.counts[4];
}

// The width of PLINK 1.9's SNP column (its calc_plink_maxsnp): 4, and whenever an ID in order
// is longer than the width so far, that length plus 2, until the width reaches the longest ID
// of the store. It depends on the order of the IDs, as PLINK's does.
std::size_t id_width(const store& s, const selection& sel) {
  std::size_t longest = 0;
  for (const column_info& c : s.columns()) longest = std::max(longest, c.id.size());
  std::size_t w = 4;
  for (const std::size_t k : sel.columns) {
    const std::size_t n = s.columns()[k].id.size();
    if (n <= w) continue;
    w = n + 2;
    if (w >= longest) break;
  }
  return w;
}

std::string clumped_line(const store& s, const selection& sel, const clump_group& c,
                         std::size_t width) {
  const column_info& v = s.columns()[sel.columns[c.index]];
  std::string line = right(plink1_chromosome(v.chrom), 4) + ' ' + right(std::to_string(c.file), 4) +
                     ' ' + right(v.id, width) + ' ' + right(v.pos, 10) + ' ' +
                     right(detail::plink1_g3(c.p), 10) + ' ' + right(std::to_string(total(c)), 8) +
                     ' ';
  for (const std::uint64_t n : c.counts) line += right(std::to_string(n), 6) + ' ';
  return line + members_text(s, sel, c, true, "NONE") + '\n';
}

void write_clumped(const store& s, const selection& sel, const clump_result& r,
                   const std::filesystem::path& file) {
  staged_output staged(file);
  const int fd = ::open(staged.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open", staged.path().string());
  buffered_writer out(file_descriptor(fd, staged.path().string()));
  const std::size_t width = id_width(s, sel);
  out.write(" CHR    F " + right("SNP", width) + "         BP        " +
            "P    TOTAL   NSIG    S05    S01   S001  S0001    SP2\n");
  for (const clump_group& c : r.clumps) out.write(clumped_line(s, sel, c, width));
  out.write("\n\n");  // PLINK 1.9 ends the table with two empty lines
  out.finish();
  staged.commit();
}

void write_clumps(const store& s, const selection& sel, const clump_result& r,
                  const std::filesystem::path& file, int digits) {
  tsv_writer out(file, digits);
  const bool files = r.tables > 1;
  out.text("#CHROM").text("POS").text("ID");
  if (files) out.text("F");
  for (const char* h : {"P", "TOTAL", "NONSIG", "S0.05", "S0.01", "S0.001", "S0.0001", "SP2"})
    out.text(h);
  out.end_line();
  for (const clump_group& c : r.clumps) {
    const column_info& v = s.columns()[sel.columns[c.index]];
    out.text(v.chrom).text(v.pos).text(v.id);
    if (files) out.integer(c.file);
    out.number(c.p).integer(total(c));
    for (const std::uint64_t n : c.counts) out.integer(n);
    out.text(members_text(s, sel, c, files, "."));
    out.end_line();
  }
  out.commit();
}

}  // namespace

std::filesystem::path write_clump(const store& s, const selection& sel, const clump_result& result,
                                  const std::filesystem::path& prefix, clump_format format,
                                  int digits) {
  if (result.clumps.empty()) return {};
  std::filesystem::path file = prefix;
  if (format == clump_format::clumped) {
    file += ".clumped";
    write_clumped(s, sel, result, file);
  } else {
    file += ".clumps";
    write_clumps(s, sel, result, file, digits);
  }
  return file;
}

}  // namespace colflow
