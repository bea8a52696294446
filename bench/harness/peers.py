"""The Python peers, each measured in a process of its own (so that /usr/bin/time gives its own
peak memory). Run as `python -m harness.peers TASK ...`; prints one JSON line with the seconds
of the timed part only (no interpreter start-up, no loading of the input) and what else the
task measures.

  blosc2-decode NPY CODEC FILTER CLEVEL PASSES
      Compresses every column of a Fortran-order .npy (samples in rows) into its own Blosc2
      chunk, one thread, then decodes all chunks PASSES times into one reused column buffer,
      as a column store is read; reports the median pass, GB/s of float64 output, and the
      compression ratio (float64 bytes over the chunks' bytes).
  bed-reader BED THREADS
      bed_reader.open_bed(BED).read(dtype='float64'): the whole .bed into a float64 matrix.
  python-read LIBRARY PATH DTYPE THREADS
      The whole matrix into a new numpy array of DTYPE (float32, float64 or int8), order "F":
      LIBRARY colflow reads a store with colflow.open(PATH).read(...), bed-reader a .bed with
      open_bed(PATH).read(...); reports a checksum of the values, which must agree.
  python-stream LIBRARY PATH BATCH THREADS
      Every column through a numpy function, BATCH columns at a time as float32 (missing
      values 0, then the batch's products with a fixed vector): colflow with
      store.stream(block_columns=BATCH), bed-reader with read(index=np.s_[:, j:j + BATCH]) per
      batch; reports a checksum of the products.
  sklearn-path NPY PHENO PATH_TSV L1_RATIO
      sklearn.linear_model.enet_path (lasso_path when L1_RATIO is 1) on the standardised matrix
      of a .npy, for the lambdas of a colflow PREFIX.path.tsv, tolerance 1e-7.
"""
from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np


def blosc2_decode(npy: str, codec: str, filter_name: str, clevel: str, passes: str) -> dict:
    import blosc2
    matrix = np.load(npy, mmap_mode="r")
    samples, columns = matrix.shape
    params = dict(codec=blosc2.Codec[codec], clevel=int(clevel), typesize=8, nthreads=1,
                  filters=[blosc2.Filter[filter_name]])
    chunks = [blosc2.compress2(np.ascontiguousarray(matrix[:, j]), **params) for j in range(columns)]
    column = np.empty(samples)
    seconds = []
    for _ in range(int(passes)):
        start = time.perf_counter()
        for chunk in chunks:
            blosc2.decompress2(chunk, dst=column, nthreads=1)
        seconds.append(time.perf_counter() - start)
    # The last decoded column must be the input's: a benchmark that decodes wrongly is void.
    if not np.array_equal(column, matrix[:, -1], equal_nan=True):
        raise SystemExit(f"blosc2 {codec} {filter_name} {clevel}: decoded column differs from {npy}")
    best = statistics.median(seconds)
    return {"seconds": best, "gb_per_s": 8 * samples * columns / best / 1e9,
            "compression": 8 * samples * columns / sum(len(c) for c in chunks)}


def bed_reader_read(bed: str, threads: str) -> dict:
    from bed_reader import open_bed
    with open_bed(bed) as b:
        shape = (b.iid_count, b.sid_count)
        start = time.perf_counter()
        values = b.read(dtype="float64", num_threads=int(threads))
        seconds = time.perf_counter() - start
    assert values.shape == shape
    return {"seconds": seconds, "gb_per_s": values.nbytes / seconds / 1e9}


def python_read(library: str, path: str, dtype: str, threads: str) -> dict:
    if library == "colflow":
        import colflow
        with colflow.open(path) as store:
            start = time.perf_counter()
            values = store.read(dtype=dtype, num_threads=int(threads))
            seconds = time.perf_counter() - start
    else:
        from bed_reader import open_bed
        with open_bed(path) as bed:
            start = time.perf_counter()
            values = bed.read(dtype=dtype, num_threads=int(threads))
            seconds = time.perf_counter() - start
    # A checksum of the values with missing ones as 0, a slice at a time so that the peak memory
    # stays the array's.
    checksum = 0.0
    for j in range(0, values.shape[1], 1000):
        part = values[:, j:j + 1000]
        called = part != -127 if part.dtype == np.int8 else ~np.isnan(part)
        checksum += float(np.where(called, part, 0).sum(dtype=np.float64))
    return {"seconds": seconds, "gb_per_s": values.nbytes / seconds / 1e9, "checksum": checksum}


def python_stream(library: str, path: str, batch: str, threads: str) -> dict:
    k, nthreads = int(batch), int(threads)

    def work(block: np.ndarray, y: np.ndarray) -> np.ndarray:
        np.nan_to_num(block, copy=False)
        return y @ block

    products = []
    if library == "colflow":
        import colflow
        with colflow.open(path) as store:
            y = np.linspace(-1.0, 1.0, store.shape[0], dtype=np.float32)
            start = time.perf_counter()
            with store.stream(block_columns=k, dtype=np.float32, num_threads=nthreads) as blocks:
                for block in blocks:
                    products.append(work(block, y))
            seconds = time.perf_counter() - start
    else:
        from bed_reader import open_bed
        with open_bed(path) as bed:
            y = np.linspace(-1.0, 1.0, bed.iid_count, dtype=np.float32)
            start = time.perf_counter()
            for j in range(0, bed.sid_count, k):
                block = bed.read(index=np.s_[:, j:j + k], dtype=np.float32, num_threads=nthreads)
                products.append(work(block, y))
            seconds = time.perf_counter() - start
    return {"seconds": seconds, "checksum": float(np.concatenate(products).sum(dtype=np.float64))}


def sklearn_path(npy: str, pheno: str, path_tsv: str, l1_ratio: str) -> dict:
    from sklearn.linear_model import enet_path
    z = np.asfortranarray(np.load(npy))
    y = np.array([float(line.split()[2]) for line in open(pheno)])
    lambdas = [float(line.split()[0]) for line in list(open(path_tsv))[1:]]
    start = time.perf_counter()
    enet_path(z, y - y.mean(), l1_ratio=float(l1_ratio), alphas=lambdas, tol=1e-7)
    return {"seconds": time.perf_counter() - start}


TASKS = {"blosc2-decode": blosc2_decode, "bed-reader": bed_reader_read,
         "python-read": python_read, "python-stream": python_stream, "sklearn-path": sklearn_path}

if __name__ == "__main__":
    print(json.dumps(TASKS[sys.argv[1]](*sys.argv[2:])))
