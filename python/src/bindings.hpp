// The declarations the sources of colflow._core share: one bind_* per area of the module, and
// the open store and the array conversions that several areas use.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
// The type casters of every part, included by every source: without its caster a std::string
// fails to cast at run time (std::bad_cast), and a cast must compile the same in every source.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"

namespace nb = nanobind;

namespace colflow::python {

// The parts of the module; NB_MODULE (core.cpp) calls each once, errors first.
void bind_errors(nb::module_& m);      // colflow::error as the classes of colflow._errors
void bind_store(nb::module_& m);       // Store: opening, metadata, reads into numpy buffers
void bind_stream(nb::module_& m);      // BlockStream: columns in blocks through the flow graph
void bind_stats(nb::module_& m);       // stats, pca
void bind_assoc(nb::module_& m);       // assoc
void bind_regression(nb::module_& m);  // penalized (ridge, lasso, enet), bayesr
void bind_preprocess(nb::module_& m);  // input_format, preprocess_files, preprocess_array
void bind_inputs(nb::module_& m);      // the command's phenotype, keep and sex files, for a store
void bind_products(nb::module_& m);    // score, ld, grm
void bind_wgr(nb::module_& m);         // wgr (whole-genome regression, LOCO predictions)
void bind_qc(nb::module_& m);          // qc, hardy, king, clump
void bind_sbayesr(nb::module_& m);     // sbayesr, ld_store (summary statistics and LD stores)

// Indices Python resolved with numpy: in range, in any order, with repeats.
using index_array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

inline std::span<const std::int64_t> span_of(index_array a) { return {a.data(), a.shape(0)}; }

// An open store, shared with any read in progress so that close() from another thread never
// pulls it from under a decode running without the GIL.
class py_store {
 public:
  explicit py_store(const std::string& path)
      : path_(path), store_(std::make_shared<const store>(store::open(path))) {}

  // The store; ValueError once closed.
  std::shared_ptr<const store> get() const {
    if (!store_) throw nb::value_error("I/O operation on a closed colflow store");
    return store_;
  }
  void close() { store_.reset(); }
  bool closed() const { return !store_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::shared_ptr<const store> store_;
};

// A table of values (NaN missing) from Python, store rows x names (Fortran order).
using table_array = nb::ndarray<const double, nb::ndim<2>, nb::f_contig, nb::device::cpu>;

// Store rows x names of values (NaN missing), as read_phenotypes makes them from a file.
// ValueError unless it has one row per store sample (`n`) and a column per name.
phenotype_table make_table(table_array values, const std::vector<std::string>& names,
                           std::size_t n);

// The samples and columns an analysis uses, from indices Python resolved (any order, repeats):
// the library's selections are sets, in increasing order. ValueError when either is empty.
selection make_selection(const store& s, std::span<const std::int64_t> rows,
                         std::span<const std::int64_t> cols);

// The samples' sexes: the store's, replaced where `codes` (one per store sample, or none) has a
// code, read as plink2 --update-sex reads one (the command's --sex FILE). ValueError for a code
// that is no sex or a list of another length.
std::vector<sample_sex> sexes_with(const store& s,
                                   const std::optional<std::vector<std::string>>& codes);

// A new numpy array owning `v`.
template <typename T>
nb::object to_numpy(std::vector<T> v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

// Store indices (a selection's rows or columns) as a new int64 numpy array. Not an overload of
// to_numpy: std::size_t is std::uint64_t here, whose arrays stay uint64.
inline nb::object indices_to_numpy(const std::vector<std::size_t>& indices) {
  return to_numpy(std::vector<std::int64_t>(indices.begin(), indices.end()));
}

// A column-major Eigen matrix as a new numpy array in order "F" (copied once, owned).
nb::object to_numpy(const Eigen::MatrixXd& m);

}  // namespace colflow::python
