# The LAKERUN_PYTHON option: the `lakerun` Python package (python/, src/python/), a pybind11 extension over the C++
# libraries. ON by default where Python 3's development headers, pybind11 and torch's Python headers (with
# libtorch_python) are found, so that a build without them still succeeds: then it is OFF with one STATUS line.
# Turned OFF, nothing is searched for and nothing of the package is configured or built.
#
# The interpreter: Python3_EXECUTABLE when given, else $LAKERUN_PYTHON (scripts/env.sh: Debian's /usr/bin/python3,
# whose python3-torch is the build of the libtorch lakerun links), else the first python3 on PATH.
if(DEFINED LAKERUN_PYTHON AND NOT LAKERUN_PYTHON)
  return()
endif()

set(lakerun_python_missing "")
if(NOT DEFINED Python3_EXECUTABLE AND DEFINED ENV{LAKERUN_PYTHON})
  set(Python3_EXECUTABLE "$ENV{LAKERUN_PYTHON}")
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
if(NOT Python3_FOUND)
  list(APPEND lakerun_python_missing "Python 3 development headers")
else()
  find_package(pybind11 CONFIG QUIET)
  if(NOT pybind11_FOUND)
    list(APPEND lakerun_python_missing "pybind11 (pybind11-dev)")
  endif()
endif()
# torch's pybind11 casters for at::Tensor (torch/csrc/utils/pybind.h) and the library that implements them.
find_path(LAKERUN_TORCH_PYTHON_INCLUDE torch/csrc/utils/pybind.h HINTS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_library(LAKERUN_TORCH_PYTHON_LIBRARY torch_python HINTS "${TORCH_INSTALL_PREFIX}/lib")
if(NOT LAKERUN_TORCH_PYTHON_INCLUDE OR NOT LAKERUN_TORCH_PYTHON_LIBRARY)
  list(APPEND lakerun_python_missing "torch's Python headers and libtorch_python")
endif()

if(lakerun_python_missing)
  list(JOIN lakerun_python_missing ", " lakerun_python_missing)
  message(STATUS "lakerun: LAKERUN_PYTHON is OFF (the Python package needs ${lakerun_python_missing})")
  set(LAKERUN_PYTHON OFF)  # not cached: a later configure looks again (after the packages are installed)
else()
  option(LAKERUN_PYTHON "build the lakerun Python package (python/)" ${LAKERUN_TOP_LEVEL})
endif()
