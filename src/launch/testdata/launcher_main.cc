// `lakerun launch` as a stand-alone program for the launcher tests (the `lakerun` binary registers the same
// function as its "launch" sub-command).
#include <cstdio>
#include <exception>

#include "lakerun/base/error.h"
#include "lakerun/launch/command.h"

int main(int argc, char** argv) {
  try {
    return lakerun::launch::RunLaunchCommand(argc, argv);
  } catch (const lakerun::Error& e) {
    std::fprintf(stderr, "lakerun: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lakerun: unexpected error: %s\n", e.what());
    return 1;
  }
}
