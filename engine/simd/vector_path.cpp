// The vector-path switch COLFLOW_SIMD (kernels/vector_path.hpp): parsed once, checked against
// the CPU.
#include "colflow/simd/vector_path.hpp"

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "colflow/error.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow {
namespace {

constexpr const char* variable = "COLFLOW_SIMD";

// The path COLFLOW_SIMD names; nullopt when unset or empty, and for any other value.
std::optional<vector_path> named_path(std::string_view value) {
  for (const vector_path p : {vector_path::portable, vector_path::avx2, vector_path::avx512})
    if (value == vector_path_name(p)) return p;
  return std::nullopt;
}

std::string_view variable_value() {
  const char* value = std::getenv(variable);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

// What the CPU has, whatever the cap.
vector_path cpu_path() noexcept {
#if COLFLOW_X86_DISPATCH
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0 &&
                    __builtin_cpu_supports("popcnt") != 0;
  if (avx2 && __builtin_cpu_supports("avx512f") != 0) return vector_path::avx512;
  if (avx2) return vector_path::avx2;
#endif
  return vector_path::portable;
}

}  // namespace

vector_path vector_path_cap() noexcept {
  static const vector_path cap = named_path(variable_value()).value_or(vector_path::avx512);
  return cap;
}

vector_path vector_path_taken() noexcept {
  const vector_path cap = vector_path_cap(), cpu = cpu_path();
  return static_cast<int>(cap) < static_cast<int>(cpu) ? cap : cpu;
}

const char* vector_path_name(vector_path path) noexcept {
  switch (path) {
    case vector_path::portable:
      return "portable";
    case vector_path::avx2:
      return "avx2";
    case vector_path::avx512:
      return "avx512";
  }
  return "portable";
}

void check_vector_path() {
  const std::string_view value = variable_value();
  if (value.empty()) return;
  const std::optional<vector_path> path = named_path(value);
  if (!path)
    throw error(errc::invalid_argument, std::string(variable) + "=" + std::string(value) +
                                            ": not a vector path (portable, avx2 or avx512)");
  if (static_cast<int>(*path) > static_cast<int>(cpu_path()))
    throw error(errc::invalid_argument, std::string(variable) + "=" + std::string(value) +
                                            ": this CPU cannot take it (" + "its widest path is " +
                                            vector_path_name(cpu_path()) + ")");
}

}  // namespace colflow
