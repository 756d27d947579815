# What `cmake --install BUILD [--prefix PREFIX]` puts under PREFIX (docs/install.md):
#   bin/lakerun                                    the command (src/cli/CMakeLists.txt)
#   include/lakerun/...                            the public headers
#   lib/liblakerun_<module>.a                      the module libraries (lakerun_cc_library installs each)
#   lib/cmake/lakerun/lakerunConfig.cmake, ...     the CMake package: find_package(lakerun)
#   share/doc/lakerun/LICENSE, NOTICE, CHANGELOG.md
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lakerun DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

set(lakerun_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/lakerun)
install(EXPORT lakerunTargets NAMESPACE lakerun:: DESTINATION ${lakerun_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lakerunConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lakerunConfig.cmake
  INSTALL_DESTINATION ${lakerun_cmake_dir}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# Before 1.0 a minor version may change the API: find_package(lakerun 0.1) accepts 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lakerunConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lakerunConfig.cmake ${PROJECT_BINARY_DIR}/lakerunConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/LakerunTorchSearchOrder.cmake
        DESTINATION ${lakerun_cmake_dir})

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

if(LAKERUN_TOP_LEVEL)
  include(LakerunPackage)   # `cpack -G DEB` / the `package` target: lakerun_<version>_<arch>.deb
endif()
