// The quality-control filter flags of the analysis commands.
#include "qc_flags.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "colflow/error.hpp"

namespace colflow::cli {
namespace {

double number_of(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    throw error(errc::invalid_argument, option + ": '" + text + "' is not a number");
  return v;
}

// The value of a flag given with at most one value: `fallback` (plink2's default) when it
// came alone, nothing when it was not given.
std::optional<double> value_of(const CLI::Option* o, const std::vector<std::string>& values,
                               std::optional<double> fallback = std::nullopt) {
  if (o->count() == 0) return std::nullopt;
  if (values.empty() || values.front().empty()) {  // CLI11 gives "" for a flag without value
    if (!fallback) throw error(errc::invalid_argument, o->get_name() + " needs a value");
    return fallback;
  }
  return number_of(o->get_name(), values.front());
}

hwe_filter hwe_of(const std::vector<std::string>& words) {
  if (words.empty() || words.front().empty())
    throw error(errc::invalid_argument, "--hwe needs a value: P [midp] [keep-fewhet]");
  hwe_filter h;
  h.threshold = number_of("--hwe", words.front());
  for (std::size_t k = 1; k < words.size(); ++k) {
    if (words[k] == "midp")
      h.midp = true;
    else if (words[k] == "keep-fewhet")
      h.keep_fewhet = true;
    else
      throw error(errc::invalid_argument,
                  "--hwe: unknown modifier '" + words[k] + "' (midp or keep-fewhet)");
  }
  return h;
}

}  // namespace

void add_qc_flags(CLI::App& app, qc_flags& f) {
  const std::string group = "Quality-control filters (plink2's, applied in its order)";
  // [F]: the value may be left out for the default the help gives; F: it may not (the option
  // still takes 0 values to CLI11, so that the next option is never taken for its value).
  const auto optional_value = [&](const std::string& name, std::vector<std::string>& to,
                                  const std::string& help, const char* type = "[F]") {
    CLI::Option* o = app.add_option(name, to, help)->expected(0, 1)->type_name(type)->group(group);
    f.given.emplace_back(o, &to);
  };
  optional_value("--mind", f.mind,
                 "Remove samples with a larger missing-call fraction (default 0.1); first");
  optional_value("--geno", f.geno,
                 "Remove variants with a larger missing-call fraction (default 0.1)");
  CLI::Option* hwe = app.add_option("--hwe", f.hwe,
                                    "P [midp] [keep-fewhet]: remove variants whose Hardy-Weinberg\n"
                                    "exact test P (founders) is below P; X tested as plink2 does")
                         // 0 allowed, so that the next option is never taken for P; a
                         // missing P is refused by hwe_of.
                         ->expected(0, 3)
                         ->type_name("P [midp] [keep-fewhet]")
                         ->group(group);
  f.given.emplace_back(hwe, &f.hwe);
  optional_value("--maf", f.maf,
                 "Remove variants with a smaller minor allele frequency (default 0.01; founders)");
  optional_value("--max-maf", f.max_maf, "Remove variants with a larger minor allele frequency",
                 "F");
  optional_value("--mac", f.mac, "Remove variants with a smaller minor allele count (founders)",
                 "N");
  optional_value("--max-mac", f.max_mac, "Remove variants with a larger minor allele count", "N");
  app.add_flag("--nonfounders", f.nonfounders,
               "Count every sample for --hwe, --maf and --mac, not founders only")
      ->group(group);
}

qc_filter_options qc_filter_options_of(const qc_flags& f) {
  const auto option = [&](const std::vector<std::string>& values) {
    for (const auto& [o, v] : f.given)
      if (v == &values) return o;
    throw error(errc::invalid_argument, "qc flags: an option was not registered");
  };
  qc_filter_options o;
  o.mind = value_of(option(f.mind), f.mind, 0.1);
  o.geno = value_of(option(f.geno), f.geno, 0.1);
  if (option(f.hwe)->count()) o.hwe = hwe_of(f.hwe);
  o.min_maf = value_of(option(f.maf), f.maf, 0.01);
  o.max_maf = value_of(option(f.max_maf), f.max_maf);
  o.min_mac = value_of(option(f.mac), f.mac);
  o.max_mac = value_of(option(f.max_mac), f.max_mac);
  o.nonfounders = f.nonfounders;
  o.hard_call_threshold = f.hard_call_threshold;
  check_qc_filter_options(o);
  return o;
}

}  // namespace colflow::cli
