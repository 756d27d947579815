# ccache, sanitizers, one shared precompiled torch header, libFuzzer targets.
option(LAKERUN_USE_CCACHE "use ccache if found" ON)
option(LAKERUN_USE_TORCH_PCH "share one precompiled torch header among torch targets" ON)
set(LAKERUN_SANITIZE "" CACHE STRING "'' | address,undefined | thread")

if(LAKERUN_USE_CCACHE)
  find_program(CCACHE_PROGRAM ccache)
  if(CCACHE_PROGRAM)
    # Hits across clones need CCACHE_BASEDIR=<repo> CCACHE_NOHASHDIR=1, and with the PCH
    # CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime (scripts/env.sh sets them).
    set(CMAKE_C_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
    set(CMAKE_CXX_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
  endif()
endif()

if(LAKERUN_SANITIZE)
  add_compile_options(-fsanitize=${LAKERUN_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${LAKERUN_SANITIZE})
endif()

# lakerun_torch_pch(target): every torch target reuses ONE precompiled header (building it costs ~40 s).
# The header is src/base/torch_pch.h: the narrow ATen/c10d/nn headers lakerun uses, not all of torch/torch.h.
function(lakerun_torch_pch target)
  if(LAKERUN_USE_TORCH_PCH)
    if(NOT TARGET lakerun_torch_pch_host)
      add_library(lakerun_torch_pch_host STATIC ${PROJECT_SOURCE_DIR}/cmake/torch_pch_host.cc)
      target_link_libraries(lakerun_torch_pch_host PUBLIC ${TORCH_LIBRARIES})
      target_precompile_headers(lakerun_torch_pch_host PRIVATE ${PROJECT_SOURCE_DIR}/cmake/torch_pch.h)
    endif()
    # The PCH is built for a static library (-fPIC). GCC rejects a PCH built with other -fpic/-fpie settings
    # (-Winvalid-pch) and silently re-parses torch (~25 s per TU), so executables that reuse it compile -fPIC too;
    # -fPIC objects link into PIE executables unchanged.
    get_target_property(kind ${target} TYPE)
    if(kind STREQUAL "EXECUTABLE")
      set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
      target_compile_options(${target} PRIVATE -fPIC)
    endif()
    target_precompile_headers(${target} REUSE_FROM lakerun_torch_pch_host)
  endif()
endfunction()
