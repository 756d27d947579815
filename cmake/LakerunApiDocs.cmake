# The API reference: `cmake --build <build> --target api_docs` runs Doxygen (Debian's `doxygen`) over the public
# headers in include/lakerun/ and writes <build>/docs/api/html/index.html. Without doxygen the target says how to
# get it instead of failing the configure.
find_package(Doxygen QUIET)
if(DOXYGEN_FOUND)
  set(DOXYGEN_PROJECT_NAME "lakerun")
  set(DOXYGEN_PROJECT_NUMBER "${PROJECT_VERSION}")
  set(DOXYGEN_PROJECT_BRIEF "Deep learning from lakehouse tables, on libtorch and c10d")
  set(DOXYGEN_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/docs/api")
  set(DOXYGEN_STRIP_FROM_PATH "${PROJECT_SOURCE_DIR}/include")
  set(DOXYGEN_STRIP_FROM_INC_PATH "${PROJECT_SOURCE_DIR}/include")
  set(DOXYGEN_FULL_PATH_NAMES YES)
  set(DOXYGEN_EXTRACT_ALL YES)
  set(DOXYGEN_EXTRACT_PRIVATE NO)
  set(DOXYGEN_GENERATE_LATEX NO)
  set(DOXYGEN_RECURSIVE YES)
  set(DOXYGEN_FILE_PATTERNS "*.h")
  set(DOXYGEN_WARN_IF_UNDOCUMENTED NO)
  set(DOXYGEN_QUIET YES)
  doxygen_add_docs(api_docs "${PROJECT_SOURCE_DIR}/include/lakerun"
                   COMMENT "API reference: ${PROJECT_BINARY_DIR}/docs/api/html/index.html")
else()
  add_custom_target(api_docs
    COMMAND ${CMAKE_COMMAND} -E echo "api_docs needs Doxygen: apt-get install doxygen, then configure again"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()
