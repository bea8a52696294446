# The packaging test (ctest label "package"): install this build into a scratch prefix, then
# configure, build and run tests/package/consumer, an outside project that finds colflow with
# find_package(colflow CONFIG REQUIRED COMPONENTS preprocess simulate) and links colflow::colflow,
# colflow::preprocess and colflow::simulate.
# Included from tests/CMakeLists.txt:  include(${PROJECT_SOURCE_DIR}/tests/package/register.cmake)
if(NOT COLFLOW_INSTALL OR NOT TARGET colflow_preprocess)
  return()  # no install rules (or not the whole package), nothing to test
endif()

add_test(NAME package_consumer
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/run_package_test.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/package_work "${COLFLOW_OUTSIDE_CXX_FLAGS}")
# It installs, configures and compiles a whole project: give it time on a loaded machine.
set_tests_properties(package_consumer PROPERTIES LABELS package TIMEOUT 600 COST 100)
