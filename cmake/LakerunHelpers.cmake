# Small helpers so every module is declared the same way (Abseil's absl_cc_library in spirit).
#
# lakerun_cc_library(NAME format [SRCS a.cc b.cc] DEPS lakerun::base [TORCH])
#   -> target lakerun_<NAME>, alias lakerun::<NAME>; public headers in include/, private ones beside the sources.
#   Without SRCS, an INTERFACE library that only links its DEPS (lakerun::format, lakerun::lakerun).
#   TORCH: links libtorch publicly and reuses the shared torch PCH (a build-tree setting: the PCH is never part of
#   the library's interface).
#   Where LAKERUN_INSTALL is ON (a directory may set it OFF: examples/ does), the library is installed and joins the
#   export set lakerunTargets as lakerun::<NAME> (cmake/LakerunInstall.cmake writes the package files).
# lakerun_cc_test(NAME x SRCS x_test.cc DEPS ... [TORCH] [LABELS l...] [TIMEOUT s] [TEST_PREFIX p])
#   -> a gtest binary whose tests ctest discovers; TIMEOUT bounds each test (default 120 s); TEST_PREFIX is put
#   before each discovered name (`ctest -R p` selects them).
# lakerun_cc_binary(NAME x SRCS ... DEPS ... [TORCH])
function(lakerun_cc_library)
  cmake_parse_arguments(L "TORCH" "NAME" "SRCS;DEPS" ${ARGN})
  set(target lakerun_${L_NAME})
  if(L_SRCS)
    add_library(${target} STATIC ${L_SRCS})
    target_include_directories(${target}
      PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PUBLIC ${L_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_link_libraries(${target} INTERFACE ${L_DEPS})
  endif()
  add_library(lakerun::${L_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${L_NAME})
  if(L_TORCH)
    target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
    lakerun_torch_pch(${target})
  endif()
  if(LAKERUN_INSTALL)
    install(TARGETS ${target} EXPORT lakerunTargets
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()

function(lakerun_cc_test)
  cmake_parse_arguments(T "TORCH" "NAME;TIMEOUT;TEST_PREFIX" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT LAKERUN_BUILD_TESTS)
    return()
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SRCS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} lakerun::testing GTest::gtest GTest::gmock GTest::gtest_main)
  if(T_TORCH)
    target_link_libraries(${T_NAME} PRIVATE ${TORCH_LIBRARIES})
    lakerun_torch_pch(${T_NAME})
  endif()
  # gtest_discover_tests cannot carry a ';' inside one property value, so tests find the source and build trees
  # through lakerun::testing (compiled-in paths, overridable by LAKERUN_SOURCE_DIR / LAKERUN_BINARY_DIR).
  set(props TIMEOUT ${T_TIMEOUT})
  if(T_LABELS)
    list(APPEND props LABELS "${T_LABELS}")
  endif()
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 120 TEST_PREFIX "${T_TEST_PREFIX}" PROPERTIES ${props})
endfunction()

function(lakerun_cc_binary)
  cmake_parse_arguments(B "TORCH" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${B_NAME} ${B_SRCS})
  target_include_directories(${B_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${B_NAME} PRIVATE ${B_DEPS})
  if(B_TORCH)
    target_link_libraries(${B_NAME} PRIVATE ${TORCH_LIBRARIES})
    lakerun_torch_pch(${B_NAME})
  endif()
endfunction()

# lakerun_add_subdirectories(): adds every sub-directory holding a CMakeLists.txt, so each one owns its targets
# and adding one needs no edit in its parent.
function(lakerun_add_subdirectories)
  file(GLOB children CONFIGURE_DEPENDS LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(child ${children})
    if(IS_DIRECTORY ${child} AND EXISTS ${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()

# lakerun_promote_imported_targets(): makes the imported targets that the current directory's find_package() calls
# created visible everywhere (IMPORTED_GLOBAL). Needed when lakerun is a sub-project: its targets name torch's
# imported targets in their interface (`$<TARGET_FILE:torch_cpu>`), which CMake resolves in the directory of the
# enclosing project's targets, where torch was never found.
function(lakerun_promote_imported_targets)
  if(CMAKE_VERSION VERSION_LESS 3.21)
    message(WARNING "lakerun as a sub-project needs CMake 3.21 or later to share torch's targets; with CMake "
                    "${CMAKE_VERSION}, call find_package(Torch REQUIRED) in your project before adding lakerun")
    return()
  endif()
  get_property(imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(t ${imported})
    get_target_property(global ${t} IMPORTED_GLOBAL)
    if(NOT global)
      set_target_properties(${t} PROPERTIES IMPORTED_GLOBAL TRUE)
    endif()
  endforeach()
endfunction()
