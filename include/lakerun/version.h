// lakerun's version. This header is the one place it is written: CMake's project(VERSION) reads the three numbers
// from here, `lakerun --version` prints them, and find_package(lakerun <version>) compares against them.
#pragma once

#define LAKERUN_VERSION_MAJOR 0
#define LAKERUN_VERSION_MINOR 1
#define LAKERUN_VERSION_PATCH 0

#define LAKERUN_VERSION_STRINGIFY_(x) #x
#define LAKERUN_VERSION_STRINGIFY(x) LAKERUN_VERSION_STRINGIFY_(x)
/// "MAJOR.MINOR.PATCH", e.g. "0.1.0".
#define LAKERUN_VERSION_STRING                                                          \
  LAKERUN_VERSION_STRINGIFY(LAKERUN_VERSION_MAJOR) "." LAKERUN_VERSION_STRINGIFY(     \
      LAKERUN_VERSION_MINOR) "." LAKERUN_VERSION_STRINGIFY(LAKERUN_VERSION_PATCH)
/// One comparable number: MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100).
#define LAKERUN_VERSION (LAKERUN_VERSION_MAJOR * 10000 + LAKERUN_VERSION_MINOR * 100 + LAKERUN_VERSION_PATCH)
