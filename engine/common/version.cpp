// The library's version string, set by the build (colflow/version.hpp).
#include "colflow/version.hpp"

namespace colflow {

std::string_view version() noexcept { return COLFLOW_VERSION_STRING; }

}  // namespace colflow
