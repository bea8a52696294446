# The packaging test (ctest label "package"): install this build into a scratch prefix, then
# configure, build and run tests/package/consumer, an outside project that finds colflow with
# find_package(colflow CONFIG REQUIRED) and links colflow::colflow.
# Included from tests/CMakeLists.txt:  include(${PROJECT_SOURCE_DIR}/tests/package/register.cmake)
if(NOT COLFLOW_INSTALL)
  return()  # no install rules, nothing to test
endif()

# A sanitized static libcolflow only links into programs built with the same sanitizers.
# Keep in step with the COLFLOW_SANITIZE flags in the top-level CMakeLists.txt.
set(colflow_package_cxx_flags "")
if(COLFLOW_SANITIZE)
  set(colflow_package_cxx_flags
      "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all")
endif()

add_test(NAME package_consumer
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/run_package_test.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/package_work "${colflow_package_cxx_flags}")
# It configures and compiles a project: give it time, and keep it out of the way of the
# unit tests' timing.
set_tests_properties(package_consumer PROPERTIES LABELS package TIMEOUT 600)
