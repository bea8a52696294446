// colflow._core: the nanobind extension under the Python package. It holds only what must be
// native: opening a store, decoding selected cells into a numpy buffer that Python allocated,
// streaming blocks, the analyses and the conversion of inputs into a store. Index resolution,
// dtype and order checks, DataFrames and the exception classes live in Python (the modules
// of colflow/: _store.py, _arguments.py, _errors.py and the rest), where they can follow
// bed-reader and numpy exactly. Each area binds itself (bindings.hpp); this file only
// assembles the module.

#include <string>

#include "bindings.hpp"
#include "colflow/simd/vector_path.hpp"
#include "colflow/version.hpp"

NB_MODULE(_core, m) {
  using namespace colflow::python;
  m.doc() = "The native half of the colflow package (see the colflow package).";
  m.attr("library_version") = std::string(colflow::version());
  bind_errors(m);
  m.def("check_vector_path", &colflow::check_vector_path,
        "Raises InvalidArgumentError when COLFLOW_SIMD names no path or one this CPU lacks.");
  m.def(
      "vector_path", [] { return colflow::vector_path_name(colflow::vector_path_taken()); },
      "The vector code the kernels take in this process: portable, avx2 or avx512.");
  bind_store(m);
  bind_stream(m);
  bind_stats(m);
  bind_assoc(m);
  bind_regression(m);
  bind_preprocess(m);
  bind_inputs(m);
  bind_products(m);
  bind_wgr(m);
  bind_qc(m);
  bind_sbayesr(m);
}
