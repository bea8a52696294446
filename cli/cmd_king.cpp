// colflow king: KING-robust kinship of every pair of samples, as plink2 --make-king-table and
// --king-cutoff.
#include <cmath>
#include <optional>
#include <sstream>

#include "analysis_setup.hpp"
#include "colflow/analysis/king.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "memory_usage.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

// A finite number for which `ok` holds, else "must be <rule>, got VALUE".
CLI::Validator number_where(bool (*ok)(double), const std::string& rule) {
  return CLI::Validator(
      [ok, rule](std::string& text) -> std::string {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || used == 0 || !std::isfinite(v) || !ok(v))
          return "must be " + rule + ", got " + text;
        return {};
      },
      rule);
}

void set_column(king_table_columns& c, const std::string& name, bool on) {
  if (name == "maybefid" || name == "fid")
    c.fid = on;
  else if (name == "id")
    c.id = on;
  else if (name == "maybesid")
    ;  // a store's samples have no SID
  else if (name == "nsnp")
    c.nsnp = on;
  else if (name == "hethet")
    c.hethet = on;
  else if (name == "ibs0")
    c.ibs0 = on;
  else if (name == "ibs1")
    c.ibs1 = on;
  else if (name == "kinship")
    c.kinship = on;
  else if (name == "sid")
    throw error(errc::invalid_argument,
                "--make-king-table: cols=sid: a store's samples have no SID column");
  else
    throw error(errc::invalid_argument, "--make-king-table: unknown column set '" + name +
                                            "' in cols= (maybefid, fid, id, maybesid, nsnp, "
                                            "hethet, ibs0, ibs1, kinship)");
}

// plink2's column-set descriptor: a list replacing the default, or +NAME and -NAME changes to
// it (not both kinds at once).
king_table_columns parse_columns(const std::string& spec) {
  king_table_columns c;
  std::vector<std::string> names;
  std::stringstream in(spec);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  if (names.empty())
    throw error(errc::invalid_argument, "--make-king-table: cols= names no column set");
  const bool changes = names.front().starts_with('+') || names.front().starts_with('-');
  if (!changes) c = {false, false, false, false, false, false, false, false};
  for (const std::string& name : names) {
    const bool change = name.starts_with('+') || name.starts_with('-');
    if (change != changes)
      throw error(errc::invalid_argument,
                  "--make-king-table: cols= mixes +/- changes with a plain list: " + spec);
    set_column(c, changes ? name.substr(1) : name, !changes || name[0] == '+');
  }
  if (c.fid && !c.id)
    throw error(errc::invalid_argument, "--make-king-table: cols= fid requires id");
  // A table of empty lines would say nothing (plink2 refuses it too).
  if (!c.id && !c.nsnp && !c.hethet && !c.ibs0 && !c.ibs1 && !c.kinship)
    throw error(errc::invalid_argument, "--make-king-table: cols= leaves no column: " + spec);
  return c;
}

// The modifiers of --make-king-table: counts, cols=SPEC.
king_table_columns table_columns(const std::vector<std::string>& modifiers) {
  king_table_columns c;
  bool counts = false;
  for (const std::string& m : modifiers) {
    if (m.empty())  // the flag alone
      continue;
    if (m == "counts")
      counts = true;
    else if (m.starts_with("cols="))
      c = parse_columns(m.substr(5));
    else
      throw error(errc::invalid_argument,
                  "--make-king-table: unknown modifier '" + m + "' (counts, cols=...)");
  }
  c.counts = counts;
  return c;
}

}  // namespace

command add_king(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::vector<std::string> table;
    CLI::Option* table_option = nullptr;
    std::optional<double> filter, cutoff;
    std::string out;
    std::uint64_t memory_mib = 0;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  o->table_option =
      app.add_option("--make-king-table", o->table,
                     "Write PREFIX.kin0, plink2's table: a line per pair of samples;\n"
                     "modifiers counts (HETHET, IBS0, IBS1 as counts, not shares)\n"
                     "and cols=SET (plink2's: maybefid,fid,id,maybesid,nsnp,hethet,\n"
                     "ibs0,ibs1,kinship; +NAME/-NAME change the default)")
          ->expected(0, 2);
  app.add_option("--king-table-filter", o->filter,
                 "Leave out of PREFIX.kin0 the pairs whose kinship is below this (at most 0.5)")
      ->check(number_where([](double v) { return v <= 0.5; }, "a number of at most 0.5"));
  app.add_option("--king-cutoff", o->cutoff,
                 "Remove one sample of each pair with kinship above this, greedily as plink2:\n"
                 "PREFIX.king.cutoff.in.id (kept), PREFIX.king.cutoff.out.id (removed)")
      ->check(
          number_where([](double v) { return v >= 0 && v < 0.5; }, "a number from 0 to below 0.5"));
  app.add_option("--out", o->out, "Output prefix")->check(output_path())->required();
  app.add_option("--memory", o->memory_mib,
                 "MiB the pair counts may use (default: half the available memory); more pairs\n"
                 "than that are counted in bands of samples, one pass each")
      ->check(integer_range(1, std::uint64_t{1} << 40));
  app.footer(
      "KING-robust kinship (Manichaikul et al. 2010) of every pair of selected samples over the\n"
      "autosomal variants both have called (X, Y and MT are left out), as plink2 computes it:\n"
      "1/2 - (4 IBS0 + HET1_HOM2 + HET2_HOM1) / (4 (HETHET + min(HET1_HOM2, HET2_HOM1))).\n"
      "Duplicates are near 0.5, first-degree relatives near 0.25, second-degree near 0.125.\n"
      "Give --make-king-table, --king-cutoff or both. Genotype stores only. Put STORE before\n"
      "the options.");
  return [o] {
    king_outputs outputs;
    outputs.table = o->table_option->count() > 0;
    if (outputs.table) outputs.columns = table_columns(o->table);
    outputs.table_filter = o->filter;
    outputs.cutoff = o->cutoff;
    if (o->filter && !outputs.table)
      throw error(errc::invalid_argument, "--king-table-filter needs --make-king-table");
    if (o->filter && !outputs.columns.id)
      throw error(errc::invalid_argument,
                  "--king-table-filter needs the id columns in --make-king-table cols= (as "
                  "plink2)");
    if (!outputs.table && !outputs.cutoff)
      throw error(errc::invalid_argument, "give --make-king-table, --king-cutoff or both");
    king_options k;
    k.memory_limit = o->memory_mib != 0 ? o->memory_mib << 20 : available_memory() / 2;

    analysis_run run("king", o->common);
    const store& s = run.source();
    const king_plan plan = plan_king(s, run.selected(), k, run.options());
    run.log(std::to_string(plan.samples) + " samples, " +
            std::to_string(plan.samples * (plan.samples - 1) / 2) + " pairs, over " +
            std::to_string(plan.variants) + " variants" +
            (plan.non_autosomal != 0
                 ? " (" + std::to_string(plan.non_autosomal) + " on X, Y, MT left out)"
                 : std::string()) +
            "; memory " + human_bytes(static_cast<double>(plan.total_bytes)) + " (" +
            std::to_string(plan.bands) + (plan.bands == 1 ? " band" : " bands") + " of " +
            std::to_string(plan.band_rows) + " samples)");
    std::optional<king_writer> writer;
    if (is_writer()) writer.emplace(s, run.selected(), o->out, outputs, o->common.digits);
    colflow::king(s, run.selected(), k, run.options(), [&](const king_band& band) {
      if (writer) writer->write(band);
    });
    if (!writer) return 0;
    const king_writer::summary done = writer->commit();
    if (outputs.table)
      run.log(std::to_string(done.pairs_written) + " pairs in the table" +
              (outputs.table_filter
                   ? " (" + std::to_string(done.pairs_filtered) + " below the filter left out)"
                   : std::string()));
    if (outputs.cutoff)
      run.log("--king-cutoff: " + std::to_string(done.removed) + " samples removed, " +
              std::to_string(plan.samples - done.removed) + " kept");
    std::string line = "wrote";
    for (std::size_t i = 0; i < done.files.size(); ++i)
      line += (i == 0 ? " " : ", ") + done.files[i].string();
    run.log(line);
    return 0;
  };
}

}  // namespace colflow::cli
