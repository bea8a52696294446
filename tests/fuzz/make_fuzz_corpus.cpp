// Writes the seed corpora of the fuzz targets: small valid inputs of every kind each reader
// accepts, and the malformed files of ../shared/data/bed-reader. Run by hand when a reader
// learns a new kind of input; the output is committed under tests/fuzz/corpus/.
//
//   make_fuzz_corpus tests/fuzz/corpus ../shared/data
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "colflow/colflow.hpp"
#include "fuzz_files.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string store_input(const fs::path& store) {
  return colflow::fuzz::pack_parts({slurp(store / "columns.dat"), slurp(store / "columns.idx"),
                                    slurp(store / "samples.tsv"), slurp(store / "columns.tsv"),
                                    slurp(store / "manifest.json")});
}

// A .npy file: version 1.0 header for `descr`, `fortran`, shape (rows, cols) (cols 0: 1-D).
std::string npy(const std::string& descr, bool fortran, std::size_t rows, std::size_t cols,
                const std::string& payload) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': (" + std::to_string(rows) +
                     (cols ? ", " + std::to_string(cols) : ",") + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  const auto len = static_cast<std::uint16_t>(dict.size());
  out.append(reinterpret_cast<const char*>(&len), 2);
  return out + dict + payload;
}

template <typename T>
std::string values(std::size_t n, double start) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    T v = static_cast<T>(start + 0.5 * static_cast<double>(i));
    if (i % 7 == 3) v = static_cast<T>(std::nan(""));
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_fuzz_corpus OUTPUT_DIR SHARED_DATA_DIR\n";
    return 2;
  }
  const fs::path out = argv[1], shared = argv[2];
  colflow::test::temp_dir tmp;

  // Stores: genotype and float stores of every codec setting, and two damaged ones.
  int k = 0;
  for (const colflow::column_encoding& e : colflow::test::all_encodings()) {
    const std::string name = colflow::test::encoding_name(e);
    colflow::test::write_genotype_store(tmp / ("g" + name), 13, 6, e, 3);
    put(out / "store", "genotype-" + name, store_input(tmp / ("g" + name)));
    colflow::test::write_float_store(
        tmp / ("f" + name), k % 2 ? colflow::value_type::float32 : colflow::value_type::float64, 9,
        4, e, 3);
    put(out / "store", "float-" + name, store_input(tmp / ("f" + name)));
    ++k;
  }
  // Dosage stores: the dosage-zstd codec (the split layout) and zstd on shuffled values.
  for (const colflow::codec_id codec : {colflow::codec_id::dosage_zstd, colflow::codec_id::zstd}) {
    const std::uint64_t rows = 11;
    colflow::writer_options o;
    o.type = colflow::value_type::dosage;
    o.rows = rows;
    o.source = "fuzz corpus";
    const std::string name(colflow::traits_of(codec).name);
    {
      colflow::store_writer w(tmp / ("d" + name), o, colflow::test::numbered_samples(rows));
      for (std::uint64_t j = 0; j < 3; ++j) {
        std::vector<std::uint16_t> v(rows);
        for (std::uint64_t i = 0; i < rows; ++i)
          v[i] = (i + j) % 5 == 0 ? colflow::dosage_missing
                 : (i + j) % 3 == 0
                     ? static_cast<std::uint16_t>(1000 * (i + 1) + j)
                     : static_cast<std::uint16_t>(((i * j) % 3) * colflow::dosage_one);
        w.append(colflow::encode_dosage_column(v, {codec, 3, codec == colflow::codec_id::zstd}),
                 colflow::test::numbered_column(j));
      }
      w.finish();
    }
    put(out / "store", "dosage-" + name, store_input(tmp / ("d" + name)));
  }
  {
    std::string damaged = store_input(tmp / "gzstd3");
    damaged[4 + 64 + 5] ^= 0x40;  // inside the first frame
    put(out / "store", "damaged-frame", damaged);
    put(out / "store", "truncated", damaged.substr(0, damaged.size() / 2));
  }

  // PLINK: the bed-reader test files, valid and malformed.
  const fs::path br = shared / "bed-reader";
  const auto plink = [&](const std::string& name, const std::string& fam, const std::string& bim,
                         const std::string& bed) {
    put(out / "plink", name,
        colflow::fuzz::pack_parts({slurp(br / fam), slurp(br / bim), slurp(br / bed)}));
  };
  for (const char* p :
       {"small", "smallmode0", "some_missing", "plink_sim_10s_100v_10pmiss", "sparse"})
    plink(p, std::string(p) + ".fam", std::string(p) + ".bim", std::string(p) + ".bed");
  plink("badfile", "small.fam", "small.bim", "badfile.bed");
  plink("empty", "small.fam", "small.bim", "empty.bed");
  plink("smallmodebad", "small.fam", "small.bim", "smallmodebad.bed");
  plink("small_too_short", "small_too_short.fam", "small_too_short.bim", "small_too_short.bed");
  plink("fam_bad", "small.fam_bad", "small.bim", "small.bed");
  plink("bim_bad", "small.fam", "small.bad_bim", "small.bed");
  plink("bim_bad_positions", "small.fam", "small.bim_bad_positions.bim", "small.bed");

  // BGEN: the small bed-reader fileset exported by plink2 in every version (v1.1; v1.2 at 8 and
  // 16 bits; v1.3 with zstd), with and without its .sample, and damaged copies.
  const auto plink2 = [&](const std::string& args) {
    if (std::system(("plink2 --silent " + args).c_str()) != 0) {
      std::cerr << "make_fuzz_corpus: plink2 " << args << " failed\n";
      std::exit(1);
    }
  };
  for (const auto& [name, format] :
       std::vector<std::pair<std::string, std::string>>{{"v11", "bgen-1.1"},
                                                        {"v12-8bit", "bgen-1.2 bits=8"},
                                                        {"v12", "bgen-1.2"},
                                                        {"v13", "bgen-1.3"}}) {
    const std::string prefix = (tmp / name).string();
    plink2("--bfile " + (br / "some_missing").string() + " --export " + format + " --out " +
           prefix);
    const std::string bgen = slurp(prefix + ".bgen"), sample = slurp(prefix + ".sample");
    put(out / "bgen", name, colflow::fuzz::pack_parts({bgen, sample}));
    put(out / "bgen", name + "-embedded-ids", colflow::fuzz::pack_parts({bgen, ""}));
    put(out / "bgen", name + "-truncated",
        colflow::fuzz::pack_parts({bgen.substr(0, bgen.size() * 2 / 3), sample}));
  }

  // VCF: the small bed-reader fileset exported by plink2 as VCF text, bgzipped VCF and with
  // dosages, a BCF made by bcftools, and small hand-made records: phased, haploid, half-calls,
  // multi-allelic, GP, missing fields, a record short of samples.
  plink2("--bfile " + (br / "some_missing").string() + " --export vcf --out " +
         (tmp / "gt").string());
  put(out / "vcf", "gt", slurp(tmp / "gt.vcf"));
  plink2("--bfile " + (br / "some_missing").string() + " --export vcf bgz --out " +
         (tmp / "gtz").string());
  put(out / "vcf", "gt-bgz", slurp(tmp / "gtz.vcf.gz"));
  const std::string gtz = slurp(tmp / "gtz.vcf.gz");
  put(out / "vcf", "gt-bgz-truncated", gtz.substr(0, gtz.size() / 2));
  if (std::system(("bcftools view -Ob -o " + (tmp / "gt.bcf").string() + " " +
                   (tmp / "gtz.vcf.gz").string())
                      .c_str()) == 0)
    put(out / "vcf", "gt-bcf", slurp(tmp / "gt.bcf"));
  plink2("--dummy 6 5 0.2 dosage-freq=0.5 acgt --seed 3 --export vcf vcf-dosage=DS-force --out " +
         (tmp / "ds").string());
  put(out / "vcf", "ds", slurp(tmp / "ds.vcf"));
  const std::string head =
      "##fileformat=VCFv4.2\n##contig=<ID=1>\n"
      "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
      "##FORMAT=<ID=DS,Number=A,Type=Float,Description=\"Dosage\">\n"
      "##FORMAT=<ID=GP,Number=G,Type=Float,Description=\"Probabilities\">\n"
      "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ta\tb\tc\n";
  put(out / "vcf", "mixed",
      head + "1\t10\trs1\tA\tG\t.\t.\t.\tGT:DS:GP\t0|1:0.9:0.1,0.8,0.1\t1:2:0,0,1\t./.:.:.\n" +
          "1\t20\trs2\tC\tT,G\t.\t.\t.\tGT:DS\t1/2:0.5,0.5\t0/0:0,0\t./1:.\n" +
          "1\t30\t.\tT\t.\t.\t.\t.\tGT\t0/0\t0\t.\n");
  put(out / "vcf", "short-record", head + "1\t10\trs1\tA\tG\t.\t.\t.\tGT\t0/1\t1/1\n");
  put(out / "vcf", "no-header", "1\t10\trs1\tA\tG\t.\t.\t.\tGT\t0/1\n");

  // .npy: float64/float32, C/Fortran order, 2-D and 1-D, a real file, and broken ones.
  put(out / "npy", "f8-c", npy("<f8", false, 5, 3, values<double>(15, 1)));
  put(out / "npy", "f8-fortran", npy("<f8", true, 4, 2, values<double>(8, -2)));
  put(out / "npy", "f4-c", npy("<f4", false, 6, 2, values<float>(12, 0)));
  put(out / "npy", "f8-1d", npy("<f8", false, 7, 0, values<double>(7, 3)));
  put(out / "npy", "big-endian", npy(">f8", false, 2, 2, values<double>(4, 0)));
  put(out / "npy", "short", npy("<f8", false, 5, 3, values<double>(10, 1)));
  put(out / "npy", "bed-reader-some_missing", slurp(br / "some_missing.val.npy"));

  // CSV/TSV.
  put(out / "csv", "header-ids", "id,a,b,c\ns1,1,2,3\ns2,4,NA,6\ns3,7,8,\n");
  put(out / "csv", "plain-tsv", "1.5\t2\t-3e4\n4\t5\tnan\n");
  put(out / "csv", "header-only", "x,y\n");
  put(out / "csv", "ragged", "a,b\n1,2,3\n4\n");
  put(out / "csv", "quoted", "\"name\",\"v\"\n\"s1\",1\n");

  // Phenotype and covariate files.
  put(out / "phenotype", "header",
      "#FID IID height PHENO2\nF1 S1 1.5 2\nF1 S2 NA 3\nF2 S3 -9 .\nS4 S4 2 nan\n");
  put(out / "phenotype", "no-header", "F1 S1 1\nF1 S2 2\n0 S5 3\n");
  put(out / "phenotype", "fid-header", "FID\tIID\theight\nF1\tS1\t1e3\n");
  put(out / "phenotype", "duplicate", "F1 S1 1\nF1 S1 2\n");
  put(out / "phenotype", "wrong-fields", "F1 S1 1 2\nF1 S2 3\n");
  put(out / "phenotype", "not-a-number", "F1 S1 abc\n");
  std::cout << "corpora written to " << out << "\n";
  return 0;
}
