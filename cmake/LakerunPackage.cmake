# The Debian package: `cpack -G DEB` (or the `package` target) in a build directory writes
# lakerun_<version>_<arch>.deb, which installs under /usr what `cmake --install` installs (cmake/LakerunInstall.cmake).
#
# Depends: the shared libraries the `lakerun` command loads (dpkg-shlibdeps), plus the development packages that a
# program linking the static module libraries needs: libtorch's headers and CMake package, and the compression and
# image libraries lakerun::format and lakerun::data link. libcurl is loaded only by the MLflow REST store: Recommends.
#
# The module libraries stay static. Built shared, the package shrank from 5.8 to 3.2 MB, but every `lakerun` start
# loaded 7 more libraries (about 1 ms more of a 2-5 ms `lakerun --help`), the libtorch search order of programs on
# lakerun::dist (cmake/LakerunTorchSearchOrder.cmake) landed in every library's own dependencies, and linking or
# running a program on lakerun took the same time (about 1.5 s and 0.6 s, both dominated by libtorch).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lakerun)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "train deep-learning models at any scale, straight from lakehouse tables (C++, libtorch)")
set(CPACK_PACKAGE_DESCRIPTION
    "lakerun reads Parquet files and Delta Lake tables into libtorch tensors, sharded and shuffled across ranks, \
trains with data parallelism on c10d (Gloo, NCCL), launches and supervises the ranks, and tracks runs MLflow-style. \
This package holds the `lakerun` command, the C++ headers and libraries, and the CMake package \
(find_package(lakerun)).")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "lakerun developers" CACHE STRING "the Debian package's Maintainer field")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libtorch-dev, zlib1g-dev, libsnappy-dev, libzstd-dev, liblz4-dev, libbrotli-dev, libjpeg-dev, libpng-dev")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4, cmake")
include(CPack)
