// A program's main() that ends with a message, not a core dump, when an error escapes it.
//
//   int Train(int argc, char** argv) { ...; return 0; }
//   int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, Train); }
//
// Without it, an exception that leaves main() calls std::terminate: the process aborts (SIGABRT, a core dump where
// they are enabled) after "terminate called after throwing an instance of ...". With it, a lakerun::Error prints
// "<program>: error: <message>" on stderr and the program exits 1, which is also what `lakerun launch` reports as the
// rank's failure.
#pragma once

#include <functional>

namespace lakerun {

/// Returns fn(argc, argv). An exception escaping fn is printed on stderr as "<program>: error: <what()>" (the program
/// being argv[0]'s last path component) and the result is 1: lakerun::Error and other std::exception alike (a
/// torch error's message keeps its C++ backtrace); anything else prints "<program>: error: unknown exception".
int RunMain(int argc, char** argv, const std::function<int(int, char**)>& fn);

}  // namespace lakerun
