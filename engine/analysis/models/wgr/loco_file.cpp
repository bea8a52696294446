// regenie's LOCO prediction files: PREFIX_<i>.loco and PREFIX_pred.list written from step 1,
// read back for step 2 (whichever tool wrote them).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/wgr.hpp"
#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

constexpr Eigen::Index loco_chromosomes = 23;

std::string fid_iid(const sample_info& s) { return s.fid + "_" + s.iid; }

// regenie's .loco layout: a header FID_IID and the samples' FID_IID, then per chromosome its
// number and the predictions, space-separated.
void write_loco_file(tsv_writer& out, const store& s, const wgr_result& result,
                     const wgr_trait& t) {
  out.text("FID_IID");
  for (const std::size_t r : result.rows) out.text(fid_iid(s.samples()[r]));
  out.end_line();
  for (Eigen::Index c = 0; c < loco_chromosomes; ++c) {
    out.integer(static_cast<std::uint64_t>(c + 1));
    for (Eigen::Index i = 0; i < t.loco.cols(); ++i) out.number(t.loco(c, i));
    out.end_line();
  }
  out.finish();
}

void write_summary(tsv_writer& out, const wgr_result& result) {
  for (const char* name :
       {"TRAIT", "MODEL", "N", "VALUES", "LEVEL1_H2_INDEX", "TAU", "CV_LOSS", "CHOSEN"})
    out.text(name);
  out.end_line();
  for (const wgr_trait& t : result.traits)
    for (std::size_t j = 0; j < t.level1_tau.size(); ++j) {
      out.text(t.name).text(t.case_control ? "binary" : "quantitative");
      out.integer(result.rows.size()).integer(t.values).integer(j + 1);
      out.number(t.level1_tau[j]).number(t.level1_loss[j]).integer(j == t.chosen ? 1 : 0);
      out.end_line();
    }
  out.finish();
}

std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(std::move(f));
  return fields;
}

// Store rows by FID_IID; `ambiguous` for a key two samples share.
constexpr std::size_t ambiguous = std::numeric_limits<std::size_t>::max();
std::unordered_map<std::string, std::size_t> rows_by_key(const std::vector<sample_info>& samples) {
  std::unordered_map<std::string, std::size_t> rows;
  for (std::size_t r = 0; r < samples.size(); ++r) {
    const auto [it, inserted] = rows.emplace(fid_iid(samples[r]), r);
    if (!inserted) it->second = ambiguous;
  }
  return rows;
}

// The predictions of one .loco file by store row; `listed` the samples its header names.
Eigen::MatrixXd read_loco_file(const std::filesystem::path& file,
                               const std::vector<sample_info>& samples, std::size_t& listed) {
  std::ifstream in(file);
  if (!in) throw error(errc::not_found, file.string() + ": cannot open the LOCO file");
  std::string line;
  if (!std::getline(in, line))
    detail::bad_input_at(file, 1, "empty, expected a header FID_IID ...");
  const std::vector<std::string> header = fields_of(line);
  if (header.empty() || header[0] != "FID_IID")
    detail::bad_input_at(file, 1, "the header must start with FID_IID");
  listed = header.size() - 1;
  const auto keys = rows_by_key(samples);
  std::vector<std::size_t> row_of(header.size(), ambiguous);  // ambiguous: not in the store
  std::vector<std::uint8_t> seen(samples.size(), 0);
  for (std::size_t k = 1; k < header.size(); ++k) {
    const auto it = keys.find(header[k]);
    if (it == keys.end()) continue;
    if (it->second == ambiguous)
      detail::bad_input_at(file, 1, header[k] + " names several samples of the store");
    if (seen[it->second]++) detail::bad_input_at(file, 1, header[k] + " is listed twice");
    row_of[k] = it->second;
  }
  if (std::all_of(seen.begin(), seen.end(), [](std::uint8_t x) { return x == 0; }))
    detail::bad_input_at(file, 1,
                         "no sample of the store is in the header (IDs FID_IID, e.g. " +
                             (samples.empty() ? std::string("none") : fid_iid(samples[0])) + ")");
  Eigen::MatrixXd values =
      Eigen::MatrixXd::Constant(loco_chromosomes, static_cast<Eigen::Index>(samples.size()),
                                std::numeric_limits<double>::quiet_NaN());
  for (Eigen::Index c = 0; c < loco_chromosomes; ++c) {
    const std::size_t number = static_cast<std::size_t>(c) + 2;
    if (!std::getline(in, line))
      detail::bad_input_at(file, number, "missing: a line per chromosome 1-23 is expected");
    const std::vector<std::string> fields = fields_of(line);
    if (fields.empty() || fields[0] != std::to_string(c + 1))
      detail::bad_input_at(file, number,
                           "expected the line of chromosome " + std::to_string(c + 1));
    if (fields.size() != header.size())
      detail::bad_input_at(file, number,
                           std::to_string(fields.size() - 1) + " values for " +
                               std::to_string(header.size() - 1) + " samples");
    for (std::size_t k = 1; k < fields.size(); ++k) {
      if (row_of[k] == ambiguous || fields[k] == "NA") continue;
      double v = 0;
      const char* end = fields[k].data() + fields[k].size();
      const auto r = std::from_chars(fields[k].data(), end, v);
      if (r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
        detail::bad_input_at(file, number, "'" + fields[k] + "' is not a number");
      values(c, static_cast<Eigen::Index>(row_of[k])) = v;
    }
  }
  return values;
}

// The model of each trait in `traits` from the summary colflow wgr wrote beside a
// PREFIX_pred.list (PREFIX.wgr.tsv, its MODEL column): "" for a trait it does not name or
// names with another sample count N than the trait's .loco file lists (`listed`: a summary
// left from another run), and for every trait without such a summary (regenie's files).
std::vector<std::string> models_beside(const std::filesystem::path& pred_list,
                                       const std::vector<std::string>& traits,
                                       const std::vector<std::size_t>& listed) {
  std::vector<std::string> models(traits.size());
  const std::string name = pred_list.filename().string(), suffix = "_pred.list";
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) return models;
  const std::filesystem::path summary =
      pred_list.parent_path() / (name.substr(0, name.size() - suffix.size()) + ".wgr.tsv");
  std::ifstream in(summary);
  std::string line;
  if (!in || !std::getline(in, line)) return models;
  const std::vector<std::string> header = fields_of(line);
  const auto column = [&](const char* title) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), title) -
                                    header.begin());
  };
  const std::size_t t = column("TRAIT"), m = column("MODEL"), n = column("N");
  if (std::max({t, m, n}) >= header.size()) return models;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = fields_of(line);
    if (fields.size() != header.size()) continue;
    const auto it = std::find(traits.begin(), traits.end(), fields[t]);
    if (it == traits.end()) continue;
    const auto q = static_cast<std::size_t>(it - traits.begin());
    if (fields[n] == std::to_string(listed[q])) models[q] = fields[m];
  }
  return models;
}

}  // namespace

wgr_files write_wgr(const store& s, const wgr_result& result, const std::filesystem::path& prefix,
                    int digits) {
  detail::check_digits(digits);
  wgr_files files;
  std::vector<std::unique_ptr<tsv_writer>> outputs;
  files.pred_list = detail::prefixed(prefix, "_pred.list");
  tsv_writer list(files.pred_list, digits, ' ');
  for (std::size_t p = 0; p < result.traits.size(); ++p) {
    files.loco.push_back(
        detail::prefixed(prefix, std::string("_").append(std::to_string(p + 1)).append(".loco")));
    outputs.push_back(std::make_unique<tsv_writer>(files.loco.back(), digits, ' '));
    write_loco_file(*outputs.back(), s, result, result.traits[p]);
    list.text(result.traits[p].name).text(std::filesystem::absolute(files.loco.back()).string());
    list.end_line();
  }
  files.summary = detail::prefixed(prefix, ".wgr.tsv");
  outputs.push_back(std::make_unique<tsv_writer>(files.summary, digits));
  write_summary(*outputs.back(), result);
  list.finish();
  for (auto& out : outputs) out->commit();
  list.commit();
  return files;
}

loco_predictions read_loco(const std::filesystem::path& pred_list,
                           const std::vector<sample_info>& samples) {
  std::ifstream in(pred_list);
  if (!in) throw error(errc::not_found, pred_list.string() + ": cannot open the prediction list");
  loco_predictions out;
  std::vector<std::size_t> listed;  // per trait: the samples its .loco file names
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::vector<std::string> fields = fields_of(line);
    if (fields.empty()) continue;
    if (fields.size() != 2)
      detail::bad_input_at(pred_list, number, "expected two fields: the trait and its .loco file");
    for (const std::string& t : out.traits)
      if (t == fields[0]) detail::bad_input_at(pred_list, number, fields[0] + " is listed twice");
    std::filesystem::path file = fields[1];
    if (file.is_relative()) file = pred_list.parent_path() / file;
    out.traits.push_back(fields[0]);
    out.values.push_back(read_loco_file(file, samples, listed.emplace_back()));
  }
  if (out.traits.empty()) throw error(errc::bad_input, pred_list.string() + ": no trait listed");
  out.models = models_beside(pred_list, out.traits, listed);
  return out;
}

}  // namespace colflow
