"""colflow.preprocess of every input the command takes (PLINK filesets, .npy, CSV, BGEN,
VCF/BCF, a list of inputs, a numpy array in memory) against `colflow preprocess` on the same
input with the same options: the same store (info, samples, columns, the values bit for bit,
the index entries with their frame checksums and statistics, the frames byte for byte), and the
exceptions of bad inputs and options."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import dataset

import colflow

YRI = "hapmap-yri/plinkhapmap"


def command(binary: str, out: Path, *args: object) -> None:
    done = subprocess.run([binary, "preprocess", *map(str, args), "--out", str(out), "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"colflow preprocess {' '.join(map(str, args))}: {done.stderr}"


def assert_same_store(got: Path, expected: Path, *, same_source: bool = True) -> None:
    """Two stores hold the same thing: everything but the random Store_Id (and the input's
    description, for an array against its .npy file)."""
    with colflow.open(got) as a, colflow.open(expected) as b:
        ia, ib = a.info(), b.info()
        skip = {"path", "store_id"} | (set() if same_source else {"source"})
        assert {k: v for k, v in ia.items() if k not in skip} == \
            {k: v for k, v in ib.items() if k not in skip}
        assert a.samples.equals(b.samples)
        assert a.columns.equals(b.columns)
        for dtype in (np.float64, np.float32):
            va, vb = a.read(dtype=dtype), b.read(dtype=dtype)
            assert va.tobytes() == vb.tobytes(), dtype  # bit for bit, NaN included
    # The index entries (offsets, sizes, frame checksums, statistics, codecs) and the frames;
    # the headers differ by their Store_Id and checksum.
    for name in ("columns.idx", "columns.dat"):
        assert (got / name).read_bytes()[64:] == (expected / name).read_bytes()[64:], name


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, colflow_binary):
    """HapMap YRI's chromosomes 1 and 2 as PLINK filesets, BGEN 1.2 files (one .sample) and
    bgzipped VCFs, made by plink2; a list file of the filesets."""
    if shutil.which("plink2") is None:
        pytest.skip("plink2 is not installed (scripts/install-deps.sh)")
    d = tmp_path_factory.mktemp("inputs")
    whole = dataset(YRI)

    def plink2(*args: object) -> None:
        done = subprocess.run(["plink2", *map(str, args), "--threads", "2", "--silent"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr

    for c in ("1", "2"):
        plink2("--bfile", whole, "--chr", c, "--make-bed", "--out", d / f"chr{c}")
        plink2("--bfile", d / f"chr{c}", "--export", "bgen-1.2", "--out", d / f"chr{c}")
        plink2("--bfile", d / f"chr{c}", "--export", "vcf", "bgz", "--out", d / f"chr{c}")
    (d / "list.txt").write_text("# two filesets\nchr1\nchr2\n")
    return d


def test_plink_filesets_make_one_store(inputs, colflow_binary, tmp_path):
    beds = [inputs / "chr1", str(inputs / "chr2") + ".bed"]
    info = colflow.preprocess(beds, tmp_path / "py.cf", num_threads=2)
    command(colflow_binary, tmp_path / "cli.cf", "--bed", *beds)
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf")
    assert info["input_kind"] == "genotype" and info["codec"] == "genotype"
    assert info["columns"] == colflow.open(tmp_path / "cli.cf").shape[1]
    # The list file is the command's --inputs; the same store.
    colflow.preprocess(inputs / "list.txt", tmp_path / "list.cf", format="inputs")
    assert_same_store(tmp_path / "list.cf", tmp_path / "cli.cf")
    # A float store of dosages in float32, and zstd-compressed codes.
    colflow.preprocess(beds, tmp_path / "f.cf", codec="lz4", level=4, dtype="f32",
                       standardize=False, shuffle=True)
    command(colflow_binary, tmp_path / "f-cli.cf", "--bed", *beds, "--codec", "lz4", "--level", 4,
            "--dtype", "f32", "--no-standardize", "--shuffle")
    assert_same_store(tmp_path / "f.cf", tmp_path / "f-cli.cf")


def test_pgen_by_its_extension_equals_the_bed_plink2_writes_of_it(inputs, colflow_binary,
                                                                   tmp_path):
    """A .pgen path is a PLINK 2 fileset (format inferred from the ending): its store holds the
    values, samples and columns of the store of the .bed plink2 --make-bed writes of it (ALT
    counted, as plink2 writes A1), and equals the command's --pfile store."""
    for args in (["--bfile", inputs / "chr1", "--make-pgen"],
                 ["--pfile", tmp_path / "x", "--make-bed"]):
        done = subprocess.run(["plink2", *map(str, args), "--out",
                               str(tmp_path / ("x" if args[0] == "--bfile" else "xb")),
                               "--threads", "2", "--silent"], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    info = colflow.preprocess(tmp_path / "x.pgen", tmp_path / "pgen.cf", num_threads=2)
    assert info["input_kind"] == "genotype"
    colflow.preprocess(tmp_path / "xb", tmp_path / "bed.cf", num_threads=2)
    assert_same_store(tmp_path / "pgen.cf", tmp_path / "bed.cf", same_source=False)
    lines = [line.split("\t") for line in (tmp_path / "x.pvar").read_text().splitlines()
             if not line.startswith("##")]
    ref, alt = lines[0].index("REF"), lines[0].index("ALT")
    with colflow.open(tmp_path / "pgen.cf") as s:
        assert list(s.columns["a1"]) == [f[alt] for f in lines[1:]]  # ALT counted
        assert list(s.columns["a2"]) == [f[ref] for f in lines[1:]]
    command(colflow_binary, tmp_path / "cli.cf", "--pfile", tmp_path / "x")
    assert_same_store(tmp_path / "pgen.cf", tmp_path / "cli.cf")


def test_plink_fileset_by_its_three_paths(colflow_binary, tmp_path):
    small = Path(dataset("bed-reader/small")).parent
    files = dict(bim=small / "small.mib", fam=small / "small.maf")
    colflow.preprocess(small / "small.deb", tmp_path / "py.cf", format="bed", codec="auto", **files)
    command(colflow_binary, tmp_path / "cli.cf", "--bed-file", small / "small.deb", "--bim",
            files["bim"], "--fam", files["fam"], "--codec", "auto")
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf")


@pytest.mark.parametrize(
    "options, flags",
    [
        ({}, []),
        ({"hard_call_threshold": 0.2}, ["--hard-call-threshold", 0.2]),
        ({"dtype": "f32", "codec": "none"}, ["--dtype", "f32", "--codec", "none"]),
        ({"ref_first": True, "shuffle": False}, ["--ref-first", "--no-shuffle"]),
    ],
)  # fmt: skip
def test_bgen_files(options, flags, inputs, colflow_binary, tmp_path):
    bgens = [inputs / "chr1.bgen", inputs / "chr2.bgen"]
    info = colflow.preprocess(bgens, tmp_path / "py.cf", sample=inputs / "chr1.sample", **options)
    command(colflow_binary, tmp_path / "cli.cf", "--bgen", *bgens, "--sample",
            inputs / "chr1.sample", *flags)
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf")
    assert info["input_kind"] == "dosage"
    expected = {"hard_call_threshold": "genotype", "dtype": "float32"}
    kind = next((v for k, v in expected.items() if k in options), "dosage")
    assert colflow.open(tmp_path / "py.cf").value_type == kind


# A VCF of four samples: a haploid call, a half-call, a multi-allelic record, DS and GP.
SMALL_VCF = """\
##fileformat=VCFv4.2
##contig=<ID=1>
##contig=<ID=X>
##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">
##FORMAT=<ID=DS,Number=A,Type=Float,Description="Dosage">
##FORMAT=<ID=GP,Number=G,Type=Float,Description="Probabilities">
#CHROM	POS	ID	REF	ALT	QUAL	FILTER	INFO	FORMAT	a	b	c	d
1	100	rs1	A	G	.	.	.	GT:DS:GP	0/0:0.1:0.9,0.1,0	0/1:1.25:0.1,0.55,0.35	1/1:.:.	./1:.:.
1	200	rs2	C	T,G	.	.	.	GT:DS:GP	0/2:0,1.5:0.1,0,0,0.2,0.1,0.6	1/2:0.9,0.8:.	./.:.:.	0/0:0,0:1,0,0,0,0,0
X	300	rs3	G	T	.	.	.	GT:DS	0:0.3	1:.	0/1:1	1/1:2
"""


@pytest.mark.parametrize(
    "options, flags",
    [
        ({"split_multiallelic": True, "half_call": "missing"},
         ["--split-multiallelic", "--vcf-half-call", "missing"]),
        ({"split_multiallelic": True, "half_call": "haploid", "dosage": "DS"},
         ["--split-multiallelic", "--vcf-half-call", "haploid", "--dosage", "DS"]),
        ({"split_multiallelic": True, "half_call": "reference", "dosage": "GP", "codec": "zlib"},
         ["--split-multiallelic", "--vcf-half-call", "reference", "--dosage", "GP", "--codec",
          "zlib"]),
    ],
)  # fmt: skip
def test_vcf_file(options, flags, colflow_binary, tmp_path):
    vcf = tmp_path / "small.vcf"
    vcf.write_text(SMALL_VCF)
    # No sex in a VCF: given by a file, as --sex.
    (tmp_path / "sex.txt").write_text("#IID SEX\na 1\nb 2\nd M\n")
    info = colflow.preprocess(vcf, tmp_path / "py.cf", sex=tmp_path / "sex.txt", **options)
    command(colflow_binary, tmp_path / "cli.cf", "--vcf", vcf, "--sex", tmp_path / "sex.txt",
            *flags)
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf")
    assert info["columns"] == 4
    assert info["input_kind"] == ("dosage" if "dosage" in options else "genotype")
    assert colflow.open(tmp_path / "py.cf").samples.sex.tolist() == ["1", "2", "0", "1"]


def test_vcf_files_make_one_store(inputs, colflow_binary, tmp_path):
    vcfs = [inputs / "chr1.vcf.gz", inputs / "chr2.vcf.gz"]
    colflow.preprocess(vcfs, tmp_path / "py.cf", codec="genotype-zstd", num_threads=1)
    command(colflow_binary, tmp_path / "cli.cf", "--vcf", *vcfs, "--codec", "genotype-zstd")
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf")
    # The same genotypes as the PLINK filesets they were exported from, the alleles aside
    # (A1 is ALT in a VCF).
    colflow.preprocess([inputs / "chr1", inputs / "chr2"], tmp_path / "bed.cf")
    with colflow.open(tmp_path / "py.cf") as v, colflow.open(tmp_path / "bed.cf") as b:
        assert v.shape == b.shape
        assert (v.columns.id == b.columns.id).all()


def test_dense_files(colflow_binary, tmp_path):
    rng = np.random.default_rng(7)
    m = rng.normal(size=(40, 9)).astype(np.float32)
    m[3, 4] = np.nan
    np.save(tmp_path / "m.npy", m)
    colflow.preprocess(tmp_path / "m.npy", tmp_path / "py.cf")
    command(colflow_binary, tmp_path / "cli.cf", "--npy", tmp_path / "m.npy")
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf")
    # CSV with a header and sample IDs; and read without the header, as --csv-header no would.
    with open(tmp_path / "m.csv", "w") as f:
        f.write("id," + ",".join(f"v{j}" for j in range(9)) + "\n")
        for i, row in enumerate(m.astype(np.float64)):
            f.write(f"s{i}," + ",".join("NA" if np.isnan(x) else repr(float(x)) for x in row) + "\n")
    colflow.preprocess(tmp_path / "m.csv", tmp_path / "csv.cf", standardize=True, codec="lz4")
    command(colflow_binary, tmp_path / "csv-cli.cf", "--csv", tmp_path / "m.csv", "--standardize",
            "--codec", "lz4")
    assert_same_store(tmp_path / "csv.cf", tmp_path / "csv-cli.cf")
    with colflow.open(tmp_path / "csv.cf") as s:
        assert s.samples.iid[1] == "s1" and s.columns.id[8] == "v8"
    (tmp_path / "n.tsv").write_text("1\t2\n3\tNaN\n")
    colflow.preprocess(tmp_path / "n.tsv", tmp_path / "tsv.cf", csv_header="no", csv_ids="no")
    command(colflow_binary, tmp_path / "tsv-cli.cf", "--csv", tmp_path / "n.tsv", "--csv-header",
            "no", "--csv-ids", "no")
    assert_same_store(tmp_path / "tsv.cf", tmp_path / "tsv-cli.cf")


@pytest.mark.parametrize(
    "make, options, flags",
    [
        (lambda m: m, {}, []),
        (lambda m: np.asfortranarray(m.astype(np.float32)), {"dtype": "f32"}, ["--dtype", "f32"]),
        (lambda m: m[::2, ::-1], {"standardize": True, "codec": "auto"},
         ["--standardize", "--codec", "auto"]),
        (lambda m: m.astype(">f8"), {"codec": "none"}, ["--codec", "none"]),
        (lambda m: m[:, 3], {"codec": "zstd", "level": 9}, ["--codec", "zstd", "--level", 9]),
    ],
    ids=["C", "fortran-float32", "strided-reversed", "big-endian", "1-D"],
)  # fmt: skip
def test_array_is_converted_as_its_npy_file(make, options, flags, colflow_binary, tmp_path):
    rng = np.random.default_rng(3)
    m = rng.normal(size=(30, 8))
    m[5, 1] = np.nan
    array = make(m)
    array.setflags(write=False)
    info = colflow.preprocess(array, tmp_path / "py.cf", **options)
    assert info["input_kind"] == "float64"
    np.save(tmp_path / "m.npy", np.asarray(array, dtype=array.dtype.newbyteorder("=")))
    command(colflow_binary, tmp_path / "cli.cf", "--npy", tmp_path / "m.npy", *flags)
    assert_same_store(tmp_path / "py.cf", tmp_path / "cli.cf", same_source=False)
    assert colflow.open(tmp_path / "py.cf").info()["source"].startswith("matrix in memory")


def test_array_with_names(tmp_path):
    m = np.arange(12, dtype=np.float64).reshape(4, 3)
    colflow.preprocess(m, tmp_path / "a.cf", samples=["s1", "s2", "s3", "s4"],
                       columns=("x", "y", "z"))
    with colflow.open(tmp_path / "a.cf") as s:
        assert s.samples.values.tolist()[1] == ["s2", "s2", "0", "0", "0", "-9"]
        assert s.columns.id.tolist() == ["x", "y", "z"]
        np.testing.assert_array_equal(s.read(dtype=np.float64), m)
        samples = s.samples
    # A DataFrame of Store.samples' fields round-trips; missing fields take their defaults.
    samples = samples.assign(sex=["1", "2", "0", "2"], fid="fam")
    colflow.preprocess(m, tmp_path / "b.cf", samples=samples)
    assert colflow.open(tmp_path / "b.cf").samples.equals(samples)
    colflow.preprocess(m, tmp_path / "c.cf", samples=pd.DataFrame({"iid": list("abcd"),
                                                                    "sex": [1, 2, 1, 2]}))
    assert colflow.open(tmp_path / "c.cf").samples.values.tolist()[3] == \
        ["d", "d", "0", "0", "2", "-9"]


def test_progress_of_an_array(tmp_path):
    reports = []
    colflow.preprocess(np.ones((10, 50)), tmp_path / "p.cf",
                       progress=lambda *report: reports.append(report))
    assert reports and reports[-1][0] == "preprocess" and reports[-1][3] == "columns"
    assert all(total == 50 for _, _, total, _ in reports)


def test_bad_inputs_raise(inputs, tmp_path):
    out = tmp_path / "x.cf"
    small = dataset("bed-reader/small")
    # Malformed files: FormatError naming the file.
    bad = {"bad.npy": b"not numpy", "bad.vcf": b"not a vcf\n", "bad.bgen": b"\0" * 40,
           "bad.csv": b"a,b\n1,x\n"}
    for name, content in bad.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(colflow.FormatError, match=name.replace(".", r"\.")):
            colflow.preprocess(tmp_path / name, out)
    with pytest.raises(colflow.FormatError, match="small_too_short"):
        colflow.preprocess(dataset("bed-reader/small_too_short"), out)
    # Missing files.
    for missing in ("absent", "absent.bgen", "absent.vcf.gz", "absent.npy"):
        with pytest.raises(colflow.NotFoundError):
            colflow.preprocess(tmp_path / missing, out)
    with pytest.raises(colflow.NotFoundError, match="nope.sample"):
        colflow.preprocess(inputs / "chr1.bgen", out, sample=tmp_path / "nope.sample")
    assert not out.exists()
    # Options that do not fit the input: the library's InvalidArgumentError.
    for options in ({"dosage": "DS"}, {"split_multiallelic": True}, {"sample": "s.sample"},
                    {"csv_header": "yes"}, {"hard_call_threshold": 0.7, "codec": "genotype"},
                    {"codec": "auto", "level": 3}):
        with pytest.raises(colflow.InvalidArgumentError):
            colflow.preprocess(small, out, **options)
    with pytest.raises(colflow.InvalidArgumentError, match="genotype"):
        colflow.preprocess(np.ones((3, 2)), out, codec="genotype")
    with pytest.raises(colflow.InvalidArgumentError, match="whitespace"):
        colflow.preprocess(np.ones((3, 2)), out, columns=["a", "b c"])
    # Unknown values and options of another format: ValueError.
    for options in ({"format": "plink2"}, {"dosage": "XX"}, {"half_call": "maybe"},
                    {"codec": "gzip"}, {"dtype": "f16"}, {"csv_ids": "true"},
                    {"samples": ["a"]}, {"bim": small + ".bim"}):
        with pytest.raises(ValueError):
            colflow.preprocess(small, out, **options)
    with pytest.raises(ValueError, match="one format"):
        colflow.preprocess([small, tmp_path / "bad.bgen"], out)
    with pytest.raises(ValueError, match="no input"):
        colflow.preprocess([], out)
    with pytest.raises(ValueError, match="3-D"):
        colflow.preprocess(np.ones((2, 2, 2)), out)
    with pytest.raises(ValueError, match="2 samples for an array of 3 rows"):
        colflow.preprocess(np.ones((3, 2)), out, samples=["a", "b"])
    with pytest.raises(ValueError, match="options of file inputs"):
        colflow.preprocess(np.ones((3, 2)), out, dosage="DS")
    # Types: an array of other values, a source of another type.
    with pytest.raises(TypeError, match="int64"):
        colflow.preprocess(np.ones((3, 2), dtype=np.int64), out)
    with pytest.raises(TypeError):
        colflow.preprocess(12, out)
    with pytest.raises(TypeError):
        colflow.preprocess(small, out, format="array")
    assert not out.exists()
    # An existing store is replaced only with force.
    colflow.preprocess(np.ones((3, 2)), out)
    with pytest.raises(colflow.AlreadyExistsError):
        colflow.preprocess(np.ones((3, 2)), out)
    colflow.preprocess(np.zeros((3, 4)), out, force=True)
    assert colflow.open(out).shape == (3, 4)
