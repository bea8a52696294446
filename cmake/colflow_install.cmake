# Install the libraries, their public headers and a package config so that
#   find_package(colflow CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE colflow::colflow)   # or colflow::preprocess, ::simulate, ::mpi
# works from an install prefix. include/colflow/preprocess/ belongs to libcolflow_preprocess and
# libcolflow_simulate: it is installed with them, never without.
include(CMakePackageConfigHelpers)
set(COLFLOW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/colflow)

set(colflow_installed_targets colflow)
if(TARGET colflow_preprocess)
  list(APPEND colflow_installed_targets colflow_preprocess colflow_simulate)
endif()
# colflow_mpi (where MPI was found) and its header include/colflow/mpi/: installed together.
set(colflow_header_exclusions)
if(TARGET colflow_mpi)
  list(APPEND colflow_installed_targets colflow_mpi)
  set_target_properties(colflow_mpi PROPERTIES EXPORT_NAME mpi)
else()
  list(APPEND colflow_header_exclusions PATTERN mpi EXCLUDE)
endif()
if(NOT TARGET colflow_preprocess)
  list(APPEND colflow_header_exclusions PATTERN preprocess EXCLUDE)
endif()
install(TARGETS ${colflow_installed_targets} EXPORT colflow_targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/colflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        ${colflow_header_exclusions})
install(EXPORT colflow_targets NAMESPACE colflow:: DESTINATION ${COLFLOW_CMAKE_DIR})
if(TARGET colflow_cli)
  install(TARGETS colflow_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/colflowConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/colflowConfig.cmake
                              INSTALL_DESTINATION ${COLFLOW_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/colflowConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/colflowConfig.cmake
              ${PROJECT_BINARY_DIR}/colflowConfigVersion.cmake
        DESTINATION ${COLFLOW_CMAKE_DIR})
