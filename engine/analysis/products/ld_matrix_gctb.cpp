// GCTB's .ldm.KIND.info and .bin written from any LD matrix, with the layout and number
// formats of GCTB 2.05's outputLDmatrix (docs/FORMAT.md §13.3).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/ld_matrix.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"

namespace colflow {
namespace {

// A field right-aligned in `width` characters, as boost::format's %Ns.
void pad(std::string& line, std::string_view field, int width) {
  if (static_cast<int>(field.size()) < width)
    line.append(static_cast<std::size_t>(width) - field.size(), ' ');
  line.append(field);
}

// GCTB reads GenPos as a float and prints it as a stream does (6 significant digits).
std::string gen_pos(const std::string& cm) {
  float v = 0;
  const auto [end, ec] = std::from_chars(cm.data(), cm.data() + cm.size(), v);
  if (ec != std::errc{} || end != cm.data() + cm.size()) v = 0;
  std::ostringstream s;
  s << v;
  return s.str();
}

long long whole(const std::string& text) {
  long long v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// GCTB's A1 frequency: half the float mean of the calls.
float gctb_freq(const ldm_variant& v) {
  const double calls = static_cast<double>(v.n);
  const double sum = std::round(2 * calls * v.a1_freq);
  return 0.5f * (static_cast<float>(sum) / static_cast<float>(calls));
}

struct opened_file {
  staged_output staged;
  buffered_writer out;
  explicit opened_file(const std::filesystem::path& file)
      : staged(file), out(open_staged(staged)) {}
  static file_descriptor open_staged(const staged_output& s) {
    const int fd = ::open(s.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) throw_system_error(errno, "cannot open", s.path().string());
    return file_descriptor(fd, s.path().string());
  }
};

}  // namespace

std::vector<std::filesystem::path> write_gctb_ldm(const ld_matrix& matrix,
                                                  const std::filesystem::path& prefix) {
  const std::string kind(ldm_kind_name(matrix.kind()));
  const std::uint64_t samples = matrix.samples();
  if (samples == 0)
    throw error(errc::invalid_argument,
                std::string(matrix.source_format()) +
                    " does not record the samples it was made from, which GCTB's files need");
  const auto info_path = detail::prefixed(prefix, ".ldm." + kind + ".info");
  const auto bin_path = detail::prefixed(prefix, ".ldm." + kind + ".bin");
  opened_file info(info_path), bin(bin_path);
  char buf[64];
  std::string line;
  for (const auto& [name, width] :
       std::initializer_list<std::pair<const char*, int>>{{"Chrom", 6},
                                                          {"ID", 15},
                                                          {"GenPos", 10},
                                                          {"PhysPos", 15},
                                                          {"A1", 6},
                                                          {"A2", 6},
                                                          {"A1Freq", 12},
                                                          {"Index", 10},
                                                          {"WindStart", 10},
                                                          {"WindEnd", 10},
                                                          {"WindSize", 10},
                                                          {"WindWidth", 15},
                                                          {"N", 10},
                                                          {"SamplVar", 12},
                                                          {"LDsum", 12}}) {
    if (!line.empty()) line += ' ';
    pad(line, name, width);
  }
  line += '\n';
  info.out.write(line);
  const auto& vars = matrix.variants();
  const bool sparse = matrix.kind() == ldm_kind::sparse;
  const float n = static_cast<float>(samples);
  std::vector<std::size_t> order(matrix.size());
  for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
  matrix.stream(order, [&](const ld_column_view& c) {
    const std::size_t j = c.position;
    const std::size_t count = c.values.size();
    const std::size_t start = sparse ? c.rows.front() : c.first;
    const std::size_t end = sparse ? c.rows.back() : c.first + count - 1;
    // GCTB's sums: sparse, each term divided by N and added in order; dense, the float sum of
    // the squares then divided by N.
    float samp_var = 0, ld_sum = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const float r = c.values[k], rsq = r * r;
      if (sparse)
        samp_var += static_cast<float>((1.0 - rsq) * (1.0 - rsq) / static_cast<double>(samples));
      else
        samp_var += (1.0f - rsq) * (1.0f - rsq);
      ld_sum += r;
    }
    if (!sparse) samp_var /= n;
    const column_info &v = vars[j].info, &a = vars[start].info, &b = vars[end].info;
    const long long width =
        a.chrom == b.chrom ? whole(b.pos) - whole(a.pos) : whole(a.chrom) - whole(b.chrom);
    line.clear();
    pad(line, v.chrom, 6);
    line += ' ';
    pad(line, v.id, 15);
    line += ' ';
    pad(line, gen_pos(v.cm), 10);
    line += ' ';
    pad(line, v.pos, 15);
    line += ' ';
    pad(line, v.a1, 6);
    line += ' ';
    pad(line, v.a2, 6);
    std::snprintf(buf, sizeof buf, " %12f", static_cast<double>(gctb_freq(vars[j])));
    line += buf;
    for (const std::size_t x : {j, start, end, count}) {
      line += ' ';
      pad(line, std::to_string(x), 10);
    }
    line += ' ';
    pad(line, std::to_string(width), 15);
    line += ' ';
    pad(line, std::to_string(samples), 10);
    std::snprintf(buf, sizeof buf, " %12.6f %12.6f\n", static_cast<double>(samp_var),
                  static_cast<double>(ld_sum));
    line += buf;
    info.out.write(line);
    if (sparse) bin.out.write(std::as_bytes(c.rows));
    bin.out.write(std::as_bytes(c.values));
    return true;
  });
  info.out.finish();
  bin.out.finish();
  info.staged.commit(staged_output::directory_sync::by_caller);
  bin.staged.commit(staged_output::directory_sync::by_caller);
  sync_directory(directory_of(info_path));
  return {info_path, bin_path};
}

}  // namespace colflow
