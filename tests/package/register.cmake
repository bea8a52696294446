# The packaging test (ctest label "package"): install this build into a scratch prefix, then
# configure, build and run tests/package/consumer, an outside project that finds colflow with
# find_package(colflow CONFIG REQUIRED) and links colflow::colflow.
# Included from tests/CMakeLists.txt:  include(${PROJECT_SOURCE_DIR}/tests/package/register.cmake)
if(NOT COLFLOW_INSTALL)
  return()  # no install rules, nothing to test
endif()

# A sanitized static libcolflow only links into programs built with the same sanitizers:
# reuse the top-level COLFLOW_SANITIZE_FLAGS (a list) as one flags string.
set(colflow_package_cxx_flags "")
if(COLFLOW_SANITIZE)
  if(DEFINED COLFLOW_SANITIZE_FLAGS)
    list(JOIN COLFLOW_SANITIZE_FLAGS " " colflow_package_cxx_flags)
  else()
    set(colflow_package_cxx_flags "-fsanitize=address,undefined -fno-sanitize=vptr")
  endif()
endif()

add_test(NAME package_consumer
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/run_package_test.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/package_work "${colflow_package_cxx_flags}")
# It installs, configures and compiles a whole project: give it time on a loaded machine.
set_tests_properties(package_consumer PROPERTIES LABELS package TIMEOUT 600)
