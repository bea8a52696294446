// Uses an installed colflow through its public headers only: writes a small genotype store and
// a small float store into a temporary directory, opens them, checks every decoded value
// against values computed here from docs/DESIGN.md §2, and streams the genotype store through the
// flow graph (so oneTBB and Eigen must come along with the package). Then the importer and
// simulator libraries (colflow::preprocess, colflow::simulate): simulated PLINK files are
// converted into a store and exported back byte for byte, a CSV matrix round-trips through a
// store and a .npy export. Exits non-zero on any mismatch or error.
#include <stdlib.h>  // mkdtemp

#include <cmath>
#include <colflow/colflow.hpp>
#include <colflow/preprocess/bed_source.hpp>
#include <colflow/preprocess/converter.hpp>
#include <colflow/preprocess/csv_source.hpp>
#include <colflow/preprocess/exporter.hpp>
#include <colflow/preprocess/npy_source.hpp>
#include <colflow/preprocess/simulate.hpp>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr int missing = -1;

// A temporary directory removed on every way out of main.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "colflow-consumer-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// PLINK 2-bit codes of A1 counts: 2 -> 0b00, missing -> 0b01, 1 -> 0b10, 0 -> 0b11;
// sample i in bits 2(i mod 4) of byte i/4.
std::vector<std::uint8_t> pack_genotypes(const std::vector<int>& dosages) {
  std::vector<std::uint8_t> codes(colflow::genotype_column_bytes(dosages.size()), 0);
  for (std::size_t i = 0; i < dosages.size(); ++i) {
    unsigned code = 0;
    switch (dosages[i]) {
      case 2:
        code = 0b00;
        break;
      case 1:
        code = 0b10;
        break;
      case 0:
        code = 0b11;
        break;
      default:
        code = 0b01;
        break;
    }
    codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (code << (2 * (i % 4))));
  }
  return codes;
}

// docs/DESIGN.md §2: impute missing values with the mean of the observed ones, centre, and scale so
// that z'z = N - 1; a column with SD 0 becomes all zeros.
std::vector<double> standardize(const std::vector<double>& x) {
  double sum = 0;
  std::size_t observed = 0;
  for (double v : x) {
    if (!std::isnan(v)) {
      sum += v;
      ++observed;
    }
  }
  const double mean = sum / static_cast<double>(observed);
  double ss = 0;
  for (double v : x) {
    if (!std::isnan(v)) ss += (v - mean) * (v - mean);
  }
  const double sd = std::sqrt(ss / static_cast<double>(x.size() - 1));
  std::vector<double> z(x.size(), 0.0);
  if (sd > 0) {
    for (std::size_t i = 0; i < x.size(); ++i) z[i] = std::isnan(x[i]) ? 0.0 : (x[i] - mean) / sd;
  }
  return z;
}

int failures = 0;

void expect_near(const std::string& what, double got, double want, double tolerance) {
  const bool same = (std::isnan(want) && std::isnan(got)) || std::fabs(got - want) <= tolerance;
  if (!same) {
    std::cerr << "MISMATCH " << what << ": got " << got << ", expected " << want << '\n';
    ++failures;
  }
}

void expect_true(const std::string& what, bool condition) {
  if (!condition) {
    std::cerr << "FAILED " << what << '\n';
    ++failures;
  }
}

std::vector<colflow::sample_info> make_samples(std::size_t n) {
  std::vector<colflow::sample_info> samples;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string id = "s" + std::to_string(i + 1);
    samples.push_back({"fam", id, "0", "0", "0", "-9"});
  }
  return samples;
}

void check_genotype_store(const fs::path& dir) {
  // 7 samples: not a multiple of 4, so the last byte carries padding.
  const std::vector<std::vector<int>> columns = {
      {2, 1, 0, missing, 1, 2, 0},  // with a missing call
      {0, 0, 1, 2, 1, 0, 1},        // fully observed
      {0, 0, 0, 0, missing, 0, 0},  // monomorphic: standardises to zeros
  };
  const std::size_t n = 7;
  const colflow::codec_id codecs[] = {colflow::codec_id::zstd, colflow::codec_id::none,
                                      colflow::codec_id::zstd};
  const fs::path path = dir / "geno.cf";

  colflow::writer_options options;
  options.type = colflow::value_type::genotype;
  options.rows = n;
  options.source = "package consumer test";
  colflow::store_writer writer(path, options, make_samples(n));
  for (std::size_t j = 0; j < columns.size(); ++j) {
    colflow::column_encoding encoding;
    encoding.codec = codecs[j];
    encoding.level = colflow::traits_of(codecs[j]).default_level;
    const auto codes = pack_genotypes(columns[j]);
    const std::string id = "rs" + std::to_string(j + 1);
    writer.append(colflow::encode_genotype_column(codes, n, encoding),
                  {"1", id, "0", std::to_string(1000 * (j + 1)), "A", "G"});
  }
  writer.finish();

  const colflow::store store = colflow::store::open(path);
  expect_true("genotype store rows", store.num_rows() == n);
  expect_true("genotype store columns", store.num_columns() == columns.size());
  expect_true("genotype store type", store.type() == colflow::value_type::genotype);
  expect_true("genotype store samples",
              store.samples().size() == n && store.samples().back().iid == "s7");
  expect_true("genotype store column ids",
              store.columns().size() == columns.size() && store.columns()[1].id == "rs2");

  std::vector<double> got(n);
  std::vector<float> got_f32(n);
  for (std::size_t j = 0; j < columns.size(); ++j) {
    std::vector<double> dosage(n);
    for (std::size_t i = 0; i < n; ++i) {
      dosage[i] = columns[j][i] == missing ? std::numeric_limits<double>::quiet_NaN()
                                           : static_cast<double>(columns[j][i]);
    }
    const std::vector<double> z = standardize(dosage);
    const std::string col = "genotype column " + std::to_string(j);

    store.read_column(j, got);
    for (std::size_t i = 0; i < n; ++i) {
      expect_near(col + " standardized row " + std::to_string(i), got[i], z[i], 1e-12);
    }
    store.read_column(j, got_f32);
    for (std::size_t i = 0; i < n; ++i) {
      expect_near(col + " float standardized row " + std::to_string(i), got_f32[i], z[i], 1e-6);
    }
    store.read_column(j, got, colflow::decode_as::stored);
    for (std::size_t i = 0; i < n; ++i) {
      expect_near(col + " dosage row " + std::to_string(i), got[i], dosage[i], 0);
    }
    store.verify_checksum(j);
  }

  // A streamed pass (the oneTBB flow graph) and the sequential baseline hand the kernel the
  // values read_column gives, column by column in the order asked, repeats included.
  const std::vector<std::size_t> order = {2, 0, 1, 0};
  colflow::column_stream<double> stream(store);
  for (const bool graph : {true, false}) {
    const std::string mode = graph ? "stream" : "sequential pass";
    std::vector<std::size_t> seen;
    const colflow::column_kernel<double> kernel = [&](const colflow::column_view<double>& view) {
      seen.push_back(view.column);
      std::vector<double> want(n);
      store.read_column(view.column, want);
      expect_true(mode + " column size", static_cast<std::size_t>(view.values.size()) == n);
      for (std::size_t i = 0; i < n && i < static_cast<std::size_t>(view.values.size()); ++i) {
        expect_near(mode + " column " + std::to_string(view.column) + " row " + std::to_string(i),
                    view.values[static_cast<Eigen::Index>(i)], want[i], 0);
      }
      return true;
    };
    const colflow::pass_stats stats =
        graph ? stream.run(order, kernel) : stream.run_sequential(order, kernel);
    expect_true(mode + " order", seen == order);
    expect_true(mode + " column count", stats.columns == order.size());
  }
}

void check_float_store(const fs::path& dir) {
  const std::size_t n = 5;
  const std::vector<std::vector<double>> columns = {
      {0.5, -1.25, 3.0, 2.0, 0.125},
      {1e6, 1e6 + 1, 1e6 - 1, 1e6 + 0.5, 1e6},
  };
  const colflow::codec_id codecs[] = {colflow::codec_id::lz4, colflow::codec_id::zlib};
  const fs::path path = dir / "dense.cf";

  colflow::writer_options options;
  options.type = colflow::value_type::float64;
  options.rows = n;
  colflow::store_writer writer(path, options, make_samples(n));
  for (std::size_t j = 0; j < columns.size(); ++j) {
    colflow::column_encoding encoding;
    encoding.codec = codecs[j];
    encoding.level = colflow::traits_of(codecs[j]).default_level;
    encoding.shuffle = true;
    const colflow::column_stats stats = colflow::dense_stats(columns[j]);
    colflow::column_info info;
    info.id = "x" + std::to_string(j + 1);
    writer.append(
        colflow::encode_float_column(columns[j], colflow::value_type::float64, stats, 0, encoding),
        info);
  }
  writer.finish();

  const colflow::store store = colflow::store::open(path);
  expect_true("float store shape", store.num_rows() == n && store.num_columns() == 2);
  std::vector<double> got(n);
  for (std::size_t j = 0; j < columns.size(); ++j) {
    const std::string col = "float column " + std::to_string(j);
    store.read_column(j, got, colflow::decode_as::stored);
    for (std::size_t i = 0; i < n; ++i) {
      expect_near(col + " stored row " + std::to_string(i), got[i], columns[j][i], 0);
    }
    const std::vector<double> z = standardize(columns[j]);
    store.read_column(j, got);
    for (std::size_t i = 0; i < n; ++i) {
      expect_near(col + " standardized row " + std::to_string(i), got[i], z[i], 1e-9);
    }
  }
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void check_import_export(const fs::path& dir) {
  namespace pp = colflow::preprocess;
  // Simulated PLINK files -> a genotype store -> PLINK files again: the same .bed.
  pp::simulate_options sim;
  sim.samples = 23;
  sim.variants = 17;
  sim.seed = 5;
  sim.out = dir / "sim";
  const pp::simulate_result result = pp::simulate(sim);
  expect_true("simulated shape", result.samples == 23 && result.variants == 17);
  pp::bed_source bed(pp::plink_paths::from_prefix((dir / "sim").string()));
  pp::convert_options options;
  options.out = dir / "sim.cf";
  options.codec = pp::codec_choice::genotype_zstd;
  const pp::convert_result converted = pp::convert(bed, options);
  expect_true("converted columns", converted.columns == 17);
  const colflow::store genotypes = colflow::store::open(dir / "sim.cf");
  pp::export_bed(genotypes, (dir / "back").string(), false);
  expect_true("exported .bed equals the simulated one",
              file_bytes(dir / "back.bed") == file_bytes(dir / "sim.bed"));

  // A CSV matrix -> a float store -> .npy, read back through npy_source.
  {
    std::ofstream csv(dir / "m.csv");
    csv << "id,x,y\na,1.5,-2\nb,NA,0.25\nc,3,7\n";
  }
  pp::csv_source csv(dir / "m.csv");
  options.out = dir / "m.cf";
  options.codec = pp::codec_choice::zstd;
  options.standardize = false;
  pp::convert(csv, options);
  const colflow::store dense = colflow::store::open(dir / "m.cf");
  pp::export_npy(dense, dir / "m.npy", false, false);
  pp::npy_source npy(dir / "m.npy");
  expect_true("npy shape", npy.rows() == 3 && npy.columns() == 2);
  std::vector<double> column(3);
  npy.read_values(1, column);
  expect_near("npy value", column[2], 7, 0);
  npy.read_values(0, column);
  expect_true("npy missing value", std::isnan(column[1]));
}

}  // namespace

int main() {
  try {
    std::cout << "colflow " << colflow::version() << '\n';
    temp_dir dir;
    check_genotype_store(dir.path());
    check_float_store(dir.path());
    check_import_export(dir.path());
  } catch (const colflow::error& e) {
    std::cerr << "colflow error: " << e.message() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  if (failures != 0) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "package consumer: all checks passed\n";
  return 0;
}
