// sbayesr and ld_store: SBayesR from summary statistics and an LD reference, and the LD store it
// reads, run as `colflow sbayesr` and `colflow ld --make-ldm` run them (colflow/_models.py and
// colflow/_products.py make the DataFrames).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/gwas_summary.hpp"
#include "colflow/analysis/ld_columns_in_memory.hpp"
#include "colflow/analysis/ld_matrix.hpp"
#include "colflow/analysis/ld_matrix_columns.hpp"
#include "colflow/analysis/sbayesr.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// The reference as the command opens its --ldm: a store of genotypes or dosages (its LD computed
// in memory in windows), or an LD matrix on disk (an LD store, GCTB's files, an .ldband).
std::unique_ptr<ld_columns> open_reference(const std::string& path, const ld_options& window,
                                           const analysis_options& analysis) {
  if (std::filesystem::is_directory(path)) {
    const store s = store::open(path);
    if (holds_variants(s.type()))
      return std::make_unique<ld_columns_in_memory>(s, selection::all(s), window,
                                                    path + " (LD in memory)", analysis);
  }
  return std::make_unique<ld_matrix_columns>(ld_matrix::open(path), path);
}

// `colflow sbayesr`: the rows of PREFIX.parRes and the columns of PREFIX.snpRes (full binary64
// numbers), the alignment's counts and the chain's figures.
nb::dict sbayesr_chain(const std::string& gwas_path, const std::string& ldm, std::size_t iterations,
                       std::size_t burnin, std::uint64_t seed, const std::vector<double>& gamma,
                       const std::vector<double>& pi, std::optional<double> hsq,
                       std::int64_t ld_window, double ld_window_kb, const std::string& checkpoint,
                       std::size_t checkpoint_every, bool resume, int threads,
                       nb::object progress) {
  sbayesr_options o;
  o.iterations = iterations;
  o.burnin = burnin;
  o.seed = seed;
  if (!gamma.empty()) o.gamma = gamma;
  if (!pi.empty()) o.pi = pi;
  if (hsq) o.h2_start = *hsq;
  o.checkpoint = checkpoint;
  o.checkpoint_every = checkpoint.empty() ? 0 : checkpoint_every;
  o.resume = resume;
  check_sbayesr_options(o);
  ld_options window;
  window.window = ld_window;
  window.window_kb = ld_window_kb;
  std::unique_ptr<ld_columns> reference;
  aligned_gwas aligned;
  sbayesr_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] {
    const gwas_summary gwas = read_gwas_summary(gwas_path);
    reference = open_reference(ldm, window, options);
    aligned = align_gwas(gwas, reference->variants(), reference->description());
    r = sbayesr(*reference, aligned, o, options);
  });
  nb::dict d;
  std::vector<std::string> names;
  std::vector<double> means, sds;
  for (const sbayesr_parameter& p : sbayesr_parameters(r)) {
    names.push_back(p.name);
    means.push_back(p.mean);
    sds.push_back(p.sd);
  }
  d["parameter"] = names;
  d["mean"] = to_numpy(std::move(means));
  d["sd"] = to_numpy(std::move(sds));
  const std::size_t m = aligned.variant.size();
  std::vector<std::string> id(m), chrom(m), a1(m), a2(m);
  std::vector<std::int64_t> position(m);
  std::vector<double> last(m);
  for (std::size_t p = 0; p < m; ++p) {
    const ld_variant& v = reference->variants()[aligned.variant[p]];
    id[p] = v.id;
    chrom[p] = v.chrom;
    position[p] = v.pos;
    a1[p] = v.a1;
    a2[p] = v.a2;
    const double h = 2.0 * aligned.freq[p] * (1.0 - aligned.freq[p]);
    last[p] = h > 0 ? r.beta[p] / std::sqrt(h) : 0.0;  // as PREFIX.snpRes's LastSampleEff
  }
  d["name"] = id;
  d["chrom"] = chrom;
  d["position"] = to_numpy(std::move(position));
  d["a1"] = a1;
  d["a2"] = a2;
  d["a1_freq"] = to_numpy(std::vector<double>(aligned.freq));
  d["a1_effect"] = to_numpy(std::move(r.a1_effect));
  d["se"] = to_numpy(std::move(r.a1_effect_sd));
  d["pip"] = to_numpy(std::move(r.pip));
  d["last_sample_effect"] = to_numpy(std::move(last));
  std::vector<double> h2;
  for (const sbayesr_sample& s : r.trace) h2.push_back(s.h2);
  d["h2_trace"] = to_numpy(std::move(h2));
  d["burnin"] = r.burnin;
  d["phenotype_variance"] = r.phenotype_variance;
  d["sample_size"] = r.sample_size;
  d["gwas_variants"] = aligned.gwas_variants;
  d["matched"] = aligned.matched;
  d["flipped"] = aligned.flipped;
  d["allele_mismatch"] = aligned.allele_mismatch;
  d["absent"] = aligned.absent;
  d["resumed_from"] = r.resumed_from;
  d["iterations_run"] = r.iterations_run;
  return d;
}

// `colflow ld STORE --make-ldm KIND --out PATH`: the LD store, and GCTB's files with `gctb`.
nb::dict ld_store(const py_store& ps, index_array rows, index_array cols, const std::string& out,
                  const std::string& kind, std::int64_t window, double window_kb, double window_cm,
                  double chisq, std::optional<double> min_r2, const std::string& codec, int level,
                  bool shuffle, unsigned value_bits, bool gctb, bool overwrite, int threads,
                  nb::object progress) {
  ldm_options o;
  if (kind == "full")
    o.kind = ldm_kind::full;
  else if (kind == "band")
    o.kind = ldm_kind::band;
  else if (kind == "sparse")
    o.kind = ldm_kind::sparse;
  else
    throw nb::value_error(("kind must be 'full', 'band' or 'sparse', not '" + kind + "'").c_str());
  o.window = window;
  o.window_kb = window_kb;
  o.window_cm = window_cm;
  o.chisq = chisq;
  o.min_r2 = min_r2;
  const auto id = codec_from_name(codec);
  if (!id) throw nb::value_error(("codec '" + codec + "' not known").c_str());
  o.encoding.codec = *id;
  o.encoding.level = level != 0 ? level : traits_of(*id).default_level;
  o.encoding.shuffle = shuffle;
  o.value_bits = value_bits;
  o.gctb = gctb;
  o.overwrite = overwrite;
  check_ldm_options(o);
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  ldm_summary summary;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { summary = make_ld_matrix(*s, sel, o, out, options); });
  nb::dict d;
  d["variants"] = summary.variants;
  d["samples"] = summary.samples;
  d["values"] = summary.values;
  d["store_bytes"] = summary.store_bytes;
  std::vector<std::string> files;
  for (const auto& f : summary.gctb_files) files.push_back(f.string());
  d["gctb_files"] = files;
  return d;
}

}  // namespace

void bind_sbayesr(nb::module_& m) {
  m.def("sbayesr", &sbayesr_chain, "gwas"_a, "ldm"_a, "iterations"_a, "burnin"_a, "seed"_a,
        "gamma"_a, "pi"_a, "hsq"_a.none(), "ld_window"_a, "ld_window_kb"_a, "checkpoint"_a,
        "checkpoint_every"_a, "resume"_a, "threads"_a, "progress"_a.none());
  m.def("ld_store", &ld_store, "store"_a, "rows"_a, "cols"_a, "out"_a, "kind"_a, "window"_a,
        "window_kb"_a, "window_cm"_a, "chisq"_a, "min_r2"_a.none(), "codec"_a, "level"_a,
        "shuffle"_a, "value_bits"_a, "gctb"_a, "overwrite"_a, "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
