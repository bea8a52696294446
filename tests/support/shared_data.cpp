// The shared datasets and plink2 for the tests: paths, PLINK inputs, plink2 runs, tables.
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "colflow/codec/genotype_codec.hpp"
#include "test_support.hpp"

namespace colflow::test {

namespace {
const std::filesystem::path data_dir = COLFLOW_SHARED_DATA_DIR;
}

bool shared_data_present() { return std::filesystem::exists(data_dir / "bed-reader"); }

std::string dataset(const std::string& name) { return (data_dir / name).string(); }

std::filesystem::path uk10k_store(const std::filesystem::path& dir) {
  const std::filesystem::path store = dir / "u.cf";
  std::string out;
  EXPECT_EQ(run_cli("preprocess --quiet --bed " + dataset("uk10k/uk10k_chr1_1mb") + " --out " +
                        store.string(),
                    out),
            0)
      << out;
  return store;
}

std::vector<std::string> all_datasets() {
  return {dataset("bed-reader/small"),
          dataset("bed-reader/some_missing"),
          dataset("bed-reader/plink_sim_10s_100v_10pmiss"),
          dataset("bed-reader/toydata.5chrom"),
          dataset("bed-reader/sparse"),
          dataset("hapmap-yri/plinkhapmap"),
          dataset("hapmap3/HapMap3"),
          dataset("switchgrass/example"),
          dataset("uk10k/uk10k_chr1_1mb")};
}

bool is_sex_or_mt_chromosome(const std::string& c) {
  return c == "X" || c == "Y" || c == "XY" || c == "MT" || c == "23" || c == "24" || c == "25" ||
         c == "26";
}

bool same_as_printed(double ours, const std::string& printed) {
  if (printed == "NA" || printed == "nan") return std::isnan(ours);
  const double ref = std::stod(printed);
  if (ref == 0) return ours == 0;
  return std::fabs(ours - ref) <=
         1.0001 * std::pow(10.0, std::floor(std::log10(std::fabs(ref))) - 5);
}

std::string plink2_input(const std::string& bfile, const std::filesystem::path& dir,
                         bool keep_sex) {
  const std::string copy = (dir / "plink2_in").string();
  std::filesystem::copy_file(bfile + ".bim", copy + ".bim",
                             std::filesystem::copy_options::overwrite_existing);
  std::size_t n = 0;
  {
    std::ifstream in(bfile + ".fam");
    std::ofstream fam(copy + ".fam");
    for (std::string line; std::getline(in, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) {
        std::istringstream fields(line);
        std::string sex;
        for (int k = 0; k < 5; ++k) fields >> sex;  // the fifth field
        fam << "f" << n << " s" << n << " 0 0 " << (keep_sex ? sex : "0") << " -9\n";
        ++n;
      }
  }
  auto bed = read_file(bfile + ".bed");
  const std::size_t bytes = genotype_column_bytes(n);
  if (n % 4 != 0 && bed.size() > 2 && bed[2] == 1)
    for (std::size_t end = 3 + bytes; end <= bed.size(); end += bytes)
      bed[end - 1] = static_cast<char>(bed[end - 1] & ((1 << (2 * (n % 4))) - 1));
  write_file(copy + ".bed", bed);
  return copy;
}

void run_plink2(const std::string& args) {
  std::string out;
  EXPECT_EQ(run_command("plink2 " + args, out), 0)
      << "plink2 " << args << "\n(plink2 must be installed: scripts/install-deps.sh)\n"
      << out;
}

std::size_t text_table::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return std::string::npos;
}

text_table read_table(const std::filesystem::path& file) {
  text_table t;
  std::ifstream in(file);
  EXPECT_TRUE(in) << "cannot read " << file;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::vector<std::string> fields;
    for (std::string f; s >> f;) fields.push_back(f);
    if (fields.empty()) continue;
    if (first) {
      if (fields[0].front() == '#') fields[0].erase(0, 1);
      t.header = std::move(fields);
      first = false;
    } else {
      t.rows.push_back(std::move(fields));
    }
  }
  return t;
}

}  // namespace colflow::test
