# lakerun_torch_search_order(TARGET): a shorter symbol search for programs that load libtorch.
#
# Debian's libtorch_cpu brings ~290 shared libraries, all linked BIND_NOW, so the dynamic loader resolves ~140,000
# symbol references at start-up. Each lookup walks the program's global search list (the executable's DT_NEEDED
# entries, then their dependencies breadth first) until it finds a definition; most references are libraries
# calling their own exported functions (OpenBLAS, GDAL, Xerces, GEOS, libcrypto, ...), and those libraries sit at
# positions 50-280 of that list, so a lookup probes ~100 objects on average. Naming the libraries that receive most
# bindings as direct DT_NEEDED entries of the executable, right after its own, moves them to the front: ~38 probes
# per lookup, 60-80 ms less start-up per process on the 2-vCPU development VM (docs/launch.md, "Performance").
#
# Which definition a reference binds to may only change among identical copies: the listed libraries keep their
# relative order from the breadth-first list, libstdc++, libgcc_s and libc stay ahead of them, and the test
# launch.torch_search_order compares every binding of a program linked with and without this list (only C++
# vague-linkage copies, weak or unique symbols, may move). The list was derived with
# `bench/launch/search_order.py derive` on Debian 12's libtorch 1.13; entries that are not among libtorch_cpu's
# dependencies on the build machine are dropped at configure time, the whole list when fewer than half remain
# (another libtorch, a PyTorch wheel), and -DLAKERUN_TORCH_SEARCH_ORDER=OFF drops it altogether.
option(LAKERUN_TORCH_SEARCH_ORDER "name libtorch's most-bound dependencies first in programs on lakerun::dist" ON)

set(LAKERUN_TORCH_SEARCH_FIRST
  libm.so.6 libprotobuf.so.32 libblas.so.3 libavutil.so.57 libtensorpipe.so.0 libgloo.so.0 libonnx_proto.so.1
  libonnx.so.1 liblapack.so.3 libsleef.so.3 libopencv_dnn.so.406 libopencv_core.so.406 libopenblas.so.0 libbsd.so.0
  libgobject-2.0.so.0 libglib-2.0.so.0 libcodec2.so.1.0 libgnutls.so.30 libsrt-gnutls.so.1.5 libgdcmMSFF.so.3.0
  libOpenEXR-3_1.so.30 libgdal.so.32 libgdcmDSED.so.3.0 libicuuc.so.72 libgio-2.0.so.0 libunistring.so.2
  libnettle.so.8 libcrypto.so.3 libmbedcrypto.so.7 libIex-3_1.so.30 libxerces-c-3.2.so libpoppler.so.126
  libnetcdf.so.19 libhdf5_serial.so.103 libsqlite3.so.0 libkmldom.so.1 libspatialite.so.7 libgeos_c.so.1
  libproj.so.25 libdfalt.so.0 libnss3.so librttopo.so.1 libgeos.so.3.11.1)

# Sets `out` to one linker-flag item (libstdc++, libgcc_s, libc, then the kept list), or to nothing.
function(_lakerun_torch_search_order_flags out)
  set(${out} "" PARENT_SCOPE)
  if(NOT LAKERUN_TORCH_SEARCH_ORDER OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR NOT TARGET torch_cpu)
    return()
  endif()
  get_target_property(torch_cpu_file torch_cpu LOCATION)
  find_program(LAKERUN_LDD ldd)
  if(NOT torch_cpu_file OR NOT LAKERUN_LDD)
    return()
  endif()
  execute_process(COMMAND ${LAKERUN_LDD} ${torch_cpu_file} OUTPUT_VARIABLE deps RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    return()
  endif()
  set(kept "")
  foreach(lib ${LAKERUN_TORCH_SEARCH_FIRST})
    string(FIND "${deps}" "\t${lib} => /" at)
    if(at GREATER -1)
      string(APPEND kept ",-l:${lib}")
    endif()
  endforeach()
  list(LENGTH LAKERUN_TORCH_SEARCH_FIRST listed)
  string(REGEX MATCHALL ",-l:" found "${kept}")
  list(LENGTH found found)
  math(EXPR half "${listed} / 2")
  if(found LESS half)  # another libtorch than the list was derived for: leave its search order alone
    message(STATUS "libtorch search order: not used (${found} of ${listed} listed libraries are libtorch_cpu "
                   "dependencies here)")
    return()
  endif()
  message(STATUS "libtorch search order: ${found} of ${listed} listed libraries are libtorch_cpu dependencies here")
  set(${out} "-Wl,--push-state,--no-as-needed,-l:libstdc++.so.6,-l:libgcc_s.so.1,-l:libc.so.6${kept},--pop-state"
      PARENT_SCOPE)
endfunction()

# The list depends on the machine (which libraries this libtorch_cpu loads; libopenblas.so.0 only where OpenBLAS is
# the BLAS), so lakerun's own targets carry it as BUILD_INTERFACE only; lakerunConfig.cmake calls this again on the
# imported lakerun::dist, with the libtorch of the machine that builds against the installed lakerun.
function(lakerun_torch_search_order target)
  _lakerun_torch_search_order_flags(flags)
  if(NOT flags)
    return()
  endif()
  get_target_property(imported ${target} IMPORTED)
  if(imported)
    target_link_libraries(${target} INTERFACE "${flags}")
  else()
    string(REPLACE "," "$<COMMA>" flags "${flags}")
    target_link_libraries(${target} INTERFACE "$<BUILD_INTERFACE:${flags}>")
  endif()
endfunction()
