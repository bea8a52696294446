# The examples test (ctest label "package"): install this build into a scratch prefix, build
# each program of examples/ against it with find_package(colflow CONFIG REQUIRED), make a small
# store with the installed colflow command, run every example and check its output.
# Included from tests/CMakeLists.txt:  include(${CMAKE_CURRENT_SOURCE_DIR}/examples/register.cmake)
if(NOT COLFLOW_INSTALL OR NOT TARGET colflow_cli)
  return()  # no install rules, or no colflow command to make a store with
endif()

add_test(NAME examples
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/examples/run_examples.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/examples_work "${COLFLOW_OUTSIDE_CXX_FLAGS}")
# It configures and compiles two projects: give it time, and keep it out of the way of the
# unit tests' timing.
set_tests_properties(examples PROPERTIES LABELS package TIMEOUT 900 COST 200)
