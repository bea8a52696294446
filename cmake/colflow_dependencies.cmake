# Every dependency comes from a Debian package (scripts/install-deps.sh); nothing is downloaded.
find_package(ZLIB REQUIRED)
find_package(PkgConfig REQUIRED)
# libdeflate: the fast whole-buffer decoder (and encoder) of zlib frames; zlib stays the
# reference implementation (COLFLOW_ZLIB_IMPL=zlib) and the writer of nothing else.
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# htslib: the VCF/BCF reader of libcolflow_preprocess (vcf_source), private to it.
pkg_check_modules(HTSLIB REQUIRED IMPORTED_TARGET htslib)
find_package(nlohmann_json 3 REQUIRED)
find_package(TBB REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# Boost.Math (header-only): the t distribution of association tests.
find_package(Boost 1.74 REQUIRED)
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)
if(COLFLOW_BUILD_CLI)
  find_package(CLI11 2 REQUIRED)
endif()
# MPI is optional: where CMake finds it, the colflow_mpi library is built and the command runs
# on MPI ranks; elsewhere colflow builds and runs as before. Not with ThreadSanitizer, whose
# runtime would have to see inside MPI's own threads.
set(COLFLOW_HAVE_MPI OFF)
if(COLFLOW_MPI AND NOT COLFLOW_SANITIZE_THREAD)
  # The C API, called from C++ (MPI's deprecated C++ bindings left out).
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(COLFLOW_HAVE_MPI ON)
  endif()
endif()
message(STATUS "colflow: MPI ${COLFLOW_HAVE_MPI}")
if(COLFLOW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(COLFLOW_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
