// The helpers shared by the test suites (test_support.hpp).
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace colflow::test {

temp_dir::temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "colflow-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::uint8_t> random_genotype_codes(std::uint64_t rows, double p, double missing,
                                                std::mt19937_64& rng) {
  std::vector<std::uint8_t> codes(genotype_column_bytes(rows), 0);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::uint64_t i = 0; i < rows; ++i) {
    unsigned code;
    if (u(rng) < missing) {
      code = 1;
    } else {
      const int a1 = (u(rng) < p) + (u(rng) < p);
      code = a1 == 2 ? 0u : a1 == 1 ? 2u : 3u;
    }
    codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (code << (2 * (i % 4))));
  }
  return codes;
}

std::vector<std::uint8_t> swapped_alleles(std::vector<std::uint8_t> codes) {
  for (auto& byte : codes) {
    std::uint8_t out = 0;
    for (unsigned k = 0; k < 4; ++k) {
      const unsigned code = (byte >> (2 * k)) & 3u;
      const unsigned swapped = code == 0 ? 3u : code == 3 ? 0u : code;
      out = static_cast<std::uint8_t>(out | (swapped << (2 * k)));
    }
    byte = out;
  }
  return codes;
}

int dosage_at(const std::vector<std::uint8_t>& codes, std::uint64_t i) {
  switch ((codes[i / 4] >> (2 * (i % 4))) & 3) {
    case 0:
      return 2;
    case 2:
      return 1;
    case 3:
      return 0;
    default:
      return -1;
  }
}

shared_gather::shared_gather(std::size_t size)
    : parts(size), sync(static_cast<std::ptrdiff_t>(size)) {}

void thread_communicator::all_gather(std::span<const double> mine, std::span<double> all,
                                     std::span<const std::size_t> counts) {
  if (mine.size() != counts[static_cast<std::size_t>(rank_)])
    throw std::logic_error("all_gather: this process's part is not its count");
  g_.parts[static_cast<std::size_t>(rank_)].assign(mine.begin(), mine.end());
  g_.sync.arrive_and_wait();
  auto at = all.begin();
  for (const auto& part : g_.parts) at = std::copy(part.begin(), part.end(), at);
  g_.sync.arrive_and_wait();  // every part read before any process writes its next
}

void on_processes(std::size_t size,
                  const std::function<void(std::size_t rank, analysis_options& options)>& run) {
  shared_gather g(size);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      thread_communicator c(g, static_cast<int>(r));
      analysis_options options;
      options.processes = &c;
      run(r, options);
    });
  for (auto& t : threads) t.join();
}

std::vector<sample_info> numbered_samples(std::uint64_t rows) {
  std::vector<sample_info> s;
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::string id = std::string("S").append(std::to_string(i + 1));
    s.push_back({id, id, "0", "0", "0", "-9"});
  }
  return s;
}

column_info numbered_column(std::uint64_t j) {
  return {"1", "rs" + std::to_string(j), "0", std::to_string(1000 + j), "A", "C"};
}

std::vector<std::vector<std::uint8_t>> write_genotype_store(const std::filesystem::path& path,
                                                            std::uint64_t rows,
                                                            std::uint64_t columns,
                                                            const column_encoding& encoding,
                                                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  writer_options options;
  options.type = value_type::genotype;
  options.rows = rows;
  options.source = "test";
  store_writer writer(path, options, numbered_samples(rows));
  std::vector<std::vector<std::uint8_t>> all;
  for (std::uint64_t j = 0; j < columns; ++j) {
    // A spread of frequencies, including a monomorphic column.
    const double p = j == 0 ? 0.0 : 0.01 + 0.49 * static_cast<double>(j % 7) / 6.0;
    auto codes = random_genotype_codes(rows, p, j % 3 == 0 ? 0.0 : 0.05, rng);
    writer.append(encode_genotype_column(codes, rows, encoding), numbered_column(j));
    all.push_back(std::move(codes));
  }
  writer.finish();
  return all;
}

std::vector<std::vector<double>> write_float_store(const std::filesystem::path& path,
                                                   value_type type, std::uint64_t rows,
                                                   std::uint64_t columns,
                                                   const column_encoding& encoding,
                                                   std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(10, 3);
  std::uniform_real_distribution<double> u(0, 1);
  writer_options options;
  options.type = type;
  options.rows = rows;
  options.source = "test";
  store_writer writer(path, options, numbered_samples(rows));
  std::vector<std::vector<double>> all;
  for (std::uint64_t j = 0; j < columns; ++j) {
    std::vector<double> v(rows);
    for (double& x : v) {
      x = u(rng) < 0.03 ? std::nan("") : normal(rng);
      if (type == value_type::float32) x = static_cast<float>(x);
    }
    if (j == 1) std::fill(v.begin(), v.end(), 4.0);  // a constant column
    writer.append(encode_float_column(v, type, dense_stats(v), 0, encoding), numbered_column(j));
    all.push_back(std::move(v));
  }
  writer.finish();
  return all;
}

std::vector<column_encoding> all_encodings() {
  return {{codec_id::none, 0, false}, {codec_id::zlib, 1, false},  {codec_id::zlib, 6, true},
          {codec_id::lz4, 1, false},  {codec_id::lz4, 9, true},    {codec_id::zstd, 1, false},
          {codec_id::zstd, 3, true},  {codec_id::zstd, 19, false}, {codec_id::none, 0, true}};
}

std::string encoding_name(const column_encoding& e) {
  return std::string(traits_of(e.codec).name) + std::to_string(e.level) +
         (e.shuffle ? "shuffle" : "");
}

std::vector<char> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::filesystem::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void expect_damaged_checkpoint_refused(const std::filesystem::path& checkpoint,
                                       std::size_t positions, const std::function<void()>& resume) {
  const std::vector<char> good = read_file(checkpoint);
  const std::string name = checkpoint.filename().string();
  const auto expect_refused = [&](const std::string& what, const errc* code) {
    try {
      resume();
      ADD_FAILURE() << "accepted: " << what;
    } catch (const error& e) {
      if (code) {
        EXPECT_EQ(e.kind(), *code) << what << ": " << e.what();
      }
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  for (std::size_t at = 0; at < good.size(); at += 1 + good.size() / positions) {
    std::vector<char> bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    write_file(checkpoint, bad);
    const errc expected = at < 8    ? errc::bad_magic
                          : at < 12 ? errc::unsupported_version
                                    : errc::checksum_mismatch;
    expect_refused("byte " + std::to_string(at), &expected);
  }
  for (std::size_t length : {std::size_t{0}, std::size_t{20}, good.size() / 2, good.size() - 1}) {
    write_file(checkpoint,
               std::vector<char>(good.begin(), good.begin() + static_cast<long>(length)));
    expect_refused("truncated to " + std::to_string(length), nullptr);
  }
  write_file(checkpoint, good);
}

int run_command(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Eigen::MatrixXd standardized_matrix(const store& s, const selection& sel, bool hwe,
                                    std::size_t& nonconstant) {
  const auto n = static_cast<Eigen::Index>(sel.rows.size());
  Eigen::MatrixXd z(n, static_cast<Eigen::Index>(sel.columns.size()));
  std::vector<double> x(s.num_rows());
  nonconstant = 0;
  for (std::size_t k = 0; k < sel.columns.size(); ++k) {
    s.read_column(sel.columns[k], x, decode_as::stored);
    double sum = 0, obs = 0;
    for (std::size_t i : sel.rows)
      if (!std::isnan(x[i])) {
        sum += x[i];
        ++obs;
      }
    const double mean = sum / obs;
    double ss = 0;
    for (std::size_t i : sel.rows)
      if (!std::isnan(x[i])) ss += (x[i] - mean) * (x[i] - mean);
    double scale = std::sqrt(ss / static_cast<double>(n - 1));
    if (hwe) scale = std::sqrt(2 * (mean / 2) * (1 - mean / 2));
    const bool varies = obs > 0 && scale > 0 && std::isfinite(scale);
    nonconstant += varies;
    for (Eigen::Index r = 0; r < n; ++r) {
      const double v = x[sel.rows[static_cast<std::size_t>(r)]];
      z(r, static_cast<Eigen::Index>(k)) = !varies || std::isnan(v) ? 0.0 : (v - mean) / scale;
    }
  }
  return z;
}

int run_cli(const std::string& args, std::string& output) {
  return run_command(std::string(COLFLOW_CLI_PATH) + " " + args, output);
}

}  // namespace colflow::test
