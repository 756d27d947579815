// `lakerun launch` as a stand-alone program for the launcher tests (the `lakerun` binary registers the same
// function as its "launch" sub-command).
#include "lakerun/base/run_main.h"
#include "lakerun/launch/command.h"

int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, lakerun::launch::RunLaunchCommand); }
