// The score files `colflow score` reads: plink2's positional --score files, colflow's own
// bayesr .effects.tsv and lasso/ridge/enet .coef.tsv, and PGS Catalog scoring files.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "colflow/analysis/score.hpp"
#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {
namespace {

[[noreturn]] void fail(const score_file& f, std::size_t line, const std::string& what) {
  throw error(errc::bad_input, f.path.string() + " line " + std::to_string(line) + ": " + what);
}

// A weight: a finite or infinite decimal number, as plink2 accepts; false for anything else.
bool parse_weight(std::string_view v, double& x) {
  if (v.empty()) return false;
  if (v.front() == '+') v.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return ec == std::errc() && ptr == v.data() + v.size() && !std::isnan(x);
}

// The position of `name` in `fields`, or npos.
std::size_t find_field(const std::vector<std::string_view>& fields, std::string_view name) {
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (fields[i] == name) return i;
  return std::string_view::npos;
}

// Adds an entry, refusing an (ID, allele) pair given before.
class entry_list {
 public:
  explicit entry_list(const score_file& f, score_table& t) : file_(f), table_(t) {}
  void add(std::string_view id, std::string_view allele, std::size_t line,
           std::vector<double> weights) {
    const auto [it, fresh] = first_line_.try_emplace({std::string(id), std::string(allele)}, line);
    if (!fresh)
      fail(file_, line,
           "variant '" + std::string(id) + "' with allele '" + std::string(allele) +
               "' appears again (first on line " + std::to_string(it->second) + ")");
    table_.entries.push_back({std::string(id), std::string(allele), line, std::move(weights)});
  }

 private:
  const score_file& file_;
  score_table& table_;
  std::map<std::pair<std::string, std::string>, std::size_t> first_line_;
};

double weight_of(const score_file& f, std::size_t line, std::string_view v,
                 std::string_view column) {
  double x = 0;
  if (!parse_weight(v, x))
    fail(f, line,
         "the weight '" + std::string(v) + "' (" + std::string(column) + ") is not a number");
  return x;
}

void read_positional(const score_file& f, const std::vector<detail::text_record>& records,
                     score_table& t) {
  if (f.id_column == 0 || f.allele_column == 0)
    throw error(errc::invalid_argument, "--score: column numbers start at 1");
  std::vector<std::size_t> cols = f.score_columns;
  if (cols.empty()) cols.push_back(f.allele_column + 1);
  std::size_t needed = std::max(f.id_column, f.allele_column);
  for (std::size_t c : cols) {
    if (c == 0) throw error(errc::invalid_argument, "--score: column numbers start at 1");
    needed = std::max(needed, c);
  }
  t.format = "plink2";
  std::vector<std::string_view> fields;
  std::size_t first = 0;
  if (f.header != score_file::header_line::none && !records.empty()) {
    first = 1;
    detail::split_fields(records[0].text, fields);
    if (f.header == score_file::header_line::read) {
      if (fields.size() < needed)
        fail(f, records[0].line,
             "the header has " + std::to_string(fields.size()) + " fields; column " +
                 std::to_string(needed) + " is named");
      for (std::size_t c : cols) t.names.emplace_back(fields[c - 1]);
    }
  }
  if (t.names.empty())
    for (std::size_t k = 0; k < cols.size(); ++k)
      t.names.push_back("SCORE" + std::to_string(k + 1));
  entry_list list(f, t);
  for (std::size_t r = first; r < records.size(); ++r) {
    detail::split_fields(records[r].text, fields);
    const std::size_t line = records[r].line;
    if (fields.size() < needed)
      fail(f, line,
           std::to_string(fields.size()) + " fields where column " + std::to_string(needed) +
               " is read");
    std::vector<double> w;
    w.reserve(cols.size());
    for (std::size_t c : cols)
      w.push_back(weight_of(f, line, fields[c - 1], "column " + std::to_string(c)));
    list.add(fields[f.id_column - 1], fields[f.allele_column - 1], line, std::move(w));
  }
}

// A table of one weight per variant under a header line: the variant's ID, its allele and the
// weight in the named columns of every line (0-based).
struct one_score_columns {
  const char* format;
  std::size_t id, allele, weight;
  const char* weight_name;
};

void read_one_score(const score_file& f, const std::vector<detail::text_record>& records,
                    const std::vector<std::string_view>& header, const one_score_columns& c,
                    score_table& t) {
  t.format = c.format;
  t.names = {"SCORE1"};
  entry_list list(f, t);
  std::vector<std::string_view> fields;
  for (std::size_t r = 1; r < records.size(); ++r) {
    detail::split_fields(records[r].text, fields);
    if (fields.size() != header.size())
      fail(f, records[r].line,
           std::to_string(fields.size()) + " fields where the header has " +
               std::to_string(header.size()));
    list.add(fields[c.id], fields[c.allele], records[r].line,
             {weight_of(f, records[r].line, fields[c.weight], c.weight_name)});
  }
}

// colflow bayesr's .effects.tsv: ID A1 PIP BETA BETA_SD BETA_PER_UNIT BETA_PER_UNIT_SD, scored
// with the per-allele BETA_PER_UNIT.
void read_bayesr(const score_file& f, const std::vector<detail::text_record>& records,
                 const std::vector<std::string_view>& header, score_table& t) {
  read_one_score(f, records, header,
                 {"colflow bayesr", 0, 1, find_field(header, "BETA_PER_UNIT"), "BETA_PER_UNIT"}, t);
}

// GCTB's .snpRes (and colflow sbayesr's): Id Name Chrom Position A1 A2 A1Frq A1Effect SE ...;
// the score uses Name, A1 and A1Effect, the posterior mean effect per A1 allele.
void read_gctb_snp_res(const score_file& f, const std::vector<detail::text_record>& records,
                       const std::vector<std::string_view>& header, score_table& t) {
  read_one_score(f, records, header, {"GCTB snpRes", 1, 4, 7, "A1Effect"}, t);
}

// colflow lasso/ridge/enet's .coef.tsv: LAMBDA ID A1 BETA BETA_PER_UNIT, per λ; a score per λ
// (named LAMBDA=<value as written>), 0 for the variants a λ does not list.
void read_penalized(const score_file& f, const std::vector<detail::text_record>& records,
                    score_table& t) {
  t.format = "colflow penalized";
  std::vector<std::string_view> fields;
  std::map<std::string, std::size_t, std::less<>> lambda_index;
  std::map<std::pair<std::string, std::string>, std::size_t> entry_of;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> seen;  // (entry, λ) -> line
  struct cell {
    std::size_t entry, lambda;
    double w;
  };
  std::vector<cell> cells;
  for (std::size_t r = 1; r < records.size(); ++r) {
    detail::split_fields(records[r].text, fields);
    const std::size_t line = records[r].line;
    if (fields.size() != 5) fail(f, line, std::to_string(fields.size()) + " fields where 5 are");
    const auto [l, new_lambda] = lambda_index.try_emplace(std::string(fields[0]), t.names.size());
    if (new_lambda) t.names.push_back("LAMBDA=" + std::string(fields[0]));
    const auto [e, new_entry] =
        entry_of.try_emplace({std::string(fields[1]), std::string(fields[2])}, t.entries.size());
    if (new_entry) t.entries.push_back({std::string(fields[1]), std::string(fields[2]), line, {}});
    const auto [s, fresh] = seen.try_emplace({e->second, l->second}, line);
    if (!fresh)
      fail(f, line,
           "variant '" + std::string(fields[1]) + "' with allele '" + std::string(fields[2]) +
               "' appears again for LAMBDA " + std::string(fields[0]) + " (first on line " +
               std::to_string(s->second) + ")");
    cells.push_back({e->second, l->second, weight_of(f, line, fields[4], "BETA_PER_UNIT")});
  }
  for (auto& e : t.entries) e.weights.assign(t.names.size(), 0.0);
  for (const cell& c : cells) t.entries[c.entry].weights[c.lambda] = c.w;
}

// A PGS Catalog scoring file: '#' lines of metadata (#pgs_id=... names the score), then a
// header naming rsID and/or hm_rsID, effect_allele and effect_weight.
void read_pgs_catalog(const score_file& f, const std::vector<detail::text_record>& records,
                      std::size_t header_record, score_table& t) {
  t.format = "PGS Catalog";
  std::string name = "SCORE1";
  for (std::size_t r = 0; r < header_record; ++r) {
    std::string_view s = records[r].text;
    const std::size_t eq = s.find('=');
    if (eq != std::string_view::npos && s.substr(0, eq) == "#pgs_id" && eq + 1 < s.size())
      name = std::string(s.substr(eq + 1));
  }
  t.names = {name};
  std::vector<std::string_view> header, fields;
  detail::split_fields(records[header_record].text, header);
  const std::size_t rs = find_field(header, "rsID"), hm = find_field(header, "hm_rsID"),
                    allele = find_field(header, "effect_allele"),
                    weight = find_field(header, "effect_weight");
  if ((rs == std::string_view::npos && hm == std::string_view::npos) ||
      allele == std::string_view::npos || weight == std::string_view::npos)
    fail(f, records[header_record].line,
         "a PGS Catalog header needs rsID or hm_rsID, effect_allele and effect_weight");
  entry_list list(f, t);
  for (std::size_t r = header_record + 1; r < records.size(); ++r) {
    // Fields are tab-separated and may be empty (an hm_rsID the harmonisation did not find).
    std::string_view s = records[r].text;
    if (s.front() == '#') continue;
    fields.clear();
    for (std::size_t start = 0;;) {
      const std::size_t tab = s.find('\t', start);
      fields.push_back(s.substr(start, tab == std::string_view::npos ? tab : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    const std::size_t line = records[r].line;
    if (fields.size() < header.size())
      fail(f, line,
           std::to_string(fields.size()) + " fields where the header has " +
               std::to_string(header.size()));
    std::string_view id = hm != std::string_view::npos ? fields[hm] : std::string_view{};
    if (id.empty() && rs != std::string_view::npos) id = fields[rs];
    if (id.empty()) fail(f, line, "no rsID");
    list.add(id, fields[allele], line, {weight_of(f, line, fields[weight], "effect_weight")});
  }
}

}  // namespace

score_table read_score_file(const score_file& f) {
  const std::string text = detail::read_table_text(f.path);
  const std::vector<detail::text_record> records = detail::split_records(text);
  score_table t;
  std::vector<std::string_view> header;
  if (!records.empty()) detail::split_fields(records[0].text, header);
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::equal(header.begin(), header.end(), names.begin(), names.end());
  };
  // A PGS Catalog file opens with '#' metadata lines; its header is the first other line.
  std::size_t pgs_header = 0;
  while (pgs_header < records.size() && records[pgs_header].text.front() == '#') ++pgs_header;
  bool pgs = false;
  if (pgs_header > 0 && pgs_header < records.size()) {
    std::vector<std::string_view> h;
    detail::split_fields(records[pgs_header].text, h);
    pgs = find_field(h, "effect_allele") != std::string_view::npos &&
          find_field(h, "effect_weight") != std::string_view::npos;
  }
  if (is({"ID", "A1", "PIP", "BETA", "BETA_SD", "BETA_PER_UNIT", "BETA_PER_UNIT_SD"}))
    read_bayesr(f, records, header, t);
  else if (header.size() >= 9 &&
           std::equal(header.begin(), header.begin() + 9,
                      std::initializer_list<std::string_view>{"Id", "Name", "Chrom", "Position",
                                                              "A1", "A2", "A1Frq", "A1Effect", "SE"}
                          .begin()))
    read_gctb_snp_res(f, records, header, t);
  else if (is({"LAMBDA", "ID", "A1", "BETA", "BETA_PER_UNIT"}))
    read_penalized(f, records, t);
  else if (pgs)
    read_pgs_catalog(f, records, pgs_header, t);
  else
    read_positional(f, records, t);
  if (t.entries.empty())
    throw error(errc::bad_input, f.path.string() + ": no score entry (" + t.format + " format)");
  return t;
}

}  // namespace colflow
