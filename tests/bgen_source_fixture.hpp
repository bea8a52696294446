// Shared by the BGEN reader's tests (bgen_source*_test.cpp): hand-made BGEN files of either
// layout, every column read at once or in two steps (fetched in order, decoded on threads), and
// the plink2 exports that both the dosage and the two-step tests read.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <thread>

#include "colflow/codec/codec.hpp"
#include "colflow/preprocess/bgen_source.hpp"
#include "test_support.hpp"

namespace colflow::bgen_source_tests {

using preprocess::bgen_options;
using preprocess::bgen_source;

inline bgen_options options(const std::filesystem::path& bgen,
                            const std::filesystem::path& sample = {}, bool ref_first = false) {
  bgen_options o;
  o.bgen = bgen;
  o.sample = sample;
  o.ref_first = ref_first;
  return o;
}

// ---- Hand-made BGEN files ----------------------------------------------------------------

struct crafted_variant {
  std::string id, rsid = "rs1", chrom = "1";
  std::uint32_t pos = 1;
  std::vector<std::string> alleles{"A", "G"};
  // Layout 2: one byte per sample (bit 7 missing, low 6 bits ploidy), the stored values.
  // Layout 1: `values` holds three 16-bit probabilities per sample.
  std::vector<std::uint8_t> ploidy;
  bool phased = false;
  unsigned bits = 8;
  std::vector<std::uint64_t> values;
  std::int64_t declared_size_delta = 0;  // added to D, the declared decompressed size
};

struct crafted_bgen {
  int layout = 2;
  unsigned compression = 1;  // 0 none, 1 zlib, 2 zstd
  bool sample_ids = true;
  std::vector<std::string> samples;
  std::vector<crafted_variant> variants;
};

inline void put16(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void put32(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void put_bytes(std::vector<char>& out, const std::vector<char>& bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}
inline void put_text16(std::vector<char>& out, const std::string& s) {
  put16(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}
inline void put_text32(std::vector<char>& out, const std::string& s) {
  put32(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

inline std::vector<char> compress(unsigned compression, const std::vector<char>& payload) {
  std::vector<std::byte> frame;
  compress_frame(compression == 1 ? codec_id::zlib : codec_id::zstd, 1,
                 std::as_bytes(std::span(payload)), frame);
  std::vector<char> out(frame.size());
  std::memcpy(out.data(), frame.data(), frame.size());
  return out;
}

inline std::vector<char> build(const crafted_bgen& b) {
  const std::size_t n = b.samples.size();
  std::vector<char> id_block;
  if (b.sample_ids) {
    std::vector<char> body;
    put32(body, n);
    for (const auto& s : b.samples) put_text16(body, s);
    put32(id_block, body.size() + 4);
    put_bytes(id_block, body);
  }
  std::vector<char> out;
  put32(out, 20 + id_block.size());
  put32(out, 20);
  put32(out, b.variants.size());
  put32(out, n);
  out.insert(out.end(), {'b', 'g', 'e', 'n'});
  put32(out,
        b.compression | (static_cast<unsigned>(b.layout) << 2) | (b.sample_ids ? 1u << 31 : 0u));
  put_bytes(out, id_block);
  for (const auto& v : b.variants) {
    if (b.layout == 1) put32(out, n);
    put_text16(out, v.id);
    put_text16(out, v.rsid);
    put_text16(out, v.chrom);
    put32(out, v.pos);
    if (b.layout == 1) {
      put_text32(out, v.alleles.at(0));
      put_text32(out, v.alleles.at(1));
      std::vector<char> data;
      for (std::uint64_t x : v.values) put16(data, x);
      if (b.compression == 0) {
        put_bytes(out, data);
      } else {
        const auto frame = compress(b.compression, data);
        put32(out, frame.size());
        put_bytes(out, frame);
      }
      continue;
    }
    put16(out, v.alleles.size());
    for (const auto& a : v.alleles) put_text32(out, a);
    std::vector<char> data;
    put32(data, n);
    put16(data, v.alleles.size());
    std::uint8_t lo = 63, hi = 0;
    for (auto p : v.ploidy) {
      lo = std::min<std::uint8_t>(lo, p & 63);
      hi = std::max<std::uint8_t>(hi, p & 63);
    }
    data.push_back(static_cast<char>(lo));
    data.push_back(static_cast<char>(hi));
    for (auto p : v.ploidy) data.push_back(static_cast<char>(p));
    data.push_back(v.phased ? 1 : 0);
    data.push_back(static_cast<char>(v.bits));
    std::vector<char> packed((v.values.size() * v.bits + 7) / 8, 0);
    for (std::size_t i = 0; i < v.values.size(); ++i)
      for (unsigned k = 0; k < v.bits; ++k)
        if ((v.values[i] >> k) & 1) {
          const std::size_t bit = i * v.bits + k;
          packed[bit / 8] = static_cast<char>(packed[bit / 8] | (1 << (bit % 8)));
        }
    put_bytes(data, packed);
    if (b.compression == 0) {
      put32(out, data.size());
      put_bytes(out, data);
    } else {
      const auto frame = compress(b.compression, data);
      put32(out, frame.size() + 4);
      put32(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(data.size()) +
                                            v.declared_size_delta));
      put_bytes(out, frame);
    }
  }
  return out;
}

// `n` samples s0..s(n-1), and `m` unphased diploid 8-bit variants rs0..rs(m-1) whose sample i
// has P(AA) = i, P(AB) = j.
inline crafted_bgen small_bgen(std::size_t n = 5, std::size_t m = 3) {
  crafted_bgen b;
  for (std::size_t i = 0; i < n; ++i)
    b.samples.push_back(std::string("s").append(std::to_string(i)));
  for (std::size_t j = 0; j < m; ++j) {
    crafted_variant v;
    v.rsid = "rs" + std::to_string(j);
    v.pos = static_cast<std::uint32_t>(100 + j);
    for (std::size_t i = 0; i < n; ++i) {
      v.ploidy.push_back(2);
      v.values.push_back(i);
      v.values.push_back(j);
    }
    b.variants.push_back(v);
  }
  return b;
}

inline void write_sample_file(const std::filesystem::path& file,
                              const std::vector<std::string>& ids) {
  std::ofstream out(file);
  out << "ID_1 ID_2 missing sex\n0 0 0 D\n";
  for (std::size_t i = 0; i < ids.size(); ++i)
    out << "f" << ids[i] << " " << ids[i] << " 0 " << (i % 3) << "\n";
}

// Every column of a source.
inline std::vector<std::vector<std::uint16_t>> read_all(bgen_source& source) {
  std::vector<std::vector<std::uint16_t>> columns(source.columns());
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    columns[j].resize(source.rows());
    source.read_dosages(j, columns[j]);
  }
  return columns;
}

// One column's outcome: its dosages, or the message of the error reading it threw.
struct column_outcome {
  std::vector<std::uint16_t> dosages;
  std::string error;
  bool operator==(const column_outcome&) const = default;
};

inline void PrintTo(const column_outcome& c, std::ostream* os) {
  *os << (c.error.empty() ? std::to_string(c.dosages.size()) + " dosages" : "error: " + c.error);
}

// Every column read with read_dosages, in order.
inline std::vector<column_outcome> read_outcomes(bgen_source& source) {
  std::vector<column_outcome> out(source.columns());
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    out[j].dosages.resize(source.rows());
    try {
      source.read_dosages(j, out[j].dosages);
    } catch (const error& e) {
      out[j] = {{}, e.message()};
    }
  }
  return out;
}

// Every column read in two steps, as the converter reads them: fetched in order on this thread,
// then decoded by `threads` threads at once, taking the columns in a shuffled order.
inline std::vector<column_outcome> decode_outcomes(const std::shared_ptr<bgen_source>& source,
                                                   unsigned threads, std::uint64_t seed) {
  const std::uint64_t m = source->columns();
  std::vector<column_outcome> out(m);
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw(m);
  for (std::uint64_t j = 0; j < m; ++j) {
    try {
      raw[j] = source->fetch(j);
      EXPECT_NE(raw[j], nullptr) << j;
    } catch (const error& e) {
      out[j].error = e.message();
    }
  }
  std::vector<std::uint64_t> order(m);
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  std::atomic<std::size_t> next{0};
  const bgen_source& decoder = *source;  // decode_dosages is const
  auto work = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < m;) {
      const std::uint64_t j = order[k];
      if (!raw[j]) continue;
      out[j].dosages.resize(decoder.rows());
      try {
        decoder.decode_dosages(*raw[j], out[j].dosages);
      } catch (const error& e) {
        out[j] = {{}, e.message()};
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return out;
}

// Expects decoding `source`'s columns on 4 threads to give what read_dosages gives, column by
// column, dosages and errors alike; returns the number of columns read without error.
inline std::size_t expect_decode_equals_read(const std::shared_ptr<bgen_source>& source,
                                             std::uint64_t seed = 1) {
  const auto parallel = decode_outcomes(source, 4, seed);
  const auto serial = read_outcomes(*source);
  std::size_t good = 0;
  for (std::uint64_t j = 0; j < source->columns(); ++j) {
    EXPECT_EQ(parallel[j], serial[j]) << "column " << j;
    if (serial[j].error.empty()) ++good;
  }
  return good;
}

// plink2's exports of its --dummy dosages, named (BgenDummyTest, BgenParallelDecodeTest).

struct dummy_case {
  std::string name, export_flags;
};

inline void PrintTo(const dummy_case& c, std::ostream* os) { *os << c.name; }

}  // namespace colflow::bgen_source_tests
