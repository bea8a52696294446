// The table of the colflow program's commands (command_table.hpp). Adding a command is its
// cmd_NAME.cpp (listed in CMakeLists.txt), the declaration of its add function and its row here.
#include "command_table.hpp"

#include <array>

namespace colflow::cli {

// What the rows name, each defined in its cmd_NAME.cpp.
command add_info(CLI::App& app);
command add_verify(CLI::App& app);
command add_preprocess(CLI::App& app);
command add_simulate(CLI::App& app);
command add_export(CLI::App& app);
command add_bench(CLI::App& app);
command add_stats(CLI::App& app);
command add_hardy(CLI::App& app);
command add_qc(CLI::App& app);
command add_ld(CLI::App& app);
command add_clump(CLI::App& app);
command add_assoc(CLI::App& app);
command add_pca(CLI::App& app);
command add_grm(CLI::App& app);
command add_king(CLI::App& app);
command add_penalized(CLI::App& app, penalty kind);
command add_bayesr(CLI::App& app);
command add_sbayesr(CLI::App& app);
command add_score(CLI::App& app);
command add_wgr(CLI::App& app);
command add_plot(CLI::App& app);

namespace {

constexpr std::array commands = {
    command_entry{"info", "Describe a store: shape, codecs, sizes, ratio", add_info, "Store.info"},
    command_entry{"verify", "Check every checksum and decode every column of a store", add_verify,
                  ""},
    command_entry{"preprocess",
                  "Convert PLINK .bed/.bim/.fam, BGEN, VCF/BCF or a dense matrix into a store",
                  add_preprocess, "preprocess"},
    command_entry{"simulate", "Write simulated PLINK genotypes, a phenotype and the true effects",
                  add_simulate, ""},
    command_entry{"export", "Write a store back as PLINK files or .npy", add_export, ""},
    command_entry{"bench", "Measure how fast a store streams: pipelined, sequential, in RAM",
                  add_bench, ""},
    command_entry{"stats", "Per-column statistics: calls, missing rate, A1 frequency, mean, SD",
                  add_stats, "stats"},
    command_entry{"hardy", "Hardy-Weinberg exact test per variant, X included, as plink2 --hardy",
                  add_hardy, "hardy"},
    command_entry{"qc",
                  "Quality-control filters --mind/--geno/--hwe/--maf/--mac as plink2; writes "
                  ".snplist/.id",
                  add_qc, "qc"},
    command_entry{"ld", "LD between variants: r or r2 as plink --r/--r2", add_ld, "ld"},
    command_entry{"clump", "Clump association results into loci by LD, as plink --clump", add_clump,
                  "clump"},
    command_entry{
        "assoc",
        "Association scan: linear or logistic (Firth) regression on each column, as plink2 --glm",
        add_assoc, "assoc"},
    command_entry{"pca", "Principal components by randomised SVD over streaming passes", add_pca,
                  "pca"},
    command_entry{"grm",
                  "Genomic relationship matrix (PLINK 2 --make-rel, PLINK 1.9 --make-grm-bin)",
                  add_grm, "grm"},
    command_entry{"king",
                  "KING-robust kinship of sample pairs (plink2 --make-king-table, --king-cutoff)",
                  add_king, "king"},
    command_entry{"ridge", "Ridge regression path by coordinate descent",
                  [](CLI::App& app) { return add_penalized(app, penalty::ridge); }, "ridge"},
    command_entry{"lasso", "Lasso path by coordinate descent, with screening",
                  [](CLI::App& app) { return add_penalized(app, penalty::lasso); }, "lasso"},
    command_entry{"enet", "Elastic-net path by coordinate descent (--alpha)",
                  [](CLI::App& app) { return add_penalized(app, penalty::elastic_net); }, "enet"},
    command_entry{"bayesr",
                  "BayesR Gibbs sampler: mixture-of-normals effects, h2, inclusion probabilities",
                  add_bayesr, "bayesr"},
    command_entry{"sbayesr",
                  "SBayesR from GWAS summary statistics and an LD reference (GCTB's --sbayes R)",
                  add_sbayesr, "sbayesr"},
    command_entry{"score", "Polygenic scores: weighted allele counts per sample, as plink2 --score",
                  add_score, "score"},
    command_entry{"wgr",
                  "Whole-genome regression, regenie's step 1: LOCO predictions for assoc --loco",
                  add_wgr, "wgr"},
    command_entry{"plot",
                  "Draw results as PNG/SVG/PDF pictures: runs the Python package's colflow-plot",
                  add_plot, ""},
};

// Two rows of one name would register one subcommand twice.
constexpr bool names_are_unique() {
  for (std::size_t i = 0; i < commands.size(); ++i)
    for (std::size_t j = i + 1; j < commands.size(); ++j)
      if (commands[i].name == commands[j].name) return false;
  return true;
}
static_assert(names_are_unique(), "two commands of the table have the same name");

}  // namespace

std::span<const command_entry> command_table() { return commands; }

void list_commands(std::ostream& out) {
  for (const command_entry& c : commands)
    out << c.name << '\t'
        << (c.python_counterpart.empty() ? std::string_view("-") : c.python_counterpart) << '\n';
}

}  // namespace colflow::cli
