/// @file vector_path.hpp
/// Which vector unit the kernels use, and the switch that caps it.
///
/// The library is built for plain x86-64 and picks its AVX2 or AVX-512 code once per process
/// from the CPU. Every kernel gives the same bits on every path (docs/DESIGN.md §7), so the
/// switch exists to prove that and to reproduce a run exactly as another machine took it: the
/// environment variable COLFLOW_SIMD set to `portable` (plain x86-64: no POPCNT, AVX2, FMA or
/// AVX-512), `avx2` (POPCNT, AVX2 and FMA, no AVX-512) or `avx512` caps the path for the whole
/// process. It is read once, on first use.
#pragma once

namespace colflow {

/// The widest code a process may take.
enum class vector_path { portable, avx2, avx512 };

/// The cap COLFLOW_SIMD sets (avx512 when unset, and when its value is not a path: see
/// check_vector_path).
vector_path vector_path_cap() noexcept;

/// The widest path this process takes: the cap, lowered to what the CPU has.
vector_path vector_path_taken() noexcept;

/// "portable", "avx2" or "avx512".
const char* vector_path_name(vector_path path) noexcept;

/// Throws colflow::error (invalid_argument) when COLFLOW_SIMD is set to anything but a path's
/// name, or to a path this CPU cannot take (the message names the value and what the CPU has).
/// The command line and the Python package call it before any work.
void check_vector_path();

}  // namespace colflow
